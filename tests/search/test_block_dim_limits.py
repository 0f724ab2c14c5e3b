"""CUDA caps blockDim.z at 64 on every compute capability (blockDim.x, .y at 1024), so a
launch with tz > 64 fails ("invalid configuration argument") however few threads it has.
The domain and check_config only cap tx*ty*tz at 1024."""
import pytest

from iobound.layer import ConvLayer
from iobound.networks import get_layer
from kernels.config import DirectConfig, WinogradConfig, check_config
from search.conv_space import ConvSpace

from kernels.limits import MAX_BLOCK_DIM


def _over(space):
    K = space.knobs(range(len(space)))
    cols = [space.params.index(t) for t in ("tx", "ty", "tz")]
    return [space.get(i) for i in range(len(space))
            if any(K[i, c] > m for c, m in zip(cols, MAX_BLOCK_DIM))][:3]


@pytest.mark.parametrize("pruned", [True, False])
def test_direct_space_respects_block_dim_z(pruned):
    layer = ConvLayer(n=1, c_in=1, h_in=1, w_in=1, c_out=96, k_h=1, k_w=1)
    assert _over(ConvSpace(layer, "v100", pruned=pruned)) == []


def test_preset_layer_pruned_space_respects_block_dim_z():
    # 21 of its 973 pruned configs have tz = 80
    assert _over(ConvSpace(get_layer("inception_v3.conv3b"), "v100")) == []


def test_winograd_unpruned_space_respects_block_dim_z():
    layer = ConvLayer(n=1, c_in=1, h_in=4, w_in=4, c_out=128, k_h=3, k_w=3, padding=1)
    assert _over(ConvSpace(layer, "v100", "winograd", pruned=False)) == []


def test_check_config_rejects_block_z_over_64():
    layer = ConvLayer(n=1, c_in=1, h_in=1, w_in=1, c_out=96, k_h=1, k_w=1)
    assert check_config(layer, DirectConfig(1, 1, 96, 1, 1, 1, 96), "v100") != []
    wl = ConvLayer(n=1, c_in=1, h_in=4, w_in=4, c_out=128, k_h=3, k_w=3, padding=1)
    assert check_config(wl, WinogradConfig(2, 2, 2, 128, 1, 1, 128), "v100") != []


def test_default_thread_block_keeps_z_within_the_block_limit():
    from kernels.thread_block import default_thread_block
    assert default_thread_block({"x": 1, "y": 1, "z": 128}, "direct") == {"tx": 1, "ty": 1, "tz": 64}


def test_emulator_refuses_a_block_over_64_along_z():
    from kernels.emulator import check_launch
    from kernels.generate import generate
    from iobound.errors import InvalidInputError
    import dataclasses
    layer = ConvLayer(n=1, c_in=1, h_in=1, w_in=1, c_out=96, k_h=1, k_w=1)
    # the generator refuses such a config, so the launch is altered after it
    source = dataclasses.replace(generate(layer, DirectConfig(1, 1, 32, 1, 1, 1, 32)),
                                 block=(1, 1, 96))
    with pytest.raises(InvalidInputError, match="block of 1x1x96"):
        check_launch(source)
