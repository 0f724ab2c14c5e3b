"""Every configuration a strategy proposes on our kernel space satisfies the domain's constraints."""

import numpy as np
from hypothesis import given, strategies as st

from iobound.layer import ConvLayer
from kernels.config import check_config, config_from_dict
from search.conv_space import ConvSpace
from search.strategies import make_strategy, strategy_names

FAST = {"explorer": {"init_random": 4, "optimizer": {"n_walkers": 8, "max_steps": 5},
                     "model": {"n_estimators": 10}},
        "sa": {"plan_size": 4, "init_random": 4, "optimizer": {"n_iter": 5, "n_chains": 8},
               "model": {"n_estimators": 10}}}


@given(st.integers(1, 8), st.sampled_from([4, 6, 8]), st.sampled_from([4, 8, 16]),
       st.sampled_from([1, 3]), st.sampled_from(strategy_names()), st.integers(0, 1000))
def test_proposals_pass_check_config(c_in, hw, c_out, k, name, seed):
    """Asked configs are members of the space and pass kernels.config.check_config."""
    layer = ConvLayer(n=1, c_in=c_in, h_in=hw, w_in=hw, c_out=c_out, k_h=k, k_w=k, padding=k // 2)
    space = ConvSpace(layer, "v100", "direct")
    strat = make_strategy(name, space, FAST.get(name), np.random.default_rng(seed))
    from search.measure.model import ModelMeasurer
    m = ModelMeasurer(layer, "v100")
    for _ in range(3):
        got = strat.ask(4)
        cfgs = [space.get(i) for i in got]
        for cfg in cfgs:
            assert space.is_valid(cfg)
            assert check_config(layer, config_from_dict(cfg, "direct"), space.device) == []
        strat.tell(got, m.measure(cfgs))
