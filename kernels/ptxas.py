"""Read the resource usage ptxas prints with ``-Xptxas -v`` (registers, shared memory, spills).

Examples
--------
>>> log = '''ptxas info    : Compiling entry function 'k' for 'sm_80'
... ptxas info    : Function properties for k
...     0 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
... ptxas info    : Used 72 registers, used 1 barriers, 432 bytes smem, 376 bytes cmem[0]'''
>>> info = parse_ptxas(log)["k"]
>>> info.registers, info.shared_bytes, info.spill_stores, info.spill_loads
(72, 432, 8, 4)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["PtxasInfo", "parse_ptxas"]


@dataclass(frozen=True)
class PtxasInfo:
    """Resource usage ptxas reported for one entry function.

    A count ptxas did not print reads as 0:

    >>> info = parse_ptxas("ptxas info    : Compiling entry function 'k' for 'sm_80'")["k"]
    >>> info.arch, info.registers, info.shared_bytes, info.stack_bytes
    ('sm_80', 0, 0, 0)
    """

    function: str
    arch: str
    registers: int
    shared_bytes: int
    spill_stores: int
    spill_loads: int
    stack_bytes: int


_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(\w+)'")
# A count is at most 18 digits, a whole run of digits (a longer one is no count ptxas
# prints, and int() refuses more than 4300 digits): such a line reads as not reported.
_N = r"(?<!\d)(\d{1,18})"
_PROPS = re.compile(_N + r" bytes stack frame, " + _N + r" bytes spill stores, " + _N
                    + r" bytes spill loads")
_USED = re.compile(r"Used " + _N + r" registers")
_SMEM = re.compile(_N + r" bytes smem")


def parse_ptxas(text: str) -> dict[str, PtxasInfo]:
    """Per entry function, the registers, shared memory, spills and stack ptxas reported
    (a count of more than 18 digits is read as not reported).

    >>> log = '''ptxas info    : Compiling entry function 'a' for 'sm_70'
    ... ptxas info    : Used 32 registers, 380 bytes cmem[0]
    ... ptxas info    : Compiling entry function 'b' for 'sm_70'
    ... ptxas info    : Used 40 registers, 1024 bytes smem'''
    >>> {name: (i.registers, i.shared_bytes) for name, i in parse_ptxas(log).items()}
    {'a': (32, 0), 'b': (40, 1024)}
    >>> parse_ptxas("nvcc fatal   : Unsupported gpu architecture 'compute_10'")
    {}
    """
    if not isinstance(text, str):
        from iobound.errors import InvalidInputError
        raise InvalidInputError(f"ptxas output must be text, got {type(text).__name__}")
    out: dict[str, PtxasInfo] = {}
    current: dict | None = None
    for line in text.splitlines():
        if m := _ENTRY.search(line):
            current = dict(function=m.group(1), arch=m.group(2), registers=0, shared_bytes=0,
                           spill_stores=0, spill_loads=0, stack_bytes=0)
            out[current["function"]] = PtxasInfo(**current)
            continue
        if current is None:
            continue
        if m := _PROPS.search(line):
            current.update(stack_bytes=int(m.group(1)), spill_stores=int(m.group(2)),
                           spill_loads=int(m.group(3)))
        if m := _USED.search(line):
            current["registers"] = int(m.group(1))
            if s := _SMEM.search(line):
                current["shared_bytes"] = int(s.group(1))
        out[current["function"]] = PtxasInfo(**current)
    return out
