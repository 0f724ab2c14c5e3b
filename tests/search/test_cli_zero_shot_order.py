"""``iobound tune --zero-shot K --zero-shot-order ORDER``: the order reaches the strategy,
and the flag without a zero-shot run, or with an unknown order, is one line and exit 2."""

from __future__ import annotations

import json

import pytest

from tests.search.test_history_use import _other_device_cache, _run


@pytest.fixture
def two_device_db(tmp_path, capsys):
    db = tmp_path / "h.db"
    caches = [_other_device_cache(tmp_path, 1.5, "GPU A"), _other_device_cache(tmp_path, 2.0, "GPU B")]
    assert _run(capsys, "history", "import", *caches, "--db", db)[0] == 0
    return db


@pytest.mark.parametrize("order, want", [(None, {"model", "sources"}), ("model", {"model"}),
                                         ("sources", {"sources"})])
def test_the_order_reaches_the_strategy(capsys, two_device_db, synth_cache_path, order, want):
    flag = [] if order is None else ["--zero-shot-order", order]
    code, out, _ = _run(capsys, "tune", "--measure", f"replay:{synth_cache_path}", "--history",
                        two_device_db, "--zero-shot", 3, *flag, "--json")
    d = json.loads(out)
    assert code == 0 and d["evaluations"] == 3 and d["strategy_stats"]["order"] in want


@pytest.mark.parametrize("argv, needle", [
    (["--zero-shot-order", "model"], "--zero-shot-order orders a zero-shot run"),
    (["--zero-shot-order", "model", "--strategy", "random"], "the strategy is random"),
    (["--zero-shot", "3", "--zero-shot-order", "best"], "invalid choice: 'best'"),
])
def test_a_zero_shot_order_without_zero_shot_or_unknown_is_one_line(capsys, two_device_db,
                                                                    synth_cache_path, argv, needle):
    code, out, err = _run(capsys, "tune", "--measure", f"replay:{synth_cache_path}", "--history",
                          two_device_db, *argv)
    assert code == 2 and out == "" and needle in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
