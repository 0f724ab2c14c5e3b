"""On the recorded convolution spaces: history of two GPUs guides the third (leave one out)."""

from __future__ import annotations

import pytest

from search.db import TuningDB
from search.db.importer import import_files
from search.db.queries import history_for_space
from search.measure.replay import ReplayMeasurer
from search.replay_space import ReplaySpace
from search.strategies.gga import options_from_db
from search.tuner import tune
from search.zero_shot import ZeroShotOptions, zero_shot

pytestmark = pytest.mark.shared_data


@pytest.fixture(scope="module")
def a4000_with_history(tmp_path_factory, shared_data):
    """The A4000 space, and a database holding all three GPUs."""
    spaces = shared_data / "tuning-spaces"
    db = tmp_path_factory.mktemp("db") / "t.db"
    with TuningDB(db) as handle:
        import_files(handle, [spaces / f"convolution_{g}.json.gz" for g in ("A100", "A4000", "A6000")])
    space = ReplaySpace(spaces / "convolution_A4000.json.gz")
    return space, db


def _optimum(space) -> float:
    return min(e["time"] for e in space.cache.entries if not isinstance(e["time"], str))


def test_target_records_never_leak_into_its_history(a4000_with_history):
    """Excluding the target device leaves only the other two GPUs' records."""
    space, db = a4000_with_history
    with TuningDB(db) as handle:
        hist = history_for_space(handle, space, exclude_devices=[space.cache.device_name])
    assert {m.device for m in hist} == {"NVIDIA A100-PCIE-40GB", "NVIDIA RTX A6000"}


def test_gga_and_zero_shot_find_the_a4000_optimum_from_other_gpus(a4000_with_history):
    """Measured: the A100+A6000 history puts both at the A4000's optimum within 16 measurements."""
    space, db = a4000_with_history
    opts = options_from_db(db, space, space.cache.problem_size,
                           exclude_devices=[space.cache.device_name])
    res = tune(space, ReplayMeasurer(space.cache), "gga", budget=16, seed=0, options=opts)
    assert _optimum(space) / res.best.record.time_ms >= 0.99
    with TuningDB(db) as handle:
        hist = history_for_space(handle, space, exclude_devices=[space.cache.device_name])
    zs = zero_shot(space, ReplayMeasurer(space.cache), hist, ZeroShotOptions(k=10))
    assert _optimum(space) / zs.best[1].time_ms >= 0.99 and zs.ndcg > 0.8
