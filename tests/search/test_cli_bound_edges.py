"""``iobound bound`` edges found by mutation testing: the output size of a non-square
layer and the documented Winograd input-tile limit under ``--algorithm all``.

References: the convolution output size ``floor((w + 2p - d(k-1) - 1)/s) + 1`` computed
here, and the limit stated in ``--help`` ("the input tile e + r - 1 must be at most 32").
"""

import json

import pytest

from search.cli.main import main


def _out_size(n: int, k: int, stride: int = 1, pad: int = 0, dilation: int = 1) -> int:
    return (n + 2 * pad - dilation * (k - 1) - 1) // stride + 1


def test_json_hout_wout_of_a_non_square_layer(capsys):
    """hout and wout follow the height and the width separately."""
    assert main(["bound", "--layer", "cin=2,hin=9,win=20,cout=2,kh=3,kw=5,stride=2", "--fast-memory", "256",
                 "--json"]) == 0
    layer = json.loads(capsys.readouterr().out)["layer"]
    assert layer["hout"] == _out_size(9, 3, 2) == 4
    assert layer["wout"] == _out_size(20, 5, 2) == 8


@pytest.mark.parametrize("e, kept", [(30, True), (31, False)])
def test_all_keeps_winograd_up_to_an_input_tile_of_32(capsys, monkeypatch, e, kept):
    """With r = 3, e = 30 makes the input tile exactly 32 (allowed: Winograd is bounded);
    e = 31 makes it 33 (left out with a note). The bound itself is stubbed (a tile of 32
    takes seconds): what is checked is which algorithms the command asks for."""
    import iobound.report

    real, asked = iobound.report.bound_report, []

    def spy(layer, s, alg, e):
        asked.append((alg.name, e))
        return real(layer, s, alg if alg.name == "direct" else "direct", None)

    monkeypatch.setattr(iobound.report, "bound_report", spy)
    assert main(["bound", "--layer", "cin=2,hin=40,cout=2,kh=3", "--fast-memory", "4096",
                 "--algorithm", "all", "--winograd-e", str(e)]) == 0
    out = capsys.readouterr().out
    # e is Winograd's alone: direct is asked with none (it refuses one)
    assert asked == ([("direct", None), ("winograd", e)] if kept else [("direct", None)])
    assert ("winograd omitted: input tile e + r - 1 = 33 is above 32" in out) == (not kept)
