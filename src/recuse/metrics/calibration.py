"""Calibration of a judge's probabilities against the human label, and recalibration.

A judge that gives probabilities (``p_a``: its probability that a is better, Eq. 3
of the self-preference paper averaged over the orders judged) is calibrated when,
among pairs it gives probability ``p``, the humans prefer a a share ``p`` of the
time. The outcome is the human label as 0/1 (``y = 1`` when ``human > 0.5``, 0 when
``< 0.5``); human ties and unlabelled pairs are left out.

* expected calibration error, ``bins`` equal-width bins of ``p`` (10 by default:
  [0, 0.1), [0.1, 0.2), …, [0.9, 1.0])::

      ECE = Σ_b (n_b / n) |mean_b(p) - mean_b(y)| = (1/n) Σ_b |Σ_{i in b} (p_i - y_i)|

  0 = perfectly calibrated (on these bins); finite samples push it above 0.
* Brier score ``= mean((p - y)²)``; 0 = perfect, 0.25 = always saying 0.5.

Both are functions of sums over pairs, so their intervals come from the
prompt-clustered bootstrap (:mod:`recuse.metrics.bootstrap`).

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

from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from recuse.errors import ConfigError, EstimationError
from recuse.metrics.bootstrap import N_BOOT, GroupedStatistic, check_options, ratio
from recuse.metrics.estimate import MetricSpec, clusters_of, run_one
from recuse.metrics.result import MetricResult
from recuse.metrics.self_preference import single_judge
from recuse.metrics.verdicts import TIE_TOL, judge_codes

__all__ = [
    "Recalibration",
    "brier_score",
    "brier_spec",
    "ece_spec",
    "expected_calibration_error",
    "gives_probabilities",
    "outcomes",
    "recalibrate",
    "reliability_table",
]

FloatArray = NDArray[np.float64]
Recalibration = Literal["isotonic", "platt"]
BINS = 10
FOLDS = 5
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


def _bins(p: FloatArray, bins: int) -> NDArray[np.intp]:
    return np.clip(np.floor(np.nan_to_num(p) * bins), 0, bins - 1).astype(np.intp)


def _ece_combine(s: FloatArray) -> FloatArray:
    """``Σ_b |s_b| / s_last``: the ECE from per-bin sums of ``p - y`` and the count."""
    n = s[..., -1]
    total = np.abs(s[..., :-1]).sum(axis=-1)
    out = np.full(np.shape(n), np.nan)
    np.divide(total, n, out=out, where=n != 0)
    return out


def _used(p: FloatArray, y: FloatArray) -> NDArray[np.bool_]:
    return np.isfinite(p) & np.isfinite(y)


def ece_spec(
    pairs: pd.DataFrame,
    codes: NDArray[np.intp],
    labels: tuple[str, ...],
    *,
    column: str = "p_a",
    bins: int = BINS,
    name: str = "calibration_ece",
) -> MetricSpec:
    """Expected calibration error of ``column`` against the 0/1 human label, per judge."""
    if int(bins) != bins or bins < 1:
        raise ConfigError(f"bins must be a positive integer; got {bins!r}")
    p = pairs[column].to_numpy(float)
    y = outcomes(pairs)
    used = _used(p, y)
    values = np.zeros((len(pairs), bins + 1))
    values[np.arange(len(pairs)), _bins(p, bins)] = np.where(used, p - y, 0.0)
    values[:, bins] = used
    stat = GroupedStatistic(
        name=name,
        values=values,
        group=np.where(used, codes, -1),
        labels=labels,
        combine=_ece_combine,
        required=((bins, "pairs with a human preference and a probability"),),
    )
    method = (
        f"expected calibration error of {column}: {bins} equal-width bins, "
        "(1/n) sum over bins of |sum(p - y)|, y = human label as 0/1 (ties left out)"
    )
    return MetricSpec(name, stat, method)


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
    return MetricSpec(name, stat, method)


def _one(
    spec_of: str, pairs: pd.DataFrame, judge: str | None, column: str, bins: int,
    level: float, n_boot: int, seed: int | None, min_n: int,
) -> MetricResult:  # fmt: skip
    check_options(level=level, n_boot=n_boot, min_n=min_n)
    rows = single_judge(pairs, judge)
    codes, labels = judge_codes(rows, None)
    if spec_of == "ece":
        spec = ece_spec(rows, codes, labels, column=column, bins=bins)
    else:
        spec = brier_spec(rows, codes, labels, column=column)
    return run_one(spec, clusters_of(rows), level=level, n_boot=n_boot, seed=seed, min_n=min_n)


def expected_calibration_error(
    pairs: pd.DataFrame,
    *,
    judge: str | None = None,
    column: str = "p_a",
    bins: int = BINS,
    level: float = 0.9,
    n_boot: int = N_BOOT,
    seed: int | None = 0,
    min_n: int = 10,
) -> MetricResult:
    """ECE of the judge's probabilities (``column``), equal-width bins (module docstring).

    >>> t = pd.DataFrame({"item_id": list("abcd"), "prompt_id": list("abcd"), "judge": "j",
    ...     "human": [1.0, 0.0, 1.0, 1.0], "p_a": [0.95, 0.91, 0.15, 0.05]})
    >>> # bins 9: (0.95 - 1) + (0.91 - 0) = 0.86; 1: 0.15 - 1; 0: 0.05 - 1 -> 2.66 / 4
    >>> round(expected_calibration_error(t, min_n=1, n_boot=100).estimate, 4)
    0.665
    """
    return _one("ece", pairs, judge, column, bins, level, n_boot, seed, min_n)


def brier_score(
    pairs: pd.DataFrame,
    *,
    judge: str | None = None,
    column: str = "p_a",
    level: float = 0.9,
    n_boot: int = N_BOOT,
    seed: int | None = 0,
    min_n: int = 10,
) -> MetricResult:
    """Brier score ``mean((p - y)²)`` of the judge's probabilities (module docstring)."""
    return _one("brier", pairs, judge, column, BINS, level, n_boot, seed, min_n)


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
    edges = np.linspace(0.0, 1.0, bins + 1)
    return pd.DataFrame(
        {"bin_low": edges[:-1], "bin_high": edges[1:], "n": n.astype(int), "mean_p": mean_p,
         "observed": obs}
    )  # fmt: skip


# ------------------------------------------------------------------ recalibration


def _isotonic(x: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray]:
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
        ux, fitted = _isotonic(p_fit, y_fit)
        return np.asarray(np.interp(p_new, ux, fitted), dtype=float)
    import warnings

    import statsmodels.api as sm

    x = sm.add_constant(_logit(p_fit), has_constant="add")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # perfect separation: the fit's values still apply
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
    if int(folds) != folds or folds < 2:
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
    prompts = pairs["prompt_id"].astype(str)
    for judge in pd.unique(judges):
        has_p = (judges == judge) & np.isfinite(p_all)
        if not has_p.any():
            continue
        names = np.unique(prompts[has_p].to_numpy())
        order = np.random.default_rng(seed).permutation(len(names))
        fold_of = pd.Series(np.arange(len(names)) % folds, index=names[order])
        fold = prompts.map(fold_of).fillna(-1).to_numpy(int)
        labelled = has_p & np.isfinite(y_all)
        who = f"judge {judge!r}"
        for k in range(folds):
            target = has_p & (fold == k)
            if not target.any():
                continue
            train = labelled & (fold != k)
            values[target] = _fit_predict(method, p_all[train], y_all[train], p_all[target], who)
    result[out] = values
    return result
