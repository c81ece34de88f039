"""The notes on how a plain pairs file reads (recuse.data.reading_notes); the files that
raise them, read whole, are in test_inputs.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import recuse.files
from recuse.data import reading_notes
from recuse.data.inputs import load_input


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


def _partly_judged(path: Path) -> Path:
    """300 pairs of a judge (m1, one of the two models) that picks the answer shown
    first 80% of the time, half of them judged in the first order only."""
    rng, n = np.random.default_rng(0), 300
    first = np.where(rng.random(n) < 0.8, 1.0, 0.0)
    second = np.where(rng.random(n) < 0.8, 0.0, 1.0)
    second[::2] = np.nan
    pd.DataFrame({"item_id": [f"i{k}" for k in range(n)], "prompt_id": [f"p{k}" for k in range(n)],
                  "model_a": "m1", "model_b": "m2", "judge": "m1",
                  "human": rng.integers(0, 2, n).astype(float),
                  "p_a_first": first, "p_a_second": second}).to_csv(path, index=False)  # fmt: skip
    return path


def test_notes_that_one_order_makes_untrue_are_dropped_when_one_order_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The note on one-order and two-order verdicts pooled was printed by `recuse audit
    --orders first` too, whose every verdict is of one order (nothing pooled), and the
    wrong-frame note on p_a_second by a reading that leaves p_a_second unread. Both stay
    where they are true: both orders read, or (the frame note) the second order read."""
    from recuse.cli import main

    path = _partly_judged(tmp_path / "t.csv")
    frame = load_input(path).frame
    (pooled,) = reading_notes.orders_partly_judged(frame)
    for orders, said in (("both", True), ("first", False), ("second", False)):
        assert (pooled in reading_notes.read_in_orders((pooled,), frame, orders=orders)) is said
        code = main(["audit", str(path), "--orders", orders, "--out", str(tmp_path / orders),
                     "--n-boot", "200", "--only", "agreement"])  # fmt: skip
        err = capsys.readouterr()
        assert code == 0 and ("one order only" in err.out + err.err) is said, orders
        pairs = ["metrics", "pairs", str(path), "--orders", orders, "-m", "self_preference_dp"]
        assert main([*pairs, "--n-boot", "50"]) == 0
        err = capsys.readouterr()
        assert ("one order only" in err.out + err.err) is said, orders
    # the wrong frame: the second order's verdicts turned over (1 - p) against the labels
    human = frame["human"].to_numpy(float)
    turned = frame.assign(p_a_first=human, p_a_second=1.0 - human)
    (odd,) = reading_notes.orders_at_odds(turned, swapped_frame="original")
    kept = {o: reading_notes.read_in_orders((odd,), turned, orders=o) for o in ORDERS}
    assert kept == {"both": (odd,), "first": (), "second": (odd,)}


ORDERS = ("both", "first", "second")


def test_answers_in_a_script_without_spaces_between_words_are_said(tmp_path: Path) -> None:
    """Thai puts spaces between phrases, not words: an answer of 19 words in two phrases
    counted 2 words beside a 4-word answer in four short phrases, the shorter read as
    the longer, and the verbosity analysis read it so with nothing said. A note names
    the script and how many rows hold it; English, Chinese and Korean (spaced
    words) raise none."""
    from recuse.files import words_in

    long_thai = "วันนี้อากาศดีมากเราจึงไปเดินเล่นที่สวนสาธารณะ ใกล้บ้านกับครอบครัวทั้งหมด"
    short_thai = "ใช่ ไม่ใช่ ดี มาก"
    assert (words_in(long_thai), words_in(short_thai)) == (2, 4)  # the longer counts fewer
    rows = {"item_id": ["i0", "i1", "i2"], "prompt_id": ["p0", "p1", "p2"],
            "model_a": "m1", "model_b": "m2", "judge": "m1", "p_a": [1.0, 0.0, 1.0],
            "response_a": [long_thai, "我喜欢猫。", "안녕하세요 반갑습니다"],
            "response_b": [short_thai, "two words", "네"]}  # fmt: skip
    path = tmp_path / "t.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    (note,) = [n for n in load_input(path).source.notes if "without spaces" in n]
    assert note.startswith("1 of 3 rows have an answer in Thai, a script written")
    pd.DataFrame(rows).iloc[1:].to_csv(path, index=False)
    assert not [n for n in load_input(path).source.notes if "without spaces" in n]


def test_a_large_table_is_glanced_at_for_spaceless_scripts_first() -> None:
    """Of a large table, 2,000 rows drawn at random are read first: a table with Thai in
    a fifth of its rows is said (counted in full), one with none is left after the
    glance (AlpacaEval's 23,338 rows: 0.1 s read whole, against a 2 s reading)."""
    n = 6_000
    texts = [f"answer {k}" for k in range(n)]
    thai = ["แมว กิน ปลา" if k % 5 == 0 else t for k, t in enumerate(texts)]
    frame = pd.DataFrame({"response_a": thai, "response_b": texts})
    (note,) = reading_notes.spaceless_words(frame)
    assert note.startswith(f"{n // 5:,} of {n:,} rows have an answer in Thai")
    assert reading_notes.spaceless_words(frame.assign(response_a=texts)) == ()


def test_english_answers_with_a_baht_sign_or_a_thai_word_raise_no_note() -> None:
    """An English answer quoting a price in baht (฿ is in the Thai block) or one Thai
    greeting was read as 'an answer in Thai', and every row holding one was said; its
    words are spaced and counted as any English answer's. A text is named only where
    the script is at least a quarter of its characters (spaces not counted)."""
    english = [
        "A night in Bangkok costs about ฿1,200 (roughly $35), and street food ฿50 a plate.",
        "Say hello: สวัสดี (sawasdee) is how Thais greet each other in the morning.",
    ]
    frame = pd.DataFrame({"response_a": english, "response_b": ["Hotels cost 1200 baht."] * 2})
    assert reading_notes.spaceless_words(frame) == ()
    mixed = frame.assign(response_b=["แมวกินปลา two words", "ใช่ ไม่ใช่ ดี มาก"])
    (note,) = reading_notes.spaceless_words(mixed)
    assert note.startswith("2 of 2 rows have an answer in Thai")
