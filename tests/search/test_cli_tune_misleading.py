"""tune's messages name what is wrong: a folder given to --resume is a folder (not "no
log: missing, empty or cut before its header"), and --no-verify with a replay is refused
because a replay verifies nothing (not because it "writes no kernel and no network table")."""

from __future__ import annotations

from search.cli.main import main


def test_resume_from_a_folder_says_it_is_a_folder(capsys, tmp_path):
    (tmp_path / "adir").mkdir()
    code = main(["tune", "--layer", "cin=8,hin=8,cout=16,kh=3,pad=1", "--measure", "model",
                 "--budget", "2", "--no-verify", "--resume", str(tmp_path / "adir")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "adir' is a folder" in err and "missing" not in err


def test_replay_no_verify_gives_the_true_reason(capsys, synth_cache_path):
    code = main(["tune", "--measure", f"replay:{synth_cache_path}", "--no-verify"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "verifies nothing" in err and "network table" not in err and "--no-verify" in err
