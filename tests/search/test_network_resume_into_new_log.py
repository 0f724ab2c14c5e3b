"""A network run ``--resume old --log new`` interrupted before it reached every layer.

README ("Whole networks"): Ctrl-C stops every running layer, "layers not started yet have
no records, and --resume with the run's log name continues every layer, measuring nothing
twice"; the one line printed says how to resume. With ``--resume old --log new`` each
layer's old records are copied into its new log when the layer starts (search/tuner.py
``_open_log``), so a layer not started at the interrupt has its records only in
``old.<layer>.jsonl``. The line then says "resume with --resume new.jsonl", which starts
those layers afresh and measures again what the old logs hold (and the same command again
is refused: "--log new.<layer>.jsonl exists"). Reference: the old run's records (config
index and timestamp), which the resumed network's logs must still hold, not re-measured.
"""

from __future__ import annotations

import json
import os
import shlex
import signal

from iobound.networks import network_layers
from search import log_writer
from search.cli.main import main

LAYERS = [l.name for l in network_layers("alexnet")]


def _records(path) -> set[tuple[int, float]]:
    with open(path) as fh:
        return {(o["index"], o["record"]["timestamp"]) for o in map(json.loads, fh)
                if o.get("kind") == "record"}


def test_following_the_interrupt_line_keeps_the_old_logs_of_layers_not_reached(
        tmp_path, monkeypatch, capsys, python_sigint):
    base = ["tune", "--network", "alexnet", "--measure", "model", "--strategy", "random",
            "--no-verify", "--out-dir", str(tmp_path / "k")]
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    assert main(base + ["--budget", "4", "--log", str(old)]) == 0
    kept = {name: _records(tmp_path / f"old.{name}.jsonl") for name in LAYERS}
    assert all(len(r) == 4 for r in kept.values())
    capsys.readouterr()

    append = log_writer.LogWriter.append

    def append_then_signal(self, index, record, *args, **kwargs):
        append(self, index, record, *args, **kwargs)
        if (self.path.name == f"new.{LAYERS[0]}.jsonl"
                and (index, record.timestamp) not in kept[LAYERS[0]]):
            os.kill(os.getpid(), signal.SIGINT)  # the first layer's first new measurement

    monkeypatch.setattr(log_writer.LogWriter, "append", append_then_signal)
    assert main(base + ["--budget", "8", "--resume", str(old), "--log", str(new)]) == 130
    monkeypatch.setattr(log_writer.LogWriter, "append", append)
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert "resume with " in line, line
    advice = shlex.split(line.split("resume with ", 1)[1])

    assert main(base + ["--budget", "8", *advice]) == 0
    resumed = new if str(new) in advice else old
    for name in LAYERS:
        final = tmp_path / f"{resumed.stem}.{name}.jsonl"
        got = _records(final)
        assert len({i for i, _ in got}) == 8
        assert kept[name] <= got, f"{name}: the old run's {len(kept[name])} measurements " \
                                  f"were measured again ({len(kept[name] & got)} kept)"
