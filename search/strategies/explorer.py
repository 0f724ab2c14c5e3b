"""The paper's tuner (section 6.3) as a strategy: train -> explore -> (measure -> update).

Each round fits the XGBoost cost model on every measurement so far and asks the
:class:`~search.explorer.Explorer` (parallel random walks) for the batch. A share
``epsilon`` of each batch is random (exploration, so a wrong model cannot trap
the search); the first ``init_random`` configurations are random too, since there
is no model before there is data.

Examples
--------
>>> import numpy as np
>>> from search.space import GridSpace
>>> s = ExplorerStrategy(GridSpace({"a": list(range(30))}), rng=np.random.default_rng(0))
>>> len(set(s.ask(8)))
8
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..cost_model import XGBOptions
from ..explorer import Explorer, ExplorerOptions
from ..space import sample_excluding
from .base import Strategy, StrategyOptions
from .model_based import train_model

__all__ = ["ExplorerStrategy", "ExplorerStrategyOptions"]


@dataclass(frozen=True)
class ExplorerStrategyOptions(StrategyOptions):
    """Batch size, random share, model and explorer options."""

    init_random: int = 8
    epsilon: float = 0.1
    min_ok: int = 2
    model: XGBOptions = field(default_factory=XGBOptions)
    explorer: ExplorerOptions = field(default_factory=ExplorerOptions)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0.0 <= self.epsilon <= 1.0 or self.init_random < 0:
            raise ValueError("epsilon must be in [0, 1] and init_random >= 0")


class ExplorerStrategy(Strategy):
    """XGBoost cost model + parallel random-walk explorer (see module doc)."""

    name = "explorer"
    Options = ExplorerStrategyOptions

    def __init__(self, space, options=None, rng=None):
        super().__init__(space, options, rng)
        self.explorer = Explorer(self.options.explorer)
        self._asked: set[int] = set()
        self._seed = int(rng.integers(2**31 - 1))
        self.model_seconds = 0.0
        self.explore_seconds = 0.0
        self.fits = 0

    def _random(self, n: int) -> list[int]:
        return sample_excluding(self.space, n, self._asked, self.rng)

    def ask(self, n: int) -> list[int]:
        o = self.options
        n = min(n, len(self.space) - len(self._asked))
        if n <= 0:
            return []
        model = None
        if len(self._asked) >= o.init_random:
            t0 = time.perf_counter()
            model = train_model(self.space, self.seen, o.model, self._seed + self.fits, o.min_ok)
            self.model_seconds += time.perf_counter() - t0
        if model is None:
            out = self._random(n)
        else:
            self.fits += 1
            n_rand = int(self.rng.binomial(n, o.epsilon)) if n > 1 else 0
            t0 = time.perf_counter()
            out = self.explorer.propose(model, self.space, n - n_rand, self._asked, self.rng,
                                        best=self.seen.best())
            self.explore_seconds += time.perf_counter() - t0
            self._asked.update(out)
            out += self._random(n - len(out))
        self._asked.update(out)
        return out

    def stats(self) -> dict:
        return {"fits": self.fits, "model_seconds": round(self.model_seconds, 4),
                "explore_seconds": round(self.explore_seconds, 4)}
