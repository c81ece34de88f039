"""The CLI's rich console: pretty on a terminal, plain and never hard-wrapped elsewhere;
and the ways every command shows text read from files or models: :func:`cell` and
:func:`echo` as one line each (:func:`recuse.terminal.one_line`: a name with a newline in
it stays on its line), :func:`echo_lines` for text of several lines (JSON, a table)
whose names were made one line where it was built."""

from __future__ import annotations

import sys

import typer
from rich.console import Console, ConsoleOptions, RenderResult
from rich.padding import Padding
from rich.table import Table as RichTable
from rich.text import Text

from recuse.terminal import json_shown, one_line, shown

__all__ = [
    "TerminalTable",
    "cell",
    "console",
    "echo",
    "echo_lines",
    "json_shown",
    "one_line",
    "shown",
]

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


def cell(text: object, *, style: str = "") -> Text:
    """``text`` as a rich table cell or line: :func:`one_line`, and never read as markup."""
    return Text(one_line(text), style=style)


def echo(text: object, *, err: bool = False) -> None:
    """``typer.echo`` of ``text`` as one line (:func:`one_line`)."""
    typer.echo(one_line(text), err=err)


def echo_lines(text: str, *, err: bool = False) -> None:
    """``typer.echo`` of text of several lines (:func:`json_shown` JSON, a table), each
    :func:`shown`: the text from data in it was made one line as it was built."""
    typer.echo(shown(text), err=err)


class TerminalTable(RichTable):
    """A rich table that, on a terminal too narrow for it (its columns at their
    narrowest, one word wide, do not fit), is shown one row at a time instead: the
    first column's value, then ``header: value`` for each other column, and the
    caption under them. Names and paths then stay whole instead of folded a few letters
    a line. Where the console is not a terminal (:func:`console`: never wrapped) the
    table is always a table."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        unbounded = options.update(width=UNWRAPPED)
        if self.__rich_measure__(console, unbounded).minimum <= options.max_width:
            yield from super().__rich_console__(console, options)
            return
        if self.title is not None:
            yield _text(self.title)
        headers = [_text(c.header) for c in self.columns]
        rows = zip(*(list(c.cells) for c in self.columns), strict=True)
        for row in rows:
            first, *rest = (_text(v) for v in row)
            yield Text.assemble(first, style="bold") if self.show_header else first
            for head, value in zip(headers[1:], rest, strict=True):
                line = (
                    Text.assemble(head, ": ", value) if self.show_header and head.plain else value
                )
                yield Padding(line, (0, 0, 0, 2), expand=False)
        if self.caption is not None:  # what the values mean (a legend of their marks)
            yield _text(self.caption)


def _text(value: object) -> Text:
    """A table cell as text: a string is rich markup, as a table reads it."""
    if isinstance(value, Text):
        return value
    return Text.from_markup(value) if isinstance(value, str) else Text(str(value))
