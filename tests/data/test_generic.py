"""Bring-your-own files: every format reads the same table; every bad input a clear error."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recuse.data.generic import canonical_ids, load_table, read_table
from recuse.errors import ConfigError, DatasetNotFoundError, InputError
from recuse.roster import Roster

MALFORMED = Path(__file__).resolve().parents[1] / "malformed"

ROWS = [
    {
        "id": "x1",
        "question": "q1",
        "A": "ChatGPT",
        "B": "gpt4",
        "winner": "a",
        "judge": "GPT-4",
        "first": 1.0,
        "second": 0.0,
    },
    {
        "id": "x2",
        "question": "q1",
        "A": "claude",
        "B": "gpt4",
        "winner": "tie",
        "judge": "GPT-4",
        "first": 0.8,
        "second": None,
    },
    {
        "id": "x3",
        "question": "q2",
        "A": "vicuna-13b",
        "B": "alpaca-13b",
        "winner": "b",
        "judge": "gpt-4",
        "first": 0.0,
        "second": 0.0,
    },
]
MAPPING = {
    "id": "item_id",
    "question": "prompt_id",
    "A": "model_a",
    "B": "model_b",
    "winner": "human",
    "first": "p_a_first",
    "second": "p_a_second",
}


def _write(path: Path, fmt: str) -> Path:
    df = pd.DataFrame(ROWS)
    if fmt == "csv":
        df.to_csv(path, index=False)
    elif fmt == "tsv":
        df.to_csv(path, index=False, sep="\t")
    elif fmt == "csv.gz":
        with gzip.open(path, "wt", encoding="utf-8") as f:
            df.to_csv(f, index=False)
    elif fmt == "json":
        path.write_text(json.dumps(ROWS), encoding="utf-8")
    elif fmt == "jsonl":
        path.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n", encoding="utf-8")
    elif fmt == "parquet":
        df.to_parquet(path)
    return path


@pytest.mark.parametrize("fmt", ["csv", "tsv", "csv.gz", "json", "jsonl", "parquet"])
def test_every_format_gives_the_same_pairs(tmp_path: Path, fmt: str) -> None:
    path = _write(tmp_path / f"mine.{fmt}", fmt)
    t = read_table(path, table="pairs", mapping=MAPPING)
    assert t["item_id"].tolist() == ["x1", "x2", "x3"]
    assert t["model_a"].tolist() == ["gpt-3.5-turbo", "claude-v1", "vicuna-13b"]
    assert t["model_b"].tolist() == ["gpt-4", "gpt-4", "alpaca-13b"]
    assert t["judge"].tolist() == ["gpt-4"] * 3
    assert t["human"].tolist() == [1.0, 0.5, 0.0]
    # p_a = mean of the judged orders: (1 + 0)/2, 0.8 (one order), 0
    np.testing.assert_allclose(t["p_a"], [0.5, 0.8, 0.0])


def test_ratings_file(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text(
        "prompt_id,model,dimension,judge,rating,reference,length\n"
        "007,gpt-4o-2024-05-13,helpfulness,ChatGPT,4,3.5,120\n"
        "008,gpt4,helpfulness,ChatGPT,,4,80\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError, match="rating is missing") as err:
        read_table(path, table="ratings")
    assert err.value.row == 2
    path.write_text(path.read_text().replace(",,4,80", ",2,4,80"), encoding="utf-8")
    t = read_table(path, table="ratings")
    assert t["prompt_id"].tolist() == ["007", "008"]  # ids stay text
    assert t["model"].tolist() == ["gpt-4o", "gpt-4"]
    assert t["judge"].tolist() == ["gpt-3.5-turbo"] * 2
    assert t["rating"].tolist() == [4.0, 2.0]


def test_human_only_and_single_verdict_files(tmp_path: Path) -> None:
    human = tmp_path / "h.csv"
    human.write_text("item_id,prompt_id,human\n1,p,a\n2,p,b\n", encoding="utf-8")
    t = read_table(human, table="pairs")
    assert t["judge"].isna().all() and t["p_a"].isna().all() and t["model_a"].isna().all()
    single = tmp_path / "s.csv"
    single.write_text(
        "item_id,prompt_id,model_a,model_b,human,judge,p_a\n1,p,gpt-4,claude,,gpt-4,0.25\n",
        encoding="utf-8",
    )
    t = read_table(single, table="pairs")
    assert t["p_a"].tolist() == [0.25] and t["p_a_first"].isna().all()


def test_unknown_models_keep_adds_own_family(tmp_path: Path) -> None:
    roster = Roster.builtin()
    with pytest.raises(InputError, match="zephyr-7b-beta") as err:
        read_table(MALFORMED / "pairs_mixed_models_no_roster.csv", table="pairs", roster=roster)
    assert (err.value.row, err.value.column) == (3, "model_a")
    t = read_table(
        MALFORMED / "pairs_mixed_models_no_roster.csv",
        table="pairs",
        roster=roster,
        unknown_models="keep",
    )
    assert t["model_a"].tolist() == ["gpt-4", "gpt-4", "zephyr-7b-beta"]
    assert roster.families(t["model_a"]).tolist() == ["gpt", "gpt", "zephyr-7b-beta"]


def test_mapping_errors(tmp_path: Path) -> None:
    f = MALFORMED / "pairs_needs_mapping.csv"
    good = {
        "item": "item_id",
        "q": "prompt_id",
        "ma": "model_a",
        "mb": "model_b",
        "label": "human",
        "j": "judge",
        "p1": "p_a_first",
        "p2": "p_a_second",
    }
    t = read_table(f, table="pairs", mapping=good)
    assert t["p_a"].tolist() == [0.5]
    with pytest.raises(InputError, match="'nope', which is not in the file"):
        read_table(f, table="pairs", mapping={**good, "nope": "prompt"})
    with pytest.raises(InputError, match="not a pairs column"):
        read_table(f, table="pairs", mapping={**good, "q": "question"})
    with pytest.raises(InputError, match="gives 'judge' twice"):
        read_table(f, table="pairs", mapping={**good, "ma": "judge"})


# malformed corpus: file -> (row, column, words in the message); None = not named
EXPECTED: dict[str, tuple[int | None, str | None, str]] = {
    "pairs_duplicate_ids.csv": (2, None, "duplicate pairs row"),
    "pairs_empty.csv": (None, None, "empty"),
    "pairs_empty.jsonl": (None, None, "empty"),
    "pairs_garbage.parquet": (None, None, "not a readable Parquet file"),
    "pairs_header_only.csv": (None, None, "empty"),
    "pairs_infinite.csv": (2, "p_a_first", "infinite"),
    "pairs_json_not_array.json": (None, None, "expected a JSON array of objects"),
    "pairs_line_not_object.jsonl": (2, None, "not an object"),
    "pairs_missing_column.csv": (None, None, "missing required column(s) human"),
    "pairs_missing_item_id.csv": (2, "item_id", "missing item_id"),
    "pairs_mixed_models_no_roster.csv": (3, "model_a", "not in the roster"),
    "pairs_nan_prompt_id.csv": (2, "prompt_id", "missing prompt_id"),
    "pairs_needs_mapping.csv": (None, None, "missing required column"),
    "pairs_negative_length.csv": (2, "len_a", "negative"),
    "pairs_not_utf8.csv": (4, None, "not UTF-8"),
    "pairs_prob_out_of_range.csv": (2, "p_a_first", "not a probability"),
    "pairs_ragged_row.csv": (1, None, "more fields than the header"),
    "pairs_status_ok_but_empty.csv": (2, "p_a_first", "is 'ok' but"),
    "pairs_text_in_number.csv": (2, "p_a_first", "expected a number"),
    "pairs_truncated.jsonl": (2, None, "not valid JSON"),
    "pairs_unclosed_quote.csv": (2, None, "cannot parse"),
    "pairs_unknown_extension.xlsx": (None, None, "unknown file type"),
    "pairs_unknown_label.csv": (2, "human", "unknown human label"),
    "pairs_unknown_model.csv": (1, "model_a", "my-house-model"),
    "pairs_unknown_status.csv": (1, "status_first", "unknown status"),
    "pairs_verdict_without_judge.csv": (1, "judge", "without a judge"),
    "ratings_duplicate.csv": (2, None, "duplicate ratings row"),
    "ratings_missing_dimension.csv": (1, "dimension", "missing dimension"),
    "ratings_missing_reference.csv": (None, None, "reference"),
    "ratings_nan_rating.csv": (2, "rating", "rating is missing"),
    "ratings_negative_length.csv": (1, "length", "negative"),
    "ratings_text_rating.csv": (1, "rating", "expected a number"),
    "ratings_unknown_judge.csv": (1, "judge", "judge-nobody-knows"),
    "ratings_unknown_status.csv": (1, "status", "unknown status"),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_malformed_file_gives_one_clear_error(name: str) -> None:
    path = MALFORMED / name
    table = "ratings" if name.startswith("ratings") else "pairs"
    with pytest.raises(InputError) as err:
        read_table(path, table=table)  # type: ignore[arg-type]
    row, column, words = EXPECTED[name]
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(str(path))
    assert words in message
    assert (err.value.row, err.value.column) == (row, column)


def test_missing_file_folder_and_whitespace_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        read_table(tmp_path / "nope.csv", table="pairs")
    with pytest.raises(InputError, match="folder"):
        read_table(tmp_path, table="pairs")
    blank = tmp_path / "blank.csv"
    blank.write_text("\n\n  \n", encoding="utf-8")
    with pytest.raises(InputError, match="empty"):
        read_table(blank, table="pairs")


def test_json_array_of_non_objects_and_empty_array(tmp_path: Path) -> None:
    f = tmp_path / "a.json"
    f.write_text('[{"item_id": 1}, 5]', encoding="utf-8")
    with pytest.raises(InputError, match="element 2 is a JSON int") as err:
        read_table(f, table="pairs")
    assert err.value.row == 2
    f.write_text("[]", encoding="utf-8")
    with pytest.raises(InputError, match="empty"):
        read_table(f, table="pairs")
    f.write_text('[{"item_id": 1},\n {"item_id": ', encoding="utf-8")
    with pytest.raises(InputError, match="line 2, column"):
        read_table(f, table="pairs")


def test_bad_gzip(tmp_path: Path) -> None:
    f = tmp_path / "a.jsonl.gz"
    f.write_bytes(b"this is not gzip")
    with pytest.raises(InputError, match="gzip"):
        read_table(f, table="pairs")


def test_load_table_by_name_and_path(shared_data: Path, tmp_path: Path) -> None:
    t = load_table("hh-rlhf", table="pairs", data_dir=shared_data)
    assert len(t) == 2312
    with pytest.raises(InputError, match="is a ratings table"):
        load_table("play-favorites", table="pairs", data_dir=shared_data)
    with pytest.raises(DatasetNotFoundError, match="unknown dataset 'no-such-set'"):
        load_table("no-such-set", table="pairs", data_dir=shared_data)
    with pytest.raises(ConfigError, match="mapping"):
        load_table("hh-rlhf", table="pairs", data_dir=shared_data, mapping={"a": "b"})
    path = _write(tmp_path / "mine.csv", "csv")
    t = load_table(str(path), table="pairs", mapping=MAPPING)
    assert len(t) == 3
    with pytest.raises(InputError, match="file not found"):
        load_table(str(tmp_path / "missing.jsonl"), table="pairs")


def test_canonical_ids_equals_roster_canonicalize() -> None:
    roster = Roster.builtin()
    names = pd.Series(["ChatGPT", None, "gpt4", "ChatGPT", " Claude ", np.nan, "gpt-4"])
    fast = canonical_ids(names, roster)
    slow = roster.canonicalize(names)
    assert fast.tolist()[:5] == ["gpt-3.5-turbo", None, "gpt-4", "gpt-3.5-turbo", "claude-v1"]
    assert fast.isna().tolist() == slow.isna().tolist()
    assert fast.dropna().tolist() == slow.dropna().tolist()
    assert canonical_ids(pd.Series([None, None]), roster).isna().all()
    with pytest.raises(InputError, match="'nobody'") as err:
        canonical_ids(pd.Series(["gpt4", "gpt4", "nobody"]), roster, file="f.csv", column="judge")
    assert (err.value.row, err.value.column, err.value.file) == (3, "judge", "f.csv")
