"""The multi-block argument: a kernel's global traffic is >= the single-processor bound at S_b.

Claim. Let a kernel run blocks B_1..B_m and let

1. every block hold at most S_b words on chip (registers + shared memory) at any time;
2. blocks share no on-chip storage (no clusters with distributed shared memory), and
   caches be not modelled: the traffic counted is every global load and store a block
   issues (a cache hit is still a load);
3. blocks exchange values only through global memory, ordered by happens-before (a
   value a block loads from another block was stored before; no races).

Then Q_kernel >= Q_opt(S_b + 2) >= every bound iobound reports at S = S_b + 2.

Proof. Order the blocks by a linear extension of happens-before (independent blocks, as
in our convolution kernels, in any order). Play block after block on the DAG with S_b + 2
red pebbles: a block's global load of a value is a load move (the value is blue: it is
an input, or a block before it stored it, by 3), its stores are store moves, its
arithmetic compute moves (recomputation allowed: two blocks may compute one value), and
its on-chip values red pebbles (<= S_b by 1), plus two for the one multiply-accumulate in
flight (the DAG's product and new partial sum; the kernel updates in place). Between blocks the red pebbles are removed
(free). By 2 no block reads another's on-chip value, so every move is legal; outputs end
blue because the kernel stores them. The game has exactly the kernel's loads and stores.

Where 2 fails (test_pooled_memory_breaks_the_per_block_bound): blocks that pool on-chip
memory, or traffic measured behind a shared cache, are a game with the pooled number of
words, and the bound must be taken there (`iobound.multi_block.bound_fast_memory`).
Checked below: the serialised game of tiled dataflows (`play(..., flush_at=block_starts)`)
is legal with S_b pebbles, empties fast memory at each block start, moves exactly the
dataflow's exact I/O (the kernel's count; with padding, where the kernel also
loads weights a block meets only on padding, at most that) and never less than a bound at S_b.
"""

import numpy as np
from hypothesis import given, strategies as st

from dataflow.dag_direct import direct_conv_dag
from dataflow.direct import DirectTiling, direct_footprint, direct_io
from dataflow.pebble import play, validate_moves
from dataflow.schedules import tiled_schedule
from iobound.layer import ConvLayer
from iobound.multi_block import bound_fast_memory
from iobound.report import bound_report


@st.composite
def tiled_layers(draw):
    """A small direct layer and a tiling of it."""
    k = draw(st.integers(1, 3))
    layer = ConvLayer(n=1, c_in=draw(st.integers(1, 6)), h_in=k - 1 + draw(st.integers(1, 4)),
                      w_in=k - 1 + draw(st.integers(1, 4)), c_out=draw(st.integers(1, 4)),
                      k_h=k, k_w=k, padding=draw(st.integers(0, 1)) if k > 1 else 0)  # no all-padding outputs
    tiling = DirectTiling(x=draw(st.integers(1, layer.w_out)), y=draw(st.integers(1, layer.h_out)),
                          z=draw(st.integers(1, layer.c_out)), alpha=1)
    return layer, tiling


@given(tiled_layers(), st.integers(0, 8))
def test_serialised_blocks_are_one_game(case, extra):
    """Blocks played one after another with S_b pebbles: legal, empty at every block start,
    the dataflow's (kernel's) traffic, and >= every bound at S_b."""
    layer, tiling = case
    dag = direct_conv_dag(layer)
    sched = tiled_schedule(dag, layer, tiling)
    s_b = bound_fast_memory(direct_footprint(layer, tiling).total + extra)
    res = play(dag, sched.order, s_b, "belady", flush_at=sched.block_starts, record_moves=True)
    assert validate_moves(dag, res.moves, s_b).total == res.total
    red, computes, starts = set(), 0, set(sched.block_starts)
    for op, v in res.moves:                      # fast memory is empty when a block begins
        if op == "compute":
            if computes in starts:               # only the operands it just loaded
                assert red <= set(dag.predecessors(v))
            computes += 1
        red.add(v) if op in ("load", "compute") else red.discard(v) if op == "evict" else None
    # the kernel's own game also loads the weights a block only meets on padding (legal,
    # useless loads); the player skips them, so equality holds without padding
    kernel = direct_io(layer, tiling).total
    assert res.total == kernel if layer.padding == (0, 0) else res.total <= kernel
    rep = bound_report(layer, s_b)
    assert all(res.total >= b.value - 1e-9 for b in rep.bounds.values())


def test_pooled_memory_breaks_the_per_block_bound():
    """If blocks of S_b = 12 words pool their memory (or a 418-word cache hides traffic), a
    game moves 414 words, below the bound (656, the shared-boundary chain bound) at S_b + 2:
    assumption 2 is needed. The bound at the pooled size (bound_fast_memory) stays valid."""
    layer = ConvLayer(n=1, c_in=24, h_in=3, w_in=3, c_out=6, k_h=1, k_w=1)
    dag = direct_conv_dag(layer)
    order = tiled_schedule(dag, layer, DirectTiling(x=3, y=3, z=6)).order
    pooled = bound_fast_memory(12, resident_blocks=1, shared_cache_words=418)
    moved = play(dag, order, pooled, "belady").total
    per_block = bound_report(layer, bound_fast_memory(12))
    assert moved == 414 < per_block.best
    assert round(per_block.best) == 656 and per_block.best_method == "x_partition_chain"
    assert moved >= bound_report(layer, pooled).best


def test_bound_fast_memory_rejects_bad_input():
    """Counts must be integers >= 1 (cache >= 0); the message names the argument."""
    import pytest

    for kwargs, name in (({"block_words": 0}, "block_words"),
                         ({"block_words": 8, "cluster_blocks": 1.5}, "cluster_blocks"),
                         ({"block_words": 8, "shared_cache_words": -1}, "shared_cache_words")):
        with pytest.raises(ValueError, match=name):
            bound_fast_memory(**kwargs)
    assert bound_fast_memory(10, cluster_blocks=3) == 32 and np.isfinite(bound_fast_memory(1))
