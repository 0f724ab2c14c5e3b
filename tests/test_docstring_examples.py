"""Every public function and class of the four packages shows a short example in its
docstring (run by ``--doctest-modules``), but those listed here with the reason.

A name is public when it is defined at a module's top level without a leading underscore.
A new public name without an example fails this test until it has one or is listed; a
listed name that got an example fails it too, so the list stays the truth.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("iobound", "dataflow", "kernels", "search")

NEEDS_GPP = "runs the emulator, which g++ builds (the module's example shows it)"
NEEDS_GPU = "asks pycuda or the CUDA driver: its answer is the machine's"
NEEDS_RAY = "starts, joins or stops Ray"
NEEDS_PROCESS = "is, or starts, a worker process"
RECORD = "a result record whose fields its producer's example shows"

WITHOUT_EXAMPLE = {
    "kernels/verify.py:EmulationCheck": NEEDS_GPP,
    "kernels/verify.py:emulate_and_check": NEEDS_GPP,
    "kernels/emulator.py:EmulationResult": NEEDS_GPP,
    "kernels/emulator_build.py:compiler_version": "runs g++ --version: the machine's answer",
    "kernels/gpu.py:import_pycuda": NEEDS_GPU,
    "kernels/gpu.py:measure_cubin": NEEDS_GPU,
    "kernels/gpu.py:measure_configs": NEEDS_GPU,
    "kernels/gpu.py:measure_config": NEEDS_GPU,
    "kernels/nvrtc.py:NvrtcError": "only a real NVRTC compile raises it",
    "kernels/nvrtc.py:find_nvrtc_toolchain": "the CUDA wheels installed here decide its answer",
    "search/executors/ray_cluster.py:import_ray": "imports the optional Ray (seconds), or not",
    "search/executors/ray_cluster.py:shutdown": NEEDS_RAY,
    "search/executors/ray_cluster.py:start_local_ray": NEEDS_RAY,
    "search/executors/ray_cluster.py:connect": NEEDS_RAY,
    "search/executors/ray_cluster.py:ray_session": NEEDS_RAY,
    "search/executors/ray_executor.py:RaySlot": NEEDS_RAY,
    "search/executors/worker.py:process_main": NEEDS_PROCESS,
    "search/executors/local.py:ProcessSlot": NEEDS_PROCESS,
    "search/session/parallel.py:run_layers_parallel": NEEDS_PROCESS,
    "search/executors/cuda_stages.py:driver_arch": NEEDS_GPU,
    "search/executors/cuda_stages.py:GpuSession": NEEDS_GPU,
    "search/executors/cuda_stages.py:process_session": NEEDS_GPU,
    "search/executors/local.py:visible_gpus": NEEDS_GPU,
    "search/measure/cuda.py:cuda_available": NEEDS_GPU,
    "search/measure/cuda.py:gpu_name": NEEDS_GPU,
    "search/measure/cuda.py:gpu_device": NEEDS_GPU,
    "search/cli/main.py:console_main": "ends the process",
    "search/cli/process_exit.py:exit_process": "ends the process",
    "search/db/queries.py:SummaryRow": RECORD,
    "search/db/queries.py:LayerBest": RECORD,
    "search/db/remove.py:RemovalGroup": RECORD,
    "search/selection/report.py:plot_io": "draws with matplotlib (over a second)",
    "search/selection/report.py:plot_time": "draws with matplotlib (over a second)",
}


def _subcommand_hook(path: str, name: str) -> bool:
    """A subcommand's argparse hooks: tests/test_readme_examples.py runs every subcommand's
    README examples (and checks each subcommand has one)."""
    return path.startswith("search/cli/") and path.endswith("_cmd.py") and name in (
        "add_arguments", "run")


def _public_without_example() -> set[str]:
    found = set()
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for node in ast.parse(path.read_text()).body:
                if (isinstance(node, (ast.FunctionDef, ast.ClassDef))
                        and not node.name.startswith("_")
                        and ">>>" not in (ast.get_docstring(node) or "")
                        and not _subcommand_hook(rel, node.name)):
                    found.add(f"{rel}:{node.name}")
    return found


def test_every_public_name_has_an_example_or_a_reason():
    missing = _public_without_example()
    assert sorted(missing - set(WITHOUT_EXAMPLE)) == [], "give these a docstring example"
    assert sorted(set(WITHOUT_EXAMPLE) - missing) == [], "these have one now: unlist them"


def test_a_subcommand_hook_names_the_examples_that_run_it():
    """The hooks left without a doctest say where their examples are."""
    for path in sorted((ROOT / "search" / "cli").glob("*_cmd.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name in ("add_arguments", "run"):
                assert "test_readme_examples" in (ast.get_docstring(node) or ""), \
                    f"{path.name}:{node.name}"
