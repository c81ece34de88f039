"""Debiasing: judge scores with the estimated self- and family-bias taken out.

For a rating of model ``m`` by judge ``j`` (normalised scale of the fit)::

    S~debiased_idmj = S~_idmj − γ̂_j 1[j = m] − λ̂_F(j) 1[F(j) = F(m), j ≠ m]

and on the raw scale the same amount times the dimension's normalisation scale.
Coefficients that were not estimated (a judge that never rates itself, a family
with one member) subtract nothing, nor do those without a finite standard error, which
the fit and the audit report as not estimated
(:func:`~recuse.regression.favoritism.without_se`). :func:`debias_effect` compares each model's mean
judge score before and after, with the model ranking (rank 1 = best).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats

from recuse.errors import InputError
from recuse.numbers import column_decimals, decimal, signed

if TYPE_CHECKING:
    from collections.abc import Mapping

    from recuse.regression.favoritism import Families, FavoritismResult

# recuse.regression.favoritism is imported where a correction is computed: this module
# is imported with the package (recuse.mitigation), which `recuse certify` imports for
# mitigation.selective, and the regression package brings statsmodels and formulaic
# (0.1-0.2 s of the command's start) that certifying never uses


def debias(
    ratings: pd.DataFrame,
    result: FavoritismResult,
    families: Families,
    *,
    selves: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Usable rows with ``y`` (normalised rating), ``y_debiased``, ``correction`` and
    ``rating_debiased`` (raw scale). Uses the fit's normalisation. ``selves``: what
    counted as the judge rating itself in the fit
    (:meth:`~recuse.roster.Roster.self_map`; default its exact id): ``γ̂_j`` comes off
    those rows, ``λ̂_F`` off the other rows of its family. Read with the fit's own
    rule, or a fit with ``self_scope="line"`` took ``γ̂`` of ``gpt-4o`` off nothing
    where it rated only ``gpt-4o-2024-08-06`` (read as family here)."""
    from recuse.regression.favoritism import prepare

    normalize = result.normalize
    p = prepare(ratings, families, normalize=normalize, selves=selves)  # type: ignore[arg-type]
    f = p.frame
    scale_fit = result.scales.set_index("dimension")["scale"]
    dims = set(f["dimension"].unique()) - set(scale_fit.index)
    if dims:
        raise InputError(
            f"dimension(s) {', '.join(sorted(dims))} were not in the fit",
            column="dimension",
            fix="debias ratings of the dimensions the model was fitted on",
        )
    # use the fit's scales, so that the coefficients apply as estimated
    low = f["dimension"].map(result.scales.set_index("dimension")["low"])
    scale = f["dimension"].map(scale_fit)
    y = (f["rating"] - low) / scale
    c = result.coefficients
    c = c[np.isfinite(c["se"].to_numpy(float))]  # as reported: not the unreported terms
    gamma = dict(
        zip(
            c.loc[c["kind"] == "self", "label"], c.loc[c["kind"] == "self", "estimate"], strict=True
        )
    )
    lam = dict(
        zip(
            c.loc[c["kind"] == "family", "label"],
            c.loc[c["kind"] == "family", "estimate"],
            strict=True,
        )
    )
    corr = np.where(f["is_self"], f["judge"].map(gamma).fillna(0.0), 0.0) + np.where(
        f["is_family"], f["judge_family"].map(lam).fillna(0.0), 0.0
    )
    out = f.drop(columns=["y", "ref"]).assign(
        y=y.to_numpy(), correction=corr, y_debiased=y.to_numpy() - corr
    )
    out["rating_debiased"] = out["rating"] - corr * scale.to_numpy()
    return out


