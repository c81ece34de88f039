"""One note for the intervals of a table whose ends lie beyond the resamples.

An interval expanded for its prompts' number (Student's t) asks the resamples for a
tail deeper than they read at 99%: each such result carries which ends were
extrapolated and how far as data (:class:`~recuse.bootstrap_rules.Extrapolation`,
``MetricResult.extrapolated``, report.json's ``extrapolated``) and its warning in words
(:func:`recuse.metrics.bootstrap.beyond_warning`), with its own tail and the resamples
that would read it. Read as a person reads a table, the same 400 characters under
every agreement, verbosity and preference row (29 in one 99% audit of LLMBar's MT-Bench
set) bury the warnings that differ. :func:`fold_extrapolated` keeps one short tag on
each row and says the rest once, from the rows' records: how many intervals, which,
which ends, the deepest tail asked and what reads it
(:attr:`~recuse.bootstrap_rules.Extrapolation.need`, the estimator's own advice).
"""

from __future__ import annotations

from collections.abc import Sequence

from recuse.bootstrap_rules import Extrapolation, beyond_fix

__all__ = [
    "EXTRAPOLATED_TAG",
    "fold_extrapolated",
    "gate_caveat",
    "short_warnings",
    "warning_head",
]

#: what a row shows in place of its extrapolation warning once the note says it
EXTRAPOLATED_TAG = "an end extrapolated past the resamples (note below)"


def _is_its(warning: str, far: Extrapolation | None) -> bool:
    """Whether ``warning`` is the one ``far`` says (its :meth:`~Extrapolation.warning`)."""
    return far is not None and warning == far.warning()


def short_warnings(warnings: Sequence[str], far: Extrapolation | None) -> tuple[str, ...]:
    """``warnings`` with the one of ``far`` (a result's or finding's ``extrapolated``)
    in a line's words (:meth:`~recuse.bootstrap_rules.Extrapolation.short`): the page's
    verdict list and its estimates tables. Without ``far`` (none extrapolated, or a
    report written before the field) they are as written.

    >>> x = Extrapolation(low=False, high=True, tail=1.6e-3, resamples=2000, clusters=75,
    ...                   level=0.9)
    >>> short_warnings(["low n", x.warning()], x)[1][:48]
    '90% high end extrapolated past the 2,000 resampl'
    """
    return tuple(far.short() if far and _is_its(w, far) else w for w in warnings)


def warning_head(warning: str, far: Extrapolation | None) -> str | None:
    """A matrix cell's tag of the warning of ``far`` ("99% low end extrapolated"), None
    for any other warning."""
    if far is None or not _is_its(warning, far):
        return None
    from recuse.numbers import percent

    return f"{percent(far.level)} {far.side} extrapolated"


