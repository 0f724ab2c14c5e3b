"""The winner's bound is the bound at the S it names (a block's on-chip words + 2), in the
text tune prints and in its JSON."""
from iobound.networks import get_layer
from iobound.report import bound_report
from search.winner import bound_info

CFG = {"x": 4, "y": 14, "z": 32, "alpha": 4, "tx": 2, "ty": 14, "tz": 32}


def test_winner_bound_is_taken_at_the_named_s():
    layer = get_layer("resnet50.conv3_1")
    b = bound_info(layer, CFG, "direct")
    assert b.lower_bound_fast_memory_words == b.fast_memory_words + 2
    assert b.lower_bound_words == bound_report(layer, b.lower_bound_fast_memory_words, "direct").best
    assert b.lower_bound_words != bound_report(layer, b.fast_memory_words, "direct").best
    assert b.to_dict()["lower_bound_fast_memory_words"] == b.lower_bound_fast_memory_words


def test_tune_prints_the_bound_s(capsys, tmp_path, monkeypatch):
    from search.cli.main import main
    monkeypatch.chdir(tmp_path)
    assert main(["tune", "--layer", "resnet50.conv3_1", "--budget", "8", "--no-verify"]) == 0
    line = next(l for l in capsys.readouterr().out.splitlines() if l.startswith("I/O:"))
    assert "words: a block's" in line and "on-chip + 2)" in line
