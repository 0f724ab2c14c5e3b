"""``iobound tune --resume FILE`` on its own: the run's command from its log's header.

An interrupted run says ``resume with --resume run.jsonl``. Its log's header records what
the run tuned (the layer, device, algorithm and measurer, or the replayed file) and how
(strategy, budget, seed, history database), so a command that names no layer, network
or measurer takes them from there; an option the command gives is kept (a larger
``--budget``, another ``--strategy``: a resume allows them). What the header cannot say
(``--export-cache``, ``--executor``, ``--batch-size``, ``--out-dir``) is as the command
gives it. A ``--network`` run's logs are one per layer (``run.<layer>.jsonl``): its
resume name is no log, so it is resumed with its command.

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
    that shape, else its shape as ``key=value`` pairs."""
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
    A header without what a run needs is refused in one line, naming the file."""
    alone = args.resume and not (args.layer or args.network or args.measure)
    taken = _taken(args) if alone else []
    args.seed = 0 if args.seed is None else args.seed
    if not taken:
        return None
    return f"resuming as {args.resume} records: " + " ".join(taken)


def _taken(args) -> list[str]:
    from search.records import read_log
    if not Path(args.resume).is_file():  # a network's resume name, or a missing file:
        raise InvalidInputError(     # the command would fail on what it does not name
            f"--resume {args.resume}: no log of one run there (a --network run's logs are "
            f"<name>.<layer>.jsonl); give --layer SPEC or --network NAME as the run was started")
    header = read_log(args.resume).header
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
    if isinstance(header.get("replay"), str):
        take("measure", "--measure", f"replay:{header['replay']}")
    elif isinstance(header.get("layer"), dict) and isinstance(measurer.get("name"), str):
        try:
            take("layer", "--layer", spec_of(header["layer"]))
        except IoboundError as exc:
            raise InvalidInputError(f"--resume {args.resume}: its header's layer is not one "
                                    f"({exc})") from None
        take("measure", "--measure", measurer["name"])
        take("device", "--device", _preset(header.get("device")))
        take("algorithm", "--algorithm", header.get("algorithm"))
    else:
        raise InvalidInputError(f"--resume {args.resume}: its header names no layer and "
                                "measurer, nor a replayed file; give the run's --layer and "
                                "--measure")
    if args.zero_shot is None:
        take("strategy", "--strategy", header.get("strategy"))
        take("budget", "--budget", header.get("budget"), int)
    take("seed", "--seed", header.get("seed"), int)
    take("history", "--history", header.get("history_db"))
    return taken


def _preset(name) -> str | None:
    """``name`` when it is a device preset's; ``None`` for a GPU without one (``--measure
    cuda`` then takes the GPU's own, as the run did)."""
    from iobound.devices import get_device
    try:
        return get_device(name).name if isinstance(name, str) else None
    except IoboundError:
        return None
