"""The dataflow's exact I/O against played pebble games and against the best lower bound.

Played games (dataflow.pebble.play, Belady eviction) of the tiled schedule
(dataflow.schedules.tiled_schedule) on the built DAG. Which S, and which relation:

* ``flush_at=block_starts`` (blocks share nothing on chip) and S = footprint + 2 (the two
  extra words hold the current product and the new partial sum while the old one is still
  red): every value a block still needs fits, so Belady only ever evicts values whose next
  use lies in a later block (clean sources) and each block loads each value it uses exactly
  once. The played count then EQUALS the formula whenever every weight of a block meets an
  in-bounds input in that block -- always true without padding. With padding the DAG omits
  products with padding, so a border block may not need some weight taps, and an output
  whose whole window is padding is a constant, not a vertex (a kernel stores its zero):
  played equals the formula minus those words (counted per block by brute force here),
  hence played <= formula.
* Without flushes and with S large, Belady keeps data across blocks: played <= formula.
* Winograd (S = footprint + the block's transformed tiles): played EQUALS the formula
  without padding when e divides the output; with padding or a partial Winograd tile the
  DAG drops entries that are constant zeros (and a block computes only the transforms its
  own outputs need), so played <= formula.

Paper's claim (Sec. 5.2): at the optimality condition x y = R z, Eq. 13 "reaches" the lower
bound of Thm 4.9; their leading terms differ by the factor 8 sqrt(2) (2 MACs/sqrt(R S) vs
MACs/(4 sqrt(2 R S))). The paper's count takes the staged input tile as x' y' = mu^2 x y; the
exact count stages (y-1) mu + extent rows by (x-1) mu + extent columns, so the exact I/O may
exceed the paper's by that halo factor h = x' y' / (mu^2 x y) (>= 1 for stride 1).
"""

import math

from hypothesis import assume, given, strategies as st

from dataflow.dag_direct import direct_conv_dag
from dataflow.dag_winograd import winograd_conv_dag
from dataflow.direct import DirectTiling, direct_footprint, direct_io, direct_optimality_gap
from dataflow.pebble import play
from dataflow.schedules import tiled_schedule
from dataflow.winograd import WinogradTiling, winograd_footprint, winograd_io
from iobound.layer import ConvLayer
from iobound.report import best_lower_bound

PAPER_FACTOR = 8 * math.sqrt(2)


