"""An executor behind the measurer interface, so today's tuner loop can use it unchanged.

:class:`ExecutorMeasurer` wraps a measurer and an executor: ``measure_iter`` sends the
batch to the executor and yields the records **in the order of the configurations**
(holding back those that finish before an earlier one), which is what
``search.tuner.tune`` expects from a measurer today. Its name, ``describe()`` and
``toolchain()`` are the wrapped measurer's, so logs and resume checks see no difference.
Once the tuner consumes :func:`search.executors.measure_batch` (records in completion
order) this bridge is no longer needed.

Examples
--------
>>> from search.grid_space import GridSpace
>>> from search.tuner import tune
>>> from search.measure.replay import ReplayMeasurer
>>> from search.kt_cache import KtCache
>>> from search.executors import make_executor
>>> m = ReplayMeasurer(KtCache(tune_params={"a": [1, 2, 3]}, entries=[
...     {"a": 1, "time": 3.0}, {"a": 2, "time": 1.0}, {"a": 3, "time": 2.0}]))
>>> with make_executor(m, workers=2) as ex:
...     res = tune(GridSpace({"a": [1, 2, 3]}), ExecutorMeasurer(m, ex), "grid", budget=3)
>>> res.best.config, res.measure
({'a': 2}, 'replay')
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping, Sequence

from iobound.errors import InvalidInputError
from search.measure.base import MeasureRecord, Measurer, check_configs, invalid_config
from search.option_checks import check_type, shown

from .base import Executor

__all__ = ["ExecutorMeasurer"]


class ExecutorMeasurer(Measurer):
    """``measurer``'s records, measured on ``executor`` (see the module doc).

    >>> from search.measure.replay import ReplayMeasurer
    >>> from search.kt_cache import KtCache
    >>> class Backwards:  # an executor stand-in that finishes a batch last first
    ...     def submit(self, batch):
    ...         return reversed([(i, MeasureRecord.ok(c, time_ms=1.0 + i)) for i, c in batch])
    >>> replay = ReplayMeasurer(KtCache(tune_params={"a": [1, 2]}, entries=[]))
    >>> m = ExecutorMeasurer(replay, Backwards())
    >>> m.name, [r.time_ms for r in m.measure([{"a": 1}, {"a": 2}])]  # in the order given
    ('replay', [1.0, 2.0])
    """

    def __init__(self, measurer: Measurer, executor: Executor):
        check_type("measurer", measurer, Measurer)  # here, not an error at the first batch
        if not callable(getattr(executor, "submit", None)):  # an Executor or a shared lane
            raise InvalidInputError(f"executor must be an Executor (make_executor) or a "
                                    f"SharedExecutor lane, got {shown(executor)}")
        self.measurer, self.executor = measurer, executor
        self.name, self.estimate = measurer.name, measurer.estimate

    def measure_iter(self, configs: Sequence[Mapping[str, Any]]) -> Iterator[MeasureRecord]:
        waiting: dict[int, MeasureRecord] = {}
        nxt = 0
        for position, record in self.measure_unordered(configs):
            waiting[position] = record
            while nxt in waiting:
                yield waiting.pop(nxt)
                nxt += 1

    def measure_unordered(self, configs: Sequence[Mapping[str, Any]]) -> Iterator[tuple[int, MeasureRecord]]:
        configs = check_configs(configs)
        bad = {i: invalid_config(c) for i, c in enumerate(configs)}
        yield from ((i, r) for i, r in bad.items() if r is not None)
        yield from self.executor.submit((i, c) for i, c in enumerate(configs) if bad[i] is None)

    def measure(self, configs: Sequence[Mapping[str, Any]]) -> list[MeasureRecord]:
        return list(self.measure_iter(configs))

    def describe(self) -> dict:
        return self.measurer.describe()

    def toolchain(self) -> str:
        return self.measurer.toolchain()

    def close(self) -> None:
        self.executor.close()
        self.measurer.close()
