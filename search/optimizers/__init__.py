"""Model optimizers: search a space for configurations a cost model predicts to be fast.

One interface (:class:`~.base.ModelOptimizer`, ``propose(model, space, n, exclude,
rng, best)``) and two implementations, each with its own frozen options:
:class:`~.walk.WalkOptimizer` (:class:`~.walk.WalkOptions`; the paper's parallel
random walks) and :class:`~.anneal.AnnealOptimizer` (:class:`~.anneal.AnnealOptions`;
AutoTVM's simulated annealing). :func:`make_optimizer` builds the one that an
options object belongs to, so a strategy's options name its optimizer by type.

Examples
--------
>>> type(make_optimizer(AnnealOptions())).__name__
'AnnealOptimizer'
>>> make_optimizer({"n_walkers": 4})
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: no model optimizer takes dict; options must be one of AnnealOptions, WalkOptions
"""

from __future__ import annotations

from iobound.errors import InvalidInputError

from .anneal import AnnealOptimizer, AnnealOptions
from .base import ModelOptimizer
from .walk import WalkOptimizer, WalkOptions

__all__ = ["ModelOptimizer", "WalkOptimizer", "WalkOptions", "AnnealOptimizer", "AnnealOptions",
           "OPTIMIZERS", "make_optimizer"]

#: options type -> optimizer class.
OPTIMIZERS: dict[type, type[ModelOptimizer]] = {WalkOptions: WalkOptimizer,
                                                AnnealOptions: AnnealOptimizer}


def make_optimizer(options) -> ModelOptimizer:
    """A fresh optimizer of the kind ``options`` configures.

    >>> type(make_optimizer(WalkOptions(n_walkers=4))).__name__
    'WalkOptimizer'
    >>> make_optimizer({"n_walkers": 4})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: no model optimizer takes dict; options must be one of ...
    """
    cls = OPTIMIZERS.get(type(options))
    if cls is None:
        names = ", ".join(sorted(t.__name__ for t in OPTIMIZERS))
        raise InvalidInputError(f"no model optimizer takes {type(options).__name__}; "
                         f"options must be one of {names}")
    return cls(options)
