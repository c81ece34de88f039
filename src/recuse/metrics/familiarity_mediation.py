"""How much of a judge's calibrated self-preference its familiarity explains.

A product-of-coefficients mediation through perplexity (authorship → lower perplexity
→ the pick) on top of the competence model of :mod:`recuse.metrics.competence`: the
indirect part, the direct part and the share, from one cluster bootstrap over prompts
(:func:`familiarity_mediation`).

Measured on planted judges (:func:`~recuse.simulate.familiarity.simulate_familiarity`,
one judge among six models, 200 prompts × 3 pairs, picks; 150 tables each, 200
resamples, 90% intervals; mean ± its simulation SE):

* familiarity only (pull −2 log-odds per nat, own answers 0.5 nats more familiar):
  Δ +0.182 ± 0.004, indirect +0.194 ± 0.002, direct −0.012 ± 0.004 (planted 0: the
  product of coefficients reads a logistic pull linearly and overstates it by about
  6% of Δ), covering 0 in 92%; the share's median 1.07 (planted 1);
* a self shift only (+0.8 log-odds, no perplexity gap): indirect −0.002 ± 0.002,
  covering 0 in 89%; share −0.008 ± 0.028 (planted 0), 91%. A perplexity gap with no
  pull toward the familiar: indirect −0.002 ± 0.002, 88%;
* no bias: indirect +0.0001 ± 0.0002 covering 0 in 99% and direct −0.003 ± 0.003 in
  97% (conservative: a product of two zero-mean terms); the share, a ratio of noise
  (sd 0.28 over the tables), carries the warning that Δ's interval holds 0;
* familiarity only with 20% of the rows missing a perplexity and one order judged:
  direct −0.008 ± 0.004 covering 0 in 95%; the share's median 1.07, mean 1.11 ± 0.03
  (the same overstatement, and a ratio's upward bias), covering 1 in 95%.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from recuse.errors import EstimationError
from recuse.metrics.bootstrap import GroupedStatistic, Resampling, as_array, check_min_n
from recuse.metrics.competence import (
    CALIBRATED_INTERVAL,
    CompetenceModel,
    LabelTerm,
    LapseTerm,
    gated_parts,
    label_words,
    lapse_words,
    strata_words,
    stratum_column,
)
from recuse.metrics.estimate import MetricSpec, clusters_of, run_specs
from recuse.metrics.perplexity import log_perplexity_difference
from recuse.metrics.result import MetricResult
from recuse.metrics.self_preference import Families, favored_side, single_judge
from recuse.metrics.verdicts import judge_codes
from recuse.numbers import percent, signed

__all__ = ["MEDIATION", "familiarity_mediation"]

MEDIATION = ("familiarity_indirect", "familiarity_direct", "familiarity_share")


@dataclass(frozen=True)
class _Mediation:
    """The mediation's statistics from sums: the calibrated columns
    (:class:`CompetenceModel`, ``k`` of them), then over the pairs without its own answer
    1, d, d², r, r·d (``r`` = verdict for a minus the competence prediction), then over
    its own pairs 1 and ``d_own``."""

    competence: CompetenceModel

    def parts(self, s: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        """(total Δ, indirect a·b)."""
        k = self.competence.k
        total = self.competence.combine(s[..., :k])
        n0 = s[..., k]
        with np.errstate(divide="ignore", invalid="ignore"):
            md, mr = s[..., k + 1] / n0, s[..., k + 3] / n0
            var = s[..., k + 2] / n0 - md * md
            slope = (s[..., k + 4] / n0 - mr * md) / var
            a = s[..., k + 6] / s[..., k + 5]
        slope = np.where(var > 1e-12, slope, np.nan)
        return total, a * slope

    def total(self, s: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.parts(s)[0]

    def indirect(self, s: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.parts(s)[1]

    def direct(self, s: NDArray[np.float64]) -> NDArray[np.float64]:
        total, indirect = self.parts(s)
        return total - indirect

    def share(self, s: NDArray[np.float64]) -> NDArray[np.float64]:
        total, indirect = self.parts(s)
        out = np.full(total.shape, np.nan)
        np.divide(indirect, total, out=out, where=np.abs(total) > 1e-12)
        return out

    def unfit(self, s: NDArray[np.float64]) -> NDArray[np.bool_]:
        """Resamples whose labels give the strengths no finite estimate (Δ's refit)."""
        return self.competence.unfit(s[..., : self.competence.k])

    def warnings(self, t: NDArray[np.float64]) -> tuple[str, ...]:
        """The calibrated estimate's caveats (direct and share rest on it)."""
        return self.competence.warnings(t[..., : self.competence.k])

    def components(self, t: NDArray[np.float64]) -> dict[str, float]:
        total, indirect = self.parts(t)
        k = self.competence.k
        n0, n1, gap = t[k], t[k + 5], t[k + 6]
        return {
            "calibrated_self_preference": float(total),
            "indirect": float(indirect),
            "own_log_ppl_gap": float(gap / n1) if n1 else float("nan"),
            "perplexity_slope": float(indirect / (gap / n1)) if n1 and gap else float("nan"),
            "pairs_without_own": float(n0),
        }


def familiarity_mediation(
    pairs: pd.DataFrame,
    *,
    judge: str | None = None,
    strengths: Mapping[str, float] | None = None,
    boot: Resampling = Resampling(),
    min_n: int = 5,
    families: Families | None = None,
    selves: Mapping[str, str] | None = None,
    stratum: str | None = "auto",
    label: LabelTerm = "auto",
    lapse: LapseTerm = None,
) -> list[MetricResult]:
    """How much of ``judge``'s calibrated self-preference its familiarity explains.

    Over the judge's rows with both perplexities (``ppl_a``, ``ppl_b`` under the row's
    judge), ``Δ`` is :func:`calibrated_self_preference` and ``d = log ppl_a − log ppl_b``.
    A product-of-coefficients mediation (authorship → lower perplexity → the pick)::

        a = mean over its own pairs of (log ppl_own − log ppl_other)
        b = slope of r on d over its pairs without its own answer (least squares),
            r = verdict for a − P(picks a | competence)
        indirect = a · b          (the part of Δ its familiarity explains)
        direct   = Δ − a · b      (what remains)
        share    = a · b / Δ

    ``b`` is learnt where authorship plays no part, so it is the judge's pull toward
    the more familiar answer beyond the models' strengths; ``a`` is how much more
    familiar its own answers are. All three share one cluster bootstrap over prompts
    (:mod:`.bootstrap`; the competence model refitted exactly in each) and, like the
    calibrated estimate they split, its percentile interval (:data:`CALIBRATED_INTERVAL`).
    0 = no part explained (indirect), no self-preference left (direct). The share has
    no no-bias value (it is 0/0 without a self-preference): where ``Δ``'s interval
    (the same resamples, the same level) holds 0, the ratio's denominator may be 0, its
    percentile interval is no confidence interval (the ratio's is unbounded), and the
    share carries a warning that says so with ``Δ``'s interval. Returns the three
    results in the order of :data:`MEDIATION`.

    ``Δ`` comes from the headline's competence model, with the same options as
    :func:`calibrated_self_preference`: a discrimination ``κ_c`` per ``stratum``
    (default: the category, where the judge's pairs hold two or more), the family term
    with ``families``, the label term near the ceiling (``label``), the slot lapse
    (``lapse``), what counts as the judge itself (``selves``); so the parts add up to
    the headline on the same rows
    (the rows with both perplexities), not to a one-``κ`` refit of it.
    """

    check_min_n(min_n)
    rows = single_judge(pairs, judge)
    d = log_perplexity_difference(rows)
    rows = rows.loc[np.isfinite(d)].reset_index(drop=True)
    d = d[np.isfinite(d)]
    if rows.empty:
        raise EstimationError("no pairs with both perplexities (ppl_a, ppl_b) for this judge")
    codes, labels = judge_codes(rows, None)
    side = favored_side(rows, relation="self", selves=selves)
    fam = None
    if families is not None:
        fam = favored_side(rows, relation="family", families=families, selves=selves)
    column = stratum_column(rows, stratum)
    how: dict[str, Any] = {"strengths": strengths, "side": side, "family_side": fam,
                           "stratum": column}  # fmt: skip
    # the fit without a label term is made once: where it conditions no judge, it is this
    values, group, problems, pred_a, model = gated_parts(
        rows, codes, labels, label=label, one_step=False, lapse=lapse, **how
    )
    if problems:
        raise EstimationError(f"judge {labels[0]!r}: {next(iter(problems.values()))}")
    fitted = np.isfinite(pred_a)
    other = fitted & (side == 0)
    own = fitted & (side != 0)
    r = rows["p_a"].to_numpy(float) - pred_a
    more = np.zeros((len(rows), 7))
    more[other, 0] = 1.0
    more[other, 1] = d[other]
    more[other, 2] = d[other] ** 2
    more[other, 3] = r[other]
    more[other, 4] = r[other] * d[other]
    more[own, 5] = 1.0
    more[own, 6] = np.where(side > 0, d, -d)[own]
    # (dense: the mediation's single judge, with its perplexity columns beside)
    values = np.column_stack([as_array(values), more])
    required = (
        (model.col_own, "pairs holding the judge's own answer, with perplexities"),
        (model.k, "pairs without its own answer, with perplexities"),
    )
    words = {
        "familiarity_indirect": "the part of the calibrated self-preference explained by "
        "the judge's lower perplexity on its own answers: (own − other log-perplexity on "
        "its own pairs) × (slope of its verdict beyond competence on the log-perplexity "
        "difference, on pairs without its own answer)",
        "familiarity_direct": "calibrated self-preference minus the part familiarity explains",
        "familiarity_share": "indirect / calibrated self-preference",
    }
    med = _Mediation(model)
    combines = {
        "familiarity_indirect": med.indirect,
        "familiarity_direct": med.direct,
        "familiarity_share": med.share,
    }
    specs = [
        MetricSpec(
            name,
            GroupedStatistic(
                name,
                values,
                group,
                labels,
                combines[name],
                required,
                interval=CALIBRATED_INTERVAL,
                # the direct part and the share rest on Δ, refitted in each resample
                unfit=None if name == "familiarity_indirect" else med.unfit,
            ),
            words[name] + strata_words(model) + label_words(model) + lapse_words(model),
            med.components,
            warnings=None if name == "familiarity_indirect" else med.warnings,
        )
        for name in MEDIATION
    ]
    # Δ itself, in the same resamples: its interval says whether the share's denominator
    # may be 0 (not returned; the headline reports Δ)
    total_stat = GroupedStatistic(
        "calibrated_self_preference", values, group, labels, med.total, required,
        interval=CALIBRATED_INTERVAL, unfit=med.unfit,
    )  # fmt: skip
    specs.append(MetricSpec("calibrated_self_preference", total_stat, ""))
    results, skipped = run_specs(specs, clusters_of(rows), boot=boot, min_n=min_n)
    if skipped:
        raise EstimationError(f"cannot estimate the mediation: {skipped[0].reason}")
    *parts, total = results
    if total.ci_low <= 0.0 <= total.ci_high:
        share = parts[-1]
        caveat = (
            f"the calibrated self-preference's {percent(total.level)} interval "
            f"[{signed(total.ci_low, 3)}, {signed(total.ci_high, 3)}] holds 0: the share's "
            "denominator may be 0, so the share and its interval do not measure anything "
            "(a ratio to a self-preference that may be none); read the indirect and direct "
            "parts"
        )
        parts[-1] = replace(share, warnings=(*share.warnings, caveat))
    return parts
