"""Review of the day's change (tune --algorithm all, early resume checks, interrupts):
twins that disagree, the API against the CLI, tracebacks.

Each test states the promise it checks and the independent reference it checks against
(``iobound select``, the CLI's own refusal, the single-algorithm run, the files written).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from search.cli.main import main
from search.records import read_log
from search.log_writer import LogWriter
from tests.search.stored_rows import stored_measurements

#: A layer whose Winograd space holds no configuration on the V100 (an 11x11 kernel: no
#: tile fits), while direct has plenty.
EMPTY_WINOGRAD = "cin=4,hin=14,cout=4,kh=11,pad=5"


def test_all_keeps_direct_where_no_winograd_configuration_fits(tmp_path, capsys):
    """``--algorithm all`` is the measured counterpart of ``iobound select`` (README): a
    layer where no Winograd configuration fits is one select answers with direct (no
    Winograd time). The run measured and stored direct, then failed with exit 2 and no
    choice: "no valid winograd configuration ...". It must keep direct, as select does."""
    assert main(["select", "--layer", EMPTY_WINOGRAD, "--json"]) == 0
    [ref] = json.loads(capsys.readouterr().out)["layers"]
    assert ref["algorithm"] == "direct"
    assert all(c["algorithm"] == "direct" for c in ref["candidates"])  # no Winograd time
    db = tmp_path / "h.db"
    code = main(["tune", "--layer", EMPTY_WINOGRAD, "--algorithm", "all", "--measure", "model",
                 "--strategy", "random", "--budget", "2", "--no-verify", "--json",
                 "--history", str(db), "--out-dir", str(tmp_path / "k")])
    out, err = capsys.readouterr()
    assert code == 0, err
    [choice] = json.loads(out)["choices"]
    assert choice["algorithm"] == ref["algorithm"]


def test_all_on_a_named_layer_with_a_slash_and_a_log(tmp_path):
    """``tune_layers`` of one layer named ``net/conv1`` with a log works with
    ``algorithm="direct"`` (and writes ``net_conv1_direct_best.cu``); with ``"all"`` its
    per-algorithm log name raised ``ValueError: Invalid name 'run.net/conv1.direct.jsonl'``
    (a traceback, before anything ran)."""
    from search.session import TuneSettings, choose_algorithms, tune_layers
    layer = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1,
                      name="net/conv1")
    settings = TuneSettings(strategy="random", budget=2, log=str(tmp_path / "run.jsonl"))
    reports = tune_layers([layer], "v100", settings, algorithm="all",
                          out_dir=str(tmp_path / "k"), verify=False)
    assert [r.algorithm for r in reports] == ["direct", "winograd"]
    [choice] = choose_algorithms(reports)
    assert choice.chosen is not None
    logs = sorted(p for p in tmp_path.iterdir() if p.suffix == ".jsonl")
    assert len(logs) == 2 and sum(len(read_log(p).entries) for p in logs) == 4


def _signal_at(monkeypatch, owner, name, at=1, after=False):
    from tests.search.test_interrupt_windows import _signal_at as signal_at
    return signal_at(monkeypatch, owner, name, at, after)


def _kept(err: str):
    from tests.search.test_interrupt_windows import _kept as kept
    return kept(err)


@pytest.mark.usefixtures("python_sigint")
@pytest.mark.parametrize("kind", ["layer", "replay"])
def test_a_resumed_run_stopped_before_its_loop_says_what_its_log_keeps(
        tmp_path, capsys, monkeypatch, synth_cache_path, kind):
    """README: Ctrl-C at any point prints ``interrupted: N measurements kept in LOG; resume
    with --resume LOG``. A run resumed from a log of 4 records and stopped while it reads
    its history (before its loop): the layer run says 4 (run_layers counts the log); the
    replay of a recorded space, its twin, said only ``interrupted``."""
    base = (["tune", "--measure", f"replay:{synth_cache_path}"] if kind == "replay" else
            ["tune", "--layer", "cin=8,hin=8,cout=16,kh=3,pad=1", "--measure", "model",
             "--no-verify", "--out-dir", str(tmp_path / "k")])
    base += ["--strategy", "random", "--budget", "8"]
    log = tmp_path / "run.jsonl"
    with monkeypatch.context() as m:
        _signal_at(m, LogWriter, "append", at=4, after=True)
        assert main([*base, "--log", str(log)]) == 130
    capsys.readouterr()
    assert len(read_log(log).entries) == 4
    import search.session.history_use as history_use
    calls = _signal_at(monkeypatch, history_use, "history_options")
    code = main([*base, "--resume", str(log), "--history", str(tmp_path / "h.db")])
    err = capsys.readouterr().err
    assert calls and code == 130
    assert len(read_log(log).entries) == 4
    assert _kept(err) == 4, err
    assert f"resume with --resume {log}" in err


def _measured(tmp_path: Path) -> None:
    """alexnet.conv4's log measured with the model, alexnet.conv5's with the emulator:
    ``run.alexnet.conv4.jsonl`` and ``run.alexnet.conv5.jsonl``."""
    from iobound.networks import network_layers
    from search.session import TuneSettings, tune_layers
    conv4, conv5 = network_layers("alexnet")[3:5]
    for layer, measure in ((conv4, "model"), (conv5, "emulate")):
        tune_layers([layer], "v100", TuneSettings(
            strategy="random", budget=1, log=str(tmp_path / f"run.{layer.name}.jsonl")),
            measure=measure, out_dir=str(tmp_path / "k"), verify=False)


def test_the_api_refuses_another_measurers_log_before_anything_runs(tmp_path, capsys):
    """The CLI refuses, when the run is planned, a layer's --resume log of another measurer
    (one line naming that log; nothing measured, stored or copied). ``tune_layers``, the
    same run through the API, tuned and stored conv4, copied both logs into the new ones,
    and only then refused conv5's, naming the copy (``new.alexnet.conv5.jsonl``)."""
    from iobound.networks import network_layers
    from search.session import TuneSettings, tune_layers
    _measured(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    cli_db = tmp_path / "cli.db"
    code = main(["tune", "--network", "alexnet", "--measure", "model", "--strategy", "random",
                 "--budget", "2", "--no-verify", "--out-dir", str(tmp_path / "k"),
                 "--resume", str(tmp_path / "run.jsonl"), "--log", str(tmp_path / "new.jsonl"),
                 "--history", str(cli_db)])
    err = capsys.readouterr().err
    assert code == 2 and "run.alexnet.conv5.jsonl" in err and "emulate" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # the reference: nothing
    db = tmp_path / "api.db"
    settings = TuneSettings(strategy="random", budget=2, resume=str(tmp_path / "run.jsonl"),
                            log=str(tmp_path / "new.jsonl"), history=str(db))
    with pytest.raises(InvalidInputError) as info:
        tune_layers(network_layers("alexnet")[3:5], "v100", settings,
                    out_dir=str(tmp_path / "k"), verify=False)
    assert "run.alexnet.conv5.jsonl" in str(info.value) and "new." not in str(info.value)
    assert stored_measurements(db) == 0
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "api.db") == before


