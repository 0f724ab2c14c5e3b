"""``iobound history export DB /dev/stdout > out.json``: the shell's redirect makes
/dev/stdout a link (through /proc/self/fd/1) to a regular file. The export writes the
cache through the link (search.outputs.write_atomic replaces the file it names), so the
run succeeded; its read-back of the entries must not then fail on the replaced, now
empty, file behind the descriptor and turn a written export into exit 2 ("cache file
'/dev/stdout' is empty"). Reference: the CLI contract (exit 2 is bad input, and nothing
here is bad input) and the file on disk, read independently."""

import json
import os

from search.cli.main import main


def test_export_through_a_descriptor_link_to_a_regular_file(capsys, tmp_path, synth_cache_path):
    db = tmp_path / "t.db"
    assert main(["history", "import", str(synth_cache_path), "--db", str(db)]) == 0
    capsys.readouterr()
    out = tmp_path / "out.json"
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)  # as `> out.json` opens it
    try:
        code = main(["history", "export", "--db", str(db), f"/dev/fd/{fd}", "--json"])
    finally:
        os.close(fd)
    _, err = capsys.readouterr()
    written = json.loads(out.read_text())  # what the user finds in out.json
    assert len(written["cache"]) > 0
    assert code == 0 and err == "", err
