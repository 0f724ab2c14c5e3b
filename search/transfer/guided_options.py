"""The options of :class:`~search.transfer.guided.HistoryGuided`: how history rounds are
scheduled (:class:`GuidedOptions`, see :mod:`search.transfer.guided` for what each does),
and :func:`guided_options`, which takes them as a dataclass, a mapping or ``None``.

Examples
--------
>>> GuidedOptions(decay=0.5).decay, guided_options(None) == GuidedOptions()
(0.5, True)
>>> GuidedOptions(doubt=1.5)
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: doubt must be an integer, got 1.5
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Mapping

from iobound.errors import InvalidInputError

from ..option_checks import check_count, check_flag, check_number
from ..strategies.stall import SOURCES

__all__ = ["SHARES", "MODEL_PICKS", "GuidedOptions", "guided_options"]

SHARES = ("isolated", "hints", "all")
MODEL_PICKS = ("alone", "unmatched", "always", "never")


@dataclass(frozen=True)
class GuidedOptions:
    """How history rounds are scheduled (see :mod:`.guided`).

    Attributes
    ----------
    decay : float
        After ``k`` history rounds without improvement, a round is a history
        round with probability ``decay ** k``; 0 stops history at its first miss.
    doubt : int
        Misses counted before the first history round is judged (see :mod:`.guided`).
    share : str
        ``"isolated"``: the inner strategy is told only its own asks;
        ``"hints"``: and a model-based one (``hint``) learns from the history
        rounds' measurements no better than its own best;
        ``"all"``: every measurement.
    lottery : bool
        Draw before every round instead of once after each miss.
    prior_feature : bool
        Give an inner strategy that learns a cost model (``learn_on``) the
        history's ranks of each configuration as more features
        (:mod:`.prior_feature`).
    escape : str or None
        With ``prior_feature``, the stall source (:data:`search.strategies.stall.SOURCES`,
        with :class:`~search.strategies.stall.StallOptions`' defaults) of a model-based
        inner strategy that has none of its own and proposes a batch per round (see
        :mod:`.guided`); ``None``: none.
    source_features : int
        With ``prior_feature``, also a rank column per source for this many
        sources at most (the best matching first); 0: the prior's order only.
    feature_alpha : float
        With ``prior_feature`` and below 1, a source's rank column is used only
        while it orders the target's measurements (Kendall's tau, one-sided p at
        most this; :meth:`~.prior_feature.PriorFeatureSpace.gate`); 1 (default):
        always. A protection against history that says nothing about the target;
        where history is informative it costs about 0.01 at 50 evaluations, so it is
        not the default (``benchmarks/results/transfer_experiments.md``).
    first_rounds : int
        History rounds before the first that is judged, at most: as many as it
        takes to measure the consensus's best and every source's best (a round
        measures a batch), so that each device's opinion is heard once.
    match : float
        Judged history rounds pick from the consensus with each source weighted
        ``exp(match * (tau - the best tau))``, ``tau`` its Kendall tau with the
        target's measurements (:meth:`~.prior.HistoryPrior.matched_order`);
        0: the first rounds' round robin throughout.
    trust, trust_alpha : float
        The round after the unjudged ones is a history round, without a draw,
        when a source orders the target's measurements with Kendall tau at least
        ``trust``, significant at ``trust_alpha`` over the sources (Bonferroni:
        ``p <= trust_alpha / sources``); ``trust`` above 1: never.
    keep_trusted : bool
        After the trusted round, history keeps its rounds, misses or not, while a source
        still passes the same bar (``trust``, ``trust_alpha``) on everything the target
        has measured: a twin found by the first measurements is followed while it stays
        one, not only while each of its rounds improves. Off by default: it lifts 25
        evaluations where the twin's list holds the optimum and holds the explorer back
        where it does not, a loss at 50 on held-out presets
        (``benchmarks/results/transfer_experiments.md``, "`keep_trusted` on sets it was
        not designed on").
    model_picks : str
        Whether the history rounds walk the orders of the prior's two models, the ranking
        model's and the regression's (zero-shot's model, :meth:`~.prior.HistoryPrior.picker`),
        when no source measured the target's own problem (another layer of our conv
        template: the sources' best lists are then other problems' bests, the models carry
        every source over): ``"alone"`` (default) the models' orders only, in turn;
        ``"unmatched"`` as two more lists right after the prior's order, before the
        sources' own; ``"always"`` as two more lists whatever the sources; ``"never"``
        not at all. Where a source measured the target's problem, ``"alone"`` and
        ``"unmatched"`` walk the sources' lists only.
    reopen : int
        Where the history rounds walk the models' orders (no source measured the target's
        problem), after this many inner rounds in a row that did not improve the best, the
        next round is a history round again (its picks as any judged round's, kept by the
        same rule: a win keeps the next); 0 (default): never. Inert where sources measured
        the target's problem (their lists mislead for as long as the device differs:
        ``benchmarks/results/transfer_experiments.md``, "History rounds again when the
        explorer stalls"). Off by default: on held-out leave-network-out sets ``reopen=4``
        gains at 25 and 50 and loses 0.0001 at 100, both ways per target (same file,
        "History rounds again after a stall, only where the models are walked").
    follow_model : bool
        With the models' orders heard, when the target's best after the unjudged rounds is
        a model's pick, the next round is a history round again and it and every later
        history round take that model's next unasked configurations: the list that won
        keeps the rounds (while they improve, as any history round).

    Examples
    --------
    >>> o = GuidedOptions()
    >>> o.decay, o.share, o.first_rounds, o.model_picks
    (0.25, 'hints', 2, 'alone')
    >>> GuidedOptions(share="some")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: share must be one of isolated, hints, all; got 'some'
    """

    decay: float = 0.25
    doubt: int = 1
    share: str = "hints"
    lottery: bool = False
    prior_feature: bool = True
    escape: str | None = "far"
    source_features: int = 16
    feature_alpha: float = 1.0
    first_rounds: int = 2
    match: float = 15.0
    trust: float = 0.8
    trust_alpha: float = 0.01
    keep_trusted: bool = False
    model_picks: str = "alone"
    follow_model: bool = True
    reopen: int = 0

    def __post_init__(self) -> None:
        check_number("decay", self.decay, 0, 1, high_open=True)
        check_count("doubt", self.doubt)
        check_count("source_features", self.source_features)
        check_count("first_rounds", self.first_rounds, low=1)
        check_count("reopen", self.reopen)
        check_number("match", self.match, 0)
        check_number("trust", self.trust)
        check_number("trust_alpha", self.trust_alpha, 0, 1, low_open=True)
        check_number("feature_alpha", self.feature_alpha, 0, 1, low_open=True)
        check_flag("lottery", self.lottery)
        check_flag("prior_feature", self.prior_feature)
        check_flag("follow_model", self.follow_model)
        check_flag("keep_trusted", self.keep_trusted)
        if self.escape is not None and self.escape not in SOURCES:
            raise InvalidInputError(f"escape must be one of {', '.join(SOURCES)} or None; "
                                    f"got {self.escape!r}")
        if self.model_picks not in MODEL_PICKS:
            raise InvalidInputError(f"model_picks must be one of {', '.join(MODEL_PICKS)}; got "
                                    f"{self.model_picks!r}")
        if self.share not in SHARES:
            raise InvalidInputError(f"share must be one of {', '.join(SHARES)}; got {self.share!r}")


def guided_options(options: "GuidedOptions | Mapping[str, Any] | None") -> GuidedOptions:
    """``options`` as :class:`GuidedOptions`: itself, the defaults for ``None``, or made from
    a mapping of its fields (as :func:`search.strategies.make_strategy` takes option dicts).

    >>> guided_options({"decay": 0.5}) == GuidedOptions(decay=0.5)
    True
    >>> guided_options({"decai": 0.5})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: unknown option 'decai' for GuidedOptions; allowed: decay, ...
    """
    if options is None:
        return GuidedOptions()
    if isinstance(options, GuidedOptions):
        return options
    if not isinstance(options, Mapping):
        raise InvalidInputError(f"options must be GuidedOptions, a mapping of its fields or "
                                f"None; got {type(options).__name__}")
    names = [f.name for f in fields(GuidedOptions)]
    unknown = [k for k in options if k not in names]
    if unknown:
        raise InvalidInputError(f"unknown option {unknown[0]!r} for GuidedOptions; allowed: "
                                f"{', '.join(names)}")
    return GuidedOptions(**options)
