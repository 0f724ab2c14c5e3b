"""Tests of ReplaySpace: membership, lookups and neighbourhoods against brute force."""

import numpy as np
import pytest

from search.kt_cache import load_cache
from search.replay_space import ReplaySpace


def test_space_is_what_the_file_records(synth_space):
    """Every entry (valid and failed) is a member; an unrecorded config is not."""
    assert len(synth_space) == 102
    assert synth_space.index({"bx": 256, "by": 4, "tile": 1, "shm": 0}) is None  # bx*by > 512
    statuses = synth_space.describe()["statuses"]
    assert statuses["compile_error"] > 0 and statuses["runtime_error"] > 0 and statuses["invalid"] > 0


def test_get_index_round_trip(synth_space):
    """index(get(i)) == i for every recorded configuration."""
    assert all(synth_space.index(synth_space.get(i)) == i for i in range(len(synth_space)))


def _brute(space, i, hamming):
    a = space.get(i)
    out = []
    for j in range(len(space)):
        b = space.get(j)
        diff = [p for p in space.params if a[p] != b[p]]
        if len(diff) != 1:
            continue
        vals = space.values(diff[0])
        if hamming or abs(vals.index(a[diff[0]]) - vals.index(b[diff[0]])) == 1:
            out.append(j)
    return sorted(out)


def test_adjacent_neighbours_match_brute_force(synth_cache_path):
    """Adjacent neighbours: one parameter, one step in its value list (Hamming-1 if isolated)."""
    space = ReplaySpace(synth_cache_path, neighbourhood="adjacent")
    for i in range(len(space)):
        want = _brute(space, i, hamming=False) or _brute(space, i, hamming=True)
        assert sorted(space.neighbours(i)) == want


def test_hamming_neighbours_match_brute_force(synth_cache_path):
    """Hamming neighbours: any other value of exactly one parameter."""
    space = ReplaySpace(synth_cache_path, neighbourhood="hamming")
    for i in range(len(space)):
        assert sorted(space.neighbours(i)) == _brute(space, i, hamming=True)


def test_features_are_knob_values(synth_space):
    """Feature rows are the configuration's numeric values in parameter order."""
    i = synth_space.index({"bx": 64, "by": 2, "tile": 2, "shm": 1})
    assert synth_space.features([i]).tolist() == [[64.0, 2.0, 2.0, 1.0]]


def test_unknown_neighbourhood_rejected(synth_cache_path):
    """A bad neighbourhood name is a ValueError listing the choices."""
    with pytest.raises(ValueError, match="hamming, adjacent"):
        ReplaySpace(synth_cache_path, neighbourhood="euclid")


@pytest.mark.shared_data
def test_real_file_indexes_every_entry(shared_data):
    """A ~1 MB recorded space indexes every entry (its load time: benchmarks/component_speed.py)."""
    space = ReplaySpace(shared_data / "tuning-spaces" / "convolution_A4000.json.gz")
    idx = np.random.default_rng(0).choice(len(space), 200, replace=False)
    assert all(space.index(space.get(int(i))) == int(i) for i in idx)
    assert len(space) == len(load_cache(space.cache.path))
