"""``iobound tune --resume FILE`` on its own: the run's command from its log's header.

An interrupted run says ``resume with --resume run.jsonl``. Its log's header records what
the run tuned (the layer, device, algorithm and measurer, or the replayed file) and how
(strategy, budget, seed, history database), so a command that names no layer, network
or measurer takes them from there; an option the command gives is kept (a larger
``--budget``, another ``--strategy``: a resume allows them). What the header cannot say
(``--export-cache``, ``--executor``, ``--batch-size``, ``--out-dir``) is as the command
gives it. A ``--network`` run's logs are one per layer (``run.<layer>.jsonl``, or
``run.<layer>.<algorithm>.jsonl`` with ``--algorithm all``): a resume name that is no log
but names such logs of one network's layers resumes that network, the rest taken from
the header of its first layer's log (its command's ``--parallel-layers``,
``--tune-repeats`` and ``--network-json`` are as the command gives them). One layer's logs
per algorithm are that layer tuned with ``--algorithm all`` (or a network stopped in its
first layer: the smaller run is resumed).

Examples
--------
>>> spec_of({"n": 1, "c_in": 64, "h_in": 56, "w_in": 56, "c_out": 64, "k_h": 3, "k_w": 3,
...          "stride": [1, 1], "padding": [1, 1], "dilation": [1, 1], "groups": 1})
'n=1,cin=64,hin=56,win=56,cout=64,kh=3,kw=3,stride=1x1,pad=1x1,dilation=1x1,groups=1'
>>> spec_of({"name": "alexnet.conv1", **get_layer("alexnet.conv1").to_dict()})
'alexnet.conv1'
"""

from __future__ import annotations

from pathlib import Path

from iobound.errors import IoboundError, InvalidInputError
from iobound.layer import ConvLayer
from iobound.networks import get_layer

__all__ = ["fill_from_log", "spec_of"]

_KINDS = {int: "an integer", str: "text"}


def spec_of(layer: dict) -> str:
    """The ``--layer`` spec of a logged layer: its preset's name when it names a preset of
    that shape, else its shape as ``key=value`` pairs.

    >>> spec_of({**get_layer("alexnet.conv1").to_dict(), "name": "alexnet.conv2"})
    'n=1,cin=3,hin=227,win=227,cout=96,kh=11,kw=11,stride=4x4,pad=0x0,dilation=1x1,groups=1'
    """
    shape = ConvLayer.from_dict(layer)
    try:
        if get_layer(layer.get("name") or "").replace(name="") == shape.replace(name=""):
            return layer["name"]
    except IoboundError:  # not a preset's name (a layer given by its shape)
        pass

    def pair(v) -> str:
        return f"{v[0]}x{v[1]}"
    return (f"n={shape.n},cin={shape.c_in},hin={shape.h_in},win={shape.w_in},"
            f"cout={shape.c_out},kh={shape.k_h},kw={shape.k_w},stride={pair(shape.stride)},"
            f"pad={pair(shape.padding)},dilation={pair(shape.dilation)},groups={shape.groups}")


def fill_from_log(args) -> str | None:
    """Complete ``args`` of ``iobound tune`` from the header of ``args.resume`` when the
    command names no ``--layer``, ``--network`` or ``--measure``; the notice saying what
    was taken (``None`` when nothing was). ``args.seed`` is 0 when neither gives one.
    A header without what a run needs is refused in one line, naming the file.

    >>> import os, tempfile
    >>> from search.cli.main import build_parser
    >>> from search.log_writer import header_line
    >>> log = os.path.join(tempfile.mkdtemp(), "run.jsonl")
    >>> with open(log, "w") as f:
    ...     print(header_line({"layer": get_layer("alexnet.conv1").to_dict(),
    ...                        "measurer": {"name": "model"}, "seed": 3}), file=f)
    >>> args = build_parser().parse_args(["tune", "--resume", log, "--budget", "16"])
    >>> fill_from_log(args).split(" records: ")[1], args.budget
    ('--layer alexnet.conv1 --measure model --seed 3', 16)
    """
    alone = args.resume and all(v is None for v in (args.layer, args.network, args.measure))
    source, taken = _taken(args) if alone else (args.resume, [])
    args.seed = 0 if args.seed is None else args.seed
    if not taken:
        return None
    where = source if source == args.resume else f"{source} (a layer's log of {args.resume})"
    return f"resuming as {where} records: " + " ".join(taken)


