"""What ``iobound tune`` prints: the ranked table, the winner with its bound and kernel,
the history it used, and the observer that prints a session as it goes.

Examples
--------
>>> _fmt_cfg({"x": 4, "y": 14})
'x=4 y=14'
"""

from __future__ import annotations

from iobound.wording import counted

from .common import ESTIMATE_LEGEND, ms_text, print_notice

__all__ = ["printer", "print_replay", "print_choice"]


def _fmt_cfg(cfg: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in cfg.items())


def _fmt_ms(rec) -> str:
    if rec.time_ms is not None:
        return ms_text(rec.time_ms, rec.estimate)
    s = rec.surrogate_cost
    return f"{s:.6g}w" if s is not None and rec.is_ok else "-"


def _print_table(result, k: int = 5) -> None:
    order = {id(t): n for n, t in enumerate(result.trials)}
    ranked = sorted(result.trials, key=lambda t: (t.record.cost, order[id(t)]))[:k]
    print(f"  {'rank':>4}  {'cost':>10}  {'status':<13}  config")
    for r, t in enumerate(ranked, 1):
        print(f"  {r:>4}  {_fmt_ms(t.record):>10}  {t.record.status.value:<13}  {_fmt_cfg(t.config)}")
    if any(t.record.estimate for t in result.trials):
        print(f"  {ESTIMATE_LEGEND}")
    counts = ", ".join(f"{s} {n}" for s, n in sorted(result.status_counts().items()))
    print(f"  evaluations {result.evaluations} ({counts}) in {counted(result.rounds, 'round')}; "
          f"stopped: {result.stop_reason}; strategy {result.strategy_seconds:.2f} s, "
          f"measure {result.measure_seconds:.2f} s"
          + (f"; {result.resumed} resumed from the log" if result.resumed else "")
          + (f"; {result.reused} reused from the history database" if result.reused else ""))


def _print_check(chk) -> None:
    if chk.checked:
        verdict = "matches numpy" if chk.matches_numpy else "DIFFERS from numpy"
        traffic = "=" if chk.traffic_matches else "!="
        flops = "=" if chk.flops_matches else "!="
        print(f"emulator check on a reduced copy ({chk.layer}): {verdict} "
              f"(max rel err {chk.max_rel_err:.2g}); traffic {chk.traffic_words:,} "
              f"words {traffic} formula {chk.formula_words:,}; flops {chk.flops:,} {flops} "
              f"model {chk.model_flops:,}")
    else:
        print(f"emulator check skipped: {chk.reason}")


def _devices(names, shown: int = 6) -> str:
    """The device names, the first ``shown`` of them when there are more (``--json``
    lists them all).

    >>> _devices(["a", "b", "c"], shown=2)
    'a, b and 1 more'
    """
    if not names:
        return "none"
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


#: How ``iobound tune`` names the order zero-shot measured (:mod:`search.zero_shot_order`).
ZERO_SHOT_ORDER_NAMES = {
    "model": "the history model's",
    "sources": "the history model's, the consensus's and each device's own best in turn",
}


def _print_history_use(rep) -> None:
    use = rep.history_use
    if use is None:
        return
    took = (f"; read and fitted in {use.seconds:.1f} s"
            if use.seconds is not None and use.seconds >= 0.1 else "")
    print(f"  history: {counted(use.records, 'record', ',')} of this space "
          f"(devices: {_devices(use.devices)}); "
          f"{'used by ' + rep.result.strategy if use.used else 'not used'}{took}"
          + (f" ({use.notice})" if use.notice else ""))
    stats = rep.result.strategy_stats
    order = ZERO_SHOT_ORDER_NAMES.get(stats.get("order"))
    if order:
        print(f"  zero-shot order: {order}")
    ndcg = stats.get("ndcg_at_k")
    if ndcg is not None:
        k = stats.get("ndcg_k", rep.result.evaluations)
        print(f"  zero-shot ranking: NDCG@{k} = {ndcg:.3f} "
              f"against the recorded times")


