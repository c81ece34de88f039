"""Replaying recorded judge replies (LLMBar, JudgeBench, AlpacaEval, tables) through our parser.

The reference for each real file is what the file's own parser recorded (LLMBar
``winner``, JudgeBench ``decision``, AlpacaEval ``preference``), read here by the
dataset readers in ``recuse.data`` — a path independent of the replayed text.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judging.helpers import FakeBackend, fake_pairs
from recuse.cli import main
from recuse.data.alpaca_eval import read_annotations
from recuse.data.judgebench import read_judgebench
from recuse.data.llmbar import read_llmbar_mtbench
from recuse.data.recorded import alpaca_switched, read_recording
from recuse.errors import InputError
from recuse.judging import PairwiseProtocol, Runner, RunSummary, Store
from recuse.judging.backends.replay import Recording
from recuse.judging.protocols import (
    ALPACA_RANKING,
    ALPACA_TOKENS,
    ARENA_HARD,
    BRACKETS,
    LLMBAR,
    parse_verdict,
    score_distribution,
)
from recuse.judging.replay import UpstreamAgreement, compare_upstream, replay
from recuse.roster import Roster

LLMBAR_GPT4 = "llmbar/Dataset/Processed/MT-Bench/evaluators/GPT-4/Vanilla_NoRules/result.json"
JB = "judgebench/outputs/dataset=judgebench,response_model={},judge_name={},judge_model={}.jsonl"
JB_O1 = JB.format("gpt-4o-2024-05-13", "arena_hard", "o1-mini-2024-09-12")
JB_HAIKU = JB.format("claude-3-5-sonnet-20240620", "arena_hard", "claude-3-haiku-20240307")
AE_WEIGHTED = (
    "alpaca_eval/results/gpt-3.5-turbo-1106/weighted_alpaca_eval_gpt4_turbo/annotations.json"
)
AE_RANKING = "alpaca_eval/results/gpt4_0314/alpaca_eval_gpt4/annotations.json"


@dataclasses.dataclass(frozen=True)
class Replayed:
    table: pd.DataFrame  # exported pairs, indexed by item_id
    recording: Recording
    summary: RunSummary
    agreement: UpstreamAgreement
    rows: pd.DataFrame  # stored judgments


def _replayed(path: Path, tmp_path: Path) -> Replayed:
    rec = read_recording(path)
    tmp_path.mkdir(parents=True, exist_ok=True)
    with Store(tmp_path / "replay.db") as store:
        summary = replay(rec, store)
        agreement = compare_upstream(rec, store)
        table = store.export_pairs().set_index("item_id")
        rows = store.judgments()
    return Replayed(table, rec, summary, agreement, rows)


# --- formats, by hand --------------------------------------------------------------------


def test_formats_read_their_own_marks() -> None:
    assert parse_verdict("A is fine [[B]] but [[A]]") == "A"  # default: last
    # LLMBar: at the start of the reply or of a line; (a) wins over (b)
    assert parse_verdict("Output (b)", LLMBAR) == "B"
    assert parse_verdict("Output (b)\n Output (a)", LLMBAR) == "A"
    assert parse_verdict("I prefer Output (a)", LLMBAR) is None
    assert parse_verdict("", LLMBAR) is None
    # Arena-Hard: exactly one distinct label, strength kept in the label
    assert ARENA_HARD.read("... [[B>>A]]") == ("B", "B>>A")
    assert ARENA_HARD.read("[[A=B]] and again [[A=B]]") == ("C", "A=B")
    assert ARENA_HARD.read("[[A>>B]] ... [[A>B]]") == (None, None)
    assert ARENA_HARD.read("[[A<B]]") == (None, None)  # not a label of the format
    # AlpacaEval 1 ranking (model_1 = shown first)
    ranking = "[\n    {'model': 'model_2', 'rank': 1},\n    {'model': 'model_1', 'rank': 2}\n]"
    assert parse_verdict(ranking, ALPACA_RANKING) == "B"
    assert parse_verdict("[{'model': 'model_1', 'rank': 2}]", ALPACA_RANKING) is None
    # AlpacaEval 2: one case-sensitive token
    assert parse_verdict("m", ALPACA_TOKENS) == "A" and parse_verdict("M", ALPACA_TOKENS) == "B"
    assert parse_verdict("Neither", ALPACA_TOKENS) is None


def test_eq3_with_exact_tokens_is_p_m_over_p_m_plus_p_M() -> None:
    dist = {"m": math.log(0.6), "M": math.log(0.2), '"M': math.log(0.1), "The": math.log(0.1)}
    s = score_distribution(dist, fmt=ALPACA_TOKENS)
    assert s.status == "ok" and s.p_slot_a == pytest.approx(0.75) and s.mass == pytest.approx(0.8)
    # the bracket format reads the same tokens differently: no A/B mass at all
    assert score_distribution(dist, fmt=BRACKETS).status == "unparsed"


def test_live_judges_keep_the_bracket_format(tmp_path: Path) -> None:
    protocol = PairwiseProtocol(mode="explain", verdict=LLMBAR)
    assert protocol.key_params()["verdict_format"] == "llmbar"
    assert "verdict_format" not in PairwiseProtocol(mode="explain").key_params()
    with Store(tmp_path / "s.db") as store, pytest.raises(InputError, match="recorded outputs"):
        Runner(FakeBackend(), store, progress=False).pairwise(pd.DataFrame(fake_pairs(2)), protocol)


# --- real files ----------------------------------------------------------------------------


def test_llmbar_gpt4_mt_bench_reproduces_every_recorded_winner(
    shared_data: Path, tmp_path: Path
) -> None:
    r = _replayed(shared_data / LLMBAR_GPT4, tmp_path)
    table = r.table
    assert (r.summary.ok, r.summary.unparsed, r.summary.failed) == (400, 0, 0)
    assert (r.agreement.agree, r.agreement.compared) == (400, 400)
    # independent path: the dataset reader maps the recorded `winner` fields
    ref = read_llmbar_mtbench(shared_data / "llmbar", Roster.load())
    ref = ref[ref["judge"] == "gpt-4"].set_index("item_id").loc[table.index]
    for col in ("p_a_first", "p_a_second", "human", "prompt_id"):
        pd.testing.assert_series_equal(table[col], ref[col], check_names=False)
    assert table["model_a"].fillna("?").equals(ref["model_a"].fillna("?"))
    assert set(r.rows["label"]) == {"a", "b"}  # the mark as written


def test_judgebench_arena_hard_reproduces_every_recorded_decision(
    shared_data: Path, tmp_path: Path
) -> None:
    ref = read_judgebench(shared_data / "judgebench", Roster.load()).set_index("item_id")
    counts = {}
    for name, file, judge in (
        ("o1", JB_O1, "o1-mini-2024-09-12"),
        ("haiku", JB_HAIKU, "claude-3-haiku-20240307"),
    ):
        r = _replayed(shared_data / file, tmp_path / name)
        table = r.table
        assert r.agreement.agree == r.agreement.compared == r.summary.total
        mine = ref[ref["judge"] == judge].loc[table.index]
        for order in ("first", "second"):
            pd.testing.assert_series_equal(
                table[f"p_a_{order}"], mine[f"p_a_{order}"], check_names=False
            )
            assert (table[f"status_{order}"] == mine[f"status_{order}"]).all()
        counts[name] = (r.summary.ok, r.summary.unparsed)
        assert {"A>>B", "A>B", "A=B", "B>A", "B>>A"} <= set(r.rows["label"].dropna())
    # 350 + 270 pairs in both orders; haiku wrote two different verdicts 13 times
    assert counts == {"o1": (700, 0), "haiku": (527, 13)}


def test_comparison_can_fail_taking_the_last_verdict_breaks_13(
    shared_data: Path, tmp_path: Path
) -> None:
    rec = read_recording(shared_data / JB_HAIKU)
    last = dataclasses.replace(ARENA_HARD, name="arena-hard-last", pick="last")
    with Store(tmp_path / "s.db") as store:
        summary = replay(dataclasses.replace(rec, verdict=last), store)
        agreement = compare_upstream(rec, store)
    assert summary.unparsed == 0
    assert agreement.compared - agreement.agree == 13
    assert all(math.isnan(theirs) for *_, theirs in agreement.disagreements)


def test_alpaca_eval_2_log_probs_reproduce_the_continuous_preference(
    shared_data: Path, tmp_path: Path
) -> None:
    path = shared_data / AE_WEIGHTED
    r = _replayed(path, tmp_path)
    table = r.table
    assert r.recording.verdict is ALPACA_TOKENS and r.recording.judge == "gpt-4-1106-preview"
    assert (r.summary.ok, r.summary.unparsed, r.summary.failed) == (801, 0, 4)
    assert r.summary.failures == {"no raw_completion recorded": 4}
    assert r.agreement.agree == r.agreement.compared == 801
    # each pair was shown once, in the order AlpacaEval's seeded switch drew
    ref = read_annotations(path, Roster.load()).set_index("item_id").loc[table.index]
    shown = table["p_a_first"].where(table["status_first"] == "ok", table["p_a_second"])
    ok = shown.notna()
    assert ok.sum() == 801
    np.testing.assert_allclose(shown[ok], ref["p_a"][ok], atol=1e-6)
    assert 0 < (table["status_second"] == "ok").sum() < 801  # both orders occur
    assert not np.isin(shown[ok].round(6), [0.0, 0.5, 1.0]).all()  # continuous


def test_alpaca_eval_1_rankings_and_the_seeded_switch(shared_data: Path, tmp_path: Path) -> None:
    r = _replayed(shared_data / AE_RANKING, tmp_path)
    assert r.recording.verdict is ALPACA_RANKING
    assert (r.summary.ok, r.summary.failed) == (763, 42) and r.agreement.agree == 763
    assert r.summary.unparsed == 0 and r.agreement.compared == 763
    # the switch is a fixed function of the instruction text
    assert alpaca_switched("x") == alpaca_switched("x")
    draws = [alpaca_switched(f"instruction {k}") for k in range(400)]
    assert 150 < sum(draws) < 250


def _ae1_ranking(*entries: object) -> str:
    """An AlpacaEval 1 ranking as upstream's judge writes it: a Python list literal."""
    return repr(list(entries))


