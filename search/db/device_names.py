"""Which stored device names a device name given to a query stands for.

``iobound tune --device v100`` and ``history import --device v100`` store their records
under the preset's name, ``V100-SXM2`` (:func:`iobound.devices.canonical_device_name`);
an imported file keeps its own name (a Kernel Tuner cache's ``device_name``, any GPU's).
So one GPU can be held under several names: ``NVIDIA RTX A4000`` from a cache file and
``RTX-A4000`` from ``import --device a4000``. Two names are one device when they are
equal or name the same preset (:func:`same_device`); a name given to a query stands for
every name the database holds of its device (:func:`held_names`), so a question about a
device answers with all its records, and a device left out of a history is left out
under every name. A name of no preset stands only for itself.

Examples
--------
>>> held_names("v100", {"V100-SXM2", "Tesla V100-SXM2-16GB", "A100-PCIE-40GB"})
('Tesla V100-SXM2-16GB', 'V100-SXM2')
>>> held_names("my lab GPU", {"V100-SXM2"}), same_device("NVIDIA RTX A4000", "a4000")
((), True)
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from iobound.devices import canonical_device_name, check_device_name
from iobound.errors import InvalidInputError

from ..option_checks import check_type, shown

__all__ = ["same_device", "held_names", "held_devices", "device_as_stored", "devices_as_stored"]


def same_device(name: str, other: str) -> bool:
    """Whether the device names ``name`` and ``other`` are one device: equal, or names or
    aliases of the same preset.

    >>> same_device("v100", "V100-SXM2"), same_device("v100", "A100-PCIE-40GB")
    (True, False)
    """
    return name == other or canonical_device_name(name) == canonical_device_name(other)


def held_names(name: str, held: Iterable[str]) -> tuple[str, ...]:
    """The names among ``held`` (a collection of device names) that are ``name``'s device
    (:func:`same_device`), sorted.

    >>> held_names("v100", "V100-SXM2")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: held must be a collection of device names, got 'V100-SXM2'
    """
    check_type("name", name, str)
    if isinstance(held, (str, bytes)) or not isinstance(held, Iterable):
        raise InvalidInputError(f"held must be a collection of device names, got {shown(held)}")
    held = list(held)
    for d in held:
        check_type("a name of held", d, str)
    return tuple(sorted(d for d in held if same_device(name, d)))


def held_devices(conn) -> set[str]:
    """The device names the database of the connection ``conn`` holds.

    >>> from search.db.store import TuningDB
    >>> held_devices(TuningDB(":memory:").connection)
    set()
    """
    check_type("conn", conn, sqlite3.Connection)
    return {r[0] for r in conn.execute("SELECT name FROM devices")}


def device_as_stored(conn, name) -> tuple[str, ...]:
    """The names the database of ``conn`` holds of the device ``name`` (a device name:
    :func:`~iobound.devices.check_device_name`): :func:`held_names`, empty when it holds
    none.

    >>> from search.db import Measurement, TuningDB, Workload
    >>> from search.measure.base import MeasureRecord
    >>> db = TuningDB(":memory:")
    >>> _ = db.add([Measurement(Workload("k", [8], ("x",)), "V100-SXM2", "t",
    ...                         MeasureRecord.ok({"x": 1}, time_ms=1.0))])
    >>> device_as_stored(db.connection, "v100"), device_as_stored(db.connection, "a100")
    (('V100-SXM2',), ())
    """
    check_type("conn", conn, sqlite3.Connection)
    return held_names(check_device_name(name), held_devices(conn))


def devices_as_stored(conn, arg: str, names: Iterable[str]) -> set[str]:
    """Every name the database of ``conn`` holds of each device of ``names``, a
    collection of device names; a lone string is refused, since iterating it gives its
    characters (``exclude_devices="A100"`` would keep the target's records in its own
    history), and so is anything else that is not a collection of names.

    >>> from search.db.store import TuningDB
    >>> devices_as_stored(TuningDB(":memory:").connection, "exclude_devices", "A100")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: exclude_devices must be a list of device names, \
got the string 'A100' (write ['A100'] for one)
    """
    check_type("conn", conn, sqlite3.Connection)
    check_type("arg", arg, str)
    if isinstance(names, (str, bytes)):
        raise InvalidInputError(f"{arg} must be a list of device names, got the string "
                                f"{names!r} (write [{names!r}] for one)")
    if not isinstance(names, Iterable):
        raise InvalidInputError(f"{arg} must be a list of device names, got {shown(names)}")
    held = held_devices(conn)
    out = set()
    for name in names:
        try:
            check_device_name(name)
        except InvalidInputError as exc:
            raise InvalidInputError(f"{arg}: {exc}") from None
        out.update(held_names(name, held))
    return out
