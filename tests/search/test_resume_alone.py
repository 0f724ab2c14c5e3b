"""``iobound tune --resume run.jsonl`` on its own continues the run, as the interrupted
line tells a user to do (``resume with --resume run.jsonl``): the layer, device,
algorithm, measurer, strategy, budget, seed and history database come from the log's
header (search/cli/resume_args.py), and a network run's resume name (no log itself) finds
the network from its layers' logs. Before, it stopped with "give --layer SPEC or
--network NAME". Options the command gives are kept; a file that is no run's log is one
line, exit 2."""

import json

import pytest
from hypothesis import given, settings, strategies as st

from iobound.errors import InvalidInputError
from iobound.layer import ConvLayer
from iobound.layer_spec import parse_layer_spec
from search.cli.main import main
from search.cli.resume_args import spec_of
from search.records import read_log

LAYER = "cin=4,hin=8,cout=4,kh=3,pad=1"
#: A log header with a layer and a measurer, for damaged ones
DAMAGED = {"kind": "header", "schema": "iobound.tune-log", "version": 1,
           "measurer": {"name": "model"},
           "layer": {"n": 1, "c_in": 4, "h_in": 8, "w_in": 8, "c_out": 4, "k_h": 3, "k_w": 3}}


#: How every run here is made (a resume alone must find each of these in the log)
RUN = ["--measure", "model", "--device", "t4", "--strategy", "random", "--seed", "5",
       "--no-verify"]


def _records(path):
    return [(e.record.config, e.record.time_ms) for e in read_log(path).entries]


def _start(tmp_path, capsys, budget="4", *extra):
    log = tmp_path / "run.jsonl"
    assert main(["tune", "--layer", LAYER, *RUN, "--budget", budget, "--json", "--log",
                 str(log), "--out-dir", str(tmp_path / "k"), *extra]) == 0
    capsys.readouterr()
    return log


def test_resume_alone_equals_resume_with_the_runs_command(tmp_path, capsys):
    log = _start(tmp_path, capsys)
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(log.read_bytes())
    assert main(["tune", "--resume", str(log), "--budget", "9", "--no-verify",
                 "--out-dir", str(tmp_path / "k")]) == 0
    out, err = capsys.readouterr()
    assert ("notice: resuming as" in err and "--layer n=1,cin=4,hin=8,win=8,cout=4" in err
            and "--measure model" in err and "--device T4" in err and "--seed 5" in err
            and "--strategy random" in err), err
    assert "--budget" not in err, "a --budget the command gives is kept, not the log's"
    assert "device T4;" in out and "strategy random; budget 9; seed 5" in out, out
    assert main(["tune", "--layer", LAYER, "--measure", "model", "--device", "t4",
                 "--strategy", "random", "--budget", "9", "--seed", "5", "--no-verify",
                 "--resume", str(copy), "--out-dir", str(tmp_path / "k")]) == 0
    capsys.readouterr()
    alone, full = _records(log), _records(copy)
    assert len(alone) == 9 and alone == full


