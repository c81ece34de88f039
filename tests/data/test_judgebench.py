"""JudgeBench reader on the real files; counts recounted from the raw JSONL."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recuse.data import datasets, load
from recuse.data.judgebench import read_judgebench
from recuse.errors import InputError
from recuse.roster import Roster
from recuse.tables import validate_pairs

HAIKU, O1 = "claude-3-haiku-20240307", "o1-mini-2024-09-12"  # dated: snapshots
REWARD_MODELS = {
    "grm-gemma-2b-rewardmodel-ft",
    "skywork-reward-gemma-2-27b",
    "skywork-reward-llama-3.1-8b",
    "internlm2-7b-reward",
    "internlm2-20b-reward",
}
GPT_FILE = "dataset=judgebench,response_model=gpt-4o-2024-05-13"


@pytest.fixture(scope="module")
def jb(shared_data: Path) -> pd.DataFrame:
    return load("judgebench", data_dir=shared_data, roster=Roster.builtin())


def _row(df: pd.DataFrame, pair_id: str, judge: str) -> pd.Series:
    hit = df[(df["item_id"] == "judgebench:" + pair_id) & (df["judge"] == judge)]
    assert len(hit) == 1
    return hit.iloc[0]


def test_registered() -> None:
    ds = datasets()["judgebench"]
    assert (ds.folder, ds.table) == ("judgebench", "pairs")


def test_rows_per_judge(jb: pd.DataFrame) -> None:
    # README: 270 claude-3.5-sonnet pairs (haiku judge), 350 gpt-4o pairs (o1-mini + 5 RMs)
    sizes = jb.groupby("judge").size().to_dict()
    assert sizes == {HAIKU: 270, O1: 350, **dict.fromkeys(REWARD_MODELS, 350)}
    assert len(jb) == 270 + 6 * 350 == 2370
    assert jb["item_id"].nunique() == 620
    assert jb["prompt_id"].nunique() == 528  # distinct questions
    by_judge = jb.groupby("judge")["category"].unique().map(list).to_dict()
    assert by_judge[HAIKU] == ["arena_hard"] and by_judge[O1] == ["arena_hard"]
    assert all(by_judge[rm] == ["reward_model"] for rm in REWARD_MODELS)
    assert (jb["model_a"] == jb["model_b"]).all()
    assert set(jb.loc[jb["judge"] == HAIKU, "model_a"]) == {"claude-3.5-sonnet-20240620"}
    assert set(jb.loc[jb["judge"] != HAIKU, "model_a"]) == {"gpt-4o-2024-05-13"}
    assert (jb["source"] == "judgebench").all()
    assert jb["task"].str.match(r"^(mmlu-pro-|livebench-|livecodebench)").all()
    pd.testing.assert_frame_equal(validate_pairs(jb), jb)


def test_labels(jb: pd.DataFrame) -> None:
    items = jb.drop_duplicates("item_id")
    # A>B counts per data file: 143 of 270 (claude), 193 of 350 (gpt-4o)
    claude = items["model_a"] == "claude-3.5-sonnet-20240620"
    assert items.loc[claude, "human"].sum() == 143
    assert items.loc[~claude, "human"].sum() == 193
    assert set(items["human"]) == {0.0, 1.0}


def test_verdict_counts_both_orders(jb: pd.DataFrame) -> None:
    haiku = jb[jb["judge"] == HAIKU]
    # raw judgments[0]: A=B 101, A>B 99, B>A 59, null 11
    assert haiku["p_a_first"].value_counts().to_dict() == {0.5: 101, 1.0: 99, 0.0: 59}
    assert (haiku["status_first"] == "unparsed").sum() == 11
    # raw judgments[1] (swapped frame): A>B 113, A=B 91, B>A 64, null 2 -> flipped here
    assert haiku["p_a_second"].value_counts().to_dict() == {0.0: 113, 0.5: 91, 1.0: 64}
    assert (haiku["status_second"] == "unparsed").sum() == 2
    o1 = jb[jb["judge"] == O1]
    assert (o1["p_a_first"] == 0.5).sum() == 27 and (o1["p_a_second"] == 0.5).sum() == 17
    others = jb[jb["judge"] != HAIKU]
    assert (others[["status_first", "status_second"]] == "ok").all().all()


def test_order_consistency_and_accuracy(jb: pd.DataFrame) -> None:
    """Same verdict in both orders, and first-order accuracy, per judge (recounted raw)."""
    # every reward model scores each answer alone: the same verdict in both orders on
    # all 350 pairs (Skywork's equal rewards are ties, not upstream's "B>A" flips)
    consistent = {HAIKU: 135, O1: 240, **dict.fromkeys(REWARD_MODELS, 350)}
    first_correct = {HAIKU: 80, O1: 248, "grm-gemma-2b-rewardmodel-ft": 208,
                     "skywork-reward-gemma-2-27b": 225, "skywork-reward-llama-3.1-8b": 218,
                     "internlm2-20b-reward": 222, "internlm2-7b-reward": 208}  # fmt: skip
    same = jb["p_a_first"] == jb["p_a_second"]
    assert same.groupby(jb["judge"]).sum().to_dict() == consistent
    right = jb["p_a_first"] == jb["human"]
    assert right.groupby(jb["judge"]).sum().to_dict() == first_correct


def test_spot_checks(jb: pd.DataFrame) -> None:
    # haiku: [B>A, A=B] on a pair whose response A is correct
    r = _row(jb, "b5ce1305-50fe-5a5e-b785-325ab15c6d2b", HAIKU)
    assert (r["human"], r["p_a_first"], r["p_a_second"], r["p_a"]) == (1.0, 0.0, 0.5, 0.25)
    assert (r["task"], r["category"], r["len_a"]) == ("mmlu-pro-health", "arena_hard", 148.0)
    assert r["prompt"].startswith("In the brain stem, pathways for:\n(A) discriminativ")
    # haiku: unparsed first order, tie in the swapped one
    r = _row(jb, "bc53b449-7816-55b7-b25d-a81f8b73fc41", HAIKU)
    assert np.isnan(r["p_a_first"]) and r["status_first"] == "unparsed"
    assert (r["p_a_second"], r["p_a"]) == (0.5, 0.5)
    # gpt-4o pair e302b0a0: Skywork-Llama [B>A, A>B] -> prefers B in both orders;
    # o1-mini [A>B, B>A] -> prefers A in both orders
    r = _row(jb, "e302b0a0-28d5-5a3c-b1af-fedcf5543e72", "skywork-reward-llama-3.1-8b")
    assert (r["human"], r["p_a_first"], r["p_a_second"]) == (1.0, 0.0, 0.0)
    assert (r["task"], r["len_a"]) == ("mmlu-pro-law", 544.0)
    r = _row(jb, "e302b0a0-28d5-5a3c-b1af-fedcf5543e72", O1)
    assert (r["p_a_first"], r["p_a_second"]) == (1.0, 1.0)
    # o1-mini [A>B, A>B]: picks whatever is shown first
    r = _row(jb, "01fb6121-e025-5251-a55f-f903c79e4ec6", O1)
    assert (r["p_a_first"], r["p_a_second"], r["p_a"]) == (1.0, 0.0, 0.5)


def test_equal_rewards_are_a_tie_not_a_flip_to_the_second_answer(
    jb: pd.DataFrame, shared_data: Path
) -> None:
    """A reward model's two equal rewards are a tie (0.5) in each order. Upstream wrote
    them "B>A" (its decision is "A>B" only for a higher first reward), which read as a
    pick of the second answer in both orders: Skywork-Reward-Gemma-2-27B's position
    headline was 0.496 [0.490, 0.499], "prefers the answer shown second", from 3 such
    pairs, Skywork-Reward-Llama-3.1-8B's 0.4986 from 1. Counted from the raw files."""
    ties: dict[str, set[str]] = {}
    for file in (shared_data / "judgebench" / "outputs").glob("*judge_name=reward_model*"):
        judge = Roster.builtin().canonical(file.name.split("judge_model=")[1][: -len(".jsonl")])
        for line in file.read_text("utf-8").splitlines():
            rec = json.loads(line)
            scores = [j["judgment"]["scores"] for j in rec["judgments"]]
            if any(a == b for a, b in scores):
                assert [j["decision"] for j in rec["judgments"]] == ["B>A", "B>A"]
                ties.setdefault(judge, set()).add("judgebench:" + rec["pair_id"])
    assert {j: len(t) for j, t in ties.items()} == {
        "skywork-reward-gemma-2-27b": 3,
        "skywork-reward-llama-3.1-8b": 1,
    }
    for judge, items in ties.items():
        rows = jb[(jb["judge"] == judge) & jb["item_id"].isin(items)]
        assert len(rows) == len(items)
        assert (rows[["p_a_first", "p_a_second", "p_a"]] == 0.5).all().all()
        mine = jb[jb["judge"] == judge]
        first = (mine["p_a_first"] + 1 - mine["p_a_second"]) / 2
        assert first.mean() == 0.5  # no position preference: each answer scored alone
    r = _row(jb, "3ca30a63-18e2-5f42-b7ec-433617b85cd6", "skywork-reward-gemma-2-27b")
    assert (r["human"], r["status_first"], r["status_second"]) == (1.0, "ok", "ok")


