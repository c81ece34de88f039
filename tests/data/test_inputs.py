"""The resolver of "dataset name or file": guessing a file's table kind at bounded cost."""

from __future__ import annotations

import gzip
import time
import tracemalloc
from pathlib import Path

from recuse.data.inputs import _guess_table, _peek_columns


def test_guess_reads_the_header_only(tmp_path: Path) -> None:
    ratings = tmp_path / "r.csv"
    ratings.write_text("\ufeffrating,prompt_id,model,dimension,judge,reference\n1,q,m,d,j,2\n")
    assert _guess_table(ratings) == "ratings"
    pairs = tmp_path / "p.jsonl.gz"
    with gzip.open(pairs, "wt") as fh:
        fh.write('\n{"item_id": "a", "rating": 1, "p_a": 0.5}\n')
    assert _peek_columns(pairs) == {"item_id", "rating", "p_a"}
    assert _guess_table(pairs) == "pairs"


def test_hostile_first_lines_cost_little(tmp_path: Path) -> None:
    wide = tmp_path / "wide.csv"
    wide.write_text(",".join(f"c{i}" for i in range(200_000)) + "\n")
    huge = tmp_path / "huge.jsonl"
    huge.write_text('{"x": "' + "y" * 20_000_000 + '"}\n')
    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    tracemalloc.start()
    start = time.perf_counter()
    for f in (wide, huge, deep):
        assert _guess_table(f) == "pairs"  # unknown: the reader will say what is wrong
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert time.perf_counter() - start < 20 and peak < 20_000_000
