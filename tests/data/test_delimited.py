"""The delimited-text reader: only an empty cell is missing; every other text, "None"
and "NA" among them, is kept as written (a model may answer "None")."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from recuse.cells import MISSING_TEXTS
from recuse.data.delimited import read_csv


@pytest.mark.parametrize("sep", [",", "\t"])
def test_texts_pandas_reads_as_missing_are_kept_and_only_an_empty_cell_is_missing(
    tmp_path: Path, sep: str
) -> None:
    texts = sorted(MISSING_TEXTS - {""})
    rows = [sep.join(["x", f'"{t}"', "y"]) for t in texts] + [sep.join(["x", "", "y"])]
    path = tmp_path / "t.txt"
    path.write_text(sep.join(["a", "answer", "b"]) + "\n" + "\n".join(rows) + "\n")
    got = read_csv(path, sep=sep)["answer"]
    assert got.iloc[:-1].tolist() == texts
    assert got.iloc[:-1].notna().all() and pd.isna(got.iloc[-1])


def test_numbers_still_read_as_numbers_and_an_empty_number_is_missing(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("rating,text\n3,None\n,NA\n4.5,\n")
    got = read_csv(path, as_str=False)
    assert got["rating"].dtype.kind == "f"
    assert got["rating"].tolist()[0] == 3.0 and math.isnan(got["rating"].tolist()[1])
    assert got["text"].tolist()[:2] == ["None", "NA"] and pd.isna(got["text"].iloc[2])
