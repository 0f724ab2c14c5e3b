"""nvcc: toolchain lookup, ptxas parsing, compile results, caching, and the compile matrix."""

import os
import stat
import textwrap

import pytest

from iobound.errors import ToolchainError
from kernel_matrix import CASES
from kernels import nvcc as nv
from kernels import toolchains as tc
from kernels.generate import generate
from kernels.status import Status

NEW_LOG = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'iobound_direct' for 'sm_80'
ptxas info    : Function properties for iobound_direct
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 72 registers, used 1 barriers, 432 bytes smem, 376 bytes cmem[0]
ptxas info    : Compile time = 26.999 ms
"""

OLD_TWO_FUNCTIONS = """\
ptxas info    : Compiling entry function 'a' for 'sm_70'
ptxas info    : Function properties for a
    16 bytes stack frame, 20 bytes spill stores, 24 bytes spill loads
ptxas info    : Used 255 registers, 4096 bytes smem, 360 bytes cmem[0]
ptxas info    : Compiling entry function 'b' for 'sm_70'
ptxas info    : Function properties for b
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, 352 bytes cmem[0]
"""


def test_parse_ptxas_current_format():
    """Registers, barriers-line shared memory and spills of CUDA 12/13 output."""
    info = nv.parse_ptxas(NEW_LOG)["iobound_direct"]
    assert (info.arch, info.registers, info.shared_bytes, info.spill_stores, info.spill_loads) == (
        "sm_80", 72, 432, 0, 0)


@pytest.mark.parametrize("text", [None, b"ptxas info", 5])
def test_parse_ptxas_needs_text(text):
    """No text: InvalidInputError (None was AttributeError, bytes a TypeError from re)."""
    from iobound.errors import InvalidInputError
    with pytest.raises(InvalidInputError, match="ptxas output must be text"):
        nv.parse_ptxas(text)


def test_parse_ptxas_several_functions_and_spills():
    """Each entry function gets its own numbers; missing smem means 0."""
    infos = nv.parse_ptxas(OLD_TWO_FUNCTIONS)
    assert (infos["a"].registers, infos["a"].shared_bytes, infos["a"].spill_stores,
            infos["a"].spill_loads, infos["a"].stack_bytes) == (255, 4096, 20, 24, 16)
    assert (infos["b"].registers, infos["b"].shared_bytes) == (8, 0)


def _fake_nvcc(folder, body="", archs=("75", "80"), release="12.4"):
    """A shell script answering --version/--list-gpu-arch like nvcc, else running body."""
    path = folder / "nvcc"
    arch_lines = "\\n".join(f"compute_{a}" for a in archs)
    path.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        case "$1" in
          --version) echo "Cuda compilation tools, release {release}, V{release}.1"; exit 0;;
          --list-gpu-arch) printf '{arch_lines}\\n'; exit 0;;
        esac
        {body}
        """))
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    nv.toolchain.cache_clear()
    return path


def test_find_nvcc_prefers_a_toolchain_supporting_the_arch(tmp_path, monkeypatch):
    """With an arch, the first nvcc listing it wins; without, the first found (PATH first)."""
    (tmp_path / "path").mkdir()
    (tmp_path / "cuda" / "bin").mkdir(parents=True)
    on_path = _fake_nvcc(tmp_path / "path", archs=("80", "90"), release="13.0")
    in_home = _fake_nvcc(tmp_path / "cuda" / "bin", archs=("70", "80"), release="12.4")
    monkeypatch.setenv("PATH", f"{tmp_path / 'path'}{os.pathsep}/usr/bin{os.pathsep}/bin")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda"))
    monkeypatch.delenv("IOBOUND_NVCC", raising=False)
    monkeypatch.setattr(tc, "_wheel_bins", lambda: [])
    assert nv.nvcc_candidates()[:2] == [str(on_path), str(in_home)]
    assert nv.find_nvcc() == str(on_path)
    assert nv.find_nvcc("sm_70") == str(in_home)
    assert nv.find_nvcc("sm_52") is None
    assert nv.toolchain(str(in_home)).release == "12.4"


