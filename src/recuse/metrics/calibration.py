"""Calibration of a judge's probabilities against the human label, and recalibration.

A judge that gives probabilities (``p_a``: its probability that a is better, Eq. 3
of the self-preference paper averaged over the orders judged) is calibrated when,
among pairs it gives probability ``p``, the humans prefer a a share ``p`` of the
time. The outcome is the human label as 0/1 (``y = 1`` when ``human > 0.5``, 0 when
``< 0.5``); human ties and unlabelled pairs are left out.

* expected calibration error, ``bins`` equal-width bins of ``p`` (10 by default:
  [0, 0.1), [0.1, 0.2), …, [0.9, 1.0]). The plug-in value::

      ECE_plugin = Σ_b (n_b / n) |mean_b(p) - mean_b(y)| = (1/n) Σ_b |Σ_{i in b} (p_i - y_i)|

  is biased up by chance: a perfectly calibrated judge (y ~ Bernoulli(p)) scores about
  0.05 at n = 400, and its bootstrap interval never holds 0. What
  :func:`expected_calibration_error` reports is therefore the **debiased** calibration
  error (the debiased ℓ2 ECE of Kumar, Liang and Ma 2019, "Verified uncertainty
  calibration", made a U-statistic over prompts). With ``X_cb = Σ (p_i - y_i)`` over
  the rows of prompt ``c`` in bin ``b``, ``S_b = Σ_c X_cb`` and ``m_cb`` the rows of
  prompt ``c`` in bin ``b``::

      U = Σ_b  n_b / (n (n_b² - Σ_c m_cb²))  (S_b² - Σ_c X_cb²)
      ECE = sqrt(max(U, 0))

  ``S_b² - Σ_c X_cb² = Σ_{c ≠ d} X_cb X_db`` keeps only products of different
  prompts, so ``E[U] = Σ_b (n_b / n) d_b²`` exactly when the gap ``d_b = p - P(y = 1)``
  is constant in a bin: the squared calibration error of the probabilities, with no
  chance part (0 for a calibrated judge, whatever n). Its interval is Student's on the
  squared scale, ``U ± t_ν se``, then square-rooted (ends below 0 read 0, above 1 read
  1: a calibration error is at most 1). ``se²`` is the jackknife variance over prompts
  ``v_J`` less half the jackknife's known excess at a degenerate U-statistic,
  ``v_Q = 2 Σ_b a_b² ((Σ_c X_cb²)² - Σ_c X_cb⁴)`` (the plain jackknife counts the
  degenerate part twice; removing all of it under-covers, as the squared scale is
  skewed), and at least ``¾ v_Q``::

      se² = max(v_J - v_Q / 2, v_J / 4, ¾ v_Q)
      ν   = 3 (Σ_c δ_c²)² / Σ_c δ_c⁴ - 2,   δ_c = U_(-c) - mean_c U_(-c)   (1 to G - 1)

  ``v_Q`` is the variance ``U`` has with no miscalibration (its degenerate part, which
  does not depend on the gaps' sum ``S_b``); ``v_J`` does, and where the gaps of a bin
  cancel (``S_b`` near 0, ``U`` below its mean) it shrinks: near a calibrated judge the
  truth then lay above the interval (350 one-pair prompts: 0.868 covered, every miss
  above). A floor of all of ``v_Q`` covered 0.98 there (``U``'s left tail is short),
  ``¾ v_Q`` 0.945. ``ν`` is Satterthwaite's degrees of freedom of the jackknife's
  variance, a sum over prompts of ``δ_c²`` (:func:`effective_df`: ``E δ⁴ = 3 λ²`` for
  a normal ``δ`` of variance ``λ``): about ``G - 1`` where the prompts carry it alike,
  ``k`` where ``k`` of them carry it (``z`` covered 0.84 at 30 prompts of 3 pairs).
  It was ``(Σ δ²)² / Σ δ⁴ - 1``, a third of that for normal ``δ`` (median 8 at 30
  prompts), and the interval too wide at few prompts: 0.976 at 60 one-pair prompts of
  the simulator's judge, 0.978 at 12 prompts of 5 pairs (now 0.962, 0.961; review,
  1,000 tables a design). Coverage of the 90% interval measured by simulation
  (``tests/metrics/test_calibration.py``, ``benchmarks/metric_coverage.py`` section
  ``calibration``, docs/benchmarks.md): 0.87–0.96 at planted miscalibrations from 12
  prompts of 3 or 5 pairs to 400 pairs, skewed and U-shaped probabilities, label
  noise; a calibrated judge's 0 it holds in 0.99–1.0 of tables (at that boundary only
  the lower end can miss), and a judge near it (a true error of 0.027, 60–350 pairs)
  0.94–0.96. Its ``std_error`` is the calibration
  error's, on the estimate's scale (:meth:`DebiasedECE.root_se`: the standard deviation
  of the square root of that normal, about ``se / (2 √U)`` away from 0, times
  ``t_ν / z``: :func:`recuse.metrics.estimate.student_error`, so that ``z`` times it is
  about the half-width of the Student interval shown), which `recuse gate`'s
  projections and the report's detectable bias read; the squared error and its ``se``
  are ``squared_error`` and ``squared_error_se`` in ``components``. Beside it: the
  plug-in ECE, and ``chance_ece``, the plug-in ECE a perfectly calibrated judge scores at
  these probabilities and this n (the mean over ``CHANCE_DRAWS`` consistency
  resamples, y ~ Bernoulli(p), seeded): a plug-in ECE near ``chance_ece`` is no
  evidence of miscalibration.
* Brier score ``= mean((p - y)²)``; 0 = perfect, 0.25 = always saying 0.5.

The Brier score is a function of sums over pairs, so its interval comes from the
prompt-clustered bootstrap (:mod:`recuse.metrics.bootstrap`). Neither score carries a
p-value: they are quality scores, and their floor 0 is not a no-bias value.

**Recalibration** (:func:`recalibrate`) maps ``p`` to a calibrated probability with
isotonic regression (a non-decreasing step map fitted by pool-adjacent-violators,
:func:`scipy.optimize.isotonic_regression`, interpolated linearly between fitted
points and clipped at the ends) or Platt scaling (a logistic regression of ``y`` on
``logit(p)``, statsmodels ``Logit``). The map is *cross-fitted*: the judge's prompts
are split into ``folds`` groups at random (``seed``), and each row's recalibrated
probability comes from the map fitted on the other folds' labelled rows, so before
and after numbers are both out of sample.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
import scipy.integrate
import scipy.stats
from numpy.typing import NDArray
from scipy.special import ndtri

from recuse.choices import BINS as BINS
from recuse.choices import FOLDS as FOLDS
from recuse.errors import ConfigError, EstimationError, fit_warnings_hidden
from recuse.metrics.bootstrap import GroupedStatistic, Resampling, check_min_n, counted, ratio
from recuse.metrics.estimate import (
    FEW_CLUSTERS,
    LOW_N,
    MetricSpec,
    clusters_of,
    run_one,
    student_error,
    the_fix,
)
from recuse.metrics.result import MetricResult, Skipped
from recuse.metrics.self_preference import single_judge
from recuse.metrics.verdicts import TIE_TOL, judge_codes
from recuse.numbers import percent

__all__ = [
    "ECE_INTERVAL",
    "DebiasedECE",
    "Recalibration",
    "brier_score",
    "brier_spec",
    "debiased_ece",
    "ece_results",
    "effective_df",
    "expected_calibration_error",
    "gives_probabilities",
    "outcomes",
    "recalibrate",
    "reliability_table",
    "stated_verdicts",
]

FloatArray = NDArray[np.float64]
Recalibration = Literal["isotonic", "platt"]
MIN_FIT = 10  # labelled rows a fold's training set needs
_EPS = 1e-6


def outcomes(pairs: pd.DataFrame) -> FloatArray:
    """The human label as 0/1 (1: a better); NaN for ties and unlabelled pairs."""
    h = pairs["human"].to_numpy(float)
    out = np.where(h > 0.5 + TIE_TOL, 1.0, np.where(h < 0.5 - TIE_TOL, 0.0, np.nan))
    out[~np.isfinite(h)] = np.nan
    return out


def gives_probabilities(p: pd.Series | FloatArray) -> bool:
    """Whether verdicts are probabilities: some value other than 0, 0.5 and 1.

    >>> gives_probabilities(np.array([0, 0.5, 1])), gives_probabilities(np.array([0.7, 1]))
    (False, True)
    """
    v = np.asarray(p, dtype=float)
    v = v[np.isfinite(v)]
    return bool(np.any(np.abs(v[:, None] - np.array([0.0, 0.5, 1.0])).min(axis=1) > TIE_TOL))


def stated_verdicts(pairs: pd.DataFrame) -> FloatArray:
    """The verdicts as the judge stated them, for :func:`gives_probabilities`: each
    presentation order's ``p_a_first`` / ``p_a_second`` where the table has them, else
    ``p_a``. The order-averaged ``p_a`` of a judge that only picks is no probability:
    a pick in one order and a tie in the other average to 0.75 (JudgeBench's
    arena-hard judges), and read as probabilities they made an ECE of picks.

    >>> t = pd.DataFrame({"p_a_first": [1.0, 0.5], "p_a_second": [0.5, 0.0], "p_a": [0.75, 0.25]})
    >>> gives_probabilities(t["p_a"]), gives_probabilities(stated_verdicts(t))
    (True, False)
    """
    orders = [c for c in ("p_a_first", "p_a_second") if c in pairs.columns]
    if orders:
        v = pairs[orders].to_numpy(float).ravel()
        if np.isfinite(v).any():
            return v
    return pairs["p_a"].to_numpy(float)


#: scipy.stats.norm's density constant, as it computes it
_SQRT_2PI = float(np.sqrt(2 * np.pi))


#: a probability this close below a bin's edge is read at the edge (:func:`_bins`): one
#: stored as float32 is up to 3e-8 off its decimal (0.7 is 0.699999988), one computed as
#: ``1 − c`` an ulp; TIE_TOL (1e-9) covered the ulp but not float32
EDGE_TOL = 1e-6


def _bins(p: FloatArray, bins: int) -> NDArray[np.intp]:
    """The equal-width bin of each ``p``: ``floor(p · bins)``, ``p`` within
    :data:`EDGE_TOL` below an edge read at the edge. A probability computed as ``1 − c``
    lies an ulp off its decimal (1 − 0.8 = 0.19999999999999996, 1 − 0.6 =
    0.39999999999999997), and a confidence stored as float32 (a Parquet column) some
    1e-8 off (0.7 is 0.699999988, so 1 − 0.6 is 0.399999976): read as it is, a verdict
    for b at confidence 0.6 sat in [0.3, 0.4) with those at 0.7, and the reliability
    table gave that bin a mean probability of 0.4.

    >>> _bins(np.array([1 - 0.8, 0.2, 1 - 0.6, 1 - 0.7, 0.0999, 1.0]), 10).tolist()
    [2, 2, 4, 3, 0, 9]
    >>> _bins(np.array([0.6, 0.7, 0.9], dtype=np.float32).astype(float), 10).tolist()
    [6, 7, 9]
    """
    at = np.floor(np.nan_to_num(p) * bins + EDGE_TOL * bins)
    return np.clip(at, 0, bins - 1).astype(np.intp)


def _used(p: FloatArray, y: FloatArray) -> NDArray[np.bool_]:
    return np.isfinite(p) & np.isfinite(y)


@dataclass(frozen=True)
class DebiasedECE:
    """The debiased calibration error of one judge (module docstring), before it is
    turned into a :class:`MetricResult`: ``u`` is the squared error's estimate ``U``
    and ``se`` its standard error; ``plugin`` and ``chance`` the plug-in ECE and the
    plug-in ECE of a perfectly calibrated judge at these probabilities. ``lone``: the
    rows in bins whose rows all come from one prompt, where ``U`` has no product of two
    prompts: their bins add nothing to ``U``, read as calibrated whatever their gap.
    ``df``: the degrees of freedom ``ν`` of the interval's Student quantile (module
    docstring; infinite: the normal's)."""

    u: float
    se: float
    plugin: float
    chance: float
    n: int
    n_clusters: int
    lone: int = 0
    df: float = math.inf

    def interval(self, level: float) -> tuple[float, float]:
        """``sqrt`` of Student's interval ``U ± t_ν se`` (``ν = df``; the normal's ``z``
        where it is infinite), within the values a calibration error takes, ``[0, 1]``
        (ends below 0 read 0, above 1 read 1: a gap between a probability and a 0/1
        outcome is at most 1, and at 4-12 pairs far apart ``U + z se`` reached 1.3).

        >>> e = DebiasedECE(u=0.04, se=0.01, plugin=0.2, chance=0.1, n=90, n_clusters=30)
        >>> [round(x, 4) for x in e.interval(0.9)]  # sqrt(0.04 ± 1.6449 · 0.01)
        [0.1535, 0.2376]
        >>> e4 = DebiasedECE(u=0.04, se=0.01, plugin=0.2, chance=0.1, n=90, n_clusters=30, df=4)
        >>> [round(x, 4) for x in e4.interval(0.9)]  # t_4(0.95) = 2.1318
        [0.1367, 0.2476]
        """
        q = 0.5 + level / 2
        z = float(ndtri(q)) if math.isinf(self.df) else float(scipy.stats.t.ppf(q, self.df))
        lo, hi = self.u - z * self.se, self.u + z * self.se
        return math.sqrt(min(max(lo, 0.0), 1.0)), math.sqrt(min(max(hi, 0.0), 1.0))

    def root_se(self) -> float:
        """The standard error of the calibration error itself, on the estimate's scale
        (``se`` is the squared error's): the standard deviation of ``sqrt(X)``, ``X`` the
        normal ``N(U, se²)`` the interval comes from, clamped to ``[0, 1]`` as its ends
        are. Where ``U`` is many ``se`` above 0 it is the delta method's ``se / (2 √U)``;
        near 0 it stays finite, and positive wherever ``se`` is (a whole interval of the
        squared error below 0 reads 0.00 [0.00, 0.00] with a positive one)."""
        if not self.se > 0:
            return 0.0
        u, se = self.u, self.se
        above = float(scipy.stats.norm.sf((1.0 - u) / se))  # X > 1 reads 1

        def density(x: float) -> float:
            """``scipy.stats.norm.pdf(x, u, se)``, its operations in its order, without
            its per-call argument checks (a hundredfold slower: quad calls it ~250 times
            an integral)."""
            z = (x - u) / se
            return float(np.exp(-(z * z) / 2.0)) / _SQRT_2PI / se

        def moment(k: float) -> float:
            inside = [x for x in (u - 8 * se, u, u + 8 * se) if 0.0 < x < 1.0]
            value, _ = scipy.integrate.quad(
                lambda x: x**k * density(x), 0.0, 1.0, points=inside or None, limit=200
            )
            return float(value) + above

        mean = moment(0.5)
        return math.sqrt(max(moment(1.0) - mean**2, 0.0))


