"""T4 results files (Kernel Tuner's output format) read as the cache they came from."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from iobound.errors import InvalidInputError
from search.db import TuningDB
from search.db.importer import import_files
from search.kt_cache import load_cache
from search.measure.replay import ReplayMeasurer

T4_OF = {"InvalidConfig": "constraints", "CompilationFailedConfig": "compile",
         "RuntimeFailedConfig": "runtime"}
TIMES = st.one_of(st.floats(0.01, 100.0), st.sampled_from(sorted(T4_OF)))


def _files(tmp_path, times):
    """A cache of one parameter and the T4 results file Kernel Tuner writes for it."""
    cache = {"device_name": "GPU T", "kernel_name": "k", "problem_size": [8],
             "tune_params_keys": ["a", "b"], "tune_params": {"a": list(range(len(times))),
                                                             "b": [1]},
             "cache": {f"{i},1": {"a": i, "b": 1, "time": t} for i, t in enumerate(times)}}
    results = [{"timestamp": "2024-01-01 00:00:00", "configuration": {"a": i, "b": 1},
                "times": {"compilation": 1.0}, "correctness": 1, "objectives": ["time"],
                "invalidity": T4_OF.get(t, "correct") if isinstance(t, str) else "correct",
                "measurements": [] if isinstance(t, str) else
                [{"name": "time", "value": t, "unit": "ms"}, {"name": "GB/s", "value": 2.0,
                                                             "unit": ""}]}
               for i, t in enumerate(times)]
    c, t4 = tmp_path / "c.json", tmp_path / "GPU_T_T4.json"
    c.write_text(json.dumps(cache))
    t4.write_text(json.dumps({"schema_version": "1.0.0", "results": results}))
    return c, t4


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(times=st.lists(TIMES, min_size=1, max_size=6))
def test_a_t4_file_replays_and_imports_as_its_cache(tmp_path, times):
    """The same configurations, times and failure statuses as the cache; imported under
    ``--device`` with every result stored."""
    c, t4 = _files(tmp_path, times)
    cache, got = load_cache(c), load_cache(t4)
    assert got.tune_params == cache.tune_params
    configs = [{"a": i, "b": 1} for i in range(len(times))]
    want = [(r.status, r.time_ms) for r in ReplayMeasurer(cache).measure(configs)]
    assert [(r.status, r.time_ms) for r in ReplayMeasurer(got).measure(configs)] == want
    with TuningDB(":memory:") as db:
        (imported,) = import_files(db, [t4], device="GPU T")
        assert (imported.kind, imported.device, imported.added) == ("t4-results", "GPU T",
                                                                     len(times))


@pytest.mark.parametrize("bad, said", [
    ({"results": []}, "no results"),
    ({"metadata": {"hardware": {}}}, "T4 metadata file"),
    ({"results": [{"configuration": {"a": 1}, "invalidity": "oops"}]}, "invalidity 'oops'"),
    ({"results": [{"configuration": {"a": 1}, "invalidity": "correct",
                   "measurements": [{"name": "GB/s", "value": 3}]}]}, "no 'time' measurement"),
    ({"results": [{"configuration": {"a": 1}, "invalidity": "constraints"},
                  {"configuration": {"b": 1}, "invalidity": "constraints"}]}, "has parameters"),
])
def test_a_broken_t4_file_is_one_error_naming_it(tmp_path, bad, said):
    path = tmp_path / "broken_T4.json"
    path.write_text(json.dumps({"schema_version": "1.0.0", **bad}))
    with pytest.raises(InvalidInputError, match=said) as got:
        load_cache(path)
    assert "broken_T4.json" in str(got.value)


def test_a_t4_source_counts_as_the_targets_problem(tmp_path):
    """A T4 file records no problem: as history for a cache of the same parameters it is
    taken as the same problem (the history rounds walk its list, not only the models')."""
    from search.db.queries import history_for_space
    from search.replay_space import ReplaySpace
    from search.transfer.prior import HistoryPrior
    c, t4 = _files(tmp_path, [1.0 + (i % 5) / 4 for i in range(12)] + ["InvalidConfig"])
    space = ReplaySpace(c)
    with TuningDB(":memory:") as db:
        import_files(db, [t4], device="GPU T4 file")
        hist = history_for_space(db, space)
    prior = HistoryPrior.fit(space, hist, space.cache.problem_size)
    assert prior.has_target_problem


def _metadata(query) -> dict:
    return {"schema_version": "1.0.0", "metadata": {"hardware": {}, "environment": {
        "device_query": query, "requirements": []}}}


NVIDIA_ONE = {"nvidia_smi_log": {"gpu": {"product_name": "NVIDIA RTX A6000"}}}
AMD_TWO = {"card0": {"Card series": "AMD Instinct MI250X"},
           "card1": {"Card series": "AMD Instinct MI250X"}, "system": {"Driver version": "6"}}
NVIDIA_MIXED = {"nvidia_smi_log": {"gpu": [{"product_name": "NVIDIA A100-PCIE-40GB"},
                                           {"product_name": "NVIDIA RTX A4000"}]}}


@pytest.mark.parametrize("results, meta, query, device", [
    ("w-results.json", "w-metadata.json", NVIDIA_ONE, "NVIDIA RTX A6000"),
    ("w_results.json", "w_metadata.json.gz", AMD_TWO, "AMD Instinct MI250X"),
    ("w-results.json", "w-metadata.json", NVIDIA_MIXED, ""),   # which GPU ran: not recorded
    ("w-results.json", "other-metadata.json", NVIDIA_ONE, ""),  # not its sibling
    ("w-results.json", "w-metadata.json", "not a query", ""),
    # Kernel Tuner 1.x: each tool's output under its name (file_utils.get_t4_metadata)
    ("w-results.json", "w-metadata.json", {"nvidia-smi": NVIDIA_ONE}, "NVIDIA RTX A6000"),
    ("w-results.json", "w-metadata.json", {"rocm-smi": AMD_TWO}, "AMD Instinct MI250X"),
    ("w-results.json", "w-metadata.json", {"nvidia-smi": NVIDIA_ONE, "rocm-smi": AMD_TWO}, ""),
])
def test_a_results_file_takes_its_device_from_its_metadata_file(tmp_path, results, meta, query,
                                                                device):
    """Kernel Tuner writes NAME-results and NAME-metadata: the results are the device's
    the metadata names (one GPU name), and import stores them under it; without that,
    under the file's name as before."""
    import gzip
    _, t4 = _files(tmp_path, [1.0, 2.0])
    path = tmp_path / results
    t4.rename(path)
    text = json.dumps(_metadata(query))
    if meta.endswith(".gz"):
        with gzip.open(tmp_path / meta, "wt") as fh:
            fh.write(text)
    else:
        (tmp_path / meta).write_text(text)
    assert load_cache(path).device == (device or path.name.removesuffix(".json"))
    with TuningDB(":memory:") as db:
        (imported,) = import_files(db, [path])
        assert imported.device == (device or path.name.removesuffix(".json"))
    if device:  # its records are the metadata's device's: another --device is refused
        with TuningDB(":memory:") as db, pytest.raises(InvalidInputError, match="disagrees"):
            import_files(db, [path], device="GPU T")


def test_a_damaged_metadata_file_leaves_the_results_as_a_file_naming_no_device(tmp_path):
    _, t4 = _files(tmp_path, [1.0])
    path = tmp_path / "x-results.json"
    t4.rename(path)
    (tmp_path / "x-metadata.json").write_text("{damaged")
    assert load_cache(path).device == "x-results"


def test_a_folder_imports_its_measurements_and_passes_over_its_descriptions(capsys, tmp_path):
    """`history import FOLDER` (the benchmark hub's layout: NAME-results with NAME-metadata
    beside caches): the caches and the results file are imported, the results under the
    metadata's device; the metadata and a T1 file are passed over with a notice each; the
    database inside the folder, other files and subfolders are left alone. Given by name,
    a metadata file is still refused; an empty folder is refused."""
    from search.cli.main import main
    folder = tmp_path / "hub"
    folder.mkdir()
    c, t4 = _files(folder, [1.0, 2.0])
    t4.rename(folder / "w-results.json")
    (folder / "w-metadata.json").write_text(json.dumps(_metadata(NVIDIA_ONE)))
    (folder / "t1.json").write_text(json.dumps({"General": {}, "ConfigurationSpace": {}}))
    (folder / "README.md").write_text("not a measurement")
    (folder / "deeper").mkdir()
    (folder / "deeper" / "broken.json").write_text("{")
    db = folder / "t.db"
    assert main(["history", "import", str(folder), "--db", str(db), "--json"]) == 0
    out, err = capsys.readouterr()
    got = json.loads(out)
    assert sorted((f["file"].rsplit("/", 1)[-1], f["device"], f["added"]) for f in got["files"]) \
        == [("c.json", "GPU T", 2), ("w-results.json", "NVIDIA RTX A6000", 2)]
    assert sorted(p["file"].rsplit("/", 1)[-1] for p in got["passed_over"]) == ["t1.json",
                                                                                "w-metadata.json"]
    assert main(["history", "import", str(folder), "--db", str(db)]) == 0  # again: nothing new
    out, err = capsys.readouterr()
    assert err.count("passed over") == 2 and "0 new of 2" in out and "t.db: 4 measurements" in out
    assert main(["history", "import", str(folder), "--db", str(db), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)["files"]  # the database itself is not a source
    assert sorted(f["file"].rsplit("/", 1)[-1] for f in again) == ["c.json", "w-results.json"]
    with TuningDB(str(db)) as t:
        assert len(import_files(t, [folder])) == 2 and t.count() == 4
    for path in (folder / "w-metadata.json", tmp_path / "empty"):
        (tmp_path / "empty").mkdir(exist_ok=True)
        assert main(["history", "import", str(path), "--db", str(db)]) == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
