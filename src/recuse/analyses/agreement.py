"""Agreement with the reference: how often the judge says what the humans say.

Quality scores, not biases (``Bias.kind = "quality"``): they are never flagged, and
their ``null`` is chance agreement. Statistics: :mod:`recuse.metrics.agreement`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pandas as pd

from recuse.analyses.base import (
    Analysis,
    AuditOptions,
    Context,
    bias_keys,
    estimate_columns,
    from_result,
    judged,
    needs_verdicts,
    slug,
    table_row,
    warnings_texts,
)
from recuse.biases.agreement import ACCURACY as ACCURACY
from recuse.biases.agreement import ALPHA as ALPHA
from recuse.biases.agreement import HEADING
from recuse.biases.agreement import KAPPA as KAPPA
from recuse.data.inputs import Input
from recuse.metrics.agreement import accuracy_spec, alpha_spec, alpha_statistic, kappa_spec
from recuse.metrics.estimate import MetricSpec, clusters_of, run_specs
from recuse.metrics.result import MetricResult, Skipped
from recuse.metrics.summary import PairwiseBias
from recuse.metrics.verdicts import judge_codes
from recuse.report.model import Table, all_judges_label
from recuse.roster import Roster


def needs_labels(frame: pd.DataFrame, roster: Roster) -> str | None:
    """Verdicts and human labels on the same rows."""
    reason = needs_verdicts(frame, roster)
    if reason:
        return reason
    rows = judged(frame)
    if not (rows["human"].notna() & rows["p_a"].notna()).any():
        return "no row has both a judge verdict and a human label"
    return None


def run_boot(
    specs: Sequence[MetricSpec], clusters: pd.Series, o: AuditOptions
) -> tuple[list[MetricResult], list[Skipped]]:
    """The specs bootstrapped together with the audit's level, resamples, seed and min_n."""
    return run_specs(specs, clusters, boot=o.resampling, min_n=o.min_n)


def _build(ctx: Context, inp: Input, shared: PairwiseBias | None) -> None:
    o = ctx.options
    # every judge's rows, --judge or not: their prompts are the ones resampled, so the
    # judges chosen read as in the whole audit (o1-mini on judgebench, --judge alone:
    # accuracy [0.741, 0.801] where the whole audit read [0.741, 0.800])
    rows = judged(inp.every_judge).reset_index(drop=True)
    chosen = sorted({str(j) for j in judged(inp.frame)["judge"]})
    codes, labels = judge_codes(rows, chosen or None)
    specs = [
        accuracy_spec(rows, codes, labels),
        kappa_spec(rows, codes, labels, weights="linear"),
        kappa_spec(rows, codes, labels, weights="none"),
    ]
    results, skipped = run_boot(specs, clusters_of(rows), o)
    by_metric = {"agreement_accuracy": ACCURACY, "agreement_kappa": KAPPA}
    for r in results:
        if r.metric in by_metric:
            ctx.add(ANALYSIS, from_result(ANALYSIS, by_metric[r.metric], r, dataset=inp.name))
    for s in skipped:
        if s.metric in by_metric:
            bias = by_metric[s.metric]
            ctx.skip(ANALYSIS, s.reason, inp.name, str(s.judge or ""),
                     headline=bias.headline, bias=bias, metric=s.metric)  # fmt: skip
    if len(labels) >= 2:
        chosen_rows = judged(inp.frame).reset_index(drop=True)  # the panel: the judges chosen
        alphas = []
        for level in ("ordinal", "nominal"):
            stat, clusters, n_judges = alpha_statistic(chosen_rows, level=level)
            if len(clusters):
                alphas.append(alpha_spec(stat, n_judges, level))
        got, missed = run_boot(alphas, clusters, o) if alphas else ([], [])
        panel = all_judges_label(len(labels))  # one estimate for the panel of judges
        for r in got:
            r = replace(r, judge=panel)
            results.append(r)
            if r.metric == "agreement_alpha_ordinal":
                ctx.add(ANALYSIS, from_result(ANALYSIS, ALPHA, r, dataset=inp.name))
        for s in missed:
            ctx.skip(ANALYSIS, s.reason, inp.name, headline=False, bias=ALPHA, metric=s.metric)
        if not alphas:
            ctx.skip(ANALYSIS, "Krippendorff's alpha: no item has verdicts of two judges",
                     inp.name, headline=False, bias=ALPHA)  # fmt: skip
    if results:
        keys = bias_keys({**by_metric, "agreement_alpha_ordinal": ALPHA})
        frame = pd.DataFrame(
            [table_row(r, inp.name, keys.get(r.metric, "")) for r in results]
        ).drop(columns=["components", "method", "n_of"])
        ctx.part(ANALYSIS).tables.append(
            Table(
                slug(ANALYSIS.id, inp.name),
                f"Agreement estimates — {inp.name}",
                frame,
                columns=estimate_columns(frame),
                texts=warnings_texts(results),
            )
        )


ANALYSIS = Analysis(
    heading=HEADING,
    intro=(
        "How often does the judge agree with the human label? A quality score, not a bias. "
        "Per pair the judge's verdict is the sign of the sum of its per-order picks (a, b "
        "or tie from p above, below or at 0.5): both orders agree → that pick; a flip "
        "across orders → tie. Accuracy: share of pairs with a human preference on which "
        "the verdict matches (a tie or a flip counts half; human ties left out); 0.5 = "
        "chance. Cohen's kappa (linear weights, b < tie < a, human ties kept as tie) and, "
        "with several judges, Krippendorff's alpha among them (ordinal): 0 = chance. The "
        "table adds unweighted κ and nominal α, which count a tie against a pick as far "
        "apart as a against b (the linear κ counts it half, the ordinal α nearer)."
    ),
    requires="pairs with judge verdicts and human labels (alpha: two or more judges)",
    needs=needs_labels,
    build=_build,
)
