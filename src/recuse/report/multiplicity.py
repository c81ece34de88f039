"""False-discovery control across the summary matrix's tests (Benjamini–Hochberg).

The summary flags many judge × bias × dataset cells at once; at a 10% level, about one
cell in ten would be flagged by chance among biases that are absent. The family is
every headline finding of a bias (quality scores such as agreement are no tests of a
bias) that carries a p-value; each gets the Benjamini–Hochberg adjusted value
``q_(i) = min_{k ≥ i} p_(k) · m / k`` (statsmodels' ``fdr_bh``) and is flagged when
``q ≤ 1 − level``. Raw intervals stay as they are; a finding without a p-value keeps
its interval-based flag and is named in the note.

A pooled estimate (``bias.pooled``: one test shared by a group of judges, e.g. a
family's λ shown in each member's row) is one test: it enters the family once and its
adjusted value goes to every row that shows it. The "±X detectable" line of an
unflagged cell refers to the unadjusted test at the interval's level.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from statsmodels.stats.multitest import multipletests

from recuse.report.model import Finding, Section

__all__ = ["adjust_sections", "in_family"]


def in_family(f: Finding) -> bool:
    return f.headline and f.bias.flags and f.p_value is not None and np.isfinite(f.p_value)


def adjust_sections(
    sections: Sequence[Section], *, level: float, n_boot: int | None = None
) -> tuple[list[Section], str]:
    """The sections with ``q_value`` set on every finding of the family, and a note.

    With ``n_boot`` (the bootstrap's resamples), the note says when they are too few
    for the family (:func:`resolution_limit`; said only when a bootstrap p-value is in
    it), and so does each finding it leaves
    unflagged although its interval excludes no bias and its p-value is a bootstrap one
    (:attr:`~recuse.report.model.Finding.p_method`; a regression's Wald test has no
    such floor)."""
    members = [f for s in sections for f in s.findings if in_family(f)]
    outside = [
        f for s in sections for f in s.findings if f.headline and f.bias.flags and not in_family(f)
    ]
    if not members:
        return list(sections), ""
    tests: dict[tuple[object, ...], list[Finding]] = {}
    for f in members:
        tests.setdefault(_test_key(f), []).append(f)
    family = [group[0] for group in tests.values()]
    p = np.array([f.p_value for f in family], float)
    q = multipletests(p, alpha=1 - level, method="fdr_bh")[1]
    adjusted = {id(f): float(v) for group, v in zip(tests.values(), q, strict=True) for f in group}
    # the floor is a bootstrap p-value's: a family of Wald tests alone (a ratings
    # table's favoritism regression) gains nothing from more resamples
    bootstrap = any(f.p_method == "bootstrap" for f in members)
    limit = resolution_limit(n_boot, len(family), level) if n_boot and bootstrap else ""

    def adjust(f: Finding) -> Finding:
        if id(f) not in adjusted:
            return f
        q_value = adjusted[id(f)]
        unresolved = (
            limit
            and q_value > 1 - level
            and f.p_method == "bootstrap"  # a Wald test's p has no such floor
            and not f.ci_low <= f.null <= f.ci_high
        )
        warnings = (*f.warnings, f"not flagged: {limit}") if unresolved else f.warnings
        return replace(f, q_value=q_value, warnings=warnings)

    out = [replace(s, findings=tuple(adjust(f) for f in s.findings)) for s in sections]
    flagged = int((q <= 1 - level).sum())
    raw = int((p <= 1 - level).sum())
    note = (
        f"Multiple testing: Benjamini–Hochberg false-discovery control at q = {1 - level:.2f} "
        f"across the summary's {len(family)} tests (a pooled estimate shown for several judges "
        f"counts once); flags use the adjusted values ({flagged} "
        f"flagged; {raw} with raw p ≤ {1 - level:.2f}); intervals are not adjusted."
    )
    if limit:
        note += f" A large bias can go unflagged: {limit}."
    if outside:
        names = sorted({f.bias.title for f in outside})
        note += f" Without a p-value, flagged by their interval: {', '.join(names)}."
    return out, note


def resolution_limit(n_boot: int, tests: int, level: float) -> str:
    """Why ``n_boot`` resamples are too few for ``tests`` tests at ``level``, or "".

    A bootstrap p-value is at least ``2 / (B + 1)`` (:func:`recuse.metrics.bootstrap.
    p_value`), and Benjamini–Hochberg flags a bias that is the only one below the
    threshold when ``p ≤ (1 − level) / m``; so where ``2 / (B + 1)`` is above that, no
    lone bias is flagged however far its interval is from no bias. It is not, from
    ``B ≥ 2m / (1 − level) − 1`` resamples on.

    >>> for part in resolution_limit(100, 16, 0.9).split(", and "): print(part)
    with 100 resamples no bootstrap p-value is below 2/101 = 0.0198
    across 16 tests one bias alone needs p ≤ 0.0062 (0.10 / 16) to be flagged; rerun ...
    >>> resolution_limit(319, 16, 0.9), resolution_limit(318, 16, 0.9) != ""
    ('', True)
    """
    alpha = 1 - level
    floor, alone = 2 / (n_boot + 1), alpha / tests
    if floor <= alone * (1 + 1e-9):
        return ""
    need = math.ceil(2 * tests / alpha - 1 - 1e-9)
    return (
        f"with {n_boot} resamples no bootstrap p-value is below 2/{n_boot + 1} = {floor:.4f}, "
        f"and across {tests} tests one bias alone needs p ≤ {alone:.4f} ({alpha:.2f} / "
        f"{tests}) to be flagged; rerun with --n-boot {need} or more"
    )


def _test_key(f: Finding) -> tuple[object, ...]:
    """One test per finding; a pooled bias's rows of one estimate share a key."""
    if not f.bias.pooled:
        return ("finding", id(f))
    return (f.bias.key, f.dataset, f.detail, f.section, f.estimate, f.ci_low, f.ci_high,
            f.p_value)  # fmt: skip
