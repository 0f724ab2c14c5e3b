"""``iobound tune --network``: the network table (printed and ``--network-json``) and the
printer of layers tuned at once.

:func:`print_network` prints :func:`search.session.network.network_table`'s rows (layer,
best time, evaluations, the lower bound, the ratio, the kernel);
:func:`write_network_json` writes the table to the file of ``--network-json`` (checked
before anything runs by :func:`check_network_json`). :class:`NetworkPrinter` is the
observer when several layers run at once: one progress bar for the whole network, and
each layer's block printed whole when the layer finishes.

Examples
--------
>>> import argparse
>>> check_network_json(argparse.Namespace(network_json=None, network=None))
>>> check_network_json(argparse.Namespace(network_json="t.json", network=None))
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: --network-json needs --network NAME (a table of the network's layers)
"""

from __future__ import annotations

import json
import math
import threading

from iobound.errors import InvalidInputError
from iobound.wording import counted
from search.session.settings import Observer

from .common import ms_text

__all__ = ["check_network_json", "finish_network", "write_network_json", "print_network",
           "NetworkPrinter"]


def check_network_json(args, layers=(), settings=None) -> None:
    """Refuse a ``--network-json`` without ``--network``, a path that cannot be written, an
    existing tuning database or log, or the file of ``--history``, of ``--log`` or
    ``--resume`` as given (a later ``--resume FILE`` reads that name first) or per layer, of
    a layer's ``--export-cache`` (per-layer names, for ``layers`` with ``settings`` and
    ``args.algorithm``) or of a layer's best kernel in ``--out-dir`` (for ``layers``): the
    table would overwrite it.

    >>> import argparse
    >>> args = argparse.Namespace(network_json="t.db", network="alexnet", algorithm="direct",
    ...                           history="t.db")
    >>> check_network_json(args)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: --network-json 't.db' is also given as --history; give ...
    """
    if args.network_json is None:
        return
    if args.network is None:
        raise InvalidInputError("--network-json needs --network NAME (a table of the network's layers)")
    from search.outputs import check_distinct_files, check_not_tuning_data, check_output_file
    from search.session.files import continues_in_place, per_layer_path
    from search.session.plan import job_file_parts, kernel_files, layer_algorithms
    check_output_file("--network-json", args.network_json)
    pairs = layer_algorithms(layers, args.algorithm)
    parts = job_file_parts(pairs, args.algorithm)
    many = len(parts) > 1
    # a --log that is the --resume it continues is one file, not two (as check_outputs)
    log = None if settings is None or continues_in_place(settings.log, settings.resume) else settings.log
    given = [] if settings is None else [(flag, path) for flag, path in (
        ("--log", log), ("--resume", settings.resume)) if path]
    per_layer = [] if settings is None else [
        (flag, per_layer_path(path, part, many))
        for flag, path in (("--log", log), ("--resume", settings.resume),
                           ("--export-cache", settings.export_cache)) if path
        for part in parts]
    check_distinct_files([("--history", args.history), ("--network-json", args.network_json),
                          *given, *per_layer, *kernel_files(pairs, getattr(args, "out_dir", None))])
    check_not_tuning_data("--network-json", args.network_json)


def _table(args, jobs, reports, device, kind: str, skipped=()) -> dict:
    from search.session.network import network_table
    ex = jobs[0].settings.executor
    return network_table(reports, [j.settings.log or j.settings.resume for j in jobs],
                         network=args.network, device=device.name, measure=kind,
                         algorithm=args.algorithm, strategy=args.strategy, budget=args.budget,
                         seed=args.seed, executor=ex.executor if ex else None,
                         workers=ex.workers if ex else None, skipped=list(skipped))


