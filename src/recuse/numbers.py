"""One way to write a number a reader sees, wherever it is shown: the terminal, the
HTML page, a note or a warning. A leaf (it imports nothing of recuse), so the metrics
that word their own caveats and the report that lays them out share it.

- a minus sign is U+2212 (``−0.31``), as the summary tables write it, never the ASCII
  hyphen (AlpacaEval's caveats read ``r = -0.31`` beside tables reading ``−0.31``);
- a count has thousands separators (``n=7,013``, as the tables write 7,013).

>>> signed(-0.3141, 2), signed(5, 1), decimal(-0.5, 3), count(7013)
('−0.31', '+5.0', '−0.500', '7,013')
"""

from __future__ import annotations

__all__ = ["MINUS", "count", "decimal", "minus", "signed"]

#: the minus sign every shown number uses
MINUS = "\u2212"


def minus(text: str) -> str:
    """``text`` (a formatted number, or numbers in brackets) with each ASCII hyphen
    written as :data:`MINUS`. Only for text that is numbers: a hyphen in words stays."""
    return text.replace("-", MINUS)


def signed(value: float, digits: int) -> str:
    """``value`` with its sign always written (``+0.12``, ``−0.31``), ``digits`` after
    the point: a difference whose no-difference value is 0."""
    return minus(f"{value:+.{digits}f}")


def decimal(value: float, digits: int) -> str:
    """``value`` with ``digits`` after the point, a negative one with :data:`MINUS`."""
    return minus(f"{value:.{digits}f}")


def count(n: int) -> str:
    """A count with thousands separators: ``7,013``."""
    return f"{int(n):,}"
