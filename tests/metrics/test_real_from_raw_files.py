"""Headline numbers on real data recomputed from the upstream files, not from recuse's
readers: the JSON files are parsed here, each verdict mapped by the data README's
schema, generators of LLMBar's MT-Bench answers recovered here by exact text match
(a text several models wrote is no model's), lengths counted as whitespace words,
and every formula written out with numpy. recuse's readers and metrics must give the
same numbers to rounding (intervals are checked elsewhere: test_real_llmbar.py).

Formulas: first-position rate = mean over pairs judged in both orders of
(P(a | a first) + 1 − P(a | b first)) / 2; agreement = per pair the sign of the two
orders' picks summed (a flip is half a hit); prefer-longer gap = P(judge picks the
longer) − P(human picks it) over pairs of unequal length (Saito et al.'s Eq. 6 beside
it: recall where the human prefers the longer minus where the shorter); self EO
(Wataoka et al., Def. 4.1) = recall on the pairs the human gives the judge's own answer
minus recall on those it gives the other; DP = P(judge picks own) − P(human prefers own).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import recuse.data
from recuse.metrics import first_position_rate, self_preference, verbosity_bias
from recuse.metrics.agreement import accuracy
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.verbosity import prefer_longer_gap
from recuse.metrics.verdicts import use_orders

BOOT = Resampling(n_boot=50)
MTB = Path("llmbar/Dataset/Processed/MT-Bench")
#: LLMBar's judge folders -> recuse's canonical judge names
LLMBAR_JUDGES = {
    "ChatGPT": "gpt-3.5-turbo",
    "GPT-4": "gpt-4",
    "LLaMA2": "llama-2-70b-chat",
    "PaLM2": "palm-2",
}


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _mt_bench_writers(data: Path) -> dict[tuple[str, str], set[str]]:
    """(turn-1 question, turn-1 answer) -> the MT-Bench models that wrote that answer."""
    questions = {q["question_id"]: q["turns"][0] for q in _lines(data / "mt_bench/question.jsonl")}
    writers: dict[tuple[str, str], set[str]] = {}
    for f in sorted((data / "mt_bench/model_answer").glob("*.jsonl")):
        for a in _lines(f):
            key = (questions[a["question_id"]], a["choices"][0]["turns"][0])
            writers.setdefault(key, set()).add(a["model_id"])
    return writers


def _llmbar_by_hand(data: Path, folder: str) -> pd.DataFrame:
    """One row per pair of LLMBar's MT-Bench set for one judge: the human's P(output_1),
    the verdict in each order (``winner`` in the original indexing), the writers."""
    items = json.loads((data / MTB / "dataset.json").read_text(encoding="utf-8"))
    results = json.loads(
        (data / MTB / "evaluators" / folder / "Vanilla_NoRules/result.json").read_text("utf-8")
    )
    writers = _mt_bench_writers(data)

    def writer(question: str, text: str) -> str | None:
        models = writers.get((question, text), set())
        return next(iter(models)) if len(models) == 1 else None

    def won(verdict: dict[str, Any]) -> float:
        return math.nan if verdict["winner"] is None else float(verdict["winner"] == "1")

    rows = []
    for item, res in zip(items, results, strict=True):
        both = res["results"][0]
        rows.append(
            {
                "question": item["input"],
                "human": float(item["label"] == 1),
                "first": won(both["swap = False"]),  # output_1 shown first
                "second": won(both["swap = True"]),  # output_2 shown first
                "len_a": len(item["output_1"].split()),
                "len_b": len(item["output_2"].split()),
                "model_a": writer(item["input"], item["output_1"]),
                "model_b": writer(item["input"], item["output_2"]),
            }
        )
    return pd.DataFrame(rows)


def _position_agreement_length(
    t: pd.DataFrame,
) -> dict[str, float]:
    """First-position rate, agreement, prefer-longer gap and Eq. 6 of one judge's rows
    (columns ``human, first, second, len_a, len_b``; ``first`` / ``second`` P(a) in
    the a/b frame, NaN where that order has no verdict)."""
    both = t[t["first"].notna() & t["second"].notna()]
    out = {"first": float(((both["first"] + 1 - both["second"]) / 2).mean())}
    judged = t[t["first"].notna() | t["second"].notna()]
    p = judged[["first", "second"]].mean(axis=1).to_numpy()
    picks = np.sign((judged[["first", "second"]] - 0.5).sum(axis=1, min_count=1)).to_numpy()
    hit = np.where(picks == 0, 0.5, (picks > 0) == (judged["human"].to_numpy() == 1))
    out["agreement"] = float(hit.mean())
    unequal = (judged["len_a"] != judged["len_b"]).to_numpy()
    a_longer = (judged["len_a"] > judged["len_b"]).to_numpy()[unequal]
    h = judged["human"].to_numpy()[unequal]
    v = p[unequal]
    judge_longer, human_longer = np.where(a_longer, v, 1 - v), np.where(a_longer, h, 1 - h)
    out["gap"] = float(judge_longer.mean() - human_longer.mean())
    agree = np.where(h == 1, v, 1 - v)  # the judge's share of the win on the human's pick
    out["eq6"] = float(agree[human_longer == 1].mean() - agree[human_longer == 0].mean())
    return out


def _self_by_hand(t: pd.DataFrame, own: str) -> tuple[float, float, int]:
    """EO, DP and the pairs: the judge's own answer on one side, the other side's writer
    known (pairs with an unknown writer are left out, as the reader leaves them)."""
    known = t["model_a"].notna() & t["model_b"].notna()
    own_a = known & (t["model_a"] == own) & (t["model_b"] != own)
    own_b = known & (t["model_b"] == own) & (t["model_a"] != own)
    d = t[own_a | own_b]
    p = d[["first", "second"]].mean(axis=1).to_numpy()
    in_a = own_a[own_a | own_b].to_numpy()
    p_own = np.where(in_a, p, 1 - p)
    h_own = np.where(in_a, d["human"], 1 - d["human"])
    eo = p_own[h_own == 1].mean() - (1 - p_own[h_own == 0]).mean()
    return float(eo), float(p_own.mean() - h_own.mean()), len(d)


@pytest.fixture(scope="module")
def mtbench(shared_data: Path) -> pd.DataFrame:
    return recuse.data.load("llmbar-mtbench", data_dir=shared_data)


@pytest.mark.parametrize("folder", sorted(LLMBAR_JUDGES))
def test_llmbar_mtbench_headlines_from_the_upstream_files(
    shared_data: Path, mtbench: pd.DataFrame, folder: str
) -> None:
    judge = LLMBAR_JUDGES[folder]
    t = _llmbar_by_hand(shared_data, folder)
    want = _position_agreement_length(t)
    got = {
        "first": first_position_rate(mtbench, judge=judge, boot=BOOT),
        "agreement": accuracy(mtbench, judge=judge, boot=BOOT),
        "gap": prefer_longer_gap(mtbench, judge=judge, boot=BOOT),
        "eq6": verbosity_bias(mtbench, judge=judge, boot=BOOT),
    }
    for name, r in got.items():
        assert r.estimate == pytest.approx(want[name], abs=1e-12), name
    # ChatGPT, the README's worked numbers: 281 of 400 verdicts to the first-shown answer,
    # 142.5 of 200 pairs agreeing, the longer answer picked 11 times in 390 less often
    # than the humans picked it
    if folder == "ChatGPT":
        assert (want["first"], want["agreement"]) == (281 / 400, 142.5 / 200)
        assert want["gap"] == pytest.approx(-11 / 390, abs=1e-12)


@pytest.mark.parametrize(("folder", "n"), [("GPT-4", 51), ("ChatGPT", 67)])
def test_llmbar_mtbench_self_preference_from_the_upstream_files(
    shared_data: Path, mtbench: pd.DataFrame, folder: str, n: int
) -> None:
    judge = LLMBAR_JUDGES[folder]
    eo, dp, pairs = _self_by_hand(_llmbar_by_hand(shared_data, folder), judge)
    assert pairs == n  # 8 pairs hold a text several models wrote: no writer, left out
    r_eo = self_preference(mtbench, judge=judge, boot=BOOT)
    r_dp = self_preference(mtbench, judge=judge, kind="dp", boot=BOOT)
    assert (r_eo.estimate, r_dp.estimate) == pytest.approx((eo, dp), abs=1e-12)
    assert r_dp.n == n


def _judgebench_by_hand(data: Path, output: Path) -> pd.DataFrame:
    """One judge's JudgeBench rows from its output file joined to the pairs on
    ``pair_id``: element 1's decision is in the swapped frame; a reward model's decision
    is read from its two rewards (equal rewards: a tie)."""
    pairs = {
        p["pair_id"]: p
        for f in sorted((data / "judgebench/data").glob("*.jsonl"))
        for p in _lines(f)
    }
    value = {"A>B": 1.0, "B>A": 0.0, "A=B": 0.5}

    def decision(element: dict[str, Any] | None) -> float:
        if element is None:
            return math.nan
        scores = element["judgment"].get("scores")
        if scores:
            x, y = (float(s) for s in scores)
            if not (math.isfinite(x) and math.isfinite(y)):
                return math.nan
            return 0.5 if x == y else float(x > y)
        return value.get(element["decision"], math.nan)

    rows = []
    for r in _lines(output):
        p = pairs[r["pair_id"]]
        swapped = decision(r["judgments"][1])
        rows.append(
            {
                "human": float(p["label"] == "A>B"),
                "first": decision(r["judgments"][0]),
                "second": 1 - swapped,  # back to the a/b frame (NaN stays NaN)
                "len_a": len(p["response_A"].split()),
                "len_b": len(p["response_B"].split()),
            }
        )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def judgebench(shared_data: Path) -> pd.DataFrame:
    return recuse.data.load("judgebench", data_dir=shared_data)


@pytest.mark.parametrize(
    ("model", "judge"),
    [
        ("o1-mini-2024-09-12", "o1-mini-2024-09-12"),
        ("claude-3-haiku-20240307", "claude-3-haiku-20240307"),
        ("Skywork_Skywork-Reward-Gemma-2-27B", "skywork-reward-gemma-2-27b"),
        ("Ray2333_GRM-Gemma-2B-rewardmodel-ft", "grm-gemma-2b-rewardmodel-ft"),
    ],
)
def test_judgebench_headlines_from_the_upstream_files(
    shared_data: Path, judgebench: pd.DataFrame, model: str, judge: str
) -> None:
    (output,) = (shared_data / "judgebench/outputs").glob(f"*judge_model={model}.jsonl")
    want = _position_agreement_length(_judgebench_by_hand(shared_data, output))
    got = {
        "first": first_position_rate(judgebench, judge=judge, boot=BOOT),
        "agreement": accuracy(judgebench, judge=judge, boot=BOOT),
        "gap": prefer_longer_gap(judgebench, judge=judge, boot=BOOT),
    }
    for name, r in got.items():
        assert r.estimate == pytest.approx(want[name], abs=1e-12), name
    if model.startswith("Skywork"):  # scores each answer alone: no position preference
        assert want["first"] == 0.5


def test_judgebench_haiku_one_order_pairs_below_the_rule_are_a_note(
    shared_data: Path, judgebench: pd.DataFrame
) -> None:
    """claude-3-haiku has 13 pairs with one decision null, each judged in one order only:
    too few for the one-slot warning, which says nothing, so the results said nothing of
    them. Counted here from the upstream file: the pairs of unequal length with a
    verdict (n), those with one order (element 0 alone: the longer answer shown first
    where it is A; element 1 alone: where it is B). Both verbosity numbers carry the
    note with those counts; the numbers are the hand computation's, unchanged."""
    (output,) = (shared_data / "judgebench/outputs").glob("*judge_model=claude-3-haiku*.jsonl")
    t = _judgebench_by_hand(shared_data, output)
    first, second = t["first"].notna(), t["second"].notna()
    used = (first | second) & (t["len_a"] != t["len_b"])
    a_longer = t["len_a"] > t["len_b"]
    shown_first = used & ((first & ~second & a_longer) | (second & ~first & ~a_longer))
    shown_second = used & ((first & ~second & ~a_longer) | (second & ~first & a_longer))
    n, k1, k2 = int(used.sum()), int(shown_first.sum()), int(shown_second.sum())
    assert k1 + k2 == 13  # of the judge's 270 rows; the rule asks a net of 10 and half
    want = _position_agreement_length(t)
    judge = "claude-3-haiku-20240307"
    got = {
        "gap": prefer_longer_gap(judgebench, judge=judge, boot=BOOT),
        "eq6": verbosity_bias(judgebench, judge=judge, boot=BOOT),
    }
    for name, r in got.items():
        assert r.estimate == pytest.approx(want[name], abs=1e-12), name
        assert r.n == n
        assert not [w for w in r.warnings if "judged in that order alone" in w]
        (note,) = r.notes
        assert note.startswith(
            f"{k1 + k2} of the judge's {n} pairs were judged in one order only, the longer "
            f"answer shown first in {k1} and second in {k2} ({abs(k1 - k2)} more in one slot "
            "than in the other): below the one-slot warning's rule"
        ), note