def test_alpaca_eval_1_rankings_are_read_by_model_1_and_model_2() -> None:
    one, two = {"model": "model_1", "rank": 1}, {"model": "model_2", "rank": 2}
    assert parse_verdict(_ae1_ranking(one, two), ALPACA_RANKING) == "A"
    assert (
        parse_verdict(_ae1_ranking({**two, "rank": 1.0}, {**one, "rank": 2.0}), ALPACA_RANKING)
        == "B"
    )
    # the rank-2 entry first, double quotes, upstream's layout over several lines
    assert parse_verdict('[{"model": "model_1", "rank": 2}, {"model": "model_2", "rank": 1}]',
                         ALPACA_RANKING) == "B"  # fmt: skip
    pretty = "[\n    {'model': 'model_2', 'rank': 1},\n    {'model': 'model_1', 'rank': 2}\n]"
    assert parse_verdict(pretty, ALPACA_RANKING) == "B"


@pytest.mark.parametrize(
    "reply",
    [
        # each held a mark "'model': 'model_1|2', 'rank': 1" the old pattern read
        _ae1_ranking({"model": "model_1", "rank": 1.5}, {"model": "model_2", "rank": 2}),
        _ae1_ranking({"model": "model_2", "rank": 1}, {"model": "model_1", "rank": 1.5}),
        _ae1_ranking(
            {"model": "model_1", "rank": 1},
            {"model": "model_2", "rank": 2},
            {"model": "model_3", "rank": 3},
        ),
        _ae1_ranking({"model": "model_1", "rank": 1}),  # model_2 missing
        _ae1_ranking({"model": "model_1", "rank": 1}, {"model": "model_1", "rank": 2}),  # twice
        _ae1_ranking({"model": "model_1"}, {"model": "model_2", "rank": 1}),  # rank missing
        _ae1_ranking({"model": "model_1", "rank": "2"}, {"model": "model_2", "rank": 1}),
        _ae1_ranking({"model": "model_1", "rank": 3}, {"model": "model_2", "rank": 1}),
        _ae1_ranking({"model": "model_1", "rank": 0}, {"model": "model_2", "rank": 1}),
        _ae1_ranking({"model": "model_1", "rank": 1e16}, {"model": "model_2", "rank": 2}),
        _ae1_ranking({"model": "model_1", "rank": 1, "why": "x"}, {"model": "model_2", "rank": 2}),
        _ae1_ranking([{"model": "model_1", "rank": 1}], [{"model": "model_2", "rank": 2}]),
        "{'model': 'model_1', 'rank': 1}",  # an object, not a list
        "[{'model': 'model_1', 'rank': 1}, {'model': 'model_2', 'ra",  # truncated
        "I rank [{'model': 'model_1', 'rank': 1}, {'model': 'model_2', 'rank': 2}]",  # prose
        "[{'model': 'model_1', 'rank': 1}, {'model': 'model_2', 'rank': 2}] (model_1 is better)",
        _ae1_ranking({"model": "model_2", "rank": 1}, *[{"model": "model_1", "rank": 2}] * 20_000),
        # unparsed before too: ties, both at 1.5, strings as ranks, other names
        _ae1_ranking({"model": "model_1", "rank": 1}, {"model": "model_2", "rank": 1}),
        _ae1_ranking({"model": "model_1", "rank": 1.5}, {"model": "model_2", "rank": 1.5}),
        _ae1_ranking({"model": "model_1", "rank": "1"}, {"model": "model_2", "rank": "2"}),
        _ae1_ranking({"model": "m", "rank": 1}, {"model": "M", "rank": 2}),
        "None",
        "",
    ],
    ids=lambda reply: reply[:60] if len(reply) < 200 else f"{len(reply)} characters",
)
def test_alpaca_eval_1_rankings_other_than_model_1_and_2_ranked_1_and_2_are_unparsed(
    reply: str,
) -> None:
    """Only a list of the two entries model_1 and model_2, ranked 1 and 2, is read (as
    upstream's ranking_parser evaluates the whole reply and wants a rank in 1, 2): the
    old pattern read a "'model': 'model_1', 'rank': 1" mark anywhere, so rank 1.5 was
    rank 1 and prose or a third model around a mark was a verdict."""
    assert parse_verdict(reply, ALPACA_RANKING) is None


