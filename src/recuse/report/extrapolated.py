"""One note for the intervals of a table whose ends lie beyond the resamples.

An interval expanded for its prompts' number (Student's t) asks the resamples for a
tail deeper than they read at 99% (:func:`recuse.metrics.bootstrap.beyond_warning`):
each such result carries that warning, with its own tail and the resamples that would
read it, in report.json. Read as a person reads a table, the same 400 characters under
every agreement, verbosity and preference row (29 in one 99% audit of LLMBar's MT-Bench
set) bury the warnings that differ. :func:`fold_extrapolated` keeps one short tag on
each row and says the rest once: how many intervals, which, the deepest tail asked and
what reads it (:func:`~recuse.metrics.bootstrap.beyond_fix` of that tail, the estimator's
own advice).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "EXTRAPOLATED_TAG",
    "Extrapolated",
    "extrapolated_parts",
    "fold_extrapolated",
    "gate_caveat",
    "shorten_extrapolated",
]

#: what a row shows in place of its extrapolation warning once the note says it
EXTRAPOLATED_TAG = "an end extrapolated past the resamples (note below)"

_BEYOND = re.compile(
    r"^the (?P<level>[\d.]+%) interval's (?P<side>ends|low end|high end) lies? beyond the "
    r"(?P<resamples>[\d,]+) resamples \(Student's t for (?P<clusters>[\d,]+) prompts, "
    r"bias-corrected, asks them for a tail of (?P<tail>[0-9.]+(?:e[+-]\d+)?); they read "
    r"(?P<reads>\S+) and no deeper\).* — (?P<fix>[^—]+)$"
)
_NEED = re.compile(r"([\d,]+)(?: resamples)? \(--n-boot\)")


@dataclass(frozen=True)
class Extrapolated:
    """What a ``beyond_warning`` says: the level's words, the ends, the resamples, the
    prompts, the tail probability the expanded end asked of the resamples, the deepest
    they read (as written), the advice and the resamples it names (0: none named)."""

    level: str
    side: str
    resamples: int
    clusters: int
    tail: float
    asked: str  # the tail as written (0.002496 beside a reach of 0.0025, not 2.5e-03)
    reads: str
    fix: str
    need: int


def extrapolated_parts(text: str) -> Extrapolated | None:
    """The parts of a :func:`~recuse.metrics.bootstrap.beyond_warning`, or None for any
    other warning.

    >>> from recuse.metrics.bootstrap import beyond_warning
    >>> extrapolated_parts(beyond_warning(1.6e-3, resamples=2000, clusters=75,
    ...                                   level=0.99, side="low end"))
    ... # doctest: +NORMALIZE_WHITESPACE
    Extrapolated(level='99%', side='low end', resamples=2000, clusters=75, tail=0.0016,
                 asked='1.6e-03', reads='0.0025', fix='add prompts, or resamples:
                 3,125 (--n-boot) would read it', need=3125)
    >>> extrapolated_parts("low n: only 8 pairs") is None
    True
    """
    m = _BEYOND.match(text)
    if m is None:
        return None
    return Extrapolated(
        level=m["level"],
        side=m["side"],
        resamples=int(m["resamples"].replace(",", "")),
        clusters=int(m["clusters"].replace(",", "")),
        tail=float(m["tail"]),
        asked=m["tail"],
        reads=m["reads"],
        fix=m["fix"],
        need=int(n[1].replace(",", "")) if (n := _NEED.search(m["fix"])) else 0,
    )


def fold_extrapolated(
    rows: Sequence[tuple[str, Sequence[str]]], *, level: float
) -> tuple[list[tuple[str, ...]], str]:
    """Each row's warnings with its extrapolation warning replaced by
    :data:`EXTRAPOLATED_TAG`, and the one note that says them all, where two rows or
    more carry one (a lone one stays whole; no note: ``""``). ``rows`` are ``(name,
    warnings)``, the name saying which row (judge and metric); ``level`` the
    intervals' (warnings of another level are left whole).

    The note names the rows (four, then how many more), the resamples, the deepest tail
    asked and the advice the estimator gave for that end
    (:func:`~recuse.metrics.bootstrap.beyond_fix`): the resamples that read the deepest
    end read every other, the most any warning names.

    >>> from recuse.metrics.bootstrap import beyond_warning
    >>> w = [beyond_warning(t, resamples=2000, clusters=75, level=0.99, side="low end")
    ...      for t in (1.6e-3, 1.57e-3)]
    >>> shown, note = fold_extrapolated([("a", [w[0]]), ("b", ["low n", w[1]])], level=0.99)
    >>> shown  # doctest: +NORMALIZE_WHITESPACE
    [('an end extrapolated past the resamples (note below)',),
     ('low n', 'an end extrapolated past the resamples (note below)')]
    >>> note[:60]
    '2 intervals have an end beyond the 2,000 resamples (a; b): S'
    >>> note.split(" — ")[-1].split(";")[0]  # 5 / 1.57e-3, not 5 / 1.6e-3 (3,125)
    'add prompts, or resamples: 3,185 (--n-boot) would read them all'
    """
    from recuse.numbers import percent

    parts = [[extrapolated_parts(w) for w in ws] for _, ws in rows]
    parts = [[p if p and p.level == percent(level) else None for p in ps] for ps in parts]
    hits = [
        (name, p) for (name, _), ps in zip(rows, parts, strict=True) for p in ps if p is not None
    ]
    many = {p.resamples for _, p in hits}
    if len(hits) < 2 or len(many) != 1:  # one, or resamples that differ: said whole
        return [tuple(ws) for _, ws in rows], ""
    shown = [
        tuple(EXTRAPOLATED_TAG if p is not None else w for w, p in zip(ws, ps, strict=True))
        for (_, ws), ps in zip(rows, parts, strict=True)
    ]
    # the deepest end: the most resamples named, or none named (more than allowed)
    deepest = max((p for _, p in hits), key=lambda p: (p.need == 0, p.need, -p.tail))
    names = list(dict.fromkeys(name for name, _ in hits))
    who = "; ".join(names[:4]) + (f"; and {len(names) - 4:,} more" if len(names) > 4 else "")
    fix = deepest.fix.replace("would read it", "would read them all")
    return shown, (
        f"{len(hits):,} intervals have an end beyond the {deepest.resamples:,} resamples "
        f"({who}): Student's t for their prompts asks for tails as deep as "
        f"{deepest.asked}, and the resamples read {deepest.reads} and no deeper, so "
        "those ends are extrapolated along a normal tail from the estimate through the "
        f"resamples' deepest quantile — {fix}; each interval's own tail: report.json's "
        "warnings"
    )


_BEYOND_ANYWHERE = re.compile(
    r"the (?P<level>[\d.]+%) interval's (?P<side>ends|low end|high end) lies? beyond the "
    r"(?P<resamples>[\d,]+) resamples \(Student's t for [\d,]+ prompts, bias-corrected, "
    r"asks them for a tail of (?P<tail>[0-9.]+(?:e[+-]\d+)?);.*? — "
    r"(?P<fix>.*?(?:would read it|add prompts))(?=; |$)"
)


def shorten_extrapolated(text: str) -> str:
    """``text`` (a tidy table's warnings, joined by ``"; "``) with each
    :func:`~recuse.metrics.bootstrap.beyond_warning` in it said in a line's words: the
    level, the end, the tail asked and the estimator's advice (the CSV and report.json
    keep the whole).

    >>> from recuse.metrics.bootstrap import beyond_warning
    >>> w = beyond_warning(1.6e-3, resamples=2000, clusters=75, level=0.99, side="low end")
    >>> shorten_extrapolated("low n; " + w).split(": ")  # doctest: +NORMALIZE_WHITESPACE
    ['low n; 99% low end extrapolated past the 2,000 resamples (tail 1.6e-03)',
     'add prompts, or resamples', '3,125 (--n-boot) would read it']
    """
    return _BEYOND_ANYWHERE.sub(
        lambda m: (
            f"{m['level']} {m['side']} extrapolated past the {m['resamples']} resamples "
            f"(tail {m['tail']}): {m['fix']}"
        ),
        text,
    )


def gate_caveat(text: str) -> str:
    """A finding's warning as ``recuse gate`` prints it under the finding's line: an
    end beyond the resamples in a line's words (:func:`shorten_extrapolated`), its
    advice naming the command that takes ``--n-boot`` (the gate reads a written
    report; the audit draws the resamples).

    >>> from recuse.metrics.bootstrap import beyond_warning
    >>> w = beyond_warning(1.6e-3, resamples=2000, clusters=75, level=0.99, side="low end")
    >>> gate_caveat(w).split(": ", 1)[1]
    'add prompts, or resamples: 3,125 (recuse audit --n-boot) would read it'
    """
    short = shorten_extrapolated(text)
    if short == text:
        return text
    return short.replace("(--n-boot)", "(recuse audit --n-boot)")