def fold_extrapolated(
    rows: Sequence[tuple[str, Sequence[str], Extrapolation | None]], *, level: float
) -> tuple[list[tuple[str, ...]], str]:
    """Each row's warnings with its extrapolation warning replaced by
    :data:`EXTRAPOLATED_TAG`, and the one note that says them all, where two rows or
    more extrapolated an end (a lone one stays whole; no note: ``""``). ``rows`` are
    ``(name, warnings, extrapolated)``, the name saying which row (judge and metric),
    ``extrapolated`` the row's record (``Finding.extrapolated``; None: no end, or a
    report written before the field, whose warnings stay whole); ``level`` the
    intervals' (records of another level are left whole).

    The note names the rows (four, then how many more), which ends (low, high or both:
    how many of each), the resamples, the deepest tail asked and the advice for that end
    (:meth:`~recuse.bootstrap_rules.Extrapolation.fix`): the resamples that read the
    deepest end read every other, the most any record names.

    >>> x = [Extrapolation(low=True, high=False, tail=t, resamples=2000, clusters=75,
    ...                    level=0.99) for t in (1.6e-3, 1.57e-3)]
    >>> rows = [("a", [x[0].warning()], x[0]), ("b", ["low n", x[1].warning()], x[1])]
    >>> shown, note = fold_extrapolated(rows, level=0.99)
    >>> shown  # doctest: +NORMALIZE_WHITESPACE
    [('an end extrapolated past the resamples (note below)',),
     ('low n', 'an end extrapolated past the resamples (note below)')]
    >>> note[:68]
    '2 intervals have an end beyond the 2,000 resamples (a; b; low ends: 2'
    >>> note.split(" — ")[-1].split(";")[0]  # 5 / 1.57e-3, not 5 / 1.6e-3 (3,125)
    'add prompts, or resamples: 3,185 (--n-boot) would read them all'
    """
    hits = [
        (name, far)
        for name, ws, far in rows
        if far is not None and far.level == level and any(_is_its(w, far) for w in ws)
    ]
    many = {far.resamples for _, far in hits}
    if len(hits) < 2 or len(many) != 1:  # one, or resamples that differ: said whole
        return [tuple(ws) for _, ws, _ in rows], ""
    said = {id(far) for _, far in hits}
    shown = [
        tuple(EXTRAPOLATED_TAG if id(far) in said and _is_its(w, far) else w for w in ws)
        for _, ws, far in rows
    ]
    # the deepest end: the most resamples named, or none named (more than allowed)
    deepest = min((far for _, far in hits), key=lambda far: far.tail)
    names = list(dict.fromkeys(name for name, _ in hits))
    who = "; ".join(names[:4]) + (f"; and {len(names) - 4:,} more" if len(names) > 4 else "")
    # the advice of many ends: "them" (the deepest record's alone said "it")
    fix = beyond_fix(deepest.level, resamples=deepest.resamples, tail=deepest.tail, both=True)
    fix = fix.replace("would read them", "would read them all")
    return shown, (
        f"{len(hits):,} intervals have an end beyond the {deepest.resamples:,} resamples "
        f"({who}; {_ends([far for _, far in hits])}): Student's t for their prompts asks "
        f"for tails as deep as {deepest.asked}, and the resamples read "
        f"{resolved_words(deepest.resamples)} and no deeper, so those ends are "
        "extrapolated along a normal tail from the estimate through the resamples' "
        f"deepest quantile — {fix}; each interval's own ends and tail: report.json's "
        "extrapolated"
    )


def _ends(fars: Sequence[Extrapolation]) -> str:
    """How many intervals extrapolated which ends: "low ends: 2, high ends: 1, both
    ends: 1" (those that occur)."""
    sides = [far.side for far in fars]
    counts = {
        "low ends": sides.count("low end"),
        "high ends": sides.count("high end"),
        "both ends": sides.count("ends"),
    }
    return ", ".join(f"{k}: {v:,}" for k, v in counts.items() if v)


def resolved_words(resamples: int) -> str:
    """The deepest tail ``resamples`` read, as the warning writes it (0.0025)."""
    from recuse.bootstrap_rules import resolved_tail

    return f"{resolved_tail(resamples):.3g}"


def gate_caveat(text: str, far: Extrapolation | None) -> str:
    """A finding's warning as ``recuse gate`` prints it under the finding's line: the
    one of its ``extrapolated`` record ``far`` in a line's words
    (:meth:`~recuse.bootstrap_rules.Extrapolation.short`), its advice naming the
    command that takes ``--n-boot`` (the gate reads a written report; the audit draws
    the resamples); any other (and every one of a report written before the record) as
    written.

    >>> x = Extrapolation(low=True, high=False, tail=1.6e-3, resamples=2000, clusters=75,
    ...                   level=0.99)
    >>> gate_caveat(x.warning(), x).split(": ", 1)[1]
    'add prompts, or resamples: 3,125 (recuse audit --n-boot) would read it'
    >>> gate_caveat("low n", x)
    'low n'
    """
    if far is None or not _is_its(text, far):
        return text
    return far.short().replace("(--n-boot)", "(recuse audit --n-boot)")
