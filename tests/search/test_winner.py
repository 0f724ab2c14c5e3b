"""Tests of the winner report (bound info, kernel file, optional emulator check)."""

from iobound.layer import ConvLayer
from search.winner import bound_info, report_winner

LAYER = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=16, k_h=3, k_w=3, padding=1, name="small")
CFG = dict(x=4, y=4, z=8, alpha=4, tx=4, ty=4, tz=2)


def test_bound_below_dataflow_io():
    """The reported lower bound never exceeds the dataflow's exact I/O."""
    info = bound_info(LAYER, CFG, "direct")
    assert 0 < info.lower_bound_words <= info.dataflow_io_words
    assert info.ratio_to_bound == info.dataflow_io_words / info.lower_bound_words


def test_report_writes_the_kernel_and_checks_it(tmp_path):
    """The winner's .cu is written under out_dir and the emulator check passes."""
    w = report_winner(LAYER, CFG, "direct", str(tmp_path))
    assert (tmp_path / "small_direct_best.cu").read_text() and w.kernel_path.startswith(str(tmp_path))
    assert w.emulator_check.checked and w.emulator_check.traffic_matches and w.config == CFG
    assert report_winner(LAYER, CFG, "direct", str(tmp_path), verify=False).emulator_check is None
