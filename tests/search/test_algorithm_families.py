"""The per-layer algorithm registries (dataflow, kernels, search) agree with each other and with the modules they wrap."""

import pytest
from hypothesis import given, strategies as st

from dataflow.direct import DirectTiling, direct_footprint, direct_io
from dataflow.evaluate import evaluate_dataflow
from dataflow.families import DATAFLOWS, dataflow_family
from dataflow.winograd import WinogradTiling, winograd_footprint, winograd_io
from iobound.algorithms import ALGORITHMS, get_algorithm
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from kernels.config import DirectConfig, WinogradConfig
from kernels.families import KERNELS, kernel_family
from search.domain_families import DOMAINS, domain_family


def test_every_registry_knows_every_algorithm():
    """Theory, dataflow, kernels and search register the same names, in the same order."""
    assert DATAFLOWS.names() == KERNELS.names() == DOMAINS.names() == ALGORITHMS
    for name in ALGORITHMS:
        alg = get_algorithm(name)
        assert dataflow_family(alg).algorithm is alg and kernel_family(alg).algorithm is alg
        assert kernel_family(name).dataflow is dataflow_family(name)
        assert kernel_family(name).config_type.algorithm == name
        assert domain_family(alg).algorithm is alg


@pytest.mark.parametrize("lookup", [dataflow_family, kernel_family, domain_family])
def test_unknown_algorithm_is_bad_input(lookup):
    with pytest.raises(InvalidInputError, match="unknown algorithm 'fft'; choose one of direct, winograd"):
        lookup("fft")


def test_evaluate_dataflow_rejects_an_unknown_algorithm():
    with pytest.raises(InvalidInputError, match="choose one of direct, winograd"):
        evaluate_dataflow(ConvLayer(1, 2, 8, 8, 2, 3, 3), 1024, algorithm="fft")


side = st.integers(1, 4)


@given(side, side, side, side)
def test_dataflow_families_wrap_the_dataflow_modules(x, y, z, alpha):
    """A family's I/O and footprint are those of dataflow.direct / dataflow.winograd."""
    layer = ConvLayer(1, 5, 8, 8, 6, 3, 3, padding=1)
    d = DirectTiling(x, y, z, alpha)
    fam = dataflow_family("direct")
    assert fam.io(layer, d) == direct_io(layer, d) and fam.footprint(layer, d) == direct_footprint(layer, d)
    w = WinogradTiling(2, 2 * x, 2 * y, z)
    fam = dataflow_family("winograd")
    assert fam.io(layer, w) == winograd_io(layer, w)
    assert fam.footprint(layer, w) == winograd_footprint(layer, w)
    assert fam.tiling_from((2, 2 * x, 2 * y, z)) == w


def test_kernel_family_of_a_config():
    """A config finds its family; the knob columns follow the config's params."""
    d, w = DirectConfig(4, 4, 2, 1, 2, 2, 1), WinogradConfig(2, 4, 4, 2, 2, 2, 1)
    assert kernel_family(d).name == "direct" and kernel_family(w).name == "winograd"
    assert kernel_family(d).tile_columns() == (0, 1, 2)
    assert kernel_family(w).tile_columns() == (1, 2, 3)
    assert kernel_family(d).tile_columns(("alpha",)) == (3,)
