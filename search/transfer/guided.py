"""Any strategy plus tuning history, with the damage of misleading history bounded.

:class:`HistoryGuided` wraps a strategy (the *inner* one, e.g. the explorer) and a
:class:`~search.transfer.prior.HistoryPrior`. Every round belongs to one of two
arms, never both:

- a **history round** measures the prior's next candidates (in the first rounds
  the consensus's next and each source's next best, round robin,
  :meth:`~.prior.HistoryPrior.picker`; where no source measured the target's own
  problem, the history models' next instead, ``model_picks``; later, the sources most
  like the target first, or a model's next when its pick is the target's best after
  the first rounds, ``follow_model``);
- an **inner round** is the inner strategy's round; a model-based inner strategy
  (the explorer, ``sa``) learns its cost model with the history's ranks of each
  configuration as more features (``prior_feature``: the prior's order and, for
  up to ``source_features`` sources, each source's own; :mod:`.prior_feature`),
  so the history shapes its model only as far as the target's measurements
  confirm it. The rank columns can still hold the search in the region the
  history favours when the target's optimum lies elsewhere (the model ranks that
  region first, the rounds stop improving): with ``escape`` such an inner explores
  when its rounds stall, a share of each batch growing with the rounds without
  improvement taken from regions none of its own measurements has touched (the
  explorer's stall exploration, :mod:`search.strategies.stall`, source ``"far"``; keeping
  away from the history rounds' measurements too was measured and not kept,
  ``benchmarks/results/transfer_experiments.md``).

The first rounds are history rounds, not judged: as many as it takes to measure
the best of every list the picker walks (the consensus's and every source's: each
device is heard once; or each model's), at most ``first_rounds``. Their measurements
say which sources are like the target: the round right after them is again a history
round, without a draw, when one source orders the target's measurements as the target
does (Kendall's tau at least ``trust``, significant at ``trust_alpha`` over the
sources, so that four configurations agreeing by chance earn nothing; the p-value exact
on a few tied configurations, :mod:`.rank_test`), and every later
history round picks from the consensus re-weighted by each source's tau with the
target (:meth:`~.prior.HistoryPrior.matched_order`, ``match``): with many devices, the
nearest ones' next best. Afterwards the history earns its rounds on the target, by
outcome: the round after a history round that improved the best time so far is
again a history round; after one that did not, the next round is a history round
with probability ``decay ** k``, ``k`` the history rounds that did not improve it
plus ``doubt`` (the first rounds prove nothing: they set what later ones must beat), and
when that draw fails the history gets no more rounds. History that misleads (its
picks stop improving anything) thus costs its first rounds (and the trusted one,
when a source agreed with them) plus at most
``decay ** doubt / (1 - decay)`` batches on average, whatever the budget.
(``lottery=True`` draws again before every round instead; that tail grows with
the number of rounds.) With ``reopen=n``, where the history rounds walk the models' orders
(no source measured the target's problem), ``n`` inner rounds in a row without improving
the best earn the history one more round, kept by the same rule.

``share="isolated"`` tells the inner strategy only what it asked
itself: it runs as it would without history (but for the feature), only later (a configuration
it asks for that a history round measured is told to it at once and costs
nothing). ``share="all"`` tells it every measurement, history rounds included, so
its model learns from them too; that is how misleading history used to trap the
explorer in the history's region (see ``benchmarks/results/transfer_experiments.md``
for both, measured). ``share="hints"`` (default) is isolated but for the model: a
model-based inner learns from the history rounds' measurements that are no better
than its own best (:meth:`search.strategies.model_based.ModelBasedStrategy.hint`), so
the evaluations history spent still teach it where not to look, and never draw it to
the history's region (with many misleading sources, the first rounds cost 8
evaluations the inner would otherwise learn nothing from).

Examples
--------
>>> import numpy as np
>>> from search.db import Measurement, Workload
>>> from search.measure.base import MeasureRecord
>>> from search.grid_space import GridSpace
>>> from search.strategies.random import RandomStrategy
>>> from search.transfer.prior import HistoryPrior
>>> space = GridSpace({"x": list(range(20))})
>>> w = Workload("k", [8], ("x",))
>>> hist = [Measurement(w, "gpu0", "t", MeasureRecord.ok({"x": x}, time_ms=1.0 + abs(x - 7)))
...         for x in range(20)]
>>> prior = HistoryPrior.fit(space, hist)
>>> s = HistoryGuided(RandomStrategy(space, rng=np.random.default_rng(0)), prior,
...                   rng=np.random.default_rng(1))
>>> s.ask(3)[0]
7
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Sequence

import numpy as np

from iobound.errors import InvalidInputError

from ..measure.base import MeasureRecord
from ..option_checks import check_type
from ..strategies.base import Strategy, StrategyOptions
from ..strategies.stall import StallOptions
from .guided_options import GuidedOptions, guided_options
from .prior import MODEL_NAMES
from .prior_feature import PriorFeatureSpace

__all__ = ["GuidedOptions", "HistoryGuided", "guided_options", "check_wrapped", "history_picker"]


def check_wrapped(inner: Any, prior: Any) -> None:
    """InvalidInputError unless ``inner`` is a :class:`~search.strategies.base.Strategy`
    and ``prior`` a :class:`~.prior.HistoryPrior` or ``None``.

    >>> check_wrapped("random", None)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: strategy must be a Strategy (search.strategies); got str
    """
    from .prior import HistoryPrior
    if not isinstance(inner, Strategy):
        raise InvalidInputError(f"strategy must be a Strategy (search.strategies); got "
                                f"{type(inner).__name__}")
    if prior is not None and not isinstance(prior, HistoryPrior):
        raise InvalidInputError(f"prior must be a HistoryPrior or None (transfer_options "
                                f"makes one); got {type(prior).__name__}")
    space = inner.space
    if prior is not None and prior.space_key not in (None, (tuple(space.params), len(space))):
        names, size = prior.space_key
        raise InvalidInputError(f"the prior was fitted on another space ({size} configurations "
                                f"of {', '.join(names)}), not the strategy's ({len(space)} of "
                                f"{', '.join(space.params)}): fit it on the space searched")


def _escape(inner: Strategy, source: str | None) -> None:
    """Give ``inner`` stall exploration from ``source`` unless it has its own or plans
    ahead (stall exploration needs a batch per round)."""
    o = inner.options
    if source is None or getattr(o, "stall", None) is not None or o.plan_size is not None:
        return
    inner.options = replace(o, stall=StallOptions(source=source))


def _model_listed(prior, mode: str) -> bool:
    """Whether the history rounds hear the prior's models (ranking, regression) as more lists."""
    return mode == "always" or (mode in ("alone", "unmatched") and not prior.has_target_problem)


