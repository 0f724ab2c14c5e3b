"""Review regressions for iobound.composite: the relaxed T(S) needs non-decreasing phi/psi,
plain Symbol('k') / Symbol('S') are the toolkit's k / S, and invalid steps raise
InvalidInputError naming what is wrong."""
import math

import pytest
import sympy as sp

from iobound.composite import CompositeAlgorithm, CompositeStep
from iobound.direct_bounds import direct_composite
from iobound.errors import InvalidInputError
from iobound.symbols import R, S, k
from iobound.winograd_bounds import winograd_composite

NON_MONOTONE = {
    "hump phi": CompositeAlgorithm((CompositeStep("a", k * (S - k)),)),       # exact T(10) = 35
    "decreasing phi": CompositeAlgorithm((CompositeStep("a", 10 - k),)),       # exact T(10) = 20
    "decreasing psi": CompositeAlgorithm((CompositeStep("a", k, 10 - k), CompositeStep("b", 2 * k))),
    "negative psi": CompositeAlgorithm((CompositeStep("a", k, k - 1), CompositeStep("b", 2 * k))),
}


@pytest.mark.parametrize("name", sorted(NON_MONOTONE))
def test_relaxed_rejects_non_monotone_steps(name):
    with pytest.raises(InvalidInputError, match="step 'a'"):
        NON_MONOTONE[name].T_expr()


def test_exact_still_takes_non_monotone_phi():
    assert NON_MONOTONE["hump phi"].T_exact(10) == 35


@pytest.mark.parametrize("alg", [direct_composite(True), direct_composite(False),
                                 winograd_composite()], ids=["direct", "tight", "winograd"])
def test_toolkit_steps_pass_the_check(alg):
    assert alg.T_expr().free_symbols


def test_plain_k_and_S_are_the_toolkit_symbols():
    kk, SS = sp.symbols("k S")
    alg = CompositeAlgorithm((CompositeStep("products", kk * sp.sqrt(SS) / 2),
                              CompositeStep("sums", kk - 1)))
    for method in ("vertex", "relaxed"):
        assert alg.T_expr(method).free_symbols == {S}
    assert float(alg.T_expr("vertex").subs(S, 16)) == alg.T_exact(16) == 79.0


def test_string_phi():
    alg = CompositeAlgorithm((CompositeStep("a", "2*k"),))
    with pytest.raises(InvalidInputError, match="step 'a'.*expression"):
        alg.T_exact(3)
    with pytest.raises(InvalidInputError, match="step 'a'.*expression"):
        alg.T_expr()


def test_bare_expression_as_step():
    with pytest.raises(InvalidInputError, match="step 0 must be a CompositeStep"):
        CompositeAlgorithm((2 * k,))


def test_missing_parameter_is_named():
    alg = CompositeAlgorithm((CompositeStep("a", R * k),))
    with pytest.raises(InvalidInputError, match="needs a value for R"):
        alg.T_exact(5)
    assert alg.T_exact(5, {"R": 2}) == alg.T_exact(5, {R: 2}) == 15.0


def test_non_finite_value_raises():
    alg = CompositeAlgorithm((CompositeStep("a", sp.sqrt(k - 3)),))
    with pytest.raises(InvalidInputError, match="not a finite"):
        alg.T_exact(5)
    with pytest.raises(InvalidInputError, match="finite"):
        CompositeAlgorithm((CompositeStep("a", R * k),)).T_exact(5, {"R": math.nan})


def test_a_limit_sympy_cannot_take_is_not_a_proof(monkeypatch):
    """Where SymPy cannot take phi's limit at k -> 0+, monotonicity is not proven: refused."""
    import sympy as sp

    from iobound import composite_checks
    from iobound.symbols import k

    def cannot(*args, **kwargs):
        raise NotImplementedError("no limit")
    monkeypatch.setattr(composite_checks.sp, "limit", cannot)
    composite_checks.nondecreasing.cache_clear()
    try:
        assert composite_checks.nondecreasing(2 * k + sp.sqrt(k)) is False
    finally:
        composite_checks.nondecreasing.cache_clear()
