"""The one number format of the report (recuse.numbers), at its edges."""

from __future__ import annotations

import math

import pytest

from recuse.numbers import (
    decimal,
    estimate_parts,
    scale_words,
    signed,
    table_power,
    table_precision,
)
from recuse.report.html import _cell


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
    from recuse.cli.metrics import _numbers
    from recuse.metrics.result import MetricResult
    from recuse.numbers import MINUS, column_decimals, small_decimals

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
    digits = column_decimals(column)
    assert [_cell(v, "estimate", digits) for v in column] == ["< 0.000001", "0.000000", "0.250000"]
    rows = [MetricResult("m", -1e-300, -2e-300, 3e-301, 0.9, 10, 5, "m")]
    assert _numbers(rows[0])[0] == f"{MINUS}< 0.000001"


def test_numbers_of_a_thousand_or_more_have_separators_where_a_user_reads_them() -> None:
    """Counts had separators (7,013) but floats did not: a card read "$1250.000 per 1,000
    judgments" and "1834 tokens in", the page 1234.50 and 2.5e+06 (a count in a float
    column lost its digits), a run "12000 judgments … (3725.4 s)". Every one is written
    with separators now; JSON and CSV keep plain numbers."""
    from recuse.judging.card import Card
    from recuse.judging.runner import RunSummary
    from recuse.numbers import MINUS

    assert decimal(1234.5, 2) == "1,234.50" and signed(-12000.0, 1) == f"{MINUS}12,000.0"
    from recuse.numbers import general

    assert general(1250.0) == "1,250" and general(1e9) == "1,000,000,000"
    assert _cell(1234.5, "perplexity") == "1,234.50" and _cell(2_500_000.0, "x") == "2,500,000"
    assert _cell(-0.5, "x") == f"{MINUS}0.500" and _cell(1e300, "x") == "1e+300"
    card = Card("big", 12_000, 1234.5, 1834.0, 1020.25, 1250.0)
    line = card.line()
    assert "1,234.50 answered judgments/s" in line and "(12,000 answered" in line, line
    assert "1,834 tokens in / 1,020.2 out" in line and "$1,250.000 per 1,000" in line, line
    run = RunSummary(total=12_000, cached=1_500, ok=10_000, unparsed=0, failed=500, seconds=3725.4)
    assert run.line() == (
        "12,000 judgments: 1,500 already stored, 10,000 ok, 0 unparsed, 500 failed; 10,500 "
        "finished (answered or failed) in 3,725.40 s from the first call to the last: 2.82/s"
    )


def test_a_share_and_its_percentage_are_rounded_once() -> None:
    """57 of 200 pairs is 0.285, whose float is 0.28499…: written with two decimals it
    read 0.28 beside a gate's 28.5%. A share at three decimals and its percentage at one
    are the same digits for every count of up to 1,000 pairs (k / n exact at three
    decimals of the share when n divides 1,000; rounded once, the same way, otherwise)."""
    from decimal import Decimal

    from recuse.numbers import decimal, share_percent

    assert (decimal(57 / 200, 3), share_percent(57 / 200)) == ("0.285", "28.5%")
    for n in (7, 200, 333, 800, 1000):
        for k in range(n + 1):
            share = decimal(k / n, 3)
            assert Decimal(share) * 100 == Decimal(share_percent(k / n).rstrip("%")), (k, n)


