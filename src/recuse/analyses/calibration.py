"""Calibration: can the judge's stated probabilities be trusted, and after recalibration?

Quality scores, not biases (``Bias.kind = "quality"``). Statistics and the
cross-fitted recalibration: :mod:`recuse.metrics.calibration`.
"""

from __future__ import annotations

import pandas as pd

from recuse.analyses.agreement import needs_labels, run_boot
from recuse.analyses.base import (
    Analysis,
    Context,
    estimate_columns,
    from_result,
    judged,
    slug,
    table_row,
    warnings_texts,
)
from recuse.biases.calibration import BRIER as BRIER
from recuse.biases.calibration import BRIER_ISOTONIC as BRIER_ISOTONIC
from recuse.biases.calibration import BRIER_PLATT as BRIER_PLATT
from recuse.biases.calibration import ECE as ECE
from recuse.biases.calibration import ECE_ISOTONIC as ECE_ISOTONIC
from recuse.biases.calibration import ECE_PLATT as ECE_PLATT
from recuse.biases.calibration import HEADING
from recuse.biases.calibration import ISO as ISO
from recuse.biases.calibration import PLATT as PLATT
from recuse.biases.calibration import RAW as RAW
from recuse.data.inputs import Input
from recuse.errors import EstimationError
from recuse.metrics.calibration import (
    BINS,
    FOLDS,
    Recalibration,
    brier_spec,
    ece_results,
    gives_probabilities,
    outcomes,
    recalibrate,
    reliability_table,
    stated_verdicts,
)
from recuse.metrics.estimate import MetricSpec, clusters_of
from recuse.metrics.result import MetricResult, Skipped
from recuse.metrics.summary import PairwiseBias
from recuse.metrics.verdicts import judge_codes
from recuse.report import figures as fig
from recuse.report.model import Table
from recuse.roster import Roster

#: the plug-in ECE beside the estimate is another norm: said beside it, since the
#: debiased root mean square can read above the plug-in mean absolute gap (JudgeBench's
#: Claude-3-haiku: 0.31 beside a plug-in 0.22, as if debiasing had raised it)
PLUGIN_NORM = "ℓ1, the mean absolute gap; the estimate is ℓ2, a root mean square"


COLUMNS = {"p_a": (ECE, BRIER), "p_isotonic": (ECE_ISOTONIC, BRIER_ISOTONIC),
           "p_platt": (ECE_PLATT, BRIER_PLATT)}  # fmt: skip

#: the estimates table's columns beside an estimate's (:func:`estimate_columns`): the two
#: ECE rows' plug-in numbers, in the table with no word (as the reliability table's were)
PLUGIN_COLUMNS = {
    "ece_plugin": f"ECE rows: the plug-in ECE, Σ_b (n_b / n) |mean_b(p) − mean_b(y)| over "
    f"the same bins ({PLUGIN_NORM}), biased up by chance; empty on Brier rows",
    "chance_ece": "ECE rows: the plug-in ECE a perfectly calibrated judge scores at these "
    "probabilities and n (its mean over labels drawn y ~ Bernoulli(p)): a plug-in ECE near "
    "it is no evidence of miscalibration; empty on Brier rows",
}

#: what each column of the reliability table holds (it had no words: what observed is a
#: share of, which bins hold 1, what the probabilities column tells apart)
RELIABILITY_COLUMNS = {
    "bin_low": "the bin's lower end, in it: a probability that a is better (0 to 1)",
    "bin_high": f"the bin's upper end, not in it, but for the last bin, [{(BINS - 1) / BINS:g}, "
    "1], which holds 1",
    "n": "the judge's pairs in the bin (human ties and unlabelled pairs left out)",
    "mean_p": "the mean probability of those pairs, as the probabilities column says which",
    "observed": "the share of those pairs whose human label prefers a (label over 0.5); "
    "calibrated: observed = mean_p",
    "dataset": "the input",
    "judge": "the judge",
    "probabilities": "as stated: the judge's p_a (its orders averaged); isotonic, "
    "cross-fitted: recalibrated out of sample (the note under the section says how)",
}


