"""Algorithm families as types: one object per algorithm, dispatched by type, not by string.

The theory layer declares what every algorithm has in the pebble game: its name (the
CLI/JSON vocabulary, ``"direct"`` or ``"winograd"``), whether it applies to a layer,
its parameter (Winograd's output tile ``e``) and its lower-bound functions. The layers
above register their own part of each family under the same name, each in a
:class:`Registry` of its own (dataflow: :data:`dataflow.families.DATAFLOWS`; kernels:
:data:`kernels.families.KERNELS`; search: :data:`search.domain_families.DOMAINS`), so
imports keep pointing one way (iobound <- dataflow <- kernels <- search).

Examples
--------
>>> get_algorithm("winograd").name, get_algorithm(DIRECT) is DIRECT
('winograd', True)
>>> ALGORITHMS
('direct', 'winograd')
>>> get_algorithm("fft")
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: unknown algorithm 'fft'; choose one of direct, winograd
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, Generic, Iterator, TypeVar

from . import limits
from .errors import InvalidInputError
from .layer import ConvLayer, takes_layer

__all__ = ["Algorithm", "Direct", "Winograd", "DIRECT", "WINOGRAD", "ALGORITHMS",
           "DEFAULT_WINOGRAD_E", "OFFERED_WINOGRAD_ES", "Registry", "get_algorithm",
           "algorithm_name", "BoundParts", "winograd_offered"]

#: Winograd's output tile e when none is given: F(2x2, r x r).
DEFAULT_WINOGRAD_E = 2
#: The Winograd output tiles e the search domain offers unless told otherwise.
OFFERED_WINOGRAD_ES = (2, 3, 4)

T = TypeVar("T")


@takes_layer
def winograd_offered(layer: ConvLayer) -> bool:
    """Whether Winograd is worth offering for ``layer``: it applies
    (:meth:`ConvLayer.winograd_problem`) and the kernel is at least 2 x 2 (F(e x e, 1 x 1)
    multiplies as often as the direct convolution, so it saves nothing). The rule of the
    algorithm-selection candidates, of ``tune --algorithm all`` and of the benchmarks.

    >>> [winograd_offered(ConvLayer(1, 4, 8, 8, 4, k, k)) for k in (3, 1)]
    [True, False]
    """
    return layer.winograd_applicable and layer.k_h >= 2


class Registry(Generic[T]):
    """Algorithm name -> one layer's object for it; unknown names are bad input.

    ``get`` takes a name or anything with a ``name`` (an :class:`Algorithm`).

    >>> r = Registry("widget"); _ = r.register("direct", 1)
    >>> r.get("direct"), r.get(DIRECT), r.names()
    (1, 1, ('direct',))
    >>> r.get("winograd")
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: unknown widget 'winograd'; choose one of direct
    """

    def __init__(self, what: str):
        self.what = what
        self._items: dict[str, T] = {}

    def register(self, name: str, item: T) -> T:
        """Add ``item`` under ``name`` (once) and return it."""
        if name in self._items:
            raise ValueError(f"{self.what} {name!r} is registered twice")
        self._items[name] = item
        return item

    def get(self, key) -> T:
        """The item of ``key`` (a name or an object with ``.name``)."""
        name = getattr(key, "name", key)
        try:
            return self._items[name]
        except (KeyError, TypeError):
            raise InvalidInputError(f"unknown {self.what} {name!r}; "
                                    f"choose one of {', '.join(self._items)}") from None

    def names(self) -> tuple[str, ...]:
        """Registered names, in registration order."""
        return tuple(self._items)

    def __contains__(self, key) -> bool:
        return getattr(key, "name", key) in self._items

    def __iter__(self) -> Iterator[T]:
        return iter(self._items.values())


@dataclass(frozen=True)
class BoundParts:
    """The bound functions' results for one layer, S (and e): values, leading terms,
    SymPy expressions and assumptions, each keyed by method.

    >>> parts = DIRECT.bound_parts(ConvLayer(1, 4, 6, 6, 4, 3, 3, padding=1), 64)
    >>> list(parts.values) == list(parts.expressions), parts.values["compulsory"]
    (True, 432.0)
    >>> sorted(set(parts.details) - set(parts.leading_terms))   # compulsory has no leading term
    ['compulsory']
    """

    values: dict
    leading_terms: dict
    expressions: dict
    details: dict


@dataclass(frozen=True)
class Algorithm(ABC):
    """One convolution algorithm in the pebble game (the theory's part of a family).

    >>> [(a.name, a.steps, a.tile_params) for a in (DIRECT, WINOGRAD)]
    [('direct', 2, ('x', 'y', 'z', 'alpha')), ('winograd', 4, ('e', 'x', 'y', 'z'))]
    """

    name: ClassVar[str] = ""
    #: Steps of the computation DAG (direct: products, sums; Winograd: 4 transforms).
    steps: ClassVar[int] = 0
    #: Tile parameters of its dataflow, in order.
    tile_params: ClassVar[tuple[str, ...]] = ()

    def problem(self, layer: ConvLayer) -> str | None:
        """Why the algorithm does not apply to ``layer``, or None when it does."""
        return None

    def applies_to(self, layer: ConvLayer) -> bool:
        """Whether the algorithm applies to ``layer``."""
        return self.problem(layer) is None

    def check(self, layer: ConvLayer) -> None:
        """Raise :class:`InvalidInputError` naming the field when it does not apply."""
        problem = self.problem(layer)
        if problem is not None:
            raise InvalidInputError(problem)

    def parameter(self, e) -> int | None:
        """The algorithm's parameter: ``e`` checked (Winograd); None for direct, which has no
        parameter and refuses one (an ``e`` passed over would read as used).

        >>> DIRECT.parameter(3)
        Traceback (most recent call last):
        ...
        iobound.errors.InvalidInputError: winograd e is only meaningful with algorithm 'winograd' (got e=3 for direct)
        """
        if e is not None:
            raise InvalidInputError(f"winograd e is only meaningful with algorithm 'winograd' "
                                    f"(got e={e!r:.20} for {self.name})")
        return None

    def label(self, layer: ConvLayer, e: int | None = None) -> str:
        """How reports title the algorithm for ``layer`` (``e`` from :meth:`parameter`)."""
        return self.name

    @abstractmethod
    def bound_parts(self, layer: ConvLayer, S: int, e: int | None) -> BoundParts:
        """Every lower bound of ``layer`` at ``S`` words (``e`` from :meth:`parameter`)."""

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Direct(Algorithm):
    """Direct convolution: every output a sum of ``R`` products.

    >>> strided = ConvLayer(1, 4, 8, 8, 4, 3, 3, stride=2)
    >>> DIRECT.applies_to(strided), DIRECT.parameter(None), DIRECT.label(strided)
    (True, None, 'direct')
    """

    name = "direct"
    steps = 2
    tile_params = ("x", "y", "z", "alpha")

    def bound_parts(self, layer, S, e=None):
        from . import direct_bounds as mod
        return BoundParts(mod.direct_bound_values(layer, S), mod.direct_leading_terms(layer, S),
                          mod.direct_bound_exprs(), mod.direct_bound_details(layer))


@dataclass(frozen=True)
class Winograd(Algorithm):
    """Winograd F(e x e, r x r): stride 1, square kernel, no dilation.

    >>> WINOGRAD.problem(ConvLayer(1, 4, 8, 8, 4, 3, 3, stride=2))
    'Winograd needs stride 1, got stride=(2, 2)'
    >>> WINOGRAD.parameter(None), WINOGRAD.parameter(4)   # e defaults to 2
    (2, 4)
    """

    name = "winograd"
    steps = 4
    tile_params = ("e", "x", "y", "z")

    def problem(self, layer):
        return layer.winograd_problem()

    def parameter(self, e):
        e = DEFAULT_WINOGRAD_E if e is None else e
        if isinstance(e, bool) or not isinstance(e, numbers.Integral) or e < 1:
            raise InvalidInputError(f"Winograd output tile e must be an integer >= 1, got {e!r}")
        return limits.check_winograd_e(e)

    def label(self, layer, e=None):
        """``winograd F(e x e, r x r)``.

        >>> WINOGRAD.label(ConvLayer(1, 1, 6, 6, 1, 3, 3), 2)
        'winograd F(2x2, 3x3)'
        """
        e = self.parameter(e)
        return f"{self.name} F({e}x{e}, {layer.k_h}x{layer.k_h})"

    def bound_parts(self, layer, S, e=None):
        from . import winograd_bounds as mod
        e = self.parameter(e)
        return BoundParts(mod.winograd_bound_values(layer, e, S), mod.winograd_leading_terms(layer, e, S),
                          mod.winograd_bound_exprs(), mod.winograd_bound_details(layer, e))


DIRECT = Direct()
WINOGRAD = Winograd()
_THEORY: Registry[Algorithm] = Registry("algorithm")
for _alg in (DIRECT, WINOGRAD):
    _THEORY.register(_alg.name, _alg)

#: The algorithm names: the CLI and JSON vocabulary.
ALGORITHMS = _THEORY.names()


def get_algorithm(algorithm: "str | Algorithm") -> Algorithm:
    """The :class:`Algorithm` of a name (or the object itself); unknown names are bad input.

    >>> type(get_algorithm("direct")).__name__, get_algorithm(WINOGRAD) is WINOGRAD
    ('Direct', True)
    """
    return _THEORY.get(algorithm)


def algorithm_name(algorithm: "str | Algorithm") -> str:
    """The checked name of ``algorithm`` (a name or an :class:`Algorithm`).

    >>> algorithm_name(WINOGRAD)
    'winograd'
    """
    return get_algorithm(algorithm).name
