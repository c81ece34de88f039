"""The judgment store's export: what it says about the rows it writes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from judging.helpers import FakeBackend, fake_pairs
from recuse.judging import Runner, Store


@pytest.mark.parametrize("mixed", [True, False])
def test_an_export_of_two_datasets_says_so(tmp_path: Path, mixed: bool) -> None:
    """A store reused for a second --data (the docs' runs/smol.sqlite for llmbar-mtbench,
    then mt-bench-human) exported both datasets' pairs as one file without a word, and
    an audit read them as one table. One dataset: nothing said."""
    pairs = pd.DataFrame(fake_pairs(5))
    pairs["source"] = ["llmbar"] * 3 + ["mt-bench-human" if mixed else "llmbar"] * 2
    notes: list[str] = []
    with Store(tmp_path / "s.db") as store:
        Runner(FakeBackend(), store, progress=False).pairwise(pairs)
        df = store.export_pairs(notes=notes)
    assert sorted(df["source"]) == sorted(pairs["source"])
    said = [
        "the store holds pairs of 2 datasets (rows: llmbar 3, mt-bench-human 2), exported "
        "together: an audit of this file reads them as one table; to audit each alone, "
        "judge it into a store of its own (--out)"
    ]
    assert notes == (said if mixed else [])
