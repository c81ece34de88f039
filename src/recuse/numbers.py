"""One way to write a number a reader sees, wherever it is shown: the terminal, the
HTML page, a note or a warning. A leaf (it imports nothing of recuse), so the metrics
that word their own caveats and the report that lays them out share it.

- a minus sign is U+2212 (``−0.31``), as the summary tables write it, never the ASCII
  hyphen (AlpacaEval's caveats read ``r = -0.31`` beside tables reading ``−0.31``);
- a count has thousands separators (``n=7,013``, as the tables write 7,013), and so has
  any number of 1,000 or more (``1,234.50``, ``−12,000.0``): a cost, a rate of tokens
  per second, a perplexity; JSON and CSV keep plain numbers;
- a confidence level is a percentage with the decimals it needs (``99.5%``: written
  ``{:.0%}`` it read ``100%``, an interval that would be the whole line).

>>> signed(-0.3141, 2), signed(5, 1), decimal(-0.5, 3), count(7013), decimal(1234.5, 2)
('−0.31', '+5.0', '−0.500', '7,013', '1,234.50')
>>> percent(0.9), percent(0.975), percent(0.995), percent(0.999999), percent(2 / 3)
('90%', '97.5%', '99.5%', '99.9999%', '66.6667%')

- a p- or q-value has three decimals, and one under 0.001 is written ``< 0.001`` (the
  convention: three decimals would read 0.000, a p-value that is never 0);
- a number under 10 has three decimals, or more where the numbers written beside it
  are smaller than 0.001 (:func:`small_decimals`): 0.00075 beside 0.009 is written
  0.00075 and 0.00900, never 0.000 or 0.001 beside a 7.5e-04 (never scientific below 1);
- the finest a number is written is six decimals (:data:`MOST_DECIMALS`): a non-zero
  number that six decimals would write as 0 (1e-300, 4e-07) is written as its sign and a
  bound, ``< 0.000001`` or ``−< 0.000001`` (``+< 0.000001`` where the sign is always
  written), as a p-value under 0.001 is ``< 0.001``: 0.000000 reads as exactly 0, no
  bias, which it is not. Fewer decimals, chosen for the numbers beside it, write it 0 at
  their precision (``+0.000 [−0.050, 0.050]``), as they write 0.0004.

>>> p_text(0.0703), p_text(0.0004), p_text(1.0)
('0.070', '< 0.001', '1.000')
>>> small_decimals(0.5), small_decimals(0.0075), small_decimals(0.00075), small_decimals(0.0)
(3, 3, 5, 3)
>>> d = small_decimals(1e-300)
>>> decimal(1e-300, d), decimal(-1e-300, d), signed(4e-07, d), signed(-4e-07, d), signed(0.0, d)
('< 0.000001', '−< 0.000001', '+< 0.000001', '−< 0.000001', '+0.000000')
"""

from __future__ import annotations

import decimal as decimals
import functools
import math
from collections.abc import Callable, Iterable
from decimal import ROUND_FLOOR, ROUND_HALF_EVEN, Decimal, localcontext
from typing import ParamSpec, TypeVar

__all__ = [
    "LARGEST_PLAIN",
    "MINUS",
    "MOST_DECIMALS",
    "P_FLOOR",
    "column_decimals",
    "complement",
    "count",
    "counted",
    "decimal",
    "decimal_beside",
    "ends_apart_decimals",
    "estimate_digits",
    "estimate_parts",
    "estimate_text",
    "exact",
    "fixed_decimals",
    "general",
    "lower_bound",
    "minus",
    "off_null_decimals",
    "p_text",
    "percent",
    "scale_words",
    "share_interval",
    "share_percent",
    "share_percent_beside",
    "signed",
    "significant_beside",
    "small_decimals",
    "table_power",
    "table_precision",
]

#: the smallest p- or q-value written as a number (:func:`p_text`); below, ``< 0.001``
P_FLOOR = 0.001

#: the minus sign every shown number uses
MINUS = "\u2212"

#: the most decimals a number is written with (:func:`small_decimals`' cap); a non-zero
#: number they would write as 0 is written as a bound (:func:`decimal`)
MOST_DECIMALS = 6

#: the most decimals :func:`complement` writes ``1 − δ`` with (δ = 1e-28 and above); a
#: smaller δ is written ``1 − δ``
COMPLEMENT_DECIMALS = 28


def minus(text: str) -> str:
    """``text`` (a formatted number, or numbers in brackets) with each ASCII hyphen
    written as :data:`MINUS`. Only for text that is numbers: a hyphen in words stays."""
    return text.replace("-", MINUS)