def history_picker(prior, options: GuidedOptions | None = None):
    """The :class:`~.picker.Picker` the history rounds of a run with ``options`` (the
    defaults for ``None``, or a mapping of its fields) walk over ``prior``: the models'
    orders heard as ``model_picks`` says (:class:`~.guided_options.GuidedOptions`).

    >>> from search.db import Measurement, Workload
    >>> from search.measure.base import MeasureRecord
    >>> from search.grid_space import GridSpace
    >>> from search.transfer.prior import HistoryPrior
    >>> w = Workload("k", [8], ("x",))
    >>> hist = [Measurement(w, "gpu0", "t", MeasureRecord.ok({"x": x}, time_ms=1.0 + abs(x - 3)))
    ...         for x in range(8)]
    >>> prior = HistoryPrior.fit(GridSpace({"x": list(range(8))}), hist, target_problem=[8])
    >>> history_picker(prior).names  # a source measured the target's problem: no model lists
    ['order', 'k [8]@gpu0']
    >>> history_picker(prior, "alone")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: options must be GuidedOptions, a mapping ... or None; got str
    """
    from .prior import HistoryPrior
    check_type("prior", prior, HistoryPrior)
    mode = guided_options(options).model_picks
    return prior.picker(_model_listed(prior, mode), alone=mode == "alone")


