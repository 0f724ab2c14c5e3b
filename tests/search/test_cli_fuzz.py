"""Hypothesis-driven fuzzing of every ``iobound`` subcommand with hostile values.

Each example draws a few command lines per subcommand (hostile values for every option
and layer field: huge, negative, non-numeric, empty, unicode digits, bad paths, hostile
files) and runs them in one long-lived worker process (:mod:`cli_worker`), so hundreds
of command lines fit in CI. The guarantees checked for every command line:

- no traceback, and no exception other than iobound's own reaches the user (exit 2
  comes from an ``IoboundError``, so it survives the CLI mapping only those);
- exit code 0, 1 or 2 (2: exactly one stderr line ``iobound ...: error: ...``);
- ``--json`` output with exit 0 or 1 is strict JSON (no NaN or Infinity tokens);
- every command line ends within :data:`LIMIT_S` seconds.

A smaller set of checks runs real ``iobound`` processes (:func:`test_real_processes`).
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from cli_worker import Worker

#: Seconds one command line may take (the issue's goal is 60; a shared CI core is slow).
LIMIT_S = 30.0

SMALL_LAYER = "cin=2,hin=6,cout=2,kh=3,pad=1"
SMALL_CONFIG = "x=3,y=3,z=2,alpha=1,tx=3,ty=3,tz=1"

HOSTILE_INTS = st.one_of(
    st.sampled_from(["0", "1", "2", "3", "-1", "+2", " 4", "007", "2147483648",
                     "9223372036854775808", "1" + "0" * 40, "9" * 5000, "1e3", "0x10", "1.5",
                     "", " ", "nan", "inf", "\u0663", "1_000", "-0", "4294967297"]),
    st.integers(-(2 ** 70), 2 ** 70).map(str),
    st.text(max_size=6),
)
SMALL_INTS = st.integers(1, 9).map(str)
#: In range but large (at or near a limit of iobound.limits), for layers that are big but valid.
NEAR_LIMIT = st.sampled_from(["1024", "8191", "8192", "8193", "7560", "55440", "65536", "65537"])
FIELD = st.one_of(SMALL_INTS, SMALL_INTS, SMALL_INTS, HOSTILE_INTS, NEAR_LIMIT)
LAYER_KEYS = ("n", "cin", "hin", "win", "cout", "kh", "kw", "stride", "pad", "dilation")


@st.composite
def layer_specs(draw) -> str:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.sampled_from(["alexnet.conv1", "resnet18.conv2_1", "nonsense.conv9",
                                     "alexnet", "", " ", "=", ",,,", "cin", "cin=="]))
    if kind == 1:
        return draw(st.text(max_size=30))
    fields = {"cin": draw(FIELD), "hin": draw(FIELD), "cout": draw(FIELD), "kh": draw(FIELD)}
    for key in draw(st.lists(st.sampled_from(LAYER_KEYS), max_size=3, unique=True)):
        value = draw(FIELD)
        if key in ("stride", "pad", "dilation") and draw(st.booleans()):
            value = f"{value}x{draw(FIELD)}"
        fields[key] = value
    if draw(st.integers(0, 9)) == 0:
        fields[draw(st.sampled_from(["bogus", "CIN", "h in", ""]))] = draw(FIELD)
    return ",".join(f"{k}={v}" for k, v in fields.items())


FAST_MEMORY = st.one_of(
    SMALL_INTS.map(lambda s: str(int(s) * 512)),
    st.tuples(HOSTILE_INTS, st.sampled_from(["", "B", "KiB", "MiB", "GiB", "KB", "kb", "XB",
                                             ".5KiB", " KiB"])).map("".join),
)
DTYPES = st.sampled_from(["fp32", "fp16", "FP64", "int8", "fp8", "", "fp32 "])
DEVICES = st.sampled_from(["v100", "a100", "V100", "nonsense", "", "rtx"])
ALGORITHMS = st.sampled_from(["direct", "winograd", "all", "", "gemm"])


def _opt(flag: str, values, p: int = 2):
    """``[flag, value]`` with probability 1/p, else nothing."""
    return st.one_of(st.just([]), *([st.tuples(st.just(flag), values).map(list)] * (p - 1)))


@st.composite
def bound_argv(draw, paths):
    argv = ["bound", "--layer", draw(layer_specs()), "--fast-memory", draw(FAST_MEMORY)]
    for flag, values in (("--dtype", DTYPES), ("--algorithm", ALGORITHMS),
                         ("--winograd-e", HOSTILE_INTS)):
        argv += draw(_opt(flag, values))
    return argv + draw(st.sampled_from([[], ["--json"]]))


@st.composite
def dataflow_argv(draw, paths):
    argv = ["dataflow", "--layer", draw(layer_specs()), "--fast-memory", draw(FAST_MEMORY)]
    tiles = st.lists(FIELD, min_size=1, max_size=5).map(",".join)
    for flag, values in (("--dtype", DTYPES), ("--algorithm", ALGORITHMS),
                         ("--processors", HOSTILE_INTS), ("--winograd-e", HOSTILE_INTS),
                         ("--tiles", tiles)):
        argv += draw(_opt(flag, values))
    return argv + draw(st.sampled_from([[], ["--json"], ["--any-tiles"], ["--any-tiles", "--json"], ["--dividing-tiles"]]))


@st.composite
def domain_argv(draw, paths):
    argv = ["domain", "--layer", draw(layer_specs())]
    es = st.lists(HOSTILE_INTS, min_size=1, max_size=10).map(",".join)
    for flag, values in (("--device", DEVICES), ("--algorithm", ALGORITHMS), ("--winograd-e", es)):
        argv += draw(_opt(flag, values))
    return argv + draw(st.sampled_from([[], ["--json"]]))


@st.composite
def kernel_argv(draw, paths):
    if draw(st.integers(0, 4)) == 0:  # the one kernel that is emulated and compiled (cached)
        argv = ["kernel", "--layer", SMALL_LAYER, "--config", SMALL_CONFIG,
                *draw(st.sampled_from([["--emulate"], ["--compile"], ["--compile", "--arch", "sm_1"]]))]
        argv += draw(_opt("--seed", HOSTILE_INTS))
    else:
        knobs = st.lists(st.tuples(st.sampled_from(["x", "y", "z", "alpha", "e", "tx", "ty", "tz",
                                                    "q", ""]), FIELD), max_size=8)
        config = knobs.map(lambda kv: ",".join(f"{k}={v}" for k, v in kv))
        argv = ["kernel", "--layer", draw(layer_specs())]
        if draw(st.integers(0, 5)) == 0:  # the stored best instead (databases, logs, caches)
            argv += ["--from-history", draw(st.sampled_from(
                paths["out_files"] + paths["replay"][:2] + paths["logs"][:1]))]
        if argv[-2] != "--from-history" or draw(st.integers(0, 3)) == 0:
            argv += ["--config", draw(st.one_of(config, st.just(SMALL_CONFIG),
                                                st.text(max_size=12)))]
        for flag, values in (("--algorithm", ALGORITHMS), ("--device", DEVICES),
                             ("--arch", st.sampled_from(["sm_80", "80", "", "sm_999x"]))):
            argv += draw(_opt(flag, values))
    argv += draw(_opt("--emit", st.sampled_from(paths["out_files"])))
    return argv + draw(st.sampled_from([[], ["--json"]]))


@st.composite
def tune_argv(draw, paths):
    kind = draw(st.integers(0, 19))
    if kind < 9:
        argv = ["tune", "--measure", "replay:" + draw(st.sampled_from(paths["replay"]))]
    elif kind == 9:  # a whole network is a real run of a few seconds: rarely, budget 1
        argv = ["tune", "--network", draw(st.sampled_from(["alexnet", "nonsense", "", "alexnet.conv1"])),
                "--measure", "model", "--no-verify"]
    else:
        layer = draw(st.one_of(st.just(SMALL_LAYER), layer_specs()))
        argv = ["tune", "--layer", layer, "--measure",
                draw(st.sampled_from(["model", "model", "emulate", "cuda", "replay", "bogus", ""])),
                "--no-verify"]
        argv += draw(_opt("--device", DEVICES, p=3)) + draw(_opt("--algorithm", ALGORITHMS, p=3))
    # in-range budgets stay small (an in-range budget is a real run); larger ones are refused
    budgets = ["1"] if kind == 9 else ["1", "3", "5", "0", "-4", "abc", "", "2.5", "1048577",
                                       "9" * 30, "2147483648"]
    argv += ["--budget", draw(st.sampled_from(budgets))]
    for flag, values in (("--seed", HOSTILE_INTS), ("--batch-size", HOSTILE_INTS),
                         ("--patience", HOSTILE_INTS),
                         ("--strategy", st.sampled_from(["random", "grid", "ga", "sa", "explorer",
                                                         "gga", "zero_shot", "bogus", ""])),
                         ("--zero-shot", HOSTILE_INTS),
                         ("--zero-shot-order", st.sampled_from(["auto", "model", "sources",
                                                                "bogus", ""])),
                         ("--executor", st.sampled_from(["local", "bogus", "", "ray "])),
                         ("--workers", HOSTILE_INTS), ("--retries", HOSTILE_INTS),
                         ("--timeout", st.sampled_from(["0", "-1", "nan", "inf", "1e308", "x", "5"])),
                         ("--parallel-layers", HOSTILE_INTS),
                         ("--network-json", st.sampled_from(paths["out_files"])),
                         ("--log", st.sampled_from(paths["out_files"])),
                         ("--resume", st.sampled_from(paths["logs"])),
                         ("--export-cache", st.sampled_from(paths["out_files"])),
                         ("--history", st.sampled_from(paths["out_files"])),
                         ("--out-dir", st.sampled_from(paths["out_dirs"]))):
        argv += draw(_opt(flag, values, p=4))
    argv += draw(st.sampled_from([[], [], [], ["--tune-repeats"]]))
    argv += draw(st.sampled_from([[], [], ["--reuse"]]))
    return argv + draw(st.sampled_from([[], ["--json"]]))


@st.composite
def history_argv(draw, paths):
    dbs = st.sampled_from(paths["out_files"] + paths["replay"][:4] + paths["logs"][:2])
    action = draw(st.sampled_from(["import", "list", "best", "export", "remove", "bogus", ""]))
    argv = ["history", action, *draw(_opt("--db", dbs, p=6))]
    if action == "import":
        argv += draw(st.lists(st.sampled_from(paths["replay"] + paths["logs"]), max_size=3))
        argv += draw(_opt("--device", DEVICES))
    elif action in ("list", "best", "export", "remove"):
        argv += draw(_opt("--workload", st.text(max_size=8)))
        argv += draw(_opt("--layer", layer_specs(), p=4))
        argv += draw(_opt("--device", DEVICES))
        if action == "best":
            argv += draw(_opt("-k", HOSTILE_INTS))
        elif action == "export":
            argv += [draw(st.sampled_from(paths["out_files"]))]
        elif action == "remove":
            argv += draw(_opt("--source", st.sampled_from(
                paths["replay"][:2] + paths["logs"][:1] + ["", "tune", "none.json"])))
            argv += draw(_opt("--toolchain", st.sampled_from(["", "nvcc", "kernel_tuner"])))
            argv += draw(st.sampled_from([[], ["--dry-run"]]))
    return argv + draw(st.sampled_from([[], ["--json"]]))


#: Layers ``select`` and ``report`` evaluate whole pruned spaces of: small valid ones, names
#: and garbage, or a small layer with one hostile field (a large valid layer takes a minute)
SELECT_FIELD = st.one_of(SMALL_INTS, st.sampled_from(["0", "-1", "", "x", "1e3", "\u0663",
                                                      "2147483648", "9" * 5000, "65537"]))
SELECT_LAYERS = st.one_of(
    st.just(SMALL_LAYER), st.text(max_size=20),
    st.sampled_from(["alexnet.conv1", "nonsense.conv9", "alexnet", "", "cin==", ",,,"]),
    st.tuples(st.sampled_from(["cin", "hin", "cout", "kh", "pad", "stride", "groups", "bogus"]),
              SELECT_FIELD).map(lambda kv: f"cin=2,hin=6,cout=2,kh=3,{kv[0]}={kv[1]}"))


@st.composite
def select_argv(draw, paths, command="select"):
    if draw(st.integers(0, 9)) == 0:  # names of no network (a real one takes seconds)
        names = st.sampled_from(["nonsense", "", "vgg", "alexnet.conv1"])
        argv = [command, "--network", draw(names)]
    else:
        argv = [command, "--layer", draw(SELECT_LAYERS)]
    for flag, values in (("--device", DEVICES),
                         ("--measure", st.sampled_from(["model", "cuda", "emulate", "bogus", ""])),
                         ("--history", st.sampled_from(
                             paths["out_files"] + paths["replay"][:4] + paths["logs"][:2]))):
        argv += draw(_opt(flag, values, p=3))
    if command == "report":
        argv += draw(_opt("--out-dir", st.sampled_from(paths["out_dirs"])))
        return argv + draw(st.sampled_from([[], ["--html"]]))
    return argv + draw(st.sampled_from([[], ["--json"]]))


@st.composite
def report_argv(draw, paths):
    return draw(select_argv(paths, "report"))


COMMANDS = (bound_argv, dataflow_argv, domain_argv, kernel_argv, tune_argv, history_argv,
            select_argv, report_argv)


# -- hostile files and paths --------------------------------------------------------------

def _cache(times) -> dict:
    entries = {f"{i}": {"a": i, "time": t} for i, t in enumerate(times)}
    return {"device_name": "G", "kernel_name": "k", "problem_size": [1], "tune_params_keys": ["a"],
            "tune_params": {"a": list(range(len(times)))}, "objective": "time", "cache": entries}


def hostile_files(folder: Path) -> dict[str, list[str]]:
    """Paths of hostile replay caches, resume logs, output files and output folders."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "good.json": json.dumps(_cache([2.0, 1.5, "InvalidConfig", 3.0])),
        "negative.json": json.dumps(_cache([2.0, -3.6, 0, 1.0])),
        "nan.json": json.dumps(_cache([2.0, float("nan"), float("inf"), 1.0])),
        "strings.json": json.dumps(_cache(["1", None, True, [1], {"t": 1}])),
        "huge.json": json.dumps(_cache([10 ** 400, 1e308, 5e-324])),
        "list.json": "[1, 2, 3]", "scalar.json": "7", "null.json": "null", "empty.json": "",
        "deep.json": "[" * 100000 + "]" * 100000,
        "t1.json": json.dumps({"ConfigurationSpace": {"TuningParameters": []}}),
        "no_cache.json": json.dumps({"tune_params": {"a": [1]}}),
        "bad_params.json": json.dumps({"tune_params": {"a": 5}, "cache": {}}),
        "bad_entry.json": json.dumps({"tune_params": {"a": [1]}, "cache": {"1": 5}}),
        "nested_value.json": json.dumps({"tune_params": {"a": [[[1]]]}, "cache": {"x": {"a": [[1]], "time": 1}}}),
        "radix.json": json.dumps({"tune_params": {f"p{k}": list(range(100)) for k in range(12)},
                                  "cache": {"0": {**{f"p{k}": 0 for k in range(12)}, "time": 1.0}}}),
    }
    for name, text in files.items():
        (folder / name).write_text(text)
    (folder / "latin1.json").write_bytes(b'{"tune_params": {"\xe9": [1]}, "cache": {}}')
    with gzip.open(folder / "good.json.gz", "wt") as fh:
        fh.write(files["good.json"])
    (folder / "truncated.json.gz").write_bytes((folder / "good.json.gz").read_bytes()[:20])
    (folder / "notgzip.json.gz").write_text(files["good.json"])
    est = _cache([2.0, 1.0])
    for e in est["cache"].values():
        e["estimate"] = True
    (folder / "estimate.json").write_text(json.dumps(est))
    (folder / "adir").mkdir(exist_ok=True)
    too_long = str(folder / ("n" * 300))  # beyond any file system's name length: a stat fails
    replay = [str(p) for p in sorted(folder.iterdir())] + [str(folder / "missing.json"), "",
                                                          too_long]
    header = json.dumps({"schema": "iobound.tune-log", "version": 1, "kind": "header"})
    logs = {
        "log_bad_time.jsonl": header + "\n" + json.dumps(
            {"kind": "record", "index": 0, "record": {"config": {"a": 1}, "status": "ok",
                                                      "time_ms": -1.0}}) + "\n",
        "log_shapes.jsonl": header + "\n[1]\n",
        "log_header_list.jsonl": "[]\n", "log_empty.jsonl": "",
        "log_version.jsonl": json.dumps({"schema": "iobound.tune-log", "version": 99}) + "\n",
        "log_binary.jsonl": "\x00\xff garbage\n",
    }
    for name, text in logs.items():
        (folder / name).write_text(text)
    out = folder / "out"
    out.mkdir(exist_ok=True)
    (out / "existing_file").write_text("x")
    out_files = ["", str(folder / "adir"), str(out / "missing" / "x.json"),
                 str(out / "existing_file" / "x"), str(out / "existing_file"), "/proc/iobound-no",
                 str(out / "fresh.json"), str(out / "fresh.json.gz"), too_long]
    out_dirs = ["", str(out / "existing_file"), str(out / "missing" / "d"), str(out / "kernels"),
                too_long]
    return {"replay": replay, "logs": [str(folder / n) for n in logs] + replay[:3],
            "out_files": out_files, "out_dirs": out_dirs}