def test_find_nvcc_looks_in_the_pip_wheel(tmp_path, monkeypatch):
    """The nvidia-cuda-nvcc wheel's bin folder (nvidia/cuda_nvcc/bin) is searched via sys.path."""
    wheel_bin = tmp_path / "site" / "nvidia" / "cuda_nvcc" / "bin"
    wheel_bin.mkdir(parents=True)
    fake = _fake_nvcc(wheel_bin)
    monkeypatch.setattr("sys.path", [str(tmp_path / "site")])
    assert wheel_bin in tc._wheel_bins()
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.delenv("IOBOUND_NVCC", raising=False)
    assert str(fake) in nv.nvcc_candidates()


def test_missing_nvcc_is_a_toolchain_error(tmp_path, monkeypatch):
    """No nvcc anywhere raises ToolchainError (an environment problem, not a kernel's)."""
    from kernels import nvrtc
    for module in (nv, tc):  # found in toolchains, listed by the compile's error
        monkeypatch.setattr(module, "nvcc_candidates", lambda: [])
    monkeypatch.setattr(nvrtc, "find_nvrtc_toolchain", lambda arch=None: None)
    with pytest.raises(ToolchainError, match="nvcc not found"):
        nv.compile_cubin("", "sm_80", cache_root=tmp_path)


def test_compile_timeout_is_a_result(tmp_path):
    """An nvcc that hangs gives status 'timeout', not an exception."""
    fake = _fake_nvcc(tmp_path, body="sleep 5")
    res = nv.compile_cubin("int x;", "sm_80", nvcc=str(fake), cache_root=tmp_path, timeout=0.3)
    assert res.status is Status.TIMEOUT and "timed out" in res.log


# A fake nvcc compile (one line: _fake_nvcc dedents its script): count the run, print a
# ptxas report, write the cubin to the path after -o (the last argument).
_FAKE_COMPILE = ('echo run >> "$(dirname "$0")/runs"; for a; do out=$a; done; '
                 "echo \"ptxas info    : Compiling entry function 'k' for 'sm_80'\" >&2; "
                 'echo "ptxas info    : Used 10 registers, 64 bytes smem, 0 bytes cmem[0]" >&2; '
                 'echo cubin > "$out"')


def test_compile_cache_is_keyed_by_source_and_toolchain_version(tmp_path):
    """Same source and nvcc: a hit. Changed source, or an nvcc of another release: a miss."""
    folder = tmp_path / "bin"
    folder.mkdir()
    runs = folder / "runs"
    cache = tmp_path / "cache"

    def compile_with(release, code="int k;"):
        fake = _fake_nvcc(folder, body=_FAKE_COMPILE, archs=("80",), release=release)
        return nv.compile_cubin(code, "sm_80", nvcc=str(fake), cache_root=cache)

    first = compile_with("12.4")
    assert first.ok and not first.cached and (first.registers, first.shared_bytes) == (10, 64)
    hit = compile_with("12.4")
    assert hit.cached and hit.cubin_path == first.cubin_path
    assert not compile_with("12.4", code="int k2;").cached
    other = compile_with("12.6")
    assert not other.cached and other.toolchain == "12.6" and other.cubin_path != first.cubin_path
    assert runs.read_text().count("run") == 3


def test_compiler_that_cannot_start_is_a_compile_error(tmp_path):
    """An nvcc that exists but cannot be executed (OSError) is a compile_error result."""
    fake = _fake_nvcc(tmp_path, archs=("80",))
    nv.toolchain(str(fake))  # looked up while it still runs
    fake.write_text("#!/nonexistent/interpreter\n")
    res = nv.compile_cubin("int k;", "sm_80", nvcc=str(fake), cache_root=tmp_path / "cache")
    assert res.status is Status.COMPILE_ERROR and "could not run" in res.log


def test_bad_arch_string_is_a_value_error(tmp_path):
    """The arch must be spelled sm_XX."""
    with pytest.raises(ValueError, match="sm_80"):
        nv.compile_cubin("", "80", cache_root=tmp_path)