class HistoryGuided(Strategy):
    """A strategy whose rounds are shared with a history prior by outcome (see module doc).

    Without a prior every round is the inner strategy's, its draws unchanged:

    >>> from search.grid_space import GridSpace
    >>> from search.strategies.random import RandomStrategy
    >>> space = GridSpace({"x": list(range(8))})
    >>> alone = RandomStrategy(space, rng=np.random.default_rng(0))
    >>> s = HistoryGuided(RandomStrategy(space, rng=np.random.default_rng(0)), None,
    ...                   rng=np.random.default_rng(1))
    >>> s.ask(3) == alone.ask(3)
    True
    """

    Options = StrategyOptions

    def __init__(self, inner: Strategy, prior, options: GuidedOptions | dict | None = None,
                 rng: np.random.Generator | None = None):
        check_wrapped(inner, prior)
        self.name = inner.name  # before the base's checks, whose messages name the strategy
        super().__init__(inner.space, inner.options, rng)
        self.inner = inner
        self.prior = prior
        self.guided = guided_options(options)
        self._features: PriorFeatureSpace | None = None
        if prior is not None and self.guided.prior_feature and hasattr(inner, "learn_on"):
            sources = prior.source_orders(self.guided.source_features, min_size=2)
            self._features = PriorFeatureSpace(inner.space, prior.order(), sources)
            inner.learn_on(self._features)
            _escape(inner, self.guided.escape)
        self._model_listed = prior is not None and _model_listed(prior, self.guided.model_picks)
        self._picker = history_picker(prior, self.guided) if prior is not None else None
        lists = len(self._picker) if prior is not None else 1
        self._follow: np.ndarray | None = None  # the model order that won, once one has
        heard = math.ceil(lists / inner.batch_size)  # rounds to pick every list's best
        self._unjudged = min(self.guided.first_rounds, heard)  # history rounds not judged
        self._asked: set[int] = set()
        self._known: dict[int, MeasureRecord] = {}
        self._held: list[int] = []  # the inner's asks answered from history rounds, to tell
        self._round_is_history = False
        self._wins = self._misses = self._history_rounds = 0
        self._inner_asked: set[int] = set()  # everything the inner asked, known or new
        self._doubt = self.guided.doubt
        self._open = True
        self._last_was_history = self._last_won = False
        self._best = math.inf
        self._trusted_source: str | None = None
        self._stalled = 0  # inner rounds in a row without improving the best

    @property
    def batch_size(self) -> int:
        return self.inner.batch_size

    def set_horizon(self, budget: int | None) -> None:
        """The run's budget; the inner strategy plans for what the history rounds leave it."""
        super().set_horizon(budget)
        self._inner_horizon()

    def _inner_horizon(self) -> None:
        """The budget less what the run spent that the inner did not ask for (history
        rounds' picks, a resumed log's records)."""
        if self.horizon is not None:
            self.inner.set_horizon(max(0, self.horizon - len(self._asked - self._inner_asked)))

    def _history_turn(self) -> bool:
        if self.prior is None:
            return False
        unjudged_left = 0 < self._history_rounds < self._unjudged
        if not self._asked or (unjudged_left and self._last_was_history):
            return True
        if self._last_was_history and self._last_won:
            return True
        if (self.guided.follow_model and self._model_listed and self._last_was_history
                and self._history_rounds == self._unjudged and self._best_from_model()):
            # a model's pick is the target's best so far: the list that won keeps the rounds
            known = self._known_costs()
            won = self._picker.origin[min(known, key=known.get)]
            self._follow = self._picker.lists[won]
            return True
        if (self._last_was_history and self._history_rounds == self._unjudged
                and self._trusted()):
            return True
        if (self.guided.keep_trusted and self._last_was_history and self._trusted_source
                and self._trusted()):
            return True  # the twin the trusted round followed is still one
        if self._reopen_due():
            self._stalled = 0
            return True
        if not (self._open and (self._last_was_history or self.guided.lottery)):
            return False
        draw = bool(self.rng.random() < self.guided.decay ** (self._misses + self._doubt))
        if not self.guided.lottery:
            self._open = draw
        return draw

    def _reopen_due(self) -> bool:
        """Whether the inner rounds stalled long enough to hear the models again (``reopen``)."""
        return (self.guided.reopen > 0 and self._model_listed and not self._last_was_history
                and self._history_rounds >= self._unjudged
                and self._stalled >= self.guided.reopen)

    def ask(self, n: int) -> list[int]:
        self._last_was_history, self._round_is_history = self._round_is_history, False
        if self._history_turn():
            out = self._history_picks(n)
            if out:
                self._round_is_history = True
                self._history_rounds += 1
                self._asked.update(out)
                return out
        return self._inner_ask(n)

    def _known_costs(self) -> dict[int, float]:
        """The target's cost of every configuration measured so far that ran."""
        return {i: r.cost for i, r in self._known.items() if math.isfinite(r.cost)}

    def _best_from_model(self) -> bool:
        """Whether the target's best so far is a pick of a model's list."""
        known = self._known_costs()
        return bool(known) and self._picker.name_of(min(known, key=known.get)) in MODEL_NAMES

    def _history_picks(self, n: int) -> list[int]:
        if self._follow is not None:
            return [int(i) for i in self._follow if int(i) not in self._asked][:n]
        known = self._known_costs()
        if self.guided.match > 0 and self._history_rounds >= self._unjudged and len(known) > 1:
            order = self.prior.matched_order(known, self.guided.match)
            return [int(i) for i in order if int(i) not in self._asked][:n]
        return self._picker.picks(n, self._asked)

    def _inner_ask(self, n: int) -> list[int]:
        for _ in range(64):  # each pass tells the inner at least one known record
            self._inner_horizon()
            got = [int(i) for i in self.inner.ask(n)]
            self._inner_asked.update(got)
            if not got:
                return []
            new = [i for i in got if i not in self._known]
            known = [i for i in got if i in self._known]
            if new:
                self._held = known
                self._asked.update(new)
                return new
            self.inner.tell(known, [self._known[i] for i in known])
        return []

    def tell(self, indices: Sequence[int], records: Sequence[MeasureRecord]) -> None:
        super().tell(indices, records)
        indices = [int(i) for i in indices]
        self._asked.update(indices)  # a resumed run's records are told without being asked here
        for i, r in zip(indices, records):
            self._known[i] = r
        if self._features is not None and self.guided.feature_alpha < 1:
            self._features.gate(self._known_costs(), self.guided.feature_alpha)
        best_round = min((r.cost for r in records), default=math.inf)
        if self._round_is_history:
            first = self._best == math.inf or self._history_rounds <= self._unjudged
            self._last_won = best_round < self._best and not first
            if self._last_won:
                self._wins += 1
            elif not first:
                self._misses += 1
            if self.guided.share == "all":
                self.inner.tell(indices, records)
            elif self.guided.share == "hints" and hasattr(self.inner, "hint"):
                self.inner.hint(indices, records)
        else:
            self._stalled = 0 if best_round < self._best else self._stalled + 1
            held, self._held = self._held, []
            self.inner.tell(held + indices, [self._known[i] for i in held] + list(records))
        self._best = min(self._best, best_round)

    def _trusted(self) -> bool:
        """Whether a source orders the measurements like the target (module doc); the
        closest such source is kept for :meth:`stats`."""
        agree = self.prior.agreement(self._known_costs())
        alpha = self.guided.trust_alpha / max(1, len(agree))
        ok = [(tau, g.name) for g, (tau, p) in zip(self.prior.groups, agree)
              if tau >= self.guided.trust and p <= alpha]
        self._trusted_source = max(ok)[1] if ok else None
        return bool(ok)

    def stats(self) -> dict:
        prior = self.prior
        history = {"records": prior.records if prior else 0,
                   "devices": list(prior.devices) if prior else [],
                   "used": prior is not None,
                   "history_rounds": self._history_rounds, "wins": self._wins,
                   "misses": self._misses, "trusted": self._trusted_source}
        return {**self.inner.stats(), "history": history}
