"""Which fast-memory size a single-processor bound needs to hold for a many-block GPU kernel.

A kernel runs many thread blocks, each with at most ``S_b`` words on chip (registers and
shared memory). Its global traffic is bounded by the single-processor bound at ``S_b``
when (proofs/test_multi_block.py):

1. every block holds at most ``S_b`` words on chip at any time;
2. blocks share no on-chip storage (no thread-block clusters with distributed shared
   memory); caches are not modelled: the traffic counted is every global load and store a
   block issues, a cache hit included;
3. blocks exchange values only through global memory, in a happens-before order (no
   races), so the blocks can be serialised.

Then running the blocks one after another, fast memory emptied between them, is one legal
red-blue pebble game with ``S_b + 2`` red pebbles and the same loads and stores: the DAG
has a vertex for an FMA's product and for the new partial sum, which the kernel
overwrites in place, so one update at a time needs two pebbles more than the kernel's
words (:data:`IN_PLACE_SLACK`; at 12288 words it moves a bound by about 0.02%).

Where 2 fails the bound must be taken at the fast memory the sharing pools: a cluster of
``g`` blocks sharing on-chip memory is one processor with ``g S_b`` words; to bound DRAM
traffic behind a shared cache of ``L`` words, add ``L`` and the on-chip words of every
block resident at once (:func:`bound_fast_memory`).

Examples
--------
>>> bound_fast_memory(12288)
12290
>>> bound_fast_memory(12288, cluster_blocks=2)
24578
>>> bound_fast_memory(12288, resident_blocks=80, shared_cache_words=1_572_864)
2555906
"""

from __future__ import annotations

from . import limits

__all__ = ["IN_PLACE_SLACK", "bound_fast_memory"]

#: Pebbles the DAG needs beyond a kernel's words for one in-place multiply-accumulate.
IN_PLACE_SLACK = 2

_CACHE_WORDS = limits.Limit(0, limits.FAST_MEMORY_WORDS.high, limits.FAST_MEMORY_WORDS.reason)


def bound_fast_memory(block_words: int, cluster_blocks: int = 1, resident_blocks: int = 1,
                      shared_cache_words: int = 0) -> int:
    """The S at which a single-processor bound holds for the kernel's traffic.

    Parameters
    ----------
    block_words : int
        On-chip words of one block (``S_b``).
    cluster_blocks : int
        Blocks that share on-chip memory (1: none, the serialisation argument applies).
    resident_blocks : int
        Blocks resident at once; only used with a shared cache (the cache and all their
        on-chip words are then one fast memory).
    shared_cache_words : int
        Words of a cache shared by the blocks whose hits are not counted as traffic (0 when
        every global access counts, as in the emulator and the dataflow formulas).

    Raises
    ------
    InvalidInputError
        For an argument that is no integer or is outside its limit, or a pooled S past
        :data:`~iobound.limits.FAST_MEMORY_WORDS` (named).

    Examples
    --------
    >>> bound_fast_memory(4096, cluster_blocks=4, resident_blocks=8)   # 4 x 4096 + 2
    16386
    >>> bound_fast_memory(12288, cluster_blocks=0)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: cluster_blocks=0 is below the minimum 1
    """
    s_b = limits.check_int("block_words", block_words, limits.FAST_MEMORY_WORDS)
    g = limits.check_int("cluster_blocks", cluster_blocks, limits.PROCESSORS)
    n = limits.check_int("resident_blocks", resident_blocks, limits.PROCESSORS)
    cache = limits.check_int("shared_cache_words", shared_cache_words, _CACHE_WORDS)
    pooled = g * s_b if cache == 0 else max(g, n) * s_b + cache
    return limits.check_int("the pooled fast memory S", pooled + IN_PLACE_SLACK,
                            limits.FAST_MEMORY_WORDS)
