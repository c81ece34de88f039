"""Certification: on what share of the pairs can the judge's verdict be used with a
guaranteed agreement with humans?

For each target agreement ``t`` on a grid (0.50 to 0.99), the share of the judge's
labelled pairs certified at ``t``: with probability ``≥ 1 − δ`` (``δ = 1 − level`` of
the report), the judge agrees with humans at ``≥ t`` on future pairs whose confidence
reaches a threshold chosen by the fixed-sequence test (Jung, Brahman and Choi, "Trust
or Escalate", ICLR 2025) — the method of ``recuse certify``
(:mod:`recuse.mitigation.selective`, where the formulas are). Pairs holding the judge's
own answer, or its family's, get their own threshold and share of δ, so the curve of
the own-answer pairs is shown apart. Quality scores, not biases (``Bias.kind =
"quality"``): never flagged; 1 (every pair certified) is the best value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy.stats import beta

from recuse.analyses.base import (
    Analysis,
    Context,
    judged,
    needs_labelled_verdicts,
    slug,
    to_finding,
)
from recuse.biases.certification import CERTIFIED as CERTIFIED
from recuse.biases.certification import CERTIFIED_OWN as CERTIFIED_OWN
from recuse.biases.certification import HEADING
from recuse.data.inputs import Input
from recuse.errors import InputError
from recuse.metrics.calibration import gives_probabilities, stated_verdicts
from recuse.metrics.summary import PairwiseBias
from recuse.mitigation.selective import (
    CONFIDENCE_WORDS,
    CURVE_TARGETS,
    FIELDS,
    POOLED,
    UNCERTIFIED_BOUND,
    Items,
    Options,
    clustering_note,
    confidence_kind,
    coverage_curve,
    items_of,
    judge_rows,
)
from recuse.numbers import exact, share_percent, share_percent_beside
from recuse.report import figures as fig
from recuse.report.model import Table
from recuse.roster import Roster

__all__ = ["ANALYSIS", "CERTIFIED", "CERTIFIED_OWN", "FINDING_TARGETS", "coverage_interval"]

#: the targets at which the section states findings (the whole curve is in its tables)
FINDING_TARGETS: tuple[float, ...] = (0.80, 0.85, 0.90)
#: the targets of the table shown on the page (the CSV and report.json have every 0.01)
SHOWN_TARGETS: tuple[float, ...] = tuple(t for t in CURVE_TARGETS[::5] if t >= 0.6)
OWN = "own"

#: what the curve's columns hold (``Table.columns``: under the table on the page, and in
#: report.json), in ``recuse certify``'s words (:data:`~recuse.mitigation.selective.
#: FIELDS`) where the curve means the same. Its CSV held ``lower_bound`` 0.599 beside
#: ``n_kept`` 0 and an empty ``agreement``, a ``confidence`` that is a name, and a
#: ``certified`` pooled row with an empty ``threshold``, with no word on any of them
CURVE_COLUMNS: dict[str, str] = {
    "dataset": "the input",
    "judge": "the judge certified",
    "delta": f"{FIELDS['delta']}; 1 - the report's level, split among the strata",
    "confidence": "the name of the judge's confidence the threshold is on (the note "
    "under the table defines it), not a number",
    "target": FIELDS["target"],
    "stratum": "own, family or other: the pairs holding the judge's own answer, its "
    "family's against an outsider's, or neither, each certified apart; pooled: their sum",
    "n_labelled": "pairs with a human preference (ties left out) in the stratum",
    "n_kept": "of those, the pairs whose confidence reaches the stratum's threshold",
    "n_agree": FIELDS["n_agree"],
    "coverage": FIELDS["coverage"],
    "agreement": FIELDS["agreement"],
    "threshold": "keep a verdict when the judge's confidence is at least this; empty: "
    "nothing certified in the stratum, or the pooled row (each stratum has its own)",
    "lower_bound": "one-sided Clopper–Pearson lower bound of that agreement at 1 - the "
    f"stratum's share of delta; the guarantee holds where it is at least target; "
    f"{UNCERTIFIED_BOUND}; empty: no test, or the pooled row",
    "certified": "whether any pair is kept at this target (pooled: in some stratum)",
    "heldout_kept": "pairs kept when each of 5 prompt folds is decided by thresholds "
    "certified on the other folds (at every 0.05 of target; empty at the others)",
    "heldout_coverage": "heldout_kept / n_labelled (at every 0.05 of target)",
    "heldout_agreement": FIELDS["heldout_agreement"],
    "coverage_low": "the low end of coverage's Clopper–Pearson interval at the report's "
    "level, the threshold taken as fixed",
    "coverage_high": "its high end",
}


#: the shown table's columns the page writes as percentages, in the findings' unit:
#: their "28.5%" coverage and "held out: 21.0% kept, 90.5% agree" (and ``recuse
#: certify``'s, the gate's); the agreements read 0.930 and 0.905 on the page beside them,
#: and the lower bound of an agreement written 93.0% read 0.599 beside it
SHOWN_PERCENT: tuple[str, ...] = (
    "target",
    "coverage",
    "coverage_low",
    "coverage_high",
    "agreement",
    "lower_bound",
    "heldout_coverage",
    "heldout_agreement",
)
_AS_PERCENT = (
    "; written as a percentage on the page, as the findings write it (the CSV and "
    "report.json keep the share)"
)


def shown_columns(curve: str) -> dict[str, str]:
    """The words of the table on the page: :data:`CURVE_COLUMNS`, its ``stratum`` saying
    the page shows the own and pooled rows only and where the others are (the table
    ``curve``), and each of :data:`SHOWN_PERCENT` that the page writes it as a
    percentage (the target too: "0.800" read beside a lower bound of "59.9%"). Its
    stratum read "own, family or
    other ... pooled: their sum" above own and pooled rows alone: gpt-3.5-turbo's pooled
    row kept 57 pairs on llmbar-mtbench beside an own row that kept none, the 57 being
    its other stratum's, in no row."""
    return {
        **CURVE_COLUMNS,
        **{c: CURVE_COLUMNS[c] + _AS_PERCENT for c in SHOWN_PERCENT},
        "target": CURVE_COLUMNS["target"] + _AS_PERCENT + ", as the agreements and the "
        "lower bound it is read against (--certified takes it as a share: 0.85@0.6 for "
        "85%)",
        "stratum": "own or pooled: the pairs holding the judge's own answer, certified "
        "apart, or all its labelled pairs (the sum of its own, family and other strata, "
        f"each certified apart); the family and other rows are in the table {curve} "
        "(its CSV and report.json)",
    }