@pytest.mark.parametrize("arch", ["sm_", "sm_abc", "", None, 80, "sm_80\n", b"sm_80", "sm_8O",
                                  "compute_80"])
def test_malformed_arch_is_an_input_error_everywhere(tmp_path, arch):
    """compile_cubin, find_toolchain and find_nvcc (given an arch) refuse one not spelled
    sm_XX with InvalidInputError (None, 80 and b"sm_80" were TypeErrors; "sm_80\n" passed
    the check and came back as a compile_error for every kernel; find_nvcc answered None
    for "compute_80" where the others refused it)."""
    from iobound.errors import InvalidInputError
    with pytest.raises(InvalidInputError, match="arch must look like sm_80"):
        nv.compile_cubin("int k;", arch, cache_root=tmp_path)
    with pytest.raises(InvalidInputError, match="arch must look like sm_80"):
        nv.find_toolchain(arch)
    if arch is not None:
        with pytest.raises(InvalidInputError, match="arch must look like sm_80"):
            nv.find_nvcc(arch)


@pytest.mark.parametrize("timeout", [float("nan"), -1, 0, float("inf"), -float("inf"), "5", True])
def test_bad_timeout_is_an_input_error_not_a_result(tmp_path, timeout):
    """A timeout that is no number of seconds > 0 is refused before nvcc runs (NaN was a
    ValueError from subprocess, inf an OverflowError, "5" a TypeError, 0 and -1 a recorded
    'timeout' result)."""
    from iobound.errors import InvalidInputError
    fake = _fake_nvcc(tmp_path, archs=("80",), body=_FAKE_COMPILE)
    with pytest.raises(InvalidInputError, match="timeout"):
        nv.compile_cubin("int k;", "sm_80", nvcc=str(fake), cache_root=tmp_path, timeout=timeout)
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("timeout", [None, 30, 0.5])
def test_no_limit_and_finite_timeouts_still_compile(tmp_path, timeout):
    """None (no limit) and a number of seconds keep working."""
    fake = _fake_nvcc(tmp_path, archs=("80",), body=_FAKE_COMPILE)
    assert nv.compile_cubin("int k;", "sm_80", nvcc=str(fake), cache_root=tmp_path / "c",
                            timeout=timeout).ok


@pytest.mark.parametrize("kwargs, match", [
    ({"source": None}, "source must be"), ({"source": 5}, "source must be"),
    ({"extra_flags": "-lineinfo"}, "extra_flags"), ({"extra_flags": [1]}, "extra_flags"),
    ({"nvcc": 5}, "nvcc must be a path"),
    ({"extra_flags": ["-DN=1\x00"]}, "extra_flags: .* holds a NUL character"),
    ({"source": "int k;\x00"}, "source: .* holds a NUL character"),
    ({"source": "int k\ud800;"}, "source: the character at 5 is a lone surrogate"),
])
def test_compile_arguments_of_the_wrong_type(tmp_path, kwargs, match):
    """No source text, a flags string (was split into one-letter flags) or an nvcc that is
    no path: InvalidInputError (were AttributeError / a compile_error per kernel)."""
    from iobound.errors import InvalidInputError
    args = {"source": "int k;", **kwargs}
    with pytest.raises(InvalidInputError, match=match):
        nv.compile_cubin(args.pop("source"), "sm_80", cache_root=tmp_path, **args)


@pytest.mark.parametrize("sources, workers, match", [
    ("int k;", None, "sequence of sources"), (None, None, "sequence of sources, got NoneType"),
    (5, None, "sequence of sources, got int"), (["int k;"], 0, "workers"),
    (["int k;"], -1, "workers"), (["int k;"], 2.5, "workers"),
])
def test_compile_many_arguments(sources, workers, match):
    """One string is not a list of sources (it was compiled letter by letter), nor is None
    (a TypeError from list()); workers must
    be an integer >= 1 (-1 was a ValueError from the thread pool)."""
    from iobound.errors import InvalidInputError
    with pytest.raises(InvalidInputError, match=match):
        nv.compile_many(sources, workers=workers)


