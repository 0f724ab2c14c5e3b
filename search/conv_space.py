"""The tile/thread search space of our kernels, pruned by the paper's Table 1.

:class:`ConvSpace` is a :class:`~search.space.Space` over ``kernels.config``
configurations of one layer on one device. The constraints (template and
hardware for the *unpruned* space, plus the Table 1 optimality pruning) are stated
in :mod:`search.table1`, where CP-SAT enumerates the tile combinations. The space
factorises as tiles x threads: for each tile the valid thread triples
``(tx, ty, tz)`` (divisors of the tile's three thread axes, at most
``max_threads_per_block``, at most :data:`~search.table1.MAX_REGS_PER_THREAD`
register words per thread, and the block's estimated registers within the SM's
register file) are listed with numpy and cached per tile shape. Sizes are exact
sums of those counts; nothing of the size of the space is ever built.

Indexing: tiles are sorted lexicographically by knob value, threads likewise
within a tile; index ``i`` lies in the tile whose prefix-sum interval holds it, so
:meth:`ConvSpace.get` and :meth:`ConvSpace.index` are ``O(log n)`` and
:meth:`~search.space.Space.sample` draws indices uniformly, hence configs
uniformly.

Neighbours (:meth:`ConvSpace.neighbours`): for every knob and both directions,
step the knob to the next value in its value list; if a Winograd ``e`` changed,
move ``x`` and ``y`` to the closest tile sizes allowed for the new ``e``; if the
tile changed, shrink each thread knob that no longer divides its tile axis to its
largest divisor not above the old value. The first candidate along the direction
that is in the space is a neighbour (so each knob contributes at most two). Without
repairs the relation is symmetric; with repairs it need not be.

Examples
--------
>>> import numpy as np
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=4, h_in=8, w_in=8, c_out=64, k_h=3, k_w=3)
>>> space = ConvSpace(layer, "v100")
>>> space.unpruned_size, space.pruned_size, len(space) == space.pruned_size
(6270, 4878, True)
>>> cfg = space.get(100)
>>> space.index(cfg)
100
>>> all(space.is_valid(space.get(j)) for j in space.neighbours(100))
True
"""

from __future__ import annotations

import bisect
import logging
import numbers
from typing import Any, Mapping, Sequence

import numpy as np

from iobound import limits
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from kernels.limits import GRID_YZ_LIMIT, block_fits, fits_register_file
from search.option_checks import check_flag, check_type
from search.space import Space, only_params
from search.table1 import Domain, divisors, domain_for, enumerate_tiles

__all__ = ["ConvSpace", "thread_table"]

log = logging.getLogger(__name__)

_THREADS = ("tx", "ty", "tz")
#: Indices whose neighbour lists :meth:`ConvSpace.neighbours` keeps (then starts afresh).
NEIGHBOUR_MEMO = 1 << 18


def _winograd_es(winograd_e) -> tuple[int, ...]:
    """``winograd_e`` as a tuple of ints, each within :data:`iobound.limits.WINOGRAD_E`
    (numpy integers taken; a float such as 2.5, a string or a lone int refused, never
    truncated)."""
    bad = InvalidInputError(f"winograd e must be integers >= 2, got {winograd_e!r:.60}")
    if isinstance(winograd_e, (str, bytes, Mapping)) or not hasattr(winograd_e, "__iter__"):
        raise bad  # a mapping: its keys would pass for the e's
    es = tuple(winograd_e)
    if any(isinstance(e, bool) or not isinstance(e, numbers.Integral) for e in es):
        raise bad
    # below 2 is refused by the domain (its message); above the limit here
    return tuple(int(e) if e < 2 else limits.check_int("winograd e", e, limits.WINOGRAD_E)
                 for e in es)


