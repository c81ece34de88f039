"""Verbosity bias (Eq. 5, Eq. 6) and the curves of Figures 3–5, by hand and literally."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recuse.errors import ConfigError, EstimationError, InputError
from recuse.metrics import (
    human_alignment_curve,
    human_verbosity_curve,
    judge_verbosity_curve,
    self_preference,
    verbosity_bias,
)
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.verbosity import bin_edges, response_lengths
from recuse.numbers import estimate_text
from recuse.simulate.pairs import simulate_pairs
from recuse.tables import validate_pairs

NAN = math.nan
FAST = {"boot": Resampling(n_boot=200), "min_n": 4}


def table(rows: list[dict[str, object]]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    df.insert(0, "item_id", [f"i{i}" for i in range(len(df))])
    df.insert(1, "prompt_id", [f"p{i}" for i in range(len(df))])
    for col in ("model_a", "model_b"):
        if col not in df:
            df[col] = None
    df["judge"] = df.get("judge", "j")
    df["p_a"] = NAN
    return validate_pairs(df)


def long_rows(spec: list[tuple[str, float, float, float]]) -> list[dict[str, object]]:
    """(longer side, human P(longer), P_first(longer), P_second(longer)); lengths 30 vs 10."""
    rows = []
    for side, h, pf, ps in spec:
        a = side == "a"
        rows.append(
            {
                "human": h if a else 1 - h,
                "p_a_first": pf if a else 1 - pf,
                "p_a_second": ps if a else 1 - ps,
                "len_a": 30.0 if a else 10.0,
                "len_b": 10.0 if a else 30.0,
            }
        )
    return rows


HAND = [
    *long_rows(
        [
            ("a", 1, 1, 1),  # human: longer; judge P(longer) 1
            ("b", 1, 1, NAN),  # 1 (one order)
            ("a", 1, 0.8, 0.6),  # 0.7
            ("b", 1, 0, 0),  # 0
            ("a", 0, 1, 1),  # human: shorter; 1
            ("b", 0, 1, 0),  # 0.5
            ("a", 0, 0, 0),  # 0
            ("b", 0, 0, 0),  # 0
            ("a", 0.5, 1, 1),  # human tie: left out
        ]
    ),
    # equal lengths, and an unknown length: left out
    {"human": 1, "p_a_first": 1, "p_a_second": 1, "len_a": 10.0, "len_b": 10.0},
    {"human": 1, "p_a_first": 1, "p_a_second": 1, "len_a": NAN, "len_b": 10.0},
]


def test_eq6_and_eq5_by_hand() -> None:
    t = table(HAND)
    r = verbosity_bias(t, **FAST)
    # recall when the human prefers the longer: (1 + 1 + 0.7 + 0) / 4
    # recall when the human prefers the shorter: (0 + 0.5 + 1 + 1) / 4
    assert r.components["recall_human_prefers_longer"] == pytest.approx(2.7 / 4)
    assert r.components["recall_human_prefers_shorter"] == pytest.approx(2.5 / 4)
    assert r.estimate == pytest.approx(0.2 / 4, abs=1e-12)
    assert r.n == 8 and r.metric == "verbosity_bias"
    pick = verbosity_bias(t, verdict="pick", **FAST)
    assert pick.estimate == pytest.approx(3 / 4 - 2.5 / 4, abs=1e-12)
    # mirror the judge: it now prefers the shorter response; Eq. 5 is the absolute value
    flipped = t.assign(p_a_first=1 - t["p_a_first"], p_a_second=1 - t["p_a_second"])
    flipped = validate_pairs(flipped.assign(p_a=NAN))
    neg = verbosity_bias(flipped, **FAST)
    assert neg.estimate == pytest.approx((1.3 / 4) - (1.5 / 4), abs=1e-12)
    dev = verbosity_bias(flipped, kind="absolute", **FAST)
    assert dev.estimate == pytest.approx(abs(neg.estimate), abs=1e-12)
    assert dev.metric == "verbosity_deviation"
    assert dev.ci_low >= 0


def _literal_eq6(t: pd.DataFrame) -> float:
    """Eq. 6 straight from its definition, with discrete picks and indices 0 = a, 1 = b."""
    d = t[(t["human"] != 0.5) & (t["p_a"] != 0.5) & t["p_a"].notna() & (t["len_a"] != t["len_b"])]
    y = np.where(d["human"] > 0.5, 0, 1)  # index of the human-preferred response
    y_judge = np.where(d["p_a"] > 0.5, 0, 1)
    s = np.where(d["len_a"] > d["len_b"], 0, 1)  # S = 0 when y0 has more words
    wrong = y_judge == 1 - y
    return float(wrong[s == 1 - y].mean() - wrong[s == y].mean())


def _literal_def41(t: pd.DataFrame, judge: str) -> float:
    """Definition 4.1 with y1 = the human-preferred response, S = index of the judge's own."""
    d = t[(t["judge"] == judge) & (t["human"] != 0.5) & (t["p_a"] != 0.5) & t["p_a"].notna()]
    d = d[(d["model_a"] == judge) ^ (d["model_b"] == judge)]
    human_a = d["human"] > 0.5
    judge_picks_y1 = (d["p_a"] > 0.5) == human_a
    own_is_y1 = np.where(human_a, d["model_a"] == judge, d["model_b"] == judge)
    return float(judge_picks_y1[own_is_y1].mean() - judge_picks_y1[~own_is_y1].mean())


