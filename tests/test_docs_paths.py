"""The docs name only files and modules that exist, and docs/architecture.md places every
module of the package.

docs/architecture.md's module map had drifted: six analyses, five command files and
``report/certified_gate.py`` were in the package but nowhere in the map. A module added
or renamed now fails here until the map says where it sits.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

REPO = Path(__file__).parents[1]
PACKAGE = REPO / "src" / "recuse"
PLACEHOLDER = re.compile(r"[<>]|NAME")  # tests/analyses/test_<name>.py, benchmarks/NAME.py


def module_map() -> str:
    """The code block under ``## Modules`` of docs/architecture.md."""
    text = (REPO / "docs" / "architecture.md").read_text("utf-8")
    section = text[text.index("## Modules") :]
    block = re.search(r"```\n(.*?)```", section, flags=re.S)
    assert block, "docs/architecture.md has no module map under ## Modules"
    return block.group(1)


def test_every_module_of_the_package_is_placed_in_the_architecture_map() -> None:
    shown = module_map()
    modules = sorted(
        p.relative_to(PACKAGE).as_posix()
        for p in PACKAGE.rglob("*.py")
        if p.name != "__init__.py" and "__pycache__" not in p.parts
    )
    assert len(modules) > 100
    missing = [m for m in modules if not re.search(rf"\b{re.escape(Path(m).name)}\b", shown)]
    assert missing == []


def test_every_file_the_docs_name_exists() -> None:
    """Paths under src/, tests/, benchmarks/, examples/ and scripts/ that the README and
    the docs pages name, in code spans or prose, are files or folders of the repository."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("**/*.md"))]
    named = {
        (page.name, path.rstrip(".,;:)"))
        for page in pages
        for path in re.findall(
            r"(?<![\w/.])((?:src|tests|benchmarks|examples|scripts)/[\w./<>-]+)",
            page.read_text("utf-8"),
        )
    }
    assert len(named) > 30
    missing = sorted(
        f"{page}: {path}"
        for page, path in named
        if not PLACEHOLDER.search(path) and not (REPO / path).exists()
    )
    assert missing == []


def _resolves(dotted: str) -> bool:
    """Whether ``recuse.a.b.c`` is a module of the package, or an attribute of one."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def test_every_python_name_the_docs_give_imports() -> None:
    """Dotted names on the README and the pages, in prose, code spans and code blocks
    (``recuse.judging.perplexity.add_perplexities``, ``recuse.metrics.calibration.
    recalibrate``), are modules or attributes of the package: the test above reads only
    file paths, so a renamed function would stay on the page."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("**/*.md"))]
    named = {
        (page.name, dotted)
        for page in pages
        for dotted in re.findall(r"(?<![\w/.-])recuse(?:\.[A-Za-z_]\w*)+", page.read_text("utf-8"))
        if dotted != "recuse.toml"  # the config file's name
    }
    assert len(named) > 30
    missing = sorted(f"{page}: {dotted}" for page, dotted in named if not _resolves(dotted))
    assert missing == []


def placed_modules() -> list[str]:
    """The path each entry of the module map gives its file: the folders it is indented
    under (``  metrics/`` then ``    agreement.py``: src/recuse/metrics/agreement.py),
    or the folder written with it (``  data/recorded.py``). Lines indented as a
    description (20 spaces or more) are not entries."""
    folders: list[tuple[int, str]] = []
    paths = []
    for line in module_map().splitlines():
        entry = re.match(r"^( *)(\S+)", line)
        if not entry or len(entry.group(1)) >= 20:
            continue
        indent, name = len(entry.group(1)), entry.group(2)
        while folders and folders[-1][0] >= indent:
            folders.pop()
        if name.endswith("/"):
            folders.append((indent, name.rstrip("/")))
        elif name.endswith(".py"):
            paths.append("/".join([*(f for _, f in folders), name]))
    return paths


def test_every_module_of_the_map_sits_in_the_folder_it_is_placed_under() -> None:
    """metrics/agreement.py and metrics/calibration.py were listed after probes/, at its
    modules' indentation: the map placed them in probes/, which has neither. An entry
    is now where its indentation says."""
    paths = placed_modules()
    assert [p for p in paths if not (REPO / p).is_file()] == []
    assert len(paths) > 60 and "src/recuse/metrics/agreement.py" in paths
