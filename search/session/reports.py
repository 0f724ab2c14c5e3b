"""What a tuning session reports per layer (or per replayed space): frozen dataclasses.

``to_dict()`` gives the JSON the CLI prints with ``--json`` (the tuning result's
keys first, then the session's).

Examples
--------
>>> from search.history import HistoryKey
>>> HistoryOutcome("h.db", HistoryKey("L", "v100", "model"), 0.5).to_dict()
{'db': 'h.db', 'key': {'layer': 'L', 'device': 'v100', 'toolchain': 'model'}, 'best_ever_ms': 0.5}
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from iobound.layer import ConvLayer

    from ..history import HistoryKey
    from ..tune_result import TuneResult
    from ..winner import WinnerReport
    from .history_use import HistoryUse

__all__ = ["HistoryOutcome", "ExportOutcome", "LayerReport", "ReplayReport"]


@dataclass(frozen=True)
class HistoryOutcome:
    """The run stored in a history database: where, under which key, the best ever there.

    >>> from search.history import HistoryKey
    >>> out = HistoryOutcome("h.db", HistoryKey("L", "v100", "model"), None)  # nothing ran ok
    >>> out.key.device, out.to_dict()["best_ever_ms"]
    ('v100', None)
    """

    db: str
    key: "HistoryKey"
    best_ever_ms: float | None

    def to_dict(self) -> dict:
        return {"db": self.db, "key": asdict(self.key), "best_ever_ms": self.best_ever_ms}


@dataclass(frozen=True)
class ExportOutcome:
    """The measurements written as a Kernel Tuner cache file.

    >>> ExportOutcome(path="c.json", entries=12)
    ExportOutcome(path='c.json', entries=12)
    """

    path: str
    entries: int


def _add_history(d: dict, stored: HistoryOutcome | None, used: "HistoryUse | None") -> None:
    """``d["history"]``: where the run was stored, and what history the strategy was given."""
    if stored is not None or used is not None:
        d["history"] = {**(stored.to_dict() if stored else {}), **(used.to_dict() if used else {})}


@dataclass(frozen=True)
class LayerReport:
    """One layer tuned: the result, the space's sizes, the winner and the stored outcomes.

    >>> import tempfile
    >>> from iobound.layer import ConvLayer
    >>> from search.session import TuneSettings, tune_layers
    >>> [r] = tune_layers([ConvLayer(n=1, c_in=4, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3)],
    ...                   "v100", TuneSettings(strategy="random", budget=2),
    ...                   out_dir=tempfile.mkdtemp(), verify=False)
    >>> r.algorithm, r.measure, r.space_size, r.evaluations, r.to_dict()["bound"]["method"]
    ('direct', 'model', 648, 2, 'compulsory')
    """

    layer: "ConvLayer"
    device: str
    algorithm: str
    measure: str
    space_size: int
    unpruned_size: int
    result: "TuneResult"
    seconds: float  # the layer's wall time: history read and prior fit, then the tuning loop
    winner: "WinnerReport | None" = None
    history: HistoryOutcome | None = None
    export: ExportOutcome | None = None
    history_use: "HistoryUse | None" = None
    same_as: str | None = None  # a repeat: the earlier layer of the run it took all this from

    @property
    def evaluations(self) -> int:
        """Configurations measured for this layer: none for a repeat (:attr:`same_as`)."""
        return 0 if self.same_as is not None else self.result.evaluations

    def to_dict(self) -> dict:
        """The JSON of ``iobound tune --layer ... --json``. A repeat's says ``same_as`` and
        keeps its first layer's best configuration and time (and kernel), but measured
        nothing: its counts of measuring (evaluations, statuses, rounds, resumed, reused,
        the strategy's stats and seconds) are zero or empty, and it has no history use."""
        d = self.result.to_dict()
        d.update(layer=self.layer.name, layer_shape=self.layer.short(), device=self.device,
                 algorithm=self.algorithm, space_size=self.space_size,
                 unpruned_size=self.unpruned_size, seconds=round(self.seconds, 3))
        d["evaluations"] = self.evaluations
        if self.same_as is not None:
            d.update(same_as=self.same_as, statuses={}, rounds=0, resumed=0, reused=0,
                     strategy_stats={}, strategy_seconds=0.0, measure_seconds=0.0)
        _add_history(d, self.history, self.history_use)
        if self.winner is not None:
            d["bound"] = self.winner.bound.to_dict()
            d["kernel_path"] = self.winner.kernel_path
            if self.winner.emulator_check is not None:
                d["emulator_check"] = self.winner.emulator_check.to_dict()
        return d


@dataclass(frozen=True)
class ReplayReport:
    """A recorded space tuned by replaying it: the result and the space's recorded optimum.

    >>> from search.kt_cache import KtCache
    >>> from search.session import TuneSettings, tune_replay
    >>> cache = KtCache({"x": [1, 2]}, [{"x": 1, "time": 2.0}, {"x": 2, "time": 1.0}],
    ...                 device_name="A100")
    >>> r = tune_replay(cache, TuneSettings(strategy="grid", budget=2))
    >>> r.device, r.space_size, r.statuses, r.recorded_optimum_ms, r.to_dict()["best"]["config"]
    ('A100', 2, {'ok': 2}, 1.0, {'x': 2})
    """

    file: str
    device: str
    kernel: str
    space_size: int
    statuses: dict
    result: "TuneResult"
    seconds: float
    recorded_optimum_ms: float | None
    history: HistoryOutcome | None = None
    export: ExportOutcome | None = None
    history_use: "HistoryUse | None" = None

    def to_dict(self) -> dict:
        """The JSON of ``iobound tune --measure replay:FILE --json``."""
        d = self.result.to_dict()
        d.update(device=self.device, replay_file=self.file,
                 recorded_optimum_ms=self.recorded_optimum_ms, seconds=round(self.seconds, 3))
        _add_history(d, self.history, self.history_use)
        return d
