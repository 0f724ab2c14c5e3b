"""Regressions of a CLI review: `report` never overwrites its --history database nor leaves
half a report, `kernel --emit` is not written for a run the emulator refuses, `kernel` and
`select` label the S their bound is taken at, `bound --json` says what --algorithm all left
out, and `select --history FOLDER` says it is a folder."""

from __future__ import annotations

import json

import pytest

from search.cli.main import main

TINY = "cin=2,hin=6,cout=4,kh=3,pad=1"


def _one_line_error(capsys, code, *needles):
    assert code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err


@pytest.mark.parametrize("name, html", [("selection.json", False), ("table.md", False),
                                        ("report.html", True)])
def test_report_refuses_to_write_over_its_history(tmp_path, capsys, name, html):
    pytest.importorskip("matplotlib")
    db = tmp_path / name
    db.write_bytes(b"the history database")  # refused before it is even opened
    code = main(["report", "--layer", TINY, "--history", str(db), "--out-dir", str(tmp_path),
                 *(["--html"] if html else [])])
    _one_line_error(capsys, code, "--history", name)
    assert db.read_bytes() == b"the history database"
    assert [p.name for p in tmp_path.iterdir()] == [name]


@pytest.mark.parametrize("blocker", ["table.md", "io.png", "time.png"])
def test_report_output_name_taken_by_a_folder(tmp_path, capsys, blocker):
    pytest.importorskip("matplotlib")
    (tmp_path / blocker).mkdir()
    _one_line_error(capsys, main(["report", "--layer", TINY, "--out-dir", str(tmp_path)]),
                    blocker, "is a folder")
    assert [p.name for p in tmp_path.iterdir()] == [blocker]


def test_write_report_checks_every_path_before_writing_any(tmp_path, monkeypatch):
    """The library function too: nothing written when one path is refused; when it succeeds,
    the plots are rendered outside the folder and no temporary file is left."""
    from iobound.errors import InvalidInputError
    from search.selection import report

    class Sel:  # write_report refuses before it reads a selection
        pass

    (tmp_path / "time.png").mkdir()
    with pytest.raises(InvalidInputError, match="time.png"):
        report.write_report([Sel()], tmp_path, "t")
    assert [p.name for p in tmp_path.iterdir()] == ["time.png"]

    def png(sels, path, title):
        assert path.parent != tmp_path / "ok"
        path.write_bytes(b"\x89PNG" + title.encode())
    monkeypatch.setattr(report, "plot_io", png)
    monkeypatch.setattr(report, "plot_time", png)
    monkeypatch.setattr(report, "markdown_table", lambda sels: "|t|")
    monkeypatch.setattr(report, "_html", lambda title, sels, pngs: "<html>" + "".join(
        p[4:].decode() for p in pngs.values()))
    Sel.to_dict = lambda self: {"a": 1}
    files = report.write_report([Sel()], tmp_path / "ok", "t", html_page=True)
    assert sorted(p.name for p in (tmp_path / "ok").iterdir()) == sorted(
        p.name for p in files.values())
    assert files["io"].read_bytes().startswith(b"\x89PNGt: achieved I/O")
    assert "achieved I/O" in files["html"].read_text()


def test_kernel_emit_not_written_when_the_emulator_refuses(tmp_path, capsys):
    emit = tmp_path / "k.cu"
    emit.write_text("keep me\n")
    code = main(["kernel", "--layer", "cin=4,hin=2048,cout=4,kh=1",
                 "--config", "x=8,y=8,z=4,alpha=4", "--emulate", "--emit", str(emit)])
    _one_line_error(capsys, code, "emulator refuses")
    assert emit.read_text() == "keep me\n" and [p.name for p in tmp_path.iterdir()] == ["k.cu"]


def test_kernel_emit_is_written_whole(tmp_path, capsys):
    emit = tmp_path / "k.cu"
    emit.write_text("old\n")
    assert main(["kernel", "--layer", TINY, "--config", "x=3,y=3,z=2,alpha=1,tx=3,ty=3,tz=1",
                 "--emit", str(emit)]) == 0
    assert "__global__" in emit.read_text() and [p.name for p in tmp_path.iterdir()] == ["k.cu"]


def _bound_at(layer, s, algorithm="direct"):
    from iobound.layer_spec import parse_layer_spec
    from iobound.report import best_lower_bound
    return float(best_lower_bound(parse_layer_spec(layer), s, algorithm, None))


def test_kernel_labels_the_S_of_its_bound(capsys):
    layer = "cin=8,hin=16,cout=16,kh=3,pad=1"
    argv = ["kernel", "--layer", layer, "--config", "x=2,y=2,z=1,alpha=8,tx=1,ty=1,tz=1",
            "--emulate"]
    assert main([*argv, "--json"]) == 0
    e = json.loads(capsys.readouterr().out)["emulate"]
    s = e["lower_bound_fast_memory_words"]
    assert s == e["onchip_words"] + 2
    assert e["lower_bound"] == pytest.approx(_bound_at(layer, s))
    assert main(argv) == 0
    line = [l for l in capsys.readouterr().out.splitlines() if l.startswith("bound")][0]
    assert f"at S = {s} words (a block's {e['onchip_words']} on-chip + 2)" in line


def test_select_and_report_carry_the_S_of_the_bound(capsys):
    from search.selection.report import table_rows
    from search.selection.select import select_layers
    from iobound.layer_spec import parse_layer_spec

    assert main(["select", "--layer", TINY, "--json"]) == 0
    sel = json.loads(capsys.readouterr().out)["layers"][0]
    s = sel["lower_bound_fast_memory_words"]
    assert s == sel["fast_memory_words"] + 2
    algorithm = sel["algorithm"]
    from iobound.report import bound_report
    rep = bound_report(parse_layer_spec(TINY), s, algorithm, sel["e"])
    assert sel["lower_bound"] == pytest.approx(float(rep.best))
    (ls,) = select_layers([parse_layer_spec(TINY)], "v100")
    head, row = table_rows([ls])
    cell = dict(zip(head, row))
    assert int(cell["S_words"]) == ls.fast_memory_words
    assert int(cell["bound_S_words"]) == ls.lower_bound_fast_memory_words == s


def test_bound_all_json_lists_what_it_left_out(capsys):
    argv = ["bound", "--layer", "alexnet.conv1", "--fast-memory", "48KiB", "--algorithm", "all"]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["algorithm"] for r in out["results"]] == ["direct"]
    (om,) = out["omitted"]
    assert om["algorithm"] == "winograd" and "stride 1" in om["reason"]
    assert main(argv) == 0
    assert f"note: winograd omitted: {om['reason']}" in capsys.readouterr().out
    assert main(["bound", "--layer", TINY, "--fast-memory", "64", "--algorithm", "all",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["omitted"] == []


def test_select_history_folder_is_named_a_folder(tmp_path, capsys):
    code = main(["select", "--layer", TINY, "--history", str(tmp_path)])
    _one_line_error(capsys, code, "is a folder")


def test_report_of_an_unnamed_layer_is_titled_by_its_shape(tmp_path, capsys):
    """An unnamed ``--layer`` was titled "layer on V100-SXM2"; now by the shape, as the table
    names it."""
    pytest.importorskip("matplotlib")
    import html

    from iobound.layer_spec import parse_layer_spec

    assert main(["report", "--layer", TINY, "--out-dir", str(tmp_path), "--html"]) == 0
    page = (tmp_path / "report.html").read_text()
    title = html.escape(f"{parse_layer_spec(TINY).short()} on V100-SXM2")
    assert f"<title>{title}</title>" in page
