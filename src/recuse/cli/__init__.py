"""The ``recuse`` command line: thin; parses arguments, calls the library, prints.

Every :class:`~recuse.errors.RecuseError` becomes a one-line message on stderr and
exit code 2. Sub-commands live in the sibling modules and register themselves on
``app`` when imported below.
"""

from __future__ import annotations

import os
import sys

import typer

from recuse.errors import ConfigError, RecuseError

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


def _register() -> None:
    # Each import adds its commands to ``app``.
    from recuse.cli import audit as _audit  # noqa: F401
    from recuse.cli import data as _data  # noqa: F401
    from recuse.cli import favoritism as _favoritism  # noqa: F401
    from recuse.cli import judge as _judge  # noqa: F401
    from recuse.cli import metrics as _metrics  # noqa: F401
    from recuse.cli import validate as _validate  # noqa: F401


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``recuse`` console script; returns the exit code."""
    _register()
    saved_roster = os.environ.get("RECUSE_ROSTER")  # --roster sets it for this run only
    try:
        app(args=argv, prog_name="recuse")
    except SystemExit as exc:  # click's own exits: 0 for --help, 2 for usage errors
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except RecuseError as exc:
        print(f"recuse: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("recuse: interrupted; finished work is kept", file=sys.stderr)
        return 130
    finally:
        if saved_roster is None:
            os.environ.pop("RECUSE_ROSTER", None)
        else:
            os.environ["RECUSE_ROSTER"] = saved_roster
    return 0


if __name__ == "__main__":
    sys.exit(main())
