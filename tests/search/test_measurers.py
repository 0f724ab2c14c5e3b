"""Tests of the emulate and cuda measurers, and the measurer registry."""

import dataclasses

import pytest

from iobound.layer import ConvLayer
from search.measure import MEASURERS, make_measurer, measurer_class
from search.measure.base import Measurer
from search.measure.emulate import EmulateMeasurer
from kernels.status import Status

LAYER = ConvLayer(n=1, c_in=3, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
GOOD = dict(x=3, y=3, z=2, alpha=2, tx=3, ty=1, tz=2)


def test_registry_builds_every_measurer_class():
    """Every registered name imports (lazily) to a Measurer subclass with that name."""
    for name in MEASURERS:
        cls = measurer_class(name)
        assert issubclass(cls, Measurer) and cls.name == name


def test_emulate_ok_has_no_time_and_traffic_surrogate():
    """An emulated config is ok, untimed, and its cost is the counted traffic."""
    (r,) = make_measurer("emulate", LAYER).measure([GOOD])
    assert r.status is Status.OK and r.time_ms is None and r.costs == ()
    assert r.cost == r.extra["traffic_words"] == r.extra["global_loads"] + r.extra["global_stores"]
    assert r.extra["traffic_matches"]


def test_emulate_invalid_config():
    """A config that cannot run is invalid with the reason."""
    (r,) = make_measurer("emulate", LAYER).measure([dict(GOOD, tx=2)])
    assert r.status is Status.INVALID and "tx=2" in r.error


def test_emulate_wrong_numbers_are_wrong_result(monkeypatch):
    """When the emulated output differs from numpy the status is wrong_result."""
    import kernels.verify as verify
    real = verify.emulate_and_check

    def broken(*a, **k):
        return dataclasses.replace(real(*a, **k), numerics_ok=False, ok=False)

    monkeypatch.setattr(verify, "emulate_and_check", broken)
    (r,) = make_measurer("emulate", LAYER).measure([GOOD])
    assert r.status is Status.WRONG_RESULT and r.cost == float("inf")


def test_emulate_bad_keys_are_invalid():
    """A config with unknown keys is invalid, not an exception."""
    (r,) = make_measurer("emulate", LAYER).measure([{"block_size_x": 32}])
    assert r.status is Status.INVALID


@pytest.mark.gpu
def test_cuda_measures_a_small_kernel():
    """On a GPU the cuda measurer times a valid config (ok, positive median)."""
    (r,) = make_measurer("cuda", LAYER).measure([GOOD])
    assert r.status is Status.OK and r.time_ms > 0 and len(r.costs) >= 1


@pytest.mark.parametrize("kwargs, needle", [
    ({"seed": -1}, "seed=-1 is below the minimum 0"), ({"seed": 1.5}, "seed must be an integer"),
    ({"with_bound": "yes"}, "with_bound must be True or False"), ({"layer": None}, "layer must be"),
])
def test_emulate_measurer_refuses_bad_arguments_when_built(kwargs, needle):
    """A bad seed made every configuration an invalid record, one by one, at measure time."""
    from iobound.errors import InvalidInputError
    args = {"layer": ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3), **kwargs}
    with pytest.raises(InvalidInputError, match=needle):
        EmulateMeasurer(**args)
