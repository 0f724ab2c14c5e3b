"""Outputs whose window lies wholly in the padding: counted by brute force, reported by
``evaluate_dataflow`` and ``iobound dataflow``, and left out of the DAG's compulsory bound."""
import numpy as np
from hypothesis import assume, given, settings, strategies as st

from dataflow.evaluate import evaluate_dataflow
from iobound.layer import ConvLayer
from iobound.vertex_counts import direct_counts


def _padding_only(layer: ConvLayer) -> int:
    """Outputs of one image and channel with no tap on a real input, times n * c_out."""
    def live(size_in, size_out, k, s, p, d):
        return np.array([any(0 <= o * s - p + t * d < size_in for t in range(k))
                         for o in range(size_out)])
    lh = live(layer.h_in, layer.h_out, layer.k_h, layer.stride[0], layer.padding[0], layer.dilation[0])
    lw = live(layer.w_in, layer.w_out, layer.k_w, layer.stride[1], layer.padding[1], layer.dilation[1])
    return layer.n * layer.c_out * int((~np.outer(lh, lw)).sum())


@settings(max_examples=40, deadline=None)
@given(h=st.integers(1, 6), k=st.integers(1, 3), pad=st.integers(0, 4), stride=st.integers(1, 3),
       c_out=st.integers(1, 3))
def test_padding_only_outputs_brute_force(h, k, pad, stride, c_out):
    assume(h + 2 * pad >= k)
    layer = ConvLayer(n=1, c_in=2, h_in=h, w_in=h, c_out=c_out, k_h=k, k_w=k,
                      stride=stride, padding=pad)
    rep = evaluate_dataflow(layer, 256)
    assert rep.padding_only_outputs == _padding_only(layer)
    assert rep.to_dict()["padding_only_outputs"] == rep.padding_only_outputs
    # the dataflow stores every output; the DAG (and its compulsory bound) has the rest
    assert rep.io.output_stores == layer.output_size
    assert direct_counts(layer).outputs == layer.output_size - rep.padding_only_outputs


def test_dataflow_cli_notes_padding_only_outputs(capsys):
    from search.cli.main import main
    assert main(["dataflow", "--layer", "cin=8,hin=8,cout=8,kh=1,pad=1", "--fast-memory", "48KiB"]) == 0
    out = capsys.readouterr().out
    assert "288 outputs see only padding" in out
    assert main(["dataflow", "--layer", "cin=8,hin=8,cout=8,kh=3,pad=1", "--fast-memory", "48KiB"]) == 0
    assert "see only padding" not in capsys.readouterr().out
