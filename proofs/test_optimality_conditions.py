"""Optimality conditions of the dataflows: xy = R z (direct, Eq. 12) and xy = r^2 z (Eq. 14).

Direct: reading I/O per output is proportional to f = z + x y / R (Eq. 12). At a
fixed block volume x y z = P, Lagrange gives x y = R z and f_min = 2 sqrt(P / R).
Winograd: g = x y + z r^2 at fixed x y z; minimum at x y = r^2 z, g_min = 2 r sqrt(P).
"""

import sympy as sp

x, y, z, lam = sp.symbols("x y z lambda", positive=True)
m = sp.Symbol("m", positive=True)   # m = x y: the costs depend on x and y only through it
R, P, r = sp.symbols("R P r", positive=True)


def _stationary(f):
    """Stationary points of f(m, z) on m z = P (Lagrange)."""
    L = f - lam * (m * z - P)
    return sp.solve([sp.diff(L, v) for v in (m, z, lam)], [m, z, lam], dict=True)


def test_direct_condition():
    """Minimising z + x y / R at x y z = P forces x y = R z; the minimum is 2 sqrt(P/R)."""
    f = z + m / R
    sols = _stationary(f)
    assert sols
    for s in sols:
        assert sp.simplify(s[m] - R * s[z]) == 0
        assert sp.simplify(f.subs(s) - 2 * sp.sqrt(P / R)) == 0


def test_direct_condition_is_a_minimum():
    """AM-GM: z + xy/R - 2 sqrt(xyz/R) = (sqrt(z) - sqrt(xy/R))^2 >= 0."""
    f = z + x * y / R
    sq = (sp.sqrt(z) - sp.sqrt(x * y / R)) ** 2
    assert sp.simplify(sp.expand(sq) - (f - 2 * sp.sqrt(x * y * z / R))) == 0


def test_eq12_total():
    """(1/(xyz)) K C_in (z + xy/R) at xy = Rz equals 2 K C_in / sqrt(R xyz)."""
    K = sp.Symbol("K", positive=True)
    expr = K * (z + x * y / R) / (x * y * z)
    at = expr.subs(z, x * y / R)
    assert sp.simplify(at - (2 * K / sp.sqrt(R * x * y * (x * y / R)))) == 0


def test_winograd_condition():
    """Minimising x y + z r^2 at x y z = P forces x y = r^2 z; minimum 2 r sqrt(P)."""
    g = m + z * r ** 2
    sols = _stationary(g)
    assert sols
    for s in sols:
        assert sp.simplify(s[m] - r ** 2 * s[z]) == 0
        assert sp.simplify(g.subs(s) - 2 * r * sp.sqrt(P)) == 0


def test_the_toolkits_tile_optimum():
    """What dataflow.optimal_tiles searches around (dataflow.continuous_optimum): minimising
    f = C_in (a P + K z) / (P z) on g = c P z + alpha (a P + K z) = S. Its point (P*, z*)
    satisfies a P* = K z* (x y = R_df z with R_df = K / a), lies on g = S, and no other
    point of g = S has a smaller f (sampled along the constraint at several constants)."""
    from dataflow.continuous_optimum import A, ALPHA, C, C_IN, K, S, continuous_optimum_expressions
    p_opt, z_opt = continuous_optimum_expressions()
    assert sp.simplify(A * p_opt - K * z_opt) == 0
    g = C * p_opt * z_opt + ALPHA * (A * p_opt + K * z_opt) - S
    assert sp.simplify(g) == 0
    for consts in ({A: 1, K: 9, C: 1, ALPHA: 1, S: 4096, C_IN: 8},
                   {A: 2, K: 3, C: 4, ALPHA: 0.5, S: 500, C_IN: 3},
                   {A: 1, K: 1, C: 16, ALPHA: 2, S: 64, C_IN: 1}):
        best_p = float(p_opt.subs(consts))

        def f_on_g(p):  # z from the constraint, then f
            a, k, c, al, s, cin = (float(consts[v]) for v in (A, K, C, ALPHA, S, C_IN))
            zz = (s - al * a * p) / (c * p + al * k)
            return cin * (a * p + k * zz) / (p * zz) if zz > 0 else float("inf")
        at = f_on_g(best_p)
        assert all(f_on_g(best_p * t) >= at * (1 - 1e-12)
                   for t in (0.25, 0.5, 0.9, 0.99, 1.01, 1.1, 2.0, 4.0))
