"""A script that starts local workers outside ``if __name__ == "__main__":`` fails at
their start (each worker imports the main module, which starts workers again): the error
says how to mend the script, not only the worker's exit code (an audit found
``tune_layers``' own example failing that way when pasted into a file)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    from iobound.layer_spec import parse_layer_spec
    from search.conv_space import ConvSpace
    from search.executors import ExecutorMeasurer, make_executor
    from search.measure.model import ModelMeasurer
    from search.tuner import tune
    layer = parse_layer_spec("cin=8,hin=8,cout=8,kh=3,pad=1")
    measurer = ModelMeasurer(layer, "v100")
    with make_executor(measurer, executor="local", workers=1) as ex:
        tune(ConvSpace(layer, "v100"), ExecutorMeasurer(measurer, ex), budget=2)
    print("tuned")
""")


def test_an_unguarded_script_is_told_to_guard_its_main_code(tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text(SCRIPT)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode != 0 and "tuned" not in done.stdout
    assert "a worker process failed to start (exit code 1)" in last, done.stderr[-2000:]
    assert 'if __name__ == "__main__":' in last, last


def test_the_guarded_script_runs(tmp_path):
    script = tmp_path / "guarded.py"
    body = textwrap.indent(SCRIPT.split("layer = ", 1)[1], "    ")
    script.write_text(SCRIPT.split("layer = ", 1)[0] + 'if __name__ == "__main__":\n    layer = '
                      + body.lstrip())
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == "tuned", done.stderr[-2000:]
