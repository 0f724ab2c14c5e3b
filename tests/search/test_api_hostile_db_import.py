"""Hostile-input tests for the import readers: search/db/importer.py, log_reader.py,
merge.py and search/kt_cache.py (probe42 #2, #3, #4, #14, #21, #23, #24, #38)."""
import json

import pytest

from iobound.errors import InvalidInputError
from search.db.importer import check_not_itself, read_file, read_path, read_paths, store_files
from search.db.merge import is_sqlite, read_database
from search.db.store import TuningDB

HEAD = {"schema": "iobound.tune-log", "version": 1, "kind": "header",
        "space": {"params": ["x"], "values": {"x": [1, 2]}, "kind": "grid"}, "problem": [8]}
REC = {"kind": "record", "index": 0,
       "record": {"config": {"x": 1}, "status": "ok", "time_ms": 1.0, "timestamp": 1.0}}
REPLAY_SPACE = {"params": ["x"], "values": {"x": [1, 2]}, "kind": "replay", "kernel": "kk"}
CACHE = {"device_name": "A100", "kernel_name": "k", "problem_size": [8],
         "tune_params_keys": ["x"], "tune_params": {"x": [1, 2]}, "objective": "time",
         "cache": {"1": {"x": 1, "time": 1.0}}}
LONG = "a" * 300 + ".json"  # longer than NAME_MAX


def _log(tmp_path, **header):
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps({**HEAD, **header}) + "\n" + json.dumps(REC) + "\n")
    return path


def _cache(tmp_path, **fields):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({**CACHE, **fields}))
    return path


def test_read_paths_takes_one_path_alone(tmp_path):  # probe42 #2
    path = _cache(tmp_path)
    files, passed = read_paths(str(path))
    assert [(f.path, f.read) for f in files] == [(str(path), 1)] and passed == []
    files, _ = read_paths(path)  # an os.PathLike alone too
    assert [f.path for f in files] == [str(path)]


@pytest.mark.parametrize("bad, name", [(None, "paths"), ([None], r"paths\[0\]"), (5, "paths"),
                                       (b"x.json", "paths")])
def test_read_paths_refuses_what_is_no_path(bad, name):  # probe42 #2
    with pytest.raises(InvalidInputError, match=name):
        read_paths(bad)


@pytest.mark.parametrize("header, field", [
    ({"template": "k", "measurer": {"toolchain": 5}}, "toolchain"),
    ({"template": "k", "measurer": {"toolchain": ["nvcc", "12"]}}, "toolchain"),
    ({"template": "k", "measurer": {"name": 7}}, "name"),
    ({"template": 5}, "template"),
    ({"template": {"a": 1}}, "template"),
    ({"space": {**HEAD["space"], "kind": 5}}, "kind"),
    ({"space": {**REPLAY_SPACE, "kernel": 5}, "problem_size": [8]}, "kernel"),
])
def test_a_log_field_that_is_no_string_is_refused(tmp_path, header, field):  # probe42 #3
    path = _log(tmp_path, **header)
    with pytest.raises(InvalidInputError, match=f"run.jsonl.*{field} must be a string"):
        read_file(path, "dev")


def test_a_log_naming_no_toolchain_or_template_reads_as_before(tmp_path):  # probe42 #3
    f = read_file(_log(tmp_path), "dev")  # no measurer, no template: the space's kind
    assert (f.workload.template, f.measurements[0].toolchain) == ("grid", "")
    f = read_file(_log(tmp_path, template=None, measurer={"toolchain": None, "name": "nm"}), "d")
    assert (f.workload.template, f.measurements[0].toolchain) == ("grid", "nm")
    f = read_file(_log(tmp_path, template="k", measurer={"toolchain": "nvcc 12"}), "dev")
    assert (f.workload.template, f.measurements[0].toolchain) == ("k", "nvcc 12")
    space = {**REPLAY_SPACE, "kernel": None}
    assert read_file(_log(tmp_path, space=space, problem_size=[8]), "d").workload.template == ""


@pytest.mark.parametrize("name", [5, 1.5, ["k"], {"k": 1}, True])
def test_a_cache_kernel_name_that_is_no_string_is_refused(tmp_path, name):  # probe42 #4
    with pytest.raises(InvalidInputError, match="c.json.*kernel_name"):
        read_file(_cache(tmp_path, kernel_name=name))


@pytest.mark.parametrize("objective", [5, [], ["time", 5], {"a": 1}])
def test_a_cache_objective_that_is_no_string_is_refused(tmp_path, objective):
    # it is written back by export: 5 would have become the objective "5"
    from search.kt_cache import load_cache
    with pytest.raises(InvalidInputError, match="c.json.*objective"):
        load_cache(_cache(tmp_path, objective=objective))
    assert load_cache(_cache(tmp_path, objective=None)).objective == "time"
    assert load_cache(_cache(tmp_path, objective="GFLOP/s")).objective == "GFLOP/s"
    # Kernel Tuner's list of objectives is kept as a list (it was the text "['time']")
    assert load_cache(_cache(tmp_path, objective=["time"])).objective == ["time"]


