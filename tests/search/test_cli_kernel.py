"""`iobound kernel`: JSON keys, emitted source, compile and emulate results, exit codes."""

import json

import pytest

from search.cli.main import main

LAYER = "cin=3,hin=8,cout=4,kh=3,pad=1"
DIRECT = "x=4,y=4,z=4,alpha=2,tx=4,ty=2,tz=2"


def _run(capsys, *argv):
    code = main(["kernel", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_emulate_json_has_the_documented_keys(capsys, tmp_path):
    """--emulate --json reports ok, errors and the counted global loads/stores."""
    code, out, _ = _run(capsys, "--layer", LAYER, "--config", DIRECT, "--emulate", "--json",
                        "--emit", str(tmp_path / "k.cu"))
    res = json.loads(out)
    assert code == 0
    assert res["source_path"] == str(tmp_path / "k.cu") and (tmp_path / "k.cu").read_text().startswith("// Generated")
    emu = res["emulate"]
    for key in ("ok", "max_abs_err", "max_rel_err", "global_loads", "global_stores"):
        assert key in emu
    assert emu["ok"] and emu["global_loads"] == emu["expected_loads"] and emu["global_stores"] == 4 * 8 * 8
    assert emu["flops_matches"] and emu["flops"] == emu["expected_flops"] > 0
    assert res["compile"] is None


def test_winograd_is_inferred_from_e(capsys):
    """A config with e builds the Winograd kernel."""
    code, out, _ = _run(capsys, "--layer", LAYER, "--config", "e=2,x=4,y=4,z=2,tx=2,ty=2,tz=1", "--json")
    assert code == 0 and json.loads(out)["algorithm"] == "winograd"


def test_invalid_config_exits_2_with_the_reasons(capsys):
    """A config that cannot run is one error line naming the reasons, exit 2."""
    code, out, err = _run(capsys, "--layer", LAYER, "--config", "x=4,y=4,z=4,alpha=2,tx=3,ty=2,tz=2")
    assert code == 2 and out == "" and "tx=3 must divide x=4" in err and len(err.splitlines()) == 1


def test_winograd_on_strided_layer_exits_2(capsys):
    """Winograd for a stride-2 layer is refused with the reason."""
    code, _, err = _run(capsys, "--layer", LAYER + ",stride=2", "--config", "e=2,x=2,y=2,z=2,tx=1,ty=1,tz=1")
    assert code == 2 and "stride 1" in err


def test_human_output_mentions_traffic_match(capsys):
    """Without --json the report shows the traffic and flops checks and the bound ratio."""
    code, out, _ = _run(capsys, "--layer", LAYER, "--config", DIRECT, "--emulate")
    assert code == 0 and "match" in out and "lower bound" in out
    flops = next(line for line in out.splitlines() if line.startswith("flops "))
    assert flops.endswith(": match") and "model" in flops


@pytest.mark.nvcc
def test_compile_json_reports_ptxas_resources(capsys):
    """--compile --json gives status, registers, shared bytes and spills."""
    code, out, _ = _run(capsys, "--layer", LAYER, "--config", DIRECT, "--compile", "--arch", "sm_80", "--json")
    comp = json.loads(out)["compile"]
    assert code == 0 and comp["status"] == "ok" and comp["registers"] > 0
    assert comp["shared_bytes"] == json.loads(out)["shared_bytes"]
    assert comp["spill_stores"] == 0 and comp["spill_loads"] == 0


@pytest.mark.nvcc
def test_sm70_is_a_compile_result_not_a_crash(capsys):
    """sm_70 (dropped by CUDA 13) compiles via the CUDA 12 wheels, or is compile_error with its log and exit 1."""
    from kernels.nvcc import find_toolchain
    code, out, _ = _run(capsys, "--layer", LAYER, "--config", DIRECT, "--compile", "--arch", "sm_70", "--json")
    comp = json.loads(out)["compile"]
    if find_toolchain("sm_70") is None:
        assert code == 1 and comp["status"] == "compile_error" and "sm_70" in comp["log"]
    else:  # a CUDA 12 toolchain (or its NVRTC + ptxas wheels) is installed: it compiles
        assert code == 0 and comp["status"] == "ok"


@pytest.mark.parametrize("cxx,needle", [("no-such-gxx-iobound", "CXX='no-such-gxx-iobound'"),
                                        ("{tmp}/plain.txt", "plain.txt"),
                                        ("{tmp}/noshebang", "cannot be run")])
def test_an_emulator_compiler_that_cannot_run_is_one_line(capsys, monkeypatch, tmp_path, cxx,
                                                          needle):
    """CXX naming no program (or a file that cannot be executed): one line naming it, exit
    2, as a missing g++ is (it was a FileNotFoundError traceback)."""
    (tmp_path / "plain.txt").write_text("not a compiler")
    (tmp_path / "noshebang").write_text("not a compiler either")
    (tmp_path / "noshebang").chmod(0o755)
    monkeypatch.setenv("CXX", cxx.format(tmp=tmp_path))
    code, out, err = _run(capsys, "--layer", LAYER, "--config", DIRECT, "--emulate")
    assert code == 2 and len(err.splitlines()) == 1 and needle in err and "Traceback" not in err


@pytest.mark.parametrize("as_json", [True, False])
def test_emulator_failure_is_a_result_with_exit_1(capsys, monkeypatch, as_json):
    """A kernel that faults in the emulator is reported (ok false, the error), not a crash."""
    from kernels import verify
    from kernels.emulator import EmulatorRunError

    def fault(*args, **kwargs):
        raise EmulatorRunError("emulated launch failed: out-of-bounds global access (fault)")
    monkeypatch.setattr(verify, "emulate_and_check", fault)
    code, out, err = _run(capsys, "--layer", LAYER, "--config", DIRECT, "--emulate",
                          *(["--json"] if as_json else []))
    assert code == 1 and err == ""
    if as_json:
        emu = json.loads(out)["emulate"]
        assert emu["ok"] is False and "out-of-bounds" in emu["error"]
        for key in ("max_abs_err", "max_rel_err", "global_loads", "global_stores"):
            assert key in emu and emu[key] is None
    else:
        assert "emulate  FAILED: emulated launch failed" in out


@pytest.mark.parametrize("config,threads", [("x=4,y=4,z=4,alpha=2", {"tx": 4, "ty": 4, "tz": 4}),
                                            ("e=2,x=4,y=4,z=2", {"tx": 2, "ty": 2, "tz": 2})])
def test_tiles_without_threads_get_a_default_block_that_is_reported(capsys, config, threads):
    """The dataflow's tiles alone make a kernel: the chosen block is in the JSON and the text."""
    code, out, _ = _run(capsys, "--layer", LAYER, "--config", config, "--emulate", "--json")
    res = json.loads(out)
    assert code == 0 and res["default_threads"] == threads and res["emulate"]["ok"]
    assert {k: res["config"][k] for k in threads} == threads
    code, out, _ = _run(capsys, "--layer", LAYER, "--config", config)
    assert code == 0 and f"threads  tx={threads['tx']} ty={threads['ty']} tz={threads['tz']} (default" in out


def test_given_threads_are_not_reported_as_default(capsys):
    """A config with its threads has default_threads null."""
    code, out, _ = _run(capsys, "--layer", LAYER, "--config", DIRECT, "--json")
    assert code == 0 and json.loads(out)["default_threads"] is None
