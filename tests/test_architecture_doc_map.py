"""docs/ARCHITECTURE.md against the code: the map's paths and names exist where it says,
the import direction holds (lazy imports included), and the rules it says live in one
place do.

Mechanical checks by AST over the source, no imports of the modules checked.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = re.sub(r"```.*?```", "", (ROOT / "docs" / "ARCHITECTURE.md").read_text(), flags=re.S)
PACKAGES = ("iobound", "dataflow", "kernels", "search")  # the import direction, bottom first
PATH_RE = r"[\w/]+(?:\.py|/)"


def _files(path: str) -> list[Path]:
    p = ROOT / path
    return [p] if p.is_file() else sorted(p.rglob("*.py"))


def _trees(path: str):
    for f in _files(path):
        yield f, ast.parse(f.read_text(), str(f))


def _defined(path: str) -> set[str]:
    """Names a module (or package) defines or imports, class attributes included."""
    out: set[str] = set()
    for _, tree in _trees(path):
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(node.name)
            elif isinstance(node, ast.Assign):
                out.update(t.id for t in node.targets if isinstance(t, ast.Name))
                out.update(t.attr for t in node.targets if isinstance(t, ast.Attribute))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                out.add(node.target.id)
            elif isinstance(node, ast.ImportFrom):
                out.update(a.asname or a.name for a in node.names)
    return out


def _doc_paths() -> list[str]:
    return sorted({t for t in re.findall(r"`([^`]+)`", DOC) if re.fullmatch(PATH_RE, t)
                   and "/" in t})


@pytest.mark.parametrize("path", _doc_paths())
def test_every_path_the_map_names_exists(path):
    assert (ROOT / path).exists(), f"docs/ARCHITECTURE.md names {path}, which does not exist"


def _path_names() -> list[tuple[str, str]]:
    """``(path, name)`` for every `path` (`name`, ...) of the doc."""
    out = []
    for m in re.finditer(rf"`({PATH_RE})` \(([^)]*)\)", DOC):
        path, group = m.groups()
        group = group.split(";")[0].split(" made by ")[0]  # what follows names other places
        out += [(path, n) for n in re.findall(r"`([A-Za-z_][\w.]*)`", group)]
    return out


@pytest.mark.parametrize("path,name", _path_names())
def test_every_name_given_with_a_path_is_defined_there(path, name):
    if not (ROOT / path).exists():
        pytest.skip("the path itself is checked above")
    defined = _defined(path)
    for part in name.split("."):
        assert part in defined, f"docs/ARCHITECTURE.md says {path} has {name}; {part} is not there"


def _imports(tree: ast.AST):
    """Every absolute import anywhere in a module (functions' lazy ones included), with
    ``importlib.import_module("...")`` of a literal."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None))
              in ("import_module", "__import__") and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            yield node.lineno, node.args[0].value


@pytest.mark.parametrize("level", range(len(PACKAGES) - 1))
def test_a_package_imports_only_the_ones_below_it(level):
    assert "`iobound <- dataflow <- kernels <- search`" in DOC
    pkg, above = PACKAGES[level], set(PACKAGES[level + 1:])
    bad = [f"{f.relative_to(ROOT)}:{line} imports {mod}" for f, tree in _trees(pkg)
           for line, mod in _imports(tree) if mod.split(".")[0] in above]
    assert not bad, "\n".join(bad)


#: The registries themselves (where an algorithm's name is the key by design).
_REGISTRIES = {"iobound/algorithms.py", "dataflow/families.py", "kernels/families.py",
               "search/domain_families.py"}


def _branches_on_a_name(tree: ast.AST) -> bool:
    """Whether a module compares with an algorithm's name or keys a literal dict by it."""
    names = {"direct", "winograd"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                elts = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
                if any(isinstance(e, ast.Constant) and e.value in names for e in elts):
                    return True
        elif isinstance(node, ast.Dict):
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
            if names <= keys:
                return True
    return False


def test_every_module_still_branching_on_an_algorithm_name_is_named_by_the_map():
    """The map says callers call a family instead of branching on the algorithm's name and
    lists where they still do: a new algorithm must be taught there too."""
    cell = DOC[DOC.index("Still branching on the name"):]
    cell = cell[:cell.index("|")]
    named = set(re.findall(rf"`({PATH_RE})`", cell))
    branching = {str(f.relative_to(ROOT)) for pkg in PACKAGES for f, tree in _trees(pkg)
                 if _branches_on_a_name(tree)} - _REGISTRIES
    missing = sorted(p for p in branching
                     if p not in named and not any(p.startswith(d) for d in named if d.endswith("/")))
    assert not missing, f"branch on an algorithm's name, not named by docs/ARCHITECTURE.md: {missing}"


def _literal_winograd_e_defaults(tree: ast.AST):
    """Where a module writes Winograd's default e as a number: a parameter ``e`` or
    ``winograd_e`` with an int default, ``--winograd-e``'s argparse default, ``N if e is
    None else e``."""
    def number(n):
        return isinstance(n, ast.Constant) and type(n.value) is int

    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            pos = a.posonlyargs + a.args
            pairs = list(zip(pos[len(pos) - len(a.defaults):], a.defaults))
            pairs += [(k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
            yield from (node.lineno for arg, d in pairs
                        if arg.arg in ("e", "winograd_e") and number(d))
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument"
              and any(isinstance(x, ast.Constant) and x.value == "--winograd-e" for x in node.args)):
            yield from (node.lineno for k in node.keywords if k.arg == "default" and number(k.value))
        elif (isinstance(node, ast.IfExp) and number(node.body)
              and isinstance(node.test, ast.Compare) and isinstance(node.test.left, ast.Name)
              and node.test.left.id in ("e", "winograd_e")
              and isinstance(node.test.ops[0], ast.Is)):
            yield node.lineno


def test_winograds_default_e_is_written_in_one_place():
    """The map: Winograd's default ``e`` lives in ``iobound/algorithms.py``
    (``DEFAULT_WINOGRAD_E``); every other default must take it from there."""
    assert "`DEFAULT_WINOGRAD_E`" in DOC
    bad = [f"{f.relative_to(ROOT)}:{line}" for pkg in PACKAGES for f, tree in _trees(pkg)
           if str(f.relative_to(ROOT)) != "iobound/algorithms.py"
           for line in _literal_winograd_e_defaults(tree)]
    assert not bad, f"Winograd's default e written as a number: {bad}"
