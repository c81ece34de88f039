"""Self-preference: does the judge pick its own answers more often than its own
competence predicts? The competence-calibrated estimate is the headline where the data
support it (the judge also judged pairs without its own model, and there are human
labels); Wataoka et al.'s equal opportunity (Def. 4.1) and demographic parity stay,
labelled as the papers' definitions, and EO is the headline where no calibrated
estimate can be made."""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Collection

import numpy as np
import pandas as pd

from recuse.analyses.base import (
    Analysis,
    Context,
    add_pairwise_results,
    coef_figure,
    families_of,
    findings_of,
    judged,
    needs_own_answers,
    needs_verdicts,
    slug,
    truncate,
)
from recuse.biases.self_preference import CALIBRATED as CALIBRATED
from recuse.biases.self_preference import DP as DP
from recuse.biases.self_preference import EO as EO
from recuse.biases.self_preference import HEADING
from recuse.biases.self_preference import MATERIAL_PICK_PROBABILITY as MATERIAL_PICK_PROBABILITY
from recuse.biases.self_preference import UNADJUSTED as UNADJUSTED
from recuse.choices import HumanTies
from recuse.data.inputs import Input
from recuse.errors import RecuseError
from recuse.metrics.competence import COMPETENCE_PAIRS, FAMILY_PAIRS, OWN_PAIRS
from recuse.metrics.result import MetricResult
from recuse.metrics.self_preference import ConfusionMatrix, confusion_matrix, favored_side
from recuse.metrics.summary import PairwiseBias
from recuse.numbers import count
from recuse.report import figures as fig
from recuse.report.bias import Bias
from recuse.report.model import NotEstimated, Table
from recuse.roster import Roster
from recuse.tables import caller_option


def describe_dp(r: MetricResult) -> str:
    """The two rates of a DP difference, e.g. ``judge 0.63 vs humans 0.64``, or of the
    calibrated estimate, ``picks its own 0.88 vs 0.83 predicted from 141 pairs without its
    own answer`` (the pairs its competence is mostly learnt on)."""
    own, pred = r.components.get("own_pick_rate"), r.components.get("predicted_own_pick_rate")
    if r.metric == CALIBRATED.key and own is not None and pred is not None:
        if np.isfinite(own) and np.isfinite(pred):
            other = r.components.get("pairs_without_own")
            learnt = f" from {other:,.0f} pairs without its own answer" if other else ""
            lapse = r.components.get("slot_lapse")
            if lapse is not None and np.isfinite(lapse):
                which = "first" if r.components.get("slot_lapse_slot", 1) > 0 else "second"
                learnt += (
                    f"; takes the answer shown {which} on {lapse:.0%} of its orders whatever "
                    "the pair (a slot lapse, in the prediction)"
                )
            return f"picks its own {own:.2f} vs {pred:.2f} predicted{learnt}"
    own, pred = r.components.get("family_pick_rate"), r.components.get("predicted_family_pick_rate")
    if r.metric == "family_preference_calibrated" and own is not None and pred is not None:
        if np.isfinite(own) and np.isfinite(pred):
            return f"picks its family's {own:.2f} vs {pred:.2f} predicted"
    judge, human = r.components.get("judge_prefers_s"), r.components.get("human_prefers_s")
    if r.metric.endswith("_dp") and judge is not None and human is not None:
        if np.isfinite(judge) and np.isfinite(human):
            return f"judge {judge:.2f} vs humans {human:.2f}"
    return ""


