"""Text read from files or models, made safe for a terminal: :func:`shown` for text,
:func:`one_line` for a line or a cell that quotes it (a judge's name with a newline in
it must not start a line of its own), :func:`json_shown` for JSON printed on one, and
:func:`unbroken` for an error's message (one line, its line breaks escaped). The
CLI (:mod:`recuse.cli.console`), the judging runner's progress bar and the HTML page
(each value it writes) use them; the data files written (report.json, CSV) keep the
text as read."""

from __future__ import annotations

import re

__all__ = ["json_shown", "one_line", "shown", "unbroken"]

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

    A lone surrogate, a file name's byte that is not UTF-8 as Python holds it, is
    written as that byte's escape, as report.json names the file
    (:func:`recuse.files.path_text`): ``caf\xe9.csv``, not the raw byte (or, on a UTF-8
    terminal, a traceback: "surrogates not allowed").

    >>> print(shown("caf\udce9.csv"), shown("\ud800"))
    caf\xe9.csv \ud800
    """
    return surrogates_escaped(_UNSHOWN.sub(_escape, str(text)))


def surrogates_escaped(text: str) -> str:
    r"""``text`` with each lone surrogate escaped: one from a byte that is not UTF-8
    (U+DC80–U+DCFF, :func:`os.fsdecode`'s) as that byte, ``\xNN``, the rule of
    :func:`recuse.files.path_text`; any other as ``\uXXXX``. Text every writer takes.

    >>> surrogates_escaped("caf\udce9.csv: not found"), surrogates_escaped("a\ud800")
    ('caf\\xe9.csv: not found', 'a\\ud800')
    """
    return _SHOWN_SURROGATE.sub(_surrogate_escape, text)


#: a lone surrogate (U+D800–U+DFFF: no character; U+DC80–U+DCFF a byte not UTF-8)
_SHOWN_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(m: re.Match[str]) -> str:
    return m.group().encode("unicode_escape").decode("ascii")


def _surrogate_escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


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


#: the characters a reader of lines ends a line at (``str.splitlines``'s: newline,
#: carriage return, vertical tab, form feed, the file, group and record separators,
#: NEL, the line and paragraph separators)
_BREAKS = re.compile("[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def unbroken(text: object) -> str:
    r"""``text`` as one line, the rest as read: each character :data:`_BREAKS` ends a
    line at written as its escape, as :func:`one_line` writes it. The rule for an
    error's message (:class:`recuse.errors.RecuseError`): it quotes names from the data
    and must stay one line wherever it goes, so a judge ``"a\nb"`` reads ``a\nb``, never
    ``a b`` as ``"a b"`` does; the other characters :func:`shown` escapes are left for
    the terminal (``one_line(unbroken(t)) == one_line(t)``), so a JSON error object
    still carries them as read.

    >>> print(unbroken("gpt-4\nPASS: forged\r\u2028é"))
    gpt-4\nPASS: forged\r\u2028é
    """
    return _BREAKS.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text))


#: what :func:`json_shown` escapes: :data:`_UNSHOWN`, and the lone surrogates, which
#: no UTF-8 text holds
_JSON_UNSHOWN = re.compile(f"{_UNSHOWN.pattern}|[\ud800-\udfff]")


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

    A lone surrogate (a file name's byte that is not UTF-8, as Python reads it:
    ``b"\xff"`` is ``"\udcff"``) is escaped too: written as is, stdout sends the raw
    byte, and the JSON is not UTF-8 (RFC 8259 §8.1), which a reader such as ``jq``
    refuses or garbles.

    >>> json_shown(json.dumps({"file": "bad\udcff.csv"}, ensure_ascii=False))
    '{"file": "bad\\udcff.csv"}'
    """
    return _JSON_UNSHOWN.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