@pytest.fixture(scope="module")
def paths(tmp_path_factory) -> dict:
    return hostile_files(tmp_path_factory.mktemp("hostile"))


@pytest.fixture(scope="module")
def worker(tmp_path_factory):
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    with Worker(cwd=tmp_path_factory.mktemp("cwd"), env=env) as w:
        yield w


# -- the checks -----------------------------------------------------------------------

def _strict_json(text: str):
    def refuse(token):
        raise ValueError(f"non-standard JSON token {token}")
    return json.loads(text, parse_constant=refuse)


def check_outcome(argv: list[str], got: dict) -> None:
    """The guarantees of the module doc for one command line."""
    shown = " ".join(repr(a) if " " in a or not a else a for a in argv)[:300]
    assert not got.get("timeout"), f"took over {LIMIT_S} s: {shown}"
    assert "died" not in got, f"the worker died ({got.get('died')}): {shown}"
    assert got["traceback"] is None, f"traceback for {shown}:\n{got['traceback']}"
    assert got["rc"] in (0, 1, 2), f"exit {got['rc']} for {shown}"
    assert got["raised"] is None or got["raised_ours"], (
        f"{got['raised']} raised at {got['raised_at']} is not an IoboundError: {shown}")
    if got["rc"] == 2:
        lines = got["err"].splitlines()
        assert len(lines) == 1 and ": error: " in lines[0], f"stderr {got['err']!r} for {shown}"
    elif "--json" in argv and "--help" not in argv:
        _strict_json(got["out"])


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
          deadline=None)
