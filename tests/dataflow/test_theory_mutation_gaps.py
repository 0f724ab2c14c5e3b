"""Gaps a mutation-testing pass over iobound/ and dataflow/ found (one test per gap).

Each test checks a formula against an oracle that does not use it:

* the direct bounds take ``R = reuse_max`` (DESIGN.md; the paper's average ``k_h k_w/mu^2``
  is not what the proofs support): a 1x1 convolution of stride ``mu`` is the same DAG as a
  1x1 convolution of stride 1 on the inputs it reads, so every bound must agree; and the
  X-partition value equals its formula with products and reuse counted by brute force;
* ``dataflow_reuse``'s staged inputs per output per axis, ``min(k, mu / gcd(mu, d))``, is
  the density of the input positions a long run of windows reads (counted);
* ``Winograd.label`` names the layer's kernel ``r x r``, not ``e x e``;
* a device whose static shared memory per block is above its shared memory per SM is
  refused at the first byte over, not only far above.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest
from hypothesis import given, strategies as st

from dataflow.continuous_optimum import dataflow_reuse
from dataflow.dag_direct import direct_conv_dag
from iobound.algorithms import WINOGRAD
from iobound.devices import get_device
from iobound.direct_bounds import direct_bound_values
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from iobound.vertex_counts import iter_direct_products


@given(mu_h=st.integers(2, 4), mu_w=st.integers(1, 4), h=st.integers(1, 9), w=st.integers(1, 9),
       c_in=st.integers(1, 3), c_out=st.integers(1, 3), s=st.sampled_from([4, 16, 64, 1000]))
def test_strided_pointwise_bounds_equal_those_of_the_inputs_it_reads(mu_h, mu_w, h, w, c_in,
                                                                     c_out, s):
    """A 1x1 stride-mu layer reads rows/cols 0, mu, 2mu, ...: its DAG is the stride-1 DAG of
    those ceil(h/mu) x ceil(w/mu) inputs, so its bounds (functions of the DAG and S) are
    equal. With the paper's R = 1/mu^2 instead of R_max = 1 they were up to mu times larger,
    above what the smaller layer's games achieve."""
    strided = ConvLayer(1, c_in, h, w, c_out, 1, 1, stride=(mu_h, mu_w))
    dense = ConvLayer(1, c_in, -(-h // mu_h), -(-w // mu_w), c_out, 1, 1)
    g_s, g_d = direct_conv_dag(strided), direct_conv_dag(dense)
    assert sorted(Counter(k for _, k in g_s.nodes(data="kind")).items()) == \
        sorted(Counter(k for _, k in g_d.nodes(data="kind")).items())
    assert g_s.number_of_edges() == g_d.number_of_edges()
    got, want = direct_bound_values(strided, s), direct_bound_values(dense, s)
    assert got == pytest.approx(want, rel=1e-12, abs=1e-9)


@given(k=st.integers(1, 4), mu=st.integers(1, 4), extra=st.integers(0, 3), s=st.sampled_from([2, 9, 50]))
def test_x_partition_value_uses_brute_force_products_and_max_reuse(k, mu, extra, s):
    """x_partition = max(0, sqrt(2) MACs / sqrt(R S) - 4 S) with MACs the enumerated products
    and R the most windows that read one input, counted (the layer is large enough that an
    interior input meets the maximum)."""
    size = k + mu * (k + 2 + extra)
    layer = ConvLayer(1, 2, size, size, 2, k, k, stride=(mu, mu))
    windows: dict = {}
    macs = 0
    for x, _, out in iter_direct_products(layer):
        macs += 1
        windows.setdefault(x, set()).add(out)
    r_brute = max(len(v) for v in windows.values()) // layer.c_out
    assert r_brute == layer.reuse_max
    want = max(0.0, 2 ** 0.5 * macs / (r_brute * s) ** 0.5 - 4 * s)
    assert direct_bound_values(layer, s)["x_partition"] == pytest.approx(want, rel=1e-12, abs=1e-9)


def _density(k: int, mu: int, d: int) -> int:
    """Input positions a run of windows reads per output, counted far from its ends."""
    def read(n_out):
        return len({o * mu + i * d for o in range(n_out) for i in range(k)})
    run = 4 * ((k - 1) * d + 1 + mu)
    return (read(2 * run) - read(run)) // run


@given(kh=st.integers(1, 5), kw=st.integers(1, 5), mu_h=st.integers(1, 4), mu_w=st.integers(1, 4),
       d_h=st.integers(1, 4), d_w=st.integers(1, 4))
def test_dataflow_reuse_is_kernel_over_the_counted_input_density(kh, kw, mu_h, mu_w, d_h, d_w):
    """R_df = k_h k_w / (rho_h rho_w), rho the staged inputs per output along an axis. With the
    dilation ignored (rho = min(k, mu)) a stride-2, dilation-2 3x3 layer got 9/4, not 9."""
    h = (kh - 1) * d_h + 1 + 3 * mu_h
    w = (kw - 1) * d_w + 1 + 3 * mu_w
    layer = ConvLayer(1, 1, h, w, 1, kh, kw, stride=(mu_h, mu_w), dilation=(d_h, d_w))
    rho = _density(kh, mu_h, d_h) * _density(kw, mu_w, d_w)
    assert dataflow_reuse(layer) == pytest.approx(kh * kw / rho, rel=1e-12)


@pytest.mark.parametrize("e", [1, 2, 4, 6])
@pytest.mark.parametrize("r", [1, 3, 5])
def test_winograd_label_names_the_layers_kernel(e, r):
    layer = ConvLayer(1, 2, 16, 16, 2, r, r)
    assert WINOGRAD.label(layer, e) == f"winograd F({e}x{e}, {r}x{r})"


def test_bound_command_titles_winograd_with_the_kernel(capsys):
    from search.cli.main import main

    assert main(["bound", "--layer", "cin=2,hin=12,cout=2,kh=5", "--fast-memory", "1KiB",
                 "--algorithm", "winograd"]) == 0
    assert "winograd F(2x2, 5x5)" in capsys.readouterr().out


def test_static_block_shared_memory_one_byte_above_the_sm_is_refused():
    v100 = get_device("v100")
    per_sm = v100.shared_mem_per_sm_bytes
    ok = dataclasses.replace(v100, shared_mem_per_block_bytes=per_sm,
                             shared_mem_per_block_optin_bytes=per_sm)
    assert ok.shared_mem_per_block_bytes == per_sm
    with pytest.raises(InvalidInputError, match=f"shared_mem_per_block_bytes={per_sm + 1} is above"):
        dataclasses.replace(v100, shared_mem_per_block_bytes=per_sm + 1)