@pytest.mark.nvcc
def test_compile_error_is_a_result_with_the_log(tmp_path):
    """Source nvcc rejects gives status compile_error carrying nvcc's messages."""
    res = nv.compile_cubin("this is not cuda", "sm_80", cache_root=tmp_path)
    assert res.status is Status.COMPILE_ERROR and "error" in res.log and res.registers is None


@pytest.mark.nvcc
def test_cache_hit_returns_the_stored_result(tmp_path):
    """The second compile of one source is served from the cache with the same numbers."""
    src = generate(*CASES[0][1:])
    first = nv.compile_cubin(src, "sm_80", cache_root=tmp_path)
    second = nv.compile_cubin(src, "sm_80", cache_root=tmp_path)
    assert first.ok and not first.cached and second.cached
    assert (second.registers, second.cubin_path) == (first.registers, first.cubin_path)
    assert os.path.getsize(second.cubin_path) > 0


@pytest.mark.nvcc
def test_sm70_compiles_via_cuda12_wheels_or_is_a_clean_compile_error(tmp_path):
    """CUDA 13 dropped sm_70: NVRTC + ptxas of the CUDA 12 wheels build it; without them the
    result is a compile_error saying which toolchain supports what."""
    results = nv.compile_many([generate(layer, cfg) for _, layer, cfg in CASES], "sm_70",
                              cache_root=tmp_path)
    for res in results:
        if nv.find_toolchain("sm_70") is None:
            assert res.status is Status.COMPILE_ERROR
            assert "no nvcc found supports sm_70" in res.log and "CUDA 13 dropped sm_70" in res.log
        else:
            assert res.ok and res.registers > 0 and "for 'sm_70'" in res.log, res.log


def test_nvrtc_toolchain_absent_without_the_wheels(monkeypatch):
    """Without the cu12 wheels on sys.path there is no NVRTC toolchain."""
    from kernels import nvrtc
    monkeypatch.setattr("sys.path", ["/nonexistent"])
    assert nvrtc.find_nvrtc_toolchain() is None and nvrtc.find_nvrtc_toolchain("sm_70") is None


def test_nvrtc_source_error_is_a_compile_error_result(tmp_path):
    """With the wheels, NVRTC's rejection is a compile_error carrying its log (else: clean error:
    a compile_error naming the toolchains, or, with no CUDA compiler at all, ToolchainError)."""
    from iobound.errors import ToolchainError
    from kernels import nvrtc
    if not nv.nvcc_candidates() and nvrtc.find_nvrtc_toolchain() is None:
        with pytest.raises(ToolchainError, match="nvcc not found"):
            nv.compile_cubin("garbage", "sm_70", cache_root=tmp_path)
        return
    res = nv.compile_cubin("garbage", "sm_70", cache_root=tmp_path)
    assert res.status is Status.COMPILE_ERROR and res.log


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """Every kernel of the matrix for sm_75, sm_80 and sm_90, compiled in parallel."""
    root = tmp_path_factory.mktemp("cubins")
    sources = [generate(layer, cfg) for _, layer, cfg in CASES]
    return {arch: dict(zip([c[0] for c in CASES], nv.compile_many(sources, arch, cache_root=root)))
            for arch in ("sm_75", "sm_80", "sm_90")}


@pytest.mark.nvcc
@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_90"])
@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_matrix_kernel_compiles(compiled, arch, name):
    """nvcc compiles the kernel; ptxas reports registers and the declared shared memory."""
    res = compiled[arch][name]
    assert res.ok, res.log
    src_bytes = dict((c[0], generate(c[1], c[2]).shared_bytes) for c in CASES)[name]
    assert res.registers > 0 and res.shared_bytes == src_bytes
    assert res.spill_stores is not None and os.path.getsize(res.cubin_path) > 0


