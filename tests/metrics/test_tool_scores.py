"""Each tool's own headline number, checked against a hand computation from the raw
file (FastChat's show_result rule applied to the raw winners; Arena-Hard's weighted
battles counted by hand and its Bradley–Terry fit redone with statsmodels; AlpacaEval's
win rate as the mean of preference − 1)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from recuse.cli import main
from recuse.data.importers import read_import
from recuse.driver import AuditOptions, audit
from recuse.errors import EstimationError
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.tool_scores import (
    STYLE_FEATURES,
    arena_hard_battles,
    arena_hard_scores,
    arena_hard_style_scores,
    fastchat_results,
)

DATA = Path(__file__).parents[1] / "data" / "importers"
PAIR = DATA / "gpt-4_pair.jsonl"
HAIKU = DATA / "arena-hard-v0.1_claude-3-haiku-20240307.jsonl"
GPT4 = DATA / "arena-hard-v0.1_gpt-4-0613.jsonl"
AE1 = DATA / "upstream" / "alpaca_eval" / "results" / "alpaca-7b" / "alpaca_eval_gpt4"
AE2 = DATA / "upstream" / "alpaca_eval" / "results" / "claude" / "weighted_alpaca_eval_gpt4_turbo"
FAST = AuditOptions(n_boot=100, only=("leaderboard",), robustness=())


def test_fastchat_win_tie_loss_as_its_result_script_counts_them() -> None:
    records = [json.loads(line) for line in PAIR.read_text("utf-8").splitlines()]
    tally: dict[str, list[int]] = {}  # model -> [win, loss, tie], FastChat's rule on raw winners
    for r in records:
        if "error" in (r["g1_winner"], r["g2_winner"]):
            continue
        m1, m2 = r["model_1"], r["model_2"]
        for m in (m1, m2):
            tally.setdefault(m, [0, 0, 0])
        if r["g1_winner"] == "tie" or r["g1_winner"] != r["g2_winner"]:
            tally[m1][2] += 1
            tally[m2][2] += 1
        else:
            win, lose = (m1, m2) if r["g1_winner"] == "model_1" else (m2, m1)
            tally[win][0] += 1
            tally[lose][1] += 1
    frame = read_import(PAIR, "fastchat-pair").frame
    got = fastchat_results(frame, judge="gpt-4").set_index("model")
    roster_ids = {"vicuna-13b-v1.2": "vicuna-13b"}
    want = {roster_ids.get(m, m): v for m, v in tally.items()}
    assert {m: [r.win, r.loss, r.tie] for m, r in got.iterrows()} == want
    assert want == {"gpt-4": [1, 0, 1], "vicuna-13b": [0, 1, 2], "claude-v1": [0, 0, 1],
                    "gpt-3.5-turbo": [0, 0, 2]}  # fmt: skip
    assert got.loc["gpt-4", "win_rate_adjusted"] == pytest.approx(100 * 1.5 / 2)
    assert got.loc["vicuna-13b", "loss_rate"] == pytest.approx(100 / 3)
    assert got.index[0] == "gpt-4"  # sorted by the adjusted win rate, as FastChat prints


def test_fastchat_with_a_fixed_baseline_leaves_the_baseline_out() -> None:
    frame = pd.DataFrame(
        {
            "judge": "j", "model_a": ["m1", "m2", "m3", "base"],
            "model_b": ["base", "base", "base", "m1"],
            "p_a_first": [1.0, 0.0, 1.0, 0.5], "p_a_second": [1.0, 0.0, 0.0, 0.5],
        }
    )  # fmt: skip
    got = fastchat_results(frame, judge="j").set_index("model")
    assert "base" not in got.index and set(got["baseline"]) == {"base"}
    assert got[["win", "loss", "tie"]].to_dict("index") == {
        "m1": {"win": 1, "loss": 0, "tie": 1},
        "m2": {"win": 0, "loss": 1, "tie": 0},
        "m3": {"win": 0, "loss": 0, "tie": 1},
    }


def _raw_arena(path: Path) -> tuple[float, float, float]:
    """Weighted wins, ties, losses of the model from the raw games: game 1 shows the
    baseline as A, game 2 the model as A; '>>' counts 3 times; a null game is dropped."""
    won = {"A>>B": (0, 3), "A>B": (0, 1), "B>A": (1, 1), "B>>A": (1, 3), "A<<B": (1, 3),
           "A<B": (1, 1), "B<A": (0, 1), "B<<A": (0, 3)}  # fmt: skip
    w = t = lo = 0.0
    for line in path.read_text("utf-8").splitlines():
        for g, game in enumerate(json.loads(line)["games"]):
            score = game["score"] if game else None
            if score is None:
                continue
            if score in ("A=B", "B=A"):
                t += 1
                continue
            b_wins, weight = won[score]
            model_wins = b_wins == 1 if g == 0 else b_wins == 0
            if model_wins:
                w += weight
            else:
                lo += weight
    return w, t, lo


def test_arena_hard_score_equals_the_weighted_share_and_a_bradley_terry_fit() -> None:
    w, t, lo = _raw_arena(HAIKU)
    assert (w, t, lo) == (8, 1, 8)
    frame = read_import(HAIKU, "arena-hard").frame
    got = arena_hard_scores(frame, judge="gpt-4-1106-preview", boot=Resampling(n_boot=200, seed=1))
    row = got.iloc[0]
    assert row["model"] == "claude-3-haiku-20240307" and row["baseline"] == "gpt-4-0314"
    assert row["score"] == pytest.approx(100 * (w + t / 2) / (w + t + lo))
    assert row["battles"] == w + t + lo and row["games"] == 9
    assert row["score_low"] <= row["score"] <= row["score_high"]
    # two models against one baseline: upstream's joint Bradley–Terry logistic fit (ties
    # as one win each on duplicated battles), redone with statsmodels
    both = pd.concat([frame, read_import(GPT4, "arena-hard").frame], ignore_index=True)
    battles = arena_hard_battles(both, judge="gpt-4-1106-preview")
    models = sorted(battles["model"].unique())
    x = np.column_stack([(battles["model"] == m).to_numpy(float) for m in models])
    y = battles["outcome"].to_numpy(float)
    fit = sm.GLM(y, x, family=sm.families.Binomial(), freq_weights=battles["weight"]).fit()
    bt = {m: 100 / (1 + np.exp(-c)) for m, c in zip(models, fit.params, strict=True)}
    scores = arena_hard_scores(both, judge="gpt-4-1106-preview", boot=Resampling(n_boot=100))
    for r in scores.itertuples():
        assert r.score == pytest.approx(bt[r.model], abs=1e-6)


def test_alpaca_eval_win_rates_and_the_judge_that_wrote_the_baseline() -> None:
    raw = json.loads((AE1 / "annotations.json").read_text("utf-8"))
    prefs = [r["preference"] for r in raw if r["preference"] is not None]
    wins = [0.5 if p in (0, 1.5) else p - 1 for p in prefs]
    report = audit([AE1 / "annotations.json"], options=FAST)
    heads = report.headlines
    line = next(h for h in heads if "annotator gpt-4: alpaca-7b against text-davinci-003" in h)
    assert f"win rate {100 * np.mean(wins):.2f}% [" in line and "length-controlled" in line
    assert not any("wrote the baseline" in h for h in heads)
    # AlpacaEval 2: gpt-4-1106-preview judges every model against its own answers
    own = audit([AE2 / "annotations.json"], options=FAST)
    assert any(
        "the judge gpt-4-1106-preview wrote the baseline gpt-4-1106-preview" in h
        for h in own.headlines
    )
    tables = [t for s in own.sections for t in s.tables if t.name.startswith("alpaca-eval-")]
    assert len(tables) == 1 and tables[0].frame["system"].tolist() == ["claude-v1"]


def test_the_terminal_and_first_screen_print_each_tools_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r"
    args = ["audit", str(HAIKU), "--only", "leaderboard", "--robustness", "none"]
    code = main([*args, "--n-boot", "100", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    line = next(p for p in printed.splitlines() if "Arena-Hard-Auto, judge gpt-4-1106-preview" in p)
    assert "claude-3-haiku-20240307 scores 50.0% [" in line and "against gpt-4-0314" in line
    html = (out / "report.html").read_text("utf-8")
    summary = html[html.index('<section id="summary">') :]
    assert summary.index("claude-3-haiku-20240307 scores 50.0%") < summary.index("</section>")


def test_a_systems_rate_judged_by_itself_says_so(tmp_path: Path) -> None:
    """AlpacaEval's annotator gpt-4 judged gpt-4's own answers (AlpacaEval 1 lists both),
    and its headline read as any other system's: a rate self-preference raises, with
    nothing said. The same annotations with alpaca-7b renamed gpt-4 say it of that
    system; the file as published (alpaca-7b's answers) does not."""
    raw = json.loads((AE1 / "annotations.json").read_text("utf-8"))
    for r in raw:
        r["generator_2"] = "gpt-4"
    (tmp_path / "annotations.json").write_text(json.dumps(raw), "utf-8")
    said = "The judge gpt-4 wrote these answers: this rate is its verdict on its own answers"
    own = audit([tmp_path / "annotations.json"], options=FAST).headlines
    line = next(h for h in own if "annotator gpt-4: gpt-4 against text-davinci-003" in h)
    assert said in line
    other = audit([AE1 / "annotations.json"], options=FAST).headlines
    assert not any("wrote these answers" in h for h in other)


def test_a_systems_rate_judged_by_its_family_says_so(tmp_path: Path) -> None:
    """AlpacaEval warned of self-preference only where the judge's exact model wrote the
    answers: gpt-4-0314 under the annotator gpt-4 and gpt-4-0613 under
    gpt-4-1106-preview read as strangers'. A system of the judge's family in the roster
    now says "same family" (its model line where it shares the judge's, and a baseline of
    the family where it is one), never "own answers", unless --self-scope line counts
    the line as the judge's own."""
    raw = json.loads((AE1 / "annotations.json").read_text("utf-8"))
    for r in raw:
        r["generator_2"] = "gpt4_0314"  # the roster's alias of gpt-4-0314
    (tmp_path / "ae1.json").write_text(json.dumps(raw), "utf-8")
    key = "annotator gpt-4: gpt-4-0314 against text-davinci-003"
    line = next(h for h in audit([tmp_path / "ae1.json"], options=FAST).headlines if key in h)
    assert line.endswith(
        " The judge gpt-4 and gpt-4-0314 are of the same family (gpt) and model line (gpt-4; "
        "--self-scope line counts its answers as the judge's own): this rate is its verdict "
        "on a same-family model's answers against a baseline of the same family "
        "(text-davinci-003), so family preference may favour either side."
    )
    assert "own answers" not in line
    lined = replace(FAST, self_scope="line")
    line = next(h for h in audit([tmp_path / "ae1.json"], options=lined).headlines if key in h)
    assert line.endswith("The judge gpt-4 wrote these answers: this rate is its verdict on its "
                         "own answers, which self-preference raises.")  # fmt: skip
    raw = json.loads((AE2 / "annotations.json").read_text("utf-8"))
    for r in raw:
        r["generator_2"] = "gpt4_0613_concise"
    (tmp_path / "ae2.json").write_text(json.dumps(raw), "utf-8")
    key = "annotator gpt-4-1106-preview: gpt-4-0613 (concise) against gpt-4-1106-preview"
    line = next(h for h in audit([tmp_path / "ae2.json"], options=FAST).headlines if key in h)
    assert line.endswith(
        " The judge gpt-4-1106-preview and gpt-4-0613 are of the same family (gpt): this "
        "rate is its verdict on a same-family model's answers, which family preference raises."
    )
    # a system of another family (alpaca-7b, LLaMA's) is said nothing of in its line
    other = audit([AE1 / "annotations.json"], options=FAST).headlines
    assert not any("same family" in h for h in other if "alpaca-7b against" in h)


def test_a_baseline_of_the_judges_family_is_said_once_for_every_other_system() -> None:
    """AlpacaEval 1: gpt-4 judges every system against text-davinci-003, of its family
    (gpt) in the roster. A system of the family said "same family" in its line; one of
    another family (alpaca-7b, LLaMA's), whose rate family preference lowers, was said
    nothing. A line before the rates says so; none where the judge wrote the baseline
    (AlpacaEval 2: gpt-4-1106-preview, whose own line says it)."""
    lines = audit([AE1 / "annotations.json"], options=FAST).headlines
    said = [h for h in lines if "the baseline text-davinci-003 are of the same family" in h]
    assert said == [
        "annotations.json, AlpacaEval: the judge gpt-4 and the baseline text-davinci-003 are "
        "of the same family (gpt) — a system of another family is judged against a "
        "same-family model's answers, which family preference favours, so it lowers that "
        "system's win rate (a system of the family says so in its line)."
    ]
    assert lines.index(said[0]) < next(i for i, h in enumerate(lines) if "alpaca-7b against" in h)
    other = audit([AE2 / "annotations.json"], options=FAST).headlines
    assert not any("of the same family" in h for h in other)
    assert any("wrote the baseline gpt-4-1106-preview" in h for h in other)


def test_an_arena_hard_score_judged_by_itself_says_so(tmp_path: Path) -> None:
    """Arena-Hard-Auto's judge gpt-4-1106-preview scoring its own answers: the same
    games with claude-3-haiku renamed gpt-4-1106-preview say so in that score's line."""
    rows = [json.loads(line) for line in HAIKU.read_text("utf-8").splitlines() if line]
    for r in rows:
        r["model"] = "gpt-4-1106-preview"
    own = tmp_path / "arena-hard-v0.1_gpt-4-1106-preview.jsonl"
    own.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    heads = audit([own], options=FAST).headlines
    line = next(h for h in heads if "gpt-4-1106-preview scores" in h)
    assert "The judge gpt-4-1106-preview wrote these answers" in line
    assert not any("wrote these answers" in h for h in audit([HAIKU], options=FAST).headlines)


def test_arena_hard_and_fastchat_lines_name_the_judges_family() -> None:
    """Arena-Hard-Auto's judge gpt-4-1106-preview scores every model against gpt-4-0314,
    of its family (gpt) in the roster, and FastChat's judge gpt-4 rated gpt-3.5-turbo:
    AlpacaEval's lines said "same family" there, these said nothing. Each now says it as
    AlpacaEval's do: the baseline once before the scores, a system of the family in its
    line, a system of another family (claude-3-haiku, claude-v1) nothing."""
    kin = (
        "the judge gpt-4-1106-preview and the baseline gpt-4-0314 are of the same family "
        "(gpt) — a system of another family is judged against a same-family model's "
        "answers, which family preference favours, so it lowers that system's win rate (a "
        "system of the family says so in its line)."
    )
    lines = audit([HAIKU], options=FAST).headlines
    said = [h for h in lines if "the baseline gpt-4-0314 are of the same family" in h]
    assert said == [f"{HAIKU.name}, Arena-Hard-Auto: {kin}"]
    haiku = next(i for i, h in enumerate(lines) if "claude-3-haiku-20240307 scores" in h)
    assert lines.index(said[0]) < haiku and "same family" not in lines[haiku]
    line = next(h for h in audit([GPT4], options=FAST).headlines if "gpt-4-0613 in " in h)
    assert line.endswith(
        " The judge gpt-4-1106-preview and gpt-4-0613 are of the same family (gpt): this rate "
        "is its verdict on a same-family model's answers against a baseline of the same "
        "family (gpt-4-0314), so family preference may favour either side."
    )
    lines = audit([PAIR], options=FAST).headlines  # every pair of models: no baseline
    assert not any("the baseline" in h and "same family" in h for h in lines)
    line = next(h for h in lines if "judge gpt-4: gpt-3.5-turbo:" in h)
    assert line.endswith(
        " The judge gpt-4 and gpt-3.5-turbo are of the same family (gpt): this rate is its "
        "verdict on a same-family model's answers, which family preference raises."
    )
    assert not any("same family" in h for h in lines if "judge gpt-4: claude-v1:" in h)


def test_a_fastchat_baseline_of_the_judge_or_its_family_is_said_once(tmp_path: Path) -> None:
    """FastChat's pairwise-baseline records (every model against gpt-3.5-turbo) under
    the judge gpt-4, of its family: said once before the rates, as AlpacaEval's and
    Arena-Hard's are; under the judge gpt-3.5-turbo, that the judge wrote the baseline
    (its 2 records with no error: claude-v1's and vicuna-13b's)."""
    records = [json.loads(line) for line in PAIR.read_text("utf-8").splitlines() if line]
    based = [r for r in records if r["model_2"] == "gpt-3.5-turbo"]
    path = tmp_path / "gpt-4_pair.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in based), "utf-8")
    lines = audit([path], options=FAST).headlines
    said = [h for h in lines if "the baseline gpt-3.5-turbo are of the same family" in h]
    assert len(said) == 1 and said[0].startswith("gpt-4_pair.jsonl, FastChat: the judge gpt-4 ")
    assert lines.index(said[0]) < next(i for i, h in enumerate(lines) if "claude-v1 against" in h)
    for r in based:
        r["judge"] = ["gpt-3.5-turbo", r["judge"][1]]
    path.write_text("".join(json.dumps(r) + "\n" for r in based), "utf-8")
    lines = audit([path], options=FAST).headlines
    assert [h for h in lines if "wrote the baseline" in h] == [
        "gpt-4_pair.jsonl, FastChat: the judge gpt-3.5-turbo wrote the baseline gpt-3.5-turbo "
        "— in all 2 comparisons it judged its own answer against another model's, so every "
        "win rate below is against the judge's own answer (self-preference lowers them)."
    ]


def test_the_tools_tables_say_what_each_column_is() -> None:
    """The FastChat and Arena-Hard-Auto tables of the audit had no column words (which
    share a score is, of what; what a battle counts). Each column now has them, and the
    rows are what they say, counted by hand from the raw files: Arena-Hard's battles are
    the games with a '>>' verdict counted three times, its score (W + T/2) / (W + T + L);
    FastChat's adjusted win rate (win + tie/2) / (win + loss + tie)."""
    w, t, lo = _raw_arena(HAIKU)
    tables = {x.name: x for x in audit([HAIKU], options=FAST).tables}
    (arena,) = [x for name, x in tables.items() if name.startswith("arena-hard-scores")]
    assert set(arena.frame.columns) <= set(arena.columns)
    row = arena.frame.iloc[0]
    assert row["battles"] == w + t + lo and "'>>' verdict 3×" in arena.columns["battles"]
    assert row["score"] == pytest.approx(100 * (w + t / 2) / (w + t + lo))
    tables = {x.name: x for x in audit([PAIR], options=FAST).tables}
    (fast,) = [x for name, x in tables.items() if name.startswith("fastchat-results")]
    assert set(fast.frame.columns) <= set(fast.columns)
    gpt4 = fast.frame.set_index("model").loc["gpt-4"]
    assert (gpt4["win"], gpt4["loss"], gpt4["tie"]) == (1, 0, 1)  # the raw tally above
    assert gpt4["win_rate_adjusted"] == pytest.approx(100 * 1.5 / 2)
    assert "(win + tie / 2) / (win + loss + tie)" in fast.columns["win_rate_adjusted"]


V2 = DATA / "arena-hard-v2.0_qwq-32b.jsonl"


def _v2_battles_by_hand(path: Path, baseline: str, category: str | None = None) -> list[float]:
    """v2.0 show_result.py's load_judgments on the raw lines: a record with a null game or
    a null score is left out whole; game 2 (the model as A) scores its label, game 1 one
    minus its label's score, a '>>' three times (weight 3); ``category``: that
    category's records only (print_leaderboard's filter)."""
    to_score = {"A>B": [1], "A>>B": [1] * 3, "A=B": [0.5], "B>A": [0], "B>>A": [0] * 3}
    out: list[float] = []
    for line in path.read_text("utf-8").splitlines():
        r = json.loads(line)
        g1, g2 = r["games"]
        if r["baseline"] != baseline or None in (g1, g2) or None in (g1["score"], g2["score"]):
            continue
        if category is not None and r["category"] != category:
            continue
        out += to_score[g2["score"]] + [1 - s for s in to_score[g1["score"]]]
    return out


def test_arena_hard_v2_leaves_out_a_record_with_a_null_game_whole() -> None:
    """Arena-Hard-Auto v2.0's show_result.py drops a record when either game is null or
    has no score; v0.1's dropped the game alone. The v2.0 file (built to gen_judgment.py's
    v2.0 writer) holds, against o3-mini, one record with both games (B>A, A>B: the model
    wins twice), one with game 1 null and game 2 A=B, and one with both null: v2.0 scores
    100% from 2 games, where the v0.1 rule counted the tie too, (1 + 1 + ½) / 3."""
    frame = read_import(V2, "arena-hard").frame
    o3 = frame[frame["model_b"] == "o3-mini-2025-01-31"]
    assert set(o3["arena_hard_version"]) == {"v2.0"}
    hand = _v2_battles_by_hand(V2, "o3-mini-2025-01-31")
    assert hand == [1, 1]
    got = arena_hard_scores(o3, judge="gpt-4.1", boot=Resampling(n_boot=200, seed=1)).iloc[0]
    assert got["score"] == pytest.approx(100 * np.mean(hand)) == 100.0
    assert (got["battles"], got["games"]) == (len(hand), 2)
    # the same records read by v0.1's rule (a table that does not say its version)
    old = arena_hard_scores(o3.drop(columns="arena_hard_version"), judge="gpt-4.1").iloc[0]
    assert old["score"] == pytest.approx(100 * 2.5 / 3) and old["games"] == 3
    # a v0.1 file keeps its games with a verdict beside a failed one, as before
    v01 = read_import(HAIKU, "arena-hard").frame
    assert set(v01["arena_hard_version"]) == {"v0.1"}
    assert arena_hard_scores(v01, judge="gpt-4-1106-preview").iloc[0]["games"] == 9


def test_arena_hard_v2_scores_each_category_against_its_own_baseline() -> None:
    """v2.0's show_result.py scores each category apart, against JUDGE_SETTINGS' baseline
    of that category (o3-mini for hard_prompt, coding and math, gemini-2.0-flash for
    creative_writing): the file's judge was refused ("compares with 2 baselines"). Per
    category, the mean of the battles' scores worked out from the raw lines; coding and
    math have no record with both games and give no score."""
    frame = read_import(V2, "arena-hard").frame
    got = arena_hard_scores(frame, judge="gpt-4.1", boot=Resampling(n_boot=100, seed=1))
    hard = _v2_battles_by_hand(V2, "o3-mini-2025-01-31", "hard_prompt")
    creative = _v2_battles_by_hand(V2, "gemini-2.0-flash-001", "creative_writing")
    assert (hard, creative) == ([1, 1], [0, 0, 0, 0])
    rows = got.set_index("category")
    assert list(rows.index) == ["creative_writing", "hard_prompt"]
    assert rows.loc["hard_prompt", "baseline"] == "o3-mini-2025-01-31"
    assert rows.loc["creative_writing", "baseline"] == "gemini-2.0-flash-001"
    assert rows.loc["hard_prompt", "score"] == pytest.approx(100 * np.mean(hard))
    assert rows.loc["creative_writing", "score"] == pytest.approx(100 * np.mean(creative))
    assert rows["battles"].tolist() == [len(creative), len(hard)]
    assert set(rows["model"]) == {"qwq-32b"}
    # one category with two baselines stays refused, saying how to split
    mixed = frame.assign(category="hard_prompt")
    with pytest.raises(EstimationError, match=r"2 baselines in category 'hard_prompt'.*apart"):
        arena_hard_scores(mixed, judge="gpt-4.1")
    # style control is fitted per category: refused over two, with what to do
    style = pd.DataFrame(columns=["model", "prompt_id", *STYLE_FEATURES])
    with pytest.raises(EstimationError, match="style control is fitted per category"):
        arena_hard_style_scores(frame, style, judge="gpt-4.1")


def test_arena_hard_interval_level_follows_the_files_version() -> None:
    """v0.1's show_result.py prints the 2.5-97.5% points of its bootstrap (95%), v2.0's
    the 5-95% points (90%): without a level given, each file's own (was: 95% for both).
    The same battles read as v2.0 give the 90% interval drawn from the same resamples,
    inside the 95% one."""
    v01 = read_import(HAIKU, "arena-hard").frame
    both = v01[v01[["strength_first", "strength_second"]].notna().all(axis=1)]
    v2 = both.assign(arena_hard_version="v2.0")
    cols = ["score", "score_low", "score_high"]
    for table, level, version in ((v2, 0.90, "v2.0"), (both, 0.95, "v0.1")):
        got = arena_hard_scores(table, judge="gpt-4-1106-preview")
        given = arena_hard_scores(table, judge="gpt-4-1106-preview", boot=Resampling(level=level))
        pd.testing.assert_frame_equal(got[cols], given[cols])
        assert got.attrs["level"] == level and got.attrs["arena_hard_version"] == version
    wide = arena_hard_scores(both, judge="gpt-4-1106-preview").iloc[0]
    narrow = arena_hard_scores(v2, judge="gpt-4-1106-preview").iloc[0]
    assert wide["score"] == narrow["score"]
    assert wide["score_low"] <= narrow["score_low"] < narrow["score_high"] <= wide["score_high"]
    assert (wide["score_low"], wide["score_high"]) != (narrow["score_low"], narrow["score_high"])


def test_arena_hard_v2_headlines_name_their_category_and_each_baseline_its_writer(
    tmp_path: Path,
) -> None:
    """With v2.0's categories scored apart, each headline read "qwq-32b scores X%
    against <baseline>" alone: hard_prompt, coding and math share o3-mini, so their
    lines could not be told apart; the table had no words for its category column; and
    the judge-wrote-the-baseline line looked at the first baseline only. Renamed so the
    judge gpt-4.1 is creative_writing's baseline (gemini-2.0-flash-001's games), the
    line names that baseline and counts its 4 games' records, not hard_prompt's."""
    heads = audit([V2], options=FAST)
    lines = [h for h in heads.headlines if "qwq-32b in category" in h]
    assert len(lines) == 2
    assert any("in category hard_prompt scores 100.0%" in h for h in lines)
    assert any("in category creative_writing scores 0.0%" in h for h in lines)
    (table,) = [t for t in heads.tables if t.name.startswith("arena-hard-scores")]
    assert "category" in table.columns and "own baseline" in table.columns["category"]
    text = V2.read_text("utf-8").replace("gemini-2.0-flash-001", "gpt-4.1")
    own = tmp_path / "arena-hard-v2.0_qwq-32b.jsonl"
    own.write_text(text, "utf-8")
    said = [h for h in audit([own], options=FAST).headlines if "wrote the baseline" in h]
    records = [json.loads(line) for line in text.splitlines() if line]
    games = 2 * sum(  # v2.0 keeps a record whose two games both have a score
        r["baseline"] == "gpt-4.1" and all(g is not None and g["score"] for g in r["games"])
        for r in records
    )
    assert len(said) == 1 and "the baseline gpt-4.1" in said[0]
    assert f"in all {games:,} comparisons" in said[0]


def test_arena_hard_v2_says_which_records_it_left_out_and_which_categories_have_no_score(
    tmp_path: Path,
) -> None:
    """v2.0's show_result.py prints how many records it left out for a null game
    ("Number of null judgments found"); the audit said nothing, so coding (one record,
    game 1 null) and math (both games null) vanished from the headlines without a word.
    Counted by hand from the raw lines, per category. And a v2.0 file of one category
    named none: "qwq-32b scores 100.0% against o3-mini" could be hard_prompt, coding or
    math (the column was dropped when one category was left)."""
    hand: dict[str, int] = {}
    for line in V2.read_text("utf-8").splitlines():
        r = json.loads(line)
        if any(g is None or g["score"] is None for g in r["games"]):
            hand[r["category"]] = hand.get(r["category"], 0) + 1
    assert hand == {"coding": 1, "math": 1}
    frame = read_import(V2, "arena-hard").frame
    got = arena_hard_scores(frame, judge="gpt-4.1", boot=Resampling(n_boot=50))
    assert got.attrs["records_left_out"] == hand
    report = audit([V2], options=FAST)
    notes = [n for s in report.sections for n in s.notes if "left out whole" in n]
    assert len(notes) == 1
    assert "2 v2.0 records left out whole" in notes[0]
    assert "(coding 1, math 1); no score in categories coding, math" in notes[0]
    # one category alone still names it
    hard = [ln for ln in V2.read_text("utf-8").splitlines() if '"hard_prompt"' in ln]
    one = tmp_path / "arena-hard-v2.0_hard.jsonl"
    one.write_text("\n".join(hard) + "\n", "utf-8")
    heads = [h for h in audit([one], options=FAST).headlines if "Arena-Hard-Auto" in h]
    assert len(heads) == 1 and "qwq-32b in category hard_prompt scores 100.0%" in heads[0]
    assert not [n for s in audit([one], options=FAST).sections for n in s.notes if "whole" in n]


def test_arena_hard_files_of_both_versions_are_scored_each_by_its_own_rule_and_say_so(
    tmp_path: Path,
) -> None:
    """arena-hard-v0.1 judgments exist in both layouts (an older question_id file,
    claude-3-haiku; the repository's uid file now, gpt-4-0613), one judge and baseline.
    Each is scored by its version's rule, and it was silent: the v0.1 row's headline read
    "claude-3-haiku-20240307 in category  scores" (an empty category), and nothing said
    the two rows drop null games differently. Now the table has arena_hard_version, each
    headline names its rule, a note says to audit the versions apart, and style control
    refuses naming both versions. The numbers: v0.1's rule on haiku's raw lines (8 wins,
    1 tie, 8 losses, weighted) and v2.0's rule on gpt-4-0613's."""
    folder = tmp_path / "mixed"
    folder.mkdir()
    for path in (HAIKU, GPT4):
        (folder / path.name).write_text(path.read_text("utf-8"), "utf-8")
    w, t, lo = _raw_arena(HAIKU)
    gpt4 = _v2_battles_by_hand(GPT4, "gpt-4-0314")
    both = pd.concat([read_import(p, "arena-hard").frame for p in (HAIKU, GPT4)])
    got = arena_hard_scores(both, judge="gpt-4-1106-preview", boot=Resampling(n_boot=50))
    assert got.attrs["arena_hard_version"] == "v0.1 and v2.0"
    rows = got.set_index("model")
    assert rows.loc["claude-3-haiku-20240307", "arena_hard_version"] == "v0.1"
    assert rows.loc["gpt-4-0613", "arena_hard_version"] == "v2.0"
    assert rows.loc["claude-3-haiku-20240307", "score"] == pytest.approx(
        100 * (w + t / 2) / (w + t + lo)
    )
    assert rows.loc["gpt-4-0613", "score"] == pytest.approx(100 * np.mean(gpt4))
    report = audit([folder], options=FAST)
    heads = [h for h in report.headlines if "Arena-Hard-Auto, judge" in h]  # the scores
    assert len(heads) == 2 and not any("category  " in h for h in heads)
    assert any("claude-3-haiku-20240307 (v0.1 files: a null game dropped alone" in h for h in heads)
    assert any(
        "gpt-4-0613 in category arena-hard-v0.1 (v2.0 files: a record with a null game "
        "dropped whole)" in h
        for h in heads
    )
    notes = [n for s in report.sections for n in s.notes if "both Arena-Hard versions" in n]
    assert len(notes) == 1 and "audit each version's files apart" in notes[0]
    (table,) = [t for t in report.tables if t.name.startswith("arena-hard-scores")]
    assert "arena_hard_version" in table.columns
    style = pd.DataFrame(columns=["model", "prompt_id", *STYLE_FEATURES])
    with pytest.raises(EstimationError, match="both Arena-Hard versions"):
        arena_hard_style_scores(both, style, judge="gpt-4-1106-preview")


def test_an_arena_hard_score_refused_is_said_even_where_the_leaderboard_is_not_made(
    tmp_path: Path,
) -> None:
    """The v2.0 file's pairs table saved without arena_hard_version reads by v0.1's rule:
    hard_prompt's and creative_writing's baselines scored together, refused (two
    baselines). The refusal was a headline of the leaderboard section, and a section with
    no finding, table or note was dropped whole (its 3 systems cannot be ranked), so the
    audit said nothing about Arena-Hard. Now the line is there, and it says what the
    table lacks; with the column, both categories are scored."""
    frame = read_import(V2, "arena-hard").frame
    saved = tmp_path / "v2-pairs.csv"
    frame.drop(columns="arena_hard_version").to_csv(saved, index=False)
    heads = [h for h in audit([saved], options=FAST).headlines if "Arena-Hard-Auto" in h]
    assert len(heads) == 1 and "not computed" in heads[0]
    assert "compares with 2 baselines" in heads[0]
    assert "only where its arena_hard_version column says v2.0" in heads[0]
    kept = tmp_path / "v2-pairs-with-version.csv"
    frame.to_csv(kept, index=False)
    heads = [h for h in audit([kept], options=FAST).headlines if "Arena-Hard-Auto" in h]
    assert len(heads) == 2 and all("in category" in h for h in heads)


def test_a_v2_baseline_of_the_judges_family_names_its_categories(tmp_path: Path) -> None:
    """A v2.0 file scores each category against its own baseline. Renamed so the judge
    gpt-4-1106-preview scores hard_prompt against gpt-4-0314 (its family, gpt) and
    creative_writing against gemini-2.0-flash-001 (another), the line before the scores
    said "a system of another family is judged against a same-family model's answers"
    with no category: qwq-32b's creative_writing score (against gemini) read as lowered
    too. It now names the baseline's category; the judge's own baseline likewise."""
    text = V2.read_text("utf-8").replace("gpt-4.1", "gpt-4-1106-preview")
    path = tmp_path / "arena-hard-v2.0_qwq-32b.jsonl"
    path.write_text(text.replace("o3-mini-2025-01-31", "gpt-4-0314"), "utf-8")
    lines = audit([path], options=FAST).headlines
    said = [h for h in lines if "same family (gpt) —" in h]
    assert len(said) == 1
    assert (
        "the judge gpt-4-1106-preview and the baseline gpt-4-0314 of category hard_prompt"
        in (said[0])
    )
    path.write_text(text.replace("gemini-2.0-flash-001", "gpt-4-1106-preview"), "utf-8")
    said = [h for h in audit([path], options=FAST).headlines if "wrote the baseline" in h]
    assert len(said) == 1
    assert "wrote the baseline gpt-4-1106-preview of category creative_writing — " in said[0]
