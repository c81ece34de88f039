"""The ``recuse`` Typer app and what its command modules share (``--map`` parsing).

Command modules import ``app`` from here and add their commands to it;
:mod:`recuse.cli` imports them all and runs the app, so no module imports in a cycle.
"""

from __future__ import annotations

import os

import typer

from recuse.errors import ConfigError

app = typer.Typer(
    name="recuse",
    help="Is your LLM judge biased, by how much, with what confidence, and how to correct it.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.callback()
def _root(
    roster: str = typer.Option(
        None,
        "--roster",
        envvar="RECUSE_ROSTER",
        help="TOML roster file extending the built-in one.",
    ),
) -> None:
    """recuse: measure and correct the biases of LLM judges."""
    if roster:
        os.environ["RECUSE_ROSTER"] = roster


def parse_mapping(text: str | None) -> dict[str, str]:
    """Parse ``--map file_col=schema_col,other=judge`` into a column mapping.

    >>> parse_mapping("label=human, evaluator=judge")
    {'label': 'human', 'evaluator': 'judge'}
    """
    if not text:
        return {}
    mapping: dict[str, str] = {}
    for part in text.split(","):
        source, sep, target = part.partition("=")
        if not sep or not source.strip() or not target.strip():
            raise ConfigError(
                f"--map: cannot read {part.strip()!r} — write FILE_COLUMN=SCHEMA_COLUMN, "
                "comma-separated, e.g. --map label=human,evaluator=judge"
            )
        mapping[source.strip()] = target.strip()
    return mapping
