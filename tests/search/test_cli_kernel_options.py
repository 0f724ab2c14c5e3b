"""``iobound kernel`` options found unchecked by mutation testing: ``--algorithm`` against
the config's keys, and ``--seed``, ``--arch`` and ``--device`` reaching the functions they
configure (checked with spies on :func:`kernels.verify.emulate_and_check` and
:func:`kernels.nvcc.compile_cubin`; the reference is each option's ``--help`` text)."""

import pytest

from search.cli.main import main

LAYER = "cin=3,hin=8,cout=4,kh=3,pad=1"
DIRECT = "x=4,y=4,z=4,alpha=2,tx=4,ty=2,tz=2"
WINOGRAD = "e=2,x=4,y=4,z=2,tx=2,ty=2,tz=1"


class _Stop(Exception):
    """Raised by a spy once it has seen its call."""


@pytest.mark.parametrize("algorithm, config, needle", [
    ("direct", WINOGRAD, "direct config"),
    ("winograd", DIRECT, "winograd"),
])
def test_algorithm_that_contradicts_the_config_is_exit_2(capsys, tmp_path, algorithm, config, needle):
    """--algorithm names the family; a config of the other family is refused, not re-read."""
    code = main(["kernel", "--layer", LAYER, "--algorithm", algorithm, "--config", config,
                 "--emit", str(tmp_path / "k.cu")])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert needle in err.lower() and not (tmp_path / "k.cu").exists()


@pytest.mark.parametrize("seed", [0, 7])
def test_seed_reaches_the_emulation(monkeypatch, tmp_path, seed):
    import kernels.verify

    seen = {}

    def spy(layer, config, seed=0, **kwargs):
        seen["seed"] = seed
        raise _Stop

    monkeypatch.setattr(kernels.verify, "emulate_and_check", spy)
    with pytest.raises(_Stop):
        main(["kernel", "--layer", LAYER, "--config", DIRECT, "--emulate", "--seed", str(seed),
              "--emit", str(tmp_path / "k.cu")])
    assert seen == {"seed": seed}


@pytest.mark.parametrize("extra, arch", [
    ([], "sm_80"),                             # a100, the default device
    (["--device", "v100"], "sm_70"),           # the device's arch
    (["--device", "v100", "--arch", "sm_75"], "sm_75"),  # --arch wins
])
def test_arch_reaches_nvcc(monkeypatch, tmp_path, extra, arch):
    import kernels.nvcc

    seen = {}

    def spy(source, arch="sm_80", **kwargs):
        seen["arch"] = arch
        raise _Stop

    monkeypatch.setattr(kernels.nvcc, "compile_cubin", spy)
    with pytest.raises(_Stop):
        main(["kernel", "--layer", LAYER, "--config", DIRECT, "--compile", *extra,
              "--emit", str(tmp_path / "k.cu")])
    assert seen == {"arch": arch}


def test_config_is_checked_against_the_given_device(capsys):
    """The reasons name the --device the config was checked for (2048 threads > 1024)."""
    code = main(["kernel", "--layer", "cin=2,hin=32,cout=2,kh=1", "--device", "v100",
                 "--config", "x=32,y=32,z=2,alpha=1,tx=32,ty=32,tz=2"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "2048 threads exceed 1024 per block on V100-SXM2" in err


@pytest.mark.parametrize("as_json", [True, False])
def test_emulator_build_failure_keeps_the_compiler_log(capsys, monkeypatch, tmp_path, as_json):
    """A kernel g++ rejects is ``ok: false`` with the error and g++'s log (exit 1)."""
    import json

    import kernels.verify
    from kernels.emulator import EmulatorBuildError

    def fail(*args, **kwargs):
        raise EmulatorBuildError("g++ failed", "kernel.cpp:1: error: LOGLINE")

    monkeypatch.setattr(kernels.verify, "emulate_and_check", fail)
    code = main(["kernel", "--layer", LAYER, "--config", DIRECT, "--emulate",
                 "--emit", str(tmp_path / "k.cu"), *(["--json"] if as_json else [])])
    out = capsys.readouterr().out
    assert code == 1
    if as_json:
        emu = json.loads(out)["emulate"]
        assert (emu["ok"], emu["error"], emu["log"]) == (False, "g++ failed",
                                                         "kernel.cpp:1: error: LOGLINE")
    else:
        assert "emulate  FAILED: g++ failed" in out and "  kernel.cpp:1: error: LOGLINE" in out
