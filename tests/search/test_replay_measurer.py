"""Tests of the replay measurer's statuses and times."""

from search.kt_cache import entry_status
from kernels.status import Status


def test_every_recorded_entry_replays_its_outcome(synth_space, synth_measurer):
    """ok entries give their recorded time; failures their status; nothing is an estimate."""
    recs = synth_measurer.measure([synth_space.get(i) for i in range(len(synth_space))])
    for e, r in zip(synth_space.cache.entries, recs):
        assert r.status == entry_status(e) and not r.estimate
        assert r.time_ms == (e["time"] if r.status is Status.OK else None)


def test_unrecorded_config_is_invalid(synth_measurer):
    """A configuration absent from the file is invalid, with a message."""
    (r,) = synth_measurer.measure([{"bx": 256, "by": 4, "tile": 1, "shm": 0}])
    assert r.status is Status.INVALID and "not recorded" in r.error


def test_missing_parameter_is_invalid(synth_measurer):
    """A config lacking a parameter is invalid, not an exception."""
    (r,) = synth_measurer.measure([{"bx": 64}])
    assert r.status is Status.INVALID


def test_costs_are_the_recorded_times(synth_space, synth_measurer):
    """costs holds the recorded repeats."""
    i = synth_space.index({"bx": 64, "by": 2, "tile": 2, "shm": 1})
    (r,) = synth_measurer.measure([synth_space.get(i)])
    assert r.costs == (1.0395, 1.05, 1.0605)