def _of(words: dict[str, str], frame: pd.DataFrame) -> dict[str, str]:
    """The entries of ``words`` for the columns ``frame`` has."""
    return {k: v for k, v in words.items() if k in frame.columns}


def needs_probabilities(frame: pd.DataFrame, roster: Roster) -> str | None:
    reason = needs_labels(frame, roster)
    if reason:
        return reason
    if not gives_probabilities(stated_verdicts(judged(frame))):
        return (
            "the verdicts are picks (in every order 0, 0.5 or 1), not probabilities — "
            "calibration needs a judge that states a probability (e.g. Eq. 3 scores)"
        )
    return None


def _build(ctx: Context, inp: Input, shared: PairwiseBias | None) -> None:
    o = ctx.options
    # every judge's rows, --judge or not: the Brier scores' bootstrap resamples the
    # prompts of every judge that gives probabilities, as in the whole audit; only the
    # judges chosen are recalibrated and reported
    rows = judged(inp.every_judge).reset_index(drop=True)
    chosen = {str(j) for j in judged(inp.frame)["judge"]}
    methods: tuple[tuple[str, Recalibration], ...] = (
        ("p_isotonic", "isotonic"), ("p_platt", "platt"),
    )  # fmt: skip
    parts = []
    for judge, mine in rows.groupby("judge", sort=True):
        if not gives_probabilities(stated_verdicts(mine)):
            if str(judge) in chosen:
                ctx.skip(ANALYSIS,
                         "verdicts are picks (in every order 0, 0.5 or 1), not probabilities",
                         inp.name, str(judge))  # fmt: skip
            continue
        mine = mine.copy()
        if str(judge) not in chosen:  # its prompts only
            parts.append(mine.assign(**{column: float("nan") for column, _ in methods}))
            continue
        for column, method in methods:
            try:
                fitted = recalibrate(mine, method=method, seed=o.seed, out=column)
                mine[column] = fitted[column].to_numpy()
            except EstimationError as exc:
                mine[column] = float("nan")
                ece, _ = COLUMNS[column]
                ctx.skip(ANALYSIS, f"{method} recalibration: {exc}", inp.name, str(judge),
                         headline=False, bias=ece)  # fmt: skip
        parts.append(mine)
    reported = sorted(chosen & {str(j) for j in pd.concat(parts)["judge"]}) if parts else []
    if not reported:
        return
    data = pd.concat(parts, ignore_index=True)
    codes, labels = judge_codes(data, reported)
    specs: list[MetricSpec] = []
    bias_of = {}
    ece_found: list[MetricResult] = []
    ece_skipped: list[Skipped] = []
    for column, (ece, brier) in COLUMNS.items():
        found, missed = ece_results(
            data, codes, labels, column=column, boot=o.resampling, min_n=o.min_n, name=ece.key
        )
        ece_found += found
        ece_skipped += missed
        specs.append(brier_spec(data, codes, labels, column=column, name=brier.key))
        bias_of[ece.key], bias_of[brier.key] = ece, brier
    boot, boot_skipped = run_boot(specs, clusters_of(data), o)
    results = sorted(ece_found + boot, key=lambda r: bias_of[r.metric].order)
    skipped = ece_skipped + boot_skipped
    note = (
        "; the recalibration map is fitted once per fold (cross-fitted), not refitted "
        "in each bootstrap resample"
    )
    for r in results:
        detail = ""
        if "chance_ece" in r.components:
            detail = (
                f"plug-in ECE {r.components['ece_plugin']:.3f} ({PLUGIN_NORM}); a perfectly "
                f"calibrated judge's plug-in ECE at these probabilities and n: "
                f"{r.components['chance_ece']:.3f} (chance alone)"
            )
        ctx.add(ANALYSIS, from_result(ANALYSIS, bias_of[r.metric], r, dataset=inp.name,
                                      detail=detail))  # fmt: skip
    for s in skipped:
        bias = bias_of[s.metric]
        if all(s.metric != r.metric or s.judge != r.judge for r in results):
            ctx.skip(ANALYSIS, s.reason, inp.name, str(s.judge or ""),
                     headline=bias.headline, bias=bias, metric=s.metric)  # fmt: skip
    frame = pd.DataFrame(
        [{**{k: v for k, v in table_row(r, inp.name, bias_of[r.metric].key).items()
             if k not in ("components", "method", "p_value", "n_of")},
          **{k: r.components[k] for k in ("ece_plugin", "chance_ece") if k in r.components}}
         for r in results]
    )  # fmt: skip
    if len(frame):
        ctx.part(ANALYSIS).tables.append(
            Table(
                slug(ANALYSIS.id, inp.name),
                f"Calibration estimates — {inp.name}",
                frame,
                columns={**estimate_columns(frame), **_of(PLUGIN_COLUMNS, frame)},
                texts=warnings_texts(results),
            )
        )
    y = outcomes(data)
    bins = []
    for judge in labels:
        mask = (data["judge"] == judge).to_numpy()
        series = []
        for column, name in (("p_a", "as stated"), ("p_isotonic", "isotonic, cross-fitted")):
            t = reliability_table(data.loc[mask, column].to_numpy(float), y[mask])
            if t["n"].sum() == 0:
                continue
            bins.append(t.assign(dataset=inp.name, judge=judge, probabilities=name))
            series.append((name, t["mean_p"].tolist(), t["observed"].tolist(), t["n"].tolist()))
        if series:
            ctx.part(ANALYSIS).figures.append(
                fig.reliability(
                    series,
                    id=slug("reliability", inp.name, judge),
                    title=f"Reliability — {judge} — {inp.name}",
                    caption=(
                        f"{BINS} equal-width bins; marker size grows with the pairs in a bin. "
                        "Points below the diagonal: the judge is over-confident for a."
                    ),
                    format=o.figure_format,
                )
            )
    if bins:
        ctx.part(ANALYSIS).tables.append(
            Table(
                slug("reliability", inp.name),
                f"Reliability bins — {inp.name}",
                pd.concat(bins, ignore_index=True),
                show=False,
                columns=RELIABILITY_COLUMNS,
            )
        )
    ctx.part(ANALYSIS).notes.append(
        f"Recalibrated probabilities are out of sample: {FOLDS} folds by prompt (seed "
        f"{o.seed}); each pair's value comes from the map fitted on the other folds{note}. "
        "In the library, recuse.metrics.calibration.recalibrate() returns the table with "
        "p_a_recalibrated."
    )


ANALYSIS = Analysis(
    heading=HEADING,
    intro=(
        "Can the judge's stated probability be trusted? A quality score, not a bias. "
        f"Calibration error: over {BINS} equal-width bins of p_a, the gap between the "
        "stated probability and the share of pairs the humans decided for a (human label "
        "as 0/1, ties left out), debiased so that a calibrated judge's squared error "
        "averages 0 at any n: its root, the estimate, reads 0 in about half of such "
        "tables and about 0.02 on average at 400 pairs, where the plug-in ECE reads about "
        "0.05 (shown beside, with what a calibrated judge's plug-in ECE reads on the "
        "same probabilities); "
        "Brier score: mean (p - y)^2. Neither carries a p-value. The same "
        f"after isotonic and Platt recalibration, cross-fitted over {FOLDS} folds of "
        "prompts so that before and after are both out of sample."
    ),
    requires="pairs with human labels and judge probabilities (p_a other than 0, 0.5, 1)",
    needs=needs_probabilities,
    build=_build,
)