def write_network_json(path: str, args, jobs, reports, device, kind: str, skipped=()) -> None:
    """Write the table, atomically (:func:`search.outputs.write_atomic`: an existing file
    stays as it was until the new one is complete); a failed write is an
    OutputWriteError (the logs keep everything).

    >>> import argparse, os, tempfile
    >>> args = argparse.Namespace(network="tiny", algorithm="direct", strategy="explorer",
    ...                           budget=3, seed=1)
    >>> from iobound.devices import get_device
    >>> from iobound.layer import ConvLayer
    >>> from search.session import TuneSettings, plan_layers, run_layers
    >>> layer = ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, name="c3")
    >>> path = os.path.join(tempfile.mkdtemp(), "t.json")
    >>> jobs = plan_layers([layer], get_device("v100"), TuneSettings(budget=3, seed=1),
    ...                    measure="model", out_dir=os.path.dirname(path), verify=False)
    >>> write_network_json(path, args, jobs, run_layers(jobs, None), get_device("v100"), "model")
    >>> with open(path) as f:
    ...     table = json.load(f)
    >>> table["network"], [row["layer"] for row in table["layers"]], table["evaluations"]
    ('tiny', ['c3'], 3)
    """
    from search.session.files import OutputWriteError
    from search.outputs import write_atomic
    text = json.dumps(_table(args, jobs, reports, device, kind, skipped), indent=1,
                      default=str) + "\n"
    try:  # whole or not at all: a kill or a full disk never leaves a cut-off table
        write_atomic(path, text.encode("utf-8"))
    except OSError as exc:
        raise OutputWriteError(f"could not write --network-json {path} ({exc.strerror or exc}); "
                               "every layer's measurements are kept in its log") from None


def finish_network(args, jobs, reports, device, kind: str, skipped=()) -> None:
    """After a network run: the table printed (unless ``--json``), and ``--network-json``;
    ``skipped`` (``[{"layer", "reason"}]``) the network's layers the algorithm leaves out.

    >>> import argparse, os, tempfile
    >>> from iobound.devices import get_device
    >>> from iobound.layer import ConvLayer
    >>> from search.session import TuneSettings, plan_layers, run_layers
    >>> a100, tmp = get_device("a100"), tempfile.mkdtemp()
    >>> jobs = plan_layers([ConvLayer(n=2, c_in=4, h_in=5, w_in=5, c_out=8, k_h=1, k_w=1,
    ...                               name="pw")], a100, TuneSettings(budget=1, seed=2),
    ...                    measure="model", out_dir=tmp, verify=False)
    >>> args = argparse.Namespace(network="tiny", algorithm="direct", strategy="explorer",
    ...                           budget=1, seed=2, json=True, network_json=f"{tmp}/net.json")
    >>> finish_network(args, jobs, run_layers(jobs, None), a100, "model")  # --json: no table
    >>> sorted(os.listdir(tmp))
    ['net.json', 'pw_direct_best.cu']
    """
    if not args.json:
        print_network(args, jobs, reports, device, kind, skipped)
    if args.network_json:
        write_network_json(args.network_json, args, jobs, reports, device, kind, skipped)


def print_network(args, jobs, reports, device, kind: str, skipped=()) -> None:
    """The table, one line per layer (``*``: an analytic estimate; ``w``: emulated words);
    with ``--algorithm all`` the algorithm each layer's fastest kernel uses, and the
    others' best costs.

    >>> import argparse, tempfile
    >>> from iobound.devices import get_device
    >>> from iobound.layer import ConvLayer
    >>> from search.session import TuneSettings, plan_layers, run_layers
    >>> layers = [ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=k, k_w=k, padding=k // 2,
    ...                     name=f"k{k}") for k in (3, 1)]
    >>> jobs = plan_layers(layers, get_device("v100"), TuneSettings(strategy="random", budget=2,
    ...                    seed=0), measure="model", out_dir=tempfile.mkdtemp(), verify=False)
    >>> args = argparse.Namespace(network="tiny", algorithm="direct", strategy="random",
    ...                           budget=2, seed=0)
    >>> print_network(args, jobs, run_layers(jobs, None), get_device("v100"), "model")
    layer                            best evals  bound (words) io/bound  kernel
    k3                           0.00604*     2            432     2.44  .../k3_direct_best.cu
    k1                          0.005494*     2            304     1.58  .../k1_direct_best.cu
    2 of 2 layers tuned; 4 evaluations
    every layer's best, one after another: 0.01153 ms, estimated (analytic model)
    """
    table = _table(args, jobs, reports, device, kind, skipped)
    every = args.algorithm == "all"
    print(f"{'layer':<26} " + (f"{'algorithm':<9} " if every else "")
          + f"{'best':>10} {'evals':>5} {'bound (words)':>14} {'io/bound':>8}  kernel")
    for row in table["layers"]:
        bound = f"{row['lower_bound_words']:,.0f}" if row["lower_bound_words"] is not None else "-"
        ratio = f"{row['ratio_to_bound']:.2f}" if row["ratio_to_bound"] is not None else "-"
        same = f"  (same shape as {row['same_as']})" if row["same_as"] else ""
        others = [f"{c['algorithm']} {_cost(c['best_cost'], row)}" for c in row["candidates"]
                  if c["algorithm"] != row["algorithm"]]
        also = f"  ({', '.join(others)})" if every and others else ""
        print(f"{row['layer']:<26} " + (f"{row['algorithm'] or '-':<9} " if every else "")
              + f"{_cost(row['best_cost'], row):>10} {row['evaluations']:>5} {bound:>14} "
              f"{ratio:>8}  {row['kernel'] or '-'}{same}{also}")
    repeated = sum(row["same_as"] is not None for row in table["layers"])
    left_out = (f" ({len(skipped)} more left out: {args.algorithm} does not compute them)"
                if skipped else "")
    print(f"{table['tuned']} of {counted(len(table['layers']), 'layer')} tuned{left_out}; "
          f"{counted(table['evaluations'], 'evaluation')}"
          + (f"; {repeated} with the shape of an earlier layer took its result "
             f"(--tune-repeats to tune them too)" if repeated else ""))
    if table["total_time_ms"] is not None:
        kind = "estimated (analytic model)" if table["estimate"] else "measured"
        whose = "every tuned layer's best" if skipped else "every layer's best"
        print(f"{whose}, one after another: {table['total_time_ms']:.4g} ms, {kind}")