def coverage_interval(
    kept: NDArray[np.float64] | Sequence[float],
    n: NDArray[np.float64] | Sequence[float],
    *,
    level: float,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Two-sided ``level`` Clopper–Pearson interval of a share ``kept / n``::

        low  = Beta⁻¹(α/2; k, n − k + 1)      (0 when k = 0)
        high = Beta⁻¹(1 − α/2; k + 1, n − k)  (1 when k = n),   α = 1 − level

    For the certified coverage it takes the certified threshold as fixed: the share of
    future pairs that threshold keeps (the threshold's own randomness is not in it).

    >>> lo, hi = coverage_interval([0], [20], level=0.9)
    >>> float(lo[0]), round(float(hi[0]), 4)  # 1 - 0.05 ** (1 / 20)
    (0.0, 0.1391)
    """
    k = np.asarray(kept, dtype=float)
    m = np.asarray(n, dtype=float)
    a = 1 - level
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = beta.ppf(a / 2, np.maximum(k, 1e-300), m - k + 1)
        hi = beta.ppf(1 - a / 2, k + 1, np.maximum(m - k, 1e-300))
    lo = np.where(k > 0, lo, 0.0)
    hi = np.where(k < m, hi, 1.0)
    return np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)


def needs_confidence(frame: pd.DataFrame, roster: Roster) -> str | None:
    """Labelled verdicts with a confidence to threshold: probabilities, or both orders."""
    reason = needs_labelled_verdicts(frame, roster)
    if reason:
        return reason
    rows = judged(frame)
    rows = rows[rows["human"].notna() & rows["p_a"].notna()]
    both = rows["p_a_first"].notna() & rows["p_a_second"].notna()
    if not gives_probabilities(stated_verdicts(rows)) and not bool(both.any()):
        return (
            "no confidence to certify with: the labelled verdicts are picks judged in one "
            "order (certification needs probabilities p_a, or both orders for order "
            "consistency)"
        )
    return None


def _curve(
    ctx: Context, inp: Input, frame: pd.DataFrame, judge: str
) -> tuple[pd.DataFrame, Items] | None:
    """The judge's coverage curve (with its words) and its items, or None with a skip
    saying why."""
    o = ctx.options
    try:
        rows = judge_rows(frame, judge)
    except InputError as exc:
        ctx.skip(ANALYSIS, exc.reason, inp.name, judge, headline=False, bias=CERTIFIED)
        return None
    kind = confidence_kind(rows) if len(rows) else "single verdict"
    if kind == "single verdict":
        why = "one pick per pair (one order, no probabilities): no confidence to threshold"
        ctx.skip(ANALYSIS, why, inp.name, judge, headline=False, bias=CERTIFIED)
        return None
    so = Options(delta=round(1 - o.level, 12), seed=o.seed, self_scope=o.self_scope)
    items = items_of(rows, ctx.roster, so)
    if not items.labelled.any():
        ctx.skip(ANALYSIS, "no pair with a human preference (ties left out)", inp.name, judge,
                 headline=False, bias=CERTIFIED)  # fmt: skip
        return None
    curve = coverage_curve(items, so)
    lo, hi = coverage_interval(
        curve["n_kept"].to_numpy(float), curve["n_labelled"].to_numpy(float), level=o.level
    )
    curve.insert(0, "judge", judge)
    curve.insert(0, "dataset", inp.name)
    curve.insert(2, "delta", so.delta)
    curve.insert(3, "confidence", kind)
    return curve.assign(coverage_low=lo, coverage_high=hi), items


def _findings(ctx: Context, inp: Input, curve: pd.DataFrame, items: Items) -> None:
    o = ctx.options
    judge = str(curve["judge"].iloc[0])
    delta = float(curve["delta"].iloc[0])
    for t in FINDING_TARGETS:
        at = curve[np.isclose(curve["target"], t)]
        for stratum, bias in ((POOLED, CERTIFIED), (OWN, CERTIFIED_OWN)):
            row = at[at["stratum"] == stratum]
            if not len(row) or int(row["n_labelled"].iloc[0]) < 1:
                continue
            r = row.iloc[0]
            # the certified thresholds this finding's kept pairs are kept at (its stratum's
            # alone for the own-answer finding)
            cuts = {
                str(s): (float(lam) if lam is not None and math.isfinite(float(lam)) else None)
                for s, lam in zip(at["stratum"], at["threshold"], strict=True)
                if s != POOLED and (stratum == POOLED or s == stratum)
            }
            clustered = clustering_note(judge, items, cuts)
            ctx.add(ANALYSIS, to_finding(
                ANALYSIS, bias, judge=judge, dataset=inp.name, estimate=float(r["coverage"]),
                ci_low=float(r["coverage_low"]), ci_high=float(r["coverage_high"]),
                n=int(r["n_labelled"]), level=o.level, detail=_detail(at, t, stratum),
                scope=f"target agreement ≥ {exact(t, percent=True)}",
                method=f"fixed-sequence test of agreement ≥ {exact(t, percent=True)} at "
                f"δ = {delta:g} (split "
                "over the own/family/other pairs), Clopper–Pearson bounds; interval: "
                "Clopper–Pearson of the certified share, the threshold taken as fixed",
                warnings=[clustered.removeprefix(f"{judge}: ")] if clustered else [],
            ))  # fmt: skip


def _detail(at: pd.DataFrame, t: float, stratum: str) -> str:
    """``target agreement ≥ 85%``, the thresholds and the held-out check in words: the
    target a percentage, as the held-out shares and agreement beside it are (it read
    "target agreement ≥ 0.80; … held out: 21.0% kept, 90.5% agree", a share and a
    percentage of one quantity in one sentence)."""
    rows = at if stratum == POOLED else at[at["stratum"] == stratum]
    cuts = [
        f"{s} c ≥ {exact(float(lam))}"
        for s, lam in zip(rows["stratum"], rows["threshold"], strict=True)
        if s != POOLED and lam is not None and math.isfinite(float(lam))
    ]
    r = at[at["stratum"] == stratum].iloc[0]
    held = ""
    if math.isfinite(r["heldout_coverage"]):
        agree = r["heldout_agreement"]
        held = f"; held out: {share_percent(r['heldout_coverage'])} kept" + (
            f", {share_percent_beside(agree, t)} agree" if math.isfinite(agree) else ""
        )
    where = "own-answer pairs, " if stratum == OWN else ""
    kept = ", ".join(cuts) if cuts else "nothing certified"
    return f"target agreement ≥ {exact(t, percent=True)}; {where}{kept}{held}"


def _figure(ctx: Context, inp: Input, curve: pd.DataFrame) -> None:
    judge = str(curve["judge"].iloc[0])
    pooled = curve[curve["stratum"] == POOLED]
    own = curve[curve["stratum"] == OWN]
    series = [fig.Series("all pairs (calibration)", pooled["coverage"].tolist(),
                         pooled["coverage_low"].tolist(), pooled["coverage_high"].tolist()),
              fig.Series("all pairs, held out", pooled["heldout_coverage"].tolist())]  # fmt: skip
    if len(own) and int(own["n_labelled"].iloc[0]) > 0:
        series.append(fig.Series("own-answer pairs", own["coverage"].tolist()))
    delta = float(curve["delta"].iloc[0])
    ctx.part(ANALYSIS).figures.append(
        fig.curves(
            pooled["target"].tolist(), series, id=slug("certification", inp.name, judge),
            title=f"Certified coverage — {judge} — {inp.name}",
            xlabel="guaranteed agreement with humans (target)",
            ylabel="share of labelled pairs certified",
            caption=f"Each point is its own certification at δ = {delta:g}: with probability "
            "≥ 1 − δ the kept pairs agree with humans at ≥ the target. Band: Clopper–Pearson "
            "interval of the share; held out (every 0.05): each prompt fold decided with "
            "thresholds certified on the others. 1 = every pair certified.",
            format=ctx.options.figure_format,
        )
    )  # fmt: skip


def _build(ctx: Context, inp: Input, shared: PairwiseBias | None) -> None:
    frame = judged(inp.frame).reset_index(drop=True)
    curves = []
    for judge in sorted(frame["judge"].astype(str).unique()):
        made = _curve(ctx, inp, frame, judge)
        if made is None:
            continue
        curve, items = made
        curves.append(curve)
        _findings(ctx, inp, curve, items)
        _figure(ctx, inp, curve)
    if not curves:
        return
    table = pd.concat(curves, ignore_index=True)
    shown = table[table["target"].round(2).isin(SHOWN_TARGETS)
                  & table["stratum"].isin([POOLED, OWN])]  # fmt: skip
    part = ctx.part(ANALYSIS)
    title = f"Certified coverage by target agreement — {inp.name}"
    # the shares of pairs kept and the agreements, as percentages, as the findings and
    # the gate write them (an agreement on its own side of its row's target, a share)
    against = {"agreement": "target", "lower_bound": "target", "heldout_agreement": "target"}
    curve_name = slug(ANALYSIS.id, "curve", inp.name)
    part.tables.append(Table(slug(ANALYSIS.id, inp.name), title, shown, percent=SHOWN_PERCENT,
                             columns=shown_columns(curve_name), beside=against))  # fmt: skip
    part.tables.append(Table(curve_name,
                             f"Certified coverage, every target and stratum — {inp.name}",
                             table, show=False, columns=CURVE_COLUMNS))  # fmt: skip
    kinds = sorted(set(table["confidence"]))
    part.notes.append(
        "Confidence: " + "; ".join(CONFIDENCE_WORDS[k] for k in kinds) + ". The "
        "guarantee assumes the labelled pairs and the future pairs are exchangeable (same "
        "prompts, models and judge). Each target is its own certification: read the "
        "target you need, not the best of several. `recuse certify` writes the thresholds "
        "for `recuse certify apply`; `recuse gate --certified T@C` asks for a certified "
        "agreement T on at least a share C of the pairs."
    )


ANALYSIS = Analysis(
    heading=HEADING,
    intro=(
        "On what share of the pairs can the judge's verdict be used with a guaranteed "
        "agreement with humans? A quality score, not a bias. For each target agreement, "
        "the share of labelled pairs certified: with probability ≥ 1 − δ (δ = 1 − the "
        "report's level) the judge agrees with humans at ≥ the target on pairs whose "
        "confidence reaches a threshold picked by a fixed-sequence test (Trust or "
        "Escalate, ICLR 2025). Pairs with the judge's own answer get their own threshold "
        "and are shown apart. 1 (100%) = every pair certified."
    ),
    requires="pairs with human labels and judge verdicts with a confidence: probabilities "
    "p_a, or both orders (order consistency)",
    needs=needs_confidence,
    build=_build,
)
