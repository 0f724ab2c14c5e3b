"""The README's examples print what the README says they print.

Every ```` ```python ```` block followed at once by a block of its output runs as a script
in a folder of its own and must print that output, with the same rules as below.

Every ``$ iobound ...`` command in a fenced block of README.md and docs/*.md runs in a
folder of its own under ``tmp_path`` (``../shared/data`` there is the recorded data's
folder) and its output, stdout and stderr in the order a terminal shows them, must match
the lines printed under it: a line ``...`` stands for any lines, a duration (``1.2 s``)
for any duration, a kernel cache folder for any, and a compile cache hit's ``(cached)`` is
left out (the README's examples were printed with a cold cache).

The examples of one section run in order in one folder, as a reader following the
section would: a later one reads what an earlier one wrote. ``BEFORE`` names the commands
an example needs run first that the section only tells in prose, ``OWN_FOLDER`` the
examples that start from a folder of their own, ``SAME_FILES`` the files an example writes
that must equal the repository's committed copy, and ``NOT_RUN`` the examples not run here,
each with its reason. Other commands in the blocks (``mkdir``, the benchmarks' scripts,
which write their own results) are not ``iobound`` and are not run.

Run with no GPU in sight (``CUDA_VISIBLE_DEVICES=""``), as the README's examples were
printed; an example compiling for an arch is passed over, with a warning naming why, where
no toolchain here targets it or where it is of another CUDA release than the README's
(ptxas' register counts are the release's).
"""

from __future__ import annotations

import difflib
import importlib.util
import os
import re
import shlex
import subprocess
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchmarks.shared_data import SHARED_DATA

REPO = Path(__file__).resolve().parents[1]
DOCS = (REPO / "README.md", *sorted((REPO / "docs").glob("*.md")))

SPACES = "../shared/data/tuning-spaces"  # as the README names them

#: commands the section tells in prose and an example needs run first (in its folder)
BEFORE = {
    "iobound tune --layer resnet50.conv3_1 --budget 48 --history layers.db --reuse --seed 1": [
        "iobound tune --layer resnet50.conv3_1 --budget 48 --history layers.db"],
    "iobound history import ../shared/data/tuning-spaces/convolution_A100.json.gz "
    "../shared/data/tuning-spaces/convolution_A4000.json.gz "
    "../shared/data/tuning-spaces/convolution_A6000.json.gz --db tuning.db": [
        "iobound tune --measure replay:../shared/data/tuning-spaces/convolution_A100.json.gz "
        "--budget 16 --log run.jsonl"],
    "iobound history import other.db --db tuning.db": [
        f"iobound history import {SPACES}/convolution_{device}.json.gz --db {db}"
        for device, db in (("A100", "tuning.db"), ("A6000", "other.db"))],
    "iobound kernel --layer resnet50.conv3_1 --device v100 --from-history layers.db --emulate": [
        "iobound tune --layer resnet50.conv3_1 --budget 48 --history layers.db",
        "iobound tune --layer resnet50.conv3_1 --budget 48 --history layers.db --reuse --seed 1"],
    "iobound report --network resnet50 --out-dir benchmarks/results/report_resnet50_v100": [
        "mkdir -p benchmarks/results"],
}

#: examples that start from an empty folder of their own, not the section's
OWN_FOLDER = {"iobound history import other.db --db tuning.db"}

#: files an example writes (relative to its folder) that must equal the repository's
SAME_FILES = {
    "iobound report --network resnet50 --out-dir benchmarks/results/report_resnet50_v100": [
        "benchmarks/results/report_resnet50_v100/table.md",
        "benchmarks/results/report_resnet50_v100/selection.json"],
}

#: examples not run here, and why
NOT_RUN = {
    "iobound tune --network resnet50 --executor ray --workers 2 --measure model --strategy random "
    "--budget 4 --log rn/run.jsonl --out-dir rn/k --no-verify --network-json rn/resnet50.json":
        "starts a Ray cluster and tunes 53 layers (37 s); tests/search/test_ray_*.py run Ray",
    "iobound tune --network resnet18 --measure model --executor local --workers 2 --budget 16 "
    "--log ri/run.jsonl --out-dir ri/k --no-verify":
        "stopped by a Ctrl-C at a moment of its own; tests/search/test_interrupts.py interrupts",
    "iobound tune --network resnet18 --measure model --executor local --workers 2 --budget 16 "
    "--resume ri/run.jsonl --out-dir ri/k --no-verify --network-json ri/resnet18.json":
        "resumes the interrupted run above",
}

DURATION = re.compile(r"\b\d+(?:\.\d+)? s\b")
CACHE_FOLDER = re.compile(r"\S*/\.cache/iobound/")
COMPILE_LINE = re.compile(r"^compile\s+ok \((sm_\w+), CUDA ([\d.]+)\)")


