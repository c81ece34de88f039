"""Error messages quote names from the data as the terminal shows them: one line, a line
break written as its escape, every other character as read, so two names never read
the same (the whitespace used to be collapsed: a judge "a\\nb" read "a b")."""

from __future__ import annotations

import random

import pytest

from recuse.errors import ConfigError, InputError, RecuseError
from recuse.terminal import one_line, shown, unbroken

#: what str.splitlines ends a line at, each with the escape one_line writes for it
BREAKS = {"\n": "\\n", "\r": "\\r", "\x0b": "\\x0b", "\x0c": "\\x0c", "\x1c": "\\x1c",
          "\x1d": "\\x1d", "\x1e": "\\x1e", "\x85": "\\x85", "\u2028": "\\u2028",
          "\u2029": "\\u2029"}  # fmt: skip


def test_names_that_differ_in_whitespace_read_differently() -> None:
    names = ["a\nb", "a b", "a  b", "a\tb", "a\r\nb", "a\u2028b", " a b"]
    said = [str(InputError(f"judge '{n}' is not in the data", file=f"{n}.csv")) for n in names]
    assert len(set(said)) == len(names), said
    assert said[0] == "a\\nb.csv: judge 'a\\nb' is not in the data"
    assert said[4] == "a\\r\\nb.csv: judge 'a\\r\\nb' is not in the data"
    assert said[5] == "a\\u2028b.csv: judge 'a\\u2028b' is not in the data"
    assert all(s.splitlines() == [s] for s in said)


@pytest.mark.parametrize("error", [ConfigError, RecuseError])
def test_every_recuse_error_is_one_line(error: type[RecuseError]) -> None:
    said = str(error("no judge 'x\nPASS: forged' — judges present: a\u2029b"))
    assert said == "no judge 'x\\nPASS: forged' — judges present: a\\u2029b"
    column = InputError("bad", column="c\nd", fix="map\rit")
    assert str(column) == "column 'c\\nd': bad — map\\rit" and column.column == "c\nd"


def test_a_message_keeps_what_is_not_a_line_break_as_read() -> None:
    """The terminal's escapes are added where it is printed (one_line), so the JSON
    error object carries an escape sequence or a bidirectional override as read."""
    text = "judge\x1b[2J\u202eevil é\t"
    assert str(ConfigError(text)) == text == unbroken(text)
    assert one_line(ConfigError(text)) == shown(text)


def test_unbroken_escapes_each_line_break_as_one_line_does() -> None:
    rng = random.Random(7)
    alphabet = [*BREAKS, "a", " ", "\\", "n", "\x1b", "\u202e", "é", "\t"]
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        got = unbroken(text)
        assert got.splitlines() in ([got], [])  # one line
        assert one_line(got) == one_line(text)  # the terminal shows the same
        assert unbroken(got) == got
        if "\\" not in text:  # each escape back to its line break gives the text again
            back = got
            for char, escape in BREAKS.items():
                back = back.replace(escape, char)
            assert back == text
    for char, escape in BREAKS.items():
        assert unbroken(f"a{char}b") == f"a{escape}b" == one_line(f"a{char}b")


def test_errors_made_of_parts_come_back_from_a_pickle_whole() -> None:
    """An error sent between processes (a Ray worker's, raised where the judge runs, is
    sent back pickled) is rebuilt as pickle rebuilds exceptions: its class called with
    its ``args``, the message alone. SettingError (moved to recuse.bootstrap_rules,
    still read as recuse.metrics.bootstrap.SettingError) and MissingDependencyError
    take their parts, so unpickling them raised TypeError (missing 'value' and 'rule';
    missing 'extra') instead of giving the error back."""
    import pickle

    from recuse.errors import MissingDependencyError
    from recuse.metrics.bootstrap import SettingError

    setting = SettingError("level", 1.5, "must be in [0.5, 1)", "0.9")
    missing = MissingDependencyError("torch", "local")
    for error in (setting, missing):
        back = pickle.loads(pickle.dumps(error))
        assert type(back) is type(error)
        assert str(back) == str(error)
    back_setting = pickle.loads(pickle.dumps(setting))
    assert str(back_setting) == "level must be in [0.5, 1) (e.g. 0.9), got 1.5"
    assert str(back_setting.named("--level")) == "--level = 1.5: must be in [0.5, 1), e.g. 0.9"
    assert "pip install 'recuse[local]'" in str(pickle.loads(pickle.dumps(missing)))