def _mini(tmp_path: Path, shared_data: Path, *, lines: int = 5) -> Path:
    """The first lines of the gpt-4o data file and of its o1-mini outputs."""
    src = shared_data / "judgebench"
    root = tmp_path / "judgebench"
    (root / "data").mkdir(parents=True)
    (root / "outputs").mkdir()
    data = (src / "data" / f"{GPT_FILE}.jsonl").read_text("utf-8").splitlines()
    (root / "data" / f"{GPT_FILE}.jsonl").write_text("\n".join(data) + "\n", encoding="utf-8")
    name = f"{GPT_FILE},judge_name=arena_hard,judge_model=o1-mini-2024-09-12.jsonl"
    out = (src / "outputs" / name).read_text("utf-8").splitlines()[:lines]
    (root / "outputs" / name).write_text("\n".join(out) + "\n", encoding="utf-8")
    return root / "outputs" / name


def _rewrite(path: Path, line: int, change: dict) -> None:
    rows = path.read_text("utf-8").splitlines()
    rec = json.loads(rows[line - 1])
    rec.update(change)
    rows[line - 1] = json.dumps(rec)
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def test_null_judgment_is_failed_and_bad_decision_raises(tmp_path: Path, shared_data: Path) -> None:
    out = _mini(tmp_path, shared_data)
    roster = Roster.builtin()
    rec = json.loads(out.read_text("utf-8").splitlines()[1])
    _rewrite(out, 2, {"judgments": [None, rec["judgments"][1]]})
    table = read_judgebench(out.parents[1], roster)
    assert len(table) == 5
    r = table[table["item_id"] == "judgebench:" + rec["pair_id"]].iloc[0]
    assert r["status_first"] == "failed" and np.isnan(r["p_a_first"])
    assert r["status_second"] == "ok"

    bad = [dict(rec["judgments"][0], decision="A>>B"), rec["judgments"][1]]
    _rewrite(out, 3, {"judgments": bad})
    with pytest.raises(InputError, match="decision 'A>>B'") as err:
        read_judgebench(out.parents[1], roster)
    assert (err.value.row, err.value.file) == (3, str(out))


