"""The ``--help`` texts of ``iobound`` subcommands against what the commands do.

Each test reads a claim of a help text and checks it against the code path it
describes (an independent check of the behaviour, not a pin of the wording): a help
that states the behaviour it has passes, one that promises another fails.
"""

from __future__ import annotations

import argparse
import json
import re

import pytest

from search.cli import dataflow_cmd, select_cmd
from search.cli.main import build_parser, main


def _option_help(command: str, flag: str) -> str:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    action = next(a for a in sub.choices[command]._actions if flag in a.option_strings)
    return " ".join(action.help.split())


def _dataflow_io(capsys, *extra: str) -> tuple[int, int]:
    """(e of the reported tiles, exact I/O) of ``iobound dataflow --algorithm winograd``."""
    argv = ["dataflow", "--layer", "cin=64,hin=56,cout=64,kh=3,pad=1", "--fast-memory", "48KiB",
            "--algorithm", "winograd", "--json", *extra]
    assert main(argv) == 0
    d = json.loads(capsys.readouterr().out)
    return d["tiles"]["e"], d["io_exact_parts"]["total"]


def test_dataflow_help_claims_only_the_winograd_e_choice_it_makes(capsys):
    """``iobound dataflow``'s description said it chooses "the output tiles x*y*z (and
    channel chunk alpha, or Winograd e)". The search never chooses e: without
    ``--winograd-e`` it searches tiles for e = 2 only, even where another e moves fewer
    words. A help that says the search chooses e must keep it: the default search at
    most the I/O of every e it could choose."""
    description = " ".join(dataflow_cmd.DESCRIPTION.split())
    claims_e_chosen = re.search(r"^Choose [^.]*\bor Winograd e\b", description) is not None
    default_e, default_io = _dataflow_io(capsys)
    others = {e: _dataflow_io(capsys, "--winograd-e", str(e)) for e in (2, 3, 4)}
    assert default_e == 2 and others[2][1] == default_io   # the search's e: 2, always
    if claims_e_chosen:
        best_e = min(others, key=lambda e: others[e][1])
        assert default_io <= others[best_e][1], (
            f"the help says the search chooses Winograd e; it kept e=2 ({default_io:,} words) "
            f"where e={best_e} moves {others[best_e][1]:,}")
    help_e = _option_help("dataflow", "--winograd-e")
    assert "default 2" in help_e   # the e the search uses without the option


def test_tune_help_states_the_device_a_cuda_run_uses_by_default(monkeypatch):
    """``iobound tune --device``'s help said "(default v100, the paper's GPU)"; with
    ``--measure cuda`` (the default measurer where a GPU is) the default is the GPU's own
    preset (:func:`search.cli.measure_args.device_for`)."""
    from iobound.devices import get_device
    from search.cli import measure_args
    from search.measure import cuda

    monkeypatch.setattr(cuda, "gpu_name", lambda *a, **k: "NVIDIA A100-PCIE-40GB")
    device, note = measure_args.device_for(argparse.Namespace(device=None), "cuda")
    assert device.name == get_device("NVIDIA A100-PCIE-40GB").name and "this GPU" in note
    help_text = _option_help("tune", "--device")
    m = re.search(r"\(default ([\w-]+)", help_text)
    if m:  # an unconditional default: every measurer must use it
        assert device.name == get_device(m.group(1)).name, (
            f"tune --device help says {m.group(0)!r}; a cuda run on an A100 uses {device.name}")
    assert "cuda" in help_text or "GPU's" in help_text


@pytest.mark.parametrize("spec,why", [
    ("cin=4,hin=8,cout=4,kh=3,pad=1,groups=4", "grouped (depthwise)"),
    ("cin=4,hin=8,cout=4,kh=3,pad=2,dilation=2", "dilated"),
])
def test_select_help_names_every_layer_without_winograd_candidates(spec, why):
    """``iobound select``'s description said the candidates are "direct; Winograd e = 2, 3,
    4 on square stride-1 layers with a kernel of 2x2 or more". A grouped or a dilated
    3x3 stride-1 layer gets direct alone (:func:`search.selection.dataset.candidates`);
    the help must say which layers those are."""
    from iobound.layer_spec import parse_layer_spec
    from search.selection.dataset import candidates

    layer = parse_layer_spec(spec)
    assert layer.stride == (1, 1) and layer.k_h == layer.k_w == 3
    offered = {c.algorithm for c in candidates(layer)}
    description = " ".join(select_cmd.DESCRIPTION.split())
    word = {"grouped (depthwise)": "group", "dilated": "dilation"}[why]
    if word not in description:  # the help's rule alone: Winograd offered
        assert "winograd" in offered, (
            f"select's help offers Winograd on this {why} 3x3 stride-1 layer; the code does not")



