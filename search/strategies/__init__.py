"""Search strategies behind one ask/tell interface, and their registry.

Strategies are imported lazily by name. Each takes its own frozen options
dataclass; :func:`make_options` builds it from a plain dict and rejects unknown
keys, listing the allowed ones.

Examples
--------
>>> strategy_names()
['explorer', 'ga', 'gga', 'grid', 'random', 'sa', 'zero_shot']
>>> make_options("random", {"batch_size": 4})
StrategyOptions(batch_size=4)
>>> make_options("random", {"bogus": 1})
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: unknown option 'bogus' for strategy 'random'; allowed: batch_size
>>> strategy_class("annealing")
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: unknown strategy 'annealing'; choose one of explorer, ga, gga, grid, random, sa, zero_shot
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any, Mapping

import numpy as np

from iobound.errors import InvalidInputError

from ..option_checks import shown
from .base import Strategy, StrategyOptions

__all__ = ["STRATEGIES", "strategy_names", "strategy_class", "make_options", "make_strategy",
           "Strategy", "StrategyOptions"]

#: name -> "module:Class".
STRATEGIES = {
    "explorer": "search.strategies.explorer:ExplorerStrategy",
    "random": "search.strategies.random:RandomStrategy",
    "grid": "search.strategies.grid:GridStrategy",
    "ga": "search.strategies.ga:GeneticStrategy",
    "gga": "search.strategies.gga:GuidedGAStrategy",
    "sa": "search.strategies.sa:SAStrategy",
    "zero_shot": "search.strategies.zero_shot:ZeroShotStrategy",
}


def strategy_names() -> list[str]:
    """The registered strategy names, sorted.

    >>> strategy_names()
    ['explorer', 'ga', 'gga', 'grid', 'random', 'sa', 'zero_shot']
    """
    return sorted(STRATEGIES)


def strategy_class(name: str) -> type[Strategy]:
    """The strategy class registered as ``name`` (a name that is not a string, such as a
    list, is unknown too: never a TypeError from the look-up).

    >>> strategy_class(["random"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: unknown strategy ['random']; choose one of explorer, ...
    """
    if not isinstance(name, str) or name not in STRATEGIES:
        raise InvalidInputError(f"unknown strategy {name!r}; choose one of {', '.join(strategy_names())}")
    module, _, cls = STRATEGIES[name].partition(":")
    return getattr(importlib.import_module(module), cls)


def _build(cls: type, values: Mapping[str, Any], where: str):
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = [k for k in values if k not in fields]
    if unknown:
        raise InvalidInputError(f"unknown option {unknown[0]!r} for {where}; allowed: {', '.join(fields)}")
    kw = {}
    for k, v in values.items():
        default = fields[k].default_factory() if fields[k].default_factory is not dataclasses.MISSING \
            else fields[k].default
        if dataclasses.is_dataclass(default) and isinstance(v, Mapping):
            v = _build(type(default), v, f"{where}.{k}")
        elif isinstance(default, tuple) and isinstance(v, list):
            v = tuple(v)
        kw[k] = v
    return cls(**kw)


def make_options(name: str, values: Mapping[str, Any] | None = None):
    """The options dataclass of strategy ``name`` from a dict (nested dicts for nested
    options); ``values`` that is not a mapping (``"batch_size=4"``, ``5``) is refused.

    >>> make_options("random", "batch_size=4")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: options of strategy 'random' must be a mapping of option names to values, got 'batch_size=4'
    """
    cls = strategy_class(name).Options
    if values is not None and not isinstance(values, Mapping):
        raise InvalidInputError(f"options of strategy {name!r} must be a mapping of option "
                                f"names to values, got {shown(values)}")
    return _build(cls, dict(values or {}), f"strategy {name!r}")


def make_strategy(name: str, space, options=None, rng: np.random.Generator | None = None) -> Strategy:
    """Construct strategy ``name`` over ``space``; ``options`` a dataclass, a dict or None.

    >>> from search.grid_space import GridSpace
    >>> space = GridSpace({"x": [1, 2, 3]})
    >>> strategy = make_strategy("random", space, rng=np.random.default_rng(0))
    >>> strategy.name, strategy.ask(2)  # indices of the space to measure next
    ('random', [2, 0])
    """
    if options is None or isinstance(options, Mapping):
        options = make_options(name, options)
    cls = strategy_class(name)
    foreign = _foreign_fields(options, cls.Options)
    if foreign:  # another strategy's options (all derive from StrategyOptions): ignored
        raise InvalidInputError(f"strategy {name!r} takes {cls.Options.__name__}, got "
                                f"{type(options).__name__} (its {', '.join(sorted(foreign))} "
                                f"would be ignored)")
    return cls(space, options, rng)


def _foreign_fields(options, expected: type) -> set[str]:
    """The fields of the dataclass ``options`` that ``expected`` lacks."""
    if not (dataclasses.is_dataclass(options) and dataclasses.is_dataclass(expected)):
        return set()
    return ({f.name for f in dataclasses.fields(options)}
            - {f.name for f in dataclasses.fields(expected)})
