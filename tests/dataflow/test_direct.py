"""Direct dataflow: tiling validation, footprint, the paper's estimate, optimality gap."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from dataflow.direct import (
    DirectTiling, direct_footprint, direct_io, direct_optimality_gap, direct_paper_io,
    direct_paper_total, satisfies_optimality,
)
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer

LAYER = ConvLayer(n=1, c_in=8, h_in=16, w_in=16, c_out=16, k_h=3, k_w=3, padding=(1, 1))


@pytest.mark.parametrize("field", ["x", "y", "z", "alpha"])
def test_tiling_rejects_non_positive(field):
    """A zero tile size is a ValueError naming the field."""
    kw = {"x": 1, "y": 1, "z": 1, "alpha": 1, field: 0}
    with pytest.raises(ValueError, match=f"tile {field}=0 is below the minimum 1"):
        DirectTiling(**kw)


def test_tile_larger_than_output_rejected():
    """A tile wider than w_out is a ValueError naming x and w_out."""
    with pytest.raises(ValueError, match="x=17 is larger than w_out=16"):
        direct_io(LAYER, DirectTiling(17, 1, 1))


def test_footprint_formula():
    """shared = alpha*in_rows*in_cols + z*alpha*k*k; registers = x*y*z."""
    fp = direct_footprint(LAYER, DirectTiling(4, 2, 8, 2))
    assert fp.shared_words == 2 * 4 * 6 + 8 * 2 * 9
    assert fp.register_words == 64 and fp.total == fp.shared_words + 64


def test_footprint_uses_stride_and_dilation():
    """in_rows(y) = (y-1)*mu_h + extent_h with the dilated extent."""
    layer = ConvLayer(1, 1, 30, 30, 1, 3, 2, stride=(2, 3), dilation=(2, 1))
    fp = direct_footprint(layer, DirectTiling(3, 4, 1))
    assert fp.shared_words == ((4 - 1) * 2 + 5) * ((3 - 1) * 3 + 2) + 6


def test_alpha_does_not_change_io():
    """The channel chunk alpha changes the footprint but not the traffic."""
    assert direct_io(LAYER, DirectTiling(4, 4, 4, 1)) == direct_io(LAYER, DirectTiling(4, 4, 4, 8))


def test_whole_layer_tile_loads_everything_once():
    """One block per image loads every input, weight and output exactly once."""
    io = direct_io(LAYER, DirectTiling(16, 16, 16))
    assert (io.input_loads, io.weight_loads, io.output_stores) == (
        LAYER.input_size, LAYER.weight_size, LAYER.output_size)


@given(st.sampled_from([1, 2, 4, 8]), st.sampled_from([1, 2, 4, 8]),
       st.sampled_from([1, 2, 4, 8]))
def test_paper_io_underestimates_stride1_halo(x, y, z):
    """With stride 1 and no padding the paper's x' = x misses the halo: exact >= paper
    (tiles dividing the 8 x 8 x 8 output, where Eq. 12 counts whole tiles)."""
    layer = ConvLayer(1, 3, 10, 10, 8, 3, 3)
    t = DirectTiling(x, y, z)
    assert direct_io(layer, t).total >= direct_paper_io(layer, t)


def test_paper_io_matches_exact_for_1x1_stride1():
    """A 1x1 stride-1 kernel has no halo, so Eq. 12 is exact for dividing tiles."""
    layer = ConvLayer(2, 5, 8, 8, 6, 1, 1)
    t = DirectTiling(4, 2, 3)
    assert direct_io(layer, t).total == pytest.approx(direct_paper_io(layer, t))


def test_paper_total_is_eq12_at_its_optimum():
    """Eq. 13 equals Eq. 12 at x*y*z = S and x*y = R*z (here x=y=6, z=4, R=9, S=144)."""
    layer = ConvLayer(1, 4, 12, 12, 8, 3, 3, padding=(1, 1))
    assert direct_paper_total(layer, 144) == pytest.approx(direct_paper_io(layer, DirectTiling(6, 6, 4)))


def test_paper_total_processors_split_memory():
    """N_p processors sharing S behave as one with S / N_p."""
    assert direct_paper_total(LAYER, 4096, 4) == pytest.approx(direct_paper_total(LAYER, 1024))


@given(st.integers(1, 16), st.integers(1, 16), st.integers(1, 16))
def test_gap_sign_and_range(x, y, z):
    """The gap is in (-1, 1), positive iff x*y > R*z, and zero iff equal (tiles within the
    16 x 16 x 16 output: larger ones are refused)."""
    g = direct_optimality_gap(LAYER, DirectTiling(x, y, z))
    assert -1 < g < 1
    assert (g > 0) == (x * y > 9 * z) and (g == 0) == (x * y == 9 * z)


def test_gap_uses_reuse_max_by_default():
    """For AlexNet conv1 R_max = 9, not the paper's 7.56."""
    layer = ConvLayer(1, 3, 227, 227, 96, 11, 11, stride=(4, 4))
    assert direct_optimality_gap(layer, DirectTiling(9, 1, 1)) == 0.0
    assert direct_optimality_gap(layer, DirectTiling(9, 1, 1), reuse=layer.reuse_paper) > 0