def calibrated_first(
    ctx: Context,
    analysis: Analysis,
    dataset: str,
    calibrated: Bias,
    eo: Bias,
    frame: pd.DataFrame | None = None,
) -> None:
    """Where a judge has a calibrated estimate on ``dataset``, its EO finding leaves the
    summary (it stays in the section, labelled unadjusted); where it has none, EO is
    shown in the summary in its place (still unflagged) and the calibrated skip becomes
    a section note saying why. With the judged rows (``frame``), a judge none of whose
    pairs has both generators known, or none of whose pairs holds its own answer, is
    told so (:func:`_generators_reason`)."""
    part = ctx.part(analysis)
    have = {f.judge for f in findings_of(ctx, analysis, dataset, calibrated)}
    part.findings[:] = [
        dataclasses.replace(f, headline=False)
        if f.dataset == dataset and f.bias.key == eo.key and f.judge in have
        else f
        for f in part.findings
    ]
    eo_judges = {f.judge for f in findings_of(ctx, analysis, dataset, eo)}

    def mine(k: NotEstimated, bias: Bias) -> bool:
        return k.dataset == dataset and k.bias is not None and k.bias.key == bias.key

    # a judge with neither estimate: its one summary entry names the headline bias (the
    # calibrated one) with the reason that says most (:func:`_headline_reason`); the EO
    # skip stays in the list of skips, out of the summary
    eo_why = {k.judge: k for k in ctx.skipped if mine(k, eo)}
    kept = []
    for k in ctx.skipped:
        if mine(k, calibrated):
            if k.judge in eo_judges:
                part.notes.append(
                    f"{dataset}, {k.judge}: no calibrated estimate ({k.reason})"
                    f" — equal opportunity is shown in its place, {UNADJUSTED}"
                )
                continue
            says_it = _says_none(k)  # before EO's reason, which says it too, replaces it
            k = _headline_reason(k, eo_why.get(k.judge))
            family = calibrated.key.startswith("family")
            if not says_it:
                k = _generators_reason(k, frame, ctx, family=family)
            if not family:
                k = _line_hint(_spelling_hint(k, frame, ctx), frame, ctx)
        elif mine(k, eo):
            k = dataclasses.replace(k, headline=False)
        kept.append(k)
    # a judge with an EO skip and no word on the calibrated estimate (neither a finding
    # nor a skip) misses the headline too: said of the calibrated metric, with EO's reason.
    # A judge whose calibrated estimate was made has no such skip (gpt-3.5's family
    # preference on LLMBar's MT-Bench set with a quarter of its labels ties read both
    # a finding and "family_preference_eo: only 4 pairs…" as its skip)
    named = have | {k.judge for k in kept if mine(k, calibrated)}
    metric = next(
        (m for m, b in analysis.metrics.items() if b is not None and b.key == calibrated.key),
        calibrated.key,
    )
    for k in [k for k in kept if mine(k, eo) and k.judge not in named]:
        kept.append(dataclasses.replace(k, headline=True, bias=calibrated, metric=metric))
    ctx.skipped[:] = kept


def _generators_reason(
    skip: NotEstimated, frame: pd.DataFrame | None, ctx: Context, *, family: bool
) -> NotEstimated:
    """The judge's reason when what its pairs' generators are leaves it none to estimate
    from, said as that, instead of what it leaves missing ("no pairs where the human
    prefers the judge's own response", read as if its answers had all lost):

    * no pair it judged has both generators known (Falcon on LLMBar's sets that record
      no generator);
    * they are known, but none of its pairs holds its own (``family``: a family
      member's) answer beside another model's, with the models whose answers it judged
      (JudgeBench's judges judge only GPT-4o's and Claude-3.5-Sonnet's answers, each
      pair two answers of one model).
    """
    if frame is None or not skip.judge:
        return skip
    rows = frame[frame["judge"] == skip.judge]
    known = rows[rows["model_a"].notna() & rows["model_b"].notna()]
    if len(rows) == 0:
        return skip
    if len(known) == 0:
        return dataclasses.replace(
            skip,
            reason=f"the generators of the answers are unknown in all {len(rows):,} of its "
            "pairs (model_a / model_b missing), so none can be told to be its own or its "
            "family's",
        )
    try:
        names = pd.concat([known["judge"], known["model_a"], known["model_b"]])
        families = families_of(names, ctx.roster) if family else None
        side = favored_side(
            known, relation="family" if family else "self", families=families, selves=ctx.selves
        )
    except RecuseError:  # a model without a family: the existing reason says so
        return skip
    if bool((side != 0).any()):
        return skip
    models = sorted({str(m) for m in pd.concat([known["model_a"], known["model_b"]])})
    shown = ", ".join(models[:5]) + (f" and {len(models) - 5} more" if len(models) > 5 else "")
    holds = (
        "an answer of its family (not its own) beside one from outside the family"
        if family
        else "its own answer beside another model's"
    )
    return dataclasses.replace(
        skip,
        reason=f"none of its {len(rows):,} pairs holds {holds} (the answers are by {shown})",
    )


