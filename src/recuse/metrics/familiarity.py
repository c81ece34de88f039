"""Familiarity: does the judge's verdict move with the perplexity of the responses?

Section 5 of the self-preference paper (self-preference-bias.txt, Figures 3–5). The
``pairs`` table carries ``ppl_a`` / ``ppl_b``, the perplexity of each response given
its prompt under the row's judge (:mod:`recuse.judging.perplexity`). Everything here works
on the log-perplexity difference::

    d = log ppl_a - log ppl_b      (nats per token; d < 0: a is the more familiar)

Rows without both perplexities (or with a perplexity <= 0) are left out and counted.

* :func:`perplexity_curve` (Figure 3): the win rate of response a by bin of ``d``,
  for the judge and for the human labels on the same rows, with per-bin ``n`` and
  cluster-bootstrap intervals.
* :func:`perplexity_curve_by_self` (Figure 4): the same, split into pairs that
  contain the judge's own response (oriented so that a is the judge's own, as in
  the paper) and pairs that do not.
* :func:`own_perplexity_gap` / :func:`log_perplexity_by_model` (Figure 5): mean
  log-perplexity of the judge's own responses vs the other models' responses.
* :func:`familiarity_bias` / :func:`familiarity_summary`: one number per judge with
  an interval, for ranking judges. With fractional-logit fits of the judge's
  verdict and of the human label on ``d``::

      logit E[judge verdict for a | d] = alpha_J + beta_J * d
      logit E[human label for a  | d] = alpha_H + beta_H * d
      familiarity_bias = beta_H - beta_J

  Positive: the judge's preference moves toward the lower-perplexity response more
  than the humans' does (by that many log-odds per nat of log-perplexity
  difference); 0: as much as the humans'. The interval is a percentile cluster
  bootstrap over prompts (the judge and human fits share each resample).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from recuse.errors import ConfigError, EstimationError, InputError
from recuse.metrics.bootstrap import (
    GroupedStatistic,
    Resampling,
    check_min_n,
    cluster_bootstrap,
    counted,
    difference_of_ratios,
    ratio,
    resample_counts,
)
from recuse.metrics.estimate import MetricSpec, clusters_of, run_specs
from recuse.metrics.perplexity import log_perplexity, log_perplexity_difference
from recuse.metrics.result import MetricResult, Skipped
from recuse.metrics.self_preference import favored_side, single_judge
from recuse.metrics.verbosity import curve_statistic
from recuse.metrics.verdicts import (
    JudgeTies,
    Verdict,
    check_modes,
    judge_codes,
    judge_score,
    orient,
)
from recuse.numbers import percent
from recuse.roster import self_keys

__all__ = [
    "CURVE_COLUMNS",
    "familiarity_bias",
    "familiarity_summary",
    "fit_logit_slopes",
    "log_perplexity_by_model",
    "log_perplexity_difference",
    "own_perplexity_gap",
    "perplexity_bins",
    "perplexity_curve",
    "perplexity_curve_by_self",
]

FloatArray = NDArray[np.float64]

CURVE_COLUMNS = [
    "judge", "rater", "bin_low", "bin_high", "n", "n_clusters", "mean", "sd",
    "ci_low", "ci_high", "note",
]  # fmt: skip


# --- inputs -------------------------------------------------------------------------


def perplexity_bins(width: float = 0.25, max_abs: float = 1.0) -> FloatArray:
    """Bin edges of ``d``: ``-inf, -max_abs, -max_abs + width, ..., max_abs, +inf``.

    >>> perplexity_bins(0.5, 1.0).tolist()
    [-inf, -1.0, -0.5, 0.0, 0.5, 1.0, inf]
    """
    if not width > 0 or not max_abs > 0:
        raise ConfigError("bin width and max_abs must be > 0")
    k = int(np.ceil(round(2 * max_abs / width, 9)))
    inner = np.round(-max_abs + width * np.arange(k + 1), 10)
    return np.concatenate([[-np.inf], inner, [np.inf]])


def _check_edges(edges: Sequence[float] | FloatArray) -> FloatArray:
    e = np.asarray(edges, dtype=float)
    if e.ndim != 1 or len(e) < 2 or np.isnan(e).any() or not (np.diff(e) > 0).all():
        raise ConfigError("bin edges must be an increasing sequence of at least two numbers")
    return e


def _judge_y(pairs: pd.DataFrame, verdict: Verdict, judge_ties: JudgeTies) -> FloatArray:
    return judge_score(pairs["p_a"].to_numpy(float), verdict=verdict, judge_ties=judge_ties)


# --- Figures 3 and 4: binned win rates ---------------------------------------------------


def _curve_frame(
    stat: GroupedStatistic, estimates: Sequence[Any], edges: FloatArray
) -> pd.DataFrame:
    rows = []
    for glabel, est in zip(stat.labels, estimates, strict=True):
        label, b = cast(tuple[tuple[tuple[str, str], ...], int], glabel)
        n = int(est.n)
        if n == 0:
            continue
        t = est.totals
        mean = t[0] / t[1]
        var = max(t[2] - t[1] * mean * mean, 0.0) / (t[1] - 1) if n > 1 else np.nan
        rows.append(
            {
                **dict(label),
                "bin_low": float(edges[b]),
                "bin_high": float(edges[b + 1]),
                "n": n,
                "n_clusters": int(est.n_clusters),
                "mean": float(mean),
                "sd": float(np.sqrt(var)),
                "ci_low": est.ci_low,
                "ci_high": est.ci_high,
                "note": est.problem or "",
            }
        )
    return pd.DataFrame(rows)


def _stacked_curve(
    name: str,
    rows: pd.DataFrame,
    x: FloatArray,
    ys: Sequence[tuple[tuple[tuple[str, str], ...], FloatArray, NDArray[np.intp], tuple[str, ...]]],
    edges: FloatArray,
    *,
    boot: Resampling,
    min_n: int,
) -> pd.DataFrame:
    """Curves of several ``y`` over the same rows, bootstrapped together.

    Each entry of ``ys`` is ``(extra label fields, y, judge codes, judge labels)``;
    the rows are stacked so one set of prompt resamples serves every curve.
    """
    xs: list[FloatArray] = []
    yy: list[FloatArray] = []
    codes: list[NDArray[np.intp]] = []
    labels: list[Any] = []
    offset = 0
    for extra, y, c, judges in ys:
        xs.append(x)
        yy.append(y)
        codes.append(np.where(c >= 0, c + offset, -1))
        labels.extend(tuple(sorted({"judge": j, **dict(extra)}.items())) for j in judges)
        offset += len(judges)
    clusters = np.tile(clusters_of(rows), len(ys))
    stat = curve_statistic(
        name,
        np.concatenate(xs),
        np.concatenate(yy),
        np.concatenate(codes).astype(np.intp),
        tuple(labels),
        edges,
    )
    if not (stat.group >= 0).any():
        raise EstimationError(
            f"{name}: no usable pairs (perplexities, verdicts or human labels are missing)"
        )
    est = cluster_bootstrap([stat], clusters, boot=boot, min_n=min_n)
    return _curve_frame(stat, est[0], edges)


def perplexity_curve(
    pairs: pd.DataFrame,
    *,
    judge: str | Sequence[str] | None = None,
    edges: Sequence[float] | FloatArray | None = None,
    verdict: Verdict = "prob",
    judge_ties: JudgeTies = "half",
    boot: Resampling = Resampling(),
    min_n: int = 5,
) -> pd.DataFrame:
    """Figure 3: win rate of response a by bin of ``d = log ppl_a - log ppl_b``.

    For every judge (``judge=None``: all), two curves over the same rows (those with
    both perplexities, a judge verdict and a human label): ``rater="judge"`` is the
    mean verdict for a (``p_a``, or picks with ``verdict="pick"``), ``rater="human"``
    the mean human label (P(a better), a tie counts 0.5). Per bin: ``n``, the number
    of prompts, mean, sd and a BCa cluster-bootstrap interval (the project's default;
    every prompt of the table is resampled, so a bin's pair count varies between
    resamples; NaN with a ``note`` under ``min_n`` pairs). ``edges`` default to
    :func:`perplexity_bins`.

    >>> from recuse.tables import validate_pairs
    >>> t = validate_pairs(pd.DataFrame({
    ...     "item_id": list("abcd"), "prompt_id": list("abcd"), "model_a": None,
    ...     "model_b": None, "judge": "j", "human": [1, 0, 1, 1],
    ...     "p_a_first": [1, 1, 0, 0], "p_a_second": None, "p_a": None,
    ...     "ppl_a": [2, 2, 8, 8], "ppl_b": [8, 8, 2, 2]}))
    >>> c = perplexity_curve(t, edges=[-5, 0, 5], min_n=1, boot=Resampling(n_boot=50))
    >>> c[["rater", "bin_low", "n", "mean"]].values.tolist()  # doctest: +NORMALIZE_WHITESPACE
    [['judge', -5.0, 2, 1.0], ['judge', 0.0, 2, 0.0],
     ['human', -5.0, 2, 0.5], ['human', 0.0, 2, 1.0]]
    """
    check_min_n(min_n)
    check_modes(verdict=verdict, judge_ties=judge_ties)
    e = perplexity_bins() if edges is None else _check_edges(edges)
    codes, labels = judge_codes(pairs, judge)
    d = log_perplexity_difference(pairs)
    yj = _judge_y(pairs, verdict, judge_ties)
    yh = pairs["human"].to_numpy(float)
    both = np.isfinite(yj) & np.isfinite(yh) & np.isfinite(d)
    c = np.where(both, codes, -1).astype(np.intp)
    frame = _stacked_curve(
        "perplexity_curve",
        pairs,
        d,
        [((("rater", "judge"),), yj, c, labels), ((("rater", "human"),), yh, c, labels)],
        e,
        boot=boot,
        min_n=min_n,
    )
    return _order(frame, ["judge", "rater", *CURVE_COLUMNS[2:]], labels)


def _order(frame: pd.DataFrame, columns: list[str], labels: tuple[str, ...]) -> pd.DataFrame:
    frame = frame[columns].copy()
    rank = {j: i for i, j in enumerate(labels)}
    frame["judge_rank"] = frame["judge"].map(rank)
    order = {"judge": 0, "human": 1, "own": 0, "other": 1}
    for k in ("subset", "rater"):
        if k in columns:
            frame[k + "_rank"] = frame[k].map(order)
    sort_cols = ["judge_rank", *[k + "_rank" for k in ("subset", "rater") if k in columns]]
    frame = frame.sort_values([*sort_cols, "bin_low"], kind="stable")
    return frame.drop(columns=[c for c in frame.columns if c.endswith("_rank")]).reset_index(
        drop=True
    )


def perplexity_curve_by_self(
    pairs: pd.DataFrame,
    *,
    judge: str | Sequence[str] | None = None,
    edges: Sequence[float] | FloatArray | None = None,
    verdict: Verdict = "prob",
    judge_ties: JudgeTies = "half",
    with_human: bool = True,
    boot: Resampling = Resampling(),
    min_n: int = 5,
    selves: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Figure 4: the Figure 3 curves split by whether the pair holds the judge's own response.

    ``subset="own"``: pairs with the judge's own response on one side and a known
    other model on the other, re-oriented so that a is the judge's own response
    (``d = log ppl_own - log ppl_other``, y = the verdict / human label for the
    own response). ``subset="other"``: pairs where neither response is the judge's
    (both models known), in their a/b frame. The judge's curves need no human label;
    ``with_human`` adds the human curves on the rows that have one. ``selves``
    (:meth:`recuse.roster.Roster.self_map`) says what counts as the judge itself, as in
    the self-preference metrics (None: the judge's id). Raises
    :class:`EstimationError` when no pair holds a judge's own response.
    """
    check_min_n(min_n)
    check_modes(verdict=verdict, judge_ties=judge_ties)
    e = perplexity_bins() if edges is None else _check_edges(edges)
    codes, labels = judge_codes(pairs, judge)
    side = favored_side(pairs, relation="self", selves=selves)
    own = (side != 0) & (codes >= 0)
    if not own.any():
        raise EstimationError(
            "no pair holds the judge's own response (model_a/model_b never the judge "
            "itself: its id, or its model line with --self-scope line) "
            "— Figure 4 needs the judge's own answers among the responses"
        )
    known = pairs["model_a"].notna().to_numpy() & pairs["model_b"].notna().to_numpy()
    judge_key = self_keys(pairs["judge"], selves)
    neither = (
        known
        & ~self_keys(pairs["model_a"], selves).eq(judge_key).to_numpy()
        & ~self_keys(pairs["model_b"], selves).eq(judge_key).to_numpy()
        & (codes >= 0)
    )
    d = log_perplexity_difference(pairs)
    orient_side = np.where(own, side, 1).astype(np.int8)
    x = np.where(orient_side > 0, d, -d)
    yj = orient(_judge_y(pairs, verdict, judge_ties), orient_side)
    yh = orient(pairs["human"].to_numpy(float), orient_side)
    ok = np.isfinite(x) & np.isfinite(yj)
    curves = []
    for subset, mask in (("own", own), ("other", neither)):
        cj = np.where(mask & ok, codes, -1).astype(np.intp)
        curves.append(((("rater", "judge"), ("subset", subset)), yj, cj, labels))
        if with_human:
            ch = np.where(mask & ok & np.isfinite(yh), codes, -1).astype(np.intp)
            curves.append(((("rater", "human"), ("subset", subset)), yh, ch, labels))
    frame = _stacked_curve("perplexity_curve_by_self", pairs, x, curves, e, boot=boot, min_n=min_n)
    return _order(frame, ["judge", "subset", "rater", *CURVE_COLUMNS[2:]], labels)


