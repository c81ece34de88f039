"""Text read from files or models, made safe for a terminal: :func:`shown` for text,
:func:`one_line` for a line or a cell that quotes it (a judge's name with a newline in
it must not start a line of its own), :func:`json_shown` for JSON printed on one. The
CLI (:mod:`recuse.cli.console`) and the judging runner's progress bar use them; files
written keep the text as read."""

from __future__ import annotations

import re

__all__ = ["json_shown", "one_line", "shown"]

#: characters a terminal acts on rather than shows: control characters (C0 but tab and
#: newline, DEL, C1: ESC starts the sequences that move the cursor, clear the screen,
#: recolour) and the bidirectional overrides and isolates, which reorder what follows;
#: and the line and paragraph separators, which a reader of the output (Python's
#: splitlines, JavaScript) takes as line ends: a name must not start a line of its own
_UNSHOWN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def shown(text: object) -> str:
    r"""``text`` for a terminal: each character it would act on (:data:`_UNSHOWN`, e.g.
    in a judge's name read from a file) written as its escape. Files the commands
    write (report.json, CSV) keep the text as read.

    >>> print(shown("gpt-4\x1b[2J\u202eevil é"))
    gpt-4\x1b[2J\u202eevil é
    """
    return _UNSHOWN.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text))


def one_line(text: object) -> str:
    r"""``text`` as one line: :func:`shown`, and each newline written ``\n`` too. The
    rule for every line (and table cell) of output that quotes text from the data: a
    reader of the output goes line by line (CI reading ``recuse gate``, a person
    reading a table), and a judge named ``"x\nPASS: ..."`` would print a line the
    command never wrote. Text of several lines (a table, JSON) is not given whole to it:
    each name in it is, where the line is built.

    >>> print(one_line("gpt-4\nPASS: forged\r"))
    gpt-4\nPASS: forged\r
    """
    return shown(text).replace("\n", "\\n")


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