@given(data=st.data())
def test_fuzzed_command_lines(worker, paths, data):
    """Hostile command lines of every subcommand: one line and exit 2, or a result; never a
    traceback, a non-iobound exception, invalid JSON or a run past the limit."""
    for make in COMMANDS:
        for _ in range(2):
            argv = data.draw(make(paths))
            check_outcome(argv, worker.run(argv, LIMIT_S))


@pytest.mark.parametrize("name", ["good.json", "negative.json", "nan.json", "huge.json",
                                  "estimate.json", "truncated.json.gz", "deep.json", "latin1.json",
                                  "radix.json", "strings.json", "nested_value.json"])
def test_every_hostile_replay_file(worker, paths, name):
    """Every hostile replay file: a result whose best time is a positive measurement, or one
    line naming the file."""
    path = next(p for p in paths["replay"] if p.endswith("/" + name))
    argv = ["tune", "--measure", f"replay:{path}", "--budget", "5", "--json"]
    got = worker.run(argv, LIMIT_S)
    check_outcome(argv, got)
    if got["rc"] == 2:
        assert name in got["err"]
        return
    best = _strict_json(got["out"])["best"]
    if best is not None:
        assert best["time_ms"] > 0 and best["time_ms"] < 1e300
        assert best["estimate"] is (name == "estimate.json")