def test_unknown_pair_and_bad_label(tmp_path: Path, shared_data: Path) -> None:
    out = _mini(tmp_path, shared_data)
    roster = Roster.builtin()
    _rewrite(out, 4, {"pair_id": "not-a-pair"})
    with pytest.raises(InputError, match="'not-a-pair' is not in data"):
        read_judgebench(out.parents[1], roster)
    shutil.rmtree(out.parents[1])
    out = _mini(tmp_path, shared_data)
    data = out.parents[1] / "data" / f"{GPT_FILE}.jsonl"
    _rewrite(data, 7, {"label": "A=B"})
    with pytest.raises(InputError, match="label 'A=B'") as err:
        read_judgebench(out.parents[1], roster)
    assert err.value.row == 7


def test_a_reward_that_is_no_number_gives_no_decision(tmp_path: Path, shared_data: Path) -> None:
    """Upstream's reward-model judge writes ``"A>B" if score1 > score2 else "B>A"``: a NaN
    reward (a float16 overflow, say) compares false and was written "B>A", which read as
    a pick of the second answer; so were two infinite rewards. Neither is a decision:
    NaN, "unparsed", the other order kept as it is."""
    src = shared_data / "judgebench"
    root = tmp_path / "judgebench"
    (root / "data").mkdir(parents=True)
    (root / "outputs").mkdir()
    shutil.copy(src / "data" / f"{GPT_FILE}.jsonl", root / "data")
    name = f"{GPT_FILE},judge_name=reward_model,judge_model=internlm_internlm2-7b-reward.jsonl"
    lines = (src / "outputs" / name).read_text("utf-8").splitlines()[:3]
    recs = [json.loads(line) for line in lines]
    recs[0]["judgments"][0]["judgment"]["scores"] = [float("nan"), 1.25]
    recs[0]["judgments"][0]["decision"] = "B>A"  # as upstream writes it
    recs[1]["judgments"][1]["judgment"]["scores"] = [float("inf"), float("inf")]
    recs[1]["judgments"][1]["decision"] = "B>A"
    out = root / "outputs" / name
    out.write_text("\n".join(json.dumps(r) for r in recs) + "\n", encoding="utf-8")
    assert "NaN" in out.read_text("utf-8") and "Infinity" in out.read_text("utf-8")
    table = read_judgebench(root, Roster.builtin()).set_index("item_id")
    first, second, untouched = (table.loc["judgebench:" + r["pair_id"]] for r in recs)
    assert np.isnan(first["p_a_first"]) and first["status_first"] == "unparsed"
    assert np.isnan(second["p_a_second"]) and second["status_second"] == "unparsed"
    # the other orders, finite rewards, read as upstream decided them (a/b frame)
    a, b = recs[0]["judgments"][1]["judgment"]["scores"]
    assert first["p_a_second"] == (1.0 if b > a else 0.0) and first["status_second"] == "ok"
    a, b = recs[1]["judgments"][0]["judgment"]["scores"]
    assert second["p_a_first"] == (1.0 if a > b else 0.0) and second["status_first"] == "ok"
    assert (untouched["status_first"], untouched["status_second"]) == ("ok", "ok")
