"""Messages name one of a thing in the singular: iobound.wording.counted and the lines using it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from iobound.wording import counted
from search.cli.main import main


@given(st.integers(min_value=-10**9, max_value=10**9), st.sampled_from(["layer", "record"]))
def test_counted_is_the_number_and_the_noun(n, noun):
    text = counted(n, noun, ",")
    number, word = text.split(" ")
    assert int(number.replace(",", "")) == n
    assert word == (noun if n == 1 else noun + "s")


def test_history_import_of_one_measurement_says_measurement(tmp_path, capsys):
    """A log of one measurement imported: '1 new of 1 measurement' and 'db: 1 measurement'
    (the plural was printed for one)."""
    log = tmp_path / "one.jsonl"
    assert main(["tune", "--layer", "alexnet.conv2", "--measure", "model", "--budget", "1",
                 "--log", str(log), "--no-verify"]) == 0
    capsys.readouterr()
    db = tmp_path / "h.db"
    assert main(["history", "import", str(log), "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "1 new of 1 measurement (" in out
    assert out.rstrip().endswith(f"{db}: 1 measurement")