def test_an_unknown_algorithm_names_all_among_the_choices():
    """``plan_layers`` / ``tune_layers`` take ``algorithm="all"``; a misspelt name was
    refused with ``choose one of direct, winograd`` (as if "all" were not one)."""
    from iobound.networks import get_layer
    from search.session import TuneSettings, plan_layers
    with pytest.raises(InvalidInputError) as info:
        plan_layers([get_layer("alexnet.conv2")], "v100", TuneSettings(), algorithm="al")
    assert "all" in str(info.value).split("choose one of", 1)[-1]


def test_network_json_with_a_log_continued_in_place(tmp_path, capsys):
    """``--log run.jsonl --resume run.jsonl`` continues each layer's log in place (what
    check_outputs allows: the --resume is the --log it continues), and it runs so. Adding
    ``--network-json`` refused it: "--resume 'run.alexnet.conv1.jsonl' is also given as
    --log; give each its own file" (check_network_json, the twin, compared them anyway)."""
    net = ["tune", "--network", "alexnet", "--measure", "model", "--strategy", "random",
           "--no-verify", "--out-dir", str(tmp_path / "k")]
    log = str(tmp_path / "run.jsonl")
    assert main([*net, "--budget", "1", "--log", log]) == 0
    assert main([*net, "--budget", "2", "--log", log, "--resume", log]) == 0  # the reference
    capsys.readouterr()
    table = tmp_path / "t.json"
    code = main([*net, "--budget", "3", "--log", log, "--resume", log,
                 "--network-json", str(table)])
    err = capsys.readouterr().err
    assert code == 0, err
    rows = json.loads(table.read_text())["layers"]
    assert [len(read_log(r["log"]).entries) for r in rows] == [3] * 5