def signed(value: float, digits: int) -> str:
    """``value`` with its sign always written (``+0.12``, ``−0.31``), ``digits`` after
    the point and thousands separators (``+1,250.0``): a difference whose no-difference
    value is 0. A negative zero (``-0.0``, as ``-(0.0)`` or ``0.0 * -1`` give) is 0:
    ``+0.000``, not ``−0.000``. A non-zero number that :data:`MOST_DECIMALS` or more
    decimals write as 0 is its sign and a bound (:func:`decimal`): ``+< 0.000001``."""
    tiny = _below_finest(value, digits)
    if tiny:
        return ("+" if value > 0 else MINUS) + tiny
    return minus(f"{value + 0.0:+,.{digits}f}")


#: :func:`signed`, for functions whose ``signed`` is the flag that asks for it
_with_sign = signed


def decimal(value: float, digits: int) -> str:
    """``value`` with ``digits`` after the point and thousands separators (``1,234.50``),
    a negative one with :data:`MINUS`; a negative zero is 0 (``0.000``). A non-zero
    number that :data:`MOST_DECIMALS` or more decimals write as 0 (under half their last
    digit) is written as a bound with its sign: ``< 0.000001``, ``−< 0.000001`` (0.000000
    would read as exactly 0)."""
    tiny = _below_finest(value, digits)
    if tiny:
        return tiny if value > 0 else MINUS + tiny
    return minus(f"{value + 0.0:,.{digits}f}")


def _below_finest(value: float, digits: int) -> str:
    """``< 0.000001`` (the last digit of ``digits`` decimals) where ``value`` is non-zero,
    ``digits`` is at least :data:`MOST_DECIMALS` and ``value`` rounds to 0 at them; else
    "". Below that, a caller's fewer decimals are the precision of the numbers beside it."""
    if digits < MOST_DECIMALS or value == 0 or value != value:
        return ""
    if float(f"{abs(value):.{digits}f}") != 0:
        return ""
    return f"< {10.0**-digits:.{digits}f}"


def count(n: int) -> str:
    """A count with thousands separators: ``7,013``."""
    return f"{int(n):,}"


def counted(n: int, noun: str) -> str:
    """A count and its noun, plural but for 1: ``1 item``, ``1,200 items``.

    >>> counted(1, "damaged run"), counted(0, "verdict"), counted(1200, "item")
    ('1 damaged run', '0 verdicts', '1,200 items')
    """
    return f"{count(n)} {noun}{'' if n == 1 else 's'}"


_P = ParamSpec("_P")
_R = TypeVar("_R")

#: the decimal context recuse's numbers are worked out in: Python's default one,
#: fixed. The thread's current context is the caller's (a script's ``getcontext().prec
#: = 3`` wrote 99.99% as "> 100%" and 1234.5678 as 1230; a trap on Inexact raised in
#: every bound written), and its flags the caller's to read: recuse set them
_DECIMALS = decimals.Context(
    prec=28,
    rounding=ROUND_HALF_EVEN,
    Emin=-999999,
    Emax=999999,
    capitals=1,
    clamp=0,
    flags=[],
    traps=[decimals.InvalidOperation, decimals.DivisionByZero, decimals.Overflow],
)


