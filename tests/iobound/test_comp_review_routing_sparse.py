"""Review regression: the Winograd routing LPs are built as sparse matrices (memory linear in
the image size, not quadratic), with the same results as before."""
import scipy.sparse

from iobound import winograd_routing as wr


def test_routing_lps_are_sparse(monkeypatch):
    seen = []
    real = wr.linprog

    def spy(c, A_ub=None, b_ub=None, A_eq=None, b_eq=None, **kw):
        seen.append((scipy.sparse.issparse(A_ub), scipy.sparse.issparse(A_eq), A_ub.nnz))
        return real(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, **kw)

    monkeypatch.setattr(wr, "linprog", spy)
    size, tiles = 200, 100
    axis = wr._axis_routing.__wrapped__(2, 3, 1, size, tiles)
    cross = wr._cross_routing.__wrapped__(2, 3, 1, size, tiles)
    assert seen and all(a and b for a, b, _ in seen)
    assert max(nnz for _, _, nnz in seen) < 20 * size          # linear, not size^2
    assert round(axis.load, 6) == 2.0 and round(cross.cross, 6) == 1.0   # the doctest values


def test_large_axis_is_fast_and_unchanged():
    # 4096 positions: the dense matrices were ~10^8 entries per LP
    assert round(wr._axis_routing.__wrapped__(2, 3, 1, 4096, 2048).load, 6) == 2.0
