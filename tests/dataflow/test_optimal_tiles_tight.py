"""The tile searches at a fast memory that some tiling fills exactly, with any alpha.

The searches compute footprints in closed form over a grid; at a fast memory equal to the
footprint of an arbitrary tiling (the tightest case, where an off-by-one in the footprint
formula excludes or admits a tiling) the choice must still be the brute-force optimum over
all tilings whose :func:`direct_footprint` (with the layer's ``alpha``) or
:func:`winograd_footprint` fits.
"""

import itertools

from hypothesis import given, settings, strategies as st

from dataflow.direct import DirectTiling, direct_footprint, direct_io
from dataflow.optimal_tiles import optimal_direct_tiles, optimal_winograd_tiles
from dataflow.winograd import WinogradTiling, winograd_footprint, winograd_io
from layer_cases import small_square_layers


def layers(winograd: bool = False):
    """Layers up to 7x7 with up to 6 output channels: brute force stays quick."""
    return small_square_layers(winograd, hw_max=7, c_out_max=6)


@settings(deadline=None, max_examples=40)
@given(layers(), st.data())
def test_direct_search_at_a_filled_fast_memory_with_alpha(layer, data):
    """S = footprint of a random tiling (alpha in 1..c_in): the search finds the brute-force optimum."""
    alpha = data.draw(st.integers(1, layer.c_in))
    t0 = DirectTiling(data.draw(st.integers(1, layer.w_out)), data.draw(st.integers(1, layer.h_out)),
                      data.draw(st.integers(1, layer.c_out)), alpha)
    s = direct_footprint(layer, t0).total
    best = min((direct_io(layer, t).total, direct_footprint(layer, t).total)
               for t in (DirectTiling(x, y, z, alpha) for x, y, z in itertools.product(
                   range(1, layer.w_out + 1), range(1, layer.h_out + 1), range(1, layer.c_out + 1)))
               if direct_footprint(layer, t).total <= s)
    choice = optimal_direct_tiles(layer, s, alpha=alpha, divisors=False)
    assert choice.tiling.alpha == alpha and choice.footprint.total <= s
    assert (choice.io.total, choice.footprint.total) == best


@settings(deadline=None, max_examples=40)
@given(layers(winograd=True), st.integers(1, 3), st.data())
def test_winograd_search_at_a_filled_fast_memory(layer, e, data):
    """S = footprint of a random Winograd tiling: the search finds the brute-force optimum."""
    xs = range(e, layer.w_out + e, e)
    ys = range(e, layer.h_out + e, e)
    t0 = WinogradTiling(e, data.draw(st.sampled_from(xs)), data.draw(st.sampled_from(ys)),
                        data.draw(st.integers(1, layer.c_out)))
    s = winograd_footprint(layer, t0).total
    best = min((winograd_io(layer, t).total, winograd_footprint(layer, t).total)
               for t in (WinogradTiling(e, x, y, z) for x, y, z in itertools.product(
                   xs, ys, range(1, layer.c_out + 1)))
               if winograd_footprint(layer, t).total <= s)
    choice = optimal_winograd_tiles(layer, s, e, divisors=False)
    assert choice.footprint.total <= s
    assert (choice.io.total, choice.footprint.total) == best
