"""A network run says which of its layers the algorithm leaves out, and --parallel-layers
is refused without --network (as --tune-repeats and --network-json are)."""
import json

from search.cli.main import main


def test_winograd_network_names_the_layers_it_leaves_out(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = ["tune", "--network", "mobilenet", "--algorithm", "winograd", "--measure", "model",
            "--budget", "1", "--no-verify", "--out-dir", "k"]
    assert main([*argv, "--network-json", "t.json"]) == 0
    out, err = capsys.readouterr()
    assert "notice: 14 of the 27 layers of mobilenet left out" in err
    assert "mobilenet.conv_dw_1" in err
    assert "13 of 13 layers tuned (14 more left out" in out
    assert "every tuned layer's best" in out
    table = json.loads((tmp_path / "t.json").read_text())
    assert len(table["skipped"]) == 14
    assert table["skipped"][0] == {"layer": "mobilenet.conv1",
                                   "reason": "Winograd needs stride 1, got stride=(2, 2)"}
    assert main([*argv, "--json", "--out-dir", "k2"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert [s["layer"] for s in payload["skipped"]] == [s["layer"] for s in table["skipped"]]


def test_direct_network_leaves_nothing_out(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["tune", "--network", "alexnet", "--measure", "model", "--budget", "1",
                 "--no-verify", "--out-dir", "k", "--network-json", "t.json"]) == 0
    out, err = capsys.readouterr()
    assert "left out" not in out + err
    assert json.loads((tmp_path / "t.json").read_text())["skipped"] == []


def test_parallel_layers_without_network_is_refused(capsys):
    assert main(["tune", "--layer", "alexnet.conv5", "--measure", "model", "--executor", "local",
                 "--workers", "1", "--parallel-layers", "2", "--budget", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--parallel-layers needs --network" in err[0]
