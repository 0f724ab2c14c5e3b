"""gga's edge cases (search/strategies/gga.py): times of 0 and a seed share of 0.

References: the project reads a non-positive time as no time elsewhere (search.times), but
a measurer may report 0.0 ms for an ``ok`` record (a timer's resolution), which plain ``ga``
takes; gga's population draw divided by it (NaN probabilities, a crash). And
``GuidedGAOptions.seed_share`` is the share of the first generation taken from the
history's best, the rest random: 0 means none (one was taken whatever the share).
"""

import numpy as np
import pytest

from search.db import Measurement, Workload
from search.measure.base import MeasureRecord, Measurer
from search.grid_space import GridSpace
from search.strategies.gga import GuidedGAOptions, GuidedGAStrategy
from search.tuner import tune

SPACE = GridSpace({"a": list(range(4)), "b": list(range(4)), "c": [1, 2, 4]})
WIDE = GridSpace({"a": list(range(8)), "b": list(range(6)), "c": [1, 2, 4]})


class ZeroForA0(Measurer):
    """0.0 ms for every configuration with a == 0 (a timer that rounds a tiny kernel to 0)."""

    name = "zero"

    def measure(self, configs):
        return [MeasureRecord.ok(c, time_ms=0.0 if c["a"] == 0 else 1.0 + c["a"] + c["b"])
                for c in configs]


def _hist():
    w = Workload("k", [64, 64], SPACE.params)
    # history says a == 0 is fast: the seeds are the zero-time configurations
    return tuple(Measurement(w, "g0", "t", MeasureRecord.ok(SPACE.get(i),
                                                            time_ms=1.0 + SPACE.get(i)["a"]))
                 for i in range(len(SPACE)))


def test_plain_ga_survives_zero_times():
    res = tune(SPACE, ZeroForA0(), "ga", budget=24, seed=0,
               options={"population": 4, "batch_size": 4})
    assert len(res.trials) == 24


def test_gga_survives_zero_times():
    s = GuidedGAStrategy(SPACE, GuidedGAOptions(history=_hist(), target_problem=[64, 64],
                                                population=4, batch_size=4),
                         np.random.default_rng(0))
    assert s.used
    res = tune(SPACE, ZeroForA0(), s, budget=24)
    assert len(res.trials) == 24


def _wide_hist():
    w = Workload("k", [64, 64], WIDE.params)
    return tuple(Measurement(w, "g0", "t", MeasureRecord.ok(WIDE.get(i), time_ms=1.0 + i))
                 for i in range(len(WIDE)))


@pytest.mark.parametrize("share", [0.0, 0.02])
def test_a_zero_share_takes_no_seed(share):
    s = GuidedGAStrategy(WIDE, GuidedGAOptions(history=_wide_hist(), target_problem=[64, 64],
                                                population=16, seed_share=share),
                         np.random.default_rng(0))
    first = s.ask(16)
    assert round(16 * share) == 0
    assert s.counts["seeded"] == 0, f"{s.counts['seeded']} seed(s) with seed_share={share}"
    assert s.counts["random"] == 16 and len(first) == 16


def test_a_layer_written_with_fewer_keys_matches_itself():
    """Mu et al.'s match score compares a problem's dimensions field by field: a layer dict
    without the fields that have defaults (groups, the output sizes) is the same layer as
    its full form and scores 1 against it (it scored 0: the fields did not line up)."""
    from iobound.networks import get_layer
    from search.strategies.gga_history import match_score
    full = get_layer("resnet18.conv2_1a").to_dict()
    short = {k: full[k] for k in ("n", "c_in", "h_in", "w_in", "c_out", "k_h", "k_w",
                                  "padding")}
    assert match_score(short, full) == match_score(full, short) == 1.0
    other = get_layer("resnet18.conv3_1a").to_dict()
    assert match_score(short, other) == match_score(full, other) < 1.0