# --- Figure 5: log-perplexity of own vs others' responses -------------------------------


def _responses(pairs: pd.DataFrame) -> pd.DataFrame:
    """One row per (judge, prompt, model, log ppl): every response once, whatever its pairs."""
    for col in ("model_a", "model_b"):
        if col not in pairs.columns:
            raise InputError(f"the table has no {col} column", column=col)
    la, lb = log_perplexity(pairs, "ppl_a"), log_perplexity(pairs, "ppl_b")
    parts = []
    for model, lp in (("model_a", la), ("model_b", lb)):
        parts.append(
            pd.DataFrame(
                {
                    "judge": pairs["judge"].to_numpy(),
                    "prompt_id": clusters_of(pairs).astype(str).to_numpy(),
                    "model": pairs[model].to_numpy(),
                    "log_ppl": lp,
                }
            )
        )
    resp = pd.concat(parts, ignore_index=True)
    resp = resp[resp["judge"].notna() & resp["model"].notna() & np.isfinite(resp["log_ppl"])]
    resp = resp.assign(log_ppl=resp["log_ppl"].round(12))
    return resp.drop_duplicates(["judge", "prompt_id", "model", "log_ppl"]).reset_index(drop=True)


def _is_own(resp: pd.DataFrame, selves: Mapping[str, str] | None) -> NDArray[np.bool_]:
    """Whether each response's model is its judge itself (``selves``: a model line's
    snapshots are one; None compares the ids)."""
    return (self_keys(resp["model"], selves) == self_keys(resp["judge"], selves)).to_numpy(bool)