def _u_stat(
    s: FloatArray, d: FloatArray, nb: FloatArray, m2: FloatArray, n: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """``U`` over the last axis (bins) and its weights ``a_b = n_b / (n (n_b² - Σ m²))``."""
    den = nb**2 - m2
    ok = den > 0
    a = np.where(ok, nb / (np.asarray(n)[..., None] * np.where(ok, den, 1.0)), 0.0)
    return (a * (s**2 - d)).sum(axis=-1), a


def debiased_ece(
    p: FloatArray,
    y: FloatArray,
    clusters: NDArray[np.intp],
    *,
    bins: int = BINS,
    seed: int | None = 0,
    chance_draws: int = 200,
) -> DebiasedECE:
    """The debiased calibration error of probabilities ``p`` against 0/1 outcomes ``y``
    (rows with both), prompts ``clusters`` (codes 0..k-1): module docstring.

    >>> p = np.array([0.05, 0.15, 0.95, 0.91, 0.55, 0.52])
    >>> e = debiased_ece(p, np.array([0.0, 0.0, 1.0, 1.0, 0.0, 1.0]), np.arange(6))
    >>> # bins 0 and 1 hold one pair each: no product of two prompts, weight 0
    >>> # bin 9: S = -0.05 - 0.09 = -0.14, a = 2 / (6 (2² - 2)): (0.0196 - 0.0106) / 6
    >>> # bin 5: S = 0.55 - 0.48 = 0.07: (0.0049 - 0.3025 - 0.2304) / 6 -> U = -0.0865
    >>> # plug-in: (0.05 + 0.15 + 0.14 + 0.07) / 6
    >>> round(e.u, 6), round(e.plugin, 4)
    (-0.0865, 0.0683)
    """
    ok = _used(p, y)
    p, y, cl = p[ok], y[ok], np.unique(clusters[ok], return_inverse=True)[1]
    n_c = int(cl.max()) + 1 if len(cl) else 0
    b = _bins(p, bins)
    x = np.zeros((n_c, bins))
    m = np.zeros((n_c, bins))
    np.add.at(x, (cl, b), p - y)
    np.add.at(m, (cl, b), 1.0)
    nb, s, d, m2 = m.sum(0), x.sum(0), (x**2).sum(0), (m**2).sum(0)
    n = float(nb.sum())
    u, a = _u_stat(s, d, nb, m2, np.asarray(n))
    u_j, _ = _u_stat(s - x, d - x**2, nb - m, m2 - m**2, n - m.sum(1))
    delta = u_j - u_j.mean()
    v_j = (n_c - 1) / n_c * float((delta**2).sum()) if n_c > 1 else math.nan
    x2 = x**2
    v_q = 2.0 * float((a**2 * (x2.sum(0) ** 2 - (x2**2).sum(0))).sum())
    var = max(v_j - v_q / 2, v_j / 4, 0.75 * v_q)
    rng = np.random.default_rng(seed)
    chance = 0.0
    if len(p):
        # the draws in the order of p (rows of one p are alike: one bin), not of the
        # rows: one table sorted another way is the same chance_ece
        order = np.argsort(p, kind="stable")
        ps, bs = p[order], b[order]
        draws = (rng.random((chance_draws, len(ps))) < ps).astype(float)
        onehot = np.zeros((len(ps), bins))
        onehot[np.arange(len(ps)), bs] = 1.0
        chance = float(np.abs((ps - draws) @ onehot).sum(axis=1).mean() / n)
    plugin = float(np.abs(s).sum() / n) if n else math.nan
    lone = int(nb[(nb > 0) & (nb**2 - m2 <= 0)].sum())
    df = effective_df(delta) if n_c > 1 else math.inf
    return DebiasedECE(float(u), math.sqrt(var), plugin, chance, int(n), n_c, lone, df)


def effective_df(delta: FloatArray) -> float:
    """Satterthwaite's degrees of freedom of a jackknife variance ``Σ_c δ_c²`` over ``G``
    prompts, ``(Σ λ_c)² / Σ λ_c²`` for ``δ_c ~ N(0, λ_c)``, read off the ``δ`` with
    ``E δ⁴ = 3 λ²``: ``Σ λ² ≈ Σ δ⁴ / 3`` and ``(Σ λ)² ≈ (Σ δ²)² − 2 Σ λ²``, so ::

        ν = 3 (Σ_c δ_c²)² / Σ_c δ_c⁴ − 2      within [1, G − 1]

    About ``G − 1`` for normal ``δ`` alike (the sample variance's), about ``k`` where
    ``k`` prompts carry the variance (1 where one does). The plug-in ``(Σ δ²)² / Σ δ⁴ −
    1``, each prompt's share read off its own ``δ_c²``, is a third of that for normal
    ``δ`` (``G / 3 − 1``): 12 prompts of 5 pairs, a judge 0.05 off, held 0.978 (this:
    0.961).

    >>> effective_df(np.array([2.0, 2.0, -2.0, -1.0, -1.0]))  # 3 · 14² / 50 − 2 = 9.76
    4.0
    >>> round(effective_df(np.array([4.0, 1.0, -1.0, 0.5, -0.5])), 4)  # 3 · 18.5² / 258.125 − 2
    1.9777
    >>> effective_df(np.array([5.0, 0.0, 0.0, 0.0]))  # one prompt carries it all
    1.0
    """
    d2 = np.asarray(delta, dtype=float) ** 2
    top = float(max(d2.size - 1, 1))
    total = float(d2.sum())
    if not total > 0:
        return top
    return min(max(3.0 * total**2 / float((d2**2).sum()) - 2.0, 1.0), top)


#: the ECE's interval in words (its method, and the audit's note on its intervals): not
#: a bootstrap
ECE_INTERVAL = (
    "Student interval on the squared scale, jackknife over prompts (Satterthwaite's "
    "degrees of freedom of its variance)"
)


def ece_results(
    pairs: pd.DataFrame,
    codes: NDArray[np.intp],
    labels: tuple[str, ...],
    *,
    column: str = "p_a",
    bins: int = BINS,
    boot: Resampling = Resampling(),
    min_n: int = 10,
    name: str = "calibration_ece",
) -> tuple[list[MetricResult], list[Skipped]]:
    """The debiased calibration error of ``column`` per judge (``codes`` into ``labels``);
    a judge with fewer than ``min_n`` usable pairs or fewer than 2 prompts is skipped."""
    if int(bins) != bins or bins < 1:
        raise ConfigError(f"bins must be a positive integer; got {bins!r}")
    p_all = pairs[column].to_numpy(float)
    y_all = outcomes(pairs)
    prompts = pd.factorize(clusters_of(pairs))[0]
    results: list[MetricResult] = []
    skipped: list[Skipped] = []
    method = (
        f"debiased calibration error of {column}: {bins} equal-width bins, sqrt of the "
        "U-statistic over prompts of the squared gap between stated probability and "
        "outcome (Kumar et al. 2019), y = human label as 0/1 (ties left out); "
        f"{percent(boot.level)} {ECE_INTERVAL}"
    )
    for g, label in enumerate(labels):
        mine = codes == g
        used = mine & _used(p_all, y_all)
        k = int(used.sum())
        n_prompts = int(np.unique(prompts[used]).size)
        if k < max(min_n, 1) or n_prompts < 2:
            why = (
                f"{counted(k, 'pairs with a human preference and a probability')}, "
                f"{counted(n_prompts, 'prompts')}; the calibration error needs "
                f"{counted(max(min_n, 1), 'pairs')} and 2 prompts"
                if k
                else "no pairs with a human preference and a probability"
            )
            skipped.append(Skipped(name, str(label), why))
            continue
        e = debiased_ece(p_all[mine], y_all[mine], prompts[mine], bins=bins, seed=boot.seed)
        if e.lone == e.n:
            skipped.append(Skipped(name, str(label), (
                f"no probability bin holds pairs of two prompts ({counted(e.n, 'pairs')} "
                f"over {counted(e.n_clusters, 'prompts')}, each bin's from one prompt): the "
                "debiased calibration error compares pairs of different prompts within a "
                "bin, and here it has none to compare"
            )))  # fmt: skip
            continue
        lo, hi = e.interval(boot.level)
        warnings = []
        if e.lone:
            warnings.append(
                f"{e.lone:,} of {counted(e.n, 'pairs')} {'lies' if e.lone == 1 else 'lie'} in "
                "probability bins whose pairs "
                "all come from one prompt: the debiased error has no two prompts there to "
                "compare and reads those bins as calibrated (their gap is in the plug-in "
                "ECE, not in the estimate)"
            )
        if e.n_clusters < FEW_CLUSTERS:
            warnings.append(
                f"only {counted(e.n_clusters, 'prompts')}: the interval is unreliable "
                f"(it needs {FEW_CLUSTERS} or more) — add prompts"
            )
        if hi == 0.0:
            warnings.append(
                "the whole interval of the squared error lies below 0: the labels follow "
                "the probabilities at least as closely as chance predicts for a "
                "calibrated judge — consistent with calibration, not a measured 0"
            )
        if e.n < LOW_N:
            warnings.append(
                f"low n: only {counted(e.n, 'pairs')} (under {LOW_N}); read the interval as rough"
            )
        results.append(
            MetricResult(
                metric=name,
                estimate=math.sqrt(max(e.u, 0.0)),
                ci_low=lo,
                ci_high=hi,
                level=boot.level,
                n=e.n,
                n_clusters=e.n_clusters,
                method=method,
                judge=str(label),
                counts={"pairs": e.n},
                components={
                    "squared_error": e.u,
                    "squared_error_se": e.se,
                    "ece_plugin": e.plugin,
                    "chance_ece": e.chance,
                },
                # the estimate's scale, not the squared error's; times t_ν/z, as the
                # interval reads t_ν: z · std_error its (root's) half-width, for the gate's
                # projection and the detectable size (student_error)
                std_error=student_error(
                    e.root_se(), df=None if math.isinf(e.df) else e.df, level=boot.level
                ),
                warnings=tuple(warnings),
                bound="floor",  # an error, at least 0: no signed difference
            )
        )
    return results, skipped


def brier_spec(
    pairs: pd.DataFrame,
    codes: NDArray[np.intp],
    labels: tuple[str, ...],
    *,
    column: str = "p_a",
    name: str = "calibration_brier",
) -> MetricSpec:
    """Brier score ``mean((p - y)²)`` of ``column`` against the 0/1 human label, per judge."""
    p = pairs[column].to_numpy(float)
    y = outcomes(pairs)
    used = _used(p, y)
    sq = np.where(used, (np.nan_to_num(p) - np.nan_to_num(y)) ** 2, 0.0)
    stat = GroupedStatistic(
        name=name,
        values=np.column_stack([sq, used.astype(float)]),
        group=np.where(used, codes, -1),
        labels=labels,
        combine=ratio,
        required=((1, "pairs with a human preference and a probability"),),
    )
    method = f"Brier score of {column}: mean of (p - y)^2, y = human label as 0/1 (ties left out)"
    return MetricSpec(name, stat, method, bound="floor")  # a mean square, at least 0


def expected_calibration_error(
    pairs: pd.DataFrame,
    *,
    judge: str | None = None,
    column: str = "p_a",
    bins: int = BINS,
    boot: Resampling = Resampling(),
    min_n: int = 10,
) -> MetricResult:
    """Debiased calibration error of the judge's probabilities (``column``), equal-width
    bins, with the plug-in ECE and a calibrated judge's plug-in ECE as components
    (module docstring). Of ``boot``, the level sets the interval and the seed the
    calibrated judge's simulated outcomes; ``n_boot`` is unused (the interval is the
    jackknife's, not the bootstrap's). No p-value (a quality score).

    >>> t = pd.DataFrame({"item_id": list("abcd"), "prompt_id": list("abcd"), "judge": "j",
    ...     "human": [1.0, 0.0, 1.0, 1.0], "p_a": [0.95, 0.91, 0.15, 0.05]})
    >>> # plug-in, bins 9: (0.95 - 1) + (0.91 - 0) = 0.86; 1: 0.15 - 1; 0: 0.05 - 1 -> 2.66 / 4
    >>> round(expected_calibration_error(t, min_n=1).components["ece_plugin"], 4)
    0.665
    """
    check_min_n(min_n)
    rows = single_judge(pairs, judge)
    codes, labels = judge_codes(rows, None)
    results, skipped = ece_results(
        rows, codes, labels, column=column, bins=bins, boot=boot, min_n=min_n
    )
    if skipped:
        raise EstimationError(
            f"cannot estimate the calibration error of {column}: {skipped[0].reason} — "
            + the_fix(skipped[0].reason)
        )
    return results[0]


def brier_score(
    pairs: pd.DataFrame,
    *,
    judge: str | None = None,
    column: str = "p_a",
    boot: Resampling = Resampling(),
    min_n: int = 10,
) -> MetricResult:
    """Brier score ``mean((p - y)²)`` of the judge's probabilities (module docstring);
    no p-value (a quality score)."""
    check_min_n(min_n)
    rows = single_judge(pairs, judge)
    codes, labels = judge_codes(rows, None)
    spec = brier_spec(rows, codes, labels, column=column)
    # no p-value: the spec's bound (a floor of 0 is not a value a test rejects)
    return run_one(spec, clusters_of(rows), boot=boot, min_n=min_n)


def reliability_table(
    p: FloatArray | pd.Series, y: FloatArray | pd.Series, *, bins: int = BINS
) -> pd.DataFrame:
    """Per equal-width bin: ``bin_low, bin_high, n, mean_p, observed`` (share with y = 1)."""
    pv, yv = np.asarray(p, dtype=float), np.asarray(y, dtype=float)
    ok = _used(pv, yv)
    b = _bins(pv[ok], bins)
    n = np.bincount(b, minlength=bins).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_p = np.bincount(b, weights=pv[ok], minlength=bins) / n
        obs = np.bincount(b, weights=yv[ok], minlength=bins) / n
    edges = np.arange(bins + 1) / bins  # 3 / 10 = 0.3; linspace wrote 0.30000000000000004
    return pd.DataFrame(
        {"bin_low": edges[:-1], "bin_high": edges[1:], "n": n.astype(int), "mean_p": mean_p,
         "observed": obs}
    )  # fmt: skip


# ------------------------------------------------------------------ recalibration


def isotonic_fit(x: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Non-decreasing fit of ``y`` on ``x``: the distinct ``x`` and their fitted values."""
    from scipy.optimize import isotonic_regression

    ux, inv = np.unique(x, return_inverse=True)
    w = np.bincount(inv).astype(float)
    mean_y = np.bincount(inv, weights=y) / w
    fitted = isotonic_regression(mean_y, weights=w, increasing=True).x
    return ux, np.asarray(fitted, dtype=float)


def _logit(p: FloatArray) -> FloatArray:
    q = np.clip(p, _EPS, 1 - _EPS)
    return np.asarray(np.log(q / (1 - q)), dtype=float)


def _fit_predict(
    method: Recalibration, p_fit: FloatArray, y_fit: FloatArray, p_new: FloatArray, who: str
) -> FloatArray:
    if len(p_fit) < MIN_FIT or np.unique(y_fit).size < 2:
        raise EstimationError(
            f"{who}: a recalibration fold has {len(p_fit)} labelled pairs "
            f"({int(y_fit.sum())} preferring a); cross-fitting needs at least {MIN_FIT} "
            "with both outcomes in every training fold — add data or use fewer folds"
        )
    if method == "isotonic":
        ux, fitted = isotonic_fit(p_fit, y_fit)
        return np.asarray(np.interp(p_new, ux, fitted), dtype=float)
    import statsmodels.api as sm

    x = sm.add_constant(_logit(p_fit), has_constant="add")
    with fit_warnings_hidden():  # perfect separation: the fit's values still apply
        try:
            fit = sm.Logit(y_fit, x).fit(disp=0, maxiter=200)
        except (np.linalg.LinAlgError, ValueError) as exc:
            raise EstimationError(f"{who}: Platt scaling could not be fitted ({exc})") from None
    params = np.asarray(fit.params, dtype=float)
    z = params[0] + params[1] * _logit(p_new)
    return np.asarray(1.0 / (1.0 + np.exp(-z)), dtype=float)


def recalibrate(
    pairs: pd.DataFrame,
    *,
    method: Recalibration = "isotonic",
    folds: int = FOLDS,
    seed: int = 0,
    column: str = "p_a",
    out: str = "p_a_recalibrated",
) -> pd.DataFrame:
    """A copy of ``pairs`` with ``out``: each judge's ``column`` recalibrated, cross-fitted.

    Per judge, its prompts are dealt into ``folds`` folds at random (``seed``); a row's
    value is the map (``method``: isotonic or Platt, module docstring) fitted on the
    labelled rows (human preference, no tie) of the other folds, applied to its
    ``column``. Rows without ``column`` stay NaN. To run any other analysis on the
    recalibrated probabilities, pass ``recalibrated.assign(p_a=recalibrated[out])``
    (``p_a_first`` / ``p_a_second`` keep the raw per-order values).

    >>> from recuse.simulate import simulate_pairs
    >>> sim = simulate_pairs(n_prompts=60, verdicts="prob", seed=0).pairs
    >>> r = recalibrate(sim)
    >>> bool(r["p_a_recalibrated"].between(0, 1).all()), len(r) == len(sim)
    (True, True)
    """
    if method not in ("isotonic", "platt"):
        raise ConfigError(f"method must be 'isotonic' or 'platt'; got {method!r}")
    if not isinstance(folds, int | np.integer) or isinstance(folds, bool) or folds < 2:
        raise ConfigError(f"folds must be an integer of at least 2; got {folds!r}")
    if column not in pairs.columns:
        raise ConfigError(f"the table has no column {column!r} to recalibrate")
    result = pairs.copy()
    values = np.full(len(pairs), np.nan)
    p_all = pairs[column].to_numpy(float)
    y_all = outcomes(pairs)
    judges = (
        pairs["judge"].astype(object).fillna("").astype(str).to_numpy()
        if "judge" in pairs.columns
        else np.full(len(pairs), "", dtype=object)
    )
    prompts = clusters_of(pairs).astype(str)
    for judge in pd.unique(judges):
        has_p = (judges == judge) & np.isfinite(p_all)
        if not has_p.any():
            continue
        names = np.unique(prompts[has_p].to_numpy())
        order = np.random.default_rng(seed).permutation(len(names))
        # more folds than prompts: a fold per prompt (10**30 is no int64 divisor)
        fold_of = pd.Series(np.arange(len(names)) % min(folds, len(names)), index=names[order])
        fold = prompts.map(fold_of).fillna(-1).to_numpy(int)
        labelled = has_p & np.isfinite(y_all)
        who = f"judge {judge!r}"
        for k in np.unique(fold[has_p]):  # the folds that hold rows (not range(10**9))
            target = has_p & (fold == k)
            train = labelled & (fold != k)
            values[target] = _fit_predict(method, p_all[train], y_all[train], p_all[target], who)
    result[out] = values
    return result
