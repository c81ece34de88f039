"""One name, one meaning: a public type name of ``src/recuse`` means one thing.

Scans every module's top level (not imports): each public class, and each public
type alias (a CapWords name bound to a type expression: ``Literal[...]``,
``Callable[...]``, ``A | B``, another type). A class defined in two modules is two
types under one name; an alias defined in two modules with different right-hand
sides (``Kind = Literal["pairwise", "likert"]`` beside ``Kind = Literal["bias",
"quality"]``) is two meanings. Repeating the very same alias (``FloatArray =
NDArray[np.float64]``) is one meaning and passes.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

import recuse
from recuse.report.model import NotEstimated, all_judges_label, is_all_judges_label

SRC = Path(recuse.__file__).parent

#: clashes left to the helpers who own those files (issue 36 item 6): name -> modules.
#: An entry that no longer clashes fails the test, so the list only shrinks.
ALLOWED: dict[str, frozenset[str]] = {}


def _is_type_expression(value: ast.expr) -> bool:
    return isinstance(value, ast.Name | ast.Attribute | ast.Subscript) or (
        isinstance(value, ast.BinOp) and isinstance(value.op, ast.BitOr)
    )


def public_types(src: Path) -> dict[str, dict[str, str]]:
    """``{name: {module path: definition}}`` for each public class and type alias
    defined at the top level of a module under ``src`` (a class's definition is
    ``"class"`` plus its module, so two classes never count as the same)."""
    out: dict[str, dict[str, str]] = defaultdict(dict)
    for path in sorted(src.rglob("*.py")):
        where = path.relative_to(src).as_posix()
        for node in ast.parse(path.read_text("utf-8")).body:
            if isinstance(node, ast.ClassDef):
                out[node.name][where] = f"class of {where}"
            elif (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                name = node.targets[0].id
                if name[0].isupper() and not name.isupper() and _is_type_expression(node.value):
                    out[name][where] = ast.unparse(node.value)
            elif (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and node.value is not None
                and "TypeAlias" in ast.unparse(node.annotation)
            ):
                out[node.target.id][where] = ast.unparse(node.value)
    return {n: d for n, d in out.items() if not n.startswith("_")}


def clashes(types: dict[str, dict[str, str]]) -> dict[str, frozenset[str]]:
    """Names defined in several modules with more than one definition."""
    return {
        name: frozenset(defs)
        for name, defs in types.items()
        if len(defs) > 1 and len(set(defs.values())) > 1
    }


def test_each_public_type_name_has_one_meaning() -> None:
    found = clashes(public_types(SRC))
    new = {n: sorted(m) for n, m in found.items() if ALLOWED.get(n) != m}
    assert not new, (
        "a public type name defined with different meanings in several modules — give "
        f"each a name that says what it is: {new}"
    )
    stale = sorted(n for n in ALLOWED if n not in found)
    assert not stale, f"no longer clashing: remove {stale} from ALLOWED in this test"


def test_the_scan_sees_a_clash(tmp_path: Path) -> None:
    """The scan itself: two different ``Kind``s clash, two equal aliases do not, and
    two classes of one name always do."""
    (tmp_path / "a.py").write_text(
        'from typing import Literal\nKind = Literal["x"]\nArr = list[float]\nclass Report: ...\n'
    )
    (tmp_path / "b.py").write_text(
        'from typing import Literal\nKind = Literal["y"]\nArr = list[float]\nclass Report: ...\n'
        "KEYS = tuple[str]\n_Private = int\n"
    )
    found = clashes(public_types(tmp_path))
    assert found == {"Kind": {"a.py", "b.py"}, "Report": {"a.py", "b.py"}}


@pytest.mark.parametrize("name", ["AuditInput", "all_dimensions", "EXIT", "Rater", "Unestimated"])
def test_dead_and_merged_names_are_gone(name: str) -> None:
    import recuse.driver
    import recuse.judging.protocols
    import recuse.metrics.familiarity
    import recuse.report.gate
    import recuse.report.model

    modules = (
        recuse.driver,
        recuse.judging.protocols,
        recuse.metrics.familiarity,
        recuse.report.gate,
        recuse.report.model,
    )
    assert not [m.__name__ for m in modules if hasattr(m, name)]


def test_a_skip_for_every_judge_is_a_field_shown_as_a_label() -> None:
    """ "all N judges" is built from ``all_judges`` where it is shown and read back
    only from a written report; a judge whose name merely starts with "all " is a judge."""
    every = NotEstimated("Position", "one order only", "d", all_judges=3)
    named = NotEstimated("Position", "one order only", "d", judge="all-rounder 7b")
    assert every.judge == "" and every.judge_label == "all 3 judges"
    assert every.to_dict()["judge"] == "all 3 judges"
    assert every.concerns("j1", {"j1", "j2", "j3"}) and not every.concerns("x", {"j1"})
    assert named.concerns("all-rounder 7b", set()) and not named.concerns("j1", {"j1"})
    assert is_all_judges_label(all_judges_label(12))
    for text in ("all-rounder 7b", "all 3 judges of d", "all judges", "", "j1"):
        assert not is_all_judges_label(text), text
