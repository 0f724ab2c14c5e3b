"""What a tuning session takes from the tuning database before it starts.

With ``--history DB`` a session stores its measurements in the database (see
:func:`~search.session.storage.store_history`) and, before it starts, lets the
strategy learn from the database's timed records of workloads with exactly this
space's parameter names (any device, any problem, earlier runs of this very layer on
this device included: the strategies weigh them):

- ``gga`` and ``zero_shot`` (:data:`HISTORY_STRATEGIES`) take the records in their options;
- the model-based and genetic strategies (:data:`GUIDED_STRATEGIES`) are wrapped in
  :class:`~search.transfer.guided.HistoryGuided`: history's best configurations get
  the first rounds and keep rounds only while they win (:mod:`search.transfer`);
- ``random`` and ``grid`` do not use history.

Workloads with other parameter names say nothing about this space: they are left
out, with a notice. :class:`HistoryUse` reports what was found and whether it was used.

The history is read when the layer starts, so in a network run (``--network``)
each layer learns from the layers the run has stored before it (and from earlier
runs), never from itself: a layer's records are stored after it starts, and the
records of the log a layer resumes are left out (:func:`_own`).

Examples
--------
>>> HistoryUse(records=12, devices=("A100",), used=True).to_dict()
{'records': 12, 'devices': ['A100'], 'used': True}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from iobound.errors import InvalidInputError

from ..transfer.session import HistoryInfo

if TYPE_CHECKING:  # pragma: no cover
    from ..space import Space
    from .settings import TuneSettings

__all__ = ["HistoryUse", "HISTORY_STRATEGIES", "GUIDED_STRATEGIES", "history_options",
           "reusable_records", "telling_fallback", "check_zero_shot_db"]

#: Strategies whose options take history records: name -> whether they also take the
#: target problem (gga's match score; which sources measured it, for zero-shot's order).
HISTORY_STRATEGIES = {"gga": True, "zero_shot": True}

#: Strategies that run under :class:`~search.transfer.guided.HistoryGuided` with history.
GUIDED_STRATEGIES = ("explorer", "sa", "ga")


#: What the database held for this space and whether it was used (one type for every
#: strategy: the transfer module's record).
HistoryUse = HistoryInfo


#: The log header's key of the database's mark the run read its history up to.
HISTORY_MARK = "history_up_to"
#: The log header's key of the database that mark is of (its real path): a run resumed
#: with another database reads all of it (the mark, a row id, says nothing about it).
HISTORY_DB = "history_db"


def history_db_name(path: str) -> str:
    """What :data:`HISTORY_DB` holds for the database at ``path``.

    >>> import os
    >>> history_db_name("runs/../tuning.db") == os.path.realpath("tuning.db")
    True
    """
    import os
    return os.path.realpath(path)


def _read_db(path: str):
    """The history database at ``path`` to read before the run; an empty one in memory
    while there is no such file: it is created when the run stores its records
    (:func:`~search.session.storage.store_history`), so a run refused before then (a
    ``--resume`` log of another run, found when the loop starts) leaves no file behind."""
    import os

    from ..db import TuningDB
    return TuningDB(path if os.path.exists(path) else ":memory:")


def _resumed(settings: "TuneSettings", db) -> tuple[frozenset, int | None, int]:
    """What a run's history leaves out, from the log it resumes (read once):

    - its own records so far (stored in the database when it was interrupted; the
      target's data, never history), not those it reused from the database (earlier
      runs': history, as they were before the interruption);
    - the mark to read the history up to: the interrupted run's (records stored since,
      such as those of layers tuned beside it and stored at the interruption, are not its
      history), ``None`` for a new run;
    - the mark to log: that one, or everything stored now (:meth:`TuningDB.last_id`).
    """
    from ..records import read_log
    from ..transfer.session import own_records
    if not settings.resume:
        return frozenset(), None, db.last_id()
    log = read_log(settings.resume)
    own = own_records(e.record for e in log.entries if not e.reused)
    mark = log.header.get(HISTORY_MARK)
    same_db = log.header.get(HISTORY_DB, None) in (None, history_db_name(settings.history))
    if same_db and isinstance(mark, int) and not isinstance(mark, bool) and mark >= 0:
        return own, mark, mark
    return own, None, db.last_id()


def _other_note(settings: "TuneSettings", other: int) -> list[str]:
    """The notice about workloads of other parameter names (the same for every strategy)."""
    if not other:
        return []
    return [f"{other} workload(s) in {settings.history} have other parameters: not used"]


def _guided(db, settings: "TuneSettings", space: "Space", problem: Any, other: int):
    """(options, use, prior) for a strategy of :data:`GUIDED_STRATEGIES`."""
    import dataclasses

    from ..transfer import transfer_options
    seed = 0 if settings.seed is None else settings.seed  # as tune() and with_history read None
    own, up_to, mark = _resumed(settings, db)
    prior, info = transfer_options(db, space, problem, exclude=own, seed=seed, up_to=up_to)
    # transfer's own notice names the other spaces in its words; ours is every strategy's
    notes = _other_note(settings, other) or ([info.notice] if info.notice else [])
    info = dataclasses.replace(info, notice="; ".join(notes) or None, up_to=mark)
    return settings.options_dataclass(), info, prior


_NEEDS = "zero-shot tuning needs history records of this parameter space"


def _check_zero_shot(settings: "TuneSettings", space: "Space", records: list, other: int) -> None:
    """Refuse zero-shot tuning without a timed record that can train its ranking (a
    configuration of ``space``, or on our conv template any layer's record,
    :func:`search.zero_shot.rankable`): it would measure K random configurations and call
    them the history's top K."""
    if settings.strategy != "zero_shot":
        return
    what = _NEEDS
    if not settings.history:
        raise InvalidInputError(f"{what}: give --history DB")
    if not records:
        also = f" (only {other} workload(s) of other parameters)" if other else ""
        raise InvalidInputError(f"{what}; {settings.history} holds none{also}")
    from ..transfer.rows import LayerRows, rows_for
    from ..zero_shot import rankable
    if not rankable(space, records):
        why = ("is of a device preset and a layer, whose features the ranking learns from"
               if isinstance(rows_for(space), LayerRows) else "is a configuration of this space")
        raise InvalidInputError(f"{what}; none of the {len(records)} in {settings.history} "
                                f"{why}")