def test_alpaca_eval_1_rankings_of_gpt_3_5_turbo_1106_agree_with_upstream(
    shared_data: Path, tmp_path: Path
) -> None:
    """The other real 805-row AlpacaEval 1 file with rankings: 786 read, every one as
    upstream's preference; 19 replies not recorded (null)."""
    path = shared_data / "alpaca_eval/results/gpt-3.5-turbo-1106/alpaca_eval_gpt4/annotations.json"
    r = _replayed(path, tmp_path)
    assert r.recording.verdict is ALPACA_RANKING
    assert (r.summary.ok, r.summary.unparsed, r.summary.failed) == (786, 0, 19)
    assert (r.agreement.agree, r.agreement.compared) == (786, 786)


# --- a table of replies, through the CLI ---------------------------------------------------


def _reply_table(tmp_path: Path) -> Path:
    pairs = pd.DataFrame(fake_pairs(3))
    rows = []
    texts = {
        ("i0", "first"): "A is better. [[A]]",
        ("i0", "second"): "Second is better. [[B]]",  # a wins in both orders
        ("i1", "first"): "Both fine. [[C]]",
        ("i1", "second"): "I cannot decide.",  # breaks the format
        ("i2", "first"): "[[B]]",
        ("i2", "second"): None,  # no reply in the file
    }
    for r in pairs.to_dict("records"):
        for order in ("first", "second"):
            rows.append({**r, "order": order, "text": texts[(r["item_id"], order)]})
    path = tmp_path / "replies.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_cli_replays_a_table_and_exports_pairs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _reply_table(tmp_path)
    store = tmp_path / "s.db"
    args = ["judge", "replay", str(src), "--out", str(store), "--judge-id", "gpt-4"]
    assert main([*args, "--verdict-format", "brackets"]) == 0
    out = capsys.readouterr().out
    assert "6 judgments: 0 already stored, 4 ok, 1 unparsed, 1 failed" in out
    assert "failed x1: empty text cell" in out
    assert main([*args, "--verdict-format", "brackets"]) == 0  # resumes
    assert "5 already stored" in capsys.readouterr().out
    csv = tmp_path / "pairs.csv"
    assert main(["judge", "export", str(store), "--out", str(csv)]) == 0
    t = pd.read_csv(csv).set_index("item_id")
    assert t.loc["i0", ["p_a_first", "p_a_second", "p_a"]].tolist() == [1.0, 1.0, 1.0]
    assert t.loc["i1", "p_a_first"] == 0.5 and t.loc["i1", "status_second"] == "unparsed"
    assert math.isnan(t.loc["i1", "p_a_second"])
    assert t.loc["i2", "status_second"] == "failed" and t.loc["i2", "p_a_first"] == 0.0
    assert t.loc["i0", "model_a"] == "gpt-4" and t.loc["i0", "human"] == 0.0


