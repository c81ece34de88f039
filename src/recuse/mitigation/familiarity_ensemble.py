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
and (c) the weighted ensemble toward ``j``'s own responses. That needs pairs that
hold the members' own responses *and* human labels. Where a data set has human
labels but none of the members' responses, :func:`compare_ensembles` evaluates the
same evaluators on what it does support: agreement with the human labels
(:func:`human_agreement`, with the paired difference to the plain ensemble from
:func:`agreement_difference`), position consistency and first-position rate, and
:func:`~recuse.metrics.familiarity.familiarity_bias` measured on every member's
perplexities (:func:`with_member_perplexities`: does the ensemble's verdict still
move with what a member finds familiar?).

Measured on planted data (:func:`~recuse.simulate.familiarity.simulate_familiarity`,
three members among six models, 200 prompts × 3 pairs, probabilities; 100 tables,
``tau=2``, EO self-preference toward each member, 90% intervals; references from one
15,000-prompt table; the means matched them within 2.5 simulation SEs, one within 3.2
(1.3 counting the reference's own noise), and the intervals covered them in 85–90% of
300 member-tables):

* self-preference only through familiarity (pull −2 log-odds per nat, own answers 0.6
  nats more familiar): a member alone +0.433, the plain ensemble +0.087 (a third of
  each member's bias toward that member's answers: the others' is about −0.08), the
  weighted one +0.034; weighted − plain −0.053 ± 0.001. The weighting removes part of
  what is left, not all of it (a larger ``tau`` removes more);
* a self shift with no familiarity path (+0.8 log-odds, no perplexity gap): weighted −
  plain +0.004 ± 0.001 (reference +0.002): it removes nothing there;
* no bias: every row and difference 0 within its SE (|mean| ≤ 0.002);
* one member's perplexities on another scale (``e·ppl²``): the weights are the same to
  1e-15 (the standardisation within a member); with 20% of the rows missing a
  perplexity and one order judged, weighted − plain −0.045 (reference −0.046).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from recuse.cells import among
from recuse.errors import ConfigError, EstimationError, InputError
from recuse.metrics.bootstrap import (
    GroupedStatistic,
    Resampling,
    check_min_n,
    difference_of_ratios,
    pooled_ratio,
)
from recuse.metrics.estimate import MetricSpec, clusters_of, run_one, run_specs
from recuse.metrics.familiarity import familiarity_bias
from recuse.metrics.position import consistency_spec, first_position_spec
from recuse.metrics.result import COLUMNS, NUMBER_COLUMNS, MetricResult, Skipped
from recuse.metrics.self_preference import Criterion, favored_side, self_preference, single_judge
from recuse.metrics.verdicts import (
    FloatArray,
    HumanTies,
    JudgeTies,
    Verdict,
    attribute_gap_values,
    check_modes,
    judge_codes,
    judge_score,
    orient,
)
from recuse.tables import validate_pairs

__all__ = [
    "ENSEMBLE_COLUMNS",
    "SELF_PREFERENCE_COLUMNS",
    "Familiarity",
    "agreement_difference",
    "agreement_spec",
    "column_words",
    "compare_ensembles",
    "compare_self_preference",
    "familiarity_weighted_ensemble",
    "familiarity_weights",
    "human_agreement",
    "self_preference_difference",
    "with_member_perplexities",
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
                fix="compute perplexities under every member first (recuse.judging.perplexity)",
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


def _result_columns(r: MetricResult) -> dict[str, object]:
    """A comparison row's columns from the result that computed them: ``metric``, its
    ``definition``, its numbers, what is said beside them (the rest of
    :data:`~recuse.metrics.result.NUMBER_COLUMNS`: the no-bias value and its bound, signed,
    absolute value; warnings and notes as text, "" when none) and its components as
    ``component_<name>``."""
    d = r.to_dict()
    return {
        "metric": r.metric,
        "definition": r.definition,
        **{k: d[k] for k in ("estimate", "ci_low", "ci_high", "level", "n", "n_clusters")},
        **{k: d[k] for k in NUMBER_COLUMNS if k != "definition"},
        "warnings": "; ".join(r.warnings),
        "notes": "; ".join(r.notes),
        **{f"component_{k}": v for k, v in d["components"].items()},
    }


#: the columns of both comparison tables that a result fills, in its words
#: (:data:`recuse.metrics.result.COLUMNS`)
_RESULT_WORDS = {
    k: COLUMNS[k]
    for k in (
        "estimate", "ci_low", "ci_high", "level", "n", "n_clusters", *NUMBER_COLUMNS,
        "warnings", "notes",
    )
}  # fmt: skip

#: what each column of :func:`compare_self_preference`'s table holds (a
#: ``component_<name>`` column: :func:`column_words`)
SELF_PREFERENCE_COLUMNS: dict[str, str] = {
    "member": "the member toward whose own responses the self-preference is measured "
    "(every evaluator's verdicts read as if that member gave them)",
    "evaluator": "whose verdicts: single (the member alone), plain (the equal-weight "
    "ensemble) or weighted (the familiarity-weighted ensemble at tau); 'A - B': A's "
    "self-preference minus B's, paired on the items both judged",
    "tau": "the ensemble's tau (0: the plain ensemble); empty: the member alone; in a "
    "difference's row, its weighted side's tau, else 0",
    "metric": "the estimator's id (the definition says what it is)",
    **_RESULT_WORDS,
}

#: what each column of :func:`compare_ensembles`' table holds (a ``component_<name>``
#: column: :func:`column_words`)
ENSEMBLE_COLUMNS: dict[str, str] = {
    "evaluator": "whose verdicts: a member (its name), the plain ensemble ensemble(tau=0) or "
    "a weighted one ensemble(tau=<tau>); in a human_agreement_difference row, the one "
    "whose agreement minus the plain ensemble's the row is",
    "kind": "single (a member alone), plain (equal weights) or weighted (familiarity-weighted)",
    "tau": "the ensemble's tau (0: the plain ensemble); empty: a member alone",
    "metric": "the estimator's id (the definition says what it is)",
    "perplexity_of": "in a familiarity_bias row, the member whose log-perplexities the "
    "verdicts are read against; empty: any other metric",
    **_RESULT_WORDS,
}


def column_words(frame: pd.DataFrame, words: Mapping[str, str]) -> dict[str, str]:
    """What each column of ``frame``, a table of :func:`compare_self_preference` or
    :func:`compare_ensembles`, holds: ``words`` (:data:`SELF_PREFERENCE_COLUMNS` or
    :data:`ENSEMBLE_COLUMNS`), and for a ``component_<name>`` column the component's.

    >>> words = column_words(pd.DataFrame(columns=["null", "component_flipped"]), ENSEMBLE_COLUMNS)
    >>> words["null"] == COLUMNS["null"], words["component_flipped"][:40]
    (True, 'flipped: one of the parts the estimate i')
    """
    out = {}
    for col in map(str, frame.columns):
        if col.startswith("component_") and col not in words:
            out[col] = (
                f"{col.removeprefix('component_')}: one of the parts the estimate is made of "
                "(the result's components); empty where the row's metric has no such part"
            )
        else:
            out[col] = words[col]
    return out


def _comparison_row(
    member: str, evaluator: str, tau: float | None, r: MetricResult
) -> dict[str, object]:
    return {"member": member, "evaluator": evaluator, "tau": tau, **_result_columns(r)}


def compare_self_preference(
    pairs: pd.DataFrame,
    *,
    judges: Sequence[str] | None = None,
    tau: float = 1.0,
    familiarity: Familiarity = "min",
    kind: Criterion = "eo",
    verdict: Verdict = "prob",
    human_ties: HumanTies = "drop",
    judge_ties: JudgeTies = "half",
    boot: Resampling = Resampling(),
    min_n: int = 10,
) -> tuple[pd.DataFrame, list[Skipped]]:
    """Self-preference toward each member's own responses: member alone vs the two ensembles.

    One row per (member, evaluator) with ``evaluator`` in ``single`` (the member
    judging), ``plain`` (equal weights, ``tau=0``) and ``weighted`` (``tau``), and
    the columns of :class:`~recuse.metrics.result.MetricResult` with what is said
    beside its numbers, taken from it (definition, no-bias value, warnings, ...;
    each column in words: :data:`SELF_PREFERENCE_COLUMNS`) (``kind="eo"``:
    Definition 4.1, needs human labels on pairs with the member's response;
    ``"dp"``: Eq. 4, needs none). All evaluators are bootstrapped with the same seed
    over the same prompts. With ``kind="eo"`` three more rows per member give paired
    differences (:func:`self_preference_difference`): ``weighted - plain``,
    ``weighted - single`` and ``plain - single`` — the question is whether the
    weighting lowers self-preference, and these intervals answer it directly.
    Members without enough pairs holding their own responses are returned in the
    skipped list.
    """
    _codes, members = judge_codes(pairs, judges)
    plain = familiarity_weighted_ensemble(
        pairs, judges=members, tau=0.0, familiarity=familiarity, name="plain"
    )
    weighted = familiarity_weighted_ensemble(
        pairs, judges=members, tau=tau, familiarity=familiarity, name="weighted"
    )
    opts = dict(
        kind=kind,
        verdict=verdict,
        human_ties=human_ties,
        judge_ties=judge_ties,
        boot=boot,
        min_n=min_n,
    )
    opts_diff = {k: v for k, v in opts.items() if k != "kind"}
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
            rows.append(
                _comparison_row(j, evaluator, {"plain": 0.0, "weighted": tau}.get(evaluator), r)
            )
        if kind != "eo":
            continue
        done = {row["evaluator"] for row in rows if row["member"] == j}
        tables = {"single": single, "plain": plain, "weighted": weighted}
        for side, ref in (("weighted", "plain"), ("weighted", "single"), ("plain", "single")):
            if not {side, ref} <= done:
                continue  # a side was skipped, with its reason, above
            evaluator, table, ref_table = f"{side} - {ref}", tables[side], tables[ref]
            try:
                r = self_preference_difference(
                    table,
                    ref_table,
                    judge=j,
                    **opts_diff,  # type: ignore[arg-type]
                )
            except EstimationError as exc:
                skipped.append(Skipped(f"self_preference_eo[{evaluator}]", j, str(exc)))
                continue
            rows.append(_comparison_row(j, evaluator, tau if side == "weighted" else 0.0, r))
    return pd.DataFrame(rows), skipped


def _paired(evaluator: pd.DataFrame, reference: pd.DataFrame) -> pd.DataFrame:
    """``evaluator``'s rows with the reference verdict as ``p_a_ref``, on the items both
    judged; an item twice in either table is an error (the pairing would be ambiguous)."""
    for name, t in (("evaluator", evaluator), ("reference", reference)):
        dup = t["item_id"].duplicated()
        if dup.any():
            raise InputError(
                f"the {name} table has item {t['item_id'][dup].iloc[0]!r} more than once",
                column="item_id",
                fix="give one row per item (one judge or one ensemble per table)",
            )
    return evaluator.merge(
        reference[["item_id", "p_a"]], on="item_id", how="inner", suffixes=("", "_ref")
    )


def _two_ratios(first: str, second: str) -> Callable[[FloatArray], dict[str, float]]:
    """A spec's ``components``: ``{first: t0 / t1, second: t2 / t3}`` (NaN over 0)."""

    def components(t: FloatArray) -> dict[str, float]:
        return {
            first: float(t[0] / t[1]) if t[1] else float("nan"),
            second: float(t[2] / t[3]) if t[3] else float("nan"),
        }

    return components


def _paired_difference(
    name: str,
    values: FloatArray,
    used: NDArray[np.bool_],
    label: str,
    *,
    required: tuple[tuple[int, str], ...],
    parts: tuple[str, str],
    method: str,
    both: pd.DataFrame,
    boot: Resampling,
    min_n: int,
) -> MetricResult:
    """``t0 / t1 - t2 / t3`` over the rows ``used`` of ``values`` (four columns: the
    evaluator's ratio, then the reference's), one cluster bootstrap over ``both``'s
    prompts, so the interval is that of the difference; ``parts`` name the two ratios."""
    stat = GroupedStatistic(
        name=name,
        values=values,
        group=np.where(used, 0, -1).astype(np.intp),
        labels=(label,),
        combine=difference_of_ratios,
        required=required,
    )
    spec = MetricSpec(name, stat, method, _two_ratios(*parts))
    return run_one(spec, clusters_of(both), boot=boot, min_n=min_n)


def self_preference_difference(
    evaluator: pd.DataFrame,
    reference: pd.DataFrame,
    *,
    judge: str,
    verdict: Verdict = "prob",
    human_ties: HumanTies = "drop",
    judge_ties: JudgeTies = "half",
    boot: Resampling = Resampling(),
    min_n: int = 10,
) -> MetricResult:
    """Paired difference of EO self-preference toward ``judge``'s own responses.

    ``evaluator`` and ``reference`` are verdict tables (one row per item, e.g. an
    ensemble and a member alone); both are read as verdicts about ``judge``'s own
    responses, over the items both judged (matched on ``item_id``). With ``v_e``,
    ``v_r`` their verdicts for the own response and ``w1`` / ``w0`` the weights of
    "the human prefers the own / the other response"::

        diff = sum(w1 (v_e - v_r)) / sum(w1) - sum(w0 ((1 - v_e) - (1 - v_r))) / sum(w0)
             = Bias_EO(evaluator) - Bias_EO(reference)            (Definition 4.1)

    One cluster bootstrap over prompts resamples both together, so the interval is
    that of the difference. ``components`` hold the two recall differences.

    >>> ids = [str(i) for i in range(16)]
    >>> t = validate_pairs(pd.DataFrame({
    ...     "item_id": ids, "prompt_id": ids, "model_a": "me", "model_b": "you",
    ...     "judge": "me", "human": [1, 0] * 8, "p_a_first": [0.9, 0.7, 0.8, 0.6] * 4,
    ...     "p_a_second": None, "p_a": None}))
    >>> ens = validate_pairs(t.assign(judge="ens", p_a_first=[0.6, 0.5, 0.6, 0.3] * 4, p_a=None))
    >>> r = self_preference_difference(ens, t, judge="me", min_n=1, boot=Resampling(n_boot=200))
    >>> round(r.estimate, 6)  # EO: ens (0.6 - 0.6) minus me alone (0.85 - 0.35)
    -0.5
    """
    check_min_n(min_n)
    check_modes(verdict=verdict, human_ties=human_ties, judge_ties=judge_ties)
    both = _paired(evaluator, reference)
    side = favored_side(both.assign(judge=judge))
    h = orient(both["human"].to_numpy(float), side)
    opts = dict(verdict=verdict, judge_ties=judge_ties)
    v_e = orient(judge_score(both["p_a"].to_numpy(float), **opts), side)  # type: ignore[arg-type]
    v_r = orient(judge_score(both["p_a_ref"].to_numpy(float), **opts), side)  # type: ignore[arg-type]
    te, used_e = attribute_gap_values(h, v_e, human_ties=human_ties)
    tr, used_r = attribute_gap_values(h, v_r, human_ties=human_ties)
    used = used_e & used_r & (side != 0)
    values = np.where(used[:, None], te, 0.0)
    values[:, 0] -= np.where(used, tr[:, 0], 0.0)
    values[:, 2] -= np.where(used, tr[:, 2], 0.0)
    return _paired_difference(
        "self_preference_eo_difference",
        values,
        used,
        judge,
        required=(
            (1, "pairs both judged where the human prefers the judge's own response"),
            (3, "pairs both judged where the human prefers the other response"),
        ),
        parts=("recall_own_difference", "recall_other_difference"),
        method=f"paired difference of EO self-preference (Def. 4.1) toward {judge}'s own "
        f"responses, evaluator minus reference, on the items both judged; verdict={verdict}, "
        f"human ties {human_ties}",
        both=both,
        boot=boot,
        min_n=min_n,
    )


# --- evaluating the ensembles where the members' own responses are absent ---------------


def _agreement_terms(
    pairs: pd.DataFrame, *, verdict: Verdict, human_ties: HumanTies, judge_ties: JudgeTies
) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Per-row ``[w1 * v, w1, w0 * (1 - v), w0]`` with the side the human prefers as S = a."""
    check_modes(verdict=verdict, human_ties=human_ties, judge_ties=judge_ties)
    v = judge_score(pairs["p_a"].to_numpy(float), verdict=verdict, judge_ties=judge_ties)
    return attribute_gap_values(pairs["human"].to_numpy(float), v, human_ties=human_ties)


def agreement_spec(
    pairs: pd.DataFrame,
    codes: NDArray[np.intp],
    labels: tuple[str, ...],
    *,
    verdict: Verdict = "prob",
    human_ties: HumanTies = "drop",
    judge_ties: JudgeTies = "half",
) -> MetricSpec:
    """Agreement with the human labels per judge, as a spec for a shared bootstrap.

    See :func:`human_agreement` for the definition.
    """
    values, used = _agreement_terms(
        pairs, verdict=verdict, human_ties=human_ties, judge_ties=judge_ties
    )
    stat = GroupedStatistic(
        name="human_agreement",
        values=np.column_stack([values, used.astype(float)]),
        group=np.where(used, codes, -1),
        labels=labels,
        combine=pooled_ratio,  # agreements over both human-label groups
        required=((4, "pairs with a verdict and a human label"),),
        boot_k=4,
    )
    components = _two_ratios("agreement_human_prefers_a", "agreement_human_prefers_b")
    ties = f"verdict={verdict}" + (f", judge ties {judge_ties}" if verdict == "pick" else "")
    method = (
        "agreement with the human labels: mean share of the verdict given to the response "
        f"the human prefers; {ties}, human ties {human_ties}"
    )
    # a share whose reference is chance (0.5: a judge that always says 50/50), as
    # agreement_accuracy's: its p-value tests against chance, never against 0
    return MetricSpec("human_agreement", stat, method, components, null=0.5)


def human_agreement(
    pairs: pd.DataFrame,
    *,
    judge: str | None = None,
    verdict: Verdict = "prob",
    human_ties: HumanTies = "drop",
    judge_ties: JudgeTies = "half",
    boot: Resampling = Resampling(),
    min_n: int = 10,
) -> MetricResult:
    """How often the judge sides with the human label (accuracy), with a cluster-bootstrap interval.

    With ``v`` the judge's verdict for a (``p_a``, or the pick with
    ``verdict="pick"``) and ``w1`` / ``w0`` the weights of "the human prefers a / b"
    (``human_ties="drop"``: 1/0 by the side the label leans to, ties left out;
    ``"split"``: ``human`` and ``1 - human``)::

        agreement = (sum(w1 * v) + sum(w0 * (1 - v))) / (sum(w1) + sum(w0))

    i.e. the expected accuracy of a judge that picks a with probability ``v``
    (0.5 for a judge that always says 50/50: the result's ``null``, against which its
    p-value tests, as the agreement accuracy's in :mod:`recuse.metrics.agreement`).
    ``components`` hold the agreement when the human prefers a and when the human
    prefers b.

    >>> t = validate_pairs(pd.DataFrame({
    ...     "item_id": list("abcd"), "prompt_id": list("abcd"), "model_a": None,
    ...     "model_b": None, "judge": "j", "human": [1, 1, 0, 0.5],
    ...     "p_a_first": [0.9, 0.4, 0.2, 1.0], "p_a_second": None, "p_a": None}))
    >>> r = human_agreement(t, min_n=1, boot=Resampling(n_boot=50))
    >>> round(r.estimate, 6), r.n  # (0.9 + 0.4 + 0.8) / 3; the tie is left out
    (0.7, 3)
    """
    check_min_n(min_n)
    rows = single_judge(pairs, judge)
    codes, labels = judge_codes(rows, None)
    spec = agreement_spec(
        rows, codes, labels, verdict=verdict, human_ties=human_ties, judge_ties=judge_ties
    )
    return run_one(spec, clusters_of(rows), boot=boot, min_n=min_n)


def agreement_difference(
    pairs: pd.DataFrame,
    evaluator: str,
    reference: str,
    *,
    verdict: Verdict = "prob",
    human_ties: HumanTies = "drop",
    judge_ties: JudgeTies = "half",
    boot: Resampling = Resampling(),
    min_n: int = 10,
) -> MetricResult:
    """Paired difference ``human_agreement(evaluator) - human_agreement(reference)``.

    Over the items both judged (matched on ``item_id``) whose human label counts
    (see :func:`human_agreement`); one cluster bootstrap over prompts resamples the
    two evaluators together, so the interval is that of the difference (narrower
    than the two separate intervals suggest when the evaluators are correlated).
    ``components`` hold the two agreements on those items.
    """
    check_min_n(min_n)
    if evaluator == reference:
        raise ConfigError("evaluator and reference must be different judges")
    both = _paired(single_judge(pairs, evaluator), single_judge(pairs, reference))
    opts = dict(verdict=verdict, human_ties=human_ties, judge_ties=judge_ties)
    ve, used_e = _agreement_terms(both, **opts)  # type: ignore[arg-type]
    vr, used_r = _agreement_terms(both.assign(p_a=both["p_a_ref"]), **opts)  # type: ignore[arg-type]
    used = used_e & used_r
    weight = ve[:, 1] + ve[:, 3]  # the same human weights for both evaluators
    agree_e = np.where(used, ve[:, 0] + ve[:, 2], 0.0)
    agree_r = np.where(used, vr[:, 0] + vr[:, 2], 0.0)
    w = np.where(used, weight, 0.0)
    res = _paired_difference(
        "human_agreement_difference",
        np.column_stack([agree_e, w, agree_r, w]),
        used,
        f"{evaluator} - {reference}",
        required=((1, "items both judged with a human label"),),
        parts=("agreement_evaluator", "agreement_reference"),
        method=f"paired difference of agreement with the human labels, {evaluator} minus "
        f"{reference}, on the items both judged; verdict={verdict}, human ties {human_ties}",
        both=both,
        boot=boot,
        min_n=min_n,
    )
    return MetricResult(**{**res.__dict__, "judge": evaluator})


def with_member_perplexities(table: pd.DataFrame, pairs: pd.DataFrame, member: str) -> pd.DataFrame:
    """``table`` with ``ppl_a`` / ``ppl_b`` taken from ``member``'s rows of ``pairs``.

    Matched on ``item_id`` (a and b are the same responses in every row of an
    item); items ``member`` has no perplexities for get NaN. With it,
    :func:`~recuse.metrics.familiarity.familiarity_bias` and
    :func:`~recuse.metrics.familiarity.perplexity_curve` measure how the verdicts
    of ``table``'s judge (an ensemble, or another member) move with what
    ``member`` finds familiar.

    >>> p = pd.DataFrame({"item_id": ["x", "y", "x"], "judge": ["j", "j", "k"],
    ...                   "ppl_a": [2.0, 3.0, 5.0], "ppl_b": [4.0, 1.5, 6.0]})
    >>> e = pd.DataFrame({"item_id": ["y", "x", "z"], "judge": "ens"})
    >>> with_member_perplexities(e, p, "j")[["ppl_a", "ppl_b"]].values.tolist()
    [[3.0, 1.5], [2.0, 4.0], [nan, nan]]
    """
    for col in ("ppl_a", "ppl_b"):
        if col not in pairs.columns:
            raise InputError(
                f"the table has no {col} column",
                column=col,
                fix="compute perplexities under every member first (recuse.judging.perplexity)",
            )
    codes, _labels = judge_codes(pairs, member)
    rows = pairs.loc[codes == 0, ["item_id", "ppl_a", "ppl_b"]]
    if rows["item_id"].duplicated().any():
        raise InputError(
            f"judge {member!r} has more than one row for an item",
            column="item_id",
            fix="keep one row per (item_id, judge)",
        )
    ppl = rows.set_index("item_id")
    out = table.drop(columns=[c for c in ("ppl_a", "ppl_b") if c in table.columns])
    for col in ("ppl_a", "ppl_b"):
        out[col] = out["item_id"].map(ppl[col]).astype(float)
    return out


def compare_ensembles(
    pairs: pd.DataFrame,
    *,
    judges: Sequence[str] | None = None,
    taus: Sequence[float] = (1.0,),
    familiarity: Familiarity = "min",
    verdict: Verdict = "prob",
    human_ties: HumanTies = "drop",
    judge_ties: JudgeTies = "half",
    boot: Resampling = Resampling(),
    min_n: int = 10,
    min_n_slope: int = 20,
) -> tuple[pd.DataFrame, list[Skipped]]:
    """Members alone, the plain ensemble and the weighted ensembles on human-labelled pairs.

    Needs no pair with a member's own response (unlike
    :func:`compare_self_preference`). All evaluators are compared on the same
    items: those every member judged with both perplexities (the others are
    dropped and counted in ``attrs["items_dropped"]``). Evaluators: each member
    (``kind="single"``), the plain ensemble ``ensemble(tau=0)`` and one weighted
    ensemble ``ensemble(tau=<tau>)`` per ``tau`` in ``taus``. Metrics, one row each
    (all bootstrapped over prompts with the same ``boot``):

    * ``human_agreement`` (:func:`human_agreement`) and, for every evaluator but the
      plain ensemble, ``human_agreement_difference`` against it (paired);
    * ``position_consistency`` and ``first_position_rate`` (pairs judged in both
      orders);
    * ``familiarity_bias`` with the log-perplexity difference of each member
      (column ``perplexity_of``; needs ``min_n_slope`` pairs).

    Columns (in words: :data:`ENSEMBLE_COLUMNS`): ``evaluator, kind, tau, metric,
    perplexity_of``, then the result's ``definition``, its numbers, what is said
    beside them (``null``, ``null_bound``, ``signed``, ``absolute_value``, ``warnings``,
    ``notes``: the result's own) and ``component_*``. Metrics that cannot be
    estimated come back in the skipped list with the reason (never as a number).
    ``attrs["mean_weights"]`` holds each member's mean weight in each ensemble.
    """
    check_min_n(min_n)
    check_modes(verdict=verdict, human_ties=human_ties, judge_ties=judge_ties)
    codes, members = judge_codes(pairs, judges)
    if len(members) < 2:
        raise ConfigError("an ensemble needs at least two judges")
    for col in ("ppl_a", "ppl_b"):
        if col not in pairs.columns:
            raise InputError(
                f"the table has no {col} column",
                column=col,
                fix="compute perplexities under every member first (recuse.judging.perplexity)",
            )
    taus = list(dict.fromkeys(float(t) for t in taus))
    if any(not np.isfinite(t) or t <= 0 for t in taus):
        raise ConfigError(f"taus must be finite numbers > 0 (tau=0 is always included); got {taus}")
    rows = pairs.loc[codes >= 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = (
            rows["p_a"].notna()
            & np.isfinite(np.log(rows["ppl_a"].to_numpy(float)))
            & np.isfinite(np.log(rows["ppl_b"].to_numpy(float)))
        )
    per_item = ok.groupby(rows["item_id"]).sum()
    common = per_item.index[per_item == len(members)]
    all_items = rows["item_id"].nunique()
    if len(common) == 0:
        raise EstimationError(
            "no item has a verdict and both perplexities from every member — nothing to compare"
        )
    rows = rows[among(rows["item_id"], common)].reset_index(drop=True)

    evaluators: list[tuple[str, str, float | None, pd.DataFrame]] = [
        (m, "single", None, rows[rows["judge"] == m].reset_index(drop=True)) for m in members
    ]
    plain_label = "ensemble(tau=0)"
    mean_weights: dict[str, dict[str, float]] = {}
    for kind, tau in [("plain", 0.0), *[("weighted", t) for t in taus]]:
        label = f"ensemble(tau={tau:g})"
        ens = familiarity_weighted_ensemble(
            rows, judges=members, tau=tau, familiarity=familiarity, name=label
        )
        evaluators.append((label, kind, tau, ens))
        w = familiarity_weights(rows, judges=members, tau=tau, familiarity=familiarity)
        mean_weights[label] = {m: float(w[m].mean()) for m in members}

    keep = ["item_id", "prompt_id", "judge", "human", "p_a_first", "p_a_second", "p_a"]
    stacked = pd.concat([t[keep] for _, _, _, t in evaluators], ignore_index=True)
    labels = tuple(label for label, _, _, _ in evaluators)
    s_codes, s_labels = judge_codes(stacked, labels)
    specs = [
        agreement_spec(
            stacked, s_codes, s_labels, verdict=verdict, human_ties=human_ties,
            judge_ties=judge_ties,
        ),
        consistency_spec(stacked, s_codes, s_labels),
        first_position_spec(stacked, s_codes, s_labels, verdict=verdict),
    ]  # fmt: skip
    results, skipped = run_specs(specs, clusters_of(stacked), boot=boot, min_n=min_n)
    tagged: list[tuple[MetricResult, str | None]] = [(r, None) for r in results]
    for label in labels:
        if label == plain_label:
            continue
        try:
            diff = agreement_difference(
                stacked,
                label,
                plain_label,
                verdict=verdict,
                human_ties=human_ties,
                judge_ties=judge_ties,
                boot=boot,
                min_n=min_n,
            )
            tagged.append((diff, None))
        except EstimationError as exc:
            skipped.append(Skipped("human_agreement_difference", label, str(exc)))
    for label, _kind, _tau, table in evaluators:
        for m in members:
            t = with_member_perplexities(table, rows, m)
            try:
                fb = familiarity_bias(
                    t,
                    judge=label,
                    verdict=verdict,
                    judge_ties=judge_ties,
                    boot=boot,
                    min_n=min_n_slope,
                )
                tagged.append((fb, m))
            except EstimationError as exc:
                skipped.append(Skipped(f"familiarity_bias[perplexity of {m}]", label, str(exc)))

    info = {label: (kind, tau) for label, kind, tau, _ in evaluators}
    order = {label: i for i, label in enumerate(labels)}
    metric_order = {
        "human_agreement": 0, "human_agreement_difference": 1, "position_consistency": 2,
        "first_position_rate": 3, "familiarity_bias": 4,
    }  # fmt: skip
    out_rows: list[dict[str, object]] = []
    for r, ppl_of in tagged:
        label = str(r.judge)
        cols = _result_columns(r)
        out_rows.append(
            {
                "evaluator": label,
                "kind": info[label][0],
                "tau": info[label][1],
                "metric": cols.pop("metric"),
                "perplexity_of": ppl_of,
                **cols,
            }
        )
    frame = pd.DataFrame(out_rows) if out_rows else pd.DataFrame(columns=list(ENSEMBLE_COLUMNS))
    frame = frame.sort_values(
        ["evaluator", "metric", "perplexity_of"],
        key=lambda s: s.map(order) if s.name == "evaluator"
        else s.map(metric_order) if s.name == "metric" else s.map({m: i for i, m in
                                                                    enumerate(members)}),
        kind="stable",
    ).reset_index(drop=True)  # fmt: skip
    frame.attrs["items"] = len(common)
    frame.attrs["items_dropped"] = int(all_items - len(common))
    frame.attrs["members"] = list(members)
    frame.attrs["mean_weights"] = mean_weights
    return frame, skipped