def _line_hint(skip: NotEstimated, frame: pd.DataFrame | None, ctx: Context) -> NotEstimated:
    """A judge with no answer of its own among its pairs (self = its snapshot, the
    default), some of whose generators are other models of its line (``gpt-4-0613``
    for the judge ``gpt-4``): the reason ends by naming them and ``--self-scope line``,
    which counts them as its own (:func:`line_hint_words`)."""
    if frame is None or not skip.judge:
        return skip
    models = generators_of(frame, skip.judge)
    words = line_hint_words(skip.judge, models, ctx.roster, self_scope=ctx.options.self_scope)
    return dataclasses.replace(skip, reason=skip.reason + words) if words else skip


def _spelling_hint(skip: NotEstimated, frame: pd.DataFrame | None, ctx: Context) -> NotEstimated:
    """A judge with no answer of its own among its pairs, one of whose generators is
    spelt like it: the reason ends by naming that generator and how to give both one
    name (:func:`spelling_hint_words`)."""
    if frame is None or not skip.judge:
        return skip
    words = spelling_hint_words(skip.judge, generators_of(frame, skip.judge), ctx.roster)
    return dataclasses.replace(skip, reason=skip.reason + words) if words else skip


def generators_of(frame: pd.DataFrame, judge: str) -> set[str]:
    """The models whose answers ``judge`` judged: ``model_a`` and ``model_b`` of a pairs
    table, ``model`` of a ratings table."""
    rows = frame[frame["judge"] == judge]
    columns = [c for c in ("model_a", "model_b", "model") if c in rows.columns]
    return {str(m) for c in columns for m in rows[c].dropna()}


def line_hint_words(
    judge: str,
    models: Collection[str],
    roster: Roster,
    *,
    self_scope: str = "snapshot",
    option: str | None = None,
) -> str:
    """What ends the reason of a judge none of whose judged ``models`` is itself (self =
    its snapshot, the default) where some are other models of its line: their names and
    ``--self-scope line``, which counts them as its own; '' where none is, where the
    judge is among ``models`` or unknown to the roster, or where self is its line
    already. Judged by the API's undated name, which served one of those snapshots, its
    self-preference (or a ratings judge's self-bias) read 'not estimated' with nothing
    saying why its line's answers were not its own. ``option``: the words naming the
    option (default: this command's ``--self-scope line``, or the API's keyword)."""
    if self_scope != "snapshot" or judge in models or judge not in roster:
        return ""
    line = roster.line(judge)
    kin = sorted(m for m in models if m in roster and roster.line(m) == line)
    if not kin:
        return ""
    named = ", ".join(repr(m) for m in kin[:3]) + (
        f" and {len(kin) - 3} more" if len(kin) > 3 else ""
    )
    return (
        f"; {named} of its model line wrote answers here, read as its family (self is the "
        "judge's own snapshot): "
        + (
            "if the judge is one of them, "
            if line == judge  # the undated name may have served any of them
            else "to read its model line as one model, "  # a snapshot is not another
        )
        + (option or caller_option("--self-scope line", 'self_scope="line"'))
        + " counts them as its own"
    )