def not_subtracted(coefficients: pd.DataFrame) -> str:
    """``; γ_j of claude-2.1 not subtracted (not estimated)`` for each term of
    ``coefficients`` (a fit's, or its rows of the judges ``--judge`` chose) the correction
    leaves out (:func:`~recuse.regression.favoritism.without_se`): the words the command's
    and the audit's correction lines end with ("" where it leaves none out)."""
    from recuse.regression.favoritism import without_se

    return "".join(f"; {t} not subtracted (not estimated)" for t in without_se(coefficients))


def on_few_prompts(result: FavoritismResult, coefficients: pd.DataFrame | None = None) -> str:
    """``; subtracted, resting on few prompts — γ_j of j0: its 12 ratings lie on only 3
    prompts, …`` for each term of ``coefficients`` (default the fit's; the audit's rows
    of the judges ``--judge`` chose) the correction subtracts (a finite standard error)
    whose ratings lie on fewer than :data:`~recuse.metrics.estimate.FEW_CLUSTERS`
    prompts, in its finding's warning
    (:meth:`~recuse.regression.favoritism.FavoritismResult.few_prompts`): the words the
    command's and the audit's correction lines end with ("" where none does). A γ on 3
    of 40 prompts came off its judge's ratings with nothing said there."""
    c = result.coefficients if coefficients is None else coefficients
    kept = c["kind"].isin(["self", "family"]) & np.isfinite(c["se"].to_numpy(float))
    said = (w for term in c.loc[kept, "term"] for w in result.few_prompts(str(term)))
    return "".join(f"; subtracted, resting on few prompts — {w}" for w in said)


@dataclass(frozen=True, eq=False)
class DebiasEffect:
    """Per model: mean judge score before/after debiasing, reference mean, ranks."""

    table: pd.DataFrame
    rank_correlation_before: float
    rank_correlation_after: float
    #: the judges whose ratings the means are over (None: every judge of the ratings)
    judges: tuple[str, ...] | None = None

    def tau_text(self, value: float) -> str:
        """One of the rank correlations as written: two decimals with a minus sign, and
        where it is undefined (every model tied on one side, or fewer than two models),
        "undefined (…)"."""
        if not np.isfinite(value):
            return "undefined (fewer than two models, or all tied)"
        return decimal(value, 2)

    def columns(self, scale: str) -> dict[str, str]:
        """What each column of :attr:`table` holds, ``scale`` the fit's score unit
        (``FavoritismResult.scale_note``): the audit's debiased CSV held before, after,
        reference and change without saying whose mean each is, on what scale, or which
        way change is taken. The means are over the ratings by :attr:`judges` (the audit's
        ``--judge``), which the words name: they said "by every judge" also where two of
        nine judges' ratings were averaged."""
        by = (
            "every judge"
            if self.judges is None
            else "the judge chosen, " + self.judges[0]
            if len(self.judges) == 1
            else "the judges chosen, " + ", ".join(self.judges)
        )
        return {
            "model": "the model whose answers were rated",
            "before": f"its mean {scale} over its ratings by {by}",
            "after": "the same with the estimated self-bias (γ_j on a judge's own model) and "
            "family bias (λ_F on its family's other models) subtracted",
            "reference": f"its mean reference score on the same scale ({scale})",
            "change": "after − before (negative: the correction lowered its mean)",
            "rank_before": "its rank by before, 1 = highest",
            "rank_after": "its rank by after, 1 = highest",
            "rank_reference": "its rank by reference, 1 = highest",
        }

    def change_texts(self) -> list[str]:
        """The ``change`` column as the page writes it: each difference with its sign
        either way (``+0.00541``, ``−0.00818``), at the column's one precision
        (:func:`recuse.numbers.column_decimals`); the page's plain numbers wrote a
        lowered mean with its minus and a raised one with no plus."""
        values = self.table["change"].astype(float).tolist()
        digits = column_decimals(values)
        return [signed(v, digits) if math.isfinite(v) else "" for v in values]

    @property
    def taus(self) -> str:
        """Kendall's τ to the reference ranking before and after, with its words: ``0.33
        before the correction → 0.60 after (1 = the reference's order, 0 = unrelated)``
        (a bare ``0.83 → 0.83`` said neither which was which nor what 1 is)."""
        before, after = self.rank_correlation_before, self.rank_correlation_after
        return (
            f"{self.tau_text(before)} before the correction → {self.tau_text(after)} after "
            "(1 = the reference's order, 0 = unrelated)"
        )

    @property
    def ranking_changed(self) -> bool:
        t = self.table
        return bool((t["rank_before"] != t["rank_after"]).any())