@st.composite
def stride1_layers_and_condition_tiles(draw):
    """A stride-1 layer (the paper's R is exact there) and a tiling with x y = R z within 25 %."""
    k = draw(st.sampled_from([1, 2, 3, 5]))
    p = draw(st.integers(0, k // 2))
    h = draw(st.integers(max(k - 2 * p, 1), 20))
    w = draw(st.integers(max(k - 2 * p, 1), 20))
    layer = ConvLayer(n=draw(st.integers(1, 2)), c_in=draw(st.integers(1, 32)), h_in=h, w_in=w,
                      c_out=draw(st.integers(1, 32)), k_h=k, k_w=k, padding=(p, p))
    x = draw(st.integers(1, layer.w_out))
    y = draw(st.integers(1, layer.h_out))
    z = min(layer.c_out, max(1, round(x * y / layer.reuse_max)))
    return layer, DirectTiling(x, y, z)


@given(stride1_layers_and_condition_tiles())
def test_near_condition_within_paper_factor_times_halo(case):
    """At x y ~ R z with S = the block's footprint, exact I/O <= 8 sqrt(2) * halo * best bound."""
    layer, tiling = case
    assume(abs(direct_optimality_gap(layer, tiling)) <= 0.25)   # z clipped by c_out: not near it
    s = direct_footprint(layer, tiling).total
    halo = ((tiling.y - 1) + layer.extent_h) * ((tiling.x - 1) + layer.extent_w) / (tiling.x * tiling.y)
    bound = best_lower_bound(layer, s, "direct")
    assert direct_io(layer, tiling).total <= PAPER_FACTOR * halo * bound


@st.composite
def tiny_layers_and_tilings(draw, padding=True):
    k_h, k_w = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    s = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    d = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    p = (draw(st.integers(0, 1)), draw(st.integers(0, 1))) if padding else (0, 0)
    ext_h, ext_w = (k_h - 1) * d[0] + 1, (k_w - 1) * d[1] + 1
    layer = ConvLayer(n=draw(st.integers(1, 2)), c_in=draw(st.integers(1, 3)),
                      h_in=draw(st.integers(max(ext_h - 2 * p[0], 1), 7)),
                      w_in=draw(st.integers(max(ext_w - 2 * p[1], 1), 7)),
                      c_out=draw(st.integers(1, 3)), k_h=k_h, k_w=k_w, stride=s, padding=p, dilation=d)
    tiling = DirectTiling(draw(st.integers(1, layer.w_out)), draw(st.integers(1, layer.h_out)),
                          draw(st.integers(1, layer.c_out)), draw(st.integers(1, layer.c_in)))
    return layer, tiling


def padding_only_words(layer, t):
    """Words the formula moves but the DAG has no vertex for: per block, weight taps that meet
    only padding, and outputs whose whole window lies in the padding (constant zeros)."""
    (mu_h, mu_w), (d_h, d_w), (p_h, p_w) = layer.stride, layer.dilation, layer.padding

    def row_in(oy, i):
        return 0 <= oy * mu_h + i * d_h - p_h < layer.h_in

    def col_in(ox, j):
        return 0 <= ox * mu_w + j * d_w - p_w < layer.w_in

    words = 0
    for oy0 in range(0, layer.h_out, t.y):
        for ox0 in range(0, layer.w_out, t.x):
            rows = range(oy0, min(oy0 + t.y, layer.h_out))
            cols = range(ox0, min(ox0 + t.x, layer.w_out))
            dead_taps = sum(1 for i in range(layer.k_h) for j in range(layer.k_w)
                            if not any(row_in(oy, i) for oy in rows)
                            or not any(col_in(ox, j) for ox in cols))
            zero_outputs = sum(1 for oy in rows for ox in cols
                               if not any(row_in(oy, i) for i in range(layer.k_h))
                               or not any(col_in(ox, j) for j in range(layer.k_w)))
            words += (dead_taps * layer.c_in + zero_outputs) * layer.c_out
    return layer.n * words


@given(tiny_layers_and_tilings(padding=False))
def test_played_equals_formula_without_padding(case):
    """No padding, flushed blocks, S = footprint + 2: Belady moves exactly direct_io words."""
    layer, t = case
    dag = direct_conv_dag(layer)
    sched = tiled_schedule(dag, layer, t)
    s = direct_footprint(layer, t).total + 2
    played = play(dag, sched, S=s, flush_at=sched.block_starts)
    assert played.total == direct_io(layer, t).total


@given(tiny_layers_and_tilings())
def test_played_equals_formula_minus_padding_only_words(case):
    """With padding, played = formula - (padding-only weight taps and all-padding outputs)."""
    layer, t = case
    dag = direct_conv_dag(layer)
    sched = tiled_schedule(dag, layer, t)
    played = play(dag, sched, S=direct_footprint(layer, t).total + 2, flush_at=sched.block_starts)
    formula = direct_io(layer, t).total
    assert played.total == formula - padding_only_words(layer, t) <= formula


@given(tiny_layers_and_tilings())
def test_belady_across_blocks_never_exceeds_formula(case):
    """Without flushes and with S = 4 * footprint, Belady may reuse across blocks: played <= formula."""
    layer, t = case
    dag = direct_conv_dag(layer)
    sched = tiled_schedule(dag, layer, t)
    played = play(dag, sched, S=4 * direct_footprint(layer, t).total + 2)
    assert played.total <= direct_io(layer, t).total


@st.composite
def tiny_winograd_cases(draw):
    r = draw(st.integers(1, 3))
    e = draw(st.integers(1, 3))
    tw, th = draw(st.integers(1, 2)), draw(st.integers(1, 2))   # Winograd tiles per axis
    x, y = e * draw(st.integers(1, tw)), e * draw(st.integers(1, th))
    layer = ConvLayer(n=1, c_in=draw(st.integers(1, 2)), h_in=th * e + r - 1, w_in=tw * e + r - 1,
                      c_out=draw(st.integers(1, 2)), k_h=r, k_w=r)
    return layer, WinogradTiling(e, x, y, draw(st.integers(1, layer.c_out)))


def _play_winograd_blocks(layer, t):
    """The Winograd DAG and its tiled schedule played with a flush at every block start."""
    dag = winograd_conv_dag(layer, t.e)
    sched = tiled_schedule(dag, layer, t)
    n = t.e + layer.k_h - 1
    s = winograd_footprint(layer, t).total + (t.z + t.tiles_per_block) * n * n * 2 + 4
    return dag, play(dag, sched, S=s, flush_at=sched.block_starts)


@given(tiny_winograd_cases())
def test_winograd_played_equals_formula(case):
    """Winograd, no padding, e | w_out: flushed blocks with room for the block move winograd_io words.

    The played schedule also holds transformed kernels and inputs, which the footprint (raw
    staging + temporaries) leaves out, so S is the footprint plus the block's transforms.
    """
    layer, t = case
    dag, played = _play_winograd_blocks(layer, t)
    assert played.total == winograd_io(layer, t).total


@st.composite
def tiny_winograd_cases_with_borders(draw):
    """Winograd with padding, partial Winograd tiles and tiles overhanging the output."""
    r, e = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    p = draw(st.integers(0, r - 1))
    layer = ConvLayer(n=draw(st.integers(1, 2)), c_in=draw(st.integers(1, 2)),
                      h_in=draw(st.integers(max(1, r - 2 * p), 7)),
                      w_in=draw(st.integers(max(1, r - 2 * p), 7)),
                      c_out=draw(st.integers(1, 2)), k_h=r, k_w=r, padding=(p, p))
    x = e * draw(st.integers(1, -(-layer.w_out // e)))
    y = e * draw(st.integers(1, -(-layer.h_out // e)))
    return layer, WinogradTiling(e, x, y, draw(st.integers(1, layer.c_out)))


@given(tiny_winograd_cases_with_borders())
def test_winograd_played_never_exceeds_formula_with_borders(case):
    """Winograd with padding and partial tiles: flushed blocks move at most winograd_io words.

    The formula loads every in-bounds input a block's window covers and all of its raw
    weights; the played game loads only the sources of vertices the DAG keeps (no constant
    zeros), so it can only be smaller. It also stores every output exactly once.
    """
    layer, t = case
    dag, played = _play_winograd_blocks(layer, t)
    formula = winograd_io(layer, t)
    assert played.total <= formula.total
    assert played.stores == sum(1 for _, k in dag.nodes(data="kind") if k == "output")