def spelling_hint_words(
    judge: str, models: Collection[str], roster: Roster, *, columns: str = "model_a / model_b"
) -> str:
    """What ends the reason of a judge none of whose judged ``models`` is itself where
    one is spelt like it (:func:`_spelt_alike`): that generator and how to give both one
    name (in the judge column and ``columns``, the table's model columns), since a judge
    run as ``smollm2-135m-instruct`` over answers recorded as ``SmolLM2-135M`` has no
    self-preference for that alone; '' where none is."""
    if judge in models:
        return ""
    alike = [m for m in sorted(models) if _spelt_alike(judge, m, roster)]
    if not alike:
        return ""
    named = (
        repr(alike[0])
        if len(alike) == 1
        else "one of "
        + ", ".join(repr(m) for m in alike[:3])
        + (f" (and {len(alike) - 3:,} more)" if len(alike) > 3 else "")
    )
    return (
        f"; if {named} is this judge's model under another name, write one name for "
        f"both (in the judge and {columns} columns, or --judge-id on `recuse judge`) or "
        "give both one id in a roster file (--roster; docs: your data, 'Your model names')"
    )


def _spelt_alike(judge: str, model: str, roster: Roster) -> bool:
    """Whether generator ``model`` may be ``judge`` under another spelling, one of the two
    a name the roster does not know (so nothing said they were one model): one's letters
    and digits begin the other's (``SmolLM2-135M``, ``smollm2-135m-instruct``; not
    ending inside one of its numbers: ``qwen2-7b`` is not ``qwen2-72b``), they differ by
    a typo in their letters (their numbers the same: ``my-judge-v1`` is not
    ``my-judge-v2``), or one is the other behind a provider's prefix (``openai/gpt-4``
    and ``gpt-4``, the name after the last ``/`` read through the roster)."""
    if judge not in roster.kept and model not in roster.kept:
        return False  # both known: the roster says they are two models
    # a provider's or hub's prefix (openai/gpt-4, meta-llama/…): the name after its last
    # '/' is the other name, or the roster's for it
    tails = [name.rsplit("/", 1)[-1].strip() for name in (judge, model)]
    for (name, tail), other in (((judge, tails[0]), model), ((model, tails[1]), judge)):
        if tail != name and tail in roster and roster.canonical(tail) == other:
            return True
    a, b = ("".join(ch for ch in name.casefold() if ch.isalnum()) for name in (judge, model))
    short, long = sorted((a, b), key=len)
    if len(short) >= 4 and long.startswith(short):
        # not where the shorter name ends inside the longer's number: qwen2-7b is not
        # qwen2-72b, nor model-1 model-10
        return not (short[-1].isdigit() and long[len(short) :][:1].isdigit())
    # a typo, not another number: my-judge-v1 and my-judge-v2, qwen2-7b and qwen2-72b
    # are two models (their letters alike, their numbers not)
    if _DIGITS.findall(a) != _DIGITS.findall(b):
        return False
    return difflib.SequenceMatcher(None, a, b).ratio() >= 0.85


_DIGITS = re.compile(r"\d+")


#: the calibrated estimate's reasons that say the judge has none of the pairs it needs
#: (the bootstrap's "no <pairs>", :func:`recuse.metrics.bootstrap.cluster_bootstrap`)
_NONE_OF = tuple(f"no {pairs}" for pairs in (OWN_PAIRS, COMPETENCE_PAIRS, FAMILY_PAIRS))


def _says_none(skip: NotEstimated) -> bool:
    """Whether the calibrated estimate's reason says the judge has none of the pairs it
    needs ("no pairs holding the judge's own answer", LLMBar's PaLM-2): kept as it is,
    not reworded by :func:`_generators_reason`."""
    return any(none in skip.reason for none in _NONE_OF)


def _headline_reason(calibrated: NotEstimated, eo: NotEstimated | None) -> NotEstimated:
    """Why a judge has no self- (or family-) preference at all: the calibrated estimate's
    reason when the judge has none of the pairs it needs ("no pairs holding …"); else
    EO's reason (e.g. no human labels), which names the missing data more plainly than
    the competence model's; the calibrated reason when EO has none."""
    if _says_none(calibrated) or eo is None:
        return calibrated
    if calibrated.metric:
        return dataclasses.replace(calibrated, reason=eo.reason)
    return dataclasses.replace(calibrated, reason=eo.reason, metric=eo.metric)


