"""ReplaySpace (search.replay_space) on value lists the file does not fully declare.

Reference: brute force over the entries: a parameter's values are the declared ones, then
the values only entries use, in the order they first appear; configuration ``i`` is the
``i``-th entry in the order of its values' positions in those lists (as Kernel Tuner
enumerates tune_params; not the file's entry order, which a JSON object does not keep);
every entry is found at its own index; any other combination is no member (``None``, also
for a value that cannot be hashed); list values (JSON arrays) are values too.
"""

from __future__ import annotations

import itertools

from hypothesis import given, settings, strategies as st

from search.kt_cache import KtCache
from search.replay_space import ReplaySpace

A_VALUES = [1, 2, 3]
B_VALUES = [[1, 1], [2, 1], [4, 4]]


@settings(max_examples=40, deadline=None)
@given(entries=st.sets(st.tuples(st.sampled_from(range(3)), st.sampled_from(range(3))),
                       min_size=1).map(sorted).flatmap(st.permutations),
       declared_a=st.integers(1, 3), declared_b=st.integers(1, 3))
def test_members_indices_and_values_match_brute_force(entries, declared_a, declared_b):
    """Entries over a x b (b's values are lists), with only the first few values of each
    declared in tune_params."""
    rows = [{"a": A_VALUES[i], "b": B_VALUES[j], "time": 1.0 + i + j} for i, j in entries]
    cache = KtCache(tune_params={"a": A_VALUES[:declared_a], "b": B_VALUES[:declared_b]},
                    entries=rows)
    space = ReplaySpace(cache)
    assert len(space) == len(rows)
    lists = {}
    for name, values, declared in (("a", A_VALUES, declared_a), ("b", B_VALUES, declared_b)):
        extra = []
        for r in rows:
            if r[name] not in values[:declared] and r[name] not in extra:
                extra.append(r[name])
        lists[name] = values[:declared] + extra
        assert space.values(name) == lists[name]
    ordered = sorted(rows, key=lambda r: (lists["a"].index(r["a"]), lists["b"].index(r["b"])))
    for k, row in enumerate(ordered):
        assert space.get(k) == {"a": row["a"], "b": row["b"]}
        assert space.index({"a": row["a"], "b": row["b"]}) == k
    present = {(r["a"], tuple(r["b"])) for r in rows}
    for a, b in itertools.product(A_VALUES, B_VALUES):
        if (a, tuple(b)) not in present:
            assert space.index({"a": a, "b": b}) is None
    assert space.index({"a": {"not": "hashable"}, "b": B_VALUES[0]}) is None
    assert space.index({"a": A_VALUES[0]}) is None
