"""The package's layout rules (STYLE.md, "Dependencies flow one way"), checked on the source.

Every module under ``jaxmatch/`` is parsed with :mod:`ast` (nothing is
imported); each ``import`` / ``from ... import`` of a jaxmatch module, at
module level or inside a function, is an edge of the import graph. A package's
``__init__.py`` is the node of the package itself; ``from P import x`` points
at ``P.x`` when that is a module of the package, else at ``P``. Relative
imports are resolved against the importing module.

Importing ``jaxmatch.x.y`` also runs ``jaxmatch/x/__init__.py``, so that
import is an edge to the package ``jaxmatch.x`` too, except from a module
inside ``jaxmatch.x`` (its package is already being imported then). The root
package is never such an implied edge: ``jaxmatch/__init__.py`` is the public
API, imports every layer and always runs first, so counting it would put
every module on a cycle. An explicit import of the root (``import jaxmatch``
in the CLI) is an ordinary edge and is checked like any other.
No module is exempt from the function-level rule: a lazy import that only
dodges a cycle is a cycle all the same.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "jaxmatch"
ROOT = "jaxmatch"
KERNELS = f"{ROOT}.kernels"
ALGORITHMS = tuple(f"{ROOT}.{p}" for p in ("bipartite", "flow", "weighted", "stable", "community"))


def _modules() -> dict[str, Path]:
    """Dotted name -> source file, for every module of the package (``__init__`` as its package)."""
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _target(name: str) -> str | None:
    """The node an import of ``name`` reaches: the longest prefix that is a module of ours."""
    parts = name.split(".")
    while parts:
        cand = ".".join(parts)
        if cand in MODULES:
            return cand
        parts.pop()
    return None


def _imports(name: str) -> list[tuple[str, int]]:
    """(imported jaxmatch module, line) for every import statement in module ``name``, at any depth."""
    tree = ast.parse(MODULES[name].read_text(), filename=str(MODULES[name]))
    package = name if _is_package(name) else name.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == ROOT or alias.name.startswith(ROOT + "."):
                    out.append((_target(alias.name), node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod != ROOT and not mod.startswith(ROOT + "."):
                continue
            for alias in node.names:
                sub = f"{mod}.{alias.name}"
                out.append((sub if sub in MODULES else _target(mod), node.lineno))
    edges = []
    for t, line in out:
        if t is None:
            continue
        edges.append((t, line))
        parts = t.split(".")
        for k in range(2, len(parts)):   # the packages it runs on the way (not the root)
            p = ".".join(parts[:k])
            if not _under(name, p):
                edges.append((p, line))
    return sorted({(t, line) for t, line in edges if t != name})


GRAPH = {name: _imports(name) for name in MODULES}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the directed graph (as a closed path), or None."""
    state: dict[str, int] = {}   # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(u):
        state[u] = 1
        stack.append(u)
        for v in sorted(graph.get(u, ())):
            if state.get(v) == 1:
                return stack[stack.index(v):] + [v]
            if v not in state:
                found = visit(v)
                if found:
                    return found
        stack.pop()
        state[u] = 2
        return None

    for u in sorted(graph):
        if u not in state:
            found = visit(u)
            if found:
                return found
    return None


def test_the_parser_sees_the_package():
    assert {"jaxmatch", "jaxmatch.graph", "jaxmatch.io", "jaxmatch.kernels.stable_mw",
            "jaxmatch.stable.gale_shapley", "jaxmatch.community"} <= set(MODULES)
    targets = {t for t, _ in GRAPH["jaxmatch.stable.gale_shapley"]}
    assert "jaxmatch.kernels.stable_mw" in targets   # `from jaxmatch.kernels import stable_mw`
    assert "jaxmatch.graph" in {t for t, _ in GRAPH["jaxmatch.io"]}


def test_cycle_finder():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_no_import_cycle():
    cyc = _cycle({name: {t for t, _ in edges} for name, edges in GRAPH.items()})
    if cyc:
        steps = []
        for a, b in zip(cyc, cyc[1:]):
            lines = sorted(line for t, line in GRAPH[a] if t == b)
            steps.append(f"{MODULES[a].relative_to(PKG.parent)}:{lines[0]} imports {b}")
        pytest.fail("import cycle " + " -> ".join(cyc) + "\n  " + "\n  ".join(steps))


def test_kernels_import_no_algorithm():
    bad = [f"{MODULES[m].relative_to(PKG.parent)}:{line} imports {t}"
           for m, edges in GRAPH.items() if _under(m, KERNELS)
           for t, line in edges if any(_under(t, a) for a in ALGORITHMS)]
    assert not bad, "a kernel imports an algorithm module:\n  " + "\n  ".join(bad)


def test_kernels_share_helpers_through_leaf_modules():
    """A kernel module imports no other kernel module: shared Pallas helpers and array
    twins live in the private leaf modules ``jaxmatch.kernels._*``, which import no kernel."""
    leaf = lambda m: m.rpartition(".")[2].startswith("_")
    bad = [f"{MODULES[m].relative_to(PKG.parent)}:{line} imports {t}"
           for m, edges in GRAPH.items() if _under(m, KERNELS) and m != KERNELS
           for t, line in edges
           if _under(t, KERNELS) and t != KERNELS and not (leaf(t) and not leaf(m))]
    assert not bad, "kernel modules import each other:\n  " + "\n  ".join(bad)


# text patterns searched for in the package's own files (nothing outside the repo is opened):
# the sibling folder of papers and reference data that a clone does not have
SIBLING = ("..", "shared")


@pytest.mark.parametrize("needle", ["/".join(SIBLING), "/work/" + SIBLING[1]])
def test_package_does_not_read_shared(needle):
    bad = [str(p.relative_to(PKG.parent)) for p in sorted(PKG.rglob("*"))
           if p.is_file() and p.suffix in (".py", ".md", ".txt", ".toml", ".json", ".cfg")
           and needle in p.read_text(errors="replace")]
    assert not bad, f"{needle!r} appears in {bad}: data the package needs ships in jaxmatch/datasets"


MAX_LINES = 500  # STYLE.md: modules by responsibility, each under ~500 lines


def test_modules_stay_small():
    sizes = {name: len(path.read_text().splitlines()) for name, path in MODULES.items()}
    big = {name: n for name, n in sizes.items() if n > MAX_LINES}
    assert not big, f"modules over {MAX_LINES} lines (split them by responsibility): {big}"
