"""History (search.history) against a brute-force model of what was added.

Reference: a plain dict replaying the ``add`` calls: per key (layer, device, toolchain)
and configuration the record of the latest timestamp (distinct timestamps, not in the
order of the calls) is the one ``records`` shows, fastest first and failures last; ``best`` is the fastest
ok record ever added under the key (a later failure or slower time of the configuration does not
undo it, as ``iobound history best`` ranks); ``keys`` lists every key with measurements, sorted.
"""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings, strategies as st

from search.history import History, HistoryKey
from search.measure.base import MeasureRecord

KEYS = [HistoryKey(layer, device, tool) for layer in ('{"c_in": 2}', '{"c_in": 4}')
        for device in ("v100", "a100") for tool in ("model v1", "model v2")]

adds = st.lists(st.tuples(st.sampled_from(range(len(KEYS))), st.integers(0, 3),
                          st.none() | st.integers(1, 9), st.integers(0, 2)),
                min_size=1, max_size=14)


@settings(max_examples=30, deadline=None)
@given(adds)
def test_records_best_and_keys_match_a_replay_of_the_adds(steps):
    """Each step adds one record (key, config x, time or a failure, timestamp); the
    history then answers as the brute-force replay of the steps."""
    latest: dict = {}
    timed_ever: dict = {}
    with History(":memory:") as h:
        for n, (k, x, t, stamp) in enumerate(steps):
            rec = (MeasureRecord.ok({"x": x}, time_ms=float(t)) if t is not None
                   else MeasureRecord.failed({"x": x}, "runtime_error"))
            when = 100 * stamp + n  # distinct, but not in the order of the calls
            h.add(KEYS[k], [dataclasses.replace(rec, timestamp=float(when))])
            if t is not None:
                timed_ever.setdefault(k, []).append(float(t))
            old = latest.get((k, x))
            if old is None or when > old[0]:
                latest[(k, x)] = (when, t)
        for k, key in enumerate(KEYS):
            mine = {x: t for (kk, x), (_, t) in latest.items() if kk == k}
            got = h.records(key)
            assert sorted((r.config["x"], r.time_ms) for r in got) == sorted(
                (x, None if t is None else float(t)) for x, t in mine.items())
            times = [r.time_ms for r in got]
            timed = [t for t in times if t is not None]
            assert times == sorted(timed) + [None] * (len(times) - len(timed))
            best = h.best(key)
            ever = timed_ever.get(k)
            assert (best.time_ms if best else None) == (min(ever) if ever else None)
        assert h.keys() == sorted({KEYS[k] for k, *_ in steps},
                                  key=lambda q: (q.layer, q.device, q.toolchain))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.none() | st.integers(1, 9)),
                min_size=1, max_size=12))
def test_equal_timestamps_leave_the_record_stored_last(steps):
    """Records of one config with the same timestamp (imports without one): the one
    stored last is the config's record, whatever the times; adding a record already
    stored (same time, same timestamp) stores nothing, so it does not count as later."""
    key = KEYS[0]
    stored: dict[int, list] = {}
    with History(":memory:") as h:
        for x, t in steps:
            rec = (MeasureRecord.ok({"x": x}, time_ms=float(t)) if t is not None
                   else MeasureRecord.failed({"x": x}, "runtime_error"))
            h.add(key, [dataclasses.replace(rec, timestamp=0.0)])
            if t not in stored.setdefault(x, []):
                stored[x].append(t)
        got = {r.config["x"]: r.time_ms for r in h.records(key)}
    assert got == {x: None if ts[-1] is None else float(ts[-1]) for x, ts in stored.items()}


def test_equal_timestamps_a_faster_record_stored_later_wins():
    """The case the fastest-first order got wrong: slow then fast, same stamp."""
    with History(":memory:") as h:
        for t in (5.0, 1.0):
            h.add(KEYS[0], [dataclasses.replace(MeasureRecord.ok({"x": 0}, time_ms=t),
                                                timestamp=0.0)])
        assert [r.time_ms for r in h.records(KEYS[0])] == [1.0]
