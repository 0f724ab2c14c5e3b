"""TuningDB.add and the configs of our conv template (search/db/store.py ``storable``,
search/db/model.py ``conv_config_fault``).

A measurement of ``iobound.conv`` whose config is no kernel config of the workload's
layer (the algorithm's knobs, integers: :func:`kernels.config.config_from_dict`) is
refused whatever its status; a timed ``ok`` one must also pass
:func:`kernels.config.check_config` for the layer (stored, it would be the layer's fastest
and ``kernel --from-history`` could not build it). A failed or invalid record may hold a
config check_config rejects: that is what the tuner found. History import refused such
records before; add let them in, and ``tune --history`` / ``select`` skipped them later.
Reference: check_config itself, called on the layer and the config.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from kernels.config import DirectConfig, check_config, config_from_dict
from search.db import CONV_TEMPLATE, Measurement, TuningDB, Workload
from search.db.queries import best_for_layer
from search.measure.base import MeasureRecord, Status

LAYER = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=8, k_h=3, k_w=3)  # 8x8x8 -> 8x6x6
LABEL = "iobound.conv n1 8x8x8 -> 8x6x6 k3x3 s1x1 p0x0"
GOOD = {"x": 3, "y": 3, "z": 2, "alpha": 1, "tx": 3, "ty": 3, "tz": 1}
WINO = {"e": 2, "x": 2, "y": 2, "z": 2, "tx": 1, "ty": 1, "tz": 1}


def _conv(config: dict, record=None, layer: ConvLayer = LAYER) -> Measurement:
    """A measurement of ``layer``'s workload of the config's knobs (its parameter names:
    the config's keys in order), timed ``ok`` unless ``record`` is given."""
    w = Workload(CONV_TEMPLATE, layer.to_dict(), tuple(config))
    return Measurement(w, "V100-SXM2", "model",
                       record or MeasureRecord.ok(config, time_ms=1.0, estimate=True))


def test_the_configs_of_these_tests_are_the_layers():
    assert check_config(LAYER, config_from_dict(GOOD)) == []
    assert check_config(LAYER, config_from_dict(WINO)) == []
    assert check_config(LAYER, config_from_dict({**GOOD, "tx": 2})) == ["tx=2 must divide x=3"]


@pytest.mark.parametrize("config, status, why", [
    ({**GOOD, "tx": 2}, Status.OK, "tx=2 must divide x=3"),
    ({**GOOD, "x": 7, "tx": 1}, Status.OK, "larger than"),  # 7 > w_out = 6
    ({**WINO, "x": 3}, Status.OK, "x=3 must be a multiple of e=2"),
    ({"x": 3, "y": 3, "z": 2, "alpha": 1}, Status.OK, "direct config is missing tx, ty, tz"),
    ({"e": 2, "x": 2}, Status.OK, "winograd config is missing y, z, tx, ty, tz"),
    # no kernel config at all: refused whatever its status
    ({"x": 3, "y": 3, "z": 2, "alpha": 1}, Status.INVALID, "direct config is missing tx, ty, tz"),
    ({**GOOD, "x": 0}, Status.RUNTIME_ERROR, "x=0 is below the minimum 1"),
    ({**GOOD, "x": "a"}, Status.INVALID, "not an integer"),
])
def test_add_refuses_a_config_that_is_no_kernel_config_of_the_layer(config, status, why):
    """Refused in one InvalidInputError naming the workload (its layer), the device, the
    config and why; nothing of that call is stored, the valid measurement beside it neither."""
    rec = (MeasureRecord.ok(config, time_ms=0.5) if status is Status.OK
           else MeasureRecord.failed(config, status, "found so"))
    with TuningDB(":memory:") as db:
        assert db.add([_conv({**GOOD, "z": 4})]) == 1  # held before: unchanged after
        with pytest.raises(InvalidInputError) as info:
            db.add([_conv(GOOD), _conv(config, rec)])
        msg = str(info.value)
        assert f"a measurement of {LABEL} on 'V100-SXM2'" in msg, msg
        shown = ", ".join(f"{k}={v!r}" for k, v in config.items())
        assert f"config {shown} is not a valid kernel config of the layer" in msg, msg
        assert why in msg, msg
        assert db.count() == 1 and [m.record.config["z"] for m in db.measurements()] == [4]
        assert len(db.workloads()) == 1


def test_add_refuses_an_invalid_timed_config_into_an_empty_database():
    with TuningDB(":memory:") as db:
        with pytest.raises(InvalidInputError, match=r"tx=2 must divide x=3"):
            db.add([_conv({**GOOD, "tx": 2})])
        assert db.count() == 0 and db.workloads() == [] and db.devices() == {}
        assert best_for_layer(db, LAYER, "v100") is None


@pytest.mark.parametrize("status", [Status.INVALID, Status.COMPILE_ERROR, Status.RUNTIME_ERROR,
                                    Status.TIMEOUT, Status.WRONG_RESULT])
@pytest.mark.parametrize("config", [{**GOOD, "tx": 2}, {**GOOD, "x": 7, "tx": 1},
                                    {**WINO, "x": 3}])
def test_a_failed_record_of_a_config_the_tuner_found_invalid_is_stored(status, config):
    """What the tuner records for a config that cannot run (the model measurer's INVALID
    records): a full kernel config of integers, stored as it is, never a timing or a best."""
    assert check_config(LAYER, config_from_dict(config)) != []
    rec = MeasureRecord.failed(config, status, "; ".join(check_config(LAYER, config_from_dict(config))))
    with TuningDB(":memory:") as db:
        assert db.add([_conv(config, rec)]) == 1
        (m,) = db.measurements()
        assert (m.record.config, m.record.status, m.counts) == (config, status, False)
        assert db.measurements(counted_only=True) == []
        assert best_for_layer(db, LAYER, "v100") is None


def test_a_valid_config_is_stored_whatever_its_status():
    with TuningDB(":memory:") as db:
        assert db.add([_conv(GOOD), _conv(WINO),
                       _conv(GOOD, MeasureRecord.failed(GOOD, Status.RUNTIME_ERROR, "no"))]) == 3
        assert best_for_layer(db, LAYER, "v100").measurement.record.config == GOOD


def test_another_template_keeps_any_config_of_its_parameters():
    """Only our conv template's configs are kernel configs: a recorded kernel's problem may
    be a layer dict too, its config is its own."""
    w = Workload("my_conv", LAYER.to_dict(), ("x",))
    with TuningDB(":memory:") as db:
        assert db.add([Measurement(w, "d", "t", MeasureRecord.ok({"x": 99}, time_ms=1.0))]) == 1


# -- property: add accepts a timed ok record exactly when check_config does -------------

@st.composite
def layers(draw) -> ConvLayer:
    g = draw(st.integers(1, 2))
    k = draw(st.integers(1, 3))
    return ConvLayer(n=1, c_in=g * draw(st.integers(1, 4)), h_in=draw(st.integers(k, 9)),
                     w_in=draw(st.integers(k, 9)), c_out=g * draw(st.integers(1, 4)), k_h=k, k_w=k,
                     stride=draw(st.integers(1, 2)), padding=draw(st.integers(0, 1)), groups=g)


def _threads(draw, tile: int) -> int:
    """A thread count for ``tile``: mostly one of its divisors (so that valid configs are
    drawn about as often as invalid ones), else any small number."""
    if draw(st.integers(0, 4)):
        return draw(st.sampled_from([d for d in range(1, tile + 1) if tile % d == 0]))
    return draw(st.integers(1, 8))


@st.composite
def direct_configs(draw, layer: ConvLayer) -> dict:
    """A full direct config of small integers, around the layer's sizes (tiles up to one
    past them, so that some are larger than the layer or its channel groups)."""
    x = draw(st.integers(1, layer.w_out + 1))
    y = draw(st.integers(1, layer.h_out + 1))
    z = draw(st.integers(1, layer.c_out + 1))
    alpha = draw(st.integers(1, layer.c_in // layer.groups + 1))
    return {"x": x, "y": y, "z": z, "alpha": alpha, "tx": _threads(draw, x),
            "ty": _threads(draw, y), "tz": _threads(draw, z)}


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_add_accepts_a_timed_ok_direct_config_exactly_when_check_config_does(data):
    layer = data.draw(layers(), "layer")
    config = data.draw(direct_configs(layer), "config")
    assert tuple(config) == DirectConfig.params
    reasons = check_config(layer, config_from_dict(config, "direct"))
    with TuningDB(":memory:") as db:
        try:
            db.add([_conv(config, MeasureRecord.ok(config, time_ms=1.0), layer)])
        except InvalidInputError as exc:
            assert reasons, f"refused a config check_config accepts: {exc}"
            assert reasons[0][:60] in str(exc) and layer.short() in str(exc)
            assert db.count() == 0
            return
        assert not reasons, f"stored a config check_config refuses: {reasons}"
        (m,) = db.measurements(counted_only=True)
        assert m.record.config == config
        assert best_for_layer(db, layer, "V100-SXM2").measurement.record.config == config