def test_a_share_strictly_inside_never_reads_none_or_all() -> None:
    """1 of 2,500 read "0.0%" and 2,499 of 2,500 "100.0%" (certify's lines wrote shares
    with one fixed decimal): a share strictly between 0 and 1 takes the decimals that
    show it, written within half its last digit of k / n (exact decimals, not floats)."""
    from decimal import Decimal

    from recuse.numbers import share_percent

    for n in (2500, 9999, 123457):
        for k in (1, 2, 3, n // 2, n - 3, n - 2, n - 1):
            text = share_percent(k / n).rstrip("%")
            assert Decimal(text) not in (0, 100), (k, n, text)
            step = Decimal(1).scaleb(-len(text.partition(".")[2]))
            assert abs(Decimal(text) - Decimal(k) * 100 / n) <= step / 2, (k, n, text)
    assert (share_percent(0.0), share_percent(1.0)) == ("0.0%", "100.0%")


def test_a_lower_bound_never_reads_above_itself() -> None:
    """A Clopper–Pearson bound of 0.69973 written to nearest read 'lower bound 0.700 <
    0.70'. lower_bound rounds down: at most the bound, within one last digit of it, for
    bounds of every k of n (scipy's beta quantile), and a bound equal to a typed value
    (0.7, 1.0) keeps its digits."""
    from decimal import Decimal

    from scipy.stats import beta

    from recuse.numbers import lower_bound

    assert (lower_bound(0.699726998284556), lower_bound(0.7), lower_bound(1.0)) == (
        "0.699",
        "0.700",
        "1.000",
    )
    assert lower_bound(float("nan")) == "nan"
    for n in (5, 51, 200):
        for k in range(1, n + 1):
            x = float(beta.ppf(0.1 / 3, k, n - k + 1))
            written = Decimal(lower_bound(x))
            assert written <= Decimal(x) < written + Decimal("0.001"), (k, n, x)


def test_a_lower_bound_reads_on_its_own_side_of_the_target_beside_it() -> None:
    """Rounded down to three decimals, a bound that meets a target typed with more
    (0.8555, "≥ 85.55%") read under it: 0.0019700^(1/40) = 0.855779 (40 of 40 agree, a
    Clopper–Pearson bound) read "85.5%", certified under "≥ 85.55%". ``beside`` takes as
    many more decimals, still rounded down, as keep it at or above a target it meets;
    below a target it stays below it at the three (rounding down cannot lift it)."""
    from decimal import Decimal

    from scipy.stats import beta

    from recuse.numbers import exact, lower_bound

    met = float(beta.ppf(0.00197, 40, 1))
    assert met == pytest.approx(0.00197 ** (1 / 40), rel=1e-12) and 0.8557 < met < 0.8558
    assert lower_bound(met, percent=True) == "85.5%"  # alone: three decimals of the share
    assert lower_bound(met, percent=True, beside=0.8555) == "85.57%"
    assert lower_bound(met, beside=0.8555) == "0.8557"
    assert lower_bound(0.8555, percent=True, beside=0.8555) == "85.55%"  # equal: as it
    assert lower_bound(0.85549, percent=True, beside=0.855) == "85.5%"  # 85.549% ≥ 85.5%
    assert lower_bound(0.85499, percent=True, beside=0.855) == "85.4%"  # below: stays
    for target in (0.8, 0.8555, 0.85555, 0.9123456):
        for k in range(30, 61):
            x = float(beta.ppf(0.01, k, 61 - k))
            text = lower_bound(x, percent=True, beside=target)
            written = Decimal(text.rstrip("%")).scaleb(-2)
            assert written <= Decimal(repr(x)), (x, text)  # never above the bound
            assert (written >= Decimal(repr(target))) == (x >= target), (x, target, text)
            assert text != exact(target, percent=True) or x >= target


def test_a_threshold_is_written_as_the_float_it_is() -> None:
    """A certified confidence threshold names the items kept (c ≥ it); rounded, it named
    others: 0.99974 (a log-probability judge's) read 'c ≥ 1' (three significant digits),
    as if only items judged with certainty were kept, and 0.9997 in certify's table.
    exact writes the shortest decimal that reads back as the same float, no exponent."""
    import numpy as np

    from recuse.numbers import exact

    assert (exact(1.0), exact(0.75), exact(0.5)) == ("1", "0.75", "0.5")
    assert exact(0.99974) == "0.99974" and exact(0.8500000000000001) == "0.8500000000000001"
    assert exact(1e-7) == "0.0000001" and exact(-0.0) == "0"
    rng = np.random.default_rng(7)
    for x in (*rng.random(200), *(1 - 10.0 ** -rng.uniform(1, 15, 200))):
        text = exact(float(x))
        assert float(text) == float(x) and "e" not in text, (x, text)


def test_a_number_inside_a_span_never_reads_its_end_past_the_last_decimal() -> None:
    """estimate_parts(span=...) takes decimals until a number strictly inside the span no
    longer reads one of its ends, but stops at MOST_DECIMALS: 1 − 1e-12 (a rate of
    agreement over 10¹² items but one) then read '1.000000 [1.000000, 1.000000]', every
    item. Past the last decimal such a number is a bound one step inside the end, as a
    share past its decimals is '> 99.9999%'; the end itself and a number near 0 (already
    '< 0.000001') read as before."""
    from recuse.numbers import estimate_parts

    one = 1 - 1e-12
    assert estimate_parts(one, one - 1e-12, 1.0, signed=False, span=(0, 1)) == (
        "> 0.999999",
        "[> 0.999999, 1.000000]",
    )
    assert estimate_parts(1e-12, 0.0, 1e-11, signed=False, span=(0, 1)) == (
        "< 0.000001",
        "[0.000000, < 0.000001]",
    )
    assert estimate_parts(-one, -1.0, -0.5, span=(-1, 1)) == (
        "< −0.999999",
        "[−1.000000, −0.500000]",
    )
    assert estimate_parts(one, 0.5, 1.0, span=(-1, 1)) == ("> +0.999999", "[0.500000, 1.000000]")
    # an end itself, and a span not given: as they were
    assert estimate_parts(1.0, 1.0, 1.0, signed=False, span=(0, 1)) == ("1.00", "[1.00, 1.00]")
    assert estimate_parts(one, one, one, signed=False) == ("1.00", "[1.00, 1.00]")
    # ends 1e-12 apart are zero width by the audit's rule (interval_rules.zero_width):
    # not written apart (ends_apart_decimals), as ends that differ more are
    assert estimate_parts(one, one, 1.0, signed=False) == ("1.00", "[1.00, 1.00]")
    assert estimate_parts(one, 1 - 1e-9, 1.0, signed=False) == (
        "1.000000000",
        "[0.999999999, 1.000000000]",
    )


def test_a_table_of_estimates_has_one_precision_that_never_hides_its_numbers() -> None:
    """A regression's coefficient table wrote every number with four fixed decimals:
    a γ of 5e-05 read +0.0001 beside others at four places, and a standard error of
    0.004 beside an estimate of 0.5 would read 0.00 at the estimate's two decimals.
    One precision for the table: two decimals where a number reaches 0.1, three where
    all are under 0.1, as many as show the smallest row's largest number (two
    significant digits) below 0.001, and more where a standard error would read 0."""
    assert table_precision([(0.31, 0.1, 0.15, 0.47)]) == 2
    assert table_precision([(0.049, 0.019, 0.018, 0.081)]) == 3
    # the smaller row sets the table: 0.00052 shows at 5 decimals (0.00052), 4 would not
    assert table_precision([(0.31, 0.1, 0.15, 0.47), (0.0003, 0.0001, 0.0001, 0.00052)]) == 5
    # an error of 0.004 beside +0.50 [0.49, 0.51]: three decimals, so it reads 0.004
    digits = table_precision([(0.5, 0.004, 0.493, 0.507)])
    assert digits == 3 and decimal(0.004, digits) == "0.004"
    # a row of no finite number counts for nothing; no row at all: three decimals
    nan = float("nan")
    assert table_precision([(nan, nan, nan, nan), (0.31, 0.1, 0.15, 0.47)]) == 2
    assert table_precision([]) == 3


def test_a_table_on_an_extreme_scale_is_written_in_units_of_a_power_of_ten() -> None:
    """Scores of 1e49 wrote a γ of fifty digits, scores of 1e-7 a γ of +0.0000 starred
    significant. Such a table is written in units of the power of ten of its largest
    number (from 1e15, where the digits after the sixteenth are a float's noise, and
    under 1e-5, which six decimals show with one digit or none), said in words."""
    assert table_power([0.05, -0.2, 0.0, float("nan")]) == 0
    assert table_power([1e-5, 3e-6]) == 0 and table_power([9.99e14, 1.0]) == 0
    assert table_power([-4.94e47, 1.17e48, 7.6e45]) == 48
    assert table_power([1e15]) == 15 and table_power([-9.99e-6]) == -6
    assert table_power([4.9e-9, -8.1e-9, 1e-12]) == -9
    assert table_power([]) == 0 and table_power([0.0, float("inf")]) == 0
    assert scale_words(0) == ""
    assert scale_words(48) == "in units of 10\u2074\u2078"
    assert scale_words(-9) == "in units of 10\u207b\u2079"


def test_a_typed_number_and_one_minus_it_read_as_typed() -> None:
    """A target of 0.975 written ``{:.2f}`` read 0.97, and 1 − δ for δ = 0.005 read
    0.99 (for δ = 0.0001, 1.00: a certainty). exact writes the float's shortest decimal,
    with at least ``least`` decimals; complement subtracts in decimal (the float
    1 − 0.07 is 0.9299999999999999)."""
    from recuse.numbers import complement, exact

    assert exact(0.975, least=2) == "0.975" and exact(0.8, least=2) == "0.80"
    assert exact(0.85, least=2) == "0.85" and exact(1.0, least=2) == "1.00"
    assert exact(0.8) == "0.8" and exact(-0.5, least=3) == "\u22120.500"
    assert 1 - 0.07 != 0.93  # the float subtraction
    assert complement(0.07) == "0.93" and complement(0.005) == "0.995"
    assert complement(0.0001, least=2) == "0.9999" and complement(0.1, least=2) == "0.90"
    assert complement(0.025, least=2) == "0.975" and complement(1.5) == "\u22120.5"


def test_a_p_value_beside_its_threshold_is_written_on_its_side_of_it() -> None:
    """Three decimals wrote a p (or q) within half a thousandth of the threshold it is
    judged against as the threshold itself: ``q = 0.100 > 0.1``, ``p 0.100`` beside a
    star for p < 0.1. Beside the threshold, each is written with the decimals that put
    it on its own side, checked by comparing the written decimal with the threshold."""
    from decimal import Decimal

    import numpy as np

    from recuse import numbers

    rng = np.random.default_rng(5)
    for bound in (0.1, 0.05, 0.01, 1 - 0.9, 1 - 0.95):
        exact = Decimal(f"{bound:.15g}")
        near = [float(exact) + d for d in (-1e-9, -4e-5, -4e-4, 4e-4, 4e-5, 1e-9, 0.0)]
        for p in [*near, *rng.uniform(0.001, 0.2, 200).tolist()]:
            text = numbers.p_text(p, beside=bound)
            shown, value = Decimal(text), Decimal(repr(p))
            assert (shown > exact) - (shown < exact) == (value > exact) - (value < exact), (
                p, bound, text)  # fmt: skip
            assert len(text) <= 18 and text.startswith("0.")
            assert text == numbers.p_text(p) or len(text) > 5  # more decimals only where needed
    assert numbers.p_text(0.0004, beside=0.001) == "< 0.001"


def test_a_decimal_beside_its_thresholds_is_written_on_its_side_of_each() -> None:
    """A number written with the decimals of the numbers beside it can read as a
    threshold it is judged against in the same sentence, or past it: an estimate 0.0496
    read ``+0.050`` beside "small (< 0.05 from no bias)". Beside its thresholds it takes
    the decimals that put it on its side of every one, checked against the exact
    decimals, and no more than the decimals asked for where those already do."""
    from decimal import Decimal

    import numpy as np

    from recuse import numbers

    rng = np.random.default_rng(11)
    for bounds, digits in (((-0.05, 0.05), 3), ((0.45, 0.55), 2), ((0.1,), 2), ((0.7,), 3)):
        exact = [Decimal(f"{b:.15g}") for b in bounds]
        near = [float(e) + d for e in exact for d in (-4e-4, -4e-5, -1e-9, 0.0, 1e-9, 4e-5)]
        for v in [*near, *rng.uniform(-0.2, 0.8, 300).tolist()]:
            text = numbers.decimal_beside(v, bounds, digits)
            shown, value = Decimal(text.replace("\u2212", "-")), Decimal(repr(v))
            for e in exact:
                assert (shown > e) - (shown < e) == (value > e) - (value < e), (v, bounds, text)
            assert text == decimal(v, digits) or len(text.partition(".")[2]) > digits
    assert numbers.decimal_beside(0.0496, (-0.05, 0.05), 3, signed=True) == "+0.0496"
    assert numbers.decimal_beside(-0.04996, (-0.05, 0.05), 3) == "\u22120.04996"


def test_a_tiny_delta_is_never_written_as_a_certainty() -> None:
    """decimal's 28 digits rounded 1 - 1e-30 to 1: `recuse certify --delta 1e-30` said
    "with probability ≥ 1.00". Exact to 28 decimals, then 1 − δ."""
    from recuse.numbers import complement, general

    assert complement(1e-28) == "0." + "9" * 28
    assert complement(1e-29, least=2) == "1 \u2212 1e\u221229"
    assert complement(5e-324) == "1 \u2212 5e\u2212324"
    # its exponent's sign a minus, as general() writes one: "1 − 1e-30" had a hyphen
    assert complement(1e-30).split(" ")[-1] == general(1e-30) == "1e\u221230"
    assert complement(1e-20) == "0." + "9" * 20


def test_numbers_are_written_the_same_whatever_the_callers_decimal_context() -> None:
    # the thread's decimal context is the caller's: a script's getcontext().prec = 3
    # wrote 99.99% as "> 100%", 1234.5678 as 1230 and raised InvalidOperation for a
    # bound of 1,234.567; a trap on Inexact raised in every bound written; and recuse
    # set the caller's flags (Inexact, Rounded)
    import decimal as decimals

    from recuse.numbers import (
        complement,
        decimal_beside,
        exact,
        lower_bound,
        off_null_decimals,
        share_percent,
        share_percent_beside,
    )
    from recuse.report.gate import _decimal_sum

    def written() -> list[object]:
        return [
            exact(1234.5678), exact(0.99987, percent=True), complement(0.123456789),
            lower_bound(1234.5678), lower_bound(0.123456789), share_percent(0.99987),
            share_percent(0.000004), share_percent_beside(0.0496, 0.05),
            decimal_beside(0.0496, [0.05], 2), off_null_decimals(0.494, 0.4996, 0.5, 2),
            _decimal_sum(0.7, 0.1),
        ]  # fmt: skip

    expected = [
        "1234.5678", "99.987%", "0.876543211", "1,234.567", "0.123", "99.99%", "0.0004%",
        "4.96%", "0.0496", 4, 0.8,
    ]  # fmt: skip
    assert written() == expected
    for prec, traps in ((3, []), (28, [decimals.Inexact, decimals.FloatOperation])):
        with decimals.localcontext() as callers:
            callers.clear_flags()
            callers.prec = prec
            for trap in traps:
                callers.traps[trap] = True
            assert written() == expected
            assert not any(callers.flags.values())


def test_an_interval_whose_ends_differ_never_reads_as_equal_ends() -> None:
    """A reward model's first-position rate, 0.5 with the exact bound [0.4967, 0.5033]
    (JudgeBench), read ``0.50 [0.50, 0.50]``: "fixed, no variation". Its ends take the
    third decimal that tells them apart (0.4967 → 0.497, 0.5033 → 0.503), the estimate
    with them; a truly zero-width interval stays at two."""
    from recuse.numbers import ends_apart_decimals, estimate_parts, estimate_text, share_interval

    assert estimate_text(0.5, 0.4967, 0.5033, signed=False) == "0.500 [0.497, 0.503]"
    assert estimate_text(0.5, 0.4967, 0.5033, signed=False, null=0.5) == "0.500 [0.497, 0.503]"
    assert estimate_parts(0.5, 0.5, 0.5, signed=False) == ("0.50", "[0.50, 0.50]")
    # 0.20004 and 0.20006 read 0.20 twice at two, 0.200 at three; 0.2000 and 0.2001 at four
    assert estimate_text(0.2, 0.20004, 0.20006) == "+0.2000 [0.2000, 0.2001]"
    assert ends_apart_decimals(-0.0301, -0.0299, 3) == 4  # −0.030 twice at three
    assert estimate_parts(-0.03, -0.0301, -0.0299) == ("−0.0300", "[−0.0301, −0.0299]")
    # a share the gate writes as a percentage: 50.0% [50.0%, 50.0%] took 49.96% apart
    assert share_interval(0.5, 0.4996, 0.5004) == ("50.00%", "[49.96%, 50.04%]")
    assert share_interval(0.5, 0.5, 0.5) == ("50.0%", "[50.0%, 50.0%]")


def test_print_result_reads_an_interval_of_width_apart() -> None:
    """``print(result)`` and ``recuse metrics pairs`` write the estimate as the audit
    does: the reward model's first-position rate on 350 prompts, none changing with the
    order (exact bound 1 − 0.1^(1/350) = 0.00656, half of it each way: [0.49672,
    0.50328]), read 0.50 [0.50, 0.50]."""
    from recuse.cli.metrics import _numbers
    from recuse.metrics.result import MetricResult

    half = -math.expm1(math.log(0.1) / 350) / 2
    assert half == pytest.approx(0.00328, abs=1e-5)
    r = MetricResult(
        "first_position_rate", 0.5, 0.5 - half, 0.5 + half, 0.9, 350, 350,
        "share of wins to the first slot; exact bound", null=0.5,
    )  # fmt: skip
    assert str(r).startswith("first_position_rate: 0.500 [0.497, 0.503] (90% interval)")
    assert _numbers(r) == ("0.500", "[0.497, 0.503]")


def test_an_interval_no_wider_than_rounding_keeps_its_digits() -> None:
    """Resamples that all gave one value, summed in another order, end a hair apart:
    [0.5, 0.5000000000000001] read '0.5000000000000000 [0.5000000000000000,
    0.5000000000000001]' once ends that differ were written apart; it is zero width by
    the audit's own rule (interval_rules.zero_width) and reads so."""
    from recuse.interval_rules import zero_width
    from recuse.numbers import estimate_parts

    hair = 0.5 + 2**-53
    assert hair != 0.5 and zero_width(0.5, 0.5, hair)
    assert estimate_parts(0.5, 0.5, hair, signed=False) == ("0.50", "[0.50, 0.50]")
    # wider than rounding: apart, as before
    assert estimate_parts(0.5, 0.4967, 0.5033, signed=False) == ("0.500", "[0.497, 0.503]")