def _needs(frame: pd.DataFrame, roster: Roster) -> str | None:
    return needs_own_answers(frame, roster, relation="self")


def _build(ctx: Context, inp: Input, shared: PairwiseBias | None) -> None:
    add_pairwise_results(ctx, ANALYSIS, inp, shared)
    calibrated_first(ctx, ANALYSIS, inp.name, CALIBRATED, EO, judged(inp.frame))
    o = ctx.options
    part = ctx.part(ANALYSIS)
    rows = judged(inp.frame)
    eo = findings_of(ctx, ANALYSIS, inp.name, EO)
    examples: list[dict[str, object]] = []
    with ctx.timed(f"self-preference figures ({inp.name})", ANALYSIS):
        for judge in [f.judge for f in eo]:
            try:
                # the verdicts and human ties as EO reads them (the shared bootstrap's
                # verdict='prob' and --human-ties), so its recalls are EO's two terms:
                # under split the caption read recall other 0.50 beside EO's 0.44
                cm = confusion_matrix(
                    rows, judge=judge, selves=ctx.selves, verdict="prob", human_ties=o.ties
                )
            except RecuseError as exc:
                part.notes.append(f"{inp.name}, {judge}: no confusion matrix ({exc})")
                continue
            part.figures.append(
                fig.confusion_matrix(
                    [[cm.own_own, cm.own_other], [cm.other_own, cm.other_other]],
                    rows=["own answer", "other answer"],
                    cols=["own answer", "other answer"],
                    row_label="human prefers",
                    col_label="judge picks",
                    id=slug("cm", inp.name, judge),
                    title=f"{judge} on {inp.name}",
                    caption=cm_caption(judge, cm, ties=o.ties),
                    format=o.figure_format,
                )
            )
            if o.examples > 0:
                examples.extend(_examples(rows, judge, o.examples, ctx.selves))
        if examples:
            part.tables.append(
                Table(
                    slug("examples", inp.name),
                    "Examples: the judge picked its own answer, the human preferred the other "
                    f"— {inp.name}",
                    pd.DataFrame(examples),
                    columns=example_columns(o.examples),
                )
            )
        cal = findings_of(ctx, ANALYSIS, inp.name, CALIBRATED)
        if cal:
            part.figures.insert(
                0, coef_figure(cal, inp.name, "self-preference (calibrated to competence)", o)
            )
        if eo:
            part.figures.append(coef_figure(eo, inp.name, "self-preference (EO)", o))


def cm_caption(judge: str, cm: ConfusionMatrix, *, ties: HumanTies) -> str:
    """The confusion matrix's caption: what a cell counts, read as EO reads the pairs
    (the judge's share of the win, a human tie by ``ties``), and the two recalls whose
    difference is the judge's EO estimate, at the decimals the findings give it.

    >>> m = ConfusionMatrix(own_own=61, own_other=25, other_own=16, other_other=12.5)
    >>> print(cm_caption("j", m, ties="split").split(". ", 1)[1].split(";")[0])
    Recall own 0.71, other 0.44 (equal opportunity is their difference)
    """
    if ties == "split":
        human = "a human tie counts ½ in each row"
        left = "without a usable label or verdict"
    else:
        human = "a human tie is left out"
        left = "without a usable label or verdict, or with a human tie,"
    return (
        f"Pairs holding {judge}'s own answer: human label × the judge's share of the win "
        f"(its orders averaged: a pick 1, a tie ½, a stated probability as given; {human}). "
        f"Recall own {cm.recall_own:.2f}, other {cm.recall_other:.2f} (equal opportunity is "
        f"their difference); {count(cm.n_excluded)} pairs {left} left out."
    )


