"""The device name a tuning database holds for a name a user gives.

``iobound tune --device v100`` and ``history import --device v100`` store their records
under the preset's name, ``V100-SXM2`` (:func:`iobound.devices.canonical_device_name`);
an imported file keeps its own name (a Kernel Tuner cache's ``device_name``, any GPU's).
So a name given to a query is the stored one when the database holds it, else its
preset's name; a name of no preset stays as given.

Examples
--------
>>> stored_device_name("v100", {"V100-SXM2"}), stored_device_name("v100", {"v100"})
('V100-SXM2', 'v100')
>>> stored_device_name("my lab GPU", {"V100-SXM2"})
'my lab GPU'
"""

from __future__ import annotations

from collections.abc import Container, Iterable

from iobound.devices import canonical_device_name, check_device_name
from iobound.errors import InvalidInputError

from ..option_checks import shown

__all__ = ["stored_device_name", "held_devices", "device_as_stored", "devices_as_stored"]


def stored_device_name(name: str, held: Container[str]) -> str:
    """``name`` as a database holding the device names ``held`` stores it (module doc)."""
    return name if name in held else canonical_device_name(name)


def held_devices(conn) -> set[str]:
    """The device names the database of the connection ``conn`` holds."""
    return {r[0] for r in conn.execute("SELECT name FROM devices")}


def device_as_stored(conn, name) -> str:
    """``name`` (a device name: :func:`~iobound.devices.check_device_name`) as the database
    of ``conn`` stores it (:func:`stored_device_name`)."""
    return stored_device_name(check_device_name(name), held_devices(conn))


def devices_as_stored(conn, arg: str, names: Iterable[str]) -> set[str]:
    """Each of ``names``, a collection of device names, as the database of ``conn`` stores
    it; a lone string is refused, since iterating it gives its characters
    (``exclude_devices="A100"`` would keep the target's records in its own history), and
    so is anything else that is not a collection of names.

    >>> from search.db.store import TuningDB
    >>> devices_as_stored(TuningDB(":memory:").connection, "exclude_devices", "A100")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: exclude_devices must be a list of device names, \
got the string 'A100' (write ['A100'] for one)
    """
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
        out.add(stored_device_name(name, held))
    return out
