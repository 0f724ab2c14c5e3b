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


def _tile_model_log():
    """f and g of dataflow.continuous_optimum in log coordinates u = ln P, v = ln z."""
    from dataflow.continuous_optimum import A, ALPHA, C, C_IN, K
    u, v = sp.symbols("u v", real=True)
    f = C_IN * (A * sp.exp(u) + K * sp.exp(v)) / (sp.exp(u) * sp.exp(v))
    g = C * sp.exp(u + v) + ALPHA * (A * sp.exp(u) + K * sp.exp(v))
    return (u, v), f, g


def test_tile_problem_is_convex_in_log_coordinates():
    """In (u, v) = (ln P, ln z), f = C_in (a e^-v + K e^-u) and g = c e^(u+v) + alpha (a e^u
    + K e^v) have positive-definite Hessians for all positive constants (diagonal entries
    and determinant positive after simplification): f is strictly convex and {g <= S} is
    convex, so with the box 0 <= u <= ln P_max, 0 <= v <= ln Z_max the problem is a convex
    program whose KKT points are its unique optimum (what dataflow.continuous_optimum relies
    on)."""
    uv, f, g = _tile_model_log()
    for expr in (f, g):
        hess = sp.hessian(expr, uv)
        for i in range(2):
            assert sp.simplify(hess[i, i]).is_positive
        assert sp.simplify(sp.expand(hess.det())).is_positive
    # f falls as P or z grows: with room to spare (g < S) a larger tile is better, so the
    # optimum is the corner (P_max, Z_max) when it fits, and on g = S otherwise
    for w in uv:
        assert sp.simplify(sp.diff(f, w)).is_negative


def test_tile_optimum_on_a_cap():
    """When the interior point (P*, z*) has z* > Z_max, the optimum is z = Z_max with P from
    g = S: that P solves g = S and falls with z (dP/dz = -(c S + alpha^2 a K)/(c z + alpha a)^2),
    so a P - K z falls with z and vanishes at z* (a P* = K z*): a P > K z at z = Z_max < z*.
    The KKT multipliers (grad f + lambda grad g + mu e_v = 0 in log coordinates) are then
    lambda = C_in K / (P^2 (c z + alpha a)) > 0 and
    mu = C_in (a P - K z) g / (P^2 z (c z + alpha a)) > 0: a KKT point of the convex
    program, hence its optimum. Symmetrically for the cap P = P_max (z from g = S)."""
    from dataflow.continuous_optimum import (A, ALPHA, C, C_IN, K, P, S, Z, boundary_expressions,
                                             continuous_optimum_expressions)
    p_of_z, z_of_p = boundary_expressions()
    g = C * P * Z + ALPHA * (A * P + K * Z)
    assert sp.simplify(g.subs(P, p_of_z) - S) == 0
    assert sp.simplify(g.subs(Z, z_of_p) - S) == 0
    assert sp.simplify(sp.diff(p_of_z, Z) + (C * S + ALPHA**2 * A * K) / (C * Z + ALPHA * A)**2) == 0
    assert sp.simplify(sp.diff(z_of_p, P) + (C * S + ALPHA**2 * A * K) / (C * P + ALPHA * K)**2) == 0
    assert sp.simplify(sp.diff(A * p_of_z - K * Z, Z)).is_negative
    assert sp.simplify(sp.diff(K * z_of_p - A * P, P)).is_negative
    p_opt, z_opt = continuous_optimum_expressions()
    assert sp.simplify((A * p_of_z - K * Z).subs(Z, z_opt)) == 0
    assert sp.simplify((K * z_of_p - A * P).subs(P, p_opt)) == 0

    f = C_IN * (A * P + K * Z) / (P * Z)
    f_u, f_v = P * sp.diff(f, P), Z * sp.diff(f, Z)      # d/du = P d/dP, d/dv = z d/dz
    g_u, g_v = P * sp.diff(g, P), Z * sp.diff(g, Z)
    lam = sp.simplify(-f_u / g_u)                          # z capped: P free
    assert sp.simplify(lam - C_IN * K / (P**2 * (C * Z + ALPHA * A))) == 0 and lam.is_positive
    mu = -(f_v + lam * g_v)
    assert sp.simplify(mu - C_IN * (A * P - K * Z) * g / (P**2 * Z * (C * Z + ALPHA * A))) == 0
    lam_p = sp.simplify(-f_v / g_v)                        # P capped: z free
    assert lam_p.is_positive
    mu_p = -(f_u + lam_p * g_u)
    assert sp.simplify(mu_p - C_IN * (K * Z - A * P) * g / (P * Z**2 * (C * P + ALPHA * K))) == 0