def test_a_reply_table_with_two_replies_or_two_texts_for_one_order_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second reply for one item and order, or another answer text in an item's
    other row: one row of each was kept, the other left out, with nothing said."""
    rows = pd.read_csv(_reply_table(tmp_path))
    args = ["--out", str(tmp_path / "s.db"), "--judge-id", "gpt-4", "--verdict-format",
            "brackets"]  # fmt: skip
    for name, table, said in (
        ("dup.csv", pd.concat([rows, rows.iloc[[2]].assign(text="[[A]]")]),
         "line 8 (data row 7): a second reply for item 'i1', order 'first'"),
        ("texts.csv", rows.assign(response_b=rows["response_b"].where(rows.index != 1, "other")),
         "line 3 (data row 2), column 'response_b': item 'i0' has another response_b"),
    ):  # fmt: skip
        table.to_csv(tmp_path / name, index=False)
        assert main(["judge", "replay", str(tmp_path / name), *args]) == 2
        assert said in capsys.readouterr().err
    assert not (tmp_path / "s.db").exists()
    # one prompt written by two tools (CRLF in one row, a trailing newline) is one text,
    # as in a pairs table: read, and the item's first row's texts kept
    crlf = rows["prompt"].where(rows.index != 1, rows["prompt"].str.replace("\n", "\r\n") + "\n")
    rows.assign(prompt=crlf).to_csv(tmp_path / "crlf.csv", index=False)
    assert main(["judge", "replay", str(tmp_path / "crlf.csv"), *args]) == 0


def test_cli_replays_an_upstream_file_and_prints_agreement(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["judge", "replay", str(shared_data / LLMBAR_GPT4), "-o", str(tmp_path / "s.db")])
    assert code == 0
    out = capsys.readouterr().out
    assert "gpt-4 (llmbar format): 400 judgments" in out
    assert "agreement with the file's own parser: 400 of 400" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["{table}"], "needs its verdict format"),
        (["{table}", "--verdict-format", "xml"], "unknown verdict format"),
        (["{table}", "--source", "csv"], "--source must be"),
        (["{missing}"], "no such file"),
        (
            [
                "{shared}/"
                + JB.format("gpt-4o-2024-05-13", "reward_model", "internlm_internlm2-7b-reward")
            ],
            "hold no replies",
        ),
    ],
)
def test_cli_replay_bad_input_is_one_line_exit_2(
    argv: list[str],
    message: str,
    tmp_path: Path,
    shared_data: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    table = _reply_table(tmp_path)
    subs = {"table": table, "missing": tmp_path / "nope.csv", "shared": shared_data}
    args = [a.format(**subs) for a in argv]
    assert main(["judge", "replay", *args, "--out", str(tmp_path / "s.db")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


# --- AlpacaEval 2's function-call annotators (real excerpts, Apache-2.0) ------------------

AE_RESULTS = Path(__file__).parents[1] / "data/importers/upstream/alpaca_eval/results"
AE_FN = AE_RESULTS / "cohere"


def test_function_call_rankings_are_read_by_their_m_and_m_marks() -> None:
    from recuse.verdict_parsing import ALPACA_FN_RANKING as FN

    first = '[{"model": "m", "rank": 1}, {"model": "M", "rank": 2}]'
    assert parse_verdict(first, FN) == "A"
    assert parse_verdict('[{"model": "M", "rank": 1.0}, {"model": "m", "rank": 2.0}]', FN) == "B"
    assert parse_verdict('[{"model": "m", "rank": 1}, {"model": "M", "rank": 1}]', FN) is None
    assert parse_verdict('[{"model": "M", "rank": 10}, {"model": "m", "rank": 2}]', FN) is None
    assert parse_verdict("[{'model': 'M', 'rank': 1}, {'model': 'm', 'rank': 2}]", FN) == "B"
    # the rank-2 entry listed first, and the call's own indented layout
    assert parse_verdict('[{"model": "M", "rank": 2}, {"model": "m", "rank": 1}]', FN) == "A"
    pretty = '[\n  {\n    "model": "M",\n    "rank": 1\n  },\n  {"model": "m", "rank": 2}\n]'
    assert parse_verdict(pretty, FN) == "B"
    # the call's arguments as a whole, as a table of replies may keep them
    assert parse_verdict('{"ordered_models": ' + first + "}", FN) == "A"


def _ranking(*entries: object) -> str:
    import json

    return json.dumps(list(entries), sort_keys=True)


@pytest.mark.parametrize(
    "reply",
    [
        # each held a mark '"model": "m"|"M", "rank": 1' the old pattern read as a verdict
        _ranking({"model": "m", "rank": 1}, {"model": "M", "rank": 2}, {"model": "x", "rank": 3}),
        _ranking({"model": "m", "rank": 1}),  # M missing
        _ranking({"model": "m", "rank": 1}, {"model": "m", "rank": 2}),  # m twice
        _ranking({"model": "m"}, {"model": "M", "rank": 1}),  # m's rank missing
        _ranking({"model": "m", "rank": "2"}, {"model": "M", "rank": 1}),  # a rank as text
        _ranking({"model": "m", "rank": 3}, {"model": "M", "rank": 1}),  # outside 1..2
        _ranking({"model": "m", "rank": 0}, {"model": "M", "rank": 1}),
        _ranking({"model": "m", "rank": 1e16}, {"model": "M", "rank": 2}),  # '1e+16'
        _ranking(
            {"model": "M", "rank": 2, "why": "{'model': 'm', 'rank': 1}"}, {"model": "m", "rank": 2}
        ),
        _ranking([{"model": "m", "rank": 1}], [{"model": "M", "rank": 2}]),  # nested
        '{"model": "m", "rank": 1}',  # an object, not a list
        '[{"model": "m", "rank": 1}, {"model": "M", "ra',  # truncated
        "I rank {'model': 'm', 'rank': 1} and {'model': 'M', 'rank': 2}",  # prose around
        _ranking({"model": "M", "rank": 1}, *[{"model": "m", "rank": 2}] * 20_000),  # huge
        # unparsed before too: ties, strings as ranks, other names
        _ranking({"model": "m", "rank": 2}, {"model": "M", "rank": 2}),
        _ranking({"model": "m", "rank": "1"}, {"model": "M", "rank": "2"}),
        _ranking({"model": "model_1", "rank": 1}, {"model": "model_2", "rank": 2}),
        "null",
        "",
        # the call's arguments: unclosed, closed twice, or with another field
        '{"ordered_models": [{"model": "m", "rank": 1}, {"model": "M", "rank": 2}]',
        '[{"model": "m", "rank": 1}, {"model": "M", "rank": 2}]}',
        '{"ordered_models": [{"model": "m", "rank": 1}, {"model": "M", "rank": 2}], "x": 1}',
    ],
    ids=lambda reply: reply[:60] if len(reply) < 200 else f"{len(reply)} characters",
)
def test_function_call_rankings_other_than_m_and_m_ranked_1_and_2_are_unparsed(
    reply: str,
) -> None:
    """Only a list of the two entries m and M, ranked 1 and 2, is read: a mark
    '"model": "m", "rank": 1' inside anything else is not a verdict (upstream's parser
    reads m's rank from a list, and refuses a rank outside 1 and 2)."""
    from recuse.verdict_parsing import ALPACA_FN_RANKING as FN

    assert parse_verdict(reply, FN) is None


@pytest.mark.parametrize(
    ("model", "annotator", "ok", "unparsed"),
    [
        ("cohere", "alpaca_eval_gpt4_turbo_fn", 12, 0),
        ("cohere", "alpaca_eval_cot_gpt4_turbo_fn", 12, 1),
        # the call's arguments kept as JSON text (as in Ein-70B-v0.1 and Samba-CoE-v0.2)
        ("Samba-CoE-v0.1", "alpaca_eval_gpt4_turbo_fn", 12, 0),
    ],
)
def test_function_call_annotators_replay_their_recorded_preferences(
    model: str, annotator: str, ok: int, unparsed: int, tmp_path: Path
) -> None:
    """Their raw_completion is the call's {ordered_models: [{model: m/M, rank}]}: read
    as one-token log-probs, every reply replayed as an empty text, all unparsed (0 of 12
    agreeing with the file's own parser). Upstream's preference, worked out here from
    each record by hand (m = the output shown first; AlpacaEval's seeded switch maps the
    shown order back), is what the replay reproduces; the one ranking with both m and
    M at rank 1 (record 13 here, upstream's 215) stays unparsed, where upstream read
    m's rank. Samba-CoE-v0.1's file keeps the arguments as JSON text: read as an
    AlpacaEval 1 ranking (no object among its replies), all 12 were unparsed."""
    import json

    path = AE_RESULTS / model / annotator / "annotations.json"
    with pytest.warns(UserWarning):  # the model is not in the roster
        r = _replayed(path, tmp_path)
    assert r.recording.verdict.name == "alpaca-fn-ranking"
    assert r.recording.judge == "gpt-4-1106-preview"
    assert (r.summary.ok, r.summary.unparsed, r.summary.failed) == (ok, unparsed, 0)
    assert (r.agreement.agree, r.agreement.compared) == (ok, ok + unparsed)
    records = json.loads(path.read_text(encoding="utf-8"))
    hand = {}
    for i, rec in enumerate(records, start=1):
        raw = rec["raw_completion"]
        call = json.loads(raw) if isinstance(raw, str) else raw
        firsts = {o["model"] for o in call["ordered_models"] if o["rank"] == 1}
        if len(firsts) == 1:
            output_1_wins = (firsts == {"m"}) != alpaca_switched(rec["instruction"])
            assert rec["preference"] == (1 if output_1_wins else 2)
            hand[f"alpaca-eval/{model}/{annotator}/{i}"] = 1.0 if output_1_wins else 0.0
    table = r.table
    shown = table["p_a_first"].where(table["status_first"] == "ok", table["p_a_second"])
    assert shown.dropna().to_dict() == hand
    assert len(hand) == ok


def test_annotation_objects_without_a_ranking_or_log_probs_are_refused(tmp_path: Path) -> None:
    import json

    src = AE_FN / "alpaca_eval_gpt4_turbo_fn" / "annotations.json"
    records = json.loads(src.read_text(encoding="utf-8"))[:2]
    for rec in records:
        rec["raw_completion"] = {"finish_reason": "stop", "index": 0}
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    with pytest.warns(UserWarning), pytest.raises(InputError, match="no log-probs, text or"):
        read_recording(path)
    for rec in records:  # a reply's text alone is read (one token m/M)
        rec["raw_completion"] = {"text": "m", "finish_reason": "stop"}
    path.write_text(json.dumps(records), encoding="utf-8")
    with pytest.warns(UserWarning):
        rec_ = read_recording(path)
    assert rec_.verdict is ALPACA_TOKENS and [o.text for o in rec_.outputs] == ["m", "m"]


def test_llmbar_cot_replies_are_refused_not_read_by_their_opening_words(
    shared_data: Path, tmp_path: Path
) -> None:
    """LLMBar's CoT (and Swap) replies open their reasoning with 'Output (a) provides...'
    and end 'Therefore, Output (b) is better.': read as the Vanilla prompts' verdict at
    the start of the reply, GPT-4's CoT replies on LLMBar/Natural agreed with the
    recorded winner on 98 of 200 (the first three records here, upstream bytes: 3 of 6
    replies read A where upstream recorded B)."""
    import json
    import shutil

    real = Path(__file__).parents[1] / "data/importers/upstream/llmbar/Natural/GPT-4/CoT"
    records = json.loads((real / "result.json").read_text(encoding="utf-8"))
    misread = 0
    for rec in records:
        for key, swapped in (("swap = False", False), ("swap = True", True)):
            entry = rec["results"][0][key]
            slot = "A" if (entry["winner"] == "1") != swapped else "B"
            misread += parse_verdict(entry["completion"][0], LLMBAR) != slot
    assert misread == 3
    natural = tmp_path / "Dataset/LLMBar/Natural"
    (natural / "evaluators/GPT-4/CoT").mkdir(parents=True)
    shutil.copy(shared_data / "llmbar/Dataset/LLMBar/Natural/dataset.json", natural)
    shutil.copy(real / "result.json", natural / "evaluators/GPT-4/CoT/result.json")
    with pytest.raises(InputError, match="LLMBar's CoT replies are not replayed") as caught:
        read_recording(natural / "evaluators/GPT-4/CoT/result.json")
    assert "Vanilla_NoRules" in str(caught.value)


@pytest.mark.parametrize("where", ["evaluators", "empty"])
def test_cli_replay_of_a_folder_says_it_is_one_and_names_the_files_in_it(
    where: str, shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: `recuse judge replay FOLDER` said "no such file" of a folder `ls` shows.
    Now it says it is a folder, what replay reads (one recorded file), and the recorded
    files in it: LLMBar's GPT-4 evaluator folder holds one, Vanilla_NoRules/result.json
    (ls of the shared data); an empty folder holds none."""
    folder = shared_data / Path(LLMBAR_GPT4).parents[1] if where == "evaluators" else tmp_path
    store = tmp_path / "s.db"
    assert main(["judge", "replay", str(folder), "--out", str(store)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "a folder, not a file" in err and "replay reads one file" in err, err
    assert "no such file" not in err and "Traceback" not in err
    if where == "evaluators":
        assert "give one of the recorded files in it (Vanilla_NoRules/result.json)" in err, err
    else:
        assert "give the recorded file itself" in err, err
    assert not store.exists()


def test_cli_replay_of_a_folder_whose_look_stopped_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder of many files (a home folder) is looked at up to a cap of files; where
    the cap is reached before a recorded file, the error said "give the recorded file
    itself" as of a folder holding none, though LLMBar's result.json lay further on.
    The cap stood at 3 here: a.csv, b.csv, c.csv, d.csv, then evaluators/GPT-4/result.json
    (the files at the top are looked at first)."""
    from recuse.data import recorded

    monkeypatch.setattr(recorded, "_LOOKED_AT", 3)
    for name in "abcd":
        (tmp_path / f"{name}.csv").write_text("x\n", "utf-8")
    (tmp_path / "evaluators/GPT-4").mkdir(parents=True)
    (tmp_path / "evaluators/GPT-4/result.json").write_text("[]", "utf-8")
    assert main(["judge", "replay", str(tmp_path), "--out", str(tmp_path / "s.db")]) == 2
    err = capsys.readouterr().err.strip()
    assert "give the recorded file itself (none among the first 3 files in it)" in err, err
    monkeypatch.setattr(recorded, "_LOOKED_AT", 6)  # 4 tables, then the recorded file
    assert main(["judge", "replay", str(tmp_path), "--out", str(tmp_path / "s.db")]) == 2
    err = capsys.readouterr().err.strip()
    assert "give one of the recorded files in it (evaluators/GPT-4/result.json)" in err, err
