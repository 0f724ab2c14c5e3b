"""The strategies the search-quality benchmark compares: the group names it takes
(``ours``, ``kt``, ``kt:all``) expanded, and every name checked before any run.

Examples
--------
>>> expand_strategies(["ours", "kt"])[:5]
['explorer', 'random', 'ga', 'sa', 'kt:random_sample']
"""

from __future__ import annotations

from .kt_runner import KT_DEFAULT_STRATEGIES, KT_EXTRA_STRATEGIES
from .our_runner import OUR_DEFAULT_STRATEGIES

__all__ = ["expand_strategies", "check_strategy_names"]


def expand_strategies(names: list[str]) -> list[str]:
    """Strategy names; ``ours`` and ``kt`` stand for the default groups, ``kt:all`` adds
    Kernel Tuner's further strategies.

    Examples
    --------
    >>> expand_strategies(["ours", "kt:pso"])
    ['explorer', 'random', 'ga', 'sa', 'kt:pso']
    """
    out: list[str] = []
    for n in names:
        if n == "ours":
            out += OUR_DEFAULT_STRATEGIES
        elif n == "kt":
            out += [f"kt:{s}" for s in KT_DEFAULT_STRATEGIES]
        elif n == "kt:all":
            out += [f"kt:{s}" for s in KT_DEFAULT_STRATEGIES + KT_EXTRA_STRATEGIES]
        else:
            out.append(n)
    return list(dict.fromkeys(out))


def check_strategy_names(strategies: list[str]) -> None:
    """Refuse (``SystemExit``) a name neither ours nor ``kt:`` + one of Kernel Tuner's,
    before any run or write (a bad name used to fail each of its runs, and the outputs
    were written all the same)."""
    from search.strategies import strategy_names

    ours = strategy_names()
    bad = [s for s in strategies if not s.startswith("kt:") and s not in ours]
    if bad:
        raise SystemExit(f"error: unknown strategy {bad[0]!r}; ours are {', '.join(ours)} "
                         "(or the group 'ours'); Kernel Tuner's are kt:NAME, 'kt' or 'kt:all'")
    kt_names = [s[3:] for s in strategies if s.startswith("kt:")]
    if kt_names:
        from kernel_tuner.interface import strategy_map

        bad = [n for n in kt_names if n not in strategy_map]
        if bad:
            raise SystemExit(f"error: unknown Kernel Tuner strategy 'kt:{bad[0]}'; choose kt:NAME, "
                             f"NAME one of {', '.join(sorted(strategy_map))}")
