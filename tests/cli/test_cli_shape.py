"""The CLI is thin: each command parses its options, calls the library and prints."""

from __future__ import annotations

import ast
from pathlib import Path

import recuse.cli

CLI = Path(recuse.cli.__file__).resolve().parent
LIMIT = 60


def body_lines(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines of a function's body, its signature and docstring aside."""
    body = fn.body
    first = body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        if isinstance(first.value.value, str) and len(body) > 1:
            body = body[1:]
    end = body[-1].end_lineno or body[-1].lineno
    return end - body[0].lineno + 1


def test_body_lines_counts_the_body_only() -> None:
    fn = ast.parse('def f(\n    a: int,\n) -> int:\n    """Doc.\n\n    More."""\n    b = a\n'
                   "    return b\n").body[0]  # fmt: skip
    assert isinstance(fn, ast.FunctionDef) and body_lines(fn) == 2


def test_every_cli_function_is_short() -> None:
    files = sorted(CLI.glob("*.py"))
    assert len(files) > 5
    long = {
        f"{p.name}:{fn.name} ({body_lines(fn)} lines)"
        for p in files
        for fn in ast.walk(ast.parse(p.read_text("utf-8")))
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) and body_lines(fn) >= LIMIT
    }
    assert not long, f"bodies of {LIMIT}+ lines in cli/ (move logic to the library): {long}"


def test_every_visible_option_of_every_command_says_what_it_does() -> None:
    """``recuse judge --help``, ``recuse probe --help`` and ``recuse judge replay --help``
    showed ``--progress / --no-progress`` with nothing but its default: every visible
    option of every command has a help text."""
    import typer

    from recuse.cli import _register, app

    _register()
    bare: list[str] = []

    def walk(command: object, path: str) -> None:
        for param in getattr(command, "params", []):
            if param.param_type_name == "option" and not param.hidden:
                if not (getattr(param, "help", None) or "").strip():
                    bare.append(f"{path} {param.opts[0]}")
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}")

    walk(typer.main.get_command(app), "recuse")
    assert bare == []
