"""The CLI's rich console: pretty on a terminal, plain and never hard-wrapped elsewhere;
and :func:`shown`, which every command applies to text read from files or models
before a terminal gets it."""

from __future__ import annotations

import re
import sys

import typer
from rich.console import Console
from rich.text import Text

__all__ = ["cell", "console", "echo", "json_shown", "shown"]

UNWRAPPED = 1_000_000  # columns: a pipe or a file gets whole lines, never a cut path


def console(*, stderr: bool = False) -> Console:
    """A console for the CLI's tables and messages. When the stream is not a terminal
    (a pipe, a file, CI), lines are never wrapped and no colour codes are written, so a
    long path or message stays on one line that a script can match."""
    stream = sys.stderr if stderr else sys.stdout
    if stream.isatty():
        return Console(stderr=stderr, highlight=False)
    return Console(
        stderr=stderr, highlight=False, soft_wrap=True, width=UNWRAPPED, color_system=None
    )


#: characters a terminal acts on rather than shows: control characters (C0 but tab and
#: newline, DEL, C1: ESC starts the sequences that move the cursor, clear the screen,
#: recolour) and the bidirectional overrides and isolates, which reorder what follows
_UNSHOWN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def shown(text: object) -> str:
    r"""``text`` for a terminal: each character it would act on (:data:`_UNSHOWN`, e.g.
    in a judge's name read from a file) written as its escape. Files the commands
    write (report.json, CSV) keep the text as read.

    >>> print(shown("gpt-4\x1b[2J\u202eevil é"))
    gpt-4\x1b[2J\u202eevil é
    """
    return _UNSHOWN.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text))


def cell(text: object, *, style: str = "") -> Text:
    """``text`` as a rich table cell or line: :func:`shown`, and never read as markup."""
    return Text(shown(text), style=style)


def echo(text: object, *, err: bool = False) -> None:
    """``typer.echo`` of :func:`shown` text."""
    typer.echo(shown(text), err=err)


def json_shown(text: str) -> str:
    r"""JSON text (of ``json.dumps``) for a terminal: each character :func:`shown`
    escapes written as its JSON escape, ``\uXXXX``, so the text still parses to the
    same values (a JSON string may spell any character so).

    >>> import json
    >>> said = json_shown(json.dumps({"judge": "a\u202eb\x9b"}, ensure_ascii=False))
    >>> said
    '{"judge": "a\\u202eb\\u009b"}'
    >>> json.loads(said)["judge"] == "a\u202eb\x9b"
    True
    """
    return _UNSHOWN.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