def example_columns(k: int) -> dict[str, str]:
    """What each column of the examples table holds (it had no words: its ``judge
    P(own better)`` read as a probability the judge stated, where it is the share of the
    win it gave, its orders averaged, and which pairs were shown was not said).

    >>> example_columns(3)["judge"]
    "the judge; up to 3 pairs each, the first in the input's order (not the most confident)"
    """
    return {
        "judge": f"the judge; up to {k} pairs each, the first in the input's order (not the "
        "most confident)",
        "item_id": "the pair's id in the input",
        "prompt": "the prompt, shortened",
        "own answer": "the answer of the judge's own model, shortened",
        "other answer": "the other model's answer, which the human label prefers (the "
        "human's P(own better) is under 0.5), shortened",
        "other model": "the model that wrote the other answer",
        "judge P(own better)": "the share of the win the judge gave its own answer, over the "
        "orders it judged averaged (1: its own in every order; a pick 1, a tie ½, a stated "
        "probability as given); over 0.5 in every row",
    }


def _examples(
    rows: pd.DataFrame, judge: str, k: int, selves: dict[str, str] | None = None
) -> list[dict[str, object]]:
    """Up to ``k`` pairs where ``judge`` picked its own answer against the human label."""
    rows = rows[rows["judge"] == judge]
    if "response_a" not in rows.columns or "response_b" not in rows.columns:
        return []
    side = favored_side(rows, selves=selves)
    p = rows["p_a"].to_numpy(float)
    h = rows["human"].to_numpy(float)
    own_p = np.where(side > 0, p, 1 - p)
    own_h = np.where(side > 0, h, 1 - h)
    hit = (side != 0) & (own_p > 0.5) & (own_h < 0.5)
    out: list[dict[str, object]] = []
    for i in np.flatnonzero(hit)[:k]:
        r = rows.iloc[i]
        own_is_a = side[i] > 0
        out.append(
            {
                "judge": judge,
                "item_id": r["item_id"],
                "prompt": truncate(r.get("prompt")),
                "own answer": truncate(r["response_a"] if own_is_a else r["response_b"]),
                "other answer": truncate(r["response_b"] if own_is_a else r["response_a"]),
                "other model": r["model_b"] if own_is_a else r["model_a"],
                "judge P(own better)": float(own_p[i]),
            }
        )
    return out


ANALYSIS = Analysis(
    heading=HEADING,
    intro=(
        "Does the judge pick its own answers more often than its own competence "
        "predicts? The headline, where the data allow it, is the calibrated estimate: "
        "the judge's rate of picking its own answer minus the rate a model of its "
        "competence predicts on the same pairs had authorship not mattered. The model "
        "(a Bradley–Terry fit of the judge's verdicts on the models' strengths from the "
        "human labels, with its preference for a slot and an own-answer term) learns how "
        "well the judge tells a stronger model's answer from a weaker one mostly on pairs "
        "without its own model, so a judge whose own model is strong is not read as biased "
        "because its own-better pairs are easy. It needs human labels and pairs without "
        "the judge's own model; where they are missing, EO is shown in its place, unflagged. "
        "n is the judge's own pairs. The papers' "
        "definitions stay below, not adjusted for competence and never flagged: equal "
        "opportunity (Wataoka et al., "
        "Def. 4.1; the judge's recall of the human-preferred answer when it is its own, "
        "minus its recall when the other answer is better) and demographic parity (how "
        "much more often it picks its own answer than the humans prefer it, on the same "
        "labelled pairs) are 0 for an unbiased judge only when both kinds of pair are "
        "equally hard: high for a strong judge with no bias, low for a weak one. "
        "Verdicts are the judge's probabilities averaged over the orders it "
        "judged; human ties are left out of EO."
    ),
    requires="pairs with judge verdicts and generator ids (model_a, model_b) that include "
    "the judge's own responses; EO also needs human labels",
    needs=needs_verdicts,
    estimable=_needs,
    metrics={
        "self_preference_calibrated": CALIBRATED,
        "self_preference_eo": EO,
        "self_preference_dp": DP,
    },
    describe=describe_dp,
    build=_build,
)
