"""AlpacaEval 2's length-controlled win rate, for judges that compare with a fixed baseline.

Per system m (its annotations against the baseline, one per instruction i), a logistic
GLM (statsmodels, binomial family, fractional outcomes) of the judge's probability
that m beats the baseline:

    logit P(m beats baseline) = θ_m + φ_m · tanh(δ_i / sd(δ)) + ψ_m · γ_i

δ_i = characters of the baseline's output − characters of m's output (sd over m's
annotations, not centred), γ_i the instruction's difficulty. The length-controlled
win rate is the model's prediction with no length difference, averaged over the
instructions: LC_m = mean_i σ(θ_m + ψ_m γ_i). The raw win rate is mean_i P_i.

Where this differs from upstream (so a comparison with its leaderboard is honest):

- γ_i is estimated from the annotations at hand — for system m, the instruction's
  mean clipped log-odds ``logit(clip(P, 0.01, 0.99))`` over the judge's *other*
  systems, centred (0, and the term left out, when m is the only system) — whereas
  upstream reads difficulties precomputed on its whole leaderboard;
- no regularisation toward upstream's "gamed" (length-prompted) baselines and no
  cross-validated L1 penalty: a plain maximum-likelihood fit.

Intervals: the one-step cluster bootstrap over instructions of
:mod:`recuse.metrics.bradley_terry` (θ* = θ̂ + H⁻¹ Σ_i (n*_i − 1) u_i).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import stats

from recuse.errors import EstimationError
from recuse.metrics.bootstrap import N_BOOT, check_options, resample_counts
from recuse.metrics.bradley_terry import system_names

__all__ = ["compare_with_upstream", "length_controlled_win_rates"]

UPSTREAM_DIFFERENCES = (
    "instruction difficulty estimated from these annotations, not upstream's precomputed "
    "values; no regularisation toward upstream's gamed baselines; no L1 penalty"
)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.exp(-np.logaddexp(0, -x)), float)


def _length(frame: pd.DataFrame, text: str, words: str) -> np.ndarray:
    if text in frame.columns:
        return frame[text].fillna("").astype(str).str.len().to_numpy(float)
    return frame[words].to_numpy(float)


def length_controlled_win_rates(
    pairs: pd.DataFrame,
    *,
    judge: str,
    level: float = 0.9,
    n_boot: int = N_BOOT,
    seed: int | None = 0,
) -> pd.DataFrame:
    """One row per system judged by ``judge`` against its one baseline (``model_a``):
    raw and length-controlled win rates (in %) with intervals, the length and
    difficulty coefficients, and n. Raises :class:`EstimationError` when the judge's
    rows do not share one baseline."""
    check_options(level=level, n_boot=n_boot, min_n=1)
    rows = pairs[(pairs["judge"] == judge) & pairs["p_a"].notna()]
    if rows.empty:
        raise EstimationError(f"no verdicts of judge {judge!r}")
    baselines = rows["model_a"].unique()
    if len(baselines) != 1:
        raise EstimationError(
            f"judge {judge!r} compares with {len(baselines)} different first systems; the "
            "length-controlled win rate needs one fixed baseline"
        )
    _, system = system_names(rows)
    rows = rows.assign(_system=system.to_numpy(), _y=1.0 - rows["p_a"].to_numpy(float))
    rows = rows[rows["_system"] != str(baselines[0])]
    if rows.empty:
        raise EstimationError(f"judge {judge!r} compares its baseline only with itself")
    clipped = np.clip(rows["_y"].to_numpy(float), 0.01, 0.99)
    logit = pd.Series(np.log(clipped / (1 - clipped)), index=rows.index)
    by_prompt = logit.groupby(rows["prompt_id"])
    total = rows["prompt_id"].map(by_prompt.sum()).to_numpy(float)
    count = rows["prompt_id"].map(by_prompt.count()).to_numpy(float)
    others = np.where(count > 1, (total - logit.to_numpy()) / np.maximum(count - 1, 1), 0.0)
    rows = rows.assign(_gamma=others)  # leave-this-system-out difficulty, centred below
    delta = _length(rows, "response_a", "len_a") - _length(rows, "response_b", "len_b")
    rows = rows.assign(_delta=delta)
    rng = np.random.default_rng(seed)
    alpha = (1 - level) / 2
    out = []
    for name, g in rows.groupby("_system", sort=True):
        y = g["_y"].to_numpy(float)
        sd = float(np.std(g["_delta"].to_numpy(float), ddof=1)) if len(g) > 1 else 0.0
        tl = np.tanh(g["_delta"].to_numpy(float) / sd) if sd > 0 else np.zeros(len(g))
        gamma = g["_gamma"].to_numpy(float)
        gamma = gamma - gamma.mean()
        x = np.column_stack([np.ones(len(g)), tl, gamma])
        if not np.any(gamma != 0):
            x = x[:, :2]  # no other system: no difficulty term
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "perfect separation" is spurious for fractional y
            fit = sm.GLM(y, x, family=sm.families.Binomial()).fit()
        theta = np.asarray(fit.params, float)
        p = np.asarray(fit.fittedvalues, float)
        codes, uniques = pd.factorize(g["prompt_id"])
        u = np.zeros((len(uniques), x.shape[1]))
        np.add.at(u, codes, x * (y - p)[:, None])
        info = (x * (p * (1 - p))[:, None]).T @ x
        reps = (
            theta + (resample_counts(len(uniques), n_boot, rng) - 1.0) @ u @ np.linalg.pinv(info).T
        )
        psi, psi_reps = (
            (theta[2], reps[:, [2]]) if x.shape[1] == 3 else (0.0, np.zeros((n_boot, 1)))
        )
        lc = float(_sigmoid(theta[0] + psi * gamma).mean())
        lc_reps = _sigmoid(reps[:, [0]] + psi_reps * gamma[None, :]).mean(axis=1)
        counts = resample_counts(len(uniques), n_boot, rng)
        sums, ns = np.bincount(codes, y), np.bincount(codes).astype(float)
        raw_reps = (counts @ sums) / (counts @ ns)
        lo, hi = np.quantile(lc_reps, [alpha, 1 - alpha])
        rlo, rhi = np.quantile(raw_reps, [alpha, 1 - alpha])
        out.append(
            {
                "system": str(name),
                "baseline": str(baselines[0]),
                "win_rate": 100 * float(y.mean()),
                "win_rate_low": 100 * float(rlo),
                "win_rate_high": 100 * float(rhi),
                "lc_win_rate": 100 * lc,
                "lc_win_rate_low": 100 * float(lo),
                "lc_win_rate_high": 100 * float(hi),
                "length_coefficient": float(theta[1]),
                "difficulty_coefficient": float(psi),
                "n": len(g),
            }
        )
    return pd.DataFrame(out)


def compare_with_upstream(ours: pd.DataFrame, upstream: pd.DataFrame) -> dict[str, object]:
    """Spearman's ρ and the largest absolute difference between our and upstream's
    win rates (raw and length-controlled, in points) over the systems in both.

    ``upstream``: columns ``system``, ``win_rate``, ``length_controlled_winrate``.
    """
    both = ours.merge(upstream, on="system", suffixes=("", "_upstream"))
    if len(both) < 3:
        raise EstimationError("fewer than 3 systems in common with the upstream leaderboard")
    lc_diff = (both["lc_win_rate"] - both["length_controlled_winrate"]).abs()
    raw_diff = (both["win_rate"] - both["win_rate_upstream"]).abs()
    worst = int(lc_diff.to_numpy().argmax())
    return {
        "systems": len(both),
        "lc_spearman": float(
            stats.spearmanr(both["lc_win_rate"], both["length_controlled_winrate"]).statistic
        ),
        "lc_max_abs_diff": float(lc_diff.max()),
        "lc_max_abs_diff_system": str(both["system"].iloc[worst]),
        "raw_spearman": float(
            stats.spearmanr(both["win_rate"], both["win_rate_upstream"]).statistic
        ),
        "raw_max_abs_diff": float(raw_diff.max()),
        "not_in_our_data": UPSTREAM_DIFFERENCES,
        "table": both,
    }
