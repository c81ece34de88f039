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

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from statsmodels.stats.multitest import multipletests

from recuse.report.model import Finding, Section

__all__ = ["adjust_sections", "in_family"]


def in_family(f: Finding) -> bool:
    return f.headline and f.bias.flags and f.p_value is not None and np.isfinite(f.p_value)


def adjust_sections(sections: Sequence[Section], *, level: float) -> tuple[list[Section], str]:
    """The sections with ``q_value`` set on every finding of the family, and a note."""
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
    out = [
        replace(
            s,
            findings=tuple(
                replace(f, q_value=adjusted[id(f)]) if id(f) in adjusted else f for f in s.findings
            ),
        )
        for s in sections
    ]
    flagged = int((q <= 1 - level).sum())
    raw = int((p <= 1 - level).sum())
    note = (
        f"Multiple testing: Benjamini–Hochberg false-discovery control at q = {1 - level:.2f} "
        f"across the summary's {len(family)} tests (a pooled estimate shown for several judges "
        f"counts once); flags use the adjusted values ({flagged} "
        f"flagged; {raw} with raw p ≤ {1 - level:.2f}); intervals are not adjusted."
    )
    if outside:
        names = sorted({f.bias.title for f in outside})
        note += f" Without a p-value, flagged by their interval: {', '.join(names)}."
    return out, note


def _test_key(f: Finding) -> tuple[object, ...]:
    """One test per finding; a pooled bias's rows of one estimate share a key."""
    if not f.bias.pooled:
        return ("finding", id(f))
    return (f.bias.key, f.dataset, f.detail, f.section, f.estimate, f.ci_low, f.ci_high,
            f.p_value)  # fmt: skip
