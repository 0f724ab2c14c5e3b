"""``iobound tune --measure replay:FILE`` of a cache of analytic estimates (what ``tune
--measure model --export-cache`` writes, each entry ``"estimate": true``): the records
replay as estimates (search/measure/replay.py; the table marks them ``*``, the JSON says
``"estimate": true``), so the best time must not be called a measurement."""

from __future__ import annotations

import json

from search.cli.main import main
from search.kt_cache import KtCache
from search.kt_cache_write import write_cache


def _cache(tmp_path, estimate: bool):
    entries = [{"x": x, "time": 1.0 + x, "times": [1.0 + x], **({"estimate": True} if estimate else {})}
               for x in (1, 2, 3, 4)]
    return write_cache(str(tmp_path / "est.json"), KtCache(tune_params={"x": [1, 2, 3, 4]},
                       entries=entries, device_name="dev", kernel_name="k"))


def _best_line(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("best time:"))


def test_a_replayed_estimate_is_not_called_a_measurement(tmp_path, capsys):
    path = _cache(tmp_path, estimate=True)
    assert main(["tune", "--measure", f"replay:{path}", "--strategy", "grid", "--budget", "4",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["best"]["estimate"] is True
    assert main(["tune", "--measure", f"replay:{path}", "--strategy", "grid", "--budget", "4"]) == 0
    line = _best_line(capsys.readouterr().out)
    assert "estimate" in line and "(replayed measurement)" not in line, line


def test_a_replayed_measurement_is_still_called_one(tmp_path, capsys):
    path = _cache(tmp_path, estimate=False)
    assert main(["tune", "--measure", f"replay:{path}", "--strategy", "grid", "--budget", "4"]) == 0
    line = _best_line(capsys.readouterr().out)
    assert "measurement" in line and "estimate" not in line, line