def history_options(settings: "TuneSettings", space: "Space", problem: Any):
    """(the strategy's options, :class:`HistoryUse` or ``None``, a history prior or ``None``).

    For a strategy of :data:`HISTORY_STRATEGIES` the options carry the usable
    records (and the target ``problem`` where the strategy matches problems); for
    one of :data:`GUIDED_STRATEGIES` the prior is what
    :func:`search.transfer.with_history` wraps it with. ``zero_shot`` without a usable
    record is refused (``InvalidInputError``): it has nothing to rank with.

    >>> import os, tempfile
    >>> from iobound.layer import ConvLayer
    >>> from search.session import TuneSettings
    >>> from search.session.storage import store_history
    >>> from search.session.settings import default_measurer, default_space
    >>> from search.tuner import tune
    >>> pw = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1)
    >>> space = default_space(pw, "v100", "direct")
    >>> m = default_measurer("model", pw, "v100", "direct")
    >>> db = os.path.join(tempfile.mkdtemp(), "tuning.db")
    >>> _ = store_history(db, tune(space, m, "random", budget=3, seed=0), space, m)
    >>> options, use, prior = history_options(TuneSettings(strategy="gga", history=db), space,
    ...                                       pw.to_dict())
    >>> len(options.history), use.records, use.used, use.devices, prior
    (3, 3, True, ('V100-SXM2',), None)
    >>> history_options(TuneSettings(strategy="random", history=db), space, None)[1].notice
    "strategy 'random' does not learn from history"
    """
    from ..strategies import make_options
    from ..transfer.session import usable_history
    if not settings.history:
        _check_zero_shot(settings, space, [], 0)
        return settings.options_dataclass(), None, None
    with _read_db(settings.history) as db:
        other = sum(set(w.params) != set(space.params) for w in db.workloads())
        if settings.strategy in GUIDED_STRATEGIES:
            return _guided(db, settings, space, problem, other)
        own, up_to, mark = _resumed(settings, db)
        records = usable_history(db, space, problem, exclude=own, up_to=up_to)
    _check_zero_shot(settings, space, records, other)
    devices = tuple(sorted({m.device for m in records}))
    notes = _other_note(settings, other)
    takes = settings.strategy in HISTORY_STRATEGIES
    if not takes and records:
        notes.append(f"strategy {settings.strategy!r} does not learn from history")
    if not takes:
        return (settings.options_dataclass(), HistoryUse(len(records), devices, False,
                                                         "; ".join(notes) or None, up_to=mark),
                None)
    values = dict(settings.options or {}, history=tuple(records))
    if HISTORY_STRATEGIES[settings.strategy]:
        values["target_problem"] = problem
    if settings.strategy == "zero_shot":
        values["k"] = settings.budget  # the order is chosen for the K it measures
    use = HistoryUse(len(records), devices, bool(records), "; ".join(notes) or None,
                     up_to=mark)
    return make_options(settings.strategy, values), use, None


