"""Executors: measure a batch of configurations on many workers, records as they complete.

- ``local`` (:class:`~search.executors.local.LocalExecutor`): worker processes here;
- ``ray`` (:class:`~search.executors.ray_executor.RayExecutor`): a Ray cluster
  (``pip install iobound[distributed]``; Ray is imported only when this executor starts).

Build and run are separate stages (:mod:`search.executors.stages`); faults (a worker that
dies, a stage past the timeout) are retried and then recorded, never raised
(:mod:`search.executors.ledger`). :func:`measure_batch` is what the tuner calls;
:class:`ExecutorMeasurer` puts an executor behind today's measurer interface;
:class:`~search.executors.shared.SharedExecutor` shares one executor's workers among
the tuning loops of several layers running at once.

Examples
--------
>>> sorted(EXECUTORS)
['local', 'ray']
>>> make_executor(None, ExecutorOptions(), executor="nope")
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: executor must be one of local, ray; got 'nope'
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Iterator, Sequence

from iobound.errors import InvalidInputError
from search.measure.base import MeasureRecord, Measurer
from search.option_checks import check_type

from .base import Executor, batch_index
from .bridge import ExecutorMeasurer
from .options import ExecutorOptions
from .stages import Artifact, MeasurerStages, Stages, stages_for

__all__ = ["EXECUTORS", "Executor", "ExecutorMeasurer", "ExecutorOptions", "Stages", "Artifact", "MeasurerStages",
           "stages_for", "make_executor", "measure_batch"]

#: name -> "module:Class" (imported on first use, so Ray is never imported by ``import search``).
EXECUTORS = {
    "local": "search.executors.local:LocalExecutor",
    "ray": "search.executors.ray_executor:RayExecutor",
}


def make_executor(measurer, options: ExecutorOptions | None = None, **changes) -> Executor:
    """The executor ``options.executor`` for ``measurer`` (a Measurer or Stages; ``None``
    for one without stages of its own, whose jobs come through
    :class:`~search.executors.shared.SharedExecutor` lanes).

    ``changes`` override fields of ``options`` (``make_executor(m, workers=2)``) and are
    validated like them; a name that is no field is refused, listing the fields.

    >>> make_executor(None, bogus=1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: unknown executor option 'bogus'; allowed: executor, workers, ...
    """
    if measurer is not None:
        check_type("measurer", measurer, (Measurer, Stages))
    if options is not None:
        check_type("options", options, ExecutorOptions)
    allowed = [f.name for f in dataclasses.fields(ExecutorOptions)]
    unknown = [k for k in changes if k not in allowed]
    if unknown:
        raise InvalidInputError(f"unknown executor option {unknown[0]!r}; allowed: "
                                f"{', '.join(allowed)}")
    options = dataclasses.replace(options or ExecutorOptions(), **changes)
    module, _, cls = EXECUTORS[options.executor].partition(":")
    stages = None if measurer is None else stages_for(measurer)
    return getattr(importlib.import_module(module), cls)(stages, options)


def measure_batch(executor: Executor, space, indices: Sequence[int]
                  ) -> Iterator[tuple[int, MeasureRecord]]:
    """Measure the configurations ``indices`` of ``space``; ``(index, record)`` as each completes.

    Every index comes back exactly once, in completion order (not the order given).

    Examples
    --------
    >>> from search.grid_space import GridSpace
    >>> from search.measure.replay import ReplayMeasurer
    >>> from search.kt_cache import KtCache
    >>> space = GridSpace({"a": [1, 2]})
    >>> m = ReplayMeasurer(KtCache(tune_params={"a": [1, 2]}, entries=[{"a": 1, "time": 2.0}]))
    >>> with make_executor(m, workers=1) as ex:
    ...     sorted((i, r.status.value) for i, r in measure_batch(ex, space, [0, 1]))
    [(0, 'ok'), (1, 'invalid')]
    """
    indices, size = [batch_index(i) for i in indices], len(space)
    for i in indices:  # -1 would be the last configuration, silently
        if not 0 <= i < size:
            raise InvalidInputError(f"index {i} is outside the space of {size} configurations")
    yield from executor.submit((i, space.get(i)) for i in indices)
