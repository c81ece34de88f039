"""False-discovery control across the summary matrix's tests (Benjamini–Hochberg).

The summary flags many judge × bias × dataset cells at once; at a 10% level, about one
cell in ten would be flagged by chance among biases that are absent. The family is
every headline finding of a bias (quality scores such as agreement are no tests of a
bias, nor is a value fixed by construction) that carries a p-value; each gets the
Benjamini–Hochberg adjusted value ``q_(i) = min_{k ≥ i} p_(k) · m / k``
(statsmodels' ``fdr_bh``) and is flagged when ``q ≤ 1 − level``. Raw intervals stay
as they are; a finding without a p-value keeps its interval-based flag and is named in
the note.

A pooled estimate (``bias.pooled``: one test shared by a group of judges, e.g. a
family's λ shown in each member's row) is one test: it enters the family once and its
adjusted value goes to every row that shows it. The "±X detectable" line of an
unflagged cell refers to the unadjusted test at the interval's level, and is shown only
where that test found nothing, the raw interval holding no bias
(:attr:`~recuse.report.model.Finding.shows_detectable`): a cell the adjustment
unflagged shows its q instead (:attr:`~recuse.report.model.Finding.adjustment_note`),
its raw interval excluding no bias.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from statsmodels.stats.multitest import multipletests

from recuse.numbers import complement, counted
from recuse.report.model import Finding, Section, estimate_key, flag_threshold

__all__ = ["adjust_sections", "in_family"]


def in_family(f: Finding) -> bool:
    """A headline test of a bias with a p-value; a value fixed by construction
    (:attr:`Finding.fixed`) is no test, and left out: counted with p = 1 it would raise
    every other test's q (by m / (m − k) for k of them). An order-blind judge's position
    rate (a reward model's) is a test: its interval is the one its prompts allow, since
    the data cannot tell it from a judge that sees the order."""
    return (
        f.headline
        and f.bias.flags
        and not f.fixed
        and f.p_value is not None
        and bool(np.isfinite(f.p_value))
    )


def adjust_sections(
    sections: Sequence[Section], *, level: float, n_boot: int | None = None
) -> tuple[list[Section], str]:
    """The sections with ``q_value`` set on every finding of the family, and a note.

    With ``n_boot`` (the bootstrap's resamples asked for), the note says when the
    resamples kept are too few for the family (:func:`resolution_limit`, over the fewest
    any bootstrap p-value of the family kept; said only when one is in it), and so does
    each finding it leaves unflagged although its interval excludes no bias and its
    p-value is a bootstrap one (:attr:`~recuse.report.model.Finding.p_method`; a
    regression's Wald test has no such floor), over the resamples it kept. A resample
    whose statistic is undefined is dropped (``MetricResult.n_boot_dropped``), so the
    count kept, the one ``Finding.p_floor`` is ``2/(B+1)`` of, can be below ``n_boot``."""
    members = [f for s in sections for f in s.findings if in_family(f)]
    headline = [f for s in sections for f in s.findings if f.headline and f.bias.flags]
    outside = [f for f in headline if not in_family(f) and not f.fixed]
    fixed = [f for f in headline if f.fixed]
    if not members:
        return list(sections), ""
    tests: dict[tuple[object, ...], list[Finding]] = {}
    for f in members:
        tests.setdefault(estimate_key(f), []).append(f)
    family = [group[0] for group in tests.values()]
    p = np.array([f.p_value for f in family], float)
    q = multipletests(p, alpha=1 - level, method="fdr_bh")[1]
    adjusted = {id(f): float(v) for group, v in zip(tests.values(), q, strict=True) for f in group}
    # the floor is a bootstrap p-value's: a family of Wald tests alone (a ratings
    # table's favoritism regression) gains nothing from more resamples
    kept = {
        id(f): kept_resamples(f, n_boot) for f in members if n_boot and f.p_method == "bootstrap"
    }
    limit = (
        resolution_limit(min(kept.values()), len(family), level, asked=n_boot)
        if n_boot and kept
        else ""
    )

    def adjust(f: Finding) -> Finding:
        if id(f) not in adjusted:
            return f
        q_value = adjusted[id(f)]
        unresolved = (
            n_boot
            and id(f) in kept  # a Wald test's p has no such floor
            and q_value > flag_threshold(level)
            and f.excludes_null  # flagged before adjustment (its reading, not its ends)
        )
        own = resolution_limit(kept[id(f)], len(family), level, asked=n_boot) if unresolved else ""
        warnings = (*f.warnings, f"not flagged: {own}") if own else f.warnings
        return replace(f, q_value=q_value, warnings=warnings)

    out = [replace(s, findings=tuple(adjust(f) for f in s.findings)) for s in sections]
    # a test the adjustment keeps is flagged unless negligible, as the summary shows it
    kept_by_q = [
        replace(f, q_value=float(v))
        for f, v in zip(family, q, strict=True)
        if v <= flag_threshold(level)
    ]
    flagged = sum(f.flagged for f in kept_by_q)
    negligible = len(kept_by_q) - flagged
    also = (
        f", {negligible} more kept by the adjustment but negligible (not flagged)"
        if negligible
        else ""
    )
    raw = int((p <= flag_threshold(level)).sum())
    # 1 − level as typed: at two decimals a level of 0.999 read q = 0.00 and 0.975 q = 0.03
    q_level = complement(level, least=2)
    note = (
        f"Multiple testing: Benjamini–Hochberg false-discovery control at q = {q_level} "
        f"across the summary's {len(family)} tests (a pooled estimate shown for several judges "
        f"counts once); flags use the adjusted values ({flagged} "
        f"flagged{also}; {raw} with raw p ≤ {q_level}); intervals are not adjusted."
    )
    if limit:
        note += f" A large bias can go unflagged: {limit}."
    if outside:
        names = sorted({f.bias.title for f in outside})
        note += f" Without a p-value, flagged by their interval: {', '.join(names)}."
    if fixed:
        names = sorted({f.bias.title for f in fixed})
        note += (
            f" Not tests, so not in the family: {counted(len(fixed), 'value')} fixed by "
            f"construction ({', '.join(names)})."
        )
    return out, note


def kept_resamples(f: Finding, asked: int) -> int:
    """The resamples a bootstrap p-value was computed from: ``B`` of its floor
    ``p_floor = 2 / (B + 1)`` (:attr:`~recuse.report.model.Finding.p_floor`), or
    ``asked`` where the finding does not say.

    >>> from recuse.report.bias import RATE_DIFFERENCE, Bias
    >>> f = Finding(judge="j", bias=Bias(key="b", title="B", unit="u", positive="p",
    ...             negative="n", none="0", order=1, span=RATE_DIFFERENCE),
    ...             estimate=0.1, ci_low=0.0,
    ...             ci_high=0.2, n=5, level=0.9, method="m", p_value=0.5,
    ...             p_method="bootstrap", p_floor=2 / 319)
    >>> kept_resamples(f, 319), kept_resamples(replace(f, p_floor=None), 319)
    (318, 319)
    """
    if f.p_floor is None or not 0 < f.p_floor <= 1:
        return asked
    return round(2 / f.p_floor - 1)


def resolution_limit(n_boot: int, tests: int, level: float, *, asked: int | None = None) -> str:
    """Why ``n_boot`` kept resamples are too few for ``tests`` tests at ``level``, or "".

    A bootstrap p-value is at least ``2 / (B + 1)`` over its ``B`` kept resamples
    (:func:`recuse.metrics.bootstrap.p_value`), and Benjamini–Hochberg flags a bias
    that is the only one below the threshold when ``p ≤ (1 − level) / m``; so where
    ``2 / (B + 1)`` is above that, no lone bias is flagged however far its interval is
    from no bias. It is not, from ``B ≥ 2m / (1 − level) − 1`` kept resamples on.
    ``asked``: the resamples asked for, said beside the kept ones where they differ
    (a resample whose statistic is undefined is dropped), and scaled up by the share
    kept in the rerun advised. The two thresholds are printed with the decimals that
    tell them apart (4 at least).

    >>> for part in resolution_limit(100, 16, 0.9).split(", and "): print(part)
    with 100 resamples no bootstrap p-value is below 2/101 = 0.0198
    across 16 tests one bias alone needs p ≤ 0.0062 (0.10 / 16) to be flagged; rerun ...
    >>> resolution_limit(319, 16, 0.9), resolution_limit(318, 16, 0.9) != ""
    ('', True)
    >>> import re
    >>> for part in re.split(", |; ", resolution_limit(318, 16, 0.9, asked=319)): print(part)
    with 318 of the 319 resamples kept (the others gave no estimate)
    no bootstrap p-value is below 2/319 = 0.0063
    and across 16 tests one bias alone needs p ≤ 0.0062 (0.10 / 16) to be flagged
    rerun with --n-boot 321 or more (319 must be kept)
    >>> resolution_limit(100, 16, 0.975).split("(")[1].split(")")[0]
    '0.025 / 16'
    """
    alpha = 1 - level
    floor, alone = 2 / (n_boot + 1), alpha / tests
    if floor * tests <= flag_threshold(level):  # a lone bias's q at the floor, flagged
        return ""
    need = math.ceil(2 * tests / alpha - 1 - 1e-9)
    shown_alpha = complement(level, least=2)  # 0.10, 0.05, 0.025: not 0.03
    digits = next((d for d in range(4, 10) if f"{floor:.{d}f}" != f"{alone:.{d}f}"), 10)
    resamples, rerun = f"{n_boot} resamples", f"--n-boot {need} or more"
    if asked is not None and asked > n_boot:
        resamples = f"{n_boot} of the {asked} resamples kept (the others gave no estimate),"
        rerun = f"--n-boot {math.ceil(need * asked / n_boot)} or more ({need} must be kept)"
    return (
        f"with {resamples} no bootstrap p-value is below 2/{n_boot + 1} = {floor:.{digits}f}, "
        f"and across {tests} tests one bias alone needs p ≤ {alone:.{digits}f} ({shown_alpha} / "
        f"{tests}) to be flagged; rerun with {rerun}"
    )
