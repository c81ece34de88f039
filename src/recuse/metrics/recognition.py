"""Self-recognition: does the judge tell its own answer from another model's?

Per judge, over the ``self-recognition`` rows of a probe table (pairs of its own answer
and another model's, asked "which one did you write?", both orders averaged into
``p_a``): ``v`` = the share of "I wrote it" the judge gives its own answer. Then

    self_recognition = Σv / n        (0.5 = chance, 1 = always right)

with the pick rate (own answer given more than half, ties half) as a component. The
interval is the project's prompt-clustered bootstrap.

:func:`recognition_vs_preference` sets each judge's self-recognition beside a
self-preference estimate of the same judge (e.g. the ladder's own-win rate or EO) and,
across judges, gives their Spearman and Pearson correlations: does a judge that
recognises itself better prefer itself more?
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from recuse.errors import InputError
from recuse.metrics.bootstrap import GroupedStatistic, Resampling, check_min_n, ratio
from recuse.metrics.estimate import MetricSpec, clusters_of, run_specs
from recuse.metrics.result import MetricResult, Skipped
from recuse.metrics.self_preference import favored_side
from recuse.metrics.verdicts import TIE_TOL, judge_codes, orient, require_pairs
from recuse.probe_tables import RECOGNITION, check_probe_table

__all__ = ["COMPONENTS", "MIN_JUDGES", "recognition_vs_preference", "self_recognition"]

#: judges needed before a correlation across judges is given
MIN_JUDGES = 3


#: what the components of a self-recognition result are
COMPONENTS = {
    "pick_rate": "share of pairs in which the judge gives its own answer more than half of "
    "'I wrote it' (ties count half)",
}


def _components(t: np.ndarray) -> dict[str, float]:
    return {"pick_rate": float(t[2] / t[1]) if t[1] else float("nan")}


def self_recognition(
    table: pd.DataFrame,
    *,
    judges: str | list[str] | None = None,
    boot: Resampling = Resampling(),
    min_n: int = 5,
) -> tuple[list[MetricResult], list[Skipped]]:
    """Self-recognition accuracy per judge (metric ``self_recognition``), see the module
    docstring. Rows other than ``probe == "self-recognition"`` are ignored; a row counts
    when one answer's model is the row's judge and the other's is another model."""
    check_min_n(min_n)
    if "probe" not in table.columns or not (table["probe"] == RECOGNITION).any():
        raise InputError(
            "no self-recognition rows (probe = 'self-recognition')",
            fix="run `recuse probe --probe self-recognition` on pairs holding the judge's answers",
        )
    rows = check_probe_table(require_pairs(table))
    rows = rows[rows["probe"] == RECOGNITION].reset_index(drop=True)
    codes, labels = judge_codes(rows, judges)
    v = orient(rows["p_a"].to_numpy(float), favored_side(rows, relation="self"))
    ok = np.isfinite(v) & (codes >= 0)
    pick = np.where(v > 0.5 + TIE_TOL, 1.0, np.where(v < 0.5 - TIE_TOL, 0.0, 0.5))
    values = np.column_stack([np.where(ok, v, 0.0), ok.astype(float), np.where(ok, pick, 0.0)])
    stat = GroupedStatistic(
        name="self_recognition",
        values=values,
        group=np.where(ok, codes, -1),
        labels=labels,
        combine=ratio,
        required=((1, "judged pairs of the judge's own answer and another model's"),),
        boot_k=2,
    )
    method = (
        "self-recognition: mean over pairs of its own and another model's answer of the "
        "share of 'I wrote it' the judge gives its own answer (both orders averaged)"
    )
    spec = MetricSpec("self_recognition", stat, method, _components, null=0.5)  # chance
    return run_specs([spec], clusters_of(rows), boot=boot, min_n=min_n)


def recognition_vs_preference(
    recognition: Sequence[MetricResult], preference: Sequence[MetricResult]
) -> tuple[pd.DataFrame, dict[str, float | int | None]]:
    """Per judge with both: its self-recognition and self-preference estimates (with
    intervals); and across those judges the Spearman and Pearson correlations with
    their p-values (None with fewer than :data:`MIN_JUDGES` judges, or when either
    estimate does not vary)."""
    pref = {r.judge: r for r in preference}
    rows = [
        {
            "judge": r.judge,
            "self_recognition": r.estimate,
            "recognition_ci_low": r.ci_low,
            "recognition_ci_high": r.ci_high,
            "self_preference": pref[r.judge].estimate,
            "preference_ci_low": pref[r.judge].ci_low,
            "preference_ci_high": pref[r.judge].ci_high,
            "preference_metric": pref[r.judge].metric,
        }
        for r in recognition
        if r.judge in pref
    ]
    table = pd.DataFrame(rows)
    out: dict[str, float | int | None] = {
        "judges": len(table),
        "spearman": None,
        "spearman_p": None,
        "pearson": None,
        "pearson_p": None,
    }
    if len(table) >= MIN_JUDGES:
        x, y = table["self_recognition"].to_numpy(float), table["self_preference"].to_numpy(float)
        if np.ptp(x) > 0 and np.ptp(y) > 0:
            rho = stats.spearmanr(x, y)
            r = stats.pearsonr(x, y)
            out.update(
                spearman=float(rho.statistic), spearman_p=float(rho.pvalue),
                pearson=float(r.statistic), pearson_p=float(r.pvalue),
            )  # fmt: skip
    return table, out