def test_resume_alone_takes_the_budget_of_the_log(tmp_path, capsys):
    log = _start(tmp_path, capsys, "6")
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[:4]) + "\n")  # interrupted after 3 of its 6
    assert main(["tune", "--resume", str(log), "--no-verify", "--json",
                 "--out-dir", str(tmp_path / "k")]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert "--budget 6" in payload["notice"], payload
    assert payload["evaluations"] == 6 and len(_records(log)) == 6


def test_resume_alone_stores_in_the_runs_history(tmp_path, capsys):
    db = tmp_path / "h.db"
    log = _start(tmp_path, capsys, "3", "--history", str(db))
    assert main(["tune", "--resume", str(log), "--budget", "6", "--no-verify", "--json",
                 "--out-dir", str(tmp_path / "k")]) == 0
    assert f"--history {db}" in json.loads(capsys.readouterr().out)["notice"]
    assert main(["history", "list", "--db", str(db), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["measurements"] == 6, row  # the first run's 3 and the resumed run's 3


def test_resume_alone_of_a_replay(tmp_path, capsys, synth_cache_path):
    log = tmp_path / "rp.jsonl"
    assert main(["tune", "--measure", f"replay:{synth_cache_path}", "--budget", "5",
                 "--seed", "2", "--json", "--log", str(log)]) == 0
    capsys.readouterr()
    assert main(["tune", "--resume", str(log), "--budget", "10"]) == 0
    out, err = capsys.readouterr()
    assert f"--measure replay:{synth_cache_path}" in err and "--seed 2" in err, err
    assert "budget 10, seed 2" in out and len(_records(log)) == 10, out
    assert main(["tune", "--resume", str(log), "--budget", "12", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert f"--measure replay:{synth_cache_path}" in payload["notice"], payload
    assert payload["evaluations"] == 12


@pytest.mark.parametrize("make, needle", [
    (lambda p: None, "no log of one run there"),
    (lambda p: p.write_text("not json\n"), "bad header line"),
    (lambda p: p.write_text(json.dumps({"kind": "header", "schema": "iobound.tune-log",
                                        "version": 1}) + "\n"), "names no layer and measurer"),
    (lambda p: p.write_text(json.dumps({**DAMAGED, "budget": "x"}) + "\n"),
     "header's --budget 'x' is not an integer"),
    (lambda p: p.write_text(json.dumps({**DAMAGED, "seed": True}) + "\n"),
     "header's --seed 'True' is not an integer"),
    (lambda p: p.write_text(json.dumps({**DAMAGED, "strategy": 5}) + "\n"),
     "header's --strategy '5' is not text"),
    (lambda p: p.write_text(json.dumps({**DAMAGED, "layer": {"n": 1}}) + "\n"),
     "its header's layer is not one"),
])
def test_resume_alone_of_no_runs_log_is_one_line(tmp_path, capsys, make, needle):
    path = tmp_path / "run.jsonl"
    make(path)
    assert main(["tune", "--resume", str(path)]) == 2
    out, err = capsys.readouterr()
    assert needle in err and len(err.splitlines()) == 1 and out == "", err


NETWORK = ["--network", "alexnet", *RUN]


def _network_records(stem):
    return {p.name.split(".", 1)[1]: _records(p) for p in sorted(stem.parent.glob(stem.name + ".*"))}


@pytest.mark.parametrize("algorithm", [[], ["--algorithm", "all"]])
def test_resume_alone_of_a_network_equals_resume_with_its_command(tmp_path, capsys, algorithm):
    """The interrupted line of a network run names its resume name, which is no log: its
    layers' logs (one per algorithm with --algorithm all) say which network it was."""
    run, copy = tmp_path / "run.jsonl", tmp_path / "copy.jsonl"
    assert main(["tune", *NETWORK, *algorithm, "--budget", "3", "--log", str(run),
                 "--out-dir", str(tmp_path / "k")]) == 0
    for log in tmp_path.glob("run.*.jsonl"):
        (tmp_path / log.name.replace("run.", "copy.", 1)).write_bytes(log.read_bytes())
    for log in tmp_path.glob("*.alexnet.conv1.*"):  # stopped before it: that layer afresh
        log.unlink()
    capsys.readouterr()
    assert main(["tune", "--resume", str(run), "--budget", "5", "--out-dir",
                 str(tmp_path / "k"), "--no-verify"]) == 0
    out, err = capsys.readouterr()
    first = "run.alexnet.conv2" + (".direct" if algorithm else "") + ".jsonl"
    assert f"resuming as {tmp_path / first} (a layer's log of {run}) records:" in err, err
    assert ("--network alexnet --measure model --device T4" in err and "--seed 5" in err
            and "--strategy random" in err and ("--algorithm all" in err) == bool(algorithm)), err
    assert "strategy random; budget 5; seed 5" in out, out
    assert main(["tune", *NETWORK, *algorithm, "--budget", "5", "--resume", str(copy),
                 "--out-dir", str(tmp_path / "k")]) == 0
    alone, full = _network_records(tmp_path / "run"), _network_records(tmp_path / "copy")
    assert len(alone) == (9 if algorithm else 5) and alone == full  # conv1: no Winograd
    assert all(len(records) == 5 for records in alone.values())


def test_resume_alone_of_one_layer_tuned_with_every_algorithm_stays_that_layer(tmp_path, capsys):
    """Its logs are per algorithm (run.<layer>.<algorithm>.jsonl), as a network's would be:
    one layer's logs resume that layer, not its whole network."""
    run = tmp_path / "run.jsonl"
    assert main(["tune", "--layer", "alexnet.conv2", *RUN, "--algorithm", "all",
                 "--budget", "3", "--log", str(run), "--out-dir", str(tmp_path / "k")]) == 0
    capsys.readouterr()
    assert main(["tune", "--resume", str(run), "--budget", "4", "--out-dir",
                 str(tmp_path / "k"), "--no-verify"]) == 0
    out, err = capsys.readouterr()
    assert "--layer alexnet.conv2 --measure model --device T4 --algorithm all" in err, err
    assert "--network" not in err and "alexnet.conv3" not in out, out
    logs = _network_records(tmp_path / "run")
    assert sorted(logs) == ["alexnet.conv2.direct.jsonl", "alexnet.conv2.winograd.jsonl"]
    assert all(len(records) == 4 for records in logs.values())


def test_resume_alone_of_two_networks_logs_under_one_name_is_one_line(tmp_path, capsys):
    for name in ("run.alexnet.conv1.jsonl", "run.vgg16.conv1_1.jsonl"):
        (tmp_path / name).write_text("{}\n")
    assert main(["tune", "--resume", str(tmp_path / "run.jsonl")]) == 2
    out, err = capsys.readouterr()
    assert "logs of several network runs there (alexnet, vgg16)" in err, err
    assert len(err.splitlines()) == 1 and out == ""


def test_a_command_that_names_its_layer_takes_nothing_from_the_log(tmp_path, capsys):
    log = _start(tmp_path, capsys)
    assert main(["tune", "--layer", LAYER, "--measure", "model", "--device", "t4",
                 "--resume", str(log), "--budget", "4", "--no-verify",
                 "--out-dir", str(tmp_path / "k")]) == 0
    out, err = capsys.readouterr()
    assert "resuming as" not in err and "strategy explorer; budget 4; seed 0" in out, out


def test_a_preset_layer_resumes_under_its_name(tmp_path):
    from iobound.networks import get_layer
    layer = get_layer("resnet18.conv4_1b").to_dict()
    assert spec_of(layer) == "resnet18.conv4_1b"
    assert spec_of({**layer, "c_in": 128}).startswith("n=1,cin=128,")  # not that preset's shape


pairs = st.tuples(st.integers(1, 3), st.integers(1, 3))


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 4), c=st.integers(1, 8), groups=st.sampled_from([1, 2]),
       h=st.integers(7, 40), w=st.integers(7, 40), k_h=st.integers(1, 5), k_w=st.integers(1, 5),
       stride=pairs, padding=st.tuples(st.integers(0, 2), st.integers(0, 2)),
       dilation=pairs, c_out=st.integers(1, 8))
def test_spec_of_a_logged_layer_parses_back_to_that_layer(n, c, groups, h, w, k_h, k_w, stride,
                                                         padding, dilation, c_out):
    try:
        layer = ConvLayer(n=n, c_in=c * groups, h_in=h, w_in=w, c_out=c_out * groups, k_h=k_h,
                          k_w=k_w, stride=stride, padding=padding, dilation=dilation,
                          groups=groups)
    except InvalidInputError:  # no output (a kernel larger than the padded input)
        return
    back = parse_layer_spec(spec_of(layer.to_dict()))
    assert back.to_dict() == {**layer.to_dict(), "name": back.name}