@dataclass(frozen=True)
class Example:
    """One ``$ command`` of a fenced block and the lines printed under it."""

    doc: str
    line: int
    section: str
    command: str
    expected: tuple[str, ...]

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def examples(path: Path) -> list[Example]:
    """The ``$`` commands of ``path``'s fenced blocks, continuations (``\\``) joined.

    >>> import tempfile
    >>> doc = Path(tempfile.mkdtemp()) / "d.md"
    >>> _ = doc.write_text("## A\\n```\\n$ iobound x \\\\\\n    --y\\nout\\n\\n```\\n")
    >>> [(e.section, e.command, e.expected) for e in examples(doc)]
    [('A', 'iobound x --y', ('out',))]
    """
    found, section, block, current = [], "", False, None

    def close():
        if current is not None:
            command, line, out = current
            while out and not out[-1].strip():
                out.pop()
            found.append(Example(path.name, line, section, command, tuple(out)))

    lines = path.read_text().splitlines()
    number = 0
    while number < len(lines):
        text = lines[number]
        number += 1
        if not block and text.startswith("#"):
            section = text.lstrip("#").strip()
        elif text.startswith("```"):
            close()
            block, current = not block, None
        elif block and text.startswith("$ "):
            close()
            start, command = number, text[2:]
            while command.endswith("\\") and number < len(lines):
                command = command[:-1].rstrip() + " " + lines[number].strip()
                number += 1
            current = (command, start, [])
        elif block and current is not None:
            current[2].append(text)
    return found


ALL = [e for doc in DOCS for e in examples(doc)]
RUN = [e for e in ALL if e.command.startswith("iobound ") and e.command not in NOT_RUN]
SECTIONS = {}
for _e in RUN:
    SECTIONS.setdefault((_e.doc, _e.section), []).append(_e)


def _normal(line: str, cache: str) -> str:
    line = line.replace(cache.rstrip("/") + "/", "<cache>/")
    line = CACHE_FOLDER.sub("<cache>/", line)
    return DURATION.sub("<t> s", line.replace(" (cached)", "")).rstrip()


def matches(expected: list[str], got: list[str]) -> bool:
    """Whether ``got`` is ``expected`` with each ``...`` line standing for any lines.

    >>> matches(["a", "...", "d"], ["a", "b", "c", "d"]), matches(["a", "..."], ["b"])
    (True, False)
    """
    pattern = "".join(r"(?:.*\n)*?" if line.lstrip().startswith("...") else re.escape(line) + r"\n"
                      for line in expected)
    return re.fullmatch(pattern, "".join(line + "\n" for line in got)) is not None


def _environment() -> dict[str, str]:
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def _run(command: str, folder: Path) -> subprocess.CompletedProcess:
    """``command`` (``iobound`` as this checkout's, any other program as it is) in ``folder``,
    stdout and stderr as one text."""
    argv = shlex.split(command)
    if argv[0] == "iobound":
        argv = [sys.executable, "-m", "search.cli.main", *argv[1:]]
    return subprocess.run(argv, cwd=folder, env=_environment(), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=900, check=False)


def _passed_over(example: Example) -> str | None:
    """Why this machine cannot print ``example``'s compile line, or None."""
    for line in example.expected:
        found = COMPILE_LINE.match(line)
        if found is None:
            continue
        from kernels.toolchains import find_toolchain
        arch, release = found.groups()
        chain = find_toolchain(arch)
        if chain is None:
            return f"{example.where}: no toolchain here targets {arch}"
        if chain.release != release:
            return (f"{example.where}: printed with CUDA {release}; this machine compiles {arch} "
                    f"with CUDA {chain.release}, whose ptxas counts registers its own way")
    return None


def _compare(example: Example, printed: str, title: str) -> None:
    """Fail with a diff unless ``printed`` is what ``example`` shows."""
    cache = os.environ.get("IOBOUND_CACHE", "~/.cache/iobound")
    got = [_normal(line, cache) for line in printed.splitlines()]
    want = [_normal(line, cache) for line in example.expected]
    if not matches(want, got):
        diff = "\n".join(difflib.unified_diff(want, got, "README", "printed", lineterm="", n=1))
        pytest.fail(f"{title}\n{diff}", pytrace=False)


def _check(example: Example, folder: Path) -> None:
    for command in BEFORE.get(example.command, []):
        done = _run(command, folder)
        assert done.returncode == 0, f"{example.where}: setup {command!r} failed:\n{done.stdout}"
    done = _run(example.command, folder)
    assert done.returncode == 0, f"{example.where}: exit {done.returncode}\n{done.stdout}"
    _compare(example, done.stdout, f"{example.where}: {example.command}")
    for name in SAME_FILES.get(example.command, []):
        assert (folder / name).read_bytes() == (REPO / name).read_bytes(), (
            f"{example.where}: {name} differs from the committed copy")


def _needs(section: list[Example]) -> list:
    text = " ".join(e.command for e in section)
    marks = [pytest.mark.shared_data] if "../shared/data" in text else []
    if " report " in f" {text} ":
        marks.append(pytest.mark.skipif(_no_matplotlib(), reason="iobound report needs matplotlib"))
    return marks


