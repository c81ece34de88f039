"""The notes on how a plain pairs file reads (recuse.data.reading_notes); the files that
raise them, read whole, are in test_inputs.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import recuse.files
from recuse.data import reading_notes


def test_a_large_file_whose_lengths_agree_is_read_without_counting_every_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """lengths_at_odds counted the words of every text of a table with texts and len_a /
    len_b, and mirrored_rows hashed every text, both for a note that few files need: a
    plain AlpacaEval file read 35% slower than at 40bc227 (2.7 s against 2.0). A large
    table whose lengths agree is judged from 2,000 comparisons drawn at random, and one
    whose models never come back swapped has its texts unhashed; a table where a fifth
    of the comparisons disagree, or whose two orders are two rows, is still said."""
    n, rng = 10_000, np.random.default_rng(1)
    words_a, words_b = rng.integers(1, 60, n), rng.integers(1, 60, n)
    frame = pd.DataFrame({"item_id": [f"i{k}" for k in range(n)], "prompt_id": "p",
                          "judge": "j", "model_a": [f"m{k % 7}" for k in range(n)],
                          "model_b": "baseline",
                          "response_a": [f"a{k} " + "w " * int(w) for k, w in enumerate(words_a)],
                          "response_b": [f"b{k} " + "v " * int(w) for k, w in enumerate(words_b)],
                          "len_a": words_a * 5, "len_b": words_b * 5})  # fmt: skip
    counted: list[str] = []
    count = recuse.files.words_in
    monkeypatch.setattr(recuse.files, "words_in", lambda t: counted.append(t) or count(t))
    hashed: list[int] = []
    factorize = pd.factorize
    monkeypatch.setattr(
        reading_notes.pd,
        "factorize",
        lambda v, *a, **k: hashed.append(len(v)) or factorize(v, *a, **k),
    )
    assert reading_notes.lengths_at_odds(frame) == () and len(counted) == 4_000
    assert reading_notes.mirrored_rows(frame) == () and hashed == [2 * n]  # the models alone
    # a quarter of the comparisons with their lengths turned: said, counted in full
    odd = frame.index % 4 == 0
    turned = frame.assign(len_a=np.where(odd, frame["len_b"], frame["len_a"]),
                          len_b=np.where(odd, frame["len_a"], frame["len_b"]))  # fmt: skip
    disagree = int((odd & (words_a != words_b)).sum())
    (note,) = reading_notes.lengths_at_odds(turned)
    assert f"in {disagree:,} of {n:,} comparisons (first: item 'i0')" in note
    # its rows mirrored: one comparison's two orders, found among the models' candidates
    swap = {f"{c}_{x}": f"{c}_{y}" for c in ("model", "response") for x, y in ("ab", "ba")}
    mirror = frame.head(3).rename(columns=swap)
    (note,) = reading_notes.mirrored_rows(
        pd.concat([frame, mirror.assign(item_id=["r0", "r1", "r2"])])
    )
    assert note.startswith("judge 'j': 6 rows are one comparison's two orders")