def _print_layer(rep) -> None:
    if rep.same_as is not None:
        print(f"  same shape as {rep.same_as}: its result and kernel, nothing measured "
              f"(--tune-repeats tunes it too)")
        return
    result = rep.result
    _print_table(result)
    _print_history_use(rep)
    if result.best is None:
        print("  no configuration ran successfully")
        return
    rec = result.best.record
    print(f"best config: {_fmt_cfg(result.best.config)}")
    if rec.time_ms is not None:
        label = "estimate (analytic model, not measured)" if rec.estimate else "measured median"
        print(f"{'estimated time' if rec.estimate else 'time'}: {ms_text(rec.time_ms)} ms  [{label}]")
    else:
        print(f"emulated traffic: {rec.extra.get('traffic_words')} words  [emulator: no time]")
    b = rep.winner.bound
    print(f"I/O: this dataflow moves {b.dataflow_io_words:,} words; lower bound "
          f"{b.lower_bound_words:,.0f} words ({b.method}, S = {b.lower_bound_fast_memory_words:,} "
          f"words: a block's {b.fast_memory_words:,} on-chip + 2) -> "
          + (f"{b.ratio_to_bound:.2f}x the bound" if b.ratio_to_bound is not None
             else "no ratio (a bound of 0: no output reads an input)"))
    print(f"kernel: {rep.winner.kernel_path}")
    if rep.winner.emulator_check is not None:
        _print_check(rep.winner.emulator_check)
    if rep.history is not None:
        best = rep.history.best_ever_ms
        print(f"history: stored in {rep.history.db}; " + (
            "no timed measurement under this key (the emulator records traffic, no time)"
            if best is None else f"best ever for this key {round(best, 5)} ms"))
    print(f"took {rep.seconds:.1f} s")


def print_choice(choice) -> None:
    """A layer tuned with every algorithm: the fastest, and the others' best.

    >>> import tempfile
    >>> from iobound.layer import ConvLayer
    >>> from search.session import TuneSettings, choose_algorithms, tune_layers
    >>> reports = tune_layers([ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1,
    ...                                  name="p1")], "v100",
    ...                       TuneSettings(strategy="random", budget=2, seed=0), measure="model",
    ...                       algorithm="all", out_dir=tempfile.mkdtemp(), verify=False)
    >>> [r.algorithm for r in reports]  # a 1x1 kernel: no Winograd
    ['direct']
    >>> print_choice(choose_algorithms(reports)[0])
    algorithm: direct (the only one with a configuration of the layer on this device), ...
    """
    def cost(rep):
        return _fmt_ms(rep.result.best.record) if rep.result.best is not None else "no result"
    others = ", ".join(f"{r.algorithm} {cost(r)}" for r in choice.candidates if r is not choice.chosen)
    if choice.chosen is None:
        print(f"algorithm: none ran a configuration successfully ({others})")
        return
    timed = choice.chosen.result.best.record.time_ms is not None
    if not others:
        how = "(the only one with a configuration of the layer on this device)"
    else:  # the emulator times nothing: its costs are words moved
        how = "is the fastest" if timed else "moves the fewest words (emulated, not timed)"
    print(f"algorithm: {choice.chosen.algorithm} {how}, {cost(choice.chosen)}"
          f"{' ms' if timed else ''}{f' ({others})' if others else ''}; "
          f"kernel {choice.chosen.winner.kernel_path}")


