"""bound_report / best_lower_bound and parse_layer_spec: documented contracts.

References: the docstrings (``best_lower_bound`` is the largest bound of
:func:`bound_report` for the same algorithm and e; the best bound is the maximum of the
reported ones; spec keys are the documented names), and the Winograd theorem's leading
term (Thm 4.12) growing with the input tile (e + r - 1) r / e, so different e give different
bounds.
"""

import pytest

from iobound import ConvLayer, parse_layer_spec
from iobound.report import best_lower_bound, bound_report

LAYER = ConvLayer(n=1, c_in=16, h_in=12, w_in=12, c_out=16, k_h=3, k_w=3, padding=1)


@pytest.mark.parametrize("e", [2, 3, 4])
def test_best_lower_bound_uses_the_winograd_tile(e):
    rep = bound_report(LAYER, 256, "winograd", e=e)
    assert best_lower_bound(LAYER, 256, "winograd", e=e) == rep.best
    assert rep.best == max(b.value for b in rep.bounds.values())
    assert rep.e == e


def test_winograd_bounds_differ_with_e():
    """Thm 4.12's (e + r - 1) r / e changes with e, so best_lower_bound must see e."""
    values = {e: bound_report(LAYER, 256, "winograd", e=e).bounds for e in (2, 4)}
    leading = {e: {m: b.leading_term for m, b in v.items() if b.leading_term} for e, v in values.items()}
    assert leading[2] and leading[2] != leading[4]


def test_spec_keys_ignore_case():
    """CIN=... is cin=...: keys are matched case-insensitively, like preset names."""
    assert parse_layer_spec("CIN=8, HIN=6, COUT=4, KH=3, Stride=1x1") == \
        parse_layer_spec("cin=8, hin=6, cout=4, kh=3, stride=1x1")


def _real_macs(layer):
    """Multiply-accumulates that touch a real (non-padding) input, by enumeration."""
    def taps(k, mu, d, pad, n_out, size):
        return sum(1 for o in range(n_out) for i in range(k) if 0 <= o * mu + i * d - pad < size)
    return (layer.n * layer.c_out * layer.c_in_per_group
            * taps(layer.k_h, layer.stride[0], layer.dilation[0], layer.padding[0], layer.h_out, layer.h_in)
            * taps(layer.k_w, layer.stride[1], layer.dilation[1], layer.padding[1], layer.w_out, layer.w_in))


@pytest.mark.parametrize("s", [64, 256, 1024])
def test_leading_terms_are_reported_per_bound_and_follow_theorem_4_9(s):
    """The composite bound's leading term is Thm 4.9's MACs / (4 sqrt(2 R S)) (R = reuse_max,
    MACs on real inputs); the report's leading_terms repeat each bound's; compulsory has none."""
    import math
    rep = bound_report(LAYER, s)
    hk = rep.bounds["hong_kung_composite"].leading_term
    assert hk == pytest.approx(_real_macs(LAYER) / (4 * math.sqrt(2 * LAYER.reuse_max * s)))
    assert rep.bounds["compulsory"].leading_term is None
    assert rep.leading_terms == {m: b.leading_term for m, b in rep.bounds.items()
                                 if b.leading_term is not None}


def test_report_dict_carries_the_bound_values():
    """to_dict()['bounds'] are the bounds' values (not their leading terms); best is their max."""
    import json
    rep = bound_report(LAYER, 256)
    d = json.loads(json.dumps(rep.to_dict()))
    assert d["bounds"] == {m: b.value for m, b in rep.bounds.items()}
    assert d["best"] == max(d["bounds"].values()) and d["bounds"][d["best_method"]] == d["best"]
    assert d["fast_memory_words"] == 256 and d["algorithm"] == "direct"