def _planted_recalls(recall_longer: float, recall_shorter: float, seed: int) -> pd.DataFrame:
    """240 pairs, 3 per prompt, a judge right with probability ``recall_longer`` when the
    human prefers the longer answer and ``recall_shorter`` when the shorter: Eq. 6 is
    their difference, Eq. 5 its absolute value, by construction."""
    rng = np.random.default_rng(seed)
    n = 240
    len_a = rng.integers(20, 200, n).astype(float)
    len_b = len_a + rng.choice([-1.0, 1.0], n) * rng.integers(1, 100, n)
    human = (rng.random(n) < 0.5).astype(float)
    human_longer = (human == 1.0) == (len_a > len_b)
    right = rng.random(n) < np.where(human_longer, recall_longer, recall_shorter)
    p = np.where(right, human, 1.0 - human)
    return pd.DataFrame({"item_id": [f"i{i}" for i in range(n)],
                         "prompt_id": [f"q{i // 3}" for i in range(n)],
                         "judge": "j", "model_a": None, "model_b": None, "human": human,
                         "p_a_first": p, "p_a_second": p, "p_a": p,
                         "len_a": len_a, "len_b": len_b})  # fmt: skip


@pytest.mark.parametrize(("recall_longer", "recall_shorter"), [(0.75, 0.75), (0.6, 0.8)])
def test_eq5_interval_holds_the_planted_deviation(
    recall_longer: float, recall_shorter: float
) -> None:
    """Eq. 5 was bootstrapped as |Eq. 6|: every resample lies above 0, so for a judge
    with no verbosity bias (both recalls 0.75) its 90% interval excluded 0 in 95 of 100
    tables and its p-value was at most 0.1 in 79. Now its interval is the absolute values
    over Eq. 6's and its p-value Eq. 6's: it holds the planted |0.6 - 0.8| = 0.2, and 0
    with no bias, about as often as the level says (coverage over 60 tables)."""
    truth = abs(recall_longer - recall_shorter)
    boot = Resampling(level=0.9, n_boot=300)
    held = rejected = 0
    for seed in range(60):
        t = _planted_recalls(recall_longer, recall_shorter, seed)
        dev = verbosity_bias(t, kind="absolute", unit="column", boot=boot)
        signed = verbosity_bias(t, unit="column", boot=boot)
        assert dev.estimate == pytest.approx(abs(signed.estimate), abs=1e-12)
        assert dev.p_value == pytest.approx(signed.p_value, rel=1e-9)
        held += dev.ci_low <= truth <= dev.ci_high
        rejected += dev.p_value <= 0.1
    assert held / 60 >= 0.8
    if truth == 0:
        assert rejected / 60 <= 0.2


def test_eq6_and_definition_4_1_match_their_literal_definitions() -> None:
    sim = simulate_pairs(n_prompts=300, pairs_per_prompt=3, seed=5, single_order_rate=0.2)
    t = sim.pairs
    for judge in ("gpt-4", "claude-v1"):
        rows = t[t["judge"] == judge]
        v = verbosity_bias(
            t, judge=judge, verdict="pick", judge_ties="drop", boot=Resampling(n_boot=100)
        )
        assert v.estimate == pytest.approx(_literal_eq6(rows), abs=1e-12)
        s = self_preference(
            t, judge=judge, verdict="pick", judge_ties="drop", boot=Resampling(n_boot=100)
        )
        assert s.estimate == pytest.approx(_literal_def41(t, judge), abs=1e-12)


def test_length_units() -> None:
    texts = {"response_a": "aaaaaaaaaa bb", "response_b": "a b c"}  # 2 vs 3 words, 13 vs 5 chars
    t = table([{**texts, "human": 1, "p_a_first": 1, "p_a_second": 1}])
    la, lb, _ = response_lengths(t)
    assert (la[0], lb[0]) == (2, 3)
    la, lb, _ = response_lengths(t, unit="chars")
    assert (la[0], lb[0]) == (13, 5)
    la, lb, how = response_lengths(t, unit="tokens", tokenizer=lambda s: s.replace(" ", ""))
    assert (la[0], lb[0], how) == (12, 3, "tokens")
    with pytest.raises(ConfigError, match="tokenizer"):
        response_lengths(t, unit="tokens")
    with pytest.raises(InputError, match="len_a/len_b"):
        response_lengths(t, unit="column")
    only_cols = table([{"human": 1, "p_a_first": 1, "p_a_second": 1, "len_a": 4, "len_b": 2}])
    la, lb, how = response_lengths(only_cols)
    assert (la[0], lb[0]) == (4, 2) and "len_a/len_b" in how
    with pytest.raises(InputError, match="response texts"):
        response_lengths(only_cols, unit="chars")
    with pytest.raises(ConfigError, match="unit"):
        response_lengths(t, unit="lines")  # type: ignore[arg-type]