def test_satisfies_optimality_tolerance():
    """x*y = 12, R*z = 9: gap 0.25 passes at tol 0.25 and fails at 0.2."""
    t = DirectTiling(4, 3, 1)
    assert satisfies_optimality(LAYER, t, tol=0.25) and not satisfies_optimality(LAYER, t, tol=0.2)


#: Anything that is not a whole number of words: floats (NaN, inf, 64.0), strings, None, bools.
NOT_AN_INT = st.floats() | st.text(max_size=3) | st.none() | st.booleans()


@given(NOT_AN_INT | st.integers(max_value=0) | st.integers(min_value=2**40 + 1))
def test_paper_total_refuses_a_bad_fast_memory_or_processors(v):
    """S and N_p are positive integers within their limits: str/None a TypeError, NaN a
    NaN total, inf a ZeroDivisionError, 10**400 an OverflowError before; named now."""
    with pytest.raises(InvalidInputError, match="fast_memory"):
        direct_paper_total(LAYER, v)
    with pytest.raises(InvalidInputError, match="processors"):
        direct_paper_total(LAYER, 64, v)


@given(st.floats().filter(lambda x: not 0 <= x < float("inf")) | st.text(max_size=3)
       | st.none() | st.booleans())
def test_optimality_tolerance_and_reuse_are_finite_numbers(v):
    """tol (>= 0) and reuse (> 0) are finite real numbers: NaN made every tiling
    unsatisfied and a NaN gap (silently wrong answers), a string a TypeError."""
    with pytest.raises(InvalidInputError, match="tol must be a finite number >= 0"):
        satisfies_optimality(LAYER, DirectTiling(4, 4, 2), tol=v)
    if v is not None:  # reuse=None: the layer's R_max
        with pytest.raises(InvalidInputError, match="reuse must be a finite number > 0"):
            direct_optimality_gap(LAYER, DirectTiling(4, 4, 2), reuse=v)


def test_tiling_fields_are_limited_integers():
    """A tile of 10**30 is refused at the TILE limit; numpy integers are stored as int."""
    with pytest.raises(InvalidInputError, match="tile z=1000000000000000000000000000000 is above"):
        DirectTiling(1, 1, 10**30)
    t = DirectTiling(np.int64(4), 4, np.int32(2))
    assert t == DirectTiling(4, 4, 2) and type(t.x) is int and type(t.z) is int


@pytest.mark.parametrize("cls, d", [
    ("direct", {"x": 4, "y": 4}), ("direct", None), ("winograd", {"e": 2, "x": 4, "y": 4}),
    ("winograd", [2, 4, 4, 4]),
])
def test_a_tiling_dict_without_its_keys_is_named_not_a_key_error(cls, d):
    from dataflow.winograd import WinogradTiling
    from iobound.errors import InvalidInputError
    tiling = DirectTiling if cls == "direct" else WinogradTiling
    with pytest.raises(InvalidInputError, match="tiling dict must be a mapping with"):
        tiling.from_dict(d)
