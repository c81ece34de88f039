"""No import cycles in ``src/recuse``: data flows one way, and so do imports.

Every module is parsed with :mod:`ast`; each ``recuse.*`` import (function-level
ones included, ``if TYPE_CHECKING:`` blocks excluded: they never run), and each
``lazy_module("recuse.x")`` (:mod:`recuse.lazy`: imported on first use), is an edge to
the module it names (``from recuse.a import b`` names ``recuse.a.b`` when that is a
module, else ``recuse.a``). A package's implicit import of its ``__init__`` is not
an edge, so ``recuse.x.__init__`` re-exporting its modules is not a cycle. Any
strongly connected group of modules is a cycle and is listed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import recuse

ROOT = Path(recuse.__file__).resolve().parent


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _type_checking(child):
            for other in child.orelse:
                yield from _imports(other)
            continue
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        yield from _imports(child)


def _base(name: str, node: ast.ImportFrom) -> str:
    """The absolute module an ``ImportFrom`` in module ``name`` imports from."""
    if not node.level:
        return node.module or ""
    package = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def _lazy_modules(tree: ast.AST) -> Iterator[str]:
    """The modules named by ``lazy_module("...")`` calls in ``tree``."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "lazy_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.args[0].value


def edges(name: str) -> set[str]:
    """The ``recuse`` modules module ``name`` imports."""
    tree = ast.parse(MODULES[name].read_text("utf-8"))
    out: set[str] = {t for t in _lazy_modules(tree) if t in MODULES and t != name}
    for node in _imports(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            base = _base(name, node)
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names
            ]
        out.update(t for t in targets if t in MODULES and t != name)
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def path_in(graph: dict[str, set[str]], group: list[str]) -> str:
    """One closed path through a cycle group, for the message."""
    members = set(group)
    start = group[0]
    route, seen = [start], {start}
    node = start
    while True:
        nxt = sorted(w for w in graph[node] if w in members)
        back = [w for w in nxt if w == start]
        if back and len(route) > 1:
            return " -> ".join([*route, start])
        fresh = [w for w in nxt if w not in seen]
        if not fresh:
            return " -> ".join([*route, *back[:1]]) + " (…)"
        node = fresh[0]
        route.append(node)
        seen.add(node)


GRAPH = {name: edges(name) for name in MODULES}


def test_the_graph_sees_function_level_imports() -> None:
    assert "recuse.judging.runner" in GRAPH["recuse.judging.perplexity"]
    assert "recuse.judging.templates" in GRAPH["recuse.cli.judge"]  # inside a function
    assert "recuse.judging.backends.http" in GRAPH["recuse.cli.judge"]  # lazy_module("...")
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles() -> None:
    found = cycles(GRAPH)
    assert not found, "import cycles:\n" + "\n".join(path_in(GRAPH, g) for g in found)


