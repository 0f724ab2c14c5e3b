"""How a session tunes: the settings, the builders it calls (seams), and the observer hooks.

:class:`TuneSettings` holds what every layer (or a replayed space) is tuned with:
strategy, budget, seed, options, patience, and the run's files (log, resume,
history database, exported cache). :class:`Builders` are the functions that make
the space, the measurer and the strategy; swap one to plug in another (a remote
measurer, a strategy warm-started from a tuning database). :class:`Observer` is
told as the session goes (the CLI prints with it); its hooks do nothing here.

Examples
--------
>>> TuneSettings(strategy="random", budget=8).options_dataclass()
StrategyOptions(batch_size=8)
>>> TuneSettings(budget=0)
Traceback (most recent call last):
...
iobound.errors.InvalidInputError: budget must be >= 1, got 0
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping

from iobound.errors import InvalidInputError

from ..measure import KERNEL_MEASURES, LAYER_MEASURES
from ..option_checks import check_callable, check_flag, check_path
from ..strategies import make_strategy
from ..tune_args import DEFAULT_BUDGET, DEFAULT_STRATEGY, check_run_numbers

if TYPE_CHECKING:  # pragma: no cover
    from iobound.device_spec import Device
    from iobound.layer import ConvLayer

    from ..measure.base import Measurer
    from ..space import Space

__all__ = ["TuneSettings", "Builders", "Observer", "LAYER_MEASURES"]



@dataclass(frozen=True)
class TuneSettings:
    """What a session tunes with (the same for every layer).

    Parameters
    ----------
    strategy : str
        A registered strategy name (:func:`search.strategies.strategy_names`).
    budget : int
        Unique configurations to measure per layer.
    seed : int
        Seeds the strategy; same seed, same run.
    options : dict, optional
        The strategy's options (e.g. ``{"batch_size": 4}``); unknown keys are refused.
    patience : int, optional
        Stop a layer after this many rounds without improvement.
    log, resume : path, optional
        The JSON-lines log to write, and a log to continue (per layer for several layers:
        ``run.jsonl`` becomes ``run.<layer>.jsonl``).
    history : path, optional
        An SQLite tuning database: the measurements are stored in it, and the strategies
        that learn from history (explorer, sa, ga, gga, zero_shot) read its records of
        this parameter space first.
    reuse : bool
        With ``history``: configurations this space has measurements of on this device
        with this toolchain in the database are answered from them instead of measured
        again (each counts toward the budget when the strategy asks for it, as a Kernel
        Tuner cache hit does; :class:`~search.tune_ledger.Ledger`).
    export_cache : path, optional
        Write the measurements as a Kernel Tuner cache file (per layer, like ``log``).
    executor : ExecutorOptions, optional
        Measure through an executor (:mod:`search.executors`: worker processes or Ray,
        builds in parallel, faults retried); ``None`` measures in this process.
    tune_repeats : bool
        Tune a layer whose shape an earlier layer of the same run has. By default
        (``False``) such a layer is not measured again: it takes that layer's result,
        winner and kernel (:func:`~search.session.run.run_layers`), as a compiler's
        task extraction tunes each distinct workload once.

    >>> from pathlib import Path
    >>> s = TuneSettings(strategy="random", budget=8, seed=1, log=Path("run.jsonl"))
    >>> s.strategy, s.budget, s.seed, s.log  # the log's Path is kept as its str
    ('random', 8, 1, 'run.jsonl')
    >>> TuneSettings(patience=0)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: patience must be >= 1, got 0
    """

    strategy: str = DEFAULT_STRATEGY
    budget: int = DEFAULT_BUDGET
    seed: int = 0
    options: Mapping[str, Any] | None = None
    patience: int | None = None
    log: str | None = None
    resume: str | None = None
    history: str | None = None
    reuse: bool = False
    export_cache: str | None = None
    executor: Any = None
    tune_repeats: bool = False

    def __post_init__(self) -> None:
        check_flag("tune_repeats", self.tune_repeats)
        check_flag("reuse", self.reuse)
        for name in ("log", "resume", "history", "export_cache"):  # named here, not a
            if getattr(self, name) is not None:  # TypeError from open() mid-session
                # a Path is kept as its str: messages and log headers name the file
                object.__setattr__(self, name, check_path(name, getattr(self, name)))
        if self.executor is not None:
            from ..executors.options import ExecutorOptions
            if not isinstance(self.executor, ExecutorOptions):
                raise InvalidInputError(f"executor must be an ExecutorOptions or None, "
                                        f"got {self.executor!r}")
        if self.reuse and not self.history:
            raise InvalidInputError("reuse (--reuse) needs the history database to reuse "
                                    "measurements from (--history DB)")
        check_run_numbers(self.budget, self.patience, self.seed)
        if self.options is not None and not isinstance(self.options, Mapping):
            raise InvalidInputError(f"options must be a mapping of option names to values, "
                                    f"got {self.options!r}")
        # an unknown strategy or option, or a value out of its range (batch_size past
        # iobound.limits.BATCH_SIZE): InvalidInputError naming it
        self.options_dataclass()

    def options_dataclass(self):
        """The strategy's frozen options built from :attr:`options`."""
        from ..strategies import make_options
        return make_options(self.strategy, self.options)


