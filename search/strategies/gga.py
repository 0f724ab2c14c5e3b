"""History-guided genetic algorithm (Mu et al. 2020, Alg. 1) as the ``gga`` strategy.

With usable history (records of the same parameter names, see
:func:`search.db.queries.history_for_space`), the first generation (``population``
configurations; a ``seed_share`` of them, the rest random) is the history's best by
the filtering metric (:mod:`.gga_history`: match score x relative throughput,
filtered). After that
every child comes from the measured population by one of

- guided crossover (probability ``crossover``): parents drawn with probability
  proportional to their rank; the child is the first parent with *one* gene
  taken from the second, and that gene is remembered;
- elite-gene mutation (probability ``elite_mutation`` of the rest, once there are
  elite genes): a parent with one gene replaced by a gene that made one of the
  ``elite`` best individuals;
- experience mutation: a parent with one gene set to a value drawn in proportion
  to its weight in the filtered history (the values that were fast before); the
  paper's "tile sizes that divide the dimension" rule is specific to TVM templates;
  with probability ``explore`` the value is drawn uniformly instead.

No random mutation. After each tell the population is the best individual plus
``population - 1`` drawn with probability proportional to performance (1/cost),
for diversity (the paper's selection). A child that is not a member of the space
or was asked before is redrawn; after ``max_tries`` per child, random unasked
configurations fill the batch.

Measured (leave one device out on the three recorded convolution spaces, history
= the other two GPUs, 6 seeds, mean optimum/best at budgets 25 and 50): on the
A4000 and A6000 gga is at 1.000 from the first generation; on the A100, whose
optimum lies in a region the other GPUs rank low, it stays at 0.675-0.679 (plain
``ga``: 0.666 / 0.756 over 10 seeds). ``explore = 0.3``, ``seed_share = 0.5`` and a
uniform crossover share of 0.5 changed the A100 by at most 0.005, so the defaults
stay the paper's (all seeds from history, no uniform draws).

Without usable history (none given, none in the space, or every record's match
score below ``min_match``) it is exactly the plain ``ga`` strategy (same indices
for the same seed), and ``stats()["history"]["used"]`` says so.

Examples
--------
>>> import numpy as np
>>> from search.grid_space import GridSpace
>>> s = GuidedGAStrategy(GridSpace({"a": list(range(8))}), rng=np.random.default_rng(0))
>>> len(set(s.ask(4))), s.stats()["history"]["used"]
(4, False)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..option_checks import check_count, check_number, check_records
from ..space import sample_excluding
from .ga import GAOptions, GeneticStrategy
from .gga_history import MIN_MATCH, OMEGA, filter_history

__all__ = ["GuidedGAOptions", "GuidedGAStrategy", "options_from_db"]


@dataclass(frozen=True)
class GuidedGAOptions(GAOptions):
    """The GA's options plus the history and the guided operators' settings.

    Attributes
    ----------
    history : tuple
        History records (:class:`search.db.Measurement`) of the same parameter names
        (any iterable of them; kept as a tuple).
    target_problem : JSON value or None
        The problem being tuned (a layer dict, a recorded problem size), for the
        match score; ``None`` scores every record 1.
    omega : float
        Exponent of the match score in the filtering metric (paper: 2).
    min_match : float
        Records with a lower match score are not used.
    elite : int
        How many of the best individuals give elite genes (paper: 8).
    crossover : float
        Probability that a child comes from crossover rather than mutation.
    elite_mutation : float
        Probability that a mutation uses an elite gene (when there is one).
    explore : float
        Probability that an experience mutation draws the new value uniformly from
        the space's values instead of by its history weight (our addition: see module doc).
    seed_share : float
        Share of the first generation (``population``) taken from the history's
        best; the rest is random (our addition: see module doc).

    >>> o = GuidedGAOptions(history=[])
    >>> o.history, o.omega, o.min_match, o.population
    ((), 2.0, 0.5, 16)
    >>> GuidedGAOptions(min_match=float("nan"))
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: min_match must be a finite number in [0, 1], got nan
    """

    history: tuple = ()
    target_problem: Any = None
    omega: float = OMEGA
    min_match: float = MIN_MATCH
    elite: int = 8
    crossover: float = 0.5
    elite_mutation: float = 0.5
    explore: float = 0.0
    seed_share: float = 1.0

    def __post_init__(self) -> None:
        from ..db.model import Measurement
        super().__post_init__()
        object.__setattr__(self, "history", check_records("history", self.history, Measurement))
        check_count("elite", self.elite, low=1)
        check_number("omega", self.omega, 0)
        for name in ("min_match", "crossover", "elite_mutation", "explore", "seed_share"):
            check_number(name, getattr(self, name), 0, 1)


class GuidedGAStrategy(GeneticStrategy):
    """Mu et al.'s guided GA seeded from tuning history (see module doc).

    >>> import numpy as np
    >>> from search import GridSpace, MeasureRecord
    >>> from search.db import Measurement, Workload
    >>> space, w = GridSpace({"a": list(range(8))}), Workload("k", [8], ("a",))
    >>> hist = [Measurement(w, "A100", "t", MeasureRecord.ok({"a": a}, time_ms=1.0 + abs(a - 5)))
    ...         for a in range(8)]  # a = 5 was the fastest
    >>> s = GuidedGAStrategy(space, GuidedGAOptions(history=hist, population=4),
    ...                      rng=np.random.default_rng(0))
    >>> s.ask(4), s.stats()["seeded"]  # the first generation: the history's best
    ([5, 4, 6, 3], 4)
    """

    name = "gga"
    Options = GuidedGAOptions

    def __init__(self, space, options=None, rng=None):
        super().__init__(space, options, rng)
        o = self.options
        self.filter = filter_history(space, o.history, o.target_problem, o.omega, o.min_match)
        self.used = bool(self.filter.seeds)
        self._seeds = [i for i, _ in self.filter.seeds]
        self._pop: list[int] = []
        self._genes: dict[int, tuple[str, Any]] = {}
        self._elite_genes: list[tuple[str, Any]] = []
        self.counts = {"seeded": 0, "crossover": 0, "elite_mutation": 0,
                       "experience_mutation": 0, "random": 0}

    # -- the guided operators -------------------------------------------------------------
    def _parent(self) -> int:
        """A population member, drawn with probability proportional to its rank."""
        k = len(self._pop)
        w = np.arange(k, 0, -1, dtype=float)  # _pop is best first
        return self._pop[int(self.rng.choice(k, p=w / w.sum()))]

    def _with_gene(self, base: dict, param: str, value: Any) -> int | None:
        if base[param] == value:
            return None
        return self.space.index({**base, param: value})

    def _crossover(self) -> tuple[int | None, tuple | None]:
        a, b = self.space.get(self._parent()), self.space.get(self._parent())
        differ = [p for p in self.space.params if a[p] != b[p]]
        if not differ:
            return None, None
        p = differ[int(self.rng.integers(len(differ)))]
        return self._with_gene(a, p, b[p]), (p, b[p])

    def _elite(self) -> tuple[int | None, tuple | None]:
        base = self.space.get(self._parent())
        p, v = self._elite_genes[int(self.rng.integers(len(self._elite_genes)))]
        return self._with_gene(base, p, v), (p, v)

    def _experience(self) -> tuple[int | None, tuple | None]:
        base = self.space.get(self._parent())
        p = self.space.params[int(self.rng.integers(len(self.space.params)))]
        pairs = [(v, w) for v, w in self.filter.value_weights[p] if v != base[p] and w > 0]
        if not pairs or self.rng.random() < self.options.explore:
            values = [v for v in self.space.values(p) if v != base[p]]
            if not values:
                return None, None
            pairs = [(v, 1.0) for v in values]
        w = np.array([w for _, w in pairs], dtype=float)
        v = pairs[int(self.rng.choice(len(pairs), p=w / w.sum()))][0]
        return self._with_gene(base, p, v), (p, v)

    def _guided_child(self) -> tuple[int | None, tuple | None, str]:
        if self.rng.random() < self.options.crossover:
            return (*self._crossover(), "crossover")
        if self._elite_genes and self.rng.random() < self.options.elite_mutation:
            return (*self._elite(), "elite_mutation")
        return (*self._experience(), "experience_mutation")

    def _fresh(self, i: int | None) -> bool:
        return i is not None and i not in self._asked and i not in self.seen

    # -- ask / tell -----------------------------------------------------------------------
    def ask(self, n: int) -> list[int]:
        if not self.used:
            return super().ask(n)
        n = min(n, len(self.space) - len(self._asked))
        out: list[int] = []
        n_seeds = round(self.options.population * self.options.seed_share)
        while self._seeds and self.counts["seeded"] < n_seeds and len(out) < n:
            i = self._seeds.pop(0)
            if self._fresh(i):
                self._take(i, out)
                self.counts["seeded"] += 1
        first = self.options.population - self.counts["seeded"] - self.counts["random"]
        if first > 0 and len(out) < n and (not self._seeds or self.counts["seeded"] >= n_seeds):
            self._fill(min(first, n - len(out)), out)  # the diverse rest of generation 0
        tries = 0
        while len(out) < n and len(self._pop) >= 2 and tries < self.options.max_tries * n:
            tries += 1
            i, gene, how = self._guided_child()
            if self._fresh(i):
                self._take(i, out)
                if gene is not None:
                    self._genes[i] = gene
                self.counts[how] += 1
        if len(out) < n:
            self._fill(n - len(out), out)
        return out

    def _fill(self, k: int, out: list[int]) -> None:
        before = len(out)
        for i in sample_excluding(self.space, k, self._asked | set(self.seen.cost), self.rng):
            self._take(i, out)
        self.counts["random"] += len(out) - before

    def tell(self, indices, records) -> None:
        super().tell(indices, records)
        if not self.used:
            return
        ranked = self.seen.best()
        self._elite_genes = [self._genes[i] for i in ranked[: self.options.elite]
                             if i in self._genes]
        if len(ranked) <= self.options.population:
            self._pop = ranked
            return
        cost = np.array([self.seen.cost[i] for i in ranked[1:]])
        # a time of 0 (a timer's resolution) is no reason to fail: the fastest weight, doubled
        positive = cost[cost > 0]
        perf = 1.0 / np.maximum(cost, (positive.min() if positive.size else 1.0) / 2)
        pick = self.rng.choice(len(cost), size=self.options.population - 1, replace=False,
                               p=perf / perf.sum())
        rest = sorted(int(k) for k in pick)  # keep best-first order for the rank weights
        self._pop = [ranked[0]] + [ranked[1 + k] for k in rest]

    def stats(self) -> dict:
        f = self.filter
        reason = "" if self.used else (
            "no history given" if not f.records else
            "no history record fits this space (other configurations, or match score below "
            f"{self.options.min_match})")
        return {"history": {"records": f.records, "usable": f.usable, "devices": list(f.devices),
                            "used": self.used, **({"fallback": "plain ga", "reason": reason}
                                                  if not self.used else {})},
                **self.counts}


def options_from_db(db, space, target_problem: Any = None, exclude_devices=(),
                    **options) -> GuidedGAOptions:
    """``gga`` options whose history is the database's records for ``space``.

    ``db`` is a :class:`search.db.TuningDB` or the path of one that exists (reading
    never creates a database); ``options`` are further :class:`GuidedGAOptions` fields
    (``batch_size``, ``population``...), checked as :func:`search.strategies.make_options`
    checks them, before the database is read (``history`` and ``target_problem`` come
    from the arguments, never from ``options``).

    >>> from search.grid_space import GridSpace
    >>> options_from_db(":memory:", GridSpace({"a": [1]}), bogus=1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: unknown option 'bogus' for strategy 'gga'; allowed: ...
    """
    from dataclasses import replace

    from iobound.errors import InvalidInputError

    from ..db import TuningDB
    from ..db.opening import open_database
    from ..db.queries import history_for_space
    from . import make_options
    if "history" in options:  # (target_problem is an argument: never in options)
        raise InvalidInputError("options_from_db: history is not an option here (it is the "
                                "database's records for the space)")
    checked = make_options("gga", options)
    if isinstance(db, TuningDB):
        hist = history_for_space(db, space, exclude_devices=exclude_devices)
    else:
        with open_database(db, "db", readonly=True) as handle:
            hist = history_for_space(handle, space, exclude_devices=exclude_devices)
    return replace(checked, history=tuple(hist), target_problem=target_problem)
