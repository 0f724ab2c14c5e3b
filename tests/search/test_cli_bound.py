"""The ``iobound bound`` subcommand: JSON schema, table, Winograd handling, errors."""

import json
import subprocess
import sys

import pytest

from search.cli.main import main


def _json(capsys, *argv):
    assert main(["bound", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_schema(capsys):
    """--json prints the layer (with hout/wout), S in words and one result per algorithm."""
    out = _json(capsys, "--layer", "alexnet.conv2", "--fast-memory", "48KiB")
    assert out["fast_memory_words"] == 12288
    assert out["layer"]["hout"] == out["layer"]["h_out"] == 27
    assert out["layer"]["wout"] == 27 and out["layer"]["c_in"] == 96
    (res,) = out["results"]
    assert res["algorithm"] == "direct" and res["e"] is None
    assert set(res["bounds"]) == {"hong_kung_composite", "x_partition", "x_partition_chain",
                                 "compulsory"}
    assert res["best"] == max(res["bounds"].values())
    assert res["bounds"][res["best_method"]] == res["best"]
    assert set(res["leading_terms"]) >= {"hong_kung_composite", "x_partition"}


_LAYER_KEYS = {"name", "n", "c_in", "h_in", "w_in", "c_out", "k_h", "k_w", "stride", "padding",
               "dilation", "groups", "h_out", "w_out", "hout", "wout"}


def test_done_when_command_in_a_real_process():
    """`iobound bound --layer alexnet.conv1 --fast-memory 48KiB --json` (the issue's command)
    prints exactly the issue's keys and values that follow from the layer and the bounds."""
    proc = subprocess.run(
        [sys.executable, "-m", "search.cli.main", "bound", "--layer", "alexnet.conv1",
         "--fast-memory", "48KiB", "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert set(out) == {"layer", "fast_memory_words", "results"}
    assert set(out["layer"]) == _LAYER_KEYS
    assert (out["layer"]["c_in"], out["layer"]["h_in"], out["layer"]["k_h"],
            out["layer"]["stride"], out["layer"]["hout"]) == (3, 227, 11, [4, 4], 55)
    assert out["fast_memory_words"] == 12288 and isinstance(out["fast_memory_words"], int)
    (res,) = out["results"]
    assert set(res) == {"algorithm", "e", "bounds", "leading_terms", "best", "best_method"}
    assert res["algorithm"] == "direct" and res["e"] is None
    assert all(isinstance(v, float) for v in res["bounds"].values())
    # compulsory: every input is read (54 * 4 + 11 = 227), every weight, every output
    assert res["bounds"]["compulsory"] == 3 * 227 * 227 + 96 * 3 * 121 + 96 * 55 * 55
    assert res["best"] == max(res["bounds"].values())


def test_bad_input_in_a_real_process_is_one_line_exit_2():
    """The console entry point: bad input gives one stderr line, exit 2, no traceback."""
    proc = subprocess.run(
        [sys.executable, "-m", "search.cli.main", "bound", "--layer", "cin=2,hin=5,cout=2,kh=9",
         "--fast-memory", "48KiB"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "k_h" in proc.stderr and "Traceback" not in proc.stderr


def test_reader_closing_the_pipe_is_quiet():
    """`iobound bound ... | head -c 10`: the closed pipe ends the command without a traceback."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "search.cli.main", "bound", "--layer", "resnet50.conv2_1a",
         "--fast-memory", "48KiB", "--algorithm", "all"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before the first line is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 1
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


def test_all_gives_direct_and_winograd(capsys):
    """--algorithm all on a stride-1 square layer gives both, Winograd with its e."""
    out = _json(capsys, "--layer", "cin=8,hin=10,cout=8,kh=3,pad=1", "--fast-memory", "256",
                "--algorithm", "all", "--winograd-e", "4")
    algs = [r["algorithm"] for r in out["results"]]
    assert algs == ["direct", "winograd"]
    wino = out["results"][1]
    assert wino["e"] == 4 and wino["bounds"]["x_partition"] >= 0
    assert "paper_thm_4_12" in wino["leading_terms"]


def test_all_omits_inapplicable_winograd_with_note(capsys):
    """Strided layer: --algorithm all prints direct only and a note saying why."""
    assert main(["bound", "--layer", "alexnet.conv1", "--fast-memory", "48KiB",
                 "--algorithm", "all"]) == 0
    text = capsys.readouterr().out
    assert "hong_kung_composite" in text and "winograd omitted" in text and "stride" in text


def test_winograd_on_inapplicable_layer_is_exit_2(capsys):
    """--algorithm winograd on a strided layer: exit 2 and the reason on stderr."""
    assert main(["bound", "--layer", "alexnet.conv1", "--fast-memory", "48KiB",
                 "--algorithm", "winograd"]) == 2
    err = capsys.readouterr().err
    assert "stride" in err and "Traceback" not in err


def test_human_table_marks_best(capsys):
    """The default output is a table with the best bound marked."""
    assert main(["bound", "--layer", "alexnet.conv3", "--fast-memory", "1024"]) == 0
    text = capsys.readouterr().out
    assert "<- best" in text and "x_partition" in text and "1024 words" in text


def test_dtype_converts_bytes(capsys):
    """48KiB of fp16 is 24576 words."""
    out = _json(capsys, "--layer", "alexnet.conv3", "--fast-memory", "48KiB", "--dtype", "fp16")
    assert out["fast_memory_words"] == 24576


@pytest.mark.parametrize("argv, needle", [
    (["--layer", "nonsense=1", "--fast-memory", "1KiB"], "unknown key"),
    (["--layer", "alexnet.conv2", "--fast-memory", "lots"], "cannot read size"),
    (["--layer", "alexnet.conv3", "--fast-memory", "1024", "--algorithm", "winograd",
      "--winograd-e", "0"], "winograd-e"),
    (["--layer", "alexnet.conv3", "--fast-memory", "1024", "--algorithm", "winograd",
      "--winograd-e", "31"], "e + r - 1 must be <= 32"),
    (["--layer", "alexnet.conv3", "--fast-memory", "1024", "--winograd-e", "4"],
     "only meaningful with --algorithm winograd"),  # direct: an e given would be ignored
    (["--layer", "alexnet.conv9", "--fast-memory", "1024"], "conv9"),
    (["--layer", "cin=2,hin=5,cout=2,kh=3,stride=0", "--fast-memory", "64"], "stride"),
    (["--layer", "cin=2,hin=5,cout=2,kh=7", "--fast-memory", "64"], "k_h"),
    (["--layer", "alexnet.conv3", "--fast-memory", "1KiB", "--dtype", "fp8"], "dtype"),
    # a size in words: --dtype would change nothing (it was accepted and dropped)
    (["--layer", "alexnet.conv3", "--fast-memory", "1024", "--dtype", "fp16"],
     "--fast-memory 1024 is in words already"),
    (["--layer", "alexnet.conv3"], "--fast-memory"),
    (["--layer", "alexnet.conv3", "--fast-memory", "64", "--algorithm", "fft"], "--algorithm"),
])
def test_bad_input_is_exit_2(capsys, argv, needle):
    """Bad specs, sizes, dtypes, choices and e are one-line errors with exit code 2."""
    assert main(["bound", *argv]) == 2
    captured = capsys.readouterr()
    assert needle in captured.err and captured.out == ""
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err


def test_help_explains_options(capsys):
    """--help documents every option."""
    with pytest.raises(SystemExit):
        main(["bound", "--help"])
    text = capsys.readouterr().out
    for opt in ("--layer", "--fast-memory", "--dtype", "--algorithm", "--winograd-e", "--json"):
        assert opt in text


def test_all_omits_winograd_whose_input_tile_is_too_large(capsys):
    """--algorithm all leaves Winograd out with a note when e + r - 1 passes 32 (a
    1024-wide kernel), instead of failing the whole command."""
    code = main(["bound", "--layer", "cin=2,hin=64,cout=2,kh=1024,pad=600", "--fast-memory", "4096",
                 "--algorithm", "all"])
    assert code == 0 and "winograd omitted: input tile e + r - 1 = 1025" in capsys.readouterr().out


def test_groups_in_a_layer_spec(capsys):
    """groups= reaches the bounds: a grouped layer has 1/G of the dense MACs' bound terms, and
    groups=1 prints exactly what the spec without groups prints."""
    dense = "cin=32,hin=28,cout=64,kh=3,pad=1"
    grouped = _json(capsys, "--layer", dense + ",groups=4", "--fast-memory", "4096")
    plain = _json(capsys, "--layer", dense, "--fast-memory", "4096")
    assert grouped["layer"]["groups"] == 4 and plain["layer"]["groups"] == 1
    (g,), (p,) = grouped["results"], plain["results"]
    assert g["leading_terms"]["x_partition"] == pytest.approx(p["leading_terms"]["x_partition"] / 4)
    assert main(["bound", "--layer", dense + ",groups=1", "--fast-memory", "4096"]) == 0
    with_groups = capsys.readouterr().out
    assert main(["bound", "--layer", dense, "--fast-memory", "4096"]) == 0
    assert capsys.readouterr().out == with_groups


@pytest.mark.parametrize("spec, message", [
    ("cin=32,hin=28,cout=64,kh=3,groups=5", "groups=5 must divide c_in=32 and c_out=64"),
    ("cin=32,hin=28,cout=64,kh=3,groups=0", "groups=0"),
    ("cin=32,hin=28,cout=64,kh=3,groups=-2", "groups='-2' is not"),
    ("cin=32,hin=28,cout=64,kh=3,groups=2,groups=2", "groups given twice"),
])
def test_bad_groups_is_one_line_exit_2(capsys, spec, message):
    """A bad groups value: one stderr line naming it, exit 2."""
    assert main(["bound", "--layer", spec, "--fast-memory", "4096"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err


def test_help_mentions_groups(capsys):
    """--help lists groups= among the layer-spec keys."""
    with pytest.raises(SystemExit):
        main(["bound", "--help"])
    assert "groups=G" in capsys.readouterr().out.replace("\n", " ")


def test_grouped_winograd_is_a_note_under_all(capsys):
    """--algorithm all on a depthwise layer: direct bounds and a note naming groups for Winograd."""
    assert main(["bound", "--layer", "mobilenet.conv_dw_1", "--fast-memory", "48KiB",
                 "--algorithm", "all"]) == 0
    out = capsys.readouterr().out
    assert "compulsory" in out and "groups=32" in out
