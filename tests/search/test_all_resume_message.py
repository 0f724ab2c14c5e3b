"""``--algorithm all --resume FILE`` of one layer with one algorithm (a 1x1 kernel: direct
only) reads ``FILE.<layer>.direct.jsonl``; when that is missing but FILE itself is a log
(a run of ``--algorithm direct``), the refusal must not claim FILE is missing: it names
the per-algorithm log it looked for, as it does for a layer with two algorithms."""

import pytest

from iobound.errors import InvalidInputError
from iobound.layer_spec import parse_layer_spec as get_layer
from search.log_writer import LogWriter
from search.session import TuneSettings
from search.session.plan import plan_layers


def test_all_resume_refusal_names_the_per_algorithm_log(tmp_path):
    layer = get_layer("cin=4,hin=6,cout=4,kh=1")
    log = tmp_path / "d1.jsonl"
    with LogWriter(str(log), {"layer": layer.to_dict(), "device": "V100-SXM2",
                              "algorithm": "direct"}):
        pass
    assert log.exists()
    with pytest.raises(InvalidInputError) as err:
        plan_layers([layer], "v100", TuneSettings(resume=str(log), budget=2), measure="emulate",
                    algorithm="all", out_dir=str(tmp_path / "k"))
    msg = str(err.value)
    assert "d1.layer.direct.jsonl" in msg, msg
