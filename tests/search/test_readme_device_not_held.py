"""README ("iobound history"): `list`, `best`, `export` and `remove` take `--device NAME`;
"a device the database does not hold is an error naming those it does"."""

from __future__ import annotations

import pytest

from search.cli.main import main


@pytest.mark.parametrize("action", ["list", "best", "export", "remove"])
def test_a_device_the_database_does_not_hold_is_an_error_naming_those_it_does(
        capsys, tmp_path, synth_cache_path, action):
    db = str(tmp_path / "t.db")
    assert main(["history", "import", str(synth_cache_path), "--db", db]) == 0
    capsys.readouterr()
    target = tmp_path / "o.json"
    extra = [str(target)] if action == "export" else []
    code = main(["history", action, "--db", db, "--device", "No Such GPU", *extra])
    out, err = capsys.readouterr()
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "Synthetic GPU" in err  # the device the database holds is named
    assert not target.exists()
