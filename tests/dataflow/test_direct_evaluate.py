"""evaluate_dataflow: optimal or given tiles against the best lower bound."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from dataflow.direct import DirectTiling, direct_io
from dataflow.evaluate import evaluate_dataflow
from dataflow.winograd import WinogradTiling
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from iobound.multi_block import bound_fast_memory
from iobound.report import best_lower_bound

LAYER = ConvLayer(n=1, c_in=16, h_in=16, w_in=16, c_out=32, k_h=3, k_w=3, padding=(1, 1))


@st.composite
def layers(draw):
    k = draw(st.integers(1, 3))
    s = draw(st.integers(1, 2))
    p = draw(st.integers(0, 1))
    h = draw(st.integers(max(k - 2 * p, 1), 12))
    return ConvLayer(n=draw(st.integers(1, 2)), c_in=draw(st.integers(1, 8)), h_in=h,
                     w_in=draw(st.integers(max(k - 2 * p, 1), 12)), c_out=draw(st.integers(1, 8)),
                     k_h=k, k_w=k, stride=(s, s), padding=(p, p))


@given(layers(), st.integers(64, 4096))
def test_dataflow_never_beats_the_bound(layer, s):
    """A valid schedule's exact I/O is >= the best lower bound for the block's S words (the
    single-processor bound at S + 2, proofs/test_multi_block.py; ratio >= 1)."""
    rep = evaluate_dataflow(layer, s)
    assert rep.lower_bound == best_lower_bound(layer, bound_fast_memory(s), "direct")
    assert rep.ratio_to_bound >= 1


def test_ratio_is_io_over_bound():
    """ratio_to_bound = exact I/O / best bound for S/N_p words (at S/N_p + 2)."""
    rep = evaluate_dataflow(LAYER, 4096, processors=4)
    assert rep.block_memory_words == 1024
    assert rep.ratio_to_bound == pytest.approx(rep.io.total / best_lower_bound(LAYER, 1026))


def test_given_tiles_reported_as_given():
    """Given tiles are evaluated, not replaced."""
    rep = evaluate_dataflow(LAYER, 1024, tiling=DirectTiling(4, 4, 8, 2))
    assert rep.tiles_source == "given" and rep.io == direct_io(LAYER, DirectTiling(4, 4, 8, 2))


def test_given_tiles_must_fit():
    """Tiles whose footprint exceeds S/N_p are rejected with both sizes."""
    with pytest.raises(ValueError, match="words on chip, more than the 100 words"):
        evaluate_dataflow(LAYER, 100, tiling=DirectTiling(4, 4, 8))


def test_winograd_default_e_and_bound():
    """Winograd uses e=2 by default and the Winograd bound for that e."""
    rep = evaluate_dataflow(LAYER, 2048, algorithm="winograd")
    assert rep.tiling.e == 2
    assert rep.lower_bound == best_lower_bound(LAYER, bound_fast_memory(2048), "winograd", 2)
    assert rep.optimality.reuse == 9


def test_wrong_tiling_kind_rejected():
    """A Winograd tiling for the direct algorithm is a ValueError."""
    with pytest.raises(ValueError, match="DirectTiling"):
        evaluate_dataflow(LAYER, 2048, tiling=WinogradTiling(2, 4, 4, 4))


def test_unknown_algorithm_rejected():
    """Only direct and winograd exist."""
    with pytest.raises(ValueError, match="algorithm"):
        evaluate_dataflow(LAYER, 2048, algorithm="fft")


def test_optimality_gap_reported_for_both_reuses():
    """The condition is reported against reuse_max and the dataflow's own R_df."""
    layer = ConvLayer(1, 8, 30, 30, 16, 3, 3, stride=(2, 2), padding=(1, 1))
    cond = evaluate_dataflow(layer, 2048).optimality
    assert cond.reuse == 4 and cond.dataflow_reuse == 2.25
    assert cond.relative_gap != cond.dataflow_gap


def test_all_padding_layer_has_no_ratio():
    """When every window lies in the padding the bound is 0 and the JSON ratio is None."""
    layer = ConvLayer(1, 3, 1, 10, 4, 1, 1, stride=(2, 2), padding=(1, 1))  # rows -1 and 1 only
    rep = evaluate_dataflow(layer, 256)
    assert rep.lower_bound == 0 and rep.to_dict()["ratio_to_bound"] is None


SMALL = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3)


@pytest.mark.parametrize("kw, needle", [
    ({"fast_memory": "64"}, "fast memory S"),            # was TypeError (str // int)
    ({"fast_memory": None}, "fast memory S"),
    ({"fast_memory": float("nan")}, "fast memory S"),    # was ValueError from int(NaN)
    ({"fast_memory": 64.0}, "fast memory S"),
    ({"fast_memory": 10 ** 30}, "above the limit"),      # was OverflowError
    ({"algorithm": "winograd", "e": 0}, "e must be"),    # was ZeroDivisionError
    ({"algorithm": "winograd", "e": "2"}, "e must be"),  # was TypeError
    ({"algorithm": "winograd", "e": 10 ** 30}, "above the limit"),
    ({"tolerance": "0.25"}, "tolerance"),                # was TypeError
    ({"tolerance": float("nan")}, "tolerance"),          # was a silent 'not satisfied'
    ({"tolerance": -1}, "tolerance"),
])
def test_bad_numbers_are_refused_naming_them(kw, needle):
    """Each: InvalidInputError naming the argument, never a raw error from inside."""
    args = {"fast_memory": 256, **kw}
    with pytest.raises(InvalidInputError, match=needle):
        evaluate_dataflow(SMALL, args.pop("fast_memory"), **args)


@given(st.integers(64, 4096))
def test_a_numpy_fast_memory_is_the_int(s):
    """Property: S given as a numpy integer reports the same as the int, as an int."""
    got = evaluate_dataflow(SMALL, np.int64(s))
    assert got.to_dict() == evaluate_dataflow(SMALL, s).to_dict()
    assert type(got.fast_memory_words) is int
