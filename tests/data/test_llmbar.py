"""LLMBar readers against the real files (counts from the data README and the raw JSON)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recuse.data import datasets, load
from recuse.data.llmbar import MT_BENCH_SET, PROMPTING, read_llmbar_set, recover_mt_bench_models
from recuse.data.mt_bench import read_mt_bench_answers
from recuse.errors import DatasetNotFoundError, InputError
from recuse.roster import Roster
from recuse.tables import validate_pairs

# Rows per set (data README table) and the judges the README lists for each group.
SET_ROWS = {
    "LLMBar/Natural": 100,
    "LLMBar/Adversarial/GPTInst": 92,
    "LLMBar/Adversarial/GPTOut": 47,
    "LLMBar/Adversarial/Manual": 46,
    "LLMBar/Adversarial/Neighbor": 134,
    "Processed/FairEval": 66,
    "Processed/LLMEval^2": 200,
    "Processed/MT-Bench": 200,
    "CaseStudy/Normal": 59,
    "CaseStudy/Negation": 59,
    "CaseStudy/Constraint": 89,
    "CaseStudy/Base_9": 54,
    "CaseStudy/Base_10": 54,
}
PROCESSED_JUDGES = {"gpt-4", "gpt-3.5-turbo", "llama-2-70b-chat", "palm-2"}
LLMBAR_JUDGES = PROCESSED_JUDGES | {"gpt-3.5-turbo-0301", "falcon-180b-chat"}

# Null winners per (set, judge): (swap = False, swap = True), counted in the raw result.json.
UNPARSED = {
    ("LLMBar/Adversarial/GPTInst", "llama-2-70b-chat"): (1, 0),
    ("LLMBar/Adversarial/GPTInst", "palm-2"): (3, 3),
    ("LLMBar/Adversarial/Manual", "palm-2"): (1, 1),
    ("LLMBar/Adversarial/Neighbor", "palm-2"): (1, 1),
    ("LLMBar/Natural", "palm-2"): (3, 3),
    ("Processed/FairEval", "palm-2"): (1, 0),
    ("Processed/LLMEval^2", "gpt-3.5-turbo"): (6, 5),
    ("Processed/LLMEval^2", "gpt-4"): (6, 5),
    ("Processed/LLMEval^2", "llama-2-70b-chat"): (5, 5),
    ("Processed/LLMEval^2", "palm-2"): (18, 18),
    ("Processed/MT-Bench", "palm-2"): (8, 7),
}


@pytest.fixture(scope="module")
def llmbar(shared_data: Path) -> pd.DataFrame:
    return load("llmbar", data_dir=shared_data, roster=Roster.builtin())


@pytest.fixture(scope="module")
def mtbench(shared_data: Path) -> pd.DataFrame:
    return load("llmbar-mtbench", data_dir=shared_data, roster=Roster.builtin())


def _row(df: pd.DataFrame, item_id: str, judge: str | None) -> pd.Series:
    hit = df[(df["item_id"] == item_id) & (df["judge"] == judge if judge else df["judge"].isna())]
    assert len(hit) == 1
    return hit.iloc[0]


def test_registered() -> None:
    known = datasets()
    assert known["llmbar"].folder == "llmbar" and known["llmbar"].table == "pairs"
    assert known["llmbar-mtbench"].folder == "llmbar"


def test_rows_per_set_and_judge(llmbar: pd.DataFrame) -> None:
    for set_name, n in SET_ROWS.items():
        rows = llmbar[llmbar["task"] == set_name]
        if set_name.startswith("CaseStudy/"):
            expected_judges: set[str] = set()
            assert len(rows) == n and rows["judge"].isna().all()
        else:
            expected_judges = LLMBAR_JUDGES if set_name.startswith("LLMBar/") else PROCESSED_JUDGES
            assert set(rows["judge"]) == expected_judges
            assert (rows.groupby("judge").size() == n).all(), set_name
        assert rows["item_id"].nunique() == n
    assert set(llmbar["task"]) == set(SET_ROWS)
    # 419 LLMBar items x 6 judges + 466 Processed items x 4 + 315 human-only CaseStudy rows
    assert len(llmbar) == 419 * 6 + 466 * 4 + 315 == 4693
    assert (llmbar["source"] == "llmbar").all()


def test_table_is_valid_and_keys_unique(llmbar: pd.DataFrame) -> None:
    again = validate_pairs(llmbar)
    pd.testing.assert_frame_equal(again, llmbar)
    assert not llmbar.duplicated(["item_id", "judge"]).any()


def test_unparsed_counts(llmbar: pd.DataFrame) -> None:
    judged = llmbar[llmbar["judge"].notna()]
    for order, k in (("first", 0), ("second", 1)):
        unparsed = judged[judged[f"status_{order}"] == "unparsed"]
        got = unparsed.groupby(["task", "judge"]).size().to_dict()
        want = {key: v[k] for key, v in UNPARSED.items() if v[k]}
        assert got == want, order
        assert unparsed[f"p_a_{order}"].isna().all()
        assert (judged[f"status_{order}"] != "unparsed").sum() == judged[
            f"p_a_{order}"
        ].notna().sum()
    assert (judged["status_first"] == "unparsed").sum() == 53
    assert (judged["status_second"] == "unparsed").sum() == 48


def test_human_label_counts_per_set(llmbar: pd.DataFrame, shared_data: Path) -> None:
    items = llmbar.drop_duplicates("item_id")
    root = shared_data / "llmbar" / "Dataset"
    for set_name in SET_ROWS:
        raw = json.loads((root / set_name / "dataset.json").read_text("utf-8"))
        ones = sum(r["label"] == 1 for r in raw)
        assert items.loc[items["task"] == set_name, "human"].sum() == ones, set_name
    # two values seen in the raw files: Natural has 42 label-1 items, LLMEval^2 92
    assert items.loc[items["task"] == "LLMBar/Natural", "human"].sum() == 42
    assert items.loc[items["task"] == "Processed/LLMEval^2", "human"].sum() == 92


def test_spot_check_both_orders(llmbar: pd.DataFrame) -> None:
    # Natural item 9: label 2; GPT-4 picks output 1 when it is shown first and
    # output 2 when it is shown first after the swap -> pure position preference.
    r = _row(llmbar, "llmbar:LLMBar/Natural:9", "gpt-4")
    assert r["prompt"].startswith("Some people got on a bus at the terminal.")
    assert r["human"] == 0.0
    assert (r["p_a_first"], r["p_a_second"], r["p_a"]) == (1.0, 0.0, 0.5)
    assert (r["status_first"], r["status_second"]) == ("ok", "ok")
    assert r["prompt_id"] == "llmbar:LLMBar/Natural:p9"
    assert pd.isna(r["model_a"]) and pd.isna(r["model_b"])
    # Natural item 7: PaLM2's replies were unparsed in both orders.
    r = _row(llmbar, "llmbar:LLMBar/Natural:7", "palm-2")
    assert r["prompt"].startswith("Summarize the following content.\n\nI hope the title")
    assert np.isnan(r["p_a_first"]) and np.isnan(r["p_a_second"]) and np.isnan(r["p_a"])
    assert (r["status_first"], r["status_second"]) == ("unparsed", "unparsed")
    # Natural item 0: label 1, response lengths 30 and 27 words.
    r = _row(llmbar, "llmbar:LLMBar/Natural:0", "gpt-3.5-turbo-0301")
    assert r["human"] == 1.0 and (r["len_a"], r["len_b"]) == (30.0, 27.0)
    assert r["prompt"].startswith("Summarize the following content.\n\nMy girlfriend is Malaysian")


def test_case_study_rows_are_human_only(llmbar: pd.DataFrame) -> None:
    cs = llmbar[llmbar["task"].str.startswith("CaseStudy/")]
    assert len(cs) == 315
    assert cs[["p_a_first", "p_a_second", "p_a"]].isna().all().all()
    assert cs["status_first"].isna().all()
    # Base_9 item 53 repeats the input of item 35, so they share a prompt.
    r53 = _row(llmbar, "llmbar:CaseStudy/Base_9:53", None)
    assert r53["prompt_id"] == "llmbar:CaseStudy/Base_9:p35"
    assert llmbar.loc[llmbar["task"] == "CaseStudy/Base_9", "prompt_id"].nunique() == 53


def test_an_input_two_sets_hold_is_one_prompt(llmbar: pd.DataFrame, shared_data: Path) -> None:
    # GPTInst item 78 and Neighbor item 94 ask for the same FOSS poem: one prompt, one
    # cluster of the bootstrap (it used to be two, one per set).
    foss = llmbar[llmbar["item_id"].isin(
        ["llmbar:LLMBar/Adversarial/GPTInst:78", "llmbar:LLMBar/Adversarial/Neighbor:94"]
    )]  # fmt: skip
    assert foss["prompt"].nunique() == 1 and foss["item_id"].nunique() == 2
    assert set(foss["prompt_id"]) == {"llmbar:LLMBar/Adversarial/GPTInst:p78"}
    # Per judge, the prompts (what the intervals resample and the "prompts" columns
    # count) are the distinct inputs of the raw files it judged: 757 for GPT-4, whose
    # eight sets hold 760 per-set inputs.
    root = shared_data / "llmbar" / "Dataset"
    inputs: set[str] = set()
    for result in root.glob(f"*/**/evaluators/GPT-4/{PROMPTING}/result.json"):
        inputs |= {rec["input"] for rec in json.loads(result.read_text())}
    gpt4 = llmbar[llmbar["judge"] == "gpt-4"]
    assert len(inputs) == gpt4["prompt_id"].nunique() == 757
    assert (gpt4.groupby("prompt_id")["prompt"].nunique() == 1).all()


def test_mt_bench_set_has_models_in_llmbar(llmbar: pd.DataFrame, mtbench: pd.DataFrame) -> None:
    part = llmbar[llmbar["task"] == MT_BENCH_SET].reset_index(drop=True)
    cols = ["item_id", "judge", "model_a", "model_b", "human", "p_a_first", "p_a_second"]
    pd.testing.assert_frame_equal(part[cols], mtbench[cols])
    assert part["prompt_id"].nunique() == mtbench["prompt_id"].nunique() == 75
    assert llmbar.attrs["mt_bench_models"] == mtbench.attrs["mt_bench_models"]
    assert llmbar.loc[llmbar["task"] != MT_BENCH_SET, ["model_a", "model_b"]].isna().all().all()


def test_llmbar_mtbench_rows_and_recovery(mtbench: pd.DataFrame) -> None:
    assert len(mtbench) == 800
    assert mtbench.groupby("judge").size().to_dict() == dict.fromkeys(PROCESSED_JUDGES, 200)
    # 400 responses: 392 one model's answer, 8 texts shared by several models, none unknown
    assert mtbench.attrs["mt_bench_models"] == {
        "matched": 392, "ambiguous": 8, "unmatched": 0, "prompts_unmatched": 0,
    }  # fmt: skip
    items = mtbench.drop_duplicates("item_id").set_index("item_id")
    missing_a = {int(i.rsplit(":", 1)[1]) for i in items.index[items["model_a"].isna()]}
    missing_b = {int(i.rsplit(":", 1)[1]) for i in items.index[items["model_b"].isna()]}
    assert missing_a == {12, 15, 39, 81}  # e.g. 81: "[5, 1, 3]" (gpt-4, claude-v1, gpt-3.5)
    assert missing_b == {47, 54, 102, 140}
    assert set(items["model_a"].dropna()) == {
        "alpaca-13b", "claude-v1", "gpt-3.5-turbo", "gpt-4", "llama-13b", "vicuna-13b",
    }  # fmt: skip
    assert (items["category"].value_counts().sum()) == 200
    # PaLM2 is the only judge with unparsed replies on this set
    assert (mtbench["status_first"] == "unparsed").sum() == 8
    assert (mtbench["status_second"] == "unparsed").sum() == 7


def test_llmbar_mtbench_spot_check(mtbench: pd.DataFrame) -> None:
    r = _row(mtbench, "llmbar:Processed/MT-Bench:17", "gpt-3.5-turbo")
    assert (r["prompt_id"], r["category"]) == ("127", "coding")
    assert (r["model_a"], r["model_b"]) == ("claude-v1", "alpaca-13b")
    assert r["human"] == 1.0
    assert r["response_a"].startswith(
        "Here is a function to find the majority element using the Bo"
    )
    assert r["prompt"].startswith("Write a function to find the majority element")
    r = _row(mtbench, "llmbar:Processed/MT-Bench:81", "gpt-4")
    assert r["prompt_id"] == "131" and r["response_a"] == "[5, 1, 3]"
    assert pd.isna(r["model_a"]) and r["model_b"] is not None


def test_recovered_pairs_were_voted_on(mtbench: pd.DataFrame, shared_data: Path) -> None:
    """Independent check: a recovered (question, model pair) must be one the experts judged."""
    votes = pd.read_json(shared_data / "mt_bench_human" / "human_judgments.jsonl", lines=True)
    voted = {
        (q, frozenset((a.replace("-v1.2", ""), b.replace("-v1.2", ""))))
        for q, a, b in votes[["question_id", "model_a", "model_b"]].itertuples(index=False)
    }
    items = mtbench.drop_duplicates("item_id").dropna(subset=["model_a", "model_b"])
    assert len(items) == 192
    found = [
        (int(q), frozenset((a, b)))
        for q, a, b in items[["prompt_id", "model_a", "model_b"]].itertuples(index=False)
    ]
    assert all(key in voted for key in found)


def test_recover_models_counts_by_hand() -> None:
    answers = pd.DataFrame(
        {
            "question_id": [1, 1, 1, 1, 2],
            "category": ["x"] * 4 + ["y"],
            "turn": [1, 1, 1, 2, 1],
            "model": ["m1", "m2", "m3", "m1", "m1"],
            "question": ["Q1", "Q1", "Q1", "Q1 turn 2", "Q2"],
            "answer": ["same", "same", "own", "later", "same"],
        }
    )
    items = pd.DataFrame(
        {
            "prompt": ["Q1", "Q1", "Q2", "Q3"],
            "response_a": ["own", "same", "same", "own"],
            "response_b": ["same", "later", "nope", "same"],
        }
    )
    found, counts = recover_mt_bench_models(items, answers)
    assert found["model_a"].tolist() == ["m3", None, "m1", None]
    assert found["model_b"].tolist() == [None, None, None, None]  # ambiguous, turn 2, none, no q
    assert found["question_id"].tolist()[:3] == [1, 1, 2] and pd.isna(found["question_id"][3])
    assert (counts.matched, counts.ambiguous, counts.unmatched, counts.prompts_unmatched) == (
        2, 2, 4, 1,
    )  # fmt: skip


def _mini_llmbar(tmp_path: Path, shared_data: Path) -> Path:
    """A copy of the Natural set with its GPT-4 results, to break on purpose."""
    src = shared_data / "llmbar" / "Dataset" / "LLMBar" / "Natural"
    dst = tmp_path / "Natural"
    (dst / "evaluators" / "GPT-4" / "Vanilla_NoRules").mkdir(parents=True)
    shutil.copy(src / "dataset.json", dst / "dataset.json")
    shutil.copy(
        src / "evaluators/GPT-4/Vanilla_NoRules/result.json",
        dst / "evaluators/GPT-4/Vanilla_NoRules/result.json",
    )
    return dst


def test_bad_winner_and_mismatched_results(tmp_path: Path, shared_data: Path) -> None:
    roster = Roster.builtin()
    set_dir = _mini_llmbar(tmp_path, shared_data)
    rfile = set_dir / "evaluators/GPT-4/Vanilla_NoRules/result.json"
    rows = read_llmbar_set(set_dir, "LLMBar/Natural", roster)
    assert len(rows) == 100 and set(rows["judge"]) == {"gpt-4"}

    results = json.loads(rfile.read_text("utf-8"))
    results[4]["results"][0]["swap = True"]["winner"] = "3"
    rfile.write_text(json.dumps(results), encoding="utf-8")
    with pytest.raises(InputError, match="winner '3'") as err:
        read_llmbar_set(set_dir, "LLMBar/Natural", roster)
    assert err.value.row == 5 and err.value.file == str(rfile)

    results[4]["results"][0]["swap = True"]["winner"] = "1"
    results[6]["output_2"] = "something else"
    rfile.write_text(json.dumps(results), encoding="utf-8")
    with pytest.raises(InputError, match="output_2 differs from element 7"):
        read_llmbar_set(set_dir, "LLMBar/Natural", roster)

    rfile.write_text(json.dumps(results[:-1]), encoding="utf-8")
    with pytest.raises(InputError, match="99 results for 100 items"):
        read_llmbar_set(set_dir, "LLMBar/Natural", roster)


def test_bad_label_and_missing_sets(tmp_path: Path, shared_data: Path) -> None:
    roster = Roster.builtin()
    set_dir = _mini_llmbar(tmp_path, shared_data)
    data = json.loads((set_dir / "dataset.json").read_text("utf-8"))
    data[2]["label"] = 0
    (set_dir / "dataset.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError, match="label 0 is not 1 or 2") as err:
        read_llmbar_set(set_dir, "LLMBar/Natural", roster)
    assert err.value.row == 3
    (tmp_path / "empty_root" / "llmbar").mkdir(parents=True)
    with pytest.raises(DatasetNotFoundError, match="no LLMBar sets"):
        load("llmbar", data_dir=tmp_path / "empty_root", roster=roster)
    # llmbar-mtbench needs the MT-Bench answers next to the llmbar folder
    root = tmp_path / "root"
    mt = root / "llmbar" / "Dataset" / "Processed" / "MT-Bench"
    mt.mkdir(parents=True)
    shutil.copy(shared_data / "llmbar/Dataset/Processed/MT-Bench/dataset.json", mt)
    with pytest.raises(DatasetNotFoundError, match="no MT-Bench data"):
        load("llmbar-mtbench", data_dir=root, roster=roster)
    with pytest.warns(UserWarning, match="generators of LLMBar Processed/MT-Bench stay unknown"):
        only = load("llmbar", data_dir=root, roster=roster)
    assert len(only) == 200 and only["model_a"].isna().all()


def test_answers_feed_recovery(shared_data: Path) -> None:
    answers = read_mt_bench_answers(shared_data / "mt_bench", roster=Roster.builtin())
    assert answers["question"].nunique() == 160