def fixed_decimals(func: Callable[_P, _R]) -> Callable[_P, _R]:
    """``func`` run in a copy of :data:`_DECIMALS` (:func:`decimal.localcontext`): its
    Decimal arithmetic neither reads nor changes the calling thread's context."""

    @functools.wraps(func)
    def fixed(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with decimals.localcontext(_DECIMALS):
            return func(*args, **kwargs)

    return fixed


@fixed_decimals
def exact(value: float, *, percent: bool = False, least: int = 0) -> str:
    """``value`` as the shortest decimal that reads back as the same float (Python's
    ``repr``), positional, never rounded: a confidence threshold, which names the items
    kept (``c ≥`` it). Rounded, it names others: 0.99974 to three significant digits read
    ``c ≥ 1``, as if only verdicts given with certainty were kept. A whole number has
    no ``.0``. ``percent``: that decimal × 100, shifted exactly (not the float ×
    100: 0.1 + 0.2 gives 30.000000000000004%), with ``%``. ``least``: at least that
    many decimals, zeros added (a target agreement 0.8 as ``0.80`` beside ``0.975``,
    which ``{:.2f}`` wrote ``0.97``, a lower target than the one certified).

    >>> exact(0.99974), exact(1.0), exact(0.8500000000000001), exact(1e-7)
    ('0.99974', '1', '0.8500000000000001', '0.0000001')
    >>> exact(0.555, percent=True), exact(1e-7, percent=True), exact(-0.0, percent=True)
    ('55.5%', '0.00001%', '0%')
    >>> exact(0.8, least=2), exact(0.975, least=2), exact(1.0, least=2)
    ('0.80', '0.975', '1.00')
    """
    value = float(value) + 0.0
    if not math.isfinite(value):
        return f"{value:g}"
    return _plain(Decimal(repr(value)).scaleb(2 if percent else 0), least) + (
        "%" if percent else ""
    )


def _plain(number: Decimal, least: int) -> str:
    """``number`` positional, without trailing zeros past ``least`` decimals, with
    :data:`MINUS`."""
    text = format(number, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    whole, _, frac = text.partition(".")
    frac = frac.ljust(least, "0")
    return minus(whole + ("." + frac if frac else ""))


@fixed_decimals
def complement(value: float, *, least: int = 0) -> str:
    """``1 − value`` as :func:`exact` writes a number (``least``: at least that many
    decimals), the subtraction made in decimal: a confidence ``1 − δ`` beside the δ
    typed (0.93 for δ = 0.07, whose float subtraction gives 0.9299999999999999;
    written ``{:.2f}``, δ = 0.005 read 0.99 and δ = 0.0001 read 1.00, a certainty).

    A δ under 1e-28 was rounded to 1 by decimal's 28 digits: ``--delta 1e-30`` read
    "with probability ≥ 1.00", a certainty. The subtraction is exact, and a complement
    of more than :data:`COMPLEMENT_DECIMALS` decimals is written ``1 − δ``, its
    exponent's sign a minus as :func:`general` writes one (``1e−30``, not ``1e-30``).

    >>> complement(0.07), complement(0.005), complement(0.1, least=2), complement(1e-7)
    ('0.93', '0.995', '0.90', '0.9999999')
    >>> complement(1e-20), complement(1e-30, least=2), complement(5e-324)
    ('0.99999999999999999999', '1 − 1e−30', '1 − 5e−324')
    """
    value = float(value)
    if not math.isfinite(value):
        return exact(1 - value, least=least)
    with localcontext() as ctx:  # exact: a float's repr has at most 17 digits, to 1e-324
        ctx.prec = 400
        text = _plain(Decimal(1) - Decimal(repr(value)), least)
    if value > 0 and len(text.partition(".")[2]) > COMPLEMENT_DECIMALS:
        return f"1 {MINUS} {minus(repr(value))}"  # the δ as typed (its shortest repr)
    return text


def general(value: float) -> str:
    """``value`` as ``:g`` writes it (up to six significant digits, no trailing zeros:
    a price, a bound given as an option), with thousands separators and :data:`MINUS`;
    from a million on as a whole number, never ``1e+09``.

    >>> general(0.25), general(1250.0), general(-30), general(1e9), general(989.4)
    ('0.25', '1,250', '−30', '1,000,000,000', '989.4')
    """
    value = float(value)
    if not math.isfinite(value):
        return f"{value:g}"
    text = f"{value + 0.0:g}"
    if "e" in text:  # from a million on (999,999.9 too) whole; under 1e-4 as :g writes it
        return decimal(value, 0) if abs(value) >= 1 else minus(text)
    whole, _, frac = text.partition(".")
    return minus(f"{int(whole):,}" if whole not in ("-0", "0") else whole) + (
        f".{frac}" if frac else ""
    )


def small_decimals(size: float, *, most: int = MOST_DECIMALS) -> int:
    """The decimals that write a number of ``size`` (its absolute value) and every larger
    one beside it: three from 0.001 on (and for 0); below, as many as show ``size`` with
    two significant digits (0.00075 → 5), at most ``most``. The HTML tables take it
    from the smallest number of a column, the estimate and its interval from the largest
    of the three (:func:`recuse.numbers.estimate_digits`), as ``print(result)`` and
    the terminal's ``recuse metrics`` write them: one rule, so that a small number is
    never written 0.000 beside another in scientific notation. A non-zero number under
    half the last of ``most`` decimals is written as a bound (``< 0.000001``,
    :func:`decimal`)."""
    size = abs(float(size))
    if size == 0 or size >= 0.001 or size != size:
        return 3
    return min(most, 1 - math.floor(math.log10(size)))


def column_decimals(values: Iterable[object]) -> int:
    """The decimals that write a column of numbers at one precision: those
    :func:`small_decimals` gives its smallest non-zero finite float under 10 (other
    values, counts and texts, do not count); three without one. A table's column of the
    HTML page and a figure's numbers share it, so that one column
    holds one precision (0.00075, 0.00900, 0.00000; never 0.000754 beside 0.009 and
    0.000, or 3e-05 beside 0.000).

    >>> column_decimals([0.009, 0.00075, 0.0, None, 7]), column_decimals([0.5, "x"])
    (5, 3)
    """
    sizes = [
        abs(v)
        for v in values
        if isinstance(v, float) and math.isfinite(v) and v != 0 and abs(v) < 10
    ]
    return small_decimals(min(sizes)) if sizes else 3


def p_text(p: float, *, beside: float | None = None) -> str:
    """A p- or q-value as every table and note writes it: three decimals, ``< 0.001``
    below :data:`P_FLOOR`. ``beside``: the threshold it is judged against (``1 −
    level``), where the value is written with as many more decimals as put it on its
    own side of the threshold: a q of 0.10004 read ``q = 0.100 > 0.1``, and a p of
    0.09996 beside a star for p < 0.1 read ``0.100``; one equal to it reads as it.

    >>> p_text(0.10004), p_text(0.10004, beside=0.1), p_text(0.09996, beside=0.1)
    ('0.100', '0.10004', '0.09996')
    >>> p_text(0.1, beside=1 - 0.9), p_text(0.0703, beside=0.1), p_text(0.0004, beside=0.001)
    ('0.100', '0.070', '< 0.001')
    """
    if p < P_FLOOR:
        return f"< {P_FLOOR:.3f}"
    if beside is None or not math.isfinite(p):
        return f"{p:.3f}"
    # the threshold as the note writes it: 1 − 0.9 is 0.09999999999999998, read 0.1
    return decimal_beside(p, [float(f"{float(beside):.15g}")], 3)


@fixed_decimals
def decimal_beside(
    value: float, bounds: Iterable[float], digits: int, *, signed: bool = False
) -> str:
    """``value`` as :func:`decimal` (``signed``: :func:`signed`) writes it with ``digits``
    decimals, or with as many more as put it on its own side of each of ``bounds`` (the
    thresholds it is judged against in the same sentence): an estimate 0.0496 read
    ``+0.050 … small (< 0.05 from no bias)``, and an interval's end −0.04996 read
    ``−0.050`` beside "within ±0.05". Each is taken as its shortest decimal (Python's
    ``repr``: 0.5 + 0.05 is 0.55), and a value equal to a bound reads as it, to the
    17 decimals a float may need (0.33571915785840817, an interval's own end).

    >>> decimal_beside(0.0496, [0.05, -0.05], 3, signed=True), decimal_beside(0.0496, [0.06], 2)
    ('+0.0496', '0.05')
    >>> decimal_beside(-0.04996, [-0.05], 3), decimal_beside(0.05, [0.05], 2)
    ('−0.04996', '0.05')
    """
    value = float(value)
    write = _with_sign if signed else decimal
    if not math.isfinite(value):
        return write(value, digits)
    exact_value = Decimal(repr(value))
    edges = [Decimal(repr(float(b))) for b in bounds if math.isfinite(float(b))]
    sides = [(exact_value > e) - (exact_value < e) for e in edges]
    for more in range(digits, 18):
        shown = Decimal(f"{value:.{more}f}")  # as decimal() rounds it
        if all((shown > e) - (shown < e) == side for e, side in zip(edges, sides, strict=True)):
            return write(value, more)
    return write(value, 17)


def significant_beside(value: float, bound: float, digits: int = 3) -> str:
    """``value`` as ``:g`` writes it with ``digits`` significant digits, or as many more
    as put it on its own side of ``bound`` (a limit it is said to pass): 1.0004e50 read
    ``1e+50 once scaled, above the 1e+50``. A value equal to ``bound`` reads as it.

    >>> significant_beside(1.0004e50, 1e50), significant_beside(9.99e-51, 1e-50)
    ('1.0004e+50', '9.99e-51')
    >>> significant_beside(9.9996e-51, 1e-50), significant_beside(3.2e60, 1e50)
    ('9.9996e-51', '3.2e+60')
    """
    value, bound = float(value), float(bound)
    side = (value > bound) - (value < bound)
    for more in range(digits, 18):
        text = f"{value:.{more}g}"
        shown = float(text)
        if (shown > bound) - (shown < bound) == side:
            return text
    return repr(value)


@fixed_decimals
def lower_bound(
    value: float, digits: int = 3, *, percent: bool = False, beside: float | None = None
) -> str:
    """A lower bound written with ``digits`` decimals rounded down, so it never reads
    above the value it bounds: a Clopper–Pearson bound of 0.69973 is ``0.699``, where
    rounding to nearest wrote ``lower bound 0.700 < 0.70`` beside a target it misses. The
    float's shortest decimal is rounded down, so a bound equal to a target typed 0.7 is
    ``0.700``. ``percent``: the same digits as a percentage (``69.9%``), beside a target
    written as one (:func:`exact` with ``percent``). ``beside``: the target the bound is
    read against: a bound that meets it takes as many more decimals, still rounded down,
    as keep it at the target or above (0.855779 beside 0.8555 is ``85.57%``, not
    ``85.5%`` under "≥ 85.55%"); one below it is below it already. Not finite: as
    :func:`decimal` writes it.

    >>> lower_bound(0.699726998284556), lower_bound(0.7), lower_bound(0.8372), lower_bound(1.0)
    ('0.699', '0.700', '0.837', '1.000')
    >>> lower_bound(0.699726998284556, percent=True), lower_bound(1.0, percent=True)
    ('69.9%', '100.0%')
    >>> lower_bound(0.855779, percent=True, beside=0.8555)
    '85.57%'
    """
    value = float(value)
    if not math.isfinite(value):
        return decimal(value, digits)
    exact_value = Decimal(repr(value))
    target = None if beside is None or not math.isfinite(beside) else Decimal(repr(beside))
    while True:
        down = exact_value.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_FLOOR)
        if target is None or down >= target or exact_value < target or down == exact_value:
            break
        digits += 1  # meets the target, reads under it: one more decimal
    if percent:
        return minus(f"{down.scaleb(2):,.{max(digits - 2, 0)}f}%")
    return minus(f"{down:,.{digits}f}")


@fixed_decimals
def share_percent(share: float, digits: int = 1) -> str:
    """A share as a percentage with ``digits`` decimals, rounded once, as
    :func:`decimal` rounds the share at ``digits + 2`` (57 of 200: ``28.5%`` where the
    share is written ``0.285``; scaling first and rounding again could part them), never
    ``-0.0%``; a negative one with :data:`MINUS`. A share strictly between 0 and 1 that
    ``digits`` decimals write as 0 or 100 takes as many more as show it, up to a share at
    :data:`MOST_DECIMALS`, and is a bound beyond that: 1 of 2,500 pairs read ``0.0%``
    kept, as if none were, and 2,499 of 2,500 read ``100.0%``, as if all were.

    >>> share_percent(57 / 200), share_percent(0.21), share_percent(-1e-9), share_percent(1.0, 0)
    ('28.5%', '21.0%', '0.0%', '100%')
    >>> share_percent(1 / 2500), share_percent(1e-9), share_percent(2499 / 2500)
    ('0.04%', '< 0.0001%', '99.96%')
    >>> share_percent(1 - 1e-9)
    '> 99.9999%'
    """
    share = float(share) + 0.0
    inside = 0 < share < 1
    out = _share_percent(share, digits)
    for more in range(digits + 1, MOST_DECIMALS - 1):
        if not inside or Decimal(out) not in (0, 100):
            break
        out = _share_percent(share, more)
    if inside and Decimal(out) in (0, 100):
        step = Decimal(1).scaleb(2 - MOST_DECIMALS)
        return f"< {step}%" if Decimal(out) == 0 else f"> {100 - step}%"
    return minus(out if Decimal(out) != 0 else out.lstrip("-")) + "%"


@fixed_decimals
def share_percent_beside(share: float, bound: float) -> str:
    """``share`` as :func:`share_percent` writes it, with as many more decimals as put it
    on its own side of ``bound`` (a required share): 1,199 of 1,999 pairs (59.98%) read
    "60.0%" beside a required 60%, which they miss; 0.5949999 beside 0.595 read 59.5%
    at every decimal share_percent was asked for. A bound (``< 0.0001%``) is beyond
    every digit and stays; a share equal to ``bound`` reads as it.

    >>> share_percent_beside(1199 / 1999, 0.6), share_percent_beside(0.595, 0.595)
    ('59.98%', '59.5%')
    >>> share_percent_beside(0.5949999, 0.595)
    '59.49999%'
    """
    share, bound = float(share), float(bound)
    text = share_percent(share)
    side = (share > bound) - (share < bound)
    for digits in range(2, 17):
        if text[0] in "<>" or not math.isfinite(share):
            break
        shown = Decimal(text.rstrip("%").replace(MINUS, "-")).scaleb(-2)
        exact = Decimal(repr(bound))
        if (shown > exact) - (shown < exact) == side:
            break
        text = share_percent(share, digits)
    return text


def share_interval(estimate: float, low: float, high: float) -> tuple[str, str]:
    """``("28.5%", "[23.3%, 34.2%]")``: a share and its interval as percentages, each
    written by :func:`share_percent` (a share under 0.05% keeps the decimals that show
    it: ``0.04%``, never 0.0% or the 0.000 three decimals of the share wrote), for a
    share the gate and ``recuse certify`` write as a percentage (a certified coverage:
    :attr:`recuse.report.bias.Bias.percent`), so the audit writes it so too.

    An interval whose ends differ never reads as equal ends: the three take as many more
    decimals as write them apart (:func:`ends_apart_decimals`' rule, in percent).

    >>> share_interval(57 / 200, 0.2327, 0.3422), share_interval(1 / 2500, 0.0, 0.0149)
    (('28.5%', '[23.3%, 34.2%]'), ('0.04%', '[0.0%, 1.5%]'))
    >>> share_interval(0.5, 0.49996, 0.50004), share_interval(0.5, 0.5, 0.5)
    (('50.000%', '[49.996%, 50.004%]'), ('50.0%', '[50.0%, 50.0%]'))
    """
    digits = 1
    ends = (share_percent(low), share_percent(high))
    while low != high and ends[0] == ends[1] and digits < 15 and "<" not in ends[0]:
        digits += 1
        ends = (share_percent(low, digits), share_percent(high, digits))
    return share_percent(estimate, digits), f"[{ends[0]}, {ends[1]}]"


@fixed_decimals
def _share_percent(share: float, digits: int) -> str:
    """``share`` × 100 with ``digits`` decimals, rounded once at ``digits + 2``."""
    return f"{Decimal(f'{share:.{digits + 2}f}').scaleb(2):.{digits}f}"


def percent(level: float) -> str:
    """A share (a confidence level) as a percentage with the fewest decimals, up to 4,
    that give it back (``0.9`` → ``90%``, ``0.995`` → ``99.5%``); a share that needs
    more is rounded at 4, but never up to ``100%`` from below it."""
    value = float(level) * 100
    digits = next((d for d in range(4) if abs(round(value, d) - value) < 1e-9), 4)
    text = f"{value:.{digits}f}"
    if value < 100 <= float(text):  # 0.9999999 is not a certainty
        text = f"{100 - 10.0**-digits:.{digits}f}"
    return f"{text}%"


def estimate_text(
    estimate: float,
    low: float,
    high: float,
    *,
    signed: bool = True,
    span: tuple[float, float] | None = None,
    null: float | None = None,
) -> str:
    """``+0.12 [0.03, 0.20]``: the estimate and its interval in one number format.

    ``signed=False`` drops the '+' (for rates whose no-bias value is not 0). ``span``: the
    values the estimate can take (:attr:`~recuse.report.bias.Bias.span`), whose ends a
    number strictly inside never reads, and ``null``, the no-bias value, which the end of
    an interval excluding it never reads (:func:`estimate_parts`). A share the gate
    writes as a percentage is written by :func:`share_interval` instead.
    """
    est, interval = estimate_parts(estimate, low, high, signed=signed, span=span, null=null)
    return f"{est} {interval}"


def estimate_parts(
    estimate: float,
    low: float,
    high: float,
    *,
    signed: bool = True,
    span: tuple[float, float] | None = None,
    null: float | None = None,
) -> tuple[str, str]:
    """``("+0.12", "[0.03, 0.20]")``: :func:`estimate_text` in its two parts, for a table
    that shows them in two cells (the HTML's findings tables), so a cell reads what the
    sentence beside it reads (it read ``0.285 [0.233, 0.342]`` beside ``0.28 [0.23,
    0.34]``). Two decimals, three where every number is under 0.1, more where every
    number is under 0.001 (:func:`estimate_digits`). With ``span``, the ends of the
    values the estimate can take, a number strictly inside it that these decimals write
    as an end takes more, all three together, up to :data:`MOST_DECIMALS`: 2,499 of
    2,500 pairs read ``1.000``, the share of every pair; past them, a bound one step
    inside the end (``> 0.999999``, as a share past its decimals is ``> 99.9999%``).
    ``null``: the no-bias value, which the end of an interval that excludes it never
    reads either (more decimals, all three together, up to :data:`MOST_DECIMALS`): a
    flagged interval [0.0004, 0.40] read ``[0.00, 0.40]``, as if it touched 0. An
    interval that holds it may read it (``[−0.00, 0.40]``: not flagged, as it reads).

    >>> estimate_parts(0.2851, 0.2333, 0.3421, signed=False)
    ('0.29', '[0.23, 0.34]')
    >>> estimate_parts(-0.0123, -0.05, 0.031)
    ('−0.012', '[−0.050, 0.031]')
    >>> estimate_parts(0.00031, 0.00012, 0.00052)
    ('+0.00031', '[0.00012, 0.00052]')
    >>> estimate_parts(0.00031, 0.00012, 0.00052, signed=False)
    ('0.00031', '[0.00012, 0.00052]')
    >>> estimate_parts(2499 / 2500, 0.99810, 0.99998, signed=False, span=(0, 1))
    ('0.99960', '[0.99810, 0.99998]')
    >>> estimate_parts(1 - 1e-12, 1 - 2e-12, 1.0, signed=False, span=(0, 1))
    ('> 0.999999', '[> 0.999999, 1.000000]')
    >>> estimate_parts(0.2, 0.0004, 0.4, null=0), estimate_parts(0.7, 0.5004, 0.9, null=0.5)
    (('+0.2000', '[0.0004, 0.4000]'), ('+0.7000', '[0.5004, 0.9000]'))
    >>> estimate_parts(-0.2, -0.4, -0.004, null=0), estimate_parts(0.2, -0.004, 0.4, null=0)
    (('−0.200', '[−0.400, −0.004]'), ('+0.20', '[−0.00, 0.40]'))

    An interval whose ends differ never reads as equal ends (:func:`ends_apart_decimals`,
    all three numbers together): a reward model's first-position rate 0.5 [0.4967,
    0.5033] read ``0.50 [0.50, 0.50]``, as if it were fixed; one of zero width reads as it.

    >>> estimate_parts(0.5, 0.4967, 0.5033, signed=False), estimate_parts(0.5, 0.5, 0.5)
    (('0.500', '[0.497, 0.503]'), ('+0.50', '[0.50, 0.50]'))
    """
    digits = estimate_digits(estimate, low, high)
    if span is not None:
        while digits < MOST_DECIMALS and any(
            _reads_an_end(v, digits, span) for v in (estimate, low, high)
        ):
            digits += 1
    if null is not None:
        digits = off_null_decimals(low, high, null, digits)
    est, lo, hi = _written(estimate, low, high, digits, signed=signed, span=span)
    if lo == hi and low != high:  # ends that differ never read alike
        digits = ends_apart_decimals(low, high, digits)
        est, lo, hi = _written(estimate, low, high, digits, signed=signed, span=span)
    return est, f"[{lo}, {hi}]"


def _written(
    estimate: float,
    low: float,
    high: float,
    digits: int,
    *,
    signed: bool,
    span: tuple[float, float] | None,
) -> tuple[str, str, str]:
    """The three numbers of :func:`estimate_parts` at ``digits`` decimals."""
    est = _with_sign(estimate, digits) if signed else decimal(estimate, digits)
    lo, hi = decimal(low, digits), decimal(high, digits)
    if span is not None and digits >= MOST_DECIMALS:
        est = _past_an_end(estimate, digits, span, est, signed=signed)
        lo, hi = (_past_an_end(v, digits, span, t) for v, t in ((low, lo), (high, hi)))
    return est, lo, hi


def _past_an_end(
    value: float, digits: int, span: tuple[float, float], text: str, *, signed: bool = False
) -> str:
    """``text`` (``value`` at ``digits`` decimals, the most), or where it still reads an
    end of ``span`` that ``value`` lies strictly inside, a bound one step inside that end
    (``> 0.999999`` for 1 − 1e-12 in [0, 1], as :func:`share_percent` writes ``>
    99.9999%``; ``< 0.000001`` as :func:`decimal` writes it near 0)."""
    if not _reads_an_end(value, digits, span) or "<" in text:
        return text
    low, high = span
    step = 10.0**-digits
    write = _with_sign if signed else decimal
    if abs(high - value) < abs(value - low):
        return "> " + write(high - step, digits)
    return "< " + write(low + step, digits)


@fixed_decimals
def off_null_decimals(low: float, high: float, null: float, digits: int) -> int:
    """``digits``, or as many more as write the end of ``[low, high]`` nearest ``null``
    off it (rounded as :func:`_reads_an_end` rounds it), where the interval excludes
    ``null``, up to :data:`MOST_DECIMALS` (where :func:`decimal` writes a tiny end as a
    bound): an interval flagged for excluding 0 never reads ``[0.00, 0.40]``, as if it
    touched it. An interval that holds ``null`` keeps ``digits``.

    >>> off_null_decimals(0.0004, 0.4, 0, 2), off_null_decimals(0.494, 0.4996, 0.5, 2)
    (4, 4)
    >>> off_null_decimals(-0.004, 0.4, 0, 2), off_null_decimals(0.01, 0.4, 0, 2)
    (2, 2)
    """
    low, high, null = float(low), float(high), float(null)
    if not (low > null or high < null) or not math.isfinite(low + high):
        return digits
    end, exact_null = Decimal(repr(low if low > null else high)), Decimal(repr(null))
    while digits < MOST_DECIMALS and round(end, digits) == exact_null:
        digits += 1
    return digits


@fixed_decimals
def ends_apart_decimals(low: float, high: float, digits: int) -> int:
    """``digits``, or as many more as write the ends of ``[low, high]`` apart, where they
    differ (rounded as :func:`decimal` rounds them; up to 17, the most a float needs): an
    interval of width 0.0066 never reads ``[0.50, 0.50]``, which says the estimate is fixed
    (a reward model's first-position rate, the exact bound on prompts none of which
    changed with the order, [0.4967, 0.5033]). An interval of zero width, or with an end
    not finite, keeps ``digits``; so does one no wider than rounding, ``1e-12 · max(1,
    |end|)``, which :func:`recuse.interval_rules.zero_width` calls zero width (resamples
    that all gave one value, summed in another order: [0.5, 0.5000000000000001] read
    with 16 decimals).

    >>> ends_apart_decimals(0.4967, 0.5033, 2), ends_apart_decimals(0.5, 0.5, 2)
    (3, 2)
    >>> ends_apart_decimals(0.12, 0.35, 2), ends_apart_decimals(0.50004, 0.50005, 2)
    (2, 5)
    >>> ends_apart_decimals(0.5, 0.5000000000000001, 2)
    2
    """
    low, high = float(low), float(high)
    if not math.isfinite(low + high) or high - low <= 1e-12 * max(1.0, abs(low), abs(high)):
        return digits
    while digits < 17 and decimal(low, digits) == decimal(high, digits):
        digits += 1
    return digits


@fixed_decimals
def _reads_an_end(value: float, digits: int, span: tuple[float, float]) -> bool:
    """Whether ``value``, strictly inside ``span``, is written as one of its ends at
    ``digits`` decimals (rounded as :func:`decimal` rounds it)."""
    low, high = span
    if not low < value < high:
        return False
    written = round(Decimal(repr(float(value))), digits)
    return written in (Decimal(repr(float(low))), Decimal(repr(float(high))))


#: a table whose largest number is this or more (or under ``10 ** (1 - MOST_DECIMALS)``,
#: which :data:`MOST_DECIMALS` decimals show with one significant digit or none) is
#: written in units of a power of ten (:func:`table_power`)
LARGEST_PLAIN = 1e15


def table_power(values: Iterable[float]) -> int:
    """The power of ten a table of estimates is written in units of: 0 where its
    largest finite non-zero number (absolute) lies from ``1e-5`` to under
    :data:`LARGEST_PLAIN`, else the power of that number, so it reads from 1 to under 10.
    A regression on unnormalised scores of 1e49 wrote a γ of fifty digits (the float's
    noise after the sixteenth) and one on scores of 1e-7 wrote every γ ``+0.0000``,
    starred significant; in units of ``10⁴⁷`` or ``10⁻⁹`` (:func:`scale_words`,
    said beside the table) they read ``−4.94`` and ``−4.94``, at the precision the
    numbers beside them choose (:func:`table_precision`). The files keep the numbers.

    >>> table_power([0.05, -0.2]), table_power([-4.9e47, 1.9e47]), table_power([8e-9, 0.0])
    (0, 47, -9)
    >>> table_power([float("nan"), 0.0]), table_power([9.9e14]), table_power([1e15])
    (0, 0, 15)
    """
    sizes = [abs(float(v)) for v in values if math.isfinite(float(v)) and float(v) != 0]
    if not sizes:
        return 0
    largest = max(sizes)
    if 10.0 ** (1 - MOST_DECIMALS) <= largest < LARGEST_PLAIN:
        return 0
    return math.floor(math.log10(largest))


def scale_words(power: int) -> str:
    """How a table in units of ``10 ** power`` (:func:`table_power`) says so: "" for
    0, else ``in units of 10⁴⁷`` (superscript digits: never ``1e+47`` beside the
    table's own decimals).

    >>> scale_words(0), scale_words(47), scale_words(-9)
    ('', 'in units of 10⁴⁷', 'in units of 10⁻⁹')
    """
    if power == 0:
        return ""
    return "in units of 10" + str(power).translate(_SUPERSCRIPT)


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def table_precision(rows: Iterable[tuple[float, float, float, float]]) -> int:
    """The decimals a table of ``(estimate, standard error, low, high)`` rows writes
    every one of its numbers with, one precision for the table: the most that
    :func:`estimate_digits` gives any row's estimate and interval, and more where a
    row's non-zero standard error would read 0 at them (:func:`small_decimals` of it:
    ``se 0.00`` beside ``+0.50 [0.49, 0.51]`` reads as no error at all). Rows without
    a finite number count for nothing; a table of none, three decimals. Numbers over
    :data:`LARGEST_PLAIN` are first written in units of a power of ten
    (:func:`table_power`), as is a table too small for :data:`MOST_DECIMALS`.

    >>> table_precision([(0.5, 0.004, 0.493, 0.507)]), table_precision([(-0.1, 0.03, -0.15, -0.05)])
    (3, 2)
    >>> table_precision([(0.2, 0.05, 0.12, 0.28), (0.0004, 0.0001, 0.0002, 0.0006)])
    5
    >>> table_precision([(0.2, float("nan"), float("nan"), float("nan"))]), table_precision([])
    (2, 3)
    """
    most = None
    for estimate, se, low, high in rows:
        finite = [float(v) for v in (estimate, low, high) if math.isfinite(float(v))]
        digits = estimate_digits(max(finite, key=abs), 0, 0) if finite else 3
        se = float(se)
        if math.isfinite(se) and se != 0 and float(f"{abs(se):.{digits}f}") == 0:
            digits = max(digits, small_decimals(se))
        if finite or math.isfinite(se):
            most = digits if most is None else max(most, digits)
    return 3 if most is None else most


def estimate_digits(estimate: float, low: float, high: float) -> int:
    """The decimals :func:`estimate_parts` writes the three numbers with: two, three
    where every number is under 0.1, and where every number is under 0.001 as many as
    show the largest with two significant digits (:func:`small_decimals`,
    at most 6; three read +0.000 [0.000, 0.001])."""
    largest = max(abs(estimate), abs(low), abs(high))
    return 2 if largest >= 0.1 else small_decimals(largest)
