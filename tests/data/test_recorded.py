"""A plain table of recorded replies (:func:`recuse.data.recorded.read_reply_table`):
a reply is the text the judge wrote, "None" included; the judge column reads "NA" as
missing, with a note, as a pairs table does."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from recuse.data.recorded import read_recording
from recuse.errors import ReaderNote


def _replies(path: Path, judges: list[str]) -> Path:
    pd.DataFrame(
        {
            "item_id": ["i0", "i0", "i1", "i1"],
            "prompt": ["Say nothing.", "Say nothing.", "NA", "NA"],
            "response_a": ["None", "None", "x", "x"],
            "response_b": ["y", "y", "null", "null"],
            "order": ["first", "second", "first", "second"],
            "text": ["None", "[[A]]", "", "N/A"],
            "judge": judges,
        }
    ).to_csv(path, index=False)
    return path


def test_a_reply_none_is_a_reply_and_the_pair_texts_are_kept(tmp_path: Path) -> None:
    rec = read_recording(
        _replies(tmp_path / "r.csv", ["gpt-4"] * 4), source="table", verdict="brackets"
    )
    assert [(o.text, o.missing) for o in rec.outputs] == [
        ("None", None),
        ("[[A]]", None),
        (None, "empty text cell"),  # only an empty cell is no reply
        ("N/A", None),
    ]
    assert rec.pairs["prompt"].tolist() == ["Say nothing.", "NA"]
    assert rec.pairs["response_a"].tolist() == ["None", "x"]
    assert rec.pairs["response_b"].tolist() == ["y", "null"]


def test_a_judge_na_is_missing_and_noted(tmp_path: Path) -> None:
    path = _replies(tmp_path / "r.csv", ["gpt-4", "NA", "gpt-4", "gpt-4"])
    with pytest.warns(ReaderNote, match=r"read as missing: 'NA' in judge \(data row 2\)"):
        rec = read_recording(path, source="table", verdict="brackets")
    assert rec.judge == "gpt-4"
