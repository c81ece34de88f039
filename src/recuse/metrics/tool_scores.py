"""Each tool's own headline number, computed from its judgment files as the tool does.

* **FastChat** (``show_result.py --mode pairwise-*``): per model, over the judge's
  records with a verdict in both games, a **win** when both games name the model, a
  **loss** when both name the other, a **tie** otherwise (a tie in game 1, or games
  that disagree); ``win_rate = win / n``, ``loss_rate = loss / n``,
  ``win_rate_adjusted = (win + tie / 2) / n``, n = win + loss + tie. A record with an
  ``error`` in either game is left out. With a fixed baseline (``pairwise-baseline``:
  one model in every record) the baseline's own row is left out.
* **Arena-Hard-Auto** (``show_result.py``): each game is a battle between the model
  and the baseline, counted ``weight`` times (3) when the verdict is significant
  (``>>``), once otherwise; a game with no verdict is dropped. Upstream fits a
  Bradley–Terry model (logistic regression, one strength per model, ties as half a
  win each) and reports the model's predicted win rate against the baseline, in %.
  Every battle has the baseline on one side, so the fit separates per model and its
  maximum-likelihood win rate is the weighted share

      score_m = 100 · (W_m + T_m / 2) / (W_m + T_m + L_m)

  (W, T, L: weighted wins, ties, losses of m). Its interval: the percentile bootstrap
  over battles (upstream resamples the weighted battle rows, 100 rounds, 95%).
  Style control needs each answer's token, header, list and bold counts from
  Arena-Hard-Auto's ``model_answer/`` files, which the judgment files do not hold.
* **AlpacaEval** (``alpaca_eval`` leaderboard): win rate and length-controlled win
  rate per model against the baseline, per annotator
  (:func:`recuse.metrics.length_controlled.length_controlled_win_rates`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from recuse.errors import EstimationError
from recuse.metrics.bootstrap import N_BOOT, check_options, resample_counts

__all__ = ["SIGNIFICANT_WEIGHT", "arena_hard_battles", "arena_hard_scores", "fastchat_results"]

SIGNIFICANT_WEIGHT = 3  # Arena-Hard-Auto's --weight: battles a ">>" verdict counts as


def fastchat_results(pairs: pd.DataFrame, *, judge: str) -> pd.DataFrame:
    """FastChat's pairwise result table for ``judge``: one row per model with
    ``win``, ``loss``, ``tie``, ``win_rate``, ``loss_rate``, ``win_rate_adjusted``
    (rates in %), sorted by ``win_rate_adjusted`` (formulas in the module docstring).

    ``pairs``: a ``pairs`` table of FastChat judgments (``p_a_first`` from game 1,
    ``p_a_second`` from game 2, each 1 / 0.5 / 0). Raises :class:`EstimationError`
    when the judge has no record with a verdict in both games.
    """
    rows = pairs[(pairs["judge"] == judge)]
    rows = rows[rows["p_a_first"].notna() & rows["p_a_second"].notna()]
    if rows.empty:
        raise EstimationError(f"judge {judge!r} has no record with a verdict in both games")
    first, second = rows["p_a_first"].to_numpy(float), rows["p_a_second"].to_numpy(float)
    a_wins = (first == 1.0) & (second == 1.0)
    b_wins = (first == 0.0) & (second == 0.0)
    tie = ~(a_wins | b_wins)
    a, b = rows["model_a"].astype(str).to_numpy(), rows["model_b"].astype(str).to_numpy()
    tally = pd.DataFrame(
        {
            "model": np.concatenate([a, b]),
            "win": np.concatenate([a_wins, b_wins]).astype(int),
            "loss": np.concatenate([b_wins, a_wins]).astype(int),
            "tie": np.concatenate([tie, tie]).astype(int),
        }
    )
    out = tally.groupby("model", sort=True)[["win", "loss", "tie"]].sum()
    baseline = _in_every_row(a, b)
    if baseline is not None:
        out = out[out.index != baseline]
    n = out["win"] + out["loss"] + out["tie"]
    out["win_rate"] = 100 * out["win"] / n
    out["loss_rate"] = 100 * out["loss"] / n
    out["win_rate_adjusted"] = 100 * (out["win"] + 0.5 * out["tie"]) / n
    out["baseline"] = baseline or ""
    out = out.reset_index().sort_values(["win_rate_adjusted", "model"], ascending=[False, True])
    return out.reset_index(drop=True)


def _in_every_row(a: np.ndarray, b: np.ndarray) -> str | None:
    """The one model on one side or the other of every record (a fixed baseline), or
    None (FastChat's ``pairwise-all``)."""
    common = set(a[:1]) | set(b[:1])
    for x, y in zip(a, b, strict=True):
        common &= {x, y}
    return next(iter(common)) if len(common) == 1 and len(set(a) | set(b)) > 2 else None


def arena_hard_battles(
    pairs: pd.DataFrame, *, judge: str, weight: int = SIGNIFICANT_WEIGHT
) -> pd.DataFrame:
    """Arena-Hard-Auto's battles of ``judge``: one row per game with a verdict, with
    ``model``, ``baseline``, ``outcome`` (1 the model wins, 0.5 tie, 0 it loses) and
    ``weight`` (``weight`` for a significant verdict, else 1).

    ``pairs``: an Arena-Hard ``pairs`` table (a = the model, b = the baseline;
    ``strength_first`` / ``strength_second`` = +2 … −2 for the model)."""
    rows = pairs[pairs["judge"] == judge]
    parts = []
    for column in ("strength_second", "strength_first"):  # game 1, game 2
        s = rows[column].to_numpy(float)
        keep = np.isfinite(s)
        parts.append(
            pd.DataFrame(
                {
                    "model": rows["model_a"].astype(str).to_numpy()[keep],
                    "baseline": rows["model_b"].astype(str).to_numpy()[keep],
                    "outcome": np.sign(s[keep]) / 2 + 0.5,
                    "weight": np.where(np.abs(s[keep]) == 2, weight, 1),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def arena_hard_scores(
    pairs: pd.DataFrame,
    *,
    judge: str,
    level: float = 0.95,
    n_boot: int = N_BOOT,
    seed: int | None = 0,
    weight: int = SIGNIFICANT_WEIGHT,
) -> pd.DataFrame:
    """Arena-Hard-Auto's score of each model judged by ``judge``: its Bradley–Terry win
    rate against the baseline, in %, ``score = 100 (W + T/2) / (W + T + L)`` over the
    weighted battles, with a ``level`` percentile-bootstrap interval over the weighted
    battle rows (``n_boot`` resamples; upstream: 100 resamples, 95%).

    Columns: ``model``, ``baseline``, ``score``, ``score_low``, ``score_high``,
    ``battles`` (weighted), ``games``. Raises :class:`EstimationError` when the judge
    has no game with a verdict, or its rows compare with more than one baseline."""
    check_options(level=level, n_boot=n_boot, min_n=1)
    battles = arena_hard_battles(pairs, judge=judge, weight=weight)
    if battles.empty:
        raise EstimationError(f"judge {judge!r} has no game with a verdict")
    if battles["baseline"].nunique() != 1:
        raise EstimationError(
            f"judge {judge!r} compares with {battles['baseline'].nunique()} baselines; "
            "Arena-Hard-Auto's score is against one"
        )
    rng = np.random.default_rng(seed)
    alpha = (1 - level) / 2
    out = []
    for model, g in battles.groupby("model", sort=True):
        expanded = np.repeat(g["outcome"].to_numpy(float), g["weight"].to_numpy(int))
        score = float(expanded.mean())
        counts = resample_counts(len(expanded), n_boot, rng)
        reps = counts @ expanded / len(expanded)
        lo, hi = np.quantile(reps, [alpha, 1 - alpha])
        out.append(
            {
                "model": str(model),
                "baseline": str(g["baseline"].iloc[0]),
                "score": 100 * score,
                "score_low": 100 * float(lo),
                "score_high": 100 * float(hi),
                "battles": len(expanded),
                "games": len(g),
            }
        )
    return pd.DataFrame(out).sort_values("score", ascending=False).reset_index(drop=True)