def thread_table(axes: tuple[int, int, int], reg_words: int, dom: Domain) -> np.ndarray:
    """All thread triples of one tile, sorted, as an ``(m, 3)`` int64 array.

    ``axes`` are the sizes the threads split (``x, y, z`` for direct, ``x/e, y/e, z``
    for Winograd); ``reg_words`` the register words of the whole block.

    Examples
    --------
    >>> from iobound.layer import ConvLayer
    >>> from iobound.devices import get_device
    >>> dom = domain_for(ConvLayer(n=1, c_in=1, h_in=4, w_in=4, c_out=2, k_h=1, k_w=1),
    ...                  get_device("v100"))
    >>> thread_table((2, 1, 2), 4, dom).tolist()
    [[1, 1, 1], [1, 1, 2], [2, 1, 1], [2, 1, 2]]
    """
    tx, ty, tz = (np.array(divisors(a), dtype=np.int64) for a in axes)
    grid = np.stack(np.meshgrid(tx, ty, tz, indexing="ij"), axis=-1).reshape(-1, 3)
    threads = grid.prod(axis=1)
    per_thread = -(-reg_words // threads)
    ok = ((threads <= dom.max_threads) & block_fits(grid) & (per_thread <= dom.max_regs)
          & fits_register_file(per_thread, threads, dom.algorithm, dom.regs_per_sm))
    return grid[ok]


class ConvSpace(Space):
    """Configurations of our direct or Winograd kernel for one layer and device.

    Parameters
    ----------
    layer : ConvLayer
        The convolution.
    device : Device or str
        A device preset or its name (``"v100"``).
    algorithm : {"direct", "winograd"}
        The kernel template.
    pruned : bool
        True (default): the space is the Table 1 pruned domain; False: the unpruned
        template-and-hardware space. Both sizes are always reported.
    winograd_e : tuple of int, optional
        The Winograd output tile sizes ``e`` to offer (Winograd only: given with ``direct``
        it is refused, not passed over); None: :data:`~iobound.algorithms.OFFERED_WINOGRAD_ES`.
    empty_ok : bool
        Keep a space with no configuration instead of refusing it (to report its sizes,
        as ``iobound domain`` does); a space to search is refused when empty.

    Attributes
    ----------
    unpruned_size, pruned_size : int
        Exact sizes of the two spaces.
    ratio : float
        ``pruned_size / unpruned_size``.

    Examples
    --------
    >>> layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
    >>> space = ConvSpace(layer, "v100", "winograd", winograd_e=(2,))
    >>> len(space), space.params[0], space.values("e"), space.ratio  # too small to prune
    (20, 'e', [2], 1.0)
    >>> ConvSpace(layer, "v100", "direct", winograd_e=(2,))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: winograd_e=(2,) is for the winograd algorithm; ...
    """

    def __init__(self, layer: ConvLayer, device, algorithm: str = "direct", *,
                 pruned: bool = True, winograd_e: tuple[int, ...] | None = None,
                 empty_ok: bool = False):
        from iobound.algorithms import algorithm_name, get_algorithm
        from iobound.device_spec import Device
        from iobound.devices import get_device
        check_type("layer", layer, ConvLayer)
        algorithm = algorithm_name(algorithm)  # an Algorithm object is kept by its name
        check_type("device", device, (Device, str))
        check_flag("pruned", pruned)
        check_flag("empty_ok", empty_ok)
        device = get_device(device) if isinstance(device, str) else device
        winograd_e = None if winograd_e is None else _winograd_es(winograd_e)
        if winograd_e is not None and "e" in get_algorithm(algorithm).tile_params:
            from iobound.winograd_transforms import check_winograd_tile  # before "none fits"
            for e in winograd_e:
                if e >= 2:  # below 2: the domain's own message
                    check_winograd_tile(e, max(layer.k_h, layer.k_w))
        self.layer, self.device, self.algorithm, self.pruned = layer, device, algorithm, pruned
        self.domain = dom = domain_for(layer, device, algorithm, winograd_e)
        sols = enumerate_tiles(dom)
        self._tables: dict[tuple, np.ndarray] = {}
        self._positions: dict[tuple, dict] = {}
        keys = [self._axes(tuple(int(v) for v in row)) for row in sols.rows]
        counts = np.array([len(self._table(k, int(r))) for k, r in zip(keys, sols.reg_words)],
                          dtype=np.int64)
        self.unpruned_size = int(counts.sum())
        self.pruned_size = int(counts[sols.table1].sum())
        # tiles with at least one thread block: CP-SAT's tile model is looser than the
        # per-thread rules (register file, threads splitting the tile's axes)
        self._tiles_with_threads = {"unpruned": int((counts > 0).sum()),
                                    "pruned": int(((counts > 0) & sols.table1).sum())}
        self.ratio = self.pruned_size / self.unpruned_size if self.unpruned_size else 0.0
        keep = (sols.table1 if pruned else np.ones(len(counts), bool)) & (counts > 0)
        self._rows = sols.rows[keep]
        self._regs = sols.reg_words[keep]
        self._counts = counts[keep]
        self._ends = np.cumsum(self._counts)
        self._row_index = {tuple(int(v) for v in r): k for k, r in enumerate(self._rows)}
        self.tile_solutions = sols
        self._nb_cache: dict[int, tuple[int, ...]] = {}
        self._row_positions: dict[int, dict] = {}  # tile row -> thread triple -> position
        if len(self) == 0 and not empty_ok:
            raise InvalidInputError(self.empty_reason())
        log.debug("ConvSpace %s %s: %d tiles, unpruned %d, pruned %d", layer.name, algorithm,
                  len(sols.rows), self.unpruned_size, self.pruned_size)

    def empty_reason(self) -> str:
        """Why this space is empty: Table 1's pruning, or the template and the device.

        >>> layer = ConvLayer(n=1, c_in=1, h_in=56, w_in=56, c_out=65536, k_h=56, k_w=56)
        >>> space = ConvSpace(layer, "v100", empty_ok=True)  # z >= 2 (grid z): pruned
        >>> print(space.empty_reason())  # doctest: +NORMALIZE_WHITESPACE
        no valid direct configuration for n1 1x56x56 -> 65536x1x1 k56x56 s1x1 p0x0 on V100-SXM2:
        Table 1's pruning leaves none of its 2 configurations (`iobound domain` shows both sizes)
        """
        head = (f"no valid {self.algorithm} configuration for {self.layer.short()} on "
                f"{self.device.name}")
        if self.pruned and self.unpruned_size:
            return (f"{head}: Table 1's pruning leaves none of its {self.unpruned_size:,} "
                    "configurations (`iobound domain` shows both sizes)")
        return (f"{head}: no tile and thread split fits the kernel template and the device's "
                "limits (threads, shared memory and registers per block; grid y and z at most "
                f"{GRID_YZ_LIMIT:,} blocks: h_out / y and c_out / z)")

    # -- tables ---------------------------------------------------------------
    def _axes(self, tile: tuple[int, ...]) -> tuple[int, int, int]:
        t = dict(zip(self.domain.tile_params, tile))
        e = t.get("e", 1)  # threads split Winograd's x/e, y/e tiles; direct's x, y (e = 1)
        return (t["x"] // e, t["y"] // e, t["z"])

    def _table(self, axes: tuple[int, int, int], reg_words: int) -> np.ndarray:
        key = (*axes, reg_words)
        table = self._tables.get(key)
        if table is None:
            table = self._tables[key] = thread_table(axes, reg_words, self.domain)
        return table

    def _row_table(self, k: int) -> np.ndarray:
        return self._table(self._axes(tuple(int(v) for v in self._rows[k])), int(self._regs[k]))

    # -- Space API ------------------------------------------------------------
    @property
    def params(self) -> tuple[str, ...]:
        return self.domain.params

    def __len__(self) -> int:
        return int(self._ends[-1]) if len(self._ends) else 0

    def get(self, i: int) -> dict:
        i = self.checked_index(i)
        k = int(np.searchsorted(self._ends, i, side="right"))
        j = i - int(self._ends[k] - self._counts[k])
        values = [int(v) for v in self._rows[k]] + [int(v) for v in self._row_table(k)[j]]
        return dict(zip(self.params, values))

    def index(self, config: Mapping[str, Any]) -> int | None:
        try:
            vals = [config[p] for p in self.params]
        except (KeyError, TypeError):
            return None
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in vals):
            return None
        if not only_params(config, self.params):  # another key: the measurers refuse it
            return None
        return self._lookup([int(v) for v in vals])

    def _lookup(self, vals: list[int]) -> int | None:
        """The index of the knob values ``vals`` (Python ints, ``params`` order), or None."""
        n_tile = len(self.domain.tile_params)
        k = self._row_index.get(tuple(vals[:n_tile]))
        if k is None:
            return None
        pos = self._row_positions.get(k)
        if pos is None:
            key = (*self._axes(tuple(vals[:n_tile])), int(self._regs[k]))
            pos = self._positions.get(key)
            if pos is None:
                pos = self._positions[key] = {tuple(int(v) for v in t): j
                                              for j, t in enumerate(self._row_table(k))}
            self._row_positions[k] = pos
        j = pos.get(tuple(vals[n_tile:]))
        if j is None:
            return None
        return int(self._ends[k] - self._counts[k]) + j

    def knobs(self, indices: Sequence[int]) -> np.ndarray:
        """The knob values of many indices at once: an ``(n, len(params))`` int64 matrix,
        row ``r`` equal to ``[get(indices[r])[p] for p in params]``.

        >>> space = ConvSpace(ConvLayer(1, 2, 6, 6, 2, 3, 3, padding=1), "v100")
        >>> k = space.knobs([0, 5])
        >>> k.shape, k[1].tolist() == list(space.get(5).values())
        ((2, 7), True)
        """
        idx = self.checked_indices(indices)  # 2.7 or "2" is no index (not truncated to 2)
        out = np.empty((len(idx), len(self.params)), dtype=np.int64)
        if len(idx) == 0:
            return out
        k = np.searchsorted(self._ends, idx, side="right")
        j = idx - (self._ends[k] - self._counts[k])
        n_tile = len(self.domain.tile_params)
        out[:, :n_tile] = self._rows[k]
        order = np.argsort(k, kind="stable")
        bounds = np.flatnonzero(np.diff(k[order])) + 1
        for group in np.split(order, bounds):
            out[group, n_tile:] = self._row_table(int(k[group[0]]))[j[group]]
        return out

    def values(self, param: str) -> list:
        """Distinct values ``param`` takes in this space (sorted)."""
        self.param_position(param)
        if param in self.domain.tile_params:
            col = self.domain.tile_params.index(param)
            return sorted({int(v) for v in self._rows[:, col]})
        col = _THREADS.index(param)
        return sorted({int(v) for k in range(len(self._rows)) for v in self._row_table(k)[:, col]})

    def _repair(self, cfg: dict, old: dict) -> dict:
        """Make tile and thread knobs consistent again after one knob moved."""
        dom = self.domain
        if "e" in cfg and cfg["e"] != old["e"]:  # Winograd: e moved, x and y must follow
            xs, ys = dom.tile_pairs[cfg["e"]]
            cfg["x"] = min(xs, key=lambda v: (abs(v - old["x"]), v))
            cfg["y"] = min(ys, key=lambda v: (abs(v - old["y"]), v))
        for t, axis in zip(_THREADS, self._axes(tuple(cfg[p] for p in dom.tile_params))):
            if axis % cfg[t]:
                cfg[t] = max(d for d in divisors(axis) if d <= cfg[t])
        return cfg

    def neighbours(self, i: int) -> list[int]:
        """Indices one knob step away (see the module doc for the repair rule).

        Memoised per index (walkers and annealing chains revisit configurations);
        the memo is dropped when it holds :data:`NEIGHBOUR_MEMO` indices.

        >>> space = ConvSpace(ConvLayer(1, 2, 6, 6, 2, 3, 3, padding=1), "v100")
        >>> c = space.get(5)  # the knobs each neighbour changes (z's repairs tz)
        >>> [[p for p in c if space.get(j)[p] != c[p]] for j in space.neighbours(5)]
        [['x'], ['y'], ['z', 'tz'], ['alpha'], ['tz']]
        """
        i = self.checked_index(i)  # int(i) took 2.7 as 2 and "2" as 2
        got = self._nb_cache.get(i)
        if got is None:
            got = self._neighbours(i)
            if len(self._nb_cache) >= NEIGHBOUR_MEMO:
                self._nb_cache.clear()
            self._nb_cache[i] = got
        return list(got)

    def _neighbours(self, i: int) -> tuple[int, ...]:
        cfg = self.get(i)
        params = self.params
        out: list[int] = []
        for p in params:
            vals = self.domain.values[p]
            pos = bisect.bisect_left(vals, cfg[p])
            for step in (-1, 1):
                q = pos + step
                while 0 <= q < len(vals):
                    cand = self._repair({**cfg, p: vals[q]}, cfg)
                    j = self._lookup([cand[k] for k in params])
                    if j is not None and j != i:
                        if j not in out:
                            out.append(j)
                        break
                    q += step
        return tuple(out)

    def feature_names(self) -> list[str]:
        from kernels.analytic import FEATURE_NAMES
        return list(self.params) + list(FEATURE_NAMES)

    def features(self, indices: Sequence[int]) -> np.ndarray:
        """Knob values followed by the analytic features of :mod:`kernels.analytic`.

        >>> space = ConvSpace(ConvLayer(1, 2, 6, 6, 2, 3, 3, padding=1), "v100")
        >>> row = dict(zip(space.feature_names(), space.features([5])[0].tolist()))
        >>> list(row)[6:8], row["tz"], row["threads"], row["blocks"]  # knobs, then features
        (['tz', 'io_words'], 2.0, 2.0, 36.0)
        """
        from kernels.analytic import analytic_features
        knobs = self.knobs(indices)
        feats = analytic_features(self.layer, self.device, self.algorithm, knobs)
        return np.hstack([knobs.astype(float), feats])

    def describe(self) -> dict:
        dom = self.domain
        return {
            "kind": "ConvSpace", "layer": self.layer.to_dict(), "device": self.device.name,
            "algorithm": self.algorithm, "pruned": self.pruned, "size": len(self),
            "unpruned_size": self.unpruned_size, "pruned_size": self.pruned_size,
            "ratio": self.ratio, "params": list(self.params),
            "values": {p: self.values(p) for p in self.params},
            "reuse_R": dom.reuse, "S_b_words": dom.s_b_words,
            "tile_combinations": dict(self._tiles_with_threads),
        }