def test_domain_states_the_s_b_it_prunes_with(capsys):
    """``iobound domain``'s help said "S_b = S_sm/2 in fp32 words" and its text printed
    "S_sm/2 = <S_b> fp32 words = S_b"; the domain prunes with S_b = min(S_sm/2, the static
    shared memory of one block) (:func:`search.table1.domain_for`), which on an A100
    (S_sm = 164 KiB, 48 KiB a block) is 12288 words, not S_sm/2 = 20992."""
    from iobound.devices import get_device
    from iobound.units import WORD_BYTES
    from search.cli import domain_cmd

    dev = get_device("a100")
    half_sm = dev.shared_mem_per_sm_bytes // 2 // WORD_BYTES
    per_block = dev.shared_mem_per_block_bytes // WORD_BYTES
    argv = ["domain", "--layer", "cin=4,hin=8,cout=4,kh=3,pad=1", "--device", "a100"]
    assert main([*argv, "--json"]) == 0
    s_b = json.loads(capsys.readouterr().out)["S_b_words"]
    assert s_b == min(half_sm, per_block) == 12288 and half_sm == 20992  # the code's S_b
    assert main(argv) == 0
    text = capsys.readouterr().out
    m = re.search(r"S_sm/2 = (\d+) fp32 words", text)
    if m:  # the text names S_sm/2: it must be S_sm/2
        assert int(m.group(1)) == half_sm, f"domain prints {m.group(0)!r}; S_sm/2 is {half_sm}"
    description = " ".join(domain_cmd.DESCRIPTION.split())
    if re.search(r"S_b = S_sm/2\b", description):
        assert s_b == half_sm, "domain --help says S_b = S_sm/2; it prunes with a smaller S_b"


def _help_rule_block(x: int, y: int, z: int, z_cap: int = 256,
                     block_cap: bool = True) -> tuple[int, int, int]:
    """The default block as ``iobound kernel --help`` states the rule: tx the largest
    divisor of x of at most 256, ty the largest divisor of y keeping tx*ty within 256,
    then tz of z (within ``z_cap``, and keeping tx*ty*tz within 256 if ``block_cap``)."""
    def largest(n, most):
        return max(d for d in range(1, min(n, most) + 1) if n % d == 0)
    tx = largest(x, 256)
    ty = largest(y, 256 // tx)
    return tx, ty, largest(z, min(z_cap, 256 // (tx * ty) if block_cap else z))


@pytest.mark.parametrize("x,y,z", [(1, 1, 128), (2, 1, 128), (8, 8, 8), (16, 4, 16),
                                   (12, 12, 4)])
def test_kernel_help_states_the_default_thread_block_rule(x, y, z):
    """``iobound kernel``'s help gives the default block's rule with 256 threads as the
    only cap; :func:`kernels.thread_block.default_thread_block` also keeps tz within 64
    (CUDA's blockDim.z limit): x=y=1, z=128 gets tz=64, not 128. The help must say so."""
    from kernels.thread_block import default_thread_block
    from search.cli import kernel_cmd

    got = default_thread_block({"x": x, "y": y, "z": z, "alpha": 1}, "direct")
    got = (got["tx"], got["ty"], got["tz"])
    description = " ".join(kernel_cmd.DESCRIPTION.split())
    z_cap = 64 if re.search(r"tz of z[^;)]*\b64\b", description) else 256
    # tz keeps the whole block within 256 only if the help says so (it did not: 12x12x4
    # got tz=1 where the rule as written gave 4)
    block_cap = bool(re.search(r"tz of z[^;)]*tx\*ty\*tz within 256", description))
    rule = _help_rule_block(x, y, z, z_cap, block_cap)
    assert got == rule, f"kernel --help's rule gives {rule}; the default block is {got}"