def test_words_are_counted_once_per_distinct_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each distinct answer's words are counted once (AlpacaEval's baseline answer
    repeats for every system and judge), and each row gets its own text's count: the
    runs of non-whitespace, a missing text NaN."""
    import recuse.metrics.verbosity as verbosity

    texts = ["one two", "a b c d", "x", "我喜欢猫。"]
    rows = [
        {"response_a": texts[i % 2], "response_b": None if i % 5 == 0 else texts[i % 4],
         "human": 1, "p_a_first": 1, "p_a_second": 1}
        for i in range(40)
    ]  # fmt: skip
    seen: list[str] = []
    words_in = verbosity.words_in

    def counted(text: str) -> int:
        seen.append(text)
        return words_in(text)

    monkeypatch.setattr(verbosity, "words_in", counted)
    la, lb, _ = response_lengths(table(rows))
    assert len(seen) == len(texts) and set(seen) == set(texts)
    want = {"one two": 2, "a b c d": 4, "x": 1, "我喜欢猫。": 4, None: math.nan}
    np.testing.assert_array_equal(la, [want[r["response_a"]] for r in rows])
    np.testing.assert_array_equal(lb, [want[r["response_b"]] for r in rows])


def test_unit_changes_which_response_is_longer() -> None:
    rows = []
    for i in range(8):  # the human prefers a (fewer words, more characters) in 4 of 8
        rows.append(
            {
                "response_a": "aaaaaaaaaa bb",
                "response_b": "a b c",
                "human": 1.0 if i < 4 else 0.0,
                "p_a_first": 1.0,
                "p_a_second": 1.0,
            }
        )
    t = table(rows)
    # the judge always picks a: by words a is the SHORTER one, by characters the LONGER
    assert verbosity_bias(t, **FAST).estimate == pytest.approx(-1.0)
    assert verbosity_bias(t, unit="chars", **FAST).estimate == pytest.approx(1.0)


def test_bin_edges() -> None:
    e = bin_edges()
    assert e[0] == -1 and e[-2] == 2.0 and np.isinf(e[-1])
    assert len(e) == 17
    with pytest.raises(ConfigError):
        bin_edges(0)


def test_alignment_curve_by_hand() -> None:
    rows = []
    # chosen 30 vs rejected 10 -> x = 2.0 (last, open bin); chosen 10 vs 30 -> x = -2/3
    for h_long, p_long in [(1, 1), (1, 1), (1, 0), (0, 1), (0, 1), (0, 0), (0, 0.5)]:
        rows += long_rows([("a", h_long, p_long, p_long)])
    c = human_alignment_curve(
        table(rows), bin_width=0.5, max_rel=2.0, min_n=3, boot=Resampling(n_boot=100)
    )
    assert list(c.columns) == [
        "judge", "bin_low", "bin_high", "n", "n_clusters", "mean", "sd", "ci_low", "ci_high",
        "note",
    ]  # fmt: skip
    assert c["bin_low"].tolist() == [-1.0, 2.0]
    assert c["n"].tolist() == [4, 3]
    # agreement: human prefers shorter, judge P(shorter) = 0, 0, 1, 0.5 (pick: tie = half)
    assert c["mean"].tolist() == pytest.approx([1.5 / 4, 2 / 3])
    assert c["sd"].iloc[1] == pytest.approx(np.std([1, 1, 0], ddof=1))
    assert np.isfinite(c["ci_low"]).all()
    small = human_alignment_curve(table(rows), bin_width=0.5, min_n=4, boot=Resampling(n_boot=100))
    assert small["ci_low"].isna().tolist() == [False, True]
    assert small["note"].iloc[1] == "only 3 pairs in this bin (need at least 4)"


def test_a_pair_whose_rejected_or_b_answer_is_empty_is_in_the_open_last_bin() -> None:
    """An answer of 0 words beside one of 20 makes the relative length difference +inf,
    which lies in the last bin (">= max_rel", open); it fell past that bin's edge (inf)
    and the pair was in no bin of Figures 3, 4 and 5, with nothing said (hh-rlhf has 4
    empty answers, llmbar 4)."""
    rows = [
        {"human": 1, "p_a_first": 1, "p_a_second": 1, "len_a": 20, "len_b": 0},  # x = inf
        {"human": 1, "p_a_first": 0, "p_a_second": 0, "len_a": 20, "len_b": 0},  # x = inf
        {"human": 1, "p_a_first": 1, "p_a_second": 1, "len_a": 30, "len_b": 10},  # x = 2
        {"human": 0, "p_a_first": 0, "p_a_second": 0, "len_a": 10, "len_b": 10},  # x = 0
    ]
    t = table(rows)
    fast = {"bin_width": 1.0, "max_rel": 2.0, "min_n": 1, "boot": Resampling(n_boot=50)}
    c = human_alignment_curve(t, **fast)
    # by hand: bin [0, 1) holds x = 0 (agrees); bin [2, inf) x = 2 and the two empty ones
    assert c[["bin_low", "n", "mean"]].values.tolist() == [[0.0, 1, 1.0], [2.0, 3, 2 / 3]]
    h = human_verbosity_curve(t, **fast)
    assert h[["bin_low", "n", "mean"]].values.tolist() == [[0.0, 1, -1.0], [2.0, 3, 1.0]]
    same = t.assign(model_a="m", model_b="m")
    j = judge_verbosity_curve(same, **fast)
    assert j[["bin_low", "n", "mean"]].values.tolist() == [[0.0, 1, -1.0], [2.0, 3, 1 / 3]]


def test_judge_curve_same_source_and_draws() -> None:
    rows = [
        {"model_a": "m", "model_b": "m", "human": NAN, "p_a_first": 1, "p_a_second": 1,
         "len_a": 15, "len_b": 10},  # +1, x = 0.5
        {"model_a": "m", "model_b": "m", "human": NAN, "p_a_first": 1, "p_a_second": 0,
         "len_a": 15, "len_b": 10},  # draw (orders disagree)
        {"model_a": "m", "model_b": "m", "human": NAN, "p_a_first": 0.2, "p_a_second": 0.4,
         "len_a": 5, "len_b": 10},  # -1 (probabilities below 0.5 in both orders), x = -0.5
        {"model_a": "m", "model_b": "m", "human": NAN, "p_a_first": 1, "p_a_second": NAN,
         "len_a": 15, "len_b": 10},  # one order only: left out
        {"model_a": "m", "model_b": "n", "human": NAN, "p_a_first": 1, "p_a_second": 1,
         "len_a": 15, "len_b": 10},  # different sources: left out by default
    ]  # fmt: skip
    t = table(rows)
    c = judge_verbosity_curve(t, bin_width=0.5, min_n=1, boot=Resampling(n_boot=50))
    assert c[["bin_low", "n", "mean"]].values.tolist() == [[-0.5, 1, -1.0], [0.5, 2, 0.5]]
    every = judge_verbosity_curve(
        t, same_source_only=False, bin_width=0.5, min_n=1, boot=Resampling(n_boot=50)
    )
    assert every["n"].tolist() == [1, 3]
    with pytest.raises(EstimationError, match="same model"):
        judge_verbosity_curve(table(rows[4:]), min_n=1, boot=Resampling(n_boot=50))


def test_human_curve_counts_each_item_once() -> None:
    sim = simulate_pairs(n_prompts=50, pairs_per_prompt=2, seed=2)
    c = human_verbosity_curve(sim.pairs, boot=Resampling(n_boot=100), min_n=1)
    labelled = sim.pairs.drop_duplicates("item_id")
    assert c["n"].sum() == labelled["human"].notna().sum() == 100
    assert "judge" not in c.columns
    # mean of the score is 2 * human - 1 per bin
    x = (labelled["len_a"] - labelled["len_b"]) / labelled["len_b"]
    top = labelled[x >= 2.0]
    if len(top):
        assert c["mean"].iloc[-1] == pytest.approx((2 * top["human"] - 1).mean())


def test_prefer_longer_gap_by_hand_with_ties_dropped_or_split() -> None:
    from recuse.metrics.verbosity import prefer_longer_gap
    from recuse.tables import validate_pairs

    # a is longer in rows 0-5, b in rows 6-7, equal in row 8 (left out)
    t = validate_pairs(
        pd.DataFrame(
            {
                "item_id": list("abcdefghi"),
                "prompt_id": list("abcdefghi"),
                "model_a": None,
                "model_b": None,
                "judge": ["j"] * 9,
                "human": [1, 1, 0, 0, 0.5, 1, 1, 0, 1],
                "p_a_first": [1, 0.8, 1, 0.6, 1, 1, 0, 0.5, 1],
                "p_a_second": None,
                "p_a": None,
                "len_a": [9, 9, 9, 9, 9, 9, 3, 3, 5],
                "len_b": [3, 3, 3, 3, 3, 3, 9, 9, 5],
            }
        )
    )
    # judge's P(longer): rows 0-5 p_a, rows 6-7 1 - p_a; human's likewise
    judge_all = [1, 0.8, 1, 0.6, 1, 1, 1, 0.5]
    human_all = [1, 1, 0, 0, 0.5, 1, 0, 1]
    drop = [i for i in range(8) if human_all[i] != 0.5]
    r = prefer_longer_gap(t, min_n=2, boot=Resampling(n_boot=200))
    want = np.mean([judge_all[i] for i in drop]) - np.mean([human_all[i] for i in drop])
    assert r.estimate == pytest.approx(want) and r.n == 7
    split = prefer_longer_gap(t, human_ties="split", min_n=2, boot=Resampling(n_boot=200))
    assert split.estimate == pytest.approx(np.mean(judge_all) - np.mean(human_all))
    assert split.components["human_picks_longer"] == pytest.approx(np.mean(human_all))


def test_prefer_longer_gap_recovers_a_judge_that_always_picks_the_longer() -> None:
    from recuse.metrics.verbosity import prefer_longer_gap, verbosity_bias

    rng = np.random.default_rng(5)
    n = 600
    la = rng.integers(5, 50, n)
    lb = la + rng.choice([-3, 3], n)
    a_longer = la > lb
    human_longer = rng.random(n) < 0.7  # humans prefer the longer answer 70 % of the time
    human = np.where(a_longer == human_longer, 1.0, 0.0)
    t = pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in range(n)], "prompt_id": [f"q{k // 3}" for k in range(n)],
            "model_a": None, "model_b": None, "judge": "j", "human": human,
            "p_a_first": a_longer.astype(float), "p_a_second": None, "p_a": None,
            "len_a": la, "len_b": lb,
        }
    )  # fmt: skip
    from recuse.tables import validate_pairs

    t = validate_pairs(t)
    gap = prefer_longer_gap(t, boot=Resampling(n_boot=400))
    assert gap.estimate == pytest.approx(1 - human_longer.mean())
    assert gap.ci_low <= 0.3 <= gap.ci_high
    assert verbosity_bias(t, boot=Resampling(n_boot=200)).estimate == pytest.approx(
        1.0
    )  # Eq. 6: 1 - 0


def test_unit_column_without_length_columns_says_what_is_missing() -> None:
    """unit='column' on a table with texts but no len_a/len_b names the missing columns
    and the units that count the texts; before, it said the table had 'neither
    response_a/response_b nor len_a/len_b', which was false."""
    t = pd.DataFrame({"response_a": ["one two"], "response_b": ["three"]})
    with pytest.raises(InputError) as err:
        response_lengths(t, unit="column")
    text = str(err.value)
    assert "neither" not in text and "len_a/len_b" in text and "words" in text
    with pytest.raises(InputError, match="neither response_a/response_b nor len_a/len_b"):
        response_lengths(t.drop(columns=["response_a"]))  # words, no texts, no lengths


