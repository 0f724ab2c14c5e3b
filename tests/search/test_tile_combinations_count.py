"""`iobound domain` prints "N tile combinations" for each space (ConvSpace.describe());
it must count tiles that have at least one configuration in that space."""
from iobound.layer import ConvLayer
from search.conv_space import ConvSpace


def _tiles(space):
    n = len(space.domain.tile_params)
    return {tuple(int(v) for v in row[:n]) for row in space.knobs(range(len(space)))}


def test_unpruned_tile_combinations_match_space():
    # tile x=y=64, z=16: 65,536 accumulators fit 128 x 1024 but no thread block fits the register file
    layer = ConvLayer(n=1, c_in=1, h_in=64, w_in=64, c_out=16, k_h=1, k_w=1)
    d = ConvSpace(layer, "v100").describe()
    unpruned = ConvSpace(layer, "v100", pruned=False)
    assert d["tile_combinations"]["unpruned"] == len(_tiles(unpruned))


def test_pruned_tile_combinations_match_space():
    # w_out = 1031 (prime), R = 100: tile x=1031 passes Table 1 but needs > 128 words/thread
    layer = ConvLayer(n=1, c_in=1, h_in=10, w_in=1040, c_out=1, k_h=10, k_w=10)
    space = ConvSpace(layer, "v100")
    assert space.describe()["tile_combinations"]["pruned"] == len(_tiles(space))