@pytest.mark.parametrize("name", ["missing", "not-executable"])
def test_an_iobound_nvcc_naming_no_program_is_an_error_not_a_fall_back(tmp_path, monkeypatch, name):
    """IOBOUND_NVCC is a choice: a wrong one was skipped silently and the next nvcc used."""
    from iobound.errors import ToolchainError
    (tmp_path / "not-executable").write_text("#!/bin/sh\n")
    monkeypatch.setenv("IOBOUND_NVCC", str(tmp_path / name))
    with pytest.raises(ToolchainError, match="IOBOUND_NVCC=.* is not an executable file"):
        nv.nvcc_candidates()
    fake = _fake_nvcc(tmp_path)
    monkeypatch.setenv("IOBOUND_NVCC", str(fake))
    assert nv.nvcc_candidates()[0] == str(fake)


def test_an_iobound_nvcc_that_is_no_nvcc_is_an_error_not_a_fall_back(tmp_path, monkeypatch):
    """IOBOUND_NVCC=/bin/false (an executable, but no nvcc) was passed over for the next nvcc,
    which then compiled with status ok: a program whose --version names no CUDA release is
    refused, naming the variable."""
    from iobound.errors import ToolchainError
    fake = tmp_path / "false"
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    nv.toolchain.cache_clear()
    monkeypatch.setenv("IOBOUND_NVCC", str(fake))
    with pytest.raises(ToolchainError, match="IOBOUND_NVCC=.* is no nvcc"):
        nv.nvcc_candidates()


@pytest.mark.parametrize("said, cached", [
    ('kernel.cu(3): error: identifier \\"q\\" is undefined', True),
    ("ptxas error   : Entry function 'k' uses too much shared data", True),
    ("Could not open output file 'kernel.cubin'", False),
    ("nvcc fatal   : No space left on device", False),
])
def test_only_a_failure_that_is_the_kernel_s_is_cached(tmp_path, said, cached):
    """A compile_error was cached whatever caused it, so one environment problem (a cache
    folder nvcc could not write to, a full disk) failed that kernel in every later run."""
    folder = tmp_path / "bin"
    folder.mkdir()
    fake = _fake_nvcc(folder, archs=("80",),
                      body=f'echo run >> "$(dirname "$0")/runs"; echo "{said}" >&2; exit 2')
    for _ in range(2):
        res = nv.compile_cubin("int k;", "sm_80", nvcc=str(fake), cache_root=tmp_path / "c")
        assert res.status is Status.COMPILE_ERROR and said.split()[0] in res.log
    assert (folder / "runs").read_text().count("run") == (1 if cached else 2)


def test_a_cached_failure_that_was_not_the_kernel_s_is_compiled_again(tmp_path):
    """Caches written before the rule above may hold such a failure: it is a miss."""
    folder = tmp_path / "bin"
    folder.mkdir()
    broken = _fake_nvcc(folder, archs=("80",), body='echo "Could not open output file" >&2; exit 1')
    res = nv.compile_cubin("int k;", "sm_80", nvcc=str(broken), cache_root=tmp_path / "c")
    key_files = list((tmp_path / "c" / "cubin").glob("*.json"))
    assert res.status is Status.COMPILE_ERROR and key_files == []
    meta = tmp_path / "c" / "cubin" / "stale.json"
    nv._write_record(meta, res)  # what an older version cached for this failure
    assert nv._cached_result(meta, meta.with_suffix(".cubin")) is None


@pytest.mark.parametrize("code, match", [
    ("int k;\x00", "code: .* holds a NUL character"),
    ("int \udcff;", "code: the character at 4 is a lone surrogate"),
])
def test_emulator_source_a_compiler_cannot_be_given(tmp_path, code, match):
    """A lone surrogate in the source was a UnicodeEncodeError from the cache key; a NUL
    reached g++ as an odd compile error."""
    from iobound.errors import InvalidInputError
    from kernels import emulator_build as emu
    with pytest.raises(InvalidInputError, match=match):
        emu.build_emulator(code, cache_root=tmp_path)