def test_judgebench_read_in_the_first_order_notes_the_slots_not_fewer_pairs(
    shared_data: Path, judgebench: pd.DataFrame
) -> None:
    """Read in the first order only (``--orders first``), every pair of GRM-Gemma is
    judged in one order: 347 of 347 with unequal lengths, counted here from the upstream
    file (element 0 given; the longer answer shown first where it is A). Balanced
    between the slots (172 and 175), the one-slot rule, which reads their difference,
    stays silent; the note must say that difference, not that 347 of 347 pairs are
    "fewer than the one-slot warning needs", as it did. The number is the hand
    computation's over the first order, unchanged."""
    (output,) = (shared_data / "judgebench/outputs").glob("*GRM-Gemma-2B-rewardmodel-ft*.jsonl")
    t = _judgebench_by_hand(shared_data, output)
    t = t[t["first"].notna() & (t["len_a"] != t["len_b"])]
    a_longer = t["len_a"] > t["len_b"]
    n, k1, k2 = len(t), int(a_longer.sum()), int((~a_longer).sum())
    assert (n, k1, k2) == (347, 172, 175)
    judge_longer = np.where(a_longer, t["first"], 1 - t["first"])
    human_longer = np.where(a_longer, t["human"], 1 - t["human"])
    r = prefer_longer_gap(
        use_orders(judgebench, "first"), judge="grm-gemma-2b-rewardmodel-ft", boot=BOOT
    )
    assert r.estimate == pytest.approx(judge_longer.mean() - human_longer.mean(), abs=1e-12)
    assert not [w for w in r.warnings if "judged in that order alone" in w]
    (note,) = r.notes
    assert note.startswith(
        f"{n} of the judge's {n} pairs were judged in one order only, the longer answer "
        f"shown first in {k1} and second in {k2} ({k2 - k1} more in one slot than in the "
        "other): below the one-slot warning's rule"
    ), note
    assert "fewer than the one-slot" not in note