def _reach(start: str) -> set[str]:
    """Every module ``start`` imports, directly or through others."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for w in GRAPH[todo.pop()]:
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return seen


def test_the_layers_hold() -> None:
    # the judging layer computes numbers (the evaluator card's among them) and never
    # renders them: no module of recuse.judging imports the report or the analyses
    judging = [m for m in GRAPH if m == "recuse.judging" or m.startswith("recuse.judging.")]
    assert judging
    upward = {
        m: sorted(w for w in GRAPH[m] if w.startswith(("recuse.report", "recuse.analyses")))
        for m in judging
    }
    assert not {m: w for m, w in upward.items() if w}, upward
    # the readers of recorded replies share the verdict formats with the judges through
    # one leaf module, not by importing the judging backends or protocols
    reached = _reach("recuse.data.recorded")
    assert not {m for m in reached if m.startswith("recuse.judging")}, sorted(reached)
    assert "recuse.verdict_parsing" in GRAPH["recuse.data.recorded"]
    assert "recuse.verdict_parsing" in GRAPH["recuse.judging.protocols"]
    leaf = _reach("recuse.verdict_parsing")
    assert leaf <= {"recuse.errors", "recuse.terminal"}, sorted(leaf)
    # the errors (whose messages escape line breaks as the terminal does) load nothing more
    assert _reach("recuse.errors") <= {"recuse.terminal"}
    assert not _reach("recuse.terminal")


def test_metrics_never_load_judging_probes_or_simulate() -> None:
    # the statistics are pure: no module of recuse.metrics reaches the judging layer,
    # the probes (whose rewrites load the runner and store) or the simulators, directly
    # or through another module
    metrics = [m for m in GRAPH if m == "recuse.metrics" or m.startswith("recuse.metrics.")]
    assert len(metrics) > 10
    upper = ("recuse.judging", "recuse.probes", "recuse.simulate")
    reached = {m: sorted(w for w in _reach(m) if w.startswith(upper)) for m in metrics}
    assert not {m: w for m, w in reached.items() if w}, {m: w for m, w in reached.items() if w}


def test_metrics_load_alone() -> None:
    # the same rule at run time: each metrics module imported in a fresh interpreter
    # leaves none of those packages in sys.modules (packages' __init__ imports included)
    import subprocess
    import sys

    code = (
        "import importlib, sys, pkgutil\n"
        "import recuse.metrics as m\n"
        "names = [i.name for i in pkgutil.iter_modules(m.__path__, 'recuse.metrics.')]\n"
        "for n in names: importlib.import_module(n)\n"
        "print(len(names), sorted(k for k in sys.modules\n"
        "    if k.startswith(('recuse.judging', 'recuse.probes', 'recuse.simulate'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split(maxsplit=1)
    assert int(out[0]) > 10 and out[1].strip() == "[]", out


def _package(module: str) -> str:
    """The package a module belongs to (a package's ``__init__`` belongs to itself)."""
    path = MODULES.get(module)
    return module if path is not None and path.name == "__init__.py" else module.rpartition(".")[0]


def _private(module: str) -> bool:
    return any(p.startswith("_") and not p.startswith("__") for p in module.split("."))


def private_imports(graph: dict[str, set[str]]) -> list[str]:
    """``importer -> module`` for each module whose dotted name has a ``_private`` part
    imported from outside the package that holds it."""
    return sorted(
        f"{m} -> {t}"
        for m, targets in graph.items()
        for t in targets
        if _private(t) and not m.startswith(_package(t) + ".") and m != _package(t)
    )


def test_no_module_imports_a_private_module_of_another_package() -> None:
    # file reading is the public recuse.files (beside recuse.outputs), not a private
    # module of recuse.data that judging/ and report/ reached into
    assert private_imports(
        {"recuse.judging.templates": {"recuse.data._io"}, "recuse.data.x": {"recuse.data._io"}}
    ) == ["recuse.judging.templates -> recuse.data._io"]
    found = private_imports(GRAPH)
    assert not found, "\n".join(found)
    assert "recuse.files" in GRAPH["recuse.judging.templates"]
    assert "recuse.files" in GRAPH["recuse.report.gate"]


def private_names(source: str) -> list[str]:
    """``module._name`` for each private name (one underscore) a source imports from a
    ``recuse`` module: what a module keeps to itself is imported by none."""
    return [
        f"{node.module}.{alias.name}"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "recuse"
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]


def test_no_module_imports_a_private_name_of_another() -> None:
    # tables._number, roster._DATE, calibration._isotonic, protocols._AUTHORSHIP_SYSTEM
    # and rewrite._SYSTEM were imported elsewhere; each is public now
    assert private_names("from recuse.tables import _number, shown\nimport os\n") == [
        "recuse.tables._number"
    ]
    assert private_names("from recuse.cli import audit as _audit\n") == []
    found = [
        f"{name}: {n}" for name, path in MODULES.items() for n in private_names(path.read_text())
    ]
    assert not found, "\n".join(found)


def _lazy_bindings(tree: ast.AST) -> Iterator[tuple[str, str, str | None]]:
    """``(name, lazy module, typed module)`` for each ``name = lazy_module("m")``: the
    module the ``if TYPE_CHECKING:`` branch beside it binds ``name`` to (None where it
    binds none, or where the call is not in such a branch's ``else``)."""
    checked = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.If) and _type_checking(node)):
            continue
        typed: dict[str, str] = {}
        for stmt in node.body:
            if isinstance(stmt, ast.ImportFrom):
                for alias in stmt.names:
                    typed[alias.asname or alias.name] = f"{stmt.module}.{alias.name}"
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    typed[alias.asname or alias.name] = alias.name
        for stmt in node.orelse:
            if isinstance(stmt, ast.Assign) and list(_lazy_modules(stmt)):
                (target,) = stmt.targets
                assert isinstance(target, ast.Name)
                checked.add(id(stmt))
                yield target.id, next(_lazy_modules(stmt)), typed.get(target.id)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and id(node) not in checked and list(_lazy_modules(node)):
            target = node.targets[0]
            yield getattr(target, "id", "?"), next(_lazy_modules(node)), None


def test_each_lazy_module_is_the_module_mypy_reads_for_it() -> None:
    """A name bound by ``lazy_module("recuse.x")`` is typed by the import beside it under
    ``TYPE_CHECKING`` (mypy reads that import; lazy_module returns Any): the two must name
    the same module, else mypy checks one module and the command runs another (or, the
    string mistyped, fails only when the command first reads it). All 31 agree now."""
    found = [
        (name, binding)
        for name, path in MODULES.items()
        for binding in _lazy_bindings(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert len(found) >= 31
    differ = [(name, b) for name, b in found if b[1] != b[2]]
    assert differ == []