REAL = [
    (["bound", "--layer", "cin=99999999999999999999,hin=6,cout=2,kh=3", "--fast-memory", "1KiB"], 2),
    (["bound", "--layer", "cin=2,hin=6,cout=2,kh=3", "--fast-memory", "9" * 400 + "KiB"], 2),
    (["dataflow", "--layer", "cin=2,hin=6,cout=2,kh=3", "--fast-memory", "64", "--processors", "-3"], 2),
    (["domain", "--layer", "cin=2,hin=6,cout=2,kh=3", "--algorithm", "winograd",
      "--winograd-e", "2147483648"], 2),
    (["kernel", "--layer", "cin=2,hin=6,cout=2,kh=3", "--config", "x=1", "--emit", ""], 2),
    (["tune", "--measure", "replay:/nonexistent/file.json"], 2),
    (["bound", "--layer", "cin=2,hin=6,cout=2,kh=3", "--fast-memory", "1KiB", "--json"], 0),
]


@pytest.mark.parametrize("argv,code", REAL, ids=[a[0] + str(i) for i, (a, _) in enumerate(REAL)])
def test_real_processes(argv, code):
    """The installed entry point in its own process: the exit code and one stderr line."""
    proc = subprocess.run([sys.executable, "-m", "search.cli.main", *argv], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == code, proc.stderr
    if code == 2:
        assert len(proc.stderr.splitlines()) == 1 and "error:" in proc.stderr
        assert "Traceback" not in proc.stderr and proc.stdout == ""
    else:
        _strict_json(proc.stdout)
