"""The first configuration (search.selection.first_config) against a by-hand ranking.

Reference: the module doc's distance, the Euclidean norm of the difference of
``log2(c_in, c_out, h_out, w_out, k)``, computed here with ``math.log2``; the answer is
the configuration of the nearest example that has a time and a configuration for the
candidate and whose configuration the layer's pruned space accepts. Quality is
``t_best / t_first``, with ``t_first`` measured here by the model measurer.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from iobound.layer import ConvLayer
from search.conv_space import ConvSpace
from search.measure import make_measurer
from search.selection.dataset import DIRECT, Example, examples_from_records
from search.selection.first_config import first_config_quality, nearest_config

TARGET = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3, padding=1)
DEV = "V100-SXM2"


def _dist(a, b):
    key = lambda l: (l.c_in, l.c_out, l.h_out, l.w_out, l.k_h)  # noqa: E731
    return math.sqrt(sum((math.log2(x) - math.log2(y)) ** 2 for x, y in zip(key(a), key(b))))


@pytest.fixture(scope="module")
def space():
    return ConvSpace(TARGET, DEV, "direct")


@pytest.mark.parametrize("seed", range(12))
def test_the_nearest_example_in_log2_shape_wins(space, seed):
    rng = np.random.default_rng(seed)
    exs = []
    for i in range(6):
        k = int(rng.choice([1, 3, 5]))
        hw = int(rng.integers(k, 30))
        layer = ConvLayer(n=1, c_in=int(rng.integers(1, 200)), h_in=hw,
                          w_in=int(rng.integers(k, 30)), c_out=int(rng.integers(1, 200)),
                          k_h=k, k_w=k)
        exs.append(Example(layer, DEV, {DIRECT: 1.0}, {DIRECT: space.get(int(i * 7 + seed))}))
    d = [_dist(ex.layer, TARGET) for ex in exs]
    assert len(set(d)) == len(d)
    assert nearest_config(TARGET, DEV, DIRECT, exs) == exs[int(np.argmin(d))].configs[DIRECT]


def test_log_not_linear_distance(space):
    """c_in 128 is nearer to 64 than c_in 16 is (a factor 2 against 4), though farther in
    channels."""
    target = TARGET.replace(c_in=64)
    far = Example(target.replace(c_in=16), DEV, {DIRECT: 1.0}, {DIRECT: space.get(0)})
    near = Example(target.replace(c_in=128), DEV, {DIRECT: 1.0}, {DIRECT: space.get(1)})
    assert nearest_config(target, DEV, DIRECT, [far, near]) == space.get(1)


def test_examples_without_a_time_or_a_config_are_skipped(space):
    untimed = Example(TARGET, DEV, {DIRECT: None}, {DIRECT: space.get(0)})
    unconfigured = Example(TARGET, DEV, {DIRECT: 1.0}, {})
    farther = Example(TARGET.replace(c_in=64), DEV, {DIRECT: 1.0}, {DIRECT: space.get(2)})
    assert nearest_config(TARGET, DEV, DIRECT, [untimed, unconfigured, farther]) == space.get(2)
    assert nearest_config(TARGET, DEV, DIRECT, [untimed, unconfigured]) is None


def test_a_space_that_cannot_be_built_gives_none(space, monkeypatch):
    import search.conv_space

    def refuse(*args, **kw):
        raise ValueError("empty")
    monkeypatch.setattr(search.conv_space, "ConvSpace", refuse)
    ex = Example(TARGET, DEV, {DIRECT: 1.0}, {DIRECT: space.get(0)})
    assert nearest_config(TARGET, DEV, DIRECT, [ex]) is None


def test_quality_is_best_over_first(tiny_layer, tiny_records):
    """A neighbour's slower configuration: quality t_best / t_first < 1; an example whose
    candidate never ran scores 0."""
    ex, = examples_from_records(tiny_records)
    space = ConvSpace(tiny_layer, "v100", "direct")
    times = make_measurer("model", tiny_layer, "v100", "direct").measure(
        [space.get(i) for i in range(len(space))])
    slow = max((r for r in times if r.is_ok), key=lambda r: r.time_ms)
    neighbour = Example(tiny_layer.replace(c_in=3), ex.device, {DIRECT: 1.0},
                        {DIRECT: dict(slow.config)})
    q = first_config_quality(ex, DIRECT, [neighbour])
    assert q == pytest.approx(ex.times[DIRECT] / slow.time_ms) and q < 1
    never = Example(ex.layer, ex.device, {**ex.times, DIRECT: None}, ex.configs)
    assert first_config_quality(never, DIRECT, [neighbour]) == 0.0


def test_the_kernel_size_counts(space):
    """Same shape with a 1x1 kernel (log2 3 = 1.58 away) loses to twice the channels (1 away)."""
    other_k = Example(TARGET.replace(k_h=1, k_w=1, padding=0), DEV, {DIRECT: 1.0},
                      {DIRECT: space.get(0)})
    twice = Example(TARGET.replace(c_in=16), DEV, {DIRECT: 1.0}, {DIRECT: space.get(1)})
    assert nearest_config(TARGET, DEV, DIRECT, [other_k, twice]) == space.get(1)


def test_a_winograd_candidate_takes_only_its_own_e():
    """An e = 4 configuration is no first configuration for the e = 2 candidate."""
    from search.selection.dataset import Candidate

    e2, e4 = Candidate("winograd", 2), Candidate("winograd", 4)
    cfg = ConvSpace(TARGET, DEV, "winograd", winograd_e=(4,)).get(0)
    ex = Example(TARGET, DEV, {e2: 1.0, e4: 1.0}, {e2: cfg, e4: cfg})
    assert nearest_config(TARGET, DEV, e4, [ex]) == cfg
    assert nearest_config(TARGET, DEV, e2, [ex]) is None
