"""Build/run stages: the adapters give the measurers' own records, the GPU session keeps its context."""

from __future__ import annotations

import pickle
from types import SimpleNamespace

import pytest

from iobound.errors import ToolchainError
from iobound.layer import ConvLayer
from kernels.gpu import MeasureResult
from search.executors import Artifact, MeasurerStages, make_executor, stages_for
from search.executors.cuda_stages import CudaStages, GpuSession
from search.executors.emulate_stages import EmulateStages
from search.executors.stages import materialise
from search.measure.emulate import EmulateMeasurer
from search.measure.model import ModelMeasurer

LAYER = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
GOOD = dict(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1)
OTHER = dict(x=6, y=6, z=1, alpha=2, tx=3, ty=3, tz=1)
BAD = dict(x=3, y=3, z=2, alpha=1, tx=2, ty=3, tz=1)  # tx does not divide x


def test_stages_for_picks_the_adapter():
    """emulate and cuda get their build stage; other measurers run in one step."""
    assert isinstance(stages_for(EmulateMeasurer(LAYER)), EmulateStages)
    assert type(stages_for(ModelMeasurer(LAYER, "v100"))) is MeasurerStages
    stages = MeasurerStages(ModelMeasurer(LAYER, "v100"))
    assert stages_for(stages) is stages


def test_materialise_writes_the_payload_once(tmp_path, monkeypatch):
    """An artifact's bytes land in the cache under its name; a second call keeps the file."""
    monkeypatch.setenv("IOBOUND_CACHE", str(tmp_path))
    art = Artifact(config={}, payload=b"abc", name="k.so")
    path = materialise(art, "emu")
    assert path == tmp_path / "emu" / "k.so" and path.read_bytes() == b"abc"
    assert materialise(Artifact(config={}, payload=b"zzz", name="k.so"), "emu").read_bytes() == b"abc"
    with pytest.raises(ValueError, match="no built file"):
        materialise(Artifact(config={}), "emu")






def test_emulate_run_uses_the_shipped_library(tmp_path, monkeypatch):
    """A run on a node whose cache lacks the build writes the shipped bytes and runs them."""
    monkeypatch.setenv("IOBOUND_CACHE", str(tmp_path / "builder"))
    stages = EmulateStages.of(EmulateMeasurer(LAYER))
    art = stages.build(GOOD)
    monkeypatch.setenv("IOBOUND_CACHE", str(tmp_path / "runner"))
    record = stages.run(art)
    assert record.status.value == "ok"
    assert (tmp_path / "runner" / "emu" / art.name).read_bytes() == art.payload


# -- CUDA: the build with nvcc, the session with a stand-in driver -------------------------

class FakeContext:
    def __init__(self, log):
        self.log = log
        log.append("make")

    def pop(self):
        self.log.append("pop")

    def detach(self):
        self.log.append("detach")


def fake_driver(log):
    attr = SimpleNamespace(MAX_SHARED_MEMORY_PER_BLOCK=1, MAX_THREADS_PER_BLOCK=2,
                           MAX_REGISTERS_PER_MULTIPROCESSOR=3)
    device = SimpleNamespace(name=lambda: "Fake GPU", compute_capability=lambda: (8, 0), get_attribute=lambda a: {1: 49152, 2: 1024, 3: 65536}[a],
                             make_context=lambda: FakeContext(log))
    return SimpleNamespace(init=lambda: None, Device=lambda i: device, device_attribute=attr)


@pytest.mark.parametrize("status, renewed", [("ok", False), ("wrong_result", False),
                                             ("runtime_error", True), ("timeout", True)])
def test_gpu_session_renews_the_context_only_after_a_failed_launch(status, renewed):
    """One context for many runs; a runtime_error or timeout drops it for a fresh one."""
    log = []
    session = GpuSession(fake_driver(log), measure=lambda drv, src, path, opt: MeasureResult(status=status))
    assert session.limits.max_threads_per_block == 1024
    for _ in range(3):
        session.measure(None, "k.cubin", None)
    session.close()
    makes = 1 + (3 if renewed else 0)
    assert log.count("make") == makes == session.contexts
    assert log.count("pop") == log.count("detach") == makes


def test_cuda_stages_pickle_without_their_context():
    """A worker's CUDA context never travels: the pickled stages have no session."""
    stages = CudaStages(LAYER, arch="sm_80")
    stages._session = object()
    assert pickle.loads(pickle.dumps(stages))._session is None


@pytest.mark.nvcc
def test_cuda_build_carries_the_cubin():
    """nvcc builds on a CPU worker; the artifact holds the cubin and ptxas' registers."""
    art = CudaStages(LAYER, arch="sm_80").build(GOOD)
    assert isinstance(art, Artifact) and len(art.payload) > 0 and art.name.endswith(".cubin")
    assert art.meta["registers"] > 0


def test_cuda_stages_without_a_gpu_are_refused():
    """The local executor needs a GPU worker for the cuda run stage: a set-up error."""
    from search.executors.local import visible_gpus

    if visible_gpus():
        pytest.skip("this machine has a GPU")
    with make_executor(CudaStages(LAYER, arch="sm_80"), workers=1) as ex:
        with pytest.raises(ToolchainError, match="needs a GPU"):
            list(ex.submit([(0, GOOD)]))


@pytest.mark.gpu
def test_cuda_batch_on_the_gpu_workers():
    """On a GPU: the batch is built in parallel and timed, each config once."""
    from search.measure.cuda import CudaMeasurer

    with make_executor(CudaMeasurer(LAYER), workers=2) as ex:
        got = dict(ex.submit([(0, GOOD), (1, BAD), (2, OTHER)]))
    assert got[0].status.value == got[2].status.value == "ok" and got[0].time_ms > 0
    assert got[1].status.value == "invalid"


def test_every_layers_cuda_stages_in_a_worker_share_one_context(monkeypatch):
    """A GPU worker serving several layers opens one session (one CUDA context), not one
    per layer's stages; a closed one is replaced."""
    from search.executors import cuda_stages

    class Fake:
        def __init__(self):
            self.ctx = object()

        def close(self):
            self.ctx = None

    monkeypatch.setattr(cuda_stages, "GpuSession", Fake)
    monkeypatch.setattr(cuda_stages, "_SESSION", None)
    first = cuda_stages.process_session()
    assert cuda_stages.process_session() is first
    first.close()
    assert cuda_stages.process_session() is not first