def test_a_cache_naming_no_kernel_reads_as_before(tmp_path):  # probe42 #4
    assert read_file(_cache(tmp_path, kernel_name=None)).workload.template == ""
    assert read_file(_cache(tmp_path)).workload.template == "k"


def test_a_replay_log_naming_no_problem_is_refused(tmp_path):  # probe42 #14
    path = _log(tmp_path, space=REPLAY_SPACE)
    with pytest.raises(InvalidInputError, match="run.jsonl.*names neither its problem size"):
        read_file(path, "dev")
    with pytest.raises(InvalidInputError, match="problem size"):  # "replay": "" names none
        read_file(_log(tmp_path, space=REPLAY_SPACE, replay=""), "dev")
    f = read_file(_log(tmp_path, space=REPLAY_SPACE, problem_size=[8]), "dev")
    assert (f.workload.template, f.workload.problem) == ("kk", [8])


@pytest.mark.parametrize("fn", [read_file, read_path, read_database, is_sqlite])
def test_a_name_too_long_is_bad_input(tmp_path, fn):  # probe42 #21
    with pytest.raises(InvalidInputError, match="path 'aaa.*File name too long"):
        fn(LONG)
    with pytest.raises(InvalidInputError, match="File name too long"):
        fn(tmp_path / LONG)


@pytest.mark.parametrize("fn", [read_file, read_path, read_database, is_sqlite])
@pytest.mark.parametrize("bad", [None, 99999, b"x.json", 1.5, ["a"]])
def test_a_path_that_is_no_path_is_bad_input(fn, bad):  # probe42 #23
    # an int is no path: the old is_sqlite opened (and closed) that file descriptor, so the
    # int here is one no test process holds open
    with pytest.raises(InvalidInputError, match="path must be a path"):
        fn(bad)


def test_is_sqlite_of_a_folder_or_a_missing_file_is_false(tmp_path):  # probe42 #23
    db = tmp_path / "t.db"
    TuningDB(str(db)).close()
    assert (is_sqlite(tmp_path), is_sqlite(tmp_path / "none.db")) == (False, False)
    assert (is_sqlite(db), is_sqlite(str(db)), is_sqlite(_cache(tmp_path))) == (True, True, False)


@pytest.mark.parametrize("db, files, name", [
    (None, [], "db"), ("x.db", [], "db"), (":memory:", None, "files"),
    (":memory:", [1], r"files\[0\]"), (":memory:", "ab", "files"), (":memory:", {}, "files"),
])
def test_store_files_checks_its_arguments(db, files, name):  # probe42 #24
    db = TuningDB(":memory:") if db == ":memory:" else db
    with pytest.raises(InvalidInputError, match=name):
        store_files(db, files)


def test_store_files_stores_what_read_file_reads(tmp_path):  # probe42 #24
    db = TuningDB(":memory:")
    files = store_files(db, (f for f in [read_file(_cache(tmp_path))]))  # any iterable
    assert [f.added for f in files] == [1] and db.count() == 1


def test_check_not_itself_checks_its_arguments(tmp_path):  # probe42 #24
    db = tmp_path / "t.db"
    TuningDB(str(db)).close()
    with pytest.raises(InvalidInputError, match=r"paths\[0\]"):
        check_not_itself([5], str(db))
    with pytest.raises(InvalidInputError, match="paths"):
        check_not_itself(None, str(db))
    with pytest.raises(InvalidInputError, match="db_path"):
        check_not_itself(["a.json"], None)
    with pytest.raises(InvalidInputError, match="the database imported into"):
        check_not_itself(str(db), str(db))  # one path alone, as import_files takes it
    check_not_itself([str(tmp_path / "a.json")], str(db))


@pytest.mark.parametrize("header, message", [
    ({"template": "k", "measurer": "cuda"}, "the header's measurer must be an object, got 'cuda'"),
    ({"template": "k", "space": [1]}, r"the header's space must be an object, got \[1\]"),
    ({"template": "k", "space": {**HEAD["space"], "params": "x"}}, "space 'params'"),
    ({"space": REPLAY_SPACE, "replay": 5}, "the header's replay .*must be a string, got 5"),
])
def test_a_wrongly_typed_header_field_is_named(tmp_path, header, message):  # probe42 #38
    with pytest.raises(InvalidInputError, match=message) as err:
        read_file(_log(tmp_path, **header), "dev")
    assert "Error:" not in str(err.value)  # no raw AttributeError or TypeError text
