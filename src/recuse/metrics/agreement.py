"""Agreement of a judge with the reference label, and of several judges with each other.

Quality scores, not biases: how often the judge says what the humans say.

**The judge's verdict on a pair.** Per presentation order the verdict is a pick: a
(``p > 0.5``), b (``p < 0.5``) or tie (``p == 0.5``), with ``p_a_first`` /
``p_a_second`` both in the a/b frame. The pair's verdict is the sign of the sum of
the picks of the orders judged: both orders agree → that pick; a pick in one order
and a tie in the other → the pick; a flip (a in one order, b in the other) or a tie
in both → tie. A row with no per-order value uses the pick of ``p_a``.

**The human label.** ``human`` > 0.5 → a, < 0.5 → b, == 0.5 → tie (NaN: unlabelled).

* accuracy — over pairs with a human preference (human ties left out)::

      accuracy = sum(credit) / n,  credit = 1 (verdict = human side), 0.5 (judge tie
      or flip), 0 (the other side)

  0.5 = chance (a coin, or a judge that always says tie).
* Cohen's κ — over labelled pairs with the three ordered categories b < tie < a
  (human ties kept as the middle category), from the 3×3 table of proportions
  ``O`` (judge × human) and its marginals ``r`` (judge) and ``c`` (human)::

      κ_w = 1 - Σ w_ij O_ij / Σ w_ij r_i c_j

  with linear disagreement weights ``w_ij = |i - j| / 2`` (``weights="linear"``) or
  ``w_ij = 1[i != j]`` (``weights="none"``, plain κ). 0 = chance agreement, 1 = perfect.
* Krippendorff's α — among several judges (the raters) over items (the units),
  each judge's pair verdict as b < tie < a. From the coincidence matrix
  ``o_ck = Σ_u (number of ordered pairs of values (c, k) from different raters in
  unit u) / (m_u - 1)`` (units with ``m_u >= 2`` values), ``n_c = Σ_k o_ck``,
  ``n = Σ_c n_c``::

      α = 1 - (n - 1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck

  with ``δ²_ck = 1[c != k]`` (nominal), ``(Σ_{g=c..k} n_g - (n_c + n_k)/2)²``
  (ordinal) or ``(c - k)²`` (interval).

Each is a function of sums over pairs (or items), so its interval comes from the
project's prompt-clustered bootstrap (:mod:`recuse.metrics.bootstrap`) with a
``combine`` that rebuilds the statistic from the resampled sums.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from recuse.errors import ConfigError, EstimationError
from recuse.metrics.bootstrap import GroupedStatistic, Resampling, check_min_n, ratio
from recuse.metrics.estimate import MetricSpec, clusters_of, items_of, run_one, run_specs
from recuse.metrics.result import MetricResult
from recuse.metrics.self_preference import single_judge
from recuse.metrics.verdicts import TIE_TOL, judge_codes, order_picks, require_pairs

__all__ = [
    "Alpha",
    "KappaWeights",
    "accuracy",
    "accuracy_spec",
    "alpha_spec",
    "alpha_statistic",
    "cohen_kappa",
    "human_sides",
    "kappa_spec",
    "krippendorff_alpha",
    "pair_verdicts",
]

FloatArray = NDArray[np.float64]
KappaWeights = Literal["linear", "none"]
Alpha = Literal["nominal", "ordinal", "interval"]
K = 3  # categories b < tie < a


def pair_verdicts(pairs: pd.DataFrame) -> FloatArray:
    """The judge's verdict per row: 1 (a), -1 (b), 0 (tie or flip), NaN (none).

    >>> t = pd.DataFrame({"p_a_first": [1, 1, 0.5, 0.5, np.nan, np.nan],
    ...                   "p_a_second": [1, 0, 1, 0.5, 0.2, np.nan],
    ...                   "p_a": [1, 0.5, 0.75, 0.5, 0.2, np.nan]})
    >>> pair_verdicts(t).tolist()
    [1.0, 0.0, 1.0, 0.0, -1.0, nan]
    """
    total = np.zeros(len(pairs))
    seen = np.zeros(len(pairs), dtype=bool)
    for col in ("p_a_first", "p_a_second"):
        if col in pairs.columns:
            pick = order_picks(pairs[col].to_numpy(float))
            ok = np.isfinite(pick)
            total[ok] += pick[ok]
            seen |= ok
    fallback = order_picks(pairs["p_a"].to_numpy(float))
    out = np.where(seen, np.sign(total), fallback)
    return out.astype(float)


def human_sides(pairs: pd.DataFrame) -> FloatArray:
    """The human label per row: 1 (a), -1 (b), 0 (tie), NaN (unlabelled)."""
    h = pairs["human"].to_numpy(float)
    out = np.where(h > 0.5 + TIE_TOL, 1.0, np.where(h < 0.5 - TIE_TOL, -1.0, 0.0))
    out[~np.isfinite(h)] = np.nan
    return out


def accuracy_spec(
    pairs: pd.DataFrame, codes: NDArray[np.intp], labels: tuple[str, ...]
) -> MetricSpec:
    """Accuracy against the human label per judge (judge ties and flips earn half)."""
    v, h = pair_verdicts(pairs), human_sides(pairs)
    used = np.isfinite(v) & np.isfinite(h) & (h != 0)
    credit = np.where(v == h, 1.0, np.where(v == 0, 0.5, 0.0))
    values = np.column_stack([np.where(used, credit, 0.0), used.astype(float)])
    stat = GroupedStatistic(
        name="agreement_accuracy",
        values=values,
        group=np.where(used, codes, -1),
        labels=labels,
        combine=ratio,
        required=((1, "pairs with a human preference and a verdict"),),
    )
    method = (
        "accuracy against the human label: per pair the judge's verdict is the sign of "
        "the sum of its per-order picks (a flip or a tie earns half); human ties left out"
    )
    return MetricSpec(
        "agreement_accuracy", stat, method, null=0.5, expanded=True, extent=(0.0, 1.0)
    )  # chance: 0.5


def _kappa(weights: KappaWeights) -> FloatArray:
    i, j = np.indices((K, K))
    if weights == "linear":
        return np.abs(i - j) / (K - 1.0)
    return (i != j).astype(float)


def kappa_from_counts(s: FloatArray, weights: KappaWeights = "linear") -> FloatArray:
    """κ from the flattened 3×3 counts (judge category × human category), over the last axis.

    >>> # p_o = 6/8; judge margins (3, 2, 3)/8, human (3, 3, 2)/8: p_e = 21/64
    >>> # kappa = (6/8 - 21/64) / (1 - 21/64) = 27/43
    >>> round(float(kappa_from_counts(np.array([2., 1, 0, 0, 2, 0, 1, 0, 2]), "none")), 4)
    0.6279
    """
    w = _kappa(weights)
    o = s[..., : K * K].reshape(*s.shape[:-1], K, K)
    n = o.sum(axis=(-2, -1))[..., None, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        p = o / n
        e = p.sum(axis=-1)[..., :, None] * p.sum(axis=-2)[..., None, :]
        num = (w * p).sum(axis=(-2, -1))
        den = (w * e).sum(axis=(-2, -1))
        out = np.where(den > 0, 1.0 - num / np.where(den > 0, den, 1.0), np.nan)
    return np.asarray(out, dtype=float)


def kappa_spec(
    pairs: pd.DataFrame,
    codes: NDArray[np.intp],
    labels: tuple[str, ...],
    *,
    weights: KappaWeights = "linear",
) -> MetricSpec:
    """Cohen's κ of each judge's pair verdict with the human label, categories b < tie < a."""
    if weights not in ("linear", "none"):
        raise ConfigError(f"weights must be 'linear' or 'none'; got {weights!r}")
    v, h = pair_verdicts(pairs), human_sides(pairs)
    used = np.isfinite(v) & np.isfinite(h)
    cell = np.where(used, (np.nan_to_num(v) + 1) * K + (np.nan_to_num(h) + 1), 0).astype(int)
    values = np.zeros((len(pairs), K * K + 1))
    values[np.arange(len(pairs)), cell] = used
    values[:, K * K] = used
    name = "agreement_kappa" if weights == "linear" else "agreement_kappa_unweighted"

    def combine(s: FloatArray) -> FloatArray:
        return kappa_from_counts(s, weights)

    stat = GroupedStatistic(
        name=name,
        values=values,
        group=np.where(used, codes, -1),
        labels=labels,
        combine=combine,
        required=((K * K, "labelled pairs with a verdict"),),
        boot_k=K * K,
    )
    kind = "linear weights" if weights == "linear" else "unweighted"
    method = (
        f"Cohen's kappa ({kind}) of the judge's pair verdict with the human label, "
        "categories b < tie < a (human ties kept as tie)"
    )

    def components(t: FloatArray) -> dict[str, float]:
        o = t[: K * K].reshape(K, K)
        return {"observed_agreement": float(np.trace(o) / o.sum()) if o.sum() else np.nan}

    return MetricSpec(name, stat, method, components, score=True, expanded=True)  # 0 = chance


def _single(
    pairs: pd.DataFrame,
    judge: str | None,
    boot: Resampling,
    min_n: int,
    build: str,
    weights: KappaWeights = "linear",
) -> MetricResult:
    check_min_n(min_n)
    rows = single_judge(pairs, judge)
    codes, labels = judge_codes(rows, None)
    if build == "accuracy":
        spec = accuracy_spec(rows, codes, labels)
    else:
        spec = kappa_spec(rows, codes, labels, weights=weights)
    return run_one(spec, clusters_of(rows), boot=boot, min_n=min_n)


def accuracy(
    pairs: pd.DataFrame,
    *,
    judge: str | None = None,
    boot: Resampling = Resampling(),
    min_n: int = 10,
) -> MetricResult:
    """Share of pairs with a human preference on which the judge agrees (ties, flips: half).

    ``accuracy = sum(credit) / n`` (module docstring); 0.5 = chance.

    >>> t = pd.DataFrame({"item_id": list("abcd"), "prompt_id": list("abcd"),
    ...     "judge": "j", "human": [1.0, 1.0, 0.0, 0.0], "p_a_first": [1, 1, 1, 0.0],
    ...     "p_a_second": [1, 0, 1, 0.0], "p_a": [1, 0.5, 1, 0]})
    >>> accuracy(t, min_n=1, boot=Resampling(n_boot=100)).estimate  # (1 + 0.5 + 0 + 1) / 4
    0.625
    """
    return _single(pairs, judge, boot, min_n, "accuracy")


def cohen_kappa(
    pairs: pd.DataFrame,
    *,
    judge: str | None = None,
    weights: KappaWeights = "linear",
    boot: Resampling = Resampling(),
    min_n: int = 10,
) -> MetricResult:
    """Cohen's κ of the judge's pair verdict with the human label (b < tie < a).

    ``κ_w = 1 - Σ w_ij O_ij / Σ w_ij r_i c_j`` (module docstring); 0 = chance.
    """
    return _single(pairs, judge, boot, min_n, "kappa", weights)


# ------------------------------------------------------------------ Krippendorff


def _delta(n_c: FloatArray, level: Alpha) -> FloatArray:
    """δ²_ck for marginals ``n_c`` (..., K) -> (..., K, K)."""
    c, k = np.indices((K, K))
    if level == "nominal":
        return np.broadcast_to((c != k).astype(float), (*n_c.shape[:-1], K, K))
    if level == "interval":
        return np.broadcast_to(((c - k) ** 2).astype(float), (*n_c.shape[:-1], K, K))
    cum = np.cumsum(n_c, axis=-1)  # Σ_{g<=c} n_g
    lo, hi = np.minimum(c, k), np.maximum(c, k)
    between = cum[..., hi] - cum[..., lo] + n_c[..., lo]  # Σ_{g=lo..hi} n_g
    return np.asarray((between - (n_c[..., c] + n_c[..., k]) / 2.0) ** 2, dtype=float)


def alpha_from_coincidences(s: FloatArray, level: Alpha = "ordinal") -> FloatArray:
    """α from the flattened K×K coincidence matrix, over the last axis.

    >>> o = np.array([6., 1, 1, 1, 2, 1, 1, 1, 6])  # n_c = (8, 4, 8), n = 20
    >>> # off-diagonal o: 6; sum n_c n_k (c != k) = 400 - 144 = 256; 1 - 19 * 6 / 256
    >>> round(float(alpha_from_coincidences(o, "nominal")), 4)
    0.5547
    """
    o = s[..., : K * K].reshape(*s.shape[:-1], K, K)
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    d = _delta(n_c, level)
    observed = (o * d).sum(axis=(-2, -1))
    expected = (n_c[..., :, None] * n_c[..., None, :] * d).sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        safe = np.where(expected > 0, expected, 1.0)
        out = np.where(expected > 0, 1.0 - (n - 1) * observed / safe, np.nan)
    return np.asarray(out, dtype=float)


def alpha_statistic(
    pairs: pd.DataFrame,
    *,
    judges: Sequence[str] | None = None,
    level: Alpha = "ordinal",
) -> tuple[GroupedStatistic, pd.Series, int]:
    """Per-item coincidence contributions of the judges' pair verdicts, the items'
    prompts (the clusters) and the number of judges; units with fewer than two
    verdicts carry no information and are left out."""
    if level not in ("nominal", "ordinal", "interval"):
        raise ConfigError(f"level must be nominal, ordinal or interval; got {level!r}")
    rows = pairs[judge_codes(pairs, judges)[0] >= 0]  # no judge column: EstimationError
    v = pair_verdicts(rows)
    ok = np.isfinite(v)
    frame = pd.DataFrame(
        {"item": items_of(rows).to_numpy()[ok], "judge": rows["judge"].to_numpy()[ok],
         "cat": (v[ok] + 1).astype(int), "prompt": clusters_of(rows).to_numpy()[ok]}
    )  # fmt: skip
    n_judges = int(frame["judge"].nunique())
    # one verdict per judge and item (a repeated row would count as a second rater)
    frame = frame.drop_duplicates(["item", "judge"], keep="first")
    counts = pd.crosstab(frame["item"], frame["cat"]).reindex(columns=range(K), fill_value=0)
    n_u = counts.to_numpy(float)
    m = n_u.sum(axis=1)
    keep = m >= 2
    n_u, m = n_u[keep], m[keep]
    pairs_uck = n_u[:, :, None] * n_u[:, None, :] - np.eye(K)[None] * n_u[:, :, None]
    values = np.column_stack(
        [(pairs_uck / (m - 1)[:, None, None]).reshape(len(n_u), K * K), np.ones(len(n_u))]
    )
    prompts = frame.drop_duplicates("item").set_index("item")["prompt"]
    clusters = prompts.reindex(counts.index[keep]).reset_index(drop=True)

    def combine(s: FloatArray) -> FloatArray:
        return alpha_from_coincidences(s, level)

    stat = GroupedStatistic(
        name=f"agreement_alpha_{level}",
        values=values,
        group=np.zeros(len(values), dtype=np.intp),
        labels=(None,),
        combine=combine,
        required=((K * K, "items with verdicts of two or more judges"),),
        boot_k=K * K,
    )
    return stat, clusters, n_judges


def alpha_spec(stat: GroupedStatistic, n_judges: int, level: Alpha) -> MetricSpec:
    """Krippendorff's α of :func:`alpha_statistic` as a spec: a quality score whose
    no-bias value 0 is chance agreement (``MetricSpec.score``: it reads without a sign)."""
    method = (
        f"Krippendorff's alpha ({level}) among {n_judges} judges' pair verdicts "
        "(b < tie < a), items as units"
    )
    return MetricSpec(stat.name, stat, method, score=True)


def krippendorff_alpha(
    pairs: pd.DataFrame,
    *,
    judges: Sequence[str] | None = None,
    level_of_measurement: Alpha = "ordinal",
    boot: Resampling = Resampling(),
    min_n: int = 10,
) -> MetricResult:
    """Krippendorff's α among the judges' pair verdicts (b < tie < a), items as units.

    ``α = 1 - (n - 1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck`` (module docstring); 0 = chance
    agreement among the judges, 1 = perfect. ``n`` of the result counts the items
    with at least two verdicts; the bootstrap resamples their prompts.
    """
    check_min_n(min_n)
    pairs = require_pairs(pairs)
    stat, clusters, n_judges = alpha_statistic(pairs, judges=judges, level=level_of_measurement)
    if n_judges < 2:
        raise EstimationError(
            f"Krippendorff's alpha needs verdicts of two or more judges; this table has {n_judges}"
        )
    spec = alpha_spec(stat, n_judges, level_of_measurement)
    if len(clusters) == 0:
        raise EstimationError("no item has verdicts of two or more judges")
    results, skipped = run_specs([spec], clusters, boot=boot, min_n=min_n)
    if skipped:
        raise EstimationError(f"cannot estimate Krippendorff's alpha: {skipped[0].reason}")
    return results[0]
