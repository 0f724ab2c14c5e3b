"""Grouped and depthwise layers in the search: domain, measurers, selection and the CLI."""

import json

import numpy as np
import pytest
from hypothesis import given, strategies as st

from iobound.devices import get_device
from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from kernels.config import config_from_dict, check_config
from kernels.generate import generate
from kernels.grouping import kernel_io
from search.cli.main import main
from search.conv_space import ConvSpace
from search.measure.emulate import EmulateMeasurer
from search.measure.model import ModelMeasurer
from search.selection.dataset import DIRECT, candidates
from search.table1 import domain_for

GROUPED = "cin=8,hin=8,cout=16,kh=3,pad=1,groups=4"


@st.composite
def grouped_layers(draw):
    g = draw(st.integers(2, 8))
    return ConvLayer(n=1, c_in=g * draw(st.integers(1, 4)), h_in=draw(st.integers(3, 12)),
                     w_in=draw(st.integers(3, 12)), c_out=g * draw(st.integers(1, 6)),
                     k_h=3, k_w=3, stride=draw(st.integers(1, 2)), padding=1, groups=g)


@given(grouped_layers(), st.integers(0, 2**32 - 1))
def test_every_domain_config_of_a_grouped_layer_generates(layer, seed):
    """Sampled configs of the pruned and unpruned domains fit the groups (z divides
    c_out/G, alpha c_in/G), pass check_config on the device and generate source."""
    rng = np.random.default_rng(seed)
    for pruned in (True, False):
        space = ConvSpace(layer, "v100", pruned=pruned)
        assert set(space.domain.values["z"]) <= {d for d in range(1, layer.c_out_per_group + 1)
                                                 if layer.c_out_per_group % d == 0}
        for i in space.sample(min(len(space), 8), rng):
            cfg = config_from_dict(space.get(int(i)), "direct")
            assert check_config(layer, cfg, "v100") == []
            assert generate(layer, cfg).grid[2] == layer.n * layer.c_out // cfg.z


def test_depthwise_domain_has_one_channel_per_block():
    """Depthwise without a multiplier: z = alpha = 1 in every configuration."""
    dom = domain_for(ConvLayer(1, 32, 16, 16, 32, 3, 3, padding=1, groups=32), get_device("v100"))
    assert dom.values["z"] == (1,) and dom.values["alpha"] == (1,)


def test_winograd_domain_refuses_groups():
    """The Winograd kernel has no grouped form: the domain says so."""
    with pytest.raises(InvalidInputError, match="dense layers only"):
        ConvSpace(ConvLayer(1, 4, 8, 8, 4, 3, 3, padding=1, groups=2), "v100", "winograd")


def test_measurers_on_a_grouped_layer():
    """Emulate: ok with the grouped traffic; model: an estimate whose io is the same count."""
    layer = ConvLayer(1, 8, 8, 8, 16, 3, 3, padding=1, groups=4)
    cfg = dict(x=4, y=8, z=2, alpha=1, tx=2, ty=4, tz=2)
    emu, = EmulateMeasurer(layer).measure([cfg])
    io = kernel_io(layer, "direct", config_from_dict(cfg).tiling).total
    assert emu.is_ok and emu.extra["traffic_words"] == io
    est, = ModelMeasurer(layer, "v100").measure([cfg])
    assert est.is_ok and est.estimate and est.extra["io_words"] == io


def test_selection_offers_only_direct_for_grouped_layers():
    """Grouped layers select among direct configurations only."""
    assert candidates(ConvLayer(1, 8, 8, 8, 8, 3, 3, padding=1, groups=2)) == [DIRECT]
    assert len(candidates(ConvLayer(1, 8, 8, 8, 8, 3, 3, padding=1))) == 4


@pytest.mark.parametrize("measure", ["model", "emulate"])
def test_tune_a_grouped_layer_end_to_end(capsys, tmp_path, measure):
    """`iobound tune --layer ...,groups=4`: the best config keeps its tile in one group, the
    kernel is written and its traffic (or the winner's emulator check) is exact."""
    argv = ["tune", "--layer", GROUPED, "--measure", measure, "--budget", "4", "--json",
            "--out-dir", str(tmp_path), "--executor", "local", "--workers", "1"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    best = out["best"]["config"]
    assert out["space"]["layer"]["groups"] == 4 and 4 % best["z"] == 0 and best["alpha"] <= 2
    assert "C_IN_G" in (tmp_path / out["kernel_path"].split("/")[-1]).read_text()
    layer = ConvLayer(1, 8, 8, 8, 16, 3, 3, padding=1, groups=4)
    io = kernel_io(layer, "direct", config_from_dict(best).tiling).total
    assert out["bound"]["dataflow_io_words"] == io
    if measure == "emulate":
        assert out["best"]["extra"]["traffic_words"] == io
    else:
        chk = out["emulator_check"]
        assert chk["checked"] and chk["matches_numpy"] and chk["traffic_matches"]


def test_kernel_command_emulates_a_depthwise_layer(capsys):
    """`iobound kernel --emulate` on a depthwise layer: numerics and traffic checked."""
    main(["kernel", "--layer", "cin=8,hin=8,cout=8,kh=3,pad=1,groups=8",
          "--config", "x=4,y=4,z=1,alpha=1", "--emulate", "--json"])
    emu = json.loads(capsys.readouterr().out)["emulate"]
    assert emu["numerics_ok"] and emu["traffic_matches"]


@pytest.mark.parametrize("argv, msg", [
    (["tune", "--layer", "cin=8,hin=8,cout=16,kh=3,groups=3", "--measure", "model"],
     "groups=3 must divide c_in=8 and c_out=16"),
    (["tune", "--layer", "cin=8,hin=8,cout=16,kh=3,groups=0", "--measure", "model"],
     "groups=0 is below the minimum 1"),
    (["tune", "--layer", GROUPED, "--algorithm", "winograd", "--measure", "model"],
     "Winograd is implemented for dense layers only (groups=1), got groups=4"),
    (["domain", "--layer", GROUPED, "--algorithm", "winograd"],
     "Winograd is implemented for dense layers only (groups=1), got groups=4"),
    (["kernel", "--layer", GROUPED, "--config", "x=4,y=4,z=3,alpha=1"],
     "z=3 must divide c_out/groups=4"),
    (["kernel", "--layer", GROUPED, "--config", "x=4,y=4,z=2,alpha=4"],
     "alpha=4 is larger than c_in/groups=2"),
    (["kernel", "--layer", GROUPED, "--config", "e=2,x=4,y=4,z=2"],
     "dense layers only"),
])
def test_bad_groups_are_one_line_exit_2(capsys, argv, msg):
    """Bad groups, or a kernel that cannot compute them: one line, exit 2, nothing else."""
    assert main(argv) == 2
    cap = capsys.readouterr()
    err = cap.err.strip()
    assert msg in err and len(err.splitlines()) == 1 and cap.out == ""
