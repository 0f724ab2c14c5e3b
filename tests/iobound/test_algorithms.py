"""Algorithm families as types: the theory's registry and its contract."""

import pytest
from hypothesis import given, strategies as st

from iobound.algorithms import (ALGORITHMS, DIRECT, WINOGRAD, Algorithm, Registry, algorithm_name,
                                get_algorithm)
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from iobound.report import bound_report


def test_names_are_the_vocabulary():
    """The names are the CLI/JSON vocabulary, each maps to its object and back."""
    assert ALGORITHMS == ("direct", "winograd")
    for name in ALGORITHMS:
        alg = get_algorithm(name)
        assert isinstance(alg, Algorithm) and alg.name == name and str(alg) == name
        assert get_algorithm(alg) is alg and algorithm_name(alg) == name


@pytest.mark.parametrize("bad", ["fft", "", "Direct", None, 3])
def test_unknown_name_lists_the_known_ones(bad):
    """An unknown name is bad input whose message names it and every known one."""
    with pytest.raises(InvalidInputError, match="choose one of direct, winograd") as info:
        get_algorithm(bad)
    assert repr(bad) in str(info.value)


def test_registry_rejects_a_second_registration():
    """A name is registered once per registry."""
    r = Registry("thing")
    r.register("direct", 1)
    with pytest.raises(ValueError, match="registered twice"):
        r.register("direct", 2)
    assert "direct" in r and DIRECT in r and WINOGRAD not in r and list(r) == [1]


@given(st.integers(1, 3), st.integers(1, 3), st.sampled_from([1, 2]), st.integers(1, 5))
def test_applicability_is_the_layers_winograd_rule(k_h, k_w, stride, e):
    """Winograd applies exactly where the layer says; direct always; e is checked, and
    direct, which has no e, refuses one."""
    layer = ConvLayer(1, 2, 8, 8, 2, k_h, k_w, stride=stride)
    assert DIRECT.applies_to(layer)
    assert WINOGRAD.applies_to(layer) == layer.winograd_applicable
    assert WINOGRAD.parameter(e) == e and WINOGRAD.parameter(None) == 2
    assert DIRECT.parameter(None) is None
    with pytest.raises(InvalidInputError, match=f"only meaningful with algorithm 'winograd' \\(got e={e} "):
        DIRECT.parameter(e)


def test_an_e_given_with_direct_is_refused_by_bounds_and_dataflows():
    """bound_report passed e over for direct (a report read as F(3x3)'s); it and
    evaluate_dataflow now refuse it with the same words."""
    from dataflow.evaluate import evaluate_dataflow
    layer = ConvLayer(1, 4, 10, 10, 8, 3, 3, padding=1)
    for call in (lambda: bound_report(layer, 500, "direct", 3),
                 lambda: evaluate_dataflow(layer, 500, "direct", e=3)):
        with pytest.raises(InvalidInputError, match="winograd e is only meaningful"):
            call()
    assert bound_report(layer, 500, "direct").e is None


@pytest.mark.parametrize("bad_e", [0, -1, 1.5, True])
def test_bad_winograd_e(bad_e):
    with pytest.raises(InvalidInputError, match="Winograd output tile e"):
        WINOGRAD.parameter(bad_e)


@given(st.integers(16, 20000), st.sampled_from(ALGORITHMS))
def test_bound_report_takes_the_name_or_the_object(S, name):
    """bound_report gives the same report for a name and for its Algorithm."""
    layer = ConvLayer(1, 4, 10, 10, 8, 3, 3, padding=1)
    by_name, by_obj = bound_report(layer, S, name), bound_report(layer, S, get_algorithm(name))
    assert by_name.algorithm == by_obj.algorithm == name
    assert by_name.bounds.keys() == by_obj.bounds.keys() and by_name.best == by_obj.best
