"""`iobound kernel` without --emit must not write through a link another user planted.

The source goes to ``$IOBOUND_CACHE/src/<sha256 of the source>[:16].cu``. When the cache
root is one others may write (a shared folder, ``/tmp/...``), ``kernels.cache.cache_dir``
still returns it for sources ("only written, never loaded: any folder will do"), and the
write (``search.outputs.write_atomic``) follows a symbolic link at the name, replacing the
file it points to. The name is the hash of the source, which anyone can compute for any
layer and config, so another user plants ``<name>.cu -> ~victim/.bashrc`` and the next
``iobound kernel`` replaces the victim's file with CUDA text. A folder others may write
is no folder for our files: the source must go elsewhere, and the planted target stay."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from search.cli.main import main

ARGS = ["kernel", "--layer", "cin=3,hin=8,cout=4,kh=3,pad=1",
        "--config", "x=4,y=4,z=4,alpha=2,tx=4,ty=2,tz=2", "--json"]


def _source_path(capsys, monkeypatch, root) -> Path:
    monkeypatch.setenv("IOBOUND_CACHE", str(root))
    assert main(ARGS) == 0
    return Path(json.loads(capsys.readouterr().out)["source_path"])


def test_source_is_not_written_through_a_link_planted_in_a_shared_cache(
        tmp_path, capsys, monkeypatch):
    name = _source_path(capsys, monkeypatch, tmp_path / "mine").name  # as anyone can compute it

    victim = tmp_path / "home" / ".bashrc"
    victim.parent.mkdir()
    victim.write_text("export PATH=/usr/bin\n")
    shared = tmp_path / "shared"  # writable by everyone, e.g. a team folder
    (shared / "src").mkdir(parents=True)
    shared.chmod(0o777)
    (shared / "src").chmod(0o777)
    (shared / "src" / name).symlink_to(victim)  # planted by another user
    if os.getuid() == 0:
        for p in (shared / "src", shared / "src" / name):
            os.lchown(p, 4242, 4242)

    written = _source_path(capsys, monkeypatch, shared)
    assert victim.read_text() == "export PATH=/usr/bin\n", "the planted link was written through"
    assert written.read_text().startswith("// Generated")
