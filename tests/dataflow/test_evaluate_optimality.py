"""The optimality condition x y = R z reported by evaluate_dataflow, computed by hand.

Reference: the definition in dataflow.evaluate.OptimalityCondition (R = reuse_max for direct,
gap = (x y - R z) / max(x y, R z), satisfied when |gap| <= tolerance), evaluated here from
the tiling and the layer's sizes.
"""

import pytest

from dataflow.direct import DirectTiling
from dataflow.evaluate import evaluate_dataflow
from iobound import ConvLayer

#: stride 2 does not divide 3: reuse_max (4) differs from the paper's 9/4 and from R_df.
LAYER = ConvLayer(n=1, c_in=4, h_in=9, w_in=9, c_out=8, k_h=3, k_w=3, stride=2, padding=1)


@pytest.mark.parametrize("tiling", [DirectTiling(1, 1, 8, 1), DirectTiling(5, 5, 1, 1),
                                    DirectTiling(2, 2, 1, 1)])
def test_condition_uses_reuse_max_and_the_absolute_gap(tiling):
    rep = evaluate_dataflow(LAYER, 1 << 16, tiling=tiling)
    xy, rz = tiling.x * tiling.y, LAYER.reuse_max * tiling.z
    gap = (xy - rz) / max(xy, rz)
    cond = rep.optimality
    assert (cond.reuse, cond.xy, cond.rz) == (LAYER.reuse_max, xy, rz)
    assert cond.relative_gap == pytest.approx(gap)
    assert cond.satisfied == (abs(gap) <= cond.tolerance)
    r_df = cond.dataflow_reuse
    assert cond.dataflow_gap == pytest.approx((xy - r_df * tiling.z) / max(xy, r_df * tiling.z))


def test_processors_share_the_fast_memory_in_every_estimate():
    """S words shared by N_p blocks: the closed form (Eq. 13) and the halo-free optimum are
    those of S / N_p words, the same as one block with S / N_p; searched-any tiles say so."""
    shared = evaluate_dataflow(LAYER, 4096, processors=4, divisors=False)
    alone = evaluate_dataflow(LAYER, 1024, processors=1, divisors=False)
    assert shared.block_memory_words == 1024
    assert shared.io_paper_closed_form == pytest.approx(alone.io_paper_closed_form)
    assert shared.continuous == alone.continuous
    assert shared.tiles_source == alone.tiles_source == "optimal-any"


def test_given_tiles_must_fit_one_block_not_all_of_s():
    """A tiling whose footprint fits S but not S / N_p is refused when N_p blocks share S."""
    from dataflow.direct import direct_footprint
    from iobound.errors import InvalidInputError
    t = DirectTiling(5, 5, 8, 4)
    need = direct_footprint(LAYER, t).total
    evaluate_dataflow(LAYER, need, tiling=t)                       # fits a single block
    with pytest.raises(InvalidInputError, match="words of one block"):
        evaluate_dataflow(LAYER, need, processors=2, tiling=t)
