"""A text that pandas' CSV reader reads as missing ("NA", "nan", "None", "", ...) is
missing in the schema columns of every table door: a DataFrame (``recuse.audit``,
``validate_pairs``), a JSON lines or Parquet file, as in the same table written to CSV.
Before, a DataFrame (and a JSONL or Parquet file) kept the model name 'NA' and refused a
verdict 'NA' ("unknown verdict") that the CSV file read as missing."""

from __future__ import annotations

import io
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import recuse
from recuse.api import _frame_input
from recuse.data.inputs import load_input
from recuse.data.value_maps import ValueReading
from recuse.errors import InputError, ReaderNote


def _table(rows: int = 8) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in range(rows)],
            "prompt_id": [f"p{k}" for k in range(rows)],
            "model_a": ["gpt-4"] * rows,
            "model_b": ["claude-v1"] * rows,
            "judge": ["gpt-4"] * rows,
            "human": rng.choice(["A", "B", "tie"], rows),
            "p_a_first": rng.choice(["A", "B"], rows),
            "p_a_second": rng.choice(["A", "B"], rows),
            "category": ["coding"] * rows,
            "len_a": [str(10 + k) for k in range(rows)],
            "status_second": ["ok"] * rows,
        }
    )


def _by_every_door(frame: pd.DataFrame, folder: Path) -> dict[str, pd.DataFrame]:
    """The pairs table ``frame`` read through each door: a CSV, a JSONL and a Parquet
    file of it, and the DataFrame as ``recuse.audit`` reads it."""
    frame.to_csv(folder / "t.csv", index=False)
    frame.to_json(folder / "t.jsonl", orient="records", lines=True)
    frame.to_parquet(folder / "t.parquet", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the notes are checked below
        read = {ext: load_input(folder / f"t.{ext}").frame for ext in ("csv", "jsonl", "parquet")}
        read["dataframe"] = _frame_input(frame, 0, 1, folder / "tmp").frame
    return read


@pytest.mark.parametrize("text", ["NA", "nan", "None", "null", "N/A", "<NA>", ""])
@pytest.mark.parametrize(
    "column", ["model_b", "category", "human", "p_a_second", "len_a", "status_second"]
)
def test_a_missing_text_reads_the_same_through_every_door(
    tmp_path: Path, text: str, column: str
) -> None:
    (tmp_path / "tmp").mkdir()
    frame = _table()
    frame.loc[[2, 5], column] = text
    if column == "p_a_second":  # a verdict the judge did not give
        frame.loc[[2, 5], "status_second"] = "unparsed"
    doors = _by_every_door(frame, tmp_path)
    csv = doors.pop("csv")
    assert csv[column].isna().sum() == 2  # the schema column's rule, as in every door
    for door, got in doors.items():
        pd.testing.assert_frame_equal(got, csv, obj=door)
    # validate_pairs: the DataFrame as the CSV file's cells
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        direct = recuse.validate_pairs(frame)
        cells = recuse.validate_pairs(pd.read_csv(tmp_path / "t.csv", dtype=str))
    pd.testing.assert_frame_equal(direct, cells, obj="validate_pairs")


def test_a_judge_named_na_is_a_missing_judge_in_a_dataframe_as_in_a_csv(tmp_path: Path) -> None:
    """The verdicts of a judge 'NA' have no judge: the error is the CSV file's, and the
    note before it says that the text was read as missing."""
    frame = _table()
    frame.loc[3, "judge"] = "NA"
    frame.to_csv(tmp_path / "t.csv", index=False)
    with pytest.warns(ReaderNote, match=r"'NA' in judge \(data row 4\)"):
        with pytest.raises(InputError) as by_file:
            load_input(tmp_path / "t.csv")
    with pytest.warns(ReaderNote) as notes, pytest.raises(InputError) as by_frame:
        recuse.audit(frame)
    assert by_frame.value.reason == by_file.value.reason == "judge verdict without a judge name"
    assert (by_frame.value.row, by_frame.value.column) == (4, "judge")
    said = [str(n.message) for n in notes if "read as missing" in str(n.message)]
    assert said == [
        "dataframe (the DataFrame given): read as missing: 'NA' in judge (data row 4) — texts "
        "that mark a missing value (pandas' defaults), which recuse reads so in the columns "
        "of models, ids, labels, verdicts and scores of every table (CSV, JSON, Parquet or "
        "DataFrame alike; a prompt or an answer keeps them as written); if one is a real "
        "value, rename it (a model 'NA' as 'NA-model')"
    ]


def test_the_note_names_each_text_column_and_rows_and_not_an_empty_text() -> None:
    frame = _table()
    frame.loc[[1, 6], "model_b"] = "None"
    frame.loc[6, "category"] = "nan"
    frame.loc[2, "category"] = "n/a"
    frame.loc[0, "judge"] = ""  # a CSV's empty cell: missing, and no note
    frame.loc[0, ["p_a_first", "p_a_second", "status_second"]] = np.nan  # human-only
    with pytest.warns(ReaderNote) as notes:
        out = recuse.validate_pairs(frame, file="mine.csv")
    said = [str(n.message) for n in notes if "read as missing" in str(n.message)]
    assert len(said) == 1
    assert said[0].startswith(
        "mine.csv: read as missing: 'None' in model_b (2 rows, first data row 2); "
        "'n/a', 'nan' in category (2 rows, first data row 3) — "
    )
    assert out["model_b"].isna().sum() == 2 and out["category"].isna().sum() == 2
    assert pd.isna(out.loc[0, "judge"])
    # an id spelt so is missing, and refused as one (the note said why, first)
    frame.loc[4, "prompt_id"] = "NULL"
    with pytest.warns(ReaderNote, match=r"'NULL' in prompt_id \(data row 5\)"):
        with pytest.raises(InputError, match="missing prompt_id") as err:
            recuse.validate_pairs(frame)
    assert err.value.row == 5


def test_a_parquet_file_with_an_index_names_data_rows_not_index_labels(tmp_path: Path) -> None:
    frame = _table().iloc[::2]  # index 0, 2, 4, 6: the 2nd data row has label 2
    frame.loc[2, "model_a"] = "NA"
    frame.to_parquet(tmp_path / "t.parquet")  # the index kept in pandas' metadata
    with pytest.warns(ReaderNote, match=r"'NA' in model_a \(data row 2\)"):
        out = load_input(tmp_path / "t.parquet").frame
    assert out["model_a"].isna().tolist() == [False, True, False, False]


def test_free_text_is_kept_as_written(tmp_path: Path) -> None:
    """A response 'None' is what the model answered (AlpacaEval holds two): the typed
    doors keep it, and say nothing."""
    frame = _table().assign(prompt="Say nothing.", response_a="None", response_b="N/A")
    frame.to_json(tmp_path / "t.jsonl", orient="records", lines=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReaderNote)
        for out in (recuse.validate_pairs(frame), load_input(tmp_path / "t.jsonl").frame):
            assert (out["response_a"] == "None").all() and (out["response_b"] == "N/A").all()


def test_the_missing_texts_are_those_pandas_csv_reader_reads_as_missing() -> None:
    """Each of recuse's texts reads as missing in a CSV; near misses do not."""
    from recuse.cells import MISSING_TEXTS

    near = ["na", "Na", " NA", "NA ", "none", "NONE", "Null", "N/a", "nil", "-", "0"]
    cells = sorted(MISSING_TEXTS - {""}) + near
    text = "x\n" + "\n".join(f'"{c}"' for c in cells) + "\n"
    back = pd.read_csv(io.StringIO(text), dtype=str)["x"]
    assert back.isna().tolist() == [c in MISSING_TEXTS for c in cells]
    from pandas._libs.parsers import STR_NA_VALUES

    assert frozenset(STR_NA_VALUES) == MISSING_TEXTS


def test_a_value_map_naming_a_missing_text_says_it_never_applies(tmp_path: Path) -> None:
    """``--values human:NA=0.5``: the 'NA' cells are missing before any map (in a CSV
    they always were), so the map never meets them — said, not silent."""
    frame = _table()
    frame.loc[2, "human"] = "NA"
    frame.to_csv(tmp_path / "t.csv", index=False)
    with pytest.warns(ReaderNote) as notes:
        out = load_input(
            tmp_path / "t.csv", reading=ValueReading({"human": {"NA": 0.5, "A": 1, " None": 0}})
        ).frame
    assert pd.isna(out.loc[2, "human"])
    # the keys quoted as the user wrote them (they were quoted folded: 'na', 'none')
    said = [str(n.message) for n in notes if "value map" in str(n.message)]
    assert said == [
        f"{tmp_path / 't.csv'}: the value map for column 'human' names 'NA', ' None', "
        "texts recuse reads as missing in that column (in every table) before any map "
        "applies: those cells stay missing — write another value in the file, or drop it "
        "from the map"
    ]
    # a cell 'none' is no missing text: the map meets it, and nothing is said
    frame.loc[2, "human"] = "none"
    frame.to_csv(tmp_path / "t.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReaderNote)
        out = load_input(tmp_path / "t.csv", reading=ValueReading({"human": {"None": 0.5}})).frame
    assert out.loc[2, "human"] == 0.5


@pytest.mark.parametrize("ext", ["csv", "tsv"])
def test_a_delimited_files_answers_none_and_na_keep_their_texts_and_lengths(
    tmp_path: Path, ext: str
) -> None:
    """A model that answered "None" or "NA" wrote one word: the CSV and TSV doors keep
    the text (they made it missing: no length, so the pair left the verbosity
    analysis), as the JSONL door does."""
    from recuse.metrics.verbosity import response_lengths

    frame = _table(4).assign(
        prompt=["Say nothing.", "NA", "Why?", "null"],
        response_a=["None", "NA", "two words", "#N/A"],
        response_b=["one two three", "x y", "null", "nan"],
    )
    frame.to_csv(tmp_path / f"t.{ext}", index=False, sep="\t" if ext == "tsv" else ",")
    frame.to_json(tmp_path / "t.jsonl", orient="records", lines=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReaderNote)  # nothing was read as missing
        got = load_input(tmp_path / f"t.{ext}").frame
        typed = load_input(tmp_path / "t.jsonl").frame
    assert len(got) == 4
    assert got["prompt"].tolist() == ["Say nothing.", "NA", "Why?", "null"]
    assert got["response_a"].tolist() == ["None", "NA", "two words", "#N/A"]
    assert got["response_b"].tolist() == ["one two three", "x y", "null", "nan"]
    len_a, len_b, how = response_lengths(got)
    assert how == "words"
    assert len_a.tolist() == [1.0, 1.0, 2.0, 1.0] and len_b.tolist() == [3.0, 2.0, 1.0, 1.0]
    pd.testing.assert_frame_equal(got, typed)


def test_a_csv_score_or_label_na_is_still_missing_and_noted(tmp_path: Path) -> None:
    """The schema columns read "NA", "null", ... as missing in a CSV file as in every
    door, now with the note the other doors give (the reader no longer does it)."""
    frame = _table()
    frame.loc[2, "human"] = "NA"
    frame.loc[5, "p_a_second"] = "null"
    frame.loc[5, "status_second"] = "unparsed"
    frame.to_csv(tmp_path / "t.csv", index=False)
    with pytest.warns(ReaderNote) as notes:
        out = load_input(tmp_path / "t.csv").frame
    said = [str(n.message) for n in notes if "read as missing" in str(n.message)]
    assert len(said) == 1
    assert said[0].startswith(
        f"{tmp_path / 't.csv'}: read as missing: 'NA' in human (data row 3); "
        "'null' in p_a_second (data row 6) — "
    )
    assert out["human"].isna().tolist() == [k == 2 for k in range(8)]
    assert out["p_a_second"].isna().tolist() == [k == 5 for k in range(8)]


@pytest.mark.parametrize("column", ["model_a", "judge", "human", "p_a_first", "len_a"])
def test_a_missing_text_with_spaces_around_it_is_missing_and_told_as_written(
    tmp_path: Path, column: str
) -> None:
    """' NA ' in a column recuse reads trimmed (model names, verdicts, labels, numbers)
    is NA: a model ' NA ' was trimmed to 'NA', told 'not in the roster, read as its own
    model', then read as missing and told as 'NA'; a verdict or a length ' NA ' was
    refused though ' A ' and ' 12 ' read. Every door reads it alike, one note quoting
    the cell as written."""
    (tmp_path / "tmp").mkdir()
    frame = _table()
    frame.loc[[2, 5], column] = ["  NA ", "\tNULL"]
    frame.loc[0, "category"] = " "  # spaces alone: the column's own rule (kept)
    if column == "judge":  # no verdict without a judge: those rows hold human labels only
        frame.loc[[2, 5], ["p_a_first", "p_a_second", "status_second"]] = np.nan
    with pytest.warns(ReaderNote) as notes:
        doors = _by_every_door(frame, tmp_path)
        load_input(tmp_path / "t.csv")
    csv = doors.pop("csv")
    assert csv[column].isna().tolist() == [k in (2, 5) for k in range(8)]
    assert csv.loc[0, "category"] == " "
    for door, got in doors.items():
        pd.testing.assert_frame_equal(got, csv, obj=door)
    said = [str(n.message) for n in notes]
    assert not [s for s in said if "not in the roster" in s]
    missing = [s for s in said if "read as missing" in s]
    assert len(missing) == 1
    assert (
        f"read as missing: '  NA ', '\\tNULL' in {column} (2 rows, first data row 3) — "
        in missing[0]
    )


def test_a_column_mapped_to_a_prompt_and_a_schema_column_keeps_its_prompt(
    tmp_path: Path,
) -> None:
    """``--map q=prompt,q=category``: the prompt 'None' is a text, the category cell
    missing. The column was read as missing before it was mapped, so the prompt lost its
    text too (its length, its probes), which no column mapped to a prompt alone does."""
    frame = _table().drop(columns=["category"]).assign(q=[f"q{k}" for k in range(8)])
    frame.loc[2, "q"] = "None"
    frame.to_csv(tmp_path / "t.csv", index=False)
    with pytest.warns(ReaderNote, match=r"read as missing: 'None' in category \(data row 3\)"):
        got = load_input(tmp_path / "t.csv", mapping={"q": ("prompt", "category")}).frame
    assert got["prompt"].tolist() == ["q0", "q1", "None", *(f"q{k}" for k in range(3, 8))]
    assert got["category"].isna().tolist() == [k == 2 for k in range(8)]
