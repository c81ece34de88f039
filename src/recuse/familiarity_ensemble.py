"""Mitigating familiarity bias: an ensemble whose members lose weight where the text is familiar.

From the discussion of the self-preference paper (§6): combine several judges, and
on each item lower the weight of a judge for which the responses have low
perplexity (the judge finds them familiar, e.g. because it wrote one of them).

For member ``k`` and item ``i`` with log-perplexities ``l_a``, ``l_b`` under ``k``::

    f_ki = min(l_a, l_b)                 (familiarity="min": the more familiar response)
         or (l_a + l_b) / 2              (familiarity="mean")
    z_ki = (f_ki - mean_i f_ki) / sd_i f_ki     (standardised within member k, so
                                                 members with different tokenizers
                                                 and perplexity scales are comparable)
    w_ki = exp(tau * z_ki) / sum_k' exp(tau * z_k'i)   (over members with a verdict)
    p_a(ensemble)_i = sum_k w_ki * p_a_ki

``tau = 0`` is the plain (equal-weight) ensemble; larger ``tau`` moves weight away
from members that find the item familiar. Both presentation orders are combined
the same way, so position metrics stay measurable. A member's verdict on an item
without its perplexities cannot be weighted and is left out (counted in
``attrs["left_out"]``).

:func:`compare_self_preference` evaluates the mitigation with the self-preference
metric: for each member ``j``, the bias of (a) ``j`` alone, (b) the plain ensemble
and (c) the weighted ensemble toward ``j``'s own responses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from recuse.errors import ConfigError, EstimationError, InputError
from recuse.metrics.result import MetricResult, Skipped
from recuse.metrics.self_preference import Kind, self_preference
from recuse.metrics.verdicts import HumanTies, JudgeTies, Verdict, judge_codes
from recuse.tables import validate_pairs

__all__ = [
    "Familiarity",
    "compare_self_preference",
    "familiarity_weighted_ensemble",
    "familiarity_weights",
]

Familiarity = Literal["min", "mean"]

_ITEM_COLUMNS = (
    "item_id", "prompt_id", "model_a", "model_b", "human", "prompt", "response_a",
    "response_b", "source", "task", "category", "len_a", "len_b",
)  # fmt: skip


def familiarity_weights(
    pairs: pd.DataFrame,
    *,
    judges: Sequence[str] | None = None,
    tau: float = 1.0,
    familiarity: Familiarity = "min",
) -> pd.DataFrame:
    """Weight of every member on every item (rows ``item_id``, columns the judges).

    See the module docstring for the formula. Items a member did not judge, or
    judged without perplexities, get weight 0 for it; the weights of an item sum
    to 1 over the members that count (NaN row when none does).

    >>> t = pd.DataFrame({"item_id": ["x", "y", "x", "y"], "judge": ["j", "j", "k", "k"],
    ...     "p_a": 0.5, "ppl_a": [1.0, np.e**2, np.e, np.e], "ppl_b": [np.e**3] * 4})
    >>> familiarity_weights(t, tau=0.0).round(2).values.tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    >>> w = familiarity_weights(t, tau=1.0)
    >>> bool(w.loc["x", "j"] < 0.5 < w.loc["y", "j"])  # x is familiar to j: less weight
    True
    """
    if not np.isfinite(tau) or tau < 0:
        raise ConfigError(f"tau must be a finite number >= 0; got {tau!r}")
    if familiarity not in ("min", "mean"):
        raise ConfigError(f"familiarity must be 'min' or 'mean'; got {familiarity!r}")
    for col in ("ppl_a", "ppl_b"):
        if col not in pairs.columns:
            raise InputError(
                f"the table has no {col} column",
                column=col,
                fix="compute perplexities under every member first (recuse.perplexity)",
            )
    codes, labels = judge_codes(pairs, judges)
    if len(labels) < 2:
        raise ConfigError("an ensemble needs at least two judges")
    rows = pairs.loc[codes >= 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        la = np.log(rows["ppl_a"].to_numpy(float))
        lb = np.log(rows["ppl_b"].to_numpy(float))
    f = np.minimum(la, lb) if familiarity == "min" else (la + lb) / 2
    has_verdict = rows["p_a"].notna().to_numpy()
    frame = pd.DataFrame(
        {"item_id": rows["item_id"].to_numpy(), "judge": rows["judge"].to_numpy(), "f": f}
    )
    frame = frame[np.isfinite(f) & has_verdict]
    stats = frame.groupby("judge")["f"].agg(["mean", "std"])
    sd = stats["std"].where(stats["std"] > 0, 1.0).fillna(1.0)
    z = (frame["f"] - frame["judge"].map(stats["mean"])) / frame["judge"].map(sd)
    frame = frame.assign(z=z.to_numpy())
    wide = frame.pivot_table(index="item_id", columns="judge", values="z", aggfunc="first")
    wide = wide.reindex(columns=list(labels))
    # softmax over the members present on each item (max-shifted for stability)
    scaled = tau * wide
    scaled = scaled.sub(scaled.max(axis=1), axis=0)
    expw = np.exp(scaled).fillna(0.0)
    total = expw.sum(axis=1)
    weights = expw.div(total.where(total > 0), axis=0)
    weights.columns.name = None
    return weights


def familiarity_weighted_ensemble(
    pairs: pd.DataFrame,
    *,
    judges: Sequence[str] | None = None,
    tau: float = 1.0,
    familiarity: Familiarity = "min",
    name: str | None = None,
) -> pd.DataFrame:
    """A ``pairs`` table with one row per item: the weighted verdict of the members.

    ``judge`` is ``name`` (default ``"ensemble(tau=<tau>)"``); ``p_a_first`` and
    ``p_a_second`` are the weighted means of the members' verdicts in that order
    (weights renormalised over the members that gave one); item columns come from
    the members' rows; ``ppl_a``/``ppl_b`` are left out (they are per judge).
    ``attrs["left_out"]`` counts member verdicts that had no perplexities.
    """
    weights = familiarity_weights(pairs, judges=judges, tau=tau, familiarity=familiarity)
    members = list(weights.columns)
    rows = pairs[pairs["judge"].isin(members)]
    label = name or f"ensemble(tau={tau:g})"
    has_ppl = rows["ppl_a"].notna() & rows["ppl_b"].notna()
    left_out = int((rows["p_a"].notna() & ~has_ppl).sum())
    out: dict[str, pd.Series] = {}
    for order in ("first", "second"):
        col = f"p_a_{order}"
        v = rows.pivot_table(index="item_id", columns="judge", values=col, aggfunc="first")
        v = v.reindex(index=weights.index, columns=members)
        w = weights.where(v.notna(), 0.0)
        tot = w.sum(axis=1)
        out[col] = (w * v.fillna(0.0)).sum(axis=1) / tot.where(tot > 0)
    items = rows.drop_duplicates("item_id").set_index("item_id")
    items = items.reindex(weights.index)
    table = pd.DataFrame(index=weights.index)
    for col in _ITEM_COLUMNS[1:]:
        if col in items.columns:
            table[col] = items[col]
    table["judge"] = label
    for order in ("first", "second"):
        p = out[f"p_a_{order}"]
        table[f"p_a_{order}"] = p
        table[f"status_{order}"] = np.where(p.notna(), "ok", "missing")
    table["p_a"] = np.nan
    table = table.reset_index().rename(columns={"index": "item_id"})
    table = table[table["p_a_first"].notna() | table["p_a_second"].notna()]
    result = validate_pairs(table)
    result.attrs["left_out"] = left_out
    result.attrs["members"] = members
    return result


def _as_member(verdicts: pd.DataFrame, member: str) -> pd.DataFrame:
    """``verdicts`` relabelled as if ``member`` gave them (so "own" means ``member``'s)."""
    return verdicts.assign(judge=member)


def compare_self_preference(
    pairs: pd.DataFrame,
    *,
    judges: Sequence[str] | None = None,
    tau: float = 1.0,
    familiarity: Familiarity = "min",
    kind: Kind = "eo",
    verdict: Verdict = "prob",
    human_ties: HumanTies = "drop",
    judge_ties: JudgeTies = "half",
    level: float = 0.9,
    n_boot: int = 2000,
    seed: int | None = 0,
    min_n: int = 10,
) -> tuple[pd.DataFrame, list[Skipped]]:
    """Self-preference toward each member's own responses: member alone vs the two ensembles.

    One row per (member, evaluator) with ``evaluator`` in ``single`` (the member
    judging), ``plain`` (equal weights, ``tau=0``) and ``weighted`` (``tau``), and
    the columns of :class:`~recuse.metrics.result.MetricResult` (``kind="eo"``:
    Definition 4.1, needs human labels on pairs with the member's response;
    ``"dp"``: Eq. 4, needs none). All evaluators are bootstrapped with the same seed
    over the same prompts. Members without enough pairs holding their own
    responses are returned in the skipped list.
    """
    _codes, members = judge_codes(pairs, judges)
    plain = familiarity_weighted_ensemble(
        pairs, judges=members, tau=0.0, familiarity=familiarity, name="plain"
    )
    weighted = familiarity_weighted_ensemble(
        pairs, judges=members, tau=tau, familiarity=familiarity, name="weighted"
    )
    opts = dict(
        kind=kind, verdict=verdict, human_ties=human_ties, judge_ties=judge_ties,
        level=level, n_boot=n_boot, seed=seed, min_n=min_n,
    )  # fmt: skip
    rows: list[dict[str, object]] = []
    skipped: list[Skipped] = []
    for j in members:
        single = pairs[pairs["judge"] == j]
        for evaluator, table in (("single", single), ("plain", plain), ("weighted", weighted)):
            try:
                r: MetricResult = self_preference(
                    _as_member(table, j),
                    judge=j,
                    **opts,  # type: ignore[arg-type]
                )
            except EstimationError as exc:
                skipped.append(Skipped(f"self_preference_{kind}[{evaluator}]", j, str(exc)))
                continue
            d = r.to_dict()
            rows.append(
                {
                    "member": j,
                    "evaluator": evaluator,
                    "tau": {"plain": 0.0, "weighted": tau}.get(evaluator),
                    **{k: d[k] for k in ("metric", "estimate", "ci_low", "ci_high", "level", "n",
                                          "n_clusters")},
                    **{f"component_{k}": v for k, v in d["components"].items()},
                }
            )  # fmt: skip
    return pd.DataFrame(rows), skipped
