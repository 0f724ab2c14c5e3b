"""An emulate run on a worker whose cache lacks the build uses the shipped library.

search/executors/emulate_stages.py: the run "puts [the artifact's bytes] in this worker's
emulator cache (so the run finds the build, on this node or another) and measures with
the EmulateMeasurer itself, whose cache lookup then skips the compile". The bytes were
written, but without the digest the trusted cache requires (kernels.cache.is_trusted),
so the measurer compiled the kernel again with g++: on a Ray cluster every emulated
configuration was built twice, once by the build task and once by the run actor on
another node. Reference: the compiler is not called during the run (the node builds
the emulator's launcher once, kernels.emulator_build.build_launcher, before its first run).
"""

from __future__ import annotations

from iobound.layer import ConvLayer
from search.executors.emulate_stages import EmulateStages
from search.measure.emulate import EmulateMeasurer

LAYER = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=2, k_h=3, k_w=3, padding=1)
GOOD = dict(x=3, y=3, z=2, alpha=1, tx=3, ty=3, tz=1)


def test_a_run_on_another_node_does_not_compile_again(tmp_path, monkeypatch):
    import kernels.emulator_build as emulator

    stages = EmulateStages.of(EmulateMeasurer(LAYER))
    art = stages.build(GOOD)  # in this machine's cache (its precompiled header is there)
    assert art.payload
    monkeypatch.setenv("IOBOUND_CACHE", str(tmp_path / "other-node"))
    emulator.build_launcher()  # once per node, whatever it runs
    calls = []
    run_compiler = emulator.run_compiler

    def spy(cmd, *args, **kwargs):
        calls.append(cmd)
        return run_compiler(cmd, *args, **kwargs)

    monkeypatch.setattr(emulator, "run_compiler", spy)
    record = stages.run(art)
    assert record.status.value == "ok", record.error
    assert calls == [], f"the run compiled again: {calls}"
