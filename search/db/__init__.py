"""The tuning database: every measurement with its workload, device and toolchain.

One module per job: :mod:`.schema` (SQLite tables, versions, migration, concurrent
writes), :mod:`.model` (workload and measurement records), :mod:`.store` (add and
read), :mod:`.importer` (Kernel Tuner caches and our tuning logs in), :mod:`.merge`
(another tuning database in), :mod:`.export` (Kernel Tuner caches out), :mod:`.remove`
(measurements out of the database) and :mod:`.queries` (summaries, best configurations,
the history that fits a search space).
"""

from .conv_template import CONV_TEMPLATE
from .model import Measurement, Workload
from .store import TuningDB

__all__ = ["TuningDB", "Workload", "Measurement", "CONV_TEMPLATE"]