def _no_matplotlib() -> bool:
    return importlib.util.find_spec("matplotlib") is None


@pytest.mark.parametrize("section", [
    pytest.param(group, id=f"{doc}:{name}", marks=_needs(group))
    for (doc, name), group in SECTIONS.items()])
def test_section_prints_what_the_docs_say(section, tmp_path):
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "data").symlink_to(SHARED_DATA.absolute(), target_is_directory=True)
    folder = tmp_path / "section"
    folder.mkdir()
    passed_over = []
    for number, example in enumerate(section):
        reason = _passed_over(example)
        if reason:
            passed_over.append(reason)
            continue
        own = tmp_path / f"example{number}"
        if example.command in OWN_FOLDER:
            own.mkdir()
        _check(example, own if example.command in OWN_FOLDER else folder)
    if passed_over and len(passed_over) == len(section):
        pytest.skip("; ".join(passed_over))
    for reason in passed_over:
        warnings.warn(reason)


def python_examples(path: Path) -> list[Example]:
    """The ```` ```python ```` blocks of ``path`` followed at once by a block of what they
    print (``command`` is the block's code).

    >>> import tempfile
    >>> doc = Path(tempfile.mkdtemp()) / "d.md"
    >>> _ = doc.write_text("```python\\nprint(1)\\n```\\n```\\n1\\n```\\n")
    >>> [(e.line, e.command, e.expected) for e in python_examples(doc)]
    [(1, 'print(1)', ('1',))]
    """
    lines, found = path.read_text().splitlines(), []
    for start, text in enumerate(lines):
        if text != "```python":
            continue
        end = lines.index("```", start + 1)
        if end + 1 < len(lines) and lines[end + 1] == "```":
            printed = lines[end + 2:lines.index("```", end + 2)]
            found.append(Example(path.name, start + 1, "", "\n".join(lines[start + 1:end]),
                                 tuple(printed)))
    return found


@pytest.mark.parametrize("example", [
    pytest.param(e, id=e.where) for doc in DOCS for e in python_examples(doc)])
def test_python_example_prints_what_the_docs_say(example, tmp_path):
    """Run as a script of its own (the executor example's workers import its main module)."""
    (tmp_path / "example.py").write_text(example.command + "\n")
    done = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, env=_environment(),
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, f"{example.where}: exit {done.returncode}\n{done.stderr}"
    _compare(example, done.stdout, example.where)


def test_the_lists_name_examples_that_exist():
    """A key of BEFORE, OWN_FOLDER, SAME_FILES or NOT_RUN that names no example (the
    README's command was changed) would silently stop doing its job."""
    commands = {e.command for e in ALL}
    stale = [c for listed in (BEFORE, OWN_FOLDER, SAME_FILES, NOT_RUN) for c in listed
             if c not in commands]
    assert not stale, f"no such example in {[d.name for d in DOCS]}: {stale}"


def test_every_iobound_subcommand_has_an_example_that_runs():
    from search.cli.main import build_parser
    actions = [a for a in build_parser()._actions if a.choices and a.dest == "command"]
    run = {e.command.split()[1] for e in RUN}
    assert actions and set(actions[0].choices) <= run, set(actions[0].choices) - run


def markdown_tables(text: str) -> list[tuple[int, list[str]]]:
    """(first line number, rows) of each run of lines starting with ``|``.

    >>> markdown_tables("a\\n| x |\\n|---|\\n| 1 |\\nb")
    [(2, ['| x |', '|---|', '| 1 |'])]
    """
    found, rows = [], []
    for number, line in enumerate([*text.splitlines(), ""], 1):
        if line.startswith("|"):
            rows.append(line)
        elif rows:
            found.append((number - len(rows), rows))
            rows = []
    return found


def _row_label(row: str) -> list[str]:
    return [cell.strip() for cell in row.strip("|").split("|")][:2]


def test_readme_tables_quote_the_committed_results():
    """A table of the README or docs/ whose header and first row's label (its first two
    cells) are those of a table in benchmarks/results/*.md quotes that file's table whole:
    a results file written again with other numbers, and the README not, fails here."""
    results = {p.name: p.read_text()
               for p in sorted((REPO / "benchmarks" / "results").glob("*.md"))}
    quoted = 0
    tables = [(d.name, at, rows) for d in DOCS for at, rows in markdown_tables(d.read_text())]
    for doc, start, rows in tables:
        if len(rows) < 3:
            continue
        sources = [name for name, text in results.items()
                   for _, theirs in markdown_tables(text)
                   if len(theirs) >= 3 and theirs[0] == rows[0]
                   and _row_label(theirs[2]) == _row_label(rows[2])]
        if sources:
            quoted += 1
            assert any("\n".join(rows) in results[name] for name in sources), (
                f"{doc}:{start}: the table differs from the one in {sorted(set(sources))}")
    assert quoted >= 5  # the search-quality, transfer and leave-network-out tables at least