def own_perplexity_gap(
    pairs: pd.DataFrame,
    *,
    judge: str | Sequence[str] | None = None,
    boot: Resampling = Resampling(),
    min_n: int = 5,
    selves: Mapping[str, str] | None = None,
) -> tuple[list[MetricResult], list[Skipped]]:
    """Figure 5: mean log-perplexity of the judge's own responses minus the others'.

    Each distinct response (judge, prompt, model, perplexity) counts once, however
    many pairs it appears in::

        gap = mean(log ppl of own responses) - mean(log ppl of other models' responses)

    Negative: the judge finds its own answers more familiar. A response is the judge's
    own when its model is the judge itself as ``selves`` says
    (:meth:`recuse.roster.Roster.self_map`; None: the judge's id), as in the
    self-preference metrics. ``components`` hold the
    two means; the interval is a cluster bootstrap over prompts. A judge without
    ``min_n`` own responses is returned in the skipped list with the reason.
    """
    check_min_n(min_n)
    resp = _responses(pairs)
    if resp.empty:
        raise EstimationError("no response has a judge, a known model and a perplexity")
    codes, labels = judge_codes(resp, judge)
    own = _is_own(resp, selves).astype(float)
    x = resp["log_ppl"].to_numpy(float)
    values = np.column_stack([own * x, own, (1 - own) * x, 1 - own])
    stat = GroupedStatistic(
        name="own_log_perplexity_gap",
        values=values,
        group=codes,
        labels=labels,
        combine=difference_of_ratios,
        required=((1, "own responses"), (3, "responses of other models")),
    )

    def components(t: FloatArray) -> dict[str, float]:
        return {
            "mean_log_ppl_own": float(t[0] / t[1]) if t[1] else float("nan"),
            "mean_log_ppl_other": float(t[2] / t[3]) if t[3] else float("nan"),
        }

    spec = MetricSpec(
        "own_log_perplexity_gap",
        stat,
        "mean log-perplexity of the judge's own responses minus other models' responses "
        "(each response once)",
        components,
    )
    return run_specs(
        [spec],
        clusters_of(resp),
        boot=boot,
        min_n=min_n,
    )