def _at_rounding(col: pd.Series) -> pd.Series:
    """``col`` rounded to 12 significant digits of its largest magnitude (12 decimals
    where that is 0 or not finite).

    >>> _at_rounding(pd.Series([44446.80000000001, 44446.8, 1.0])).tolist()
    [44446.8, 44446.8, 1.0]
    """
    top = float(col.abs().max())
    if not math.isfinite(top) or top == 0:
        return col.round(12)
    return col.round(12 - math.floor(math.log10(top)))


def debias_effect(
    ratings: pd.DataFrame,
    result: FavoritismResult,
    families: Families,
    *,
    judges: list[str] | None = None,
    selves: Mapping[str, str] | None = None,
) -> DebiasEffect:
    """Effect of debiasing on each model's mean score and on the model ranking.

    The mean is over all usable ratings of the model by ``judges`` (default: every
    judge), on the fit's normalised scale. ``rank_correlation_*`` is Kendall's τ
    between the judge ranking and the ranking by the mean reference score.
    ``selves``: the fit's rule of self (:func:`debias`).
    """
    d = debias(ratings, result, families, selves=selves)
    everyone = set(d["judge"].astype(str))
    if judges is not None:
        d = d[d["judge"].isin(judges)]
        if d.empty:
            raise InputError("none of the given judges is in the ratings", column="judge")
    low = d["dimension"].map(result.scales.set_index("dimension")["low"])
    scale = d["dimension"].map(result.scales.set_index("dimension")["scale"])
    d = d.assign(ref_n=(d["reference"] - low) / scale)
    comp = d.drop_duplicates(["prompt_id", "dimension", "model"])
    t = pd.DataFrame(
        {
            "before": d.groupby("model")["y"].mean(),
            "after": d.groupby("model")["y_debiased"].mean(),
            "reference": comp.groupby("model")["ref_n"].mean(),
        }
    )
    t["change"] = t["after"] - t["before"]
    # ranked and correlated at 12 significant digits: means equal but for the sums'
    # rounding (0.7999999999999999 beside 0.8, 44446.80000000001 beside 44446.8 on an
    # unnormalised scale) are one rank, not two
    held = t[["before", "after", "reference"]].apply(_at_rounding)
    for col, name in (
        ("before", "rank_before"),
        ("after", "rank_after"),
        ("reference", "rank_reference"),
    ):
        t[name] = held[col].rank(ascending=False, method="min").astype(int)
    t = t.sort_values("rank_after", kind="stable").rename_axis("model").reset_index()
    tau_b = _kendall(held["before"], held["reference"])
    tau_a = _kendall(held["after"], held["reference"])
    some = set(d["judge"].astype(str))
    chosen = None if some == everyone else tuple(sorted(some))
    return DebiasEffect(t, tau_b, tau_a, chosen)


def _kendall(x: pd.Series, y: pd.Series) -> float:
    """Kendall's τ-b of ``x`` and ``y``; NaN (undefined) for fewer than two models,
    without the SmallSampleWarning scipy prints with its file and line (the ratings of
    one model printed it above the command's lines).

    >>> _kendall(pd.Series([1.0]), pd.Series([2.0]))
    nan
    >>> _kendall(pd.Series([1.0, 2.0, 3.0]), pd.Series([1.0, 3.0, 2.0]))
    0.333...
    """
    if len(x) < 2:
        return math.nan
    return float(stats.kendalltau(x, y).statistic)
