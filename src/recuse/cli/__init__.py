"""The ``recuse`` command line: thin; parses arguments, calls the library, prints.

Every :class:`~recuse.errors.RecuseError` becomes a one-line message on stderr and
exit code 2. Sub-commands live in the sibling modules and register themselves on
``app`` when imported below.
"""

from __future__ import annotations

import sys

import typer

from recuse.errors import RecuseError

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
        None, "--roster", envvar="RECUSE_ROSTER", help="TOML roster file extending the built-in one."
    ),
) -> None:
    """recuse: measure and correct the biases of LLM judges."""
    if roster:
        import os

        os.environ["RECUSE_ROSTER"] = roster


def _register() -> None:
    # Each import adds its commands to ``app``.
    from recuse.cli import data as _data  # noqa: F401


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``recuse`` console script."""
    _register()
    try:
        app(args=argv, standalone_mode=False)
    except RecuseError as exc:
        print(f"recuse: error: {exc}", file=sys.stderr)
        return 2
    except typer.Abort:
        print("recuse: aborted", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("recuse: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # click usage errors and the like
        import click

        if isinstance(exc, click.exceptions.ClickException):
            exc.show()
            return 2
        if isinstance(exc, click.exceptions.Exit):
            return exc.exit_code
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