def test_chinese_and_japanese_answers_are_counted_a_character_a_word() -> None:
    """Chinese and Japanese put no spaces between words: a split on spaces read a
    20-character answer in one paragraph as 1 word and a 6-character answer in three
    paragraphs as 3, so the shorter answer was 'longer' and the prefer-longer gap of a
    judge that always picks the longer answer read −0.5, not +0.5."""
    from recuse.metrics.verbosity import prefer_longer_gap

    long_a = "我" * 20  # 20 characters, one paragraph
    short_b = "你好\n\n谢谢\n\n再见"  # 6 characters, three paragraphs
    pair = {"response_a": long_a, "response_b": short_b, "p_a_first": 1.0, "p_a_second": 1.0}
    rows = [{**pair, "human": 1.0 if i < 4 else 0.0} for i in range(8)]
    t = table(rows)
    la, lb, _ = response_lengths(t)
    assert (la[0], lb[0]) == (20, 6)
    # by hand: the judge picks the longer answer (a) in 8 of 8, the humans in 4 of 8
    r = prefer_longer_gap(t, **FAST)
    assert r.estimate == pytest.approx(8 / 8 - 4 / 8) and r.n == 8
    # punctuation of those scripts separates words; a Latin word among them is one word
    mixed = table([{**pair, "response_a": "我用 GPT-4 写代码。很好！", "response_b": "ok fine"}])
    la, lb, _ = response_lengths(mixed)
    assert (la[0], lb[0]) == (8, 2)  # 我 用 GPT-4 写 代 码 很 好