def log_perplexity_by_model(
    pairs: pd.DataFrame,
    *,
    judge: str | Sequence[str] | None = None,
    boot: Resampling = Resampling(),
    min_n: int = 5,
    selves: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Mean log-perplexity of each generator's responses under each judge (Figure 5 bars).

    Columns ``judge, model, own, n, n_clusters, mean, sd, ci_low, ci_high, note``;
    each distinct response counts once; intervals are a cluster bootstrap over prompts.
    ``own``: the model is the judge itself as ``selves`` says (as
    :func:`own_perplexity_gap` counts it; each model keeps its own bar).

    >>> t = pd.DataFrame({"item_id": ["x", "y"], "prompt_id": ["p", "q"], "judge": "j",
    ...     "model_a": ["j", "j"], "model_b": ["m", "m"], "ppl_a": [np.e, np.e],
    ...     "ppl_b": [np.e**2, np.e**4]})
    >>> c = log_perplexity_by_model(t, min_n=1, boot=Resampling(n_boot=20))
    >>> c[["model", "own", "n", "mean"]].values.tolist()
    [['j', True, 2, 1.0], ['m', False, 2, 3.0]]
    """
    check_min_n(min_n)
    resp = _responses(pairs)
    if resp.empty:
        raise EstimationError("no response has a judge, a known model and a perplexity")
    codes, judges = judge_codes(resp, judge)
    resp = resp[codes >= 0].reset_index(drop=True)
    key = list(zip(resp["judge"].astype(str), resp["model"].astype(str), strict=True))
    own = dict(zip(key, _is_own(resp, selves).tolist(), strict=True))
    glabels = tuple(sorted(set(key)))
    index = {k: i for i, k in enumerate(glabels)}
    group = np.array([index[k] for k in key], dtype=np.intp)
    x = resp["log_ppl"].to_numpy(float)
    stat = GroupedStatistic(
        name="log_perplexity_by_model",
        values=np.column_stack([x, np.ones_like(x), x * x]),
        group=group,
        labels=glabels,
        combine=ratio,
        required=((1, "responses"),),
    )
    prompts = resp["prompt_id"].to_numpy(dtype=str)
    est = cluster_bootstrap([stat], prompts, boot=boot, min_n=min_n)[0]
    rows = []
    for (j, m), e in zip(glabels, est, strict=True):
        t = e.totals
        mean = t[0] / t[1]
        var = max(t[2] - t[1] * mean * mean, 0.0) / (t[1] - 1) if e.n > 1 else np.nan
        rows.append(
            {
                "judge": j, "model": m, "own": own[j, m], "n": e.n, "n_clusters": e.n_clusters,
                "mean": float(mean), "sd": float(np.sqrt(var)), "ci_low": e.ci_low,
                "ci_high": e.ci_high, "note": e.problem or "",
            }
        )  # fmt: skip
    frame = pd.DataFrame(rows)
    rank = {j: i for i, j in enumerate(judges)}
    frame = frame.sort_values(
        ["judge", "own", "model"], key=lambda s: s.map(rank) if s.name == "judge" else s,
        ascending=[True, False, True], kind="stable",
    )  # fmt: skip
    return frame.reset_index(drop=True)


# --- the summary number ----------------------------------------------------------------


def fit_logit_slopes(
    x: FloatArray,
    y: FloatArray,
    weights: FloatArray,
    *,
    max_iter: int = 50,
    tol: float = 1e-10,
) -> FloatArray:
    """Weighted fractional-logit fits of ``y`` on ``[1, x]``, one per row of ``weights``.

    Maximises ``sum_i w_bi * (y_i * eta_bi - log(1 + exp(eta_bi)))`` with
    ``eta_bi = a_b + s_b * x_i`` by Newton's method for every weight row ``b`` at
    once (``weights`` is ``(B, n)``; ``y`` may be fractional in [0, 1]). Returns
    ``(B, 2)`` coefficients ``[a_b, s_b]``; a fit that does not converge (e.g. a
    resample with perfect separation) is NaN. With unit weights this is the
    binomial GLM maximum-likelihood estimate (statsmodels ``GLM(y, X, Binomial())``).
    """
    w = np.atleast_2d(np.asarray(weights, dtype=float))
    b_count = w.shape[0]
    beta = np.zeros((b_count, 2))
    # start at the weighted mean (intercept only) for stability
    wy = w @ y
    ws = w.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        p0 = np.clip(wy / ws, 1e-6, 1 - 1e-6)
    beta[:, 0] = np.log(p0 / (1 - p0))
    done = np.zeros(b_count, dtype=bool)
    for _ in range(max_iter):
        eta = beta[:, :1] + beta[:, 1:] * x[None, :]
        mu = 0.5 * (1.0 + np.tanh(0.5 * eta))  # overflow-free logistic
        r = w * (y[None, :] - mu)
        v = w * mu * (1.0 - mu)
        g0, g1 = r.sum(axis=1), r @ x
        h00, h01, h11 = v.sum(axis=1), v @ x, v @ (x * x)
        det = h00 * h11 - h01 * h01
        with np.errstate(divide="ignore", invalid="ignore"):
            step0 = (h11 * g0 - h01 * g1) / det
            step1 = (h00 * g1 - h01 * g0) / det
        step = np.column_stack([step0, step1])
        step[done] = 0.0
        bad = ~np.isfinite(step).all(axis=1)
        step[bad] = 0.0
        beta = beta + np.clip(step, -5.0, 5.0)
        converged = (np.abs(step) < tol * (1.0 + np.abs(beta))).all(axis=1)
        done |= converged & ~bad
        beta[bad] = np.nan
        done |= bad
        if done.all():
            break
    beta[~done] = np.nan
    beta[np.abs(beta).max(axis=1) > 50] = np.nan  # separated: slopes run off
    return beta


def _slope_rows(
    rows: pd.DataFrame, *, verdict: Verdict, judge_ties: JudgeTies
) -> tuple[FloatArray, FloatArray, FloatArray, NDArray[np.bool_]]:
    d = log_perplexity_difference(rows)
    yj = _judge_y(rows, verdict, judge_ties)
    yh = rows["human"].to_numpy(float)
    used = np.isfinite(d) & np.isfinite(yj) & np.isfinite(yh)
    return d, yj, yh, used


def familiarity_bias(
    pairs: pd.DataFrame,
    *,
    judge: str | None = None,
    verdict: Verdict = "prob",
    judge_ties: JudgeTies = "half",
    boot: Resampling = Resampling(),
    min_n: int = 20,
    max_dropped: float = 0.1,
) -> MetricResult:
    """How much more the judge's preference moves with perplexity than the humans' does.

    Over the rows with both perplexities, a verdict and a human label, with
    ``d = log ppl_a - log ppl_b``, fractional-logit fits (binomial likelihood;
    ``y`` may be a probability)::

        logit E[y_judge | d] = alpha_J + beta_J * d
        logit E[y_human | d] = alpha_H + beta_H * d
        familiarity_bias = beta_H - beta_J

    ``y_judge`` is ``p_a`` (``verdict="prob"``) or the pick; ``y_human`` is the
    human P(a better) (ties 0.5). Positive values mean the judge favours the
    lower-perplexity response beyond what the humans do (log-odds per nat of
    log-perplexity difference). The interval is the percentile interval of the
    statistic refitted on ``boot.n_boot`` cluster-bootstrap resamples of prompts;
    resamples where a fit does not converge are dropped and counted (more than
    ``max_dropped`` of them raise :class:`EstimationError`). ``components`` hold
    ``judge_slope`` and ``human_slope``.

    >>> from recuse.simulate.familiarity import PlantedFamiliarity, simulate_familiarity
    >>> sim = simulate_familiarity({"j": PlantedFamiliarity(judge_slope=-1.5)},
    ...                            human_slope=-0.5, n_prompts=150, seed=3)
    >>> r = familiarity_bias(sim.pairs, boot=Resampling(n_boot=200))
    >>> sim.true_value("j"), r.covers(1.0)
    (1.0, True)
    """
    check_min_n(min_n)
    check_modes(verdict=verdict, judge_ties=judge_ties)
    rows = single_judge(pairs, judge)
    name = str(rows["judge"].iloc[0])
    d, yj, yh, used = _slope_rows(rows, verdict=verdict, judge_ties=judge_ties)
    n = int(used.sum())
    if n < min_n:
        have = f"only {counted(n, 'pairs')} {'has' if n == 1 else 'have'}" if n else "no pair has"
        raise EstimationError(
            f"cannot estimate familiarity_bias for judge {name!r}: {have} both "
            "perplexities, a verdict and a human label" + (f" (need at least {min_n})" if n else "")
        )
    x, yj, yh = d[used], yj[used], yh[used]
    if np.ptp(x) == 0:
        raise EstimationError(
            f"familiarity_bias for judge {name!r}: every pair has the same perplexity difference"
        )
    clusters = clusters_of(rows)[used]
    codes, uniq = pd.factorize(clusters, sort=True)
    n_c = len(uniq)
    if n_c < 2:
        raise EstimationError(
            f"familiarity_bias for judge {name!r}: all pairs come from one prompt; "
            "a clustered interval needs two or more"
        )
    ones = np.ones((1, n))
    point_j = fit_logit_slopes(x, yj, ones)[0]
    point_h = fit_logit_slopes(x, yh, ones)[0]
    if not (np.isfinite(point_j).all() and np.isfinite(point_h).all()):
        raise EstimationError(
            f"familiarity_bias for judge {name!r}: the logistic fit does not converge "
            "(verdicts or labels perfectly separated by the perplexity difference)"
        )
    rng = np.random.default_rng(boot.seed)
    reps = np.empty(boot.n_boot)
    chunk = max(1, 2_000_000 // max(n, 1))
    for start in range(0, boot.n_boot, chunk):
        b = min(chunk, boot.n_boot - start)
        w = resample_counts(n_c, b, rng)[:, codes]
        bj = fit_logit_slopes(x, yj, w)
        bh = fit_logit_slopes(x, yh, w)
        reps[start : start + b] = bh[:, 1] - bj[:, 1]
    ok = np.isfinite(reps)
    dropped = int((~ok).sum())
    if dropped > max_dropped * boot.n_boot:
        raise EstimationError(
            f"familiarity_bias for judge {name!r}: {dropped} of {boot.n_boot} bootstrap resamples "
            "could not be fitted (separation) — too few pairs or prompts for a stable interval"
        )
    lo, hi = np.quantile(reps[ok], [(1 - boot.level) / 2, (1 + boot.level) / 2])
    estimate = float(point_h[1] - point_j[1])
    return MetricResult(
        metric="familiarity_bias",
        estimate=estimate,
        ci_low=float(lo),
        ci_high=float(hi),
        level=boot.level,
        n=n,
        n_clusters=n_c,
        method=(
            "human slope minus judge slope of fractional-logit fits on d = log ppl_a - "
            f"log ppl_b (verdict={verdict}); {percent(boot.level)} percentile interval, cluster "
            f"bootstrap over prompts ({boot.n_boot} resamples, both fits refitted)"
        ),
        judge=name,
        n_boot=boot.n_boot,
        n_boot_dropped=dropped,
        counts={"pairs": n},
        components={
            "judge_slope": float(point_j[1]),
            "human_slope": float(point_h[1]),
            "judge_intercept": float(point_j[0]),
            "human_intercept": float(point_h[0]),
        },
        interval_rule="percentile",
    )


def familiarity_summary(
    pairs: pd.DataFrame,
    *,
    judges: Sequence[str] | None = None,
    verdict: Verdict = "prob",
    judge_ties: JudgeTies = "half",
    boot: Resampling = Resampling(),
    min_n: int = 20,
) -> tuple[list[MetricResult], list[Skipped]]:
    """:func:`familiarity_bias` for every judge, ranked from most to least familiarity-driven.

    Judges that cannot be estimated come back in the skipped list with the reason. Each
    slope is per nat of *per-token* log-perplexity under that judge's tokenizer: a
    tokenizer cutting a text into 1.3 times the tokens divides ``d`` by about 1.3 and
    multiplies the slopes by it, so the ranking compares judges of other tokenizers on
    other scales.
    """
    _codes, labels = judge_codes(pairs, judges)
    results: list[MetricResult] = []
    skipped: list[Skipped] = []
    for j in labels:
        try:
            results.append(
                familiarity_bias(
                    pairs,
                    judge=j,
                    verdict=verdict,
                    judge_ties=judge_ties,
                    boot=boot,
                    min_n=min_n,
                )
            )
        except EstimationError as exc:
            skipped.append(Skipped("familiarity_bias", j, str(exc)))
    results.sort(key=lambda r: -r.estimate)
    return results, skipped
