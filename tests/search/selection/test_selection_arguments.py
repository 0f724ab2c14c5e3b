"""The selection helpers name a wrong argument: a candidate given as its label string, a
None config, a layer given as a dict were AttributeError / TypeError from deep inside,
and Candidate("winograd", 2.0) or e=True compared equal to a tile and was accepted."""

from __future__ import annotations

import numpy as np
import pytest

from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from search.selection.dataset import DIRECT, Candidate, Example
from search.selection.first_config import nearest_config
from search.selection.select import chosen_io, min_flops

LAYER = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
CFG = {"x": 6, "y": 6, "z": 4, "alpha": 1, "tx": 6, "ty": 6, "tz": 1}
SEEN = Example(LAYER, "V100-SXM2", {DIRECT: 1.0}, {DIRECT: CFG})


@pytest.mark.parametrize("e", [2.0, True, "2", 2.5, None])
def test_a_winograd_tile_must_be_an_integer_tile(e):
    with pytest.raises(InvalidInputError, match="winograd e must be one of"):
        Candidate("winograd", e)


def test_a_numpy_integer_tile_is_that_integer():
    c = Candidate("winograd", np.int64(4))
    assert type(c.e) is int and c == Candidate("winograd", 4) and c.label == "winograd-e4"


@pytest.mark.parametrize("call", [
    lambda: chosen_io(LAYER, "direct", CFG),
    lambda: min_flops(LAYER, "winograd-e2"),
    lambda: nearest_config(LAYER, "v100", "direct", [SEEN]),
])
def test_a_candidate_label_is_not_a_candidate(call):
    with pytest.raises(InvalidInputError, match=r"candidate must be a Candidate \(e.g. "):
        call()


@pytest.mark.parametrize("call", [
    lambda: chosen_io(vars(LAYER), DIRECT, CFG),
    lambda: min_flops(None, DIRECT),
    lambda: nearest_config("resnet18.conv1", "v100", DIRECT, [SEEN]),
])
def test_a_layer_must_be_a_conv_layer(call):
    with pytest.raises(InvalidInputError, match="layer must be a ConvLayer, got"):
        call()


def test_chosen_io_needs_a_config_mapping():
    with pytest.raises(InvalidInputError, match="a kernel config must be a mapping"):
        chosen_io(LAYER, DIRECT, None)


@pytest.mark.parametrize("examples", ["fab", [CFG], None])
def test_nearest_config_needs_examples(examples):
    with pytest.raises(InvalidInputError, match="examples must be a list of Example"):
        nearest_config(LAYER, "v100", DIRECT, examples)


def test_the_checked_helpers_still_answer():
    """The checks refuse only what is wrong: the documented answers stand."""
    assert min_flops(LAYER, DIRECT) > min_flops(LAYER, Candidate("winograd", np.int64(2)))
    assert nearest_config(LAYER, "v100", DIRECT, (SEEN,)) == CFG
    io, bound, _, s = chosen_io(LAYER, DIRECT, CFG)
    assert io >= bound > 0 and s > 0
