"""A misspelt config key is named as unknown, not reported as the key it replaced missing."""
import pytest

from iobound.errors import InvalidInputError
from kernels.config import config_from_dict, parse_config


@pytest.mark.parametrize("text", ["X=8,y=8,z=8,alpha=2", "X=8,y=8,z=8,alpha=2,tx=1,ty=1,tz=1"])
@pytest.mark.parametrize("default_threads", [True, False])
def test_unknown_key_is_named_before_missing_ones(text, default_threads):
    with pytest.raises(InvalidInputError, match=r"unknown direct config key\(s\) X"):
        parse_config(text, default_threads=default_threads)


def test_config_from_dict_names_unknown_before_missing():
    with pytest.raises(InvalidInputError, match=r"unknown winograd config key\(s\) q"):
        config_from_dict({"e": 2, "q": 1})
    with pytest.raises(InvalidInputError, match="missing x"):
        config_from_dict({"e": 2, "y": 4, "z": 2, "tx": 1, "ty": 1, "tz": 1})
