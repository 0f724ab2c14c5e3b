"""``iobound kernel --help`` says that without tx,ty,tz "the thread block is chosen from
the tiles (the largest block of at most 256 threads whose counts divide x, y, z ...)".
kernels.thread_block picks it greedily (tx first), which is not the largest block: for
x=160, y=3, z=1 it gives 160x1x1 = 160 threads although 80x3x1 = 240 <= 256 divides the
tiles and runs (the same config with tx=80,ty=3,tz=1 is accepted). Reference: brute force
over every block whose counts divide the tiles, within 256 threads and the per-axis limits."""

import json

from kernels.limits import MAX_BLOCK_DIM
from search.cli import kernel_cmd
from search.cli.main import main

LAYER = "cin=1,hin=5,win=162,cout=1,kh=3"  # w_out = 160, h_out = 3


def _largest_block(x: int, y: int, z: int) -> int:
    return max(tx * ty * tz
               for tx in range(1, min(x, MAX_BLOCK_DIM[0]) + 1) if x % tx == 0
               for ty in range(1, min(y, MAX_BLOCK_DIM[1]) + 1) if y % ty == 0
               for tz in range(1, min(z, MAX_BLOCK_DIM[2]) + 1) if z % tz == 0
               if tx * ty * tz <= 256)


def _run(capsys, config: str) -> dict:
    code = main(["kernel", "--layer", LAYER, "--config", config, "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def test_help_keeps_its_promise_about_the_default_block(capsys):
    # the larger block is a valid one: the kernel accepts it
    assert _run(capsys, "x=160,y=3,z=1,alpha=1,tx=80,ty=3,tz=1")["block"] == [80, 3, 1]
    chosen = _run(capsys, "x=160,y=3,z=1,alpha=1")["default_threads"]
    threads = chosen["tx"] * chosen["ty"] * chosen["tz"]
    if "the largest block" in kernel_cmd.DESCRIPTION:
        assert threads == _largest_block(160, 3, 1), (
            f"--help promises the largest block ({_largest_block(160, 3, 1)} threads); "
            f"got {chosen} ({threads} threads)")
