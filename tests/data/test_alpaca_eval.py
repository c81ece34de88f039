"""AlpacaEval reader against the real annotation files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recuse.data import registry
from recuse.data.alpaca_eval import prompt_id, read_alpaca_eval, split_variant
from recuse.errors import InputError
from recuse.roster import ModelsNotInRoster, Roster

# rows per results/<generator>/<annotator>/annotations.json (upstream README table)
SHORT_FILES = {
    ("alpaca-7b_concise", "weighted_alpaca_eval_gpt4_turbo"): 804,
    ("alpaca-7b_verbose", "weighted_alpaca_eval_gpt4_turbo"): 802,
    ("gpt35_turbo_instruct", "weighted_alpaca_eval_gpt4_turbo"): 804,
    ("text_davinci_001", "weighted_alpaca_eval_gpt4_turbo"): 803,
}


@pytest.fixture(scope="module")
def table(shared_data: Path) -> pd.DataFrame:
    return registry.load("alpaca-eval", data_dir=shared_data)


def test_rows_per_file(table: pd.DataFrame, shared_data: Path) -> None:
    files = sorted((shared_data / "alpaca_eval" / "results").glob("*/*/annotations.json"))
    assert len(files) == 29
    parts = table["item_id"].str.split("/")
    per_file = table.groupby([parts.str[1], parts.str[2]]).size().to_dict()
    expected = {
        (f.parts[-3], f.parts[-2]): SHORT_FILES.get((f.parts[-3], f.parts[-2]), 805) for f in files
    }
    assert per_file == expected
    assert len(table) == 23_338 == sum(expected.values())


def test_judges_baselines_and_variants(table: pd.DataFrame) -> None:
    by_judge = table.groupby("judge")["model_a"].unique().map(list).to_dict()
    assert by_judge == {"gpt-4": ["text-davinci-003"], "gpt-4-1106-preview": ["gpt-4-1106-preview"]}
    assert table["category"].value_counts().to_dict() == {
        "default": 9660 + 8047,
        "concise": 4024,
        "verbose": 1607,
    }
    concise = table[table["category"] == "concise"]
    assert set(concise["model_b"]) == {
        "mixtral-8x7b-instruct-v0.1",
        "alpaca-7b",
        "claude-2.1",
        "gpt-3.5-turbo-1106",
        "gpt-4-0613",  # gpt4_0613_concise: the snapshot, not the gpt-4 line
    }
    assert table["prompt_id"].nunique() == 805
    assert table["human"].isna().all()
    assert table[["p_a_first", "p_a_second"]].isna().all().all()


def test_verdicts_match_preferences(table: pd.DataFrame, shared_data: Path) -> None:
    """p_a recomputed from the raw JSON with the stated rule, file by file."""
    expected: list[float] = []
    for f in sorted((shared_data / "alpaca_eval" / "results").glob("*/*/annotations.json")):
        for rec in json.loads(f.read_text(encoding="utf-8")):
            pref = rec["preference"]
            if pref is None:
                expected.append(np.nan)
            elif pref in (0, 1.5):
                expected.append(0.5)
            else:
                expected.append(2.0 - pref)
    np.testing.assert_allclose(table["p_a"].to_numpy(), np.array(expected), equal_nan=True)
    failed = table["p_a"].isna()
    assert failed.sum() == 10
    assert table.loc[failed, "judge"].notna().all()
    assert "status_first" not in table.columns
    # AlpacaEval 1: 85 preferences of 0 and 24 of 1.5 are draws
    gpt4 = table[table["judge"] == "gpt-4"]
    assert (gpt4["p_a"] == 0.5).sum() == 85 + 24


def test_spot_row(table: pd.DataFrame, shared_data: Path) -> None:
    path = shared_data / "alpaca_eval/results/claude/alpaca_eval_gpt4/annotations.json"
    rec = json.loads(path.read_text(encoding="utf-8"))[9]
    row = table.set_index("item_id").loc["alpaca-eval/claude/alpaca_eval_gpt4/10"]
    assert row["model_a"] == "text-davinci-003" and row["model_b"] == "claude-v1"
    assert row["judge"] == "gpt-4" and row["category"] == "default"
    assert row["prompt"] == rec["instruction"]
    assert row["response_b"] == rec["output_2"]
    assert row["len_a"] == len(rec["output_1"].split())
    assert row["len_b"] == len(rec["output_2"].split())
    assert row["prompt_id"] == prompt_id(rec["instruction"])
    assert row["task"] == rec["dataset"]


def test_concise_variant_row(table: pd.DataFrame, shared_data: Path) -> None:
    folder = shared_data / "alpaca_eval/results/claude-2.1_concise/weighted_alpaca_eval_gpt4_turbo"
    rec = json.loads((folder / "annotations.json").read_text(encoding="utf-8"))[0]
    row = table.set_index("item_id").loc[
        "alpaca-eval/claude-2.1_concise/weighted_alpaca_eval_gpt4_turbo/1"
    ]
    assert (row["model_b"], row["category"]) == ("claude-2.1", "concise")
    assert row["judge"] == "gpt-4-1106-preview"
    assert row["p_a"] == pytest.approx(2.0 - rec["preference"])


def test_split_variant() -> None:
    assert split_variant("gpt4_0613_concise") == ("gpt4_0613", "concise")
    assert split_variant("alpaca-7b_verbose") == ("alpaca-7b", "verbose")
    assert split_variant("claude-2.1") == ("claude-2.1", "default")


def _one_file(tmp_path: Path, records: list[dict[str, object]]) -> Path:
    folder = tmp_path / "alpaca_eval"
    target = folder / "results" / "claude" / "alpaca_eval_gpt4"
    target.mkdir(parents=True)
    (target / "annotations.json").write_text(json.dumps(records), encoding="utf-8")
    return folder


def _record(**kw: object) -> dict[str, object]:
    rec: dict[str, object] = {
        "instruction": "Say hi",
        "output_1": "hi",
        "generator_1": "text_davinci_003",
        "output_2": "hello there",
        "generator_2": "claude",
        "annotator": "alpaca_eval_gpt4",
        "preference": 2,
        "dataset": "koala",
    }
    rec.update(kw)
    return rec


def test_bad_preference_names_row(tmp_path: Path) -> None:
    folder = _one_file(tmp_path, [_record(), _record(instruction="b", preference=3)])
    with pytest.raises(InputError) as err:
        read_alpaca_eval(folder, Roster.builtin())
    assert (err.value.row, err.value.column) == (2, "preference")
    assert "preference 3 is not" in str(err.value)  # the value as written, no np.int64(3)


def test_unknown_generator_is_its_own_model_with_a_note(tmp_path: Path) -> None:
    folder = _one_file(tmp_path, [_record(), _record(generator_2="house-model")])
    with pytest.warns(ModelsNotInRoster, match="model 'house-model' is not in the roster"):
        table = read_alpaca_eval(folder, Roster.builtin())
    assert "house-model" in set(table["model_b"])


def test_missing_key_and_no_files(tmp_path: Path, shared_data: Path) -> None:
    rec = _record()
    del rec["annotator"]
    folder = _one_file(tmp_path, [rec])
    with pytest.raises(InputError, match="lacks key"):
        read_alpaca_eval(folder, Roster.builtin())
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="recuse data fetch alpaca-eval"):
        read_alpaca_eval(empty, Roster.builtin())


def test_truncated_file(tmp_path: Path, shared_data: Path) -> None:
    src = shared_data / "alpaca_eval/results/vicuna-13b/alpaca_eval_gpt4/annotations.json"
    target = tmp_path / "ae/results/vicuna-13b/alpaca_eval_gpt4"
    target.mkdir(parents=True)
    shutil.copyfile(src, target / "annotations.json")
    data = (target / "annotations.json").read_bytes()
    (target / "annotations.json").write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="not valid JSON"):
        read_alpaca_eval(tmp_path / "ae", Roster.builtin())


def test_baseline_judged_against_itself_is_a_constant_draw(table: pd.DataFrame) -> None:
    # data README: in weighted_… the judge's own model vs itself has a constant draw
    own = table[table["item_id"].str.startswith("alpaca-eval/gpt4_1106_preview/weighted_")]
    assert len(own) == 805
    assert (own["model_a"] == own["model_b"]).all()
    assert (own["model_a"] == own["judge"]).all()
    assert (own["p_a"] == 0.5).all()


def test_an_annotation_twice_in_one_file_is_refused(tmp_path: Path) -> None:
    """The same instruction, generators and annotator twice in one file would count that
    pair twice in every win rate; before, it was read as a second pair (31 rows, 30
    prompts) while the FastChat and Arena-Hard readers refuse duplicates."""
    from recuse.data.alpaca_eval import read_annotation_file

    records = [_record(instruction="a"), _record(instruction="b"), _record(instruction="a")]
    folder = _one_file(tmp_path, records)
    path = folder / "results" / "claude" / "alpaca_eval_gpt4" / "annotations.json"
    with pytest.raises(InputError, match="element 1") as err:
        read_annotation_file(path, roster=Roster.builtin())
    assert (err.value.row, err.value.column) == (3, "instruction")
    # another model's annotation of the same instruction is no duplicate
    records[2]["generator_2"] = "claude-2"
    path.write_text(json.dumps(records), encoding="utf-8")
    assert len(read_annotation_file(path, roster=Roster.builtin())) == 3


FN_FILES = Path(__file__).parent / "importers" / "upstream" / "alpaca_eval" / "results" / "cohere"


@pytest.mark.parametrize(
    ("annotator", "records"),
    [("alpaca_eval_gpt4_turbo_fn", 12), ("alpaca_eval_cot_gpt4_turbo_fn", 13)],
)
def test_function_call_annotators_are_gpt4_turbo_judging_its_own_baseline(
    annotator: str, records: int
) -> None:
    """AlpacaEval 2's function-calling annotators (22 upstream results files) are
    gpt-4-1106-preview by their configs' model_name, the baseline they judge against:
    read as a judge of their own name (a family of their own) the judge was never the
    baseline's, so its preference for its own outputs was not self-preference."""
    from recuse.data.alpaca_eval import read_annotation_file

    path = FN_FILES / annotator / "annotations.json"
    records_json = json.loads(path.read_text(encoding="utf-8"))
    with pytest.warns(ModelsNotInRoster) as caught:  # "cohere" only: the annotator is known
        t = read_annotation_file(path)
    said = " ".join(str(w.message) for w in caught)
    assert "'cohere'" in said and f"'{annotator}'" not in said
    assert len(t) == records == len(records_json)
    assert set(t["judge"]) == {"gpt-4-1106-preview"} == set(t["model_a"])
    roster = Roster.builtin()
    assert roster.family(annotator) == "gpt" and roster.canonical(annotator) == (
        "gpt-4-1106-preview"
    )
    # 2 - preference, worked out from the upstream records (1 = the baseline wins)
    hand = [2.0 - r["preference"] for r in records_json]
    assert t["p_a"].tolist() == hand


def test_bedrock_claude_judging_its_own_outputs_is_claude_v1_both_times() -> None:
    """results/bedrock_claude/bedrock_claude: AlpacaEval's bedrock_claude model and
    annotator are both model_name "anthropic.claude-v1" (their configs). Read as an
    unknown name each was a family of its own, apart from the claude-v1 the roster
    knows as "claude" (results/claude), and the judge's family was no one else's."""
    from recuse.data.alpaca_eval import read_annotation_file

    path = (
        Path(__file__).parent / "importers/upstream/alpaca_eval/results/bedrock_claude"
        / "bedrock_claude/annotations.json"
    )  # fmt: skip
    records = json.loads(path.read_text(encoding="utf-8"))
    t = read_annotation_file(path)  # no name outside the roster: no warning
    assert len(t) == len(records) == 12
    assert set(t["judge"]) == set(t["model_b"]) == {"claude-v1"}
    assert set(t["model_a"]) == {"text-davinci-003"}
    assert Roster.builtin().family("bedrock_claude") == "claude"
    assert t["p_a"].tolist() == [2.0 - r["preference"] for r in records]