def test_counting_words_in_plain_english_searches_no_script(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """files.words_in searched every text for a Chinese or Japanese character with a
    regular expression before splitting it, which nearly doubled the count on English
    answers (AlpacaEval's 46,670 texts: 0.70 s against 0.37 s for the split, and the
    plain file's reading 25% slower). An ASCII text is split at once, with no search
    (counted here, where a wall-clock ratio failed under load); the counts are the
    split's, and a text with Japanese in it is still counted a character a word."""
    import re

    import recuse.files as files

    searched: list[str] = []
    pattern = files._HAS_UNSPACED

    class Counted:
        def search(self, text: str) -> re.Match[str] | None:
            searched.append(text)
            return pattern.search(text)

    monkeypatch.setattr(files, "_HAS_UNSPACED", Counted())
    rng = np.random.default_rng(0)
    vocab = np.array(["the", "judge", "answer", "longer", "model's", "1.", "-", "(a)"])
    texts = [" ".join(rng.choice(vocab, 400)) + "\n" for _ in range(2_000)]
    assert [files.words_in(t) for t in texts] == [t.count(" ") + 1 for t in texts]
    assert searched == []
    assert files.words_in(texts[0] + "猫が好き") == 404 and len(searched) == 1


# --- the humans' own length preference (a baseline, no judge) ------------------------


def _human_only(seed: int, *, prompts: int = 240, truth: float = 0.7) -> pd.DataFrame:
    """Human-only pairs with a planted length preference: 1–3 pairs per prompt, the
    longer answer preferred with probability ``truth``; a tenth of the pairs ties, some
    of equal length, a few unlabelled."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(prompts):
        for k in range(int(rng.integers(1, 4))):
            la, lb = (int(x) for x in rng.integers(5, 60, size=2))
            if rng.random() < 0.05:
                lb = la
            longer_wins = rng.random() < truth
            a_longer = la > lb
            human: float = 1.0 if longer_wins == a_longer else 0.0
            if la == lb:
                human = float(rng.integers(0, 2))
            if rng.random() < 0.1:
                human = 0.5
            if rng.random() < 0.03:
                human = NAN
            rows.append({"item_id": f"p{p}-{k}", "prompt_id": f"p{p}", "human": human,
                         "len_a": la, "len_b": lb})  # fmt: skip
    df = pd.DataFrame(rows)
    for col in ("model_a", "model_b", "judge", "p_a_first", "p_a_second", "p_a"):
        df[col] = None
    return validate_pairs(df)


def _by_hand(t: pd.DataFrame, *, ties: str = "drop") -> tuple[float, int, pd.DataFrame]:
    """The share, with pandas alone: orient each label to the longer answer, keep the
    pairs of unequal length with a label (ties dropped or counted ½)."""
    d = t[t["human"].notna() & (t["len_a"] != t["len_b"])].copy()
    if ties == "drop":
        d = d[d["human"] != 0.5]
    d["h"] = np.where(d["len_a"] > d["len_b"], d["human"], 1 - d["human"])
    return float(d["h"].mean()), len(d), d


def _cluster_percentile(d: pd.DataFrame, *, n_boot: int, level: float, seed: int) -> list[float]:
    """An independent cluster bootstrap: resample prompts with replacement, the ratio of
    their summed h to their summed pairs, the percentile interval."""
    g = d.groupby("prompt_id")["h"].agg(["sum", "count"])
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(g), size=(n_boot, len(g)))
    s, c = g["sum"].to_numpy()[idx].sum(1), g["count"].to_numpy()[idx].sum(1)
    return list(np.quantile(s / c, [(1 - level) / 2, (1 + level) / 2]))


def test_the_humans_length_preference_is_the_share_counted_by_hand() -> None:
    """human_prefers_longer on a planted table (truth 0.7): the estimate is pandas'
    share to the last digit, n its pairs, 0.5 the no-preference value, and the interval
    agrees with a cluster bootstrap written here (percentile, not BCa: within 0.015) and
    holds the truth; ``human_ties="split"`` counts a tie ½, as the prefer-longer gap."""
    from recuse.metrics.verbosity import human_prefers_longer

    t = _human_only(3)
    share, n, d = _by_hand(t)
    r = human_prefers_longer(t, boot=Resampling(n_boot=2000, seed=1))
    assert r.estimate == pytest.approx(share, abs=1e-12) and r.n == n
    assert r.null == 0.5 and r.judge is None and r.n_clusters == d["prompt_id"].nunique()
    assert r.definition.startswith("share of pairs of unequal length in which the humans")
    low, high = _cluster_percentile(d, n_boot=4000, level=0.9, seed=7)
    assert r.ci_low == pytest.approx(low, abs=0.015) and r.ci_high == pytest.approx(high, abs=0.015)
    assert r.ci_low < 0.7 < r.ci_high and r.p_value < 0.01
    ties = int(((t["human"] == 0.5) & (t["len_a"] != t["len_b"])).sum())
    assert f"human ties left out ({ties:,})" in r.method
    split, n_split, _ = _by_hand(t, ties="split")
    s = human_prefers_longer(t, human_ties="split", boot=Resampling(n_boot=200))
    assert s.estimate == pytest.approx(split, abs=1e-12) and s.n == n_split > n


def test_the_humans_length_preference_is_the_prefer_longer_gaps_human_side() -> None:
    """One rule for both: on a table one judge judged every pair of, the humans' share
    is the ``human_picks_longer`` part of that judge's prefer-longer gap (the same
    pairs), ties and equal lengths left out alike; each item counts once whatever the
    judges (a second judge's rows change nothing)."""
    from recuse.metrics.verbosity import human_prefers_longer, prefer_longer_gap

    t = _human_only(5, prompts=120)
    rng = np.random.default_rng(0)
    judged = t.assign(judge="j", p_a_first=rng.random(len(t)).round(), p_a_second=np.nan)
    judged = validate_pairs(judged.assign(p_a=np.nan))
    gap = prefer_longer_gap(judged, boot=Resampling(n_boot=200))
    mine = human_prefers_longer(judged, boot=Resampling(n_boot=200))
    assert mine.estimate == pytest.approx(gap.components["human_picks_longer"], abs=1e-12)
    assert mine.n == gap.n
    two = validate_pairs(pd.concat([judged, judged.assign(judge="k")], ignore_index=True))
    again = human_prefers_longer(two, boot=Resampling(n_boot=200))
    assert (again.estimate, again.n) == (mine.estimate, mine.n)


def test_the_humans_length_preference_says_why_it_cannot_be_made() -> None:
    """No labels, or too few pairs of unequal length: an error naming the cause."""
    from recuse.metrics.verbosity import human_prefers_longer

    t = _human_only(1, prompts=3)
    with pytest.raises(EstimationError, match="pairs of unequal length with a human label"):
        human_prefers_longer(t, min_n=50)
    with pytest.raises(EstimationError, match="no human labels"):
        human_prefers_longer(t.assign(human=NAN))


def test_the_humans_length_preference_on_hh_rlhf_by_hand(shared_data: Path) -> None:
    """The real HH-RLHF pairs (harmless-base test, 2,312 human-labelled pairs, no judge):
    with the words counted here from the raw texts (``str.split``), pandas gives the
    share of unequal-length pairs whose longer answer the humans chose, 995 of 2,267 =
    0.4389 (shorter answers win on this split: a refusal is short), and SciPy's BCa
    bootstrap over the pairs (2,265 prompts for 2,267 pairs: nearly one each) agrees with
    the cluster bootstrap's interval within 0.005. Figure 4's curve: each bin's pairs
    and mean human score as pandas' ``cut`` counts them."""
    from scipy import stats

    from recuse.data.inputs import load_input
    from recuse.metrics.verbosity import human_prefers_longer

    t = load_input("hh-rlhf", data_dir=shared_data).frame
    assert t["judge"].isna().all() and len(t) == 2312
    la, lb = t["response_a"].str.split().str.len(), t["response_b"].str.split().str.len()
    d = t[t["human"].notna() & (la != lb) & (t["human"] != 0.5)]
    h = np.where(la[d.index] > lb[d.index], d["human"], 1 - d["human"])
    assert (int(h.sum()), len(h)) == (995, 2267)
    r = human_prefers_longer(t, boot=Resampling(n_boot=2000, seed=0))
    assert r.estimate == pytest.approx(995 / 2267, abs=1e-12) and r.n == 2267
    assert r.n_clusters == d["prompt_id"].nunique() == 2265
    boot = stats.bootstrap((h,), np.mean, n_resamples=4000, confidence_level=0.9,
                           method="BCa", random_state=np.random.default_rng(0))  # fmt: skip
    ci = boot.confidence_interval
    assert r.ci_low == pytest.approx(ci.low, abs=0.005)
    assert r.ci_high == pytest.approx(ci.high, abs=0.005)
    assert r.ci_high < 0.5  # the humans of this split prefer the shorter answer
    # the audit's defaults (2,000 resamples, seed 0) give the number the docs quote
    shown = estimate_text(r.estimate, r.ci_low, r.ci_high, signed=False, null=0.5)
    assert shown == "0.44 [0.42, 0.46]"
    docs = Path(__file__).parents[2]
    for doc in ("README.md", "docs/statistics.md"):
        assert f"{shown}" in (docs / doc).read_text("utf-8"), doc
    curve = human_verbosity_curve(t, boot=Resampling(n_boot=200))
    x = (la - lb) / lb
    edges = bin_edges()
    b = pd.cut(x.replace(np.inf, 99.0), edges, right=False)
    want = (2 * t["human"] - 1).groupby(b, observed=True).agg(["size", "mean"])
    assert curve["n"].tolist() == want["size"].tolist()
    assert curve["mean"].to_numpy() == pytest.approx(want["mean"].to_numpy(), abs=1e-12)


def test_the_experts_evenly_split_votes_are_named_and_counted_as_such(shared_data: Path) -> None:
    """On mt-bench-human a label is the share of several expert votes: 0.5 is a tie or
    a 1-1 split, and the humans' length baseline says so and counts them (pandas' count
    of the labels 0.5 on pairs of unequal length); a table of single votes (the same
    labels, ``human_votes`` 1) keeps "human ties"."""
    from recuse.data import load
    from recuse.metrics.verbosity import human_prefers_longer
    from recuse.roster import Roster

    t = load("mt-bench-human", data_dir=shared_data, roster=Roster.builtin())
    tied = (t["human"] == 0.5) & (t["len_a"] != t["len_b"])
    assert int((tied & (t["human_votes"] > 1)).sum()) > 0
    r = human_prefers_longer(t, boot=Resampling(n_boot=50))
    assert f"tied or evenly split human votes left out ({int(tied.sum()):,});" in r.method
    assert "human ties" not in r.method
    one = human_prefers_longer(t.assign(human_votes=1), boot=Resampling(n_boot=50))
    assert f"; human ties left out ({int(tied.sum()):,});" in one.method


def test_the_prefer_longer_gap_names_split_votes_where_labels_are_shares() -> None:
    """The prefer-longer gap and Eq. 6 say which labels they left out: "human ties"
    where every 0.5 is one vote, "tied or evenly split human votes" where one 0.5 is the
    share of two votes (one each way)."""
    from recuse.metrics.verbosity import prefer_longer_gap

    t = table(HAND)
    votes = np.where(t["human"] == 0.5, 2, 1)
    assert (t["human"] == 0.5).any()
    for fn in (prefer_longer_gap, verbosity_bias):
        single = fn(t.assign(human_votes=1), boot=Resampling(n_boot=50), min_n=2)
        split = fn(t.assign(human_votes=votes), boot=Resampling(n_boot=50), min_n=2)
        assert "human ties left out" in single.method
        assert "tied or evenly split human votes left out" in split.method
        assert "human ties" not in split.method
        halves = fn(t.assign(human_votes=votes), human_ties="split", min_n=2,
                    boot=Resampling(n_boot=50))  # fmt: skip
        assert "tied or evenly split human votes count ½" in halves.method


def _second_rater(n: int, seed: int) -> pd.DataFrame:
    """Pairs whose longer answer is the better one on average (quality gap ``log(len_a /
    len_b) + noise``), the humans' label and the judge's pick two independent draws of
    one quality model, ``P(a) = expit(2 · gap)``: a judge with no length term at all,
    exchangeable with the humans."""
    rng = np.random.default_rng(seed)
    la = np.round(rng.lognormal(np.log(120), 0.6, n)) + 1
    lb = np.round(rng.lognormal(np.log(120), 0.6, n)) + 1
    p = 1 / (1 + np.exp(-2 * (np.log(la / lb) + rng.normal(0, 1, n))))
    human = (rng.random(n) < p).astype(float)
    pick = (rng.random(n) < p).astype(float)
    return validate_pairs(
        pd.DataFrame({
            "item_id": [f"i{i}" for i in range(n)], "prompt_id": [f"p{i}" for i in range(n)],
            "model_a": None, "model_b": None, "judge": "j", "human": human,
            "p_a_first": pick, "p_a_second": pick, "p_a": NAN, "len_a": la, "len_b": lb,
        })
    )  # fmt: skip


def _recall_gap_by_hand(t: pd.DataFrame) -> float:
    longer_a = (t["len_a"] > t["len_b"]).to_numpy()
    keep = (t["len_a"] != t["len_b"]).to_numpy()
    h = np.where(longer_a, t["human"], 1 - t["human"])[keep]
    v = np.where(longer_a, t["p_a_first"], 1 - t["p_a_first"])[keep]
    return float(v[h == 1].mean() - (1 - v[h == 0]).mean())


def test_eq6_of_a_judge_with_no_length_preference_is_not_0_and_its_words_say_so() -> None:
    """Planted: a judge drawn like the humans, no length term, on pairs whose longer
    answer is better on average (the humans pick it in 68%). Its prefer-longer gap is 0
    (judge and humans exchangeable); Eq. 6 is +0.21 (a 400,000-pair table, by hand):
    the pairs whose human chose the shorter answer are the close calls. The estimate
    finds that value, and the result's method says that 0 is not this judge's value
    (it said "Positive = the judge favours verbose answers beyond the human labels",
    in the module's words, and nothing in the method)."""
    from recuse.metrics.verbosity import EQ6_NOT_ZERO, prefer_longer_gap

    population = _recall_gap_by_hand(_second_rater(400_000, seed=99))
    assert 0.19 < population < 0.23
    t = _second_rater(3_000, seed=1)
    eq6 = verbosity_bias(t, **FAST)
    assert eq6.estimate == pytest.approx(_recall_gap_by_hand(t))
    assert abs(eq6.estimate - population) < 0.06  # 3 SE of a 3,000-pair table (0.02)
    assert eq6.ci_low > 0.1  # read as a bias for longer answers, by the number alone
    gap = prefer_longer_gap(t, **FAST)
    assert gap.ci_low < 0 < gap.ci_high
    assert EQ6_NOT_ZERO in eq6.method
    assert "no length preference" in EQ6_NOT_ZERO
    assert EQ6_NOT_ZERO in verbosity_bias(t, kind="absolute", **FAST).method


def test_the_gap_of_a_judge_whose_errors_ignore_length_is_not_0_and_its_words_say_so() -> None:
    """Planted (:func:`simulate_pairs`): a judge with no verbosity term, right on 60% of
    pairs whatever their lengths, where the humans choose the longer answer of 65%.
    Eq. 6 is 0 (its errors are as frequent on either side); the prefer-longer gap is
    -(2·0.65 - 1)·(1 - 0.6) = -0.12, the judge's share of longer picks pulled toward
    half. The gap's interval finds it and excludes 0, and its method says that its 0 is
    not this judge's (the analysis said "0 = no bias", the method nothing)."""
    from recuse.metrics.verbosity import GAP_NOT_ZERO, prefer_longer_gap
    from recuse.simulate.pairs import PlantedBias

    sim = simulate_pairs(judges={"gpt-4": PlantedBias(accuracy=0.6)}, n_prompts=300, seed=0)
    truth = sim.true_value("verbosity_longer_gap", "gpt-4")
    assert truth == pytest.approx(-(2 * 0.65 - 1) * (1 - 0.6))
    assert sim.true_value("verbosity_bias", "gpt-4") == 0.0
    gap = prefer_longer_gap(sim.pairs, **FAST)
    assert gap.ci_low <= truth <= gap.ci_high < 0
    eq6 = verbosity_bias(sim.pairs, **FAST)
    assert eq6.ci_low <= 0 <= eq6.ci_high
    assert GAP_NOT_ZERO in gap.method
    assert "-(2·P(human picks longer) - 1)·(1 - its accuracy)" in GAP_NOT_ZERO
