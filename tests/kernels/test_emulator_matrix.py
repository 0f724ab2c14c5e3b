"""Every kernel of the test matrix, emulated: numpy-exact within fp32 bounds, formula-exact traffic."""

from concurrent.futures import ThreadPoolExecutor

import pytest

from kernel_matrix import CASES
from kernels.emulator import build_emulator
from kernels.generate import generate
from kernels.verify import emulate_and_check

IDS = [name for name, _, _ in CASES]


@pytest.fixture(scope="module", autouse=True)
def prebuilt():
    """Build all emulator libraries up front, two at a time (later runs hit the cache)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda case: build_emulator(generate(case[1], case[2]).code), CASES))


@pytest.fixture(scope="module")
def checks():
    return {}


def _check(checks, name, layer, config):
    if name not in checks:
        checks[name] = emulate_and_check(layer, config, seed=len(name))
    return checks[name]


@pytest.mark.parametrize("name,layer,config", CASES, ids=IDS)
def test_output_matches_numpy(checks, name, layer, config):
    """The emulated output equals the float64 reference within the fp32 error bound."""
    chk = _check(checks, name, layer, config)
    assert chk.numerics_ok, (chk.max_abs_err, chk.worst_ratio)


@pytest.mark.parametrize("name,layer,config", CASES, ids=IDS)
def test_counted_traffic_equals_formula(checks, name, layer, config):
    """Counted LDG and STG equal the dataflow's exact I/O formula."""
    chk = _check(checks, name, layer, config)
    assert (chk.global_loads, chk.global_stores) == (chk.expected_loads, chk.expected_stores)


@pytest.mark.parametrize("name,layer,config", CASES, ids=IDS)
def test_counted_traffic_respects_lower_bound(checks, name, layer, config):
    """Counted traffic is at least the best lower bound at the kernel's on-chip words."""
    chk = _check(checks, name, layer, config)
    assert chk.global_loads + chk.global_stores >= chk.lower_bound > 0