def test_tile_optimum_on_a_floor():
    """A tile has z >= 1 and P >= 1 (one output channel, one output position). The box
    holds a point of g <= S exactly when g(1, 1) <= S: on g = S the z at P = 1 is
    1 + (S - g(1, 1)) / (c + alpha K) (and the P at z = 1 likewise), so both floors are
    reachable then. When the interior point has z* < 1, the optimum is z = 1 with P from
    g = S: there z > z*, so a P - K z < 0 (it falls with z and vanishes at z*), and the
    KKT multiplier of the floor -v <= 0 (grad f + lambda grad g - nu e_v = 0 in log
    coordinates, lambda as on the cap z = Z_max) is
    nu = C_in (K z - a P) g / (P^2 z (c z + alpha a)) > 0. Symmetrically P = 1 when P* < 1:
    K z - a P < 0 there and nu_P = C_in (a P - K z) g / (P z^2 (c P + alpha K)) > 0. A KKT
    point of the convex program, hence its unique optimum (dataflow.continuous_optimum)."""
    from dataflow.continuous_optimum import (A, ALPHA, C, C_IN, K, P, S, Z, boundary_expressions,
                                             continuous_optimum_expressions)
    p_of_z, z_of_p = boundary_expressions()
    g = C * P * Z + ALPHA * (A * P + K * Z)
    g11 = g.subs({P: 1, Z: 1})
    assert sp.simplify(z_of_p.subs(P, 1) - (1 + (S - g11) / (C + ALPHA * K))) == 0
    assert sp.simplify(p_of_z.subs(Z, 1) - (1 + (S - g11) / (C + ALPHA * A))) == 0
    # a P - K z on g = S falls with z and vanishes at z* (so it is negative at z = 1 > z*);
    # K z - a P falls with P and vanishes at P* (negative at P = 1 > P*)
    p_opt, z_opt = continuous_optimum_expressions()
    assert sp.simplify(sp.diff(A * p_of_z - K * Z, Z)).is_negative
    assert sp.simplify((A * p_of_z - K * Z).subs(Z, z_opt)) == 0
    assert sp.simplify(sp.diff(K * z_of_p - A * P, P)).is_negative
    assert sp.simplify((K * z_of_p - A * P).subs(P, p_opt)) == 0

    f = C_IN * (A * P + K * Z) / (P * Z)
    f_u, f_v = P * sp.diff(f, P), Z * sp.diff(f, Z)
    g_u, g_v = P * sp.diff(g, P), Z * sp.diff(g, Z)
    lam = sp.simplify(-f_u / g_u)                          # z held at 1: P free
    assert lam.is_positive
    nu = f_v + lam * g_v                                   # the floor's multiplier
    assert sp.simplify(nu - C_IN * (K * Z - A * P) * g / (P**2 * Z * (C * Z + ALPHA * A))) == 0
    lam_p = sp.simplify(-f_v / g_v)                        # P held at 1: z free
    assert lam_p.is_positive
    nu_p = f_u + lam_p * g_u
    assert sp.simplify(nu_p - C_IN * (A * P - K * Z) * g / (P * Z**2 * (C * P + ALPHA * K))) == 0
    # with a P < K z (z = 1 > z*) or K z < a P (P = 1 > P*) and every factor else positive,
    # the multiplier is positive: its sign is that of the bracket
    for mult, bracket in ((nu, K * Z - A * P), (nu_p, A * P - K * Z)):
        assert sp.simplify(mult / bracket).is_positive
