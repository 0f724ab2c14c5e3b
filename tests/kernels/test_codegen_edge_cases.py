"""Hostile-but-valid layers and configs of the generated kernels and their model.

* a layer whose every output lies in the padding has a lower bound of 0 words; the
  ``iobound kernel --emulate`` report must still print (it divided by the bound);
* ``used_offsets_dense`` is a property of (tile, stride, dilation, k) that must agree with
  its definition (now a closed form: enumerating every clipped tile took half a minute
  for a 8192-wide row tile in ``generate``);
* ``kernels.analytic``'s ``footprint_words`` and ``io_over_bound`` use the block's on-chip
  words of the config itself; a Winograd block's depend on its threads (each thread keeps
  its own transformed kernels, tile and product).
"""

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from iobound.layer import ConvLayer


def _my_conv(x, w, layer):
    """Plain numpy cross-correlation (NCHW, KCRS), independent of kernels.reference."""
    (sh, sw), (ph, pw), (dh, dw) = layer.stride, layer.padding, layer.dilation
    xp = np.zeros((layer.n, layer.c_in, layer.h_in + 2 * ph, layer.w_in + 2 * pw))
    xp[:, :, ph:ph + layer.h_in, pw:pw + layer.w_in] = x
    out = np.zeros((layer.n, layer.c_out, layer.h_out, layer.w_out))
    for i in range(layer.k_h):
        for j in range(layer.k_w):
            win = xp[:, :, i * dh:i * dh + (layer.h_out - 1) * sh + 1:sh,
                     j * dw:j * dw + (layer.w_out - 1) * sw + 1:sw]
            out += np.einsum("nchw,kc->nkhw", win, w[:, :, i, j])
    return out


def test_kernel_cli_emulate_reports_a_layer_whose_outputs_all_lie_in_the_padding(capsys):
    """1x1 kernel, stride 2, padding 1 on a 1x1 image: every window sits on padding, so
    the outputs are 0, no input is used and the best lower bound is 0 words. The
    emulated kernel is right (it stores the zeros); the report must not divide by 0."""
    from search.cli.main import main

    layer = ConvLayer(n=1, c_in=2, h_in=1, w_in=1, c_out=3, k_h=1, k_w=1, stride=2, padding=1)
    x = np.random.default_rng(0).uniform(-1, 1, (1, 2, 1, 1))
    w = np.random.default_rng(1).uniform(-1, 1, (3, 2, 1, 1))
    assert not _my_conv(x, w, layer).any()  # every output is padding only
    args = ["kernel", "--layer", "cin=2,hin=1,cout=3,kh=1,stride=2,pad=1",
            "--config", "x=1,y=1,z=1,alpha=1", "--emulate"]
    assert main(args + ["--json"]) == 0
    rec = json.loads(capsys.readouterr().out)["emulate"]
    assert rec["ok"] and rec["lower_bound"] == 0
    assert main(args) == 0  # the human-readable report of the same run
    out = capsys.readouterr().out
    assert "emulate  ok" in out and "bound " in out


def test_tune_reports_a_layer_whose_outputs_all_lie_in_the_padding(capsys, tmp_path, monkeypatch):
    """tune's winner line has no ratio to a bound of 0 (it formatted None: a traceback);
    --json gives ratio_to_bound null."""
    from search.cli.main import main

    monkeypatch.chdir(tmp_path)
    args = ["tune", "--layer", "cin=2,hin=1,cout=3,kh=1,stride=2,pad=1", "--measure", "model",
            "--budget", "4"]
    assert main(args) == 0
    assert "no ratio (a bound of 0" in capsys.readouterr().out
    assert main(args + ["--json"]) == 0
    assert json.loads(capsys.readouterr().out)["bound"]["ratio_to_bound"] is None


def _dense_by_definition(tile, stride, dilation, k):
    extent = (k - 1) * dilation + 1
    return all({o * stride + i * dilation for o in range(n) for i in range(k)}
               == set(range((n - 1) * stride + extent)) for n in range(1, tile + 1))


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 12), st.integers(1, 6), st.integers(1, 4), st.integers(1, 7))
def test_used_offsets_dense_is_its_definition(tile, stride, dilation, k):
    from kernels.codegen_direct import used_offsets_dense

    assert used_offsets_dense(tile, stride, dilation, k) == _dense_by_definition(tile, stride, dilation, k)


@pytest.mark.parametrize("knobs", [[2, 8, 8, 16, 4, 4, 4], [2, 8, 8, 8, 4, 4, 2], [3, 9, 9, 8, 3, 3, 4]])
def test_analytic_winograd_words_are_the_config_s_own(knobs):
    """The Winograd kernel's block holds shared (y+r-1)(x+r-1) + (z + (x/e)(y/e)) s
    floats (the input rectangle, the transformed kernels and tiles at an odd stride s:
    n^2, or n^2 + 1 when n^2 is even), the
    accumulators acc[z][y/e][x/e][n^2] and, per thread, u[ceil(z/tz)][n^2], v[n^2] and
    partial[n^2] (kernels/templates/winograd.cu). footprint_words is that count and
    io_over_bound is io_words over the best bound at it, threads included."""
    from iobound.report import best_lower_bound
    from kernels.analytic import FEATURE_NAMES, analytic_features

    layer = ConvLayer(n=1, c_in=64, h_in=32, w_in=32, c_out=64, k_h=3, k_w=3, padding=1)
    e, x, y, z, tx, ty, tz = knobs
    r, n = 3, e + 2
    words = ((y + r - 1) * (x + r - 1) + (z + (y // e) * (x // e)) * (n * n + 1 - n % 2)
             + z * (y // e) * (x // e) * n * n
             + tx * ty * tz * (-(-z // tz) + 2) * n * n)
    f = dict(zip(FEATURE_NAMES, analytic_features(layer, "a100", "winograd", np.array([knobs]))[0]))
    assert f["footprint_words"] == words
    assert f["io_over_bound"] == pytest.approx(
        f["io_words"] / best_lower_bound(layer, words, "winograd", e))
