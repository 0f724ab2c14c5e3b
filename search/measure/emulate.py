"""The ``emulate`` measurer: our generated kernels run on the CPU emulator.

For each configuration it generates the kernel for the layer, runs it in the
emulator (``kernels.verify.emulate_and_check``) on random data, and compares the
output with the numpy reference and the counted global traffic with the
dataflow's exact formula.

Statuses: ``OK`` (numerics within the fp32 error bound and traffic equal to the
formula; flops other than the model's are recorded in ``extra``, ``flops_matches``, and
do not fail the record: that is the model's error, not the kernel's),
``WRONG_RESULT`` (numerics or traffic failed; the message says which),
``INVALID`` (``check_config`` reasons, or a launch larger than the emulator
accepts), ``COMPILE_ERROR`` (g++ rejected the source), ``TIMEOUT`` (g++ ran past its
timeout), ``RUNTIME_ERROR`` (the emulated launch faulted).

Decision on time: the emulator does not run at GPU speed, so records carry
``costs=()`` and ``time_ms=None``: nothing here is a time. The documented
surrogate that a tuner minimises instead is the emulated global traffic in words
(:attr:`MeasureRecord.surrogate_cost`, see :attr:`MeasureRecord.cost`), which is what the
I/O bound is about. The full check is in ``extra`` (loads, stores, the formula's
counts, the flops executed and the model's, errors, on-chip words, the lower bound).

Examples
--------
>>> from iobound.layer import ConvLayer
>>> layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
>>> m = EmulateMeasurer(layer)
>>> ok, bad = m.measure([dict(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1),
...                      dict(x=3, y=3, z=2, alpha=1, tx=2, ty=3, tz=1)])
>>> ok.status.value, ok.time_ms, ok.extra["traffic_matches"], ok.cost == ok.surrogate_cost
('ok', None, True, True)
>>> bad.status
<Status.INVALID: 'invalid'>
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping, Sequence

from iobound.algorithms import algorithm_name

from .base import MeasureRecord, Measurer, Status, check_configs, invalid_config

__all__ = ["EmulateMeasurer"]


class EmulateMeasurer(Measurer):
    """Runs configurations of our kernels for ``layer`` on the CPU emulator.

    Parameters
    ----------
    layer : ConvLayer
        A small layer (the emulator runs every thread on the CPU).
    algorithm : {"direct", "winograd"}
    seed : int
        Seed of the random input and weights.
    with_bound : bool
        Also compute the I/O lower bound at the config's on-chip words (slower).

    >>> from iobound.layer import ConvLayer
    >>> layer = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
    >>> m = EmulateMeasurer(layer, algorithm="winograd", with_bound=True)
    >>> m.name, m.algorithm, m.cost_unit, m.estimate  # the cost is the emulated traffic
    ('emulate', 'winograd', 'words', False)
    >>> EmulateMeasurer(layer, seed=-1)
    Traceback (most recent call last):
    ...
    iobound.errors.InvalidInputError: seed=-1 is below the minimum 0
    """

    name = "emulate"
    estimate = False
    cost_unit = "words"   # the emulated traffic (surrogate_cost): the emulator does not time

    def __init__(self, layer, algorithm: str = "direct", seed: int = 0, with_bound: bool = False):
        from iobound import limits
        from iobound.layer import ConvLayer

        from ..option_checks import check_flag, check_type
        algorithm = algorithm_name(algorithm)
        check_type("layer", layer, ConvLayer)
        seed = limits.check_int("seed", seed, limits.SEED)  # else every config an invalid record
        self.layer, self.algorithm, self.seed = layer, algorithm, seed
        self.with_bound = check_flag("with_bound", with_bound)

    def toolchain(self) -> str:
        from kernels.emulator_build import _cxx, _cxx_version

        try:
            version = _cxx_version(_cxx()).splitlines()[0]
        except Exception:  # no g++: reported when measuring
            version = "g++ missing"
        return f"cpu emulator ({version})"

    def _one(self, cfg: Mapping[str, Any]) -> MeasureRecord:
        from kernels.config import config_from_dict
        from kernels.emulator import EmulatorBuildError, EmulatorRunError
        from kernels.source import InvalidConfigError
        from kernels.verify import emulate_and_check

        try:
            kc = config_from_dict(dict(cfg), self.algorithm)
        except (ValueError, TypeError) as exc:
            return MeasureRecord.failed(cfg, Status.INVALID, str(exc))
        try:
            chk = emulate_and_check(self.layer, kc, seed=self.seed, with_bound=self.with_bound)
        except InvalidConfigError as exc:
            return MeasureRecord.failed(cfg, Status.INVALID, "; ".join(exc.reasons))
        except EmulatorBuildError as exc:
            status = Status.TIMEOUT if exc.timed_out else Status.COMPILE_ERROR
            return MeasureRecord.failed(cfg, status, f"{exc}: {exc.log[-1500:]}")
        except EmulatorRunError as exc:
            return MeasureRecord.failed(cfg, Status.RUNTIME_ERROR, str(exc))
        except ValueError as exc:  # launch beyond the emulator's limits
            return MeasureRecord.failed(cfg, Status.INVALID, str(exc))
        extra = chk.to_dict()
        traffic = chk.global_loads + chk.global_stores
        extra.update(traffic_words=traffic, surrogate="emulated global traffic (words), not a time")
        if not chk.numerics_ok:
            return MeasureRecord.failed(
                cfg, Status.WRONG_RESULT, f"output differs from numpy: worst error/tolerance "
                f"{chk.worst_ratio:.3g}, max abs error {chk.max_abs_err:.3g}", extra=extra)
        if not chk.traffic_matches:
            return MeasureRecord.failed(
                cfg, Status.WRONG_RESULT, f"traffic {chk.global_loads} loads + {chk.global_stores} "
                f"stores differs from the formula's {chk.expected_loads} + {chk.expected_stores}",
                extra=extra)
        return MeasureRecord.ok(cfg, extra=extra, surrogate_cost=float(traffic))

    def measure_iter(self, configs: Sequence[Mapping[str, Any]]) -> Iterator[MeasureRecord]:
        return (invalid_config(cfg) or self._one(cfg) for cfg in check_configs(configs))

    def measure(self, configs: Sequence[Mapping[str, Any]]) -> list[MeasureRecord]:
        return list(self.measure_iter(configs))