def _taken(args) -> tuple[str, list[str]]:
    """The log whose header is read, and the options taken from it."""
    from search.log_writer import check_appendable
    from search.records import read_log
    from search.session.files import continues_in_place
    from search.session.history_use import HISTORY_DB
    network, source, per_algorithm = None, args.resume, False
    if not Path(args.resume).is_file():  # a network's resume name, or a missing file
        network, source, per_algorithm, layers = _network_logs(args.resume)
        if per_algorithm and layers == 1:  # one layer tuned with every algorithm (or a
            network = None                 # network stopped in its first: the smaller run)
    header = read_log(source).header   # a file that is no log is named as what it is
    if not args.log or continues_in_place(args.log, args.resume):  # the run appends to it
        check_appendable(source)   # refused before a notice says what was taken from it
    taken: list[str] = []

    def take(attr: str, flag: str, value, kind: type = str) -> None:
        if value is None or getattr(args, attr) is not None:
            return
        if not isinstance(value, kind) or isinstance(value, bool):  # a damaged header
            raise InvalidInputError(f"--resume {args.resume}: its header's {flag} "
                                    f"{str(value)[:40]!r} is not {_KINDS[kind]}; give {flag}")
        setattr(args, attr, value)
        taken.append(f"{flag} {value}")

    measurer = header.get("measurer") if isinstance(header.get("measurer"), dict) else {}
    named = isinstance(measurer.get("name"), str)
    if network is not None and named:
        args.network = network
        taken.append(f"--network {network}")
    elif network is None and isinstance(header.get("replay"), str):
        take("measure", "--measure", f"replay:{header['replay']}")
    elif network is None and isinstance(header.get("layer"), dict) and named:
        try:
            take("layer", "--layer", spec_of(header["layer"]))
        except IoboundError as exc:
            raise InvalidInputError(f"--resume {args.resume}: its header's layer is not one "
                                    f"({exc})") from None
    else:
        raise InvalidInputError(f"--resume {args.resume}: the header of {source} names no "
                                "layer and measurer, nor a replayed file; give the run's "
                                "--layer (or --network) and --measure")
    if args.measure is None:  # a layer's or a network's
        from search.session.plan import ALL_ALGORITHMS
        take("measure", "--measure", measurer["name"])
        take("device", "--device", _preset(header.get("device")))
        take("algorithm", "--algorithm", ALL_ALGORITHMS if per_algorithm else header.get("algorithm"))
    if args.zero_shot is None:
        take("strategy", "--strategy", header.get("strategy"))
        take("budget", "--budget", header.get("budget"), int)
    take("seed", "--seed", header.get("seed"), int)
    take("history", "--history", header.get(HISTORY_DB))
    return source, taken


def _network_logs(resume: str) -> tuple[str, str, bool, int]:
    """The network whose layers' logs the resume name ``resume`` names, the log of its
    first layer that has one, whether the logs are per algorithm (``--algorithm all``)
    and how many of its layers have one; one line naming what is wrong when no network's
    logs, or several kinds, are there."""
    from iobound.algorithms import ALGORITHMS
    from iobound.networks import network_layers, network_names
    from search.records import has_log
    from search.session.files import file_part, per_layer_path

    found = []
    for network in network_names():
        for per_algorithm in (False, True):
            algorithms = ALGORITHMS if per_algorithm else (None,)
            first, layers = None, 0  # the first log, and how many layers have one
            for layer in network_layers(network):
                paths = [per_layer_path(resume, file_part(layer, a), True) for a in algorithms]
                logs = [p for p in paths if has_log(p)]
                if logs:
                    first, layers = first or logs[0], layers + 1
            if layers:
                found.append((network, first, per_algorithm, layers))
    if not found:  # the command would fail on what it does not name
        raise InvalidInputError(
            f"--resume {resume}: no log of one run there, nor a network's logs "
            f"(<name>.<layer>.jsonl); give --layer SPEC or --network NAME as the run was started")
    if len(found) > 1:
        kinds = ", ".join(f"{n}{' per algorithm' if a else ''}" for n, _, a, _ in found)
        raise InvalidInputError(f"--resume {resume}: logs of several network runs there "
                                f"({kinds}); give --network NAME (and --algorithm)")
    return found[0]


def _preset(name) -> str | None:
    """``name`` when it is a device preset's; ``None`` for a GPU without one (``--measure
    cuda`` then takes the GPU's own, as the run did)."""
    from iobound.devices import get_device
    try:
        return get_device(name).name if isinstance(name, str) else None
    except IoboundError:
        return None
