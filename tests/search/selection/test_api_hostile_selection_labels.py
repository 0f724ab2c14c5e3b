"""Hostile calls of the labelling and selection helpers (search/selection/labels.py,
select.py, features.py, first_config.py, synthetic.synthetic_layers) and of the cuda
measurer's layer: each an InvalidInputError naming the argument, never an AttributeError,
a TypeError mid-run or an I/O count of a kernel that cannot run.

Reference: the convention of iobound.errors and EmulateMeasurer's own check of its layer.
"""

from __future__ import annotations

import numpy as np
import pytest

from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from search.selection.dataset import DIRECT, Example

LAYER = ConvLayer(n=1, c_in=2, h_in=6, w_in=6, c_out=4, k_h=3, k_w=3, padding=1)
CFG = {"x": 6, "y": 6, "z": 4, "alpha": 1, "tx": 6, "ty": 6, "tz": 1}
BAD_THREADS = {"x": 4, "y": 6, "z": 4, "alpha": 1, "tx": 3, "ty": 6, "tz": 1}


# -- 9. the cuda measurer checks its layer as the emulate one does --------------------

@pytest.mark.parametrize("layer", ["junk", 5, {"c_in": 2}])
def test_cuda_measurer_refuses_a_layer_that_is_none(layer):
    from search.measure.cuda import CudaMeasurer
    from search.measure.emulate import EmulateMeasurer
    for cls in (CudaMeasurer, EmulateMeasurer):
        with pytest.raises(InvalidInputError, match="layer"):
            cls(layer)


def test_cuda_measurer_without_a_layer_measures_nothing():
    from search.measure.cuda import CudaMeasurer
    with pytest.raises(InvalidInputError, match="layer is None"):
        CudaMeasurer(None).measure([CFG])
    assert CudaMeasurer(LAYER).layer is LAYER


# -- 10. labels ----------------------------------------------------------------------

@pytest.mark.parametrize("args, name", [
    ((LAYER, "v100", "direct"), "candidate"), ((LAYER, 5, DIRECT), "device"),
    (("conv", "v100", DIRECT), "layer")])
def test_oracle_record_and_candidate_space_check_their_arguments(args, name):
    from search.selection.labels import candidate_space, oracle_record
    for call in (oracle_record, candidate_space):
        with pytest.raises(InvalidInputError, match=name):
            call(*args)


def test_label_layers_checks_progress_before_the_first_layer():
    from search.selection.labels import label_layers
    seen = []
    with pytest.raises(InvalidInputError, match="progress"):
        label_layers([LAYER], "v100", progress=5)
    with pytest.raises(InvalidInputError, match="progress"):
        label_layers([LAYER], "v100", progress=lambda: seen.append(1))
    with pytest.raises(InvalidInputError, match="layers"):
        label_layers(LAYER, "v100")
    with pytest.raises(InvalidInputError, match="device"):
        label_layers([LAYER], None)
    assert seen == []


@pytest.mark.parametrize("count, rng, like, name", [
    (2.5, 0, None, "count"), (True, 0, None, "count"), (-1, 0, None, "count"),
    (2, 0, None, "rng"), (2, None, 5, "like")])
def test_synthetic_layers_checks_its_arguments(count, rng, like, name):
    from iobound.networks import network_layers
    from search.selection.synthetic import synthetic_layers
    rng = np.random.default_rng(0) if rng is None else rng
    with pytest.raises(InvalidInputError, match=name):
        synthetic_layers(count, rng, network_layers("vgg16") if like is None else like)


def test_selection_from_example_takes_a_device_name_and_names_what_is_missing():
    from search.selection.select import selection_from_example
    ex = Example(LAYER, "V100-SXM2", {DIRECT: 1.0}, {DIRECT: CFG})
    assert selection_from_example(ex, device="v100").io_words == \
        selection_from_example(ex).io_words
    with pytest.raises(InvalidInputError, match="device"):
        selection_from_example(ex, device=5)
    with pytest.raises(InvalidInputError, match="no configuration of its best"):
        selection_from_example(Example(LAYER, "V100-SXM2", {DIRECT: 1.0}))
    with pytest.raises(InvalidInputError, match="example"):
        selection_from_example(None)


def test_no_io_is_reported_for_threads_that_do_not_split_the_tile():
    from search.selection.select import chosen_io, selection_from_example
    with pytest.raises(InvalidInputError, match="tx=3 must divide x=4"):
        chosen_io(LAYER, DIRECT, BAD_THREADS)
    with pytest.raises(InvalidInputError, match="tx=3"):
        selection_from_example(Example(LAYER, "V100-SXM2", {DIRECT: 1.0}, {DIRECT: BAD_THREADS}))


def test_a_history_row_with_such_threads_is_no_candidates_time():
    """The database refuses such a row now; one stored before (a damaged row) is skipped
    by the history source as a foreign one is, not selected and then refused."""
    from search.selection.history_source import _readable
    assert not _readable(LAYER, DIRECT, BAD_THREADS) and _readable(LAYER, DIRECT, CFG)


def test_feature_and_first_config_helpers_check_their_arguments():
    from search.selection.features import feature_matrix, layer_features
    from search.selection.first_config import first_config_quality
    for call, name in ((lambda: layer_features("vgg16.conv1_1", "v100"), "layer"),
                       (lambda: layer_features(LAYER, 5), "device"),
                       (lambda: feature_matrix(5), "pairs"),
                       (lambda: feature_matrix([LAYER]), "pairs"),
                       (lambda: first_config_quality(None, DIRECT, []), "example"),
                       (lambda: first_config_quality(
                           Example(LAYER, "V100-SXM2", {DIRECT: 1.0}), "direct", []),
                        "candidate")):
        with pytest.raises(InvalidInputError, match=name):
            call()