def telling_fallback(build, observer, settings: "TuneSettings", use: HistoryUse | None,
                     fell_back: list):
    """``build`` (a strategy builder), telling ``observer`` when a strategy of
    :data:`HISTORY_STRATEGIES` it makes runs without the history it learns from
    (``stats()["history"]["fallback"]``: ``gga`` as plain ``ga``); the strategy's name is
    then appended to ``fell_back``.

    Examples
    --------
    >>> from search.session import Observer, TuneSettings
    >>> class Say(Observer):
    ...     def notice(self, text): print(text)
    >>> class Plain:  # a gga that found nothing to learn from
    ...     name = "gga"
    ...     def stats(self): return {"history": {"fallback": "plain ga", "reason": "-"}}
    >>> build = telling_fallback(lambda *a: Plain(), Say(), TuneSettings(strategy="gga"), None, [])
    >>> _ = build("gga", None, None, None)
    gga: no --history DB given; running as plain ga
    """
    def built(name, space, options, rng):
        strat = build(name, space, options, rng)
        if name not in HISTORY_STRATEGIES:  # the others keep no fallback in their stats
            return strat
        history = strat.stats().get("history")
        if isinstance(history, dict) and history.get("fallback"):
            if not settings.history:
                why = "no --history DB given"
            elif use is not None and not use.records:
                why = f"{settings.history} holds no history records of this parameter space"
            else:  # records, none the strategy can use (its reason says why)
                why = history["reason"]
            fell_back.append(strat.name)
            observer.notice(f"{strat.name}: {why}; running as {history['fallback']}")
        return strat
    return built


def check_zero_shot_db(settings: "TuneSettings") -> None:
    """Before anything runs (and before a new database is created): refuse zero-shot
    tuning with a ``--history`` database that is missing or holds no workload at all.
    (Whether it holds records of the space is known when the space is: :func:`history_options`.)

    >>> from search.session import TuneSettings
    >>> check_zero_shot_db(TuneSettings(strategy="zero_shot", history="/no/such.db"))
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: zero-shot tuning needs history ...; /no/such.db holds none
    """
    import os

    from ..db import TuningDB
    from .files import check_history
    path = settings.history
    if settings.strategy != "zero_shot" or not path:
        return
    if os.path.isfile(path) and os.path.getsize(path) > 0:
        check_history(path)  # opens, or says why not
        with TuningDB(path) as db:
            if db.workloads():
                return
    raise InvalidInputError(f"{_NEEDS}; {path} holds none")


def reusable_records(settings: "TuneSettings", space: "Space", measurer) -> dict:
    """Index -> the latest record of each configuration of ``space`` the database holds
    of this run's workload on its device with its toolchain, failures included (a
    configuration that failed to build will fail again): what ``--reuse`` answers instead
    of measuring. A layer's workload is any stored layer of its shape, whatever its name
    (:func:`~search.db.queries.layer_workloads`, with this space's parameter names); a
    recorded space's, the key :func:`~search.session.storage.history_key` names. No
    database file yet: nothing to reuse (none is created).

    >>> import os, tempfile
    >>> from iobound.layer import ConvLayer
    >>> from search.session.storage import store_history
    >>> from search.session.settings import TuneSettings, default_measurer, default_space
    >>> from search.tuner import tune
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
    >>> m = default_measurer("model", layer, "v100", "direct")
    >>> space = default_space(layer, "v100", "direct")
    >>> settings = TuneSettings(history=os.path.join(tempfile.mkdtemp(), "t.db"), reuse=True)
    >>> reusable_records(settings, space, m)  # no database yet
    {}
    >>> result = tune(space, m, "random", budget=4, seed=2)
    >>> _ = store_history(settings.history, result, space, m)
    >>> sorted(reusable_records(settings, space, m)) == sorted(t.index for t in result.trials)
    True
    """
    import os

    from ..db.queries import layer_workloads
    from ..history import History
    from ..replay_space import ReplaySpace
    from .storage import history_key
    if not os.path.exists(settings.history):
        return {}
    key = history_key(space, measurer)
    with History(settings.history) as h:
        if isinstance(space, ReplaySpace):
            # every record under the key, the latest first: the toolchain names the
            # replayed file by its base name only, so another file of that name (another
            # folder, a re-measured cache) may have stored records under it too
            from ..db.layer_keys import layer_key_workload
            named = [w for w in h.db.workloads() if layer_key_workload(key.layer, w.params) == w]
            records = [m.record for w in named for m in h.db.measurements(
                w, device=key.device, toolchain=key.toolchain, order="stored")][::-1]
        else:  # a layer's space (history_key has checked it has a layer and a device)
            params = set(space.params)
            same = [w for w in layer_workloads(h.db, space.layer) if set(w.params) == params]
            records = h.latest_of(same, key.device, key.toolchain)
    if isinstance(space, ReplaySpace) and records:  # only what this file records alike
        mine = measurer.measure([r.config for r in records])
        records = [r for r, m in zip(records, mine) if (m.status, m.time_ms, bool(m.estimate))
                   == (r.status, r.time_ms, bool(r.estimate))]
    out = {}
    for rec in records:
        i = space.index(rec.config)
        if i is not None:
            out.setdefault(i, rec)
    return out