def default_space(layer: "ConvLayer", device: "Device", algorithm: str) -> "Space":
    """The Table 1 pruned :class:`~search.conv_space.ConvSpace` of the layer.

    >>> from iobound.layer import ConvLayer
    >>> space = default_space(ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3,
    ...                                 padding=1), "v100", "winograd")
    >>> len(space), space.params[0]
    (80, 'e')
    """
    from ..conv_space import ConvSpace
    return ConvSpace(layer, device, algorithm)


def default_measurer(kind: str, layer: "ConvLayer", device: "Device", algorithm: str) -> "Measurer":
    """The registered measurer ``kind`` (``cuda``, ``emulate`` or ``model``) for the layer.

    >>> from iobound.layer import ConvLayer
    >>> m = default_measurer("model", ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=1,
    ...                                         k_w=1), "v100", "direct")
    >>> m.estimate, m.toolchain().startswith("analytic model")
    (True, True)
    """
    from ..measure import make_measurer
    if kind == "model":
        return make_measurer("model", layer, device, algorithm)
    if kind in KERNEL_MEASURES:  # a kernel runs on the device it is given to
        return make_measurer(kind, layer, algorithm)
    raise InvalidInputError(f"measure must be one of {', '.join(LAYER_MEASURES)}; got {kind!r}")


@dataclass(frozen=True)
class Builders:
    """The functions a session builds its parts with (swap one to plug in another).

    Attributes
    ----------
    space : callable
        ``space(layer, device, algorithm) -> Space``.
    measurer : callable
        ``measurer(kind, layer, device, algorithm) -> Measurer``.
    strategy : callable
        ``strategy(name, space, options, rng) -> Strategy`` (passed to
        :func:`search.tuner.tune` as ``build_strategy``).

    >>> Builders(strategy=5)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: strategy must be callable, got 5
    """

    space: Callable[..., Any] = default_space
    measurer: Callable[..., Any] = default_measurer
    strategy: Callable[..., Any] = make_strategy

    def __post_init__(self) -> None:
        # each is called mid-session: a wrong one is refused here, not at its first call
        check_callable("space", self.space, "layer, device, algorithm")
        check_callable("measurer", self.measurer, "kind, layer, device, algorithm")
        check_callable("strategy", self.strategy, "name, space, options, rng")


class Observer:
    """What a session tells as it goes; every hook does nothing here (subclass to print).

    >>> from search.kt_cache import KtCache
    >>> from search.session import tune_replay
    >>> class Printer(Observer):
    ...     def progress(self, done, budget, best):
    ...         print(f"{done}/{budget}: best {best} ms")
    >>> cache = KtCache({"x": [1, 2, 3]}, [{"x": 1, "time": 3.0}, {"x": 2, "time": 1.0},
    ...                                    {"x": 3, "time": 2.0}])
    >>> _ = tune_replay(cache, TuneSettings(strategy="grid", budget=3), observer=Printer())
    1/3: best 3.0 ms
    2/3: best 2.0 ms
    3/3: best 1.0 ms
    """

    def layer_started(self, job, space) -> None:
        """A layer's space and measurer are built; tuning starts next."""

    def replay_started(self, file: str, space) -> None:
        """A recorded space is loaded; tuning starts next."""

    def progress(self, done: int, budget: int, best: float) -> None:
        """After each measurement: unique configurations done, the budget, the best cost."""

    def tuning_done(self) -> None:
        """The tuning loop ended (also when it raised)."""

    def notice(self, text: str) -> None:
        """Something to know that does not stop the run (e.g. ``gga`` without usable
        history runs as plain ``ga``)."""

    def finished(self, report) -> None:
        """A layer's (or the replay's) report is complete."""
