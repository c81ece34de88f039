"""The one number format of the report (recuse.numbers), at its edges."""

from __future__ import annotations

from recuse.numbers import decimal, signed
from recuse.report.html import _cell
from recuse.report.verdict import estimate_parts


def test_a_negative_zero_is_written_as_zero() -> None:
    """-0.0 (what -(0.0) or a zero times -1 gives; its sign is a bit, not a value) read
    −0.000 in the terminal, the page and the verdict sentence: a zero estimate of a
    difference read "−0.000 [−0.000, 0.000]", as if it leaned negative. It is 0, with
    the sign a difference of 0 gets (+0.000), as +0.0 is written."""
    zero = -0.0
    assert str(zero) == "-0.0"  # a real negative zero
    assert signed(zero, 3) == signed(0.0, 3) == "+0.000"
    assert decimal(zero, 3) == decimal(0.0, 3) == "0.000"
    assert estimate_parts(zero, zero, 0.0) == ("+0.000", "[0.000, 0.000]")
    assert _cell(zero, "estimate") == "0.000"
    # a small negative value keeps its sign: it is not zero
    assert signed(-0.0004, 3) == "\u22120.000" and decimal(-0.25, 2) == "\u22120.25"