#: MT-Bench's six models by family (the built-in roster's families)
MT_BENCH_FAMILIES = {
    "gpt-4": "gpt", "gpt-3.5-turbo": "gpt", "claude-v1": "claude",
    "vicuna-13b-v1.2": "llama", "alpaca-13b": "llama", "llama-13b": "llama",
}  # fmt: skip


def _calibrated_by_hand(t: pd.DataFrame, own: str, *, label: bool) -> float:
    """The competence-calibrated self-preference with statsmodels: Bradley–Terry strengths
    ``s`` from the human labels (a GLM on +1 / −1 model columns), then one row per judged
    order, weight 1 / orders judged, ``logit P(a) = κ_c (s_a − s_b) + β·first [+ α·label]
    + τ·own + φ·family`` with κ per MT-Bench category that has 20+ pairs without the
    judge's answer (the rest pooled); Δ = mean over the own rows of picks − π, with π the
    prediction without τ and φ."""
    import statsmodels.api as sm
    from scipy import special

    d = t[t["model_a"].notna() & t["model_b"].notna()]
    d = d[d["first"].notna() | d["second"].notna()].reset_index(drop=True)
    models = sorted(set(d["model_a"]) | set(d["model_b"]))
    design = np.zeros((len(d), len(models)))
    for i, (a, b) in enumerate(zip(d["model_a"], d["model_b"], strict=True)):
        design[i, models.index(a)], design[i, models.index(b)] = 1.0, -1.0
    bt = sm.GLM(d["human"].to_numpy(), design[:, 1:], family=sm.families.Binomial()).fit()
    strength = dict(zip(models, np.r_[0.0, bt.params] - np.r_[0.0, bt.params].mean(), strict=True))
    own_side = np.where(d["model_a"] == own, 1.0, np.where(d["model_b"] == own, -1.0, 0.0))
    fam = {m: f == MT_BENCH_FAMILIES[own] and m != own for m, f in MT_BENCH_FAMILIES.items()}
    out = {m: f != MT_BENCH_FAMILIES[own] for m, f in MT_BENCH_FAMILIES.items()}
    fam_a = d["model_a"].map(fam) & d["model_b"].map(out)
    fam_b = d["model_b"].map(fam) & d["model_a"].map(out)
    fam_side = np.where(fam_a, 1.0, np.where(fam_b, -1.0, 0.0))
    without_own = d.loc[own_side == 0, "category"].value_counts()
    stratum = d["category"].where(d["category"].isin(without_own[without_own >= 20].index), "-")
    g = d["model_a"].map(strength).to_numpy() - d["model_b"].map(strength).to_numpy()
    kappas = [g * (stratum == c).to_numpy() for c in sorted(stratum.unique())]
    sign = np.where(d["human"] == 1, 1.0, -1.0)
    orders = d[["first", "second"]].notna().sum(axis=1).to_numpy()
    x, y, w = [], [], []
    for column, first in (("first", 1.0), ("second", -1.0)):
        ok = d[column].notna().to_numpy()
        parts = [*kappas, np.full(len(d), first), *([sign] if label else []), own_side, fam_side]
        x.append(np.column_stack(parts)[ok])
        y.append(d[column].to_numpy()[ok])
        w.append(1.0 / orders[ok])
    xx, yy, ww = np.vstack(x), np.concatenate(y), np.concatenate(w)
    fit = sm.GLM(yy, xx, family=sm.families.Binomial(), freq_weights=ww).fit()
    p0 = special.expit(xx[:, :-2] @ fit.params[:-2])  # without τ·own and φ·family
    mine = xx[:, -2]
    m = mine != 0
    picks = np.where(mine > 0, yy, 1 - yy)[m]
    predicted = np.where(mine > 0, p0, 1 - p0)[m]
    return float(((picks - predicted) * ww[m]).sum() / ww[m].sum())


@pytest.mark.parametrize(("folder", "label"), [("GPT-4", True), ("ChatGPT", False)])
def test_llmbar_mtbench_calibrated_headline_from_the_upstream_files(
    shared_data: Path, mtbench: pd.DataFrame, folder: str, label: bool
) -> None:
    """The README's headline (GPT-4 −0.04 [−0.12, 0.05]): the audit's calibrated
    self-preference, family term and category strata included, and for GPT-4, at its
    ceiling, the label term, equals a statsmodels fit on the upstream files."""
    from recuse.metrics import calibrated_self_preference
    from recuse.roster import Roster

    judge = LLMBAR_JUDGES[folder]
    t = _llmbar_by_hand(shared_data, folder)
    questions = _lines(shared_data / "mt_bench/question.jsonl")
    t["category"] = t["question"].map({q["turns"][0]: q["category"] for q in questions})
    want = _calibrated_by_hand(t, judge, label=label)
    r = calibrated_self_preference(mtbench, judge=judge, families=Roster.builtin(), boot=BOOT)
    assert ("conditioned on each pair's human label" in r.method) == label
    assert r.estimate == pytest.approx(want, abs=1e-6)
    if folder == "GPT-4":
        assert round(want, 2) == -0.04  # the README's tour