def print_replay(rep) -> int:
    """Print a replayed run's table and its best against the recorded optimum; the exit
    code (1 when no configuration ran successfully).

    >>> from search.kt_cache import KtCache
    >>> from search.session import TuneSettings, tune_replay
    >>> cache = KtCache(tune_params={"x": [1, 2, 3]}, device_name="v100", kernel_name="k",
    ...                 entries=[{"x": x, "time": 1.0 + abs(x - 2)} for x in (1, 2, 3)])
    >>> print_replay(tune_replay(cache, TuneSettings(strategy="grid", budget=2)))
      rank        cost  status         config
         1           2  ok             x=1
         2           2  ok             x=3
      evaluations 2 (ok 2) in 1 round; stopped: budget; strategy ... s
    best config: x=1
    best time: 2 ms (replayed measurement)
    recorded optimum of the space: 1 ms (best found is 50.0% of optimal speed)
    took ... s
    0
    """
    _print_table(rep.result)
    _print_history_use(rep)
    if rep.result.best is None:
        print("no configuration ran successfully")
        return 1
    b, optimum = rep.result.best.record, rep.recorded_optimum_ms
    print(f"best config: {_fmt_cfg(rep.result.best.config)}")
    what = ("replayed analytic estimate, not a measurement" if b.estimate
            else "replayed measurement")
    print(f"best time: {ms_text(b.time_ms)} ms ({what})")
    if optimum:
        print(f"recorded optimum of the space: {ms_text(optimum)} ms "
              f"(best found is {optimum / b.time_ms:.1%} of optimal speed)")
    print(f"took {rep.seconds:.1f} s")
    return 0


def printer(args, many: bool = False, jobs=()):
    """The observer that prints the human output as the session goes.

    >>> import argparse, contextlib, io, tempfile
    >>> from iobound.devices import get_device
    >>> from iobound.layer import ConvLayer
    >>> from search.session import TuneSettings, plan_layers, run_layers
    >>> jobs = plan_layers([ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3,
    ...                               name="k3")], get_device("v100"),
    ...                    TuneSettings(budget=2, seed=0), measure="model",
    ...                    out_dir=tempfile.mkdtemp(), verify=False)
    >>> args = argparse.Namespace(budget=2, strategy="explorer", seed=0, tune_repeats=False)
    >>> with contextlib.redirect_stdout(io.StringIO()) as out:
    ...     _ = run_layers(jobs, printer(args))
    >>> for line in out.getvalue().splitlines()[:2]:
    ...     print(line)
    iobound tune: k3  n1 4x6x6 -> 4x4x4 k3x3 s1x1 p0x0
      space: direct, 648 configurations (Table 1 pruned; 648 unpruned)
    """
    from search.measure import measurer_class
    from search.progress import ProgressBar
    from search.session import Observer
    executor = jobs[0].settings.executor if jobs else None
    if many and executor is not None and executor.parallel_layers != 1:  # layers at once
        from .tune_network import NetworkPrinter
        from search.session.repeats import repeats
        tuned = len(jobs) if args.tune_repeats else repeats(jobs).count(None)
        return NetworkPrinter(args.budget * tuned, _print_layer,
                              measurer_class(jobs[0].measure).cost_unit)

    class Printer(Observer):
        bar = None

        def __init__(self):
            self.noticed = set()  # a network's layers fall back alike: one line

        def layer_started(self, job, space):
            layer = job.layer
            print(f"iobound tune: {layer.name or 'layer'}  {layer.short()}")
            print(f"  space: {job.algorithm}, {len(space):,} configurations (Table 1 pruned; "
                  f"{space.unpruned_size:,} unpruned)")
            self.bar = ProgressBar(args.budget, label=layer.name or "tune",
                                   unit=measurer_class(job.measure).cost_unit)

        def replay_started(self, file, space):
            c, statuses = space.cache, space.describe()["statuses"]
            print(f"iobound tune: replaying {file}")
            named = "from the file" if c.device == c.device_name else "the file names none"
            print(f"  device {c.device} ({named}), kernel {c.kernel_name}, "
                  f"{len(space):,} recorded configurations "
                  f"({', '.join(f'{k} {v}' for k, v in sorted(statuses.items()))})")
            print(f"  strategy {args.strategy}, budget {args.budget}, seed {args.seed}")
            self.bar = ProgressBar(args.budget, label="tune", unit="ms")

        def progress(self, done, budget, best):
            self.bar(done, budget, best)

        def tuning_done(self):
            self.bar.close()

        def notice(self, text):
            print_notice(text, self.noticed)

        def finished(self, report):
            if hasattr(report, "layer"):
                if report.same_as is not None:  # not started: no header printed yet
                    print(f"iobound tune: {report.layer.name}  {report.layer.short()}")
                _print_layer(report)
                if many:
                    print()

    return Printer()
