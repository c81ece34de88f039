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
  (``>>``), once otherwise. A game with no verdict (a ``null`` game or score) is
  dropped as the file's version drops it: v0.1's ``show_result.py`` drops that game
  alone, v2.0's (``load_judgments``) the whole record, both games (the pairs'
  ``arena_hard_version``; a table without it is read as v0.1). Upstream fits a
  Bradley–Terry model (logistic regression, one strength per model, ties as half a
  win each) and reports the model's predicted win rate against the baseline, in %.
  Every battle has the baseline on one side, so the fit separates per model and its
  maximum-likelihood win rate is the weighted share

      score_m = 100 · (W_m + T_m / 2) / (W_m + T_m + L_m)

  (W, T, L: weighted wins, ties, losses of m). v2.0's ``show_result.py`` fits nothing:
  it prints that share (the mean of the battles' scores) **per category**, each against
  its own baseline (``JUDGE_SETTINGS``: o3-mini-2025-01-31 for hard_prompt, coding and
  math, gemini-2.0-flash-001 for creative_writing), so a v2.0 record's ``category``
  splits the score; v0.1 scores all battles together. Its interval: the percentile
  bootstrap over the model's weighted battle rows, 100 rounds, at the level the file's
  version prints (:data:`ARENA_HARD_LEVEL`: v0.1 95%, the 2.5–97.5% points; v2.0 90%,
  the 5–95% points).
  **Style-controlled** (``show_result.py --control-features length markdown``): the
  same battles, each with four style features of the model's answer *m* against the
  baseline's *b*, from the ``metadata`` Arena-Hard-Auto's ``add_markdown_info.py``
  writes into its ``model_answer/`` files (token length L; header, list and bold
  counts, each divided by L as a density d):

      length    = (L_m − L_b) / (L_m + L_b)
      header, list, bold:  (d_m − d_b) / (d_m + d_b + 1)

  each standardised over the battles (mean 0, sample sd 1). The Bradley–Terry fit then
  has one strength per model and a coefficient per feature,
  ``logit P(m wins) = β_m + γ · z`` (ties as half a win, the baseline's strength 0), and
  the score is ``100 · σ(β_m)``: the model's win rate against the baseline at the
  battles' average style difference (z = 0), so style control evens the models out
  against each other (a model no better than the others but longer-winded loses its
  length's advantage), not against the baseline; with one model it stays near its plain
  score. The interval is the same percentile bootstrap over battles (every resample
  refits β and γ; upstream reports the resamples' median and 5–95% quantiles). The judgment files
  hold no answer, so this needs the ``model_answer/`` files beside them.
* **AlpacaEval** (``alpaca_eval`` leaderboard): win rate and length-controlled win
  rate per model against the baseline, per annotator
  (:func:`recuse.metrics.length_controlled.length_controlled_win_rates`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit

from recuse.errors import EstimationError
from recuse.metrics.bootstrap import Resampling, resample_counts
from recuse.metrics.estimate import clusters_of

__all__ = [
    "ARENA_HARD_LEVEL",
    "SIGNIFICANT_WEIGHT",
    "STYLE_FEATURES",
    "arena_hard_battles",
    "arena_hard_records_left_out",
    "arena_hard_scores",
    "arena_hard_style_scores",
    "fastchat_results",
]

SIGNIFICANT_WEIGHT = 3  # Arena-Hard-Auto's --weight: battles a ">>" verdict counts as
#: the interval level Arena-Hard-Auto's show_result.py prints, by the file's version
#: (``arena_hard_version``; a table without it is v0.1): v0.1 the 2.5% and 97.5% points
#: of its bootstrap, v2.0 the 5% and 95% points
ARENA_HARD_LEVEL = {"v0.1": 0.95, "v2.0": 0.90}
#: an answer's style counts, as Arena-Hard-Auto's model_answer metadata names them
STYLE_FEATURES = ("token_len", "header_count", "list_count", "bold_count")


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
    ``model``, ``baseline``, ``prompt_id``, ``outcome`` (1 the model wins, 0.5 tie, 0 it loses),
    ``weight`` (``weight`` for a significant verdict, else 1), ``category`` (a v2.0
    record's ``category``, which v2.0 scores apart; ``""`` for the others, scored
    together) and ``version`` (``"v2.0"`` or ``"v0.1"``).

    ``pairs``: an Arena-Hard ``pairs`` table (a = the model, b = the baseline;
    ``strength_first`` / ``strength_second`` = +2 … −2 for the model). A record whose
    ``arena_hard_version`` is ``"v2.0"`` gives no battle unless both its games have a
    verdict (v2.0's ``show_result.py`` leaves out a record with a ``null`` game or
    score); any other record gives one battle per game with a verdict (v0.1's)."""
    clusters_of(pairs)  # a table without prompt_id: the error that says so
    rows = pairs[pairs["judge"] == judge]
    v2 = np.zeros(len(rows), bool)
    if "arena_hard_version" in rows.columns:
        v2 = (rows["arena_hard_version"] == "v2.0").to_numpy()
        both = np.isfinite(rows[["strength_first", "strength_second"]].to_numpy(float)).all(1)
        rows, v2 = rows[both | ~v2], v2[both | ~v2]
    category = np.full(len(rows), "", dtype=object)
    if "category" in rows.columns:
        named = rows["category"].notna().to_numpy() & v2
        category[named] = rows["category"].astype(str).to_numpy()[named]
    parts = []
    for column in ("strength_second", "strength_first"):  # game 1, game 2
        s = rows[column].to_numpy(float)
        keep = np.isfinite(s)
        parts.append(
            pd.DataFrame(
                {
                    "model": rows["model_a"].astype(str).to_numpy()[keep],
                    "baseline": rows["model_b"].astype(str).to_numpy()[keep],
                    "prompt_id": rows["prompt_id"].astype(str).to_numpy()[keep],
                    "outcome": np.sign(s[keep]) / 2 + 0.5,
                    "weight": np.where(np.abs(s[keep]) == 2, weight, 1),
                    "category": category[keep],
                    "version": np.where(v2[keep], "v2.0", "v0.1"),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def _scored_battles(pairs: pd.DataFrame, *, judge: str, weight: int) -> pd.DataFrame:
    """:func:`arena_hard_battles` of ``judge``, refused (:class:`EstimationError`) when it
    has no game with a verdict or when the battles scored together (one v2.0 category,
    or all v0.1 battles) compare with more than one baseline."""
    battles = arena_hard_battles(pairs, judge=judge, weight=weight)
    if battles.empty:
        raise EstimationError(f"judge {judge!r} has no game with a verdict")
    for (version, category), g in battles.groupby(["version", "category"], sort=True):
        names = sorted(g["baseline"].unique())
        if len(names) > 1:
            where = f" in category {category!r}" if category else ""
            # a v2.0 file's table written without its version column reads as v0.1's
            unsaid = version == "v0.1" and "arena_hard_version" not in pairs.columns
            hint = (
                "; a v2.0 file's pairs table scores each category against its own "
                "baseline only where its arena_hard_version column says v2.0"
                if unsaid
                else ""
            )
            raise EstimationError(
                f"judge {judge!r} compares with {len(names)} baselines{where} "
                f"({', '.join(names[:3])}); Arena-Hard-Auto's score is against one: "
                f"audit each baseline's judgments apart (the rows of one model_b){hint}"
            )
    return battles


def _default_level(battles: pd.DataFrame) -> float:
    """The interval level the battles' version prints (:data:`ARENA_HARD_LEVEL`; v0.1's
    where versions are mixed)."""
    return ARENA_HARD_LEVEL["v2.0" if (battles["version"] == "v2.0").all() else "v0.1"]


def arena_hard_scores(
    pairs: pd.DataFrame,
    *,
    judge: str,
    boot: Resampling | None = None,
    weight: int = SIGNIFICANT_WEIGHT,
) -> pd.DataFrame:
    """Arena-Hard-Auto's score of each model judged by ``judge`` (per category for a
    v2.0 file, as its ``show_result.py`` scores each category against its own
    baseline): its Bradley–Terry win rate against the baseline, in %,
    ``score = 100 (W + T/2) / (W + T + L)`` over the weighted battles, with a
    ``boot.level`` percentile-bootstrap interval over the model's weighted battle rows
    (``boot.n_boot`` resamples; upstream: 100). Without ``boot`` the level is the one
    the file's version prints (``arena_hard_version``, :data:`ARENA_HARD_LEVEL`): 95%
    for v0.1, 90% for v2.0 (v0.1's where both are read); ``attrs["level"]`` holds the
    level used, ``attrs["arena_hard_version"]`` the versions read ("v2.0", "v0.1" or
    "v0.1 and v2.0") and ``attrs["records_left_out"]``
    :func:`arena_hard_records_left_out`. v2.0 prints the mean of its 100 bootstrap
    shares as the score; this is the share itself, which that mean estimates.

    Columns: ``model``, ``category`` (where a v2.0 record names one),
    ``arena_hard_version`` (where the judge's files are of both versions: each row's
    battles are scored by its own version's rule, never pooled), ``baseline``,
    ``score``, ``score_low``, ``score_high``, ``battles`` (weighted), ``games``; sorted
    by version, category, then score. Raises :class:`EstimationError` when the judge has no game
    with a verdict, or the battles scored together compare with more than one
    baseline."""
    battles = _scored_battles(pairs, judge=judge, weight=weight)
    level = _default_level(battles)
    boot = boot if boot is not None else Resampling(level=level)
    rng = np.random.default_rng(boot.seed)
    alpha = (1 - boot.level) / 2
    out = []
    groups = battles.groupby(["version", "category", "model"], sort=True)
    for (version, category, model), g in groups:
        expanded = np.repeat(g["outcome"].to_numpy(float), g["weight"].to_numpy(int))
        score = float(expanded.mean())
        counts = resample_counts(len(expanded), boot.n_boot, rng)
        reps = counts @ expanded / len(expanded)
        lo, hi = np.quantile(reps, [alpha, 1 - alpha])
        out.append(
            {
                "model": str(model),
                "category": str(category),
                "arena_hard_version": str(version),
                "baseline": str(g["baseline"].iloc[0]),
                "score": 100 * score,
                "score_low": 100 * float(lo),
                "score_high": 100 * float(hi),
                "battles": len(expanded),
                "games": len(g),
            }
        )
    order = ["arena_hard_version", "category", "score"]
    frame = pd.DataFrame(out).sort_values(order, ascending=[True, True, False])
    if (battles["category"] == "").all():  # v0.1's one pool: no category to name
        frame = frame.drop(columns="category")
    versions = sorted(battles["version"].unique())
    if len(versions) < 2:  # one rule: said once, in attrs
        frame = frame.drop(columns="arena_hard_version")
    frame = frame.reset_index(drop=True)
    frame.attrs["level"] = boot.level
    frame.attrs["arena_hard_version"] = " and ".join(versions)
    frame.attrs["records_left_out"] = arena_hard_records_left_out(pairs, judge=judge)
    return frame


def arena_hard_records_left_out(pairs: pd.DataFrame, *, judge: str) -> dict[str, int]:
    """How many of ``judge``'s v2.0 records (``arena_hard_version`` "v2.0") are left out
    whole for a ``null`` game or score, by category (v2.0's ``show_result.py`` prints
    their number, "Number of null judgments found"); categories with none are not
    listed. ``{}`` for v0.1 files, whose other game is kept."""
    if "arena_hard_version" not in pairs.columns:
        return {}
    rows = pairs[(pairs["judge"] == judge) & (pairs["arena_hard_version"] == "v2.0")]
    both = np.isfinite(rows[["strength_first", "strength_second"]].to_numpy(float)).all(1)
    gone = rows.loc[~both]
    if "category" not in gone.columns:
        return {"": len(gone)} if len(gone) else {}
    names = gone["category"].fillna("").astype(str)
    return {str(k): int(v) for k, v in names.value_counts().sort_index().items()}


def _style_design(battles: pd.DataFrame, style: pd.DataFrame) -> np.ndarray:
    """The four standardised style features of each battle (module docstring): the
    model's answer against the baseline's, from ``style`` (``model``, ``prompt_id`` and
    :data:`STYLE_FEATURES`). Raises :class:`EstimationError` naming an answer with no
    style counts, or a feature that does not vary over the battles."""
    table = style.set_index(["model", "prompt_id"])[list(STYLE_FEATURES)].astype(float)
    table = table[~table.index.duplicated(keep="first")]

    def counts(model: pd.Series) -> np.ndarray:
        key = pd.MultiIndex.from_arrays([model.astype(str), battles["prompt_id"].astype(str)])
        found = key.isin(table.index)
        if not found.all():
            m, q = key[int(np.argmin(found))]
            raise EstimationError(
                f"no style counts for {m!r}'s answer to {q!r} (style control needs every "
                "answer's metadata from model_answer/)"
            )
        return table.loc[key].to_numpy(float)

    m, b = counts(battles["model"]), counts(battles["baseline"])
    lm, lb = m[:, 0], b[:, 0]
    if ((lm + lb) <= 0).any():
        raise EstimationError("an answer pair has no tokens: the length feature is undefined")
    dm = m[:, 1:] / np.where(lm > 0, lm, 1.0)[:, None]
    db = b[:, 1:] / np.where(lb > 0, lb, 1.0)[:, None]
    raw = np.column_stack([(lm - lb) / (lm + lb), (dm - db) / (dm + db + 1)])
    sd = raw.std(axis=0, ddof=1) if len(raw) > 1 else np.zeros(raw.shape[1])
    if not (sd > 0).all():
        flat = [STYLE_FEATURES[k] for k in np.flatnonzero(~(sd > 0))]
        raise EstimationError(f"style feature(s) {', '.join(flat)} do not vary over the battles")
    return (raw - raw.mean(axis=0)) / sd


def _soft_logit_fit(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Maximum-likelihood coefficients of ``logit P = x β`` for outcomes ``y`` in [0, 1]
    (ties 0.5) with case weights ``w``: Newton–Raphson on the weighted Bernoulli
    log-likelihood Σ w (y log p + (1 − y) log(1 − p)), step-halved."""
    beta = np.zeros(x.shape[1])

    def loglik(b: np.ndarray) -> float:
        eta = x @ b
        return float(w @ (y * eta - np.logaddexp(0.0, eta)))

    current = loglik(beta)
    for _ in range(100):
        p = expit(x @ beta)
        grad = x.T @ (w * (y - p))
        hess = (x * (w * p * (1 - p))[:, None]).T @ x
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(hess, grad, rcond=None)[0]
        t = 1.0
        while t > 1e-8:
            nxt = loglik(beta + t * step)
            if nxt >= current - 1e-12:
                break
            t /= 2
        beta, gain, current = beta + t * step, nxt - current, nxt
        if abs(gain) < 1e-12 and float(np.max(np.abs(t * step))) < 1e-10:
            break
    return beta


def arena_hard_style_scores(
    pairs: pd.DataFrame,
    style: pd.DataFrame,
    *,
    judge: str,
    boot: Resampling | None = None,
    weight: int = SIGNIFICANT_WEIGHT,
) -> pd.DataFrame:
    """Arena-Hard-Auto's style-controlled score of each model judged by ``judge``: its
    win rate against the baseline at the battles' average style difference,
    ``100 σ(β_m)``, from the Bradley–Terry
    fit ``logit P(m wins) = β_m + γ · z`` over the weighted battles, z the four
    standardised style features (module docstring), with a ``boot.level`` percentile
    bootstrap over the weighted battle rows (every resample refits β and γ); without
    ``boot``, at the level the file's version prints (95% for v0.1, 90%
    for v2.0, :data:`ARENA_HARD_LEVEL`).

    ``style``: one row per answer, ``model``, ``prompt_id`` and :data:`STYLE_FEATURES`
    (Arena-Hard-Auto's answer metadata; a count given per kind is summed). Columns:
    ``model``, ``baseline``, ``style_score``, ``style_score_low``, ``style_score_high``,
    ``battles``, ``games``; ``attrs["coefficients"]`` holds γ by feature (log-odds per
    sd of the feature; 0 = style does not sway the judge). Raises
    :class:`EstimationError` without battles, with more than one baseline, with a v2.0
    file's battles in more than one category (v2.0 fits each category apart: give one
    category's rows), or without style counts for an answer."""
    battles = _scored_battles(pairs, judge=judge, weight=weight)
    if battles["version"].nunique() > 1:
        raise EstimationError(
            f"judge {judge!r} has judgments of both Arena-Hard versions (v0.1's "
            "question_id records and v2.0's uid records, which drop a null game "
            "differently and score by category); style control is fitted on one: audit "
            "each version's files apart"
        )
    categories = sorted(battles["category"].unique())
    if len(categories) > 1:
        raise EstimationError(
            f"judge {judge!r} judged {len(categories)} Arena-Hard v2.0 categories "
            f"({', '.join(categories[:4])}); style control is fitted per category: give "
            "one category's rows (pairs[pairs['category'] == name]; `recuse audit` fits "
            "each category apart)"
        )
    boot = boot if boot is not None else Resampling(level=_default_level(battles))
    reps = battles["weight"].to_numpy(int)
    expanded = battles.loc[battles.index.repeat(reps)].reset_index(drop=True)
    z = _style_design(expanded, style)
    models = sorted(expanded["model"].astype(str).unique())
    onehot = (expanded["model"].astype(str).to_numpy()[:, None] == np.array(models)).astype(float)
    x = np.column_stack([onehot, z])
    y = expanded["outcome"].to_numpy(float)
    fit = _soft_logit_fit(x, y, np.ones(len(y)))
    rng = np.random.default_rng(boot.seed)
    counts = resample_counts(len(y), boot.n_boot, rng)
    replicates = np.array([_soft_logit_fit(x, y, c)[: len(models)] for c in counts])
    alpha = (1 - boot.level) / 2
    lo, hi = np.quantile(expit(replicates), [alpha, 1 - alpha], axis=0)
    base = str(battles["baseline"].iloc[0])
    per = battles.groupby("model", sort=True).agg(
        battles=("weight", "sum"), games=("weight", "size")
    )
    out = pd.DataFrame(
        {
            "model": models,
            "baseline": base,
            "style_score": 100 * expit(fit[: len(models)]),
            "style_score_low": 100 * lo,
            "style_score_high": 100 * hi,
            "battles": per.loc[models, "battles"].to_numpy(int),
            "games": per.loc[models, "games"].to_numpy(int),
        }
    )
    out = out.sort_values("style_score", ascending=False).reset_index(drop=True)
    out.attrs["coefficients"] = {
        k.removesuffix("_count").replace("token_len", "length"): float(v)
        for k, v in zip(STYLE_FEATURES, fit[len(models) :], strict=True)
    }
    return out
