"""The ``iobound bound`` subcommand: JSON schema, table, Winograd handling, errors."""

import json

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
    assert set(res["bounds"]) == {"hong_kung_composite", "x_partition", "compulsory"}
    assert res["best"] == max(res["bounds"].values())
    assert res["bounds"][res["best_method"]] == res["best"]
    assert set(res["leading_terms"]) >= {"hong_kung_composite", "x_partition"}


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
])
def test_bad_input_is_exit_2(capsys, argv, needle):
    """Bad specs, sizes and e are one-line errors with exit code 2."""
    assert main(["bound", *argv]) == 2
    assert needle in capsys.readouterr().err


def test_help_explains_options(capsys):
    """--help documents every option."""
    with pytest.raises(SystemExit):
        main(["bound", "--help"])
    text = capsys.readouterr().out
    for opt in ("--layer", "--fast-memory", "--dtype", "--algorithm", "--winograd-e", "--json"):
        assert opt in text
