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


def test_a_non_zero_number_below_the_finest_decimals_never_reads_zero() -> None:
    """small_decimals stops at six decimals, so 1e-300 (any non-zero number under 5e-07)
    was written 0.000000 wherever it set the digits: an estimate of 1e-300 read
    "+0.000000 [0.000000, 0.000000]", exactly no bias with no width, in the verdict, the
    page's cells and ``recuse metrics``. Now it is its sign and a bound, as a p-value
    under 0.001 is "< 0.001"; a real 0 and a negative zero stay 0."""
    from recuse.cli.metrics import _digits, _fmt
    from recuse.metrics.result import MetricResult
    from recuse.numbers import MINUS, small_decimals
    from recuse.report.html import column_digits

    assert small_decimals(1e-300) == 6
    assert decimal(1e-300, 6) == "< 0.000001" and decimal(-1e-300, 6) == f"{MINUS}< 0.000001"
    assert signed(4.9e-07, 6) == "+< 0.000001" and signed(-4.9e-07, 6) == f"{MINUS}< 0.000001"
    assert signed(5.1e-07, 6) == "+0.000001" and decimal(-0.0, 6) == decimal(0.0, 6) == "0.000000"
    # fewer decimals, set by the numbers beside it: 0 at their precision, as before
    assert signed(1e-300, 3) == "+0.000" and decimal(-1e-9, 5) == f"{MINUS}0.00000"
    # the verdict's numbers, a page column and the terminal's table
    assert estimate_parts(-1e-300, -2e-300, 3e-301) == (
        f"{MINUS}< 0.000001",
        f"[{MINUS}< 0.000001, < 0.000001]",
    )
    column = [1e-300, 0.0, 0.25]
    digits = column_digits(column)
    assert [_cell(v, "estimate", digits) for v in column] == ["< 0.000001", "0.000000", "0.250000"]
    rows = [MetricResult("m", -1e-300, -2e-300, 0.2, 0.9, 10, 5, "m")]
    assert _fmt(-1e-300, digits=_digits(rows)) == f"{MINUS}< 0.000001"
