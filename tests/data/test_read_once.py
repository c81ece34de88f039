"""A table file's cells are read for missing-value texts once: the file's reader reads
them before its value map (:func:`recuse.data.plain_tables.read_table`), and validation
(:func:`recuse.tables.validate_pairs`) reads only the columns the reader did not. Before,
validation read every schema column a second time (on a 200,000-row pairs CSV, a
quarter of a second of the read for nothing), always finding nothing new.

The table read is the same either way: a real dataset written to CSV and JSON lines
(with missing-value texts planted) reads through ``load_input`` as it did when
validation read every column again, notes alike."""

from __future__ import annotations

import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import recuse.tables
from recuse.data import plain_tables, registry
from recuse.data.inputs import load_input
from recuse.errors import ReaderNote


def _mtbench_file(shared_data: Path, folder: Path, ext: str) -> Path:
    """llmbar-mtbench's validated table as a file, with 'NA' planted in a label, a
    model name and a verdict (texts read as missing) and 'None' in an answer (kept)."""
    table = registry.load("llmbar-mtbench", data_dir=shared_data).astype(object)
    item = table["item_id"]  # every row (judge) of an item alike
    table.loc[item == item[3], "human"] = "NA"
    table.loc[item == item[7], "model_b"] = " null "
    table.loc[11, "category"] = "N/A"
    table.loc[item == item[5], "response_a"] = "None"
    path = folder / f"t.{ext}"
    if ext == "csv":
        table.to_csv(path, index=False)
    else:
        table.to_json(path, orient="records", lines=True)
    return path


def _counting(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Count, by column name, the columns read for missing-value texts."""
    seen: Counter[str] = Counter()
    real = recuse.tables._missing_texts_in

    def counted(s: pd.Series) -> object:
        seen[str(s.name)] += 1
        return real(s)

    monkeypatch.setattr(recuse.tables, "_missing_texts_in", counted)
    return seen


@pytest.mark.parametrize("ext", ["csv", "jsonl"])
def test_each_column_of_a_file_is_read_for_missing_texts_once(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ext: str
) -> None:
    path = _mtbench_file(shared_data, tmp_path, ext)
    seen = _counting(monkeypatch)
    with pytest.warns(ReaderNote, match=r"'NA' in human \(4 rows, first data row 4\)"):
        got = load_input(path).frame
    assert seen, "no column was read for missing texts"
    twice = {c: n for c, n in seen.items() if n > 1}
    assert not twice, f"read more than once: {twice}"
    assert {"human", "model_b", "category", "judge", "item_id"} <= set(seen)
    assert got["human"].isna().sum() == 4 and got["model_b"].iloc[7] is None
    assert got["category"].isna().sum() == 1 and got["response_a"].iloc[5] == "None"


@pytest.mark.parametrize("ext", ["csv", "jsonl"])
def test_a_file_reads_as_when_validation_read_every_column_again(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ext: str
) -> None:
    """The table and the notes are those of the former reading, in which validation
    read every schema column's texts again (``texts_read`` left out)."""
    path = _mtbench_file(shared_data, tmp_path, ext)
    with warnings.catch_warnings(record=True) as once:
        warnings.simplefilter("always")
        got = load_input(path).frame
    validate = plain_tables.validate_pairs

    def again(df: pd.DataFrame, **kwargs: Any) -> pd.DataFrame:
        kwargs.pop("texts_read")
        return validate(df, **kwargs)

    monkeypatch.setattr(plain_tables, "validate_pairs", again)
    seen = _counting(monkeypatch)
    with warnings.catch_warnings(record=True) as twice:
        warnings.simplefilter("always")
        former = load_input(path).frame
    assert seen["human"] == 2  # the former reading, read twice
    pd.testing.assert_frame_equal(got, former)
    assert [str(w.message) for w in once] == [str(w.message) for w in twice]
    assert any("'NA' in human (4 rows" in str(w.message) for w in once)


@pytest.mark.parametrize(
    "dtype", ["str", pd.StringDtype("python"), pd.StringDtype("pyarrow"), "object"]
)
@pytest.mark.parametrize("kind", ["id", "str"])
def test_text_columns_read_per_distinct_value_as_row_by_row(dtype: object, kind: str) -> None:
    """A text column read once per distinct text (``_texts_by_value``) holds each row's
    text as written, without the spaces around it where it is an id (Python's
    ``str.strip``: an ideographic space and a file separator too), a missing cell
    missing; the column given is left as it was."""
    cells = [" p0", "p0 ", "\u3000p1\x1c", None, "p1", " p0", "\tp2\n", None]
    frame = pd.DataFrame({"item_id": [f"i{k}" for k in range(8)]})
    frame["prompt_id"] = pd.Series(cells, dtype=dtype)  # type: ignore[call-overload]
    given = frame["prompt_id"].copy()
    column = recuse.tables.Column("prompt_id", kind)  # type: ignore[arg-type]
    if kind == "id":  # an id is never missing
        frame = frame.dropna().reset_index(drop=True)
        given = given.dropna().reset_index(drop=True)
    got = recuse.tables._coerce(frame, column, recuse.tables.PAIRS, None)
    by_row = [
        None if v is None else (v.strip() if kind == "id" else v)
        for v in cells
        if kind != "id" or v is not None
    ]
    assert [None if pd.isna(v) else v for v in got] == by_row
    assert got.dtype == object
    pd.testing.assert_series_equal(frame["prompt_id"], given)


def test_a_reply_tables_judge_column_is_read_for_missing_texts_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table of recorded replies (``recuse judge replay``) reads its judge column's
    missing-value texts once, and no other column's (its prompt, answers and replies
    are texts kept as written): 'NA' in the judge of one item's rows is missing, with
    the note, and the judge is the one name left."""
    from recuse.data.recorded import read_recording
    from recuse.verdict_parsing import BRACKETS

    rows = [
        {"item_id": f"i{i}", "prompt": "p", "response_a": "None", "response_b": "b",
         "order": order, "text": "[[A]]", "judge": "NA" if i == 0 else "gpt-4"}
        for i in range(3) for order in ("first", "second")
    ]  # fmt: skip
    path = tmp_path / "replies.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    seen = _counting(monkeypatch)
    with pytest.warns(ReaderNote, match=r"'NA' in judge \(2 rows, first data row 1\)"):
        recording = read_recording(path, source="table", verdict=BRACKETS)
    assert dict(seen) == {"judge": 1}
    assert recording.judge == "gpt-4" and recording.pairs["response_a"].iloc[0] == "None"