def _cost(cost, row) -> str:
    """A best cost as the table prints it (``*``: estimate; ``w``: emulated words)."""
    if cost is None:
        return "-"
    return f"{cost:.4g}w" if row["cost_unit"] == "words" else ms_text(cost, row["estimate"])


class NetworkPrinter(Observer):
    """The observer for layers tuned at once (see the module doc); ``print_layer(report)``
    prints one layer's block.

    >>> import tempfile
    >>> from iobound.devices import get_device
    >>> from iobound.layer import ConvLayer
    >>> from search.session import TuneSettings, plan_layers, run_layers
    >>> jobs = plan_layers([ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1, k_w=1,
    ...                               name="p1")], get_device("v100"),
    ...                    TuneSettings(strategy="random", budget=2, seed=0), measure="model",
    ...                    out_dir=tempfile.mkdtemp(), verify=False)
    >>> _ = run_layers(jobs, NetworkPrinter(2, lambda rep: print(f"  {rep.evaluations} evals")))
    started p1  n1 4x6x6 -> 4x6x6 k1x1 s1x1 p0x0  (1,455 configurations)
    iobound tune: p1  n1 4x6x6 -> 4x6x6 k1x1 s1x1 p0x0  (direct)
      2 evals
    <BLANKLINE>
    """

    def __init__(self, total: int, print_layer, unit: str = "ms"):
        from search.progress import ProgressBar
        self.bar = ProgressBar(total, label="network", unit=unit)
        self.print_layer = print_layer
        self.total, self.finished_evals = total, 0
        self.running: dict[int, int] = {}  # driver thread -> its layer's evaluations so far
        self.noticed: set[str] = set()

    def _draw(self) -> None:
        self.bar(self.finished_evals + sum(self.running.values()), self.total, math.inf)

    def layer_started(self, job, space) -> None:
        self.bar.close()
        which = f" {job.algorithm}" if job.per_algorithm else ""  # --algorithm all
        print(f"started {job.layer.name}{which}  {job.layer.short()}  "
              f"({len(space):,} configurations)", flush=True)

    def progress(self, done, budget, best) -> None:
        self.running[threading.get_ident()] = done
        self._draw()

    def tuning_done(self) -> None:
        self.finished_evals += self.running.pop(threading.get_ident(), 0)

    def notice(self, text: str) -> None:
        from .common import print_notice
        self.bar.close()
        print_notice(text, self.noticed)

    def finished(self, report) -> None:
        self.bar.close()
        print(f"iobound tune: {report.layer.name}  {report.layer.short()}  ({report.algorithm})")
        self.print_layer(report)
        print(flush=True)
        self._draw()
