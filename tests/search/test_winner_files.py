"""The winner's report (search.winner) against the CPU emulator and its documented file name.

References: the emulator's counted global traffic on the very layer (a layer this small is
its own reduced copy) is the dataflow's exact I/O the report gives; the kernel is written
to ``out_dir/<layer>_<algorithm>_best.cu``, a name with '/' or ' ' made a file name.
"""

from __future__ import annotations

from pathlib import Path

from iobound.layer import ConvLayer
from search.winner import report_winner

LAYER = ConvLayer(n=1, c_in=8, h_in=8, w_in=8, c_out=16, k_h=3, k_w=3, padding=1,
                  name="net/conv 1")
CFG = dict(x=4, y=4, z=8, alpha=4, tx=4, ty=4, tz=2)


def test_the_reported_io_is_what_the_emulator_counts_and_the_file_is_in_out_dir(tmp_path):
    """dataflow_io_words equals the emulated loads and stores; the ratio is io / bound; the
    kernel file is out_dir/net_conv_1_direct_best.cu, non-empty."""
    w = report_winner(LAYER, CFG, "direct", str(tmp_path))
    chk = w.emulator_check
    assert chk.checked and chk.layer == LAYER.short()
    assert w.bound.dataflow_io_words == chk.traffic_words
    assert w.bound.ratio_to_bound == w.bound.dataflow_io_words / w.bound.lower_bound_words
    assert Path(w.kernel_path) == tmp_path / "net_conv_1_direct_best.cu"
    assert Path(w.kernel_path).read_text()


def test_the_bound_is_taken_at_the_blocks_words_plus_the_in_place_slack():
    """The lower bound reported beside the winner is the best bound at the block's on-chip
    words plus iobound.multi_block's slack (a block computes in place), not at the bare
    words: on a layer whose best bound falls with S, the two differ."""
    from iobound.multi_block import IN_PLACE_SLACK
    from iobound.report import bound_report
    from search.winner import bound_info
    layer = ConvLayer(n=1, c_in=32, h_in=16, w_in=16, c_out=32, k_h=3, k_w=3, padding=1)
    info = bound_info(layer, CFG, "direct")
    at_slack = bound_report(layer, info.fast_memory_words + IN_PLACE_SLACK, "direct")
    assert (info.lower_bound_words, info.method) == (at_slack.best, at_slack.best_method)
    assert info.lower_bound_words < bound_report(layer, info.fast_memory_words, "direct").best
