"""One model-based strategy: train a cost model, let a model optimizer propose the batch.

AutoTVM's ``ModelBasedTuner`` split: this strategy owns the bookkeeping (what was
asked, when to (re)train the XGBoost cost model, which share of a batch is
random); a :class:`~search.optimizers.ModelOptimizer` owns how the space is
searched for configurations the model likes. The registered strategies are this
class with two sets of defaults: ``explorer`` (random walks, retrained every
round; :mod:`.explorer`) and ``sa`` (simulated annealing on AutoTVM's plan
cadence; :mod:`.sa`).

Two cadences (``plan_size``):

- ``None``: every round, once ``init_random`` random configurations were asked,
  the model is refitted on everything told and the optimizer proposes the batch;
  ``Binomial(n, epsilon)`` of the ``n`` configurations are random instead (none
  of a batch of one: a sequential round is the model's pick). Beyond
  ``refit_all_until`` measurements (and hints) learnt from, a round refits only
  once they have grown by a ``refit_growth`` share since the last fit, or the
  space's features changed (:mod:`.model_refit`); the rounds between propose from
  the last model.
- ``k``: AutoTVM's plan: whenever another ``k`` measurements have been told the
  model is refitted and the optimizer proposes a plan of ``k`` configurations, of
  which the last ``epsilon`` share is left to random picks; rounds take the
  plan's next unasked configurations.

Before the first model (fewer than ``min_ok`` successful measurements, or not
yet due) configurations are random.

The endgame (``endgame``, every-round cadence only): once the run's budget (the
tuner's :meth:`~.base.Strategy.set_horizon`) has at most an ``endgame`` share left,
every batch is the unmeasured one-change neighbours of the best measured
configurations of distinct regions (each at least ``endgame_spread`` changes from
the better ones taken, :func:`.stall.spread_elites`), the best one's first
(:func:`.stall.sweep_candidates`): a local search that finishes the neighbourhoods
the walks left open, instead of trusting the model's ranking of the whole space to
the end, and climbs the best basin other than the one the walks settled in. Without
a horizon there is no endgame.

With ``stall`` options (:mod:`.stall`; every-round cadence only; off by default),
a share of each batch that grows with the rounds without improvement is taken
from another candidate source (the neighbourhoods of the best measured
configurations, their mutations and crossovers, or untouched regions); the
optimizer proposes the rest.

Hints (:meth:`ModelBasedStrategy.hint`): measurements the strategy did not ask for
(another arm's, e.g. a history round's, :mod:`search.transfer.guided`) that its cost
model learns from only where they are no better than the strategy's own best: they
say where not to look, never where to look, so a region another arm found good draws
the walks only once the strategy's own measurements say so. They are not its
observations: no walk, elite or stall count starts from them.

Examples
--------
>>> import numpy as np
>>> from search.grid_space import GridSpace
>>> s = ModelBasedStrategy(GridSpace({"a": list(range(30))}), rng=np.random.default_rng(0))
>>> len(set(s.ask(8)))
8
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields
from typing import Mapping

from iobound.errors import InvalidInputError

from ..cost_model import CostModel, XGBOptions
from ..optimizers import AnnealOptions, WalkOptions, make_optimizer
from ..option_checks import check_count, check_number, check_type
from ..space import Space, sample_excluding
from .base import Observations, Strategy, StrategyOptions, check_rng, check_told
from .model_refit import ModelRefit, train_model
from .stall import (StallOptions, StallTracker, spread_elites, stall_candidates,
                    sweep_candidates)

__all__ = ["ModelBasedOptions", "ModelBasedStrategy", "train_model", "XGBOptions"]


@dataclass(frozen=True)
class ModelBasedOptions(StrategyOptions):
    """Cadence, random share, cost model and model optimizer (see module doc).

    Attributes
    ----------
    init_random : int
        Configurations asked at random before the first model.
    epsilon : float
        Random share of each batch (``plan_size=None``) or of each plan.
    min_ok : int
        Successful measurements needed to train a model.
    plan_size : int or None
        ``None``: retrain every round; ``k``: retrain after every ``k`` measurements
        and plan ``k`` configurations ahead (AutoTVM).
    model : XGBOptions
        The cost model's options.
    optimizer : WalkOptions or AnnealOptions
        The model optimizer, chosen by the options' type.
    stall : StallOptions, dict or None
        Exploration when rounds stop improving (``None``, the default: none; a
        dict is turned into :class:`StallOptions`); needs ``plan_size=None``.
    endgame : float
        Share of the run's budget, at its end, spent on the local search of the
        module doc (0: none; used with ``plan_size=None`` only).
    endgame_elite : int
        Best measured configurations whose neighbourhoods the endgame completes.
    endgame_spread : int
        Least Hamming distance between two of them (1: the best ``endgame_elite``,
        however close; 2: never one a single change from a better one).
    refit_all_until : int
        Every-round cadence: while the last fit learnt from at most this many, every
        round refits (module doc).
    refit_growth : float
        Beyond it, the share by which the training set must have grown since the last
        fit for a round to refit (0: every round); rounds between propose from the
        last model.

    >>> opts = ModelBasedOptions(stall={"source": "far"})
    >>> type(opts.stall).__name__, opts.stall.source, type(opts.optimizer).__name__
    ('StallOptions', 'far', 'WalkOptions')
    >>> ModelBasedOptions(stall={"source": "far"}, plan_size=8)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: stall exploration needs plan_size=None (a batch per round)
    """

    batch_size: int = 4
    init_random: int = 4
    epsilon: float = 0.1
    min_ok: int = 2
    plan_size: int | None = None
    model: XGBOptions = field(default_factory=XGBOptions)
    optimizer: WalkOptions | AnnealOptions = field(default_factory=WalkOptions)
    stall: StallOptions | None = None
    endgame: float = 0.15
    endgame_elite: int = 8
    endgame_spread: int = 2
    refit_all_until: int = 256
    refit_growth: float = 1 / 16

    def __post_init__(self) -> None:
        super().__post_init__()
        check_number("epsilon", self.epsilon, 0, 1)
        check_count("init_random", self.init_random)
        check_count("min_ok", self.min_ok, low=1)
        check_number("endgame", self.endgame, 0, 1, high_open=True)
        check_count("endgame_elite", self.endgame_elite, low=1)
        check_count("endgame_spread", self.endgame_spread, low=1)
        check_count("refit_all_until", self.refit_all_until)
        check_number("refit_growth", self.refit_growth, 0, 1)
        # here, not when the first model is fitted, after measuring (TuneSettings builds these)
        check_type("model", self.model, XGBOptions)
        if self.plan_size is not None:
            check_count("plan_size", self.plan_size, low=1)
        if isinstance(self.stall, Mapping):  # from a plain dict of options (CLI, JSON)
            try:
                object.__setattr__(self, "stall", StallOptions(**self.stall))
            except TypeError as exc:
                raise InvalidInputError(f"bad stall options {dict(self.stall)}; allowed: "
                                 f"{', '.join(f.name for f in fields(StallOptions))}") from exc
        if self.stall is not None and not isinstance(self.stall, StallOptions):
            raise InvalidInputError(f"stall must be a mapping of stall options, a StallOptions "
                                    f"or None, got {self.stall!r:.60}")
        if self.stall is not None and self.plan_size is not None:
            raise InvalidInputError("stall exploration needs plan_size=None (a batch per round)")
        make_optimizer(self.optimizer)  # rejects options no optimizer takes


class ModelBasedStrategy(Strategy):
    """A cost model plus a model optimizer behind the ask/tell interface (see module doc).

    >>> import numpy as np
    >>> from search.grid_space import GridSpace
    >>> from search.measure.base import MeasureRecord
    >>> s = ModelBasedStrategy(GridSpace({"a": list(range(20))}), ModelBasedOptions(
    ...     init_random=4, model=XGBOptions(n_estimators=10)), rng=np.random.default_rng(0))
    >>> first = s.ask(4)
    >>> s.tell(first, [MeasureRecord.ok({"a": i}, time_ms=1.0 + i) for i in first])
    >>> len(set(s.ask(4)) - set(first)), s.stats()["fits"]  # the next batch comes from a model
    (4, 1)
    """

    name = "model_based"
    Options = ModelBasedOptions

    def __init__(self, space, options=None, rng=None):
        super().__init__(space, options, rng)
        check_rng(rng)
        self.optimizer = make_optimizer(self.options.optimizer)
        self._asked: set[int] = set()
        self._plan: list[int] = []
        self._trained_at = 0
        self.refit = ModelRefit(int(rng.integers(2**31 - 1)))
        self.explore_seconds = 0.0
        self.stalled = StallTracker()
        self.explored = 0  # configurations taken from the stall source
        self.swept = 0  # configurations taken by the endgame
        self.hints = Observations()

    def learn_on(self, space: Space) -> None:
        """Search and fit the cost model on ``space`` from now on: the same configurations
        under the same indices, with more feature columns (the history's rank of each
        configuration, :class:`search.transfer.prior_feature.PriorFeatureSpace`)."""
        check_type("space", space, Space)
        if len(space) != len(self.space) or space.params != self.space.params:
            raise InvalidInputError("learn_on needs the same configurations under the same indices")
        self.space = space

    def hint(self, indices, records) -> None:
        """Measurements this strategy did not ask for, for its model only (module doc);
        checked as :meth:`tell` checks what it is told (:func:`.base.check_told`).

        >>> import numpy as np
        >>> from search.grid_space import GridSpace
        >>> from search.measure.base import MeasureRecord
        >>> s = ModelBasedStrategy(GridSpace({"a": list(range(9))}), rng=np.random.default_rng(0))
        >>> s.hint([4, 5], [MeasureRecord.ok({"a": a}, time_ms=float(a)) for a in (4, 5)])
        >>> s.tell([0], [MeasureRecord.ok({"a": 0}, time_ms=4.5)])
        >>> sorted(s.training_set().cost), len(s.seen)
        ([0, 5], 1)
        """
        self.hints.add(*check_told(self.space, indices, records, what="hint"))

    def training_set(self) -> Observations:
        """What the cost model fits: the strategy's observations, and the hints no
        better than its best (none before it has a finite cost of its own)."""
        if not self.hints:
            return self.seen
        own = [c for c in self.seen.cost.values() if c != float("inf")]
        out = Observations()
        if own:
            floor = min(own)
            out.cost = {i: c for i, c in self.hints.cost.items() if c >= floor}
        out.cost.update(self.seen.cost)
        return out

    def _due(self) -> bool:
        """Whether this ask retrains the model (see the module doc's cadences)."""
        o = self.options
        if len(self._asked) < o.init_random:
            return False
        if o.plan_size is None:
            return True
        if len(self.seen) < o.plan_size * (self._trained_at + 1):
            return False
        self._trained_at = len(self.seen) // o.plan_size
        return True

    def _train(self) -> CostModel | None:
        """The model this ask proposes from (:class:`.model_refit.ModelRefit`)."""
        return self.refit.model(self.space, self.training_set(), self.options)

    def _in_endgame(self, n: int) -> bool:
        """Whether a batch of ``n`` reaches into the budget's last ``endgame`` share."""
        o = self.options
        return (o.endgame > 0 and o.plan_size is None and self.horizon is not None
                and len(self._asked) + n > (1.0 - o.endgame) * self.horizon)

    def _new_plan(self, model: CostModel, n: int) -> list[int]:
        """The endgame's sweep, or the optimizer's proposals then the stall source's (see
        the module doc)."""
        if self._in_endgame(n):
            o = self.options
            elite = spread_elites(self.space, self.seen.best(), o.endgame_elite, o.endgame_spread)
            plan = sweep_candidates(model, self.space, elite, n, self._asked)
            self.swept += len(plan)
            if len(plan) < n:  # the sweep ran short: the optimizer adds others, not the same
                plan += self._optimizer_plan(model, n - len(plan), self._asked | set(plan))
            return plan
        st = self.options.stall
        share = st.share(self.stalled.rounds) if st is not None else 0.0
        k = int(self.rng.binomial(n, share)) if share > 0 else 0
        plan = self._optimizer_plan(model, n - k) if n > k else []
        if k:
            extra = stall_candidates(st, model, self.space, self.seen.best(), k,
                                     self._asked | set(plan), self.rng)
            self.explored += len(extra)
            plan += extra
        return plan

    def _optimizer_plan(self, model: CostModel, n: int, exclude=None) -> list[int]:
        """The optimizer's proposals, the random share left out, none in ``exclude``
        (default: what was asked)."""
        o = self.options
        if o.plan_size is None:
            size = n - (int(self.rng.binomial(n, o.epsilon)) if n > 1 else 0)
        else:
            size = o.plan_size
        t0 = time.perf_counter()
        plan = self.optimizer.propose(model, self.space, size,
                                      self._asked if exclude is None else exclude, self.rng,
                                      best=self.seen.best())
        self.explore_seconds += time.perf_counter() - t0
        if o.plan_size is not None:  # AutoTVM: the plan's last epsilon share is random
            plan = plan[: int(round(len(plan) * (1 - o.epsilon)))]
        return plan

    def ask(self, n: int) -> list[int]:
        n = min(n, len(self.space) - len(self._asked))
        if n <= 0:
            return []
        if self._due():
            if self.options.plan_size is None:
                self._plan = []
            model = self._train()
            if model is not None:
                self._plan = self._new_plan(model, n)
        out: list[int] = []
        while len(out) < n and self._plan:
            i = self._plan.pop(0)
            if i not in self._asked:
                self._asked.add(i)
                out.append(i)
        out += sample_excluding(self.space, n - len(out), self._asked, self.rng)
        self._asked.update(out)
        return out

    def tell(self, indices, records) -> None:
        super().tell(indices, records)
        if records:
            self.stalled.update(min(r.cost for r in records))

    def stats(self) -> dict:
        return {"fits": self.refit.fits, "model_seconds": round(self.refit.seconds, 4),
                "explore_seconds": round(self.explore_seconds, 4), "explored": self.explored,
                "swept": self.swept}
