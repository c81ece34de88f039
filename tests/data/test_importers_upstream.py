"""Real files of other tools (tests/data/importers/upstream, sources in SOURCES.md):
sniffed, read, and checked against numbers worked out from the raw JSON by hand."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import optimize

from recuse.data.importers import References, json_keys, read_import, sniff
from recuse.data.inputs import load_input
from recuse.errors import ConfigError, InputError, RecuseError
from recuse.roster import Roster

UP = Path(__file__).parent / "importers" / "upstream"
AE1 = UP / "alpaca_eval/results/alpaca-7b/alpaca_eval_gpt4/annotations.json"
AE2 = UP / "alpaca_eval/results/claude/weighted_alpaca_eval_gpt4_turbo/annotations.json"
SINGLE = UP / "fastchat/gpt-4_single.jsonl"
INSPECT_OLD = UP / "inspect/2024-11-05T13-31-45-05-00_input-task_8zXjbRzCWrL9GXiXo2vus9.json"
INSPECT_NEW = UP / "inspect/2025-05-12T20-28-26-04-00_security-guide.json"
INSPECT_EVAL = UP / "inspect/2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval"


def _records(path: Path) -> list[dict]:
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]
    return json.loads(path.read_text("utf-8"))


# ------------------------------------------------------------------ sniffing


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        (AE1, "alpaca-eval"),
        (AE2, "alpaca-eval"),
        (SINGLE, "fastchat-single"),
        (INSPECT_OLD, "inspect"),
        (INSPECT_NEW, "inspect"),
        (INSPECT_EVAL, "inspect"),
    ],
)
def test_real_files_are_sniffed(path: Path, fmt: str) -> None:
    assert sniff(path) == fmt


@pytest.mark.parametrize("indent", [None, 1])
def test_an_inspect_log_with_reordered_keys_is_sniffed(tmp_path: Path, indent: int | None) -> None:
    """Re-written with sorted keys ("eval" first, "version"/"status" last, after the
    samples) the log is still an Inspect log (was: only `{"version": n, "status"` at
    the start was recognised, and a reordered log was read as a pairs table)."""
    log = json.loads(INSPECT_NEW.read_text("utf-8"))
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log, sort_keys=True, indent=indent), "utf-8")
    assert path.read_text("utf-8")[:10].lstrip("{ \n").startswith('"eval"')
    assert sniff(path) == "inspect"
    assert len(read_import(path, "inspect", unknown_models="keep").frame) == 3


@pytest.mark.parametrize(("path", "rows"), [(AE1, 30), (INSPECT_NEW, 3)])
def test_gzipped_json_files_are_sniffed_and_read(tmp_path: Path, path: Path, rows: int) -> None:
    import gzip

    packed = tmp_path / (path.name + ".gz")
    packed.write_bytes(gzip.compress(path.read_bytes()))
    fmt = sniff(packed)
    assert fmt == sniff(path)
    assert fmt is not None
    assert len(read_import(packed, fmt, unknown_models="keep").frame) == rows


def test_plain_json_tables_are_not_taken_for_a_tool_format(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.json"
    pairs.write_text(json.dumps([{"instruction": "q", "output_1": "a", "output_2": "b"}]))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"eval": {"name": "x"}, "version": 1}))  # no model / task
    assert sniff(pairs) is None and sniff(other) is None


def test_json_keys_reads_a_cut_off_text_by_depth() -> None:
    text = '[{"a": {"b": [1, {"c": "x:y"}], "d\\"e": 2}}, {"f": 3'
    assert json_keys(text) == {("a",), ("a", "b"), ("a", "b", "c"), ("a", 'd"e'), ("f",)}


# ------------------------------------------------------------------ AlpacaEval


@pytest.mark.parametrize("path", [AE1, AE2])
def test_alpaca_eval_annotations_read_as_written(path: Path) -> None:
    """p_a = 2 - preference (P(output_1 better)), 0 = draw = 0.5, worked out from the
    raw records; lengths are word counts; no order is claimed."""
    recs = _records(path)
    inp = load_input(path, unknown_models="keep")  # sniffed: no --format
    frame = inp.frame
    assert inp.source.format == "alpaca-eval" and inp.table == "pairs"
    want = [0.5 if r["preference"] in (0, 1.5) else 2.0 - r["preference"] for r in recs]
    np.testing.assert_allclose(frame["p_a"].to_numpy(float), want, rtol=0, atol=1e-12)
    assert frame[["p_a_first", "p_a_second", "human"]].isna().all().all()
    assert frame["len_a"].tolist() == [len(r["output_1"].split()) for r in recs]
    assert frame["model_a"].nunique() == 1 and frame["model_b"].nunique() == 1
    assert any("position bias is not estimated" in n for n in inp.source.notes)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        # JSON true was read as preference 1 (baseline better) by pd.to_numeric
        ("preference", True, "column 'preference': preference True is not an AlpacaEval"),
        # pd.to_numeric raised an OverflowError traceback
        ("preference", 10**19, "column 'preference': preference"),
        # a list or object as a model or judge name: an unhashable-type traceback
        ("generator_2", ["alpaca-7b"], "column 'generator_2': expected one text or number"),
        ("annotator", {"name": "gpt-4"}, "column 'annotator': expected one text or number"),
    ],
)
def test_alpaca_eval_bad_fields_are_one_line_errors(
    tmp_path: Path, field: str, value: object, message: str
) -> None:
    recs = _records(AE1)[:3]
    recs[1][field] = value
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps(recs), "utf-8")
    with pytest.raises(InputError, match=message) as err:
        load_input(path, unknown_models="keep")
    assert "row 2" in str(err.value)


def test_alpaca_eval_version_1_draw_is_a_tie() -> None:
    frame = load_input(AE1).frame
    assert _records(AE1)[24]["preference"] == 0
    assert frame["p_a"].iloc[24] == 0.5
    assert set(frame["p_a"].drop(24)) == {0.0, 1.0}


def _lc_by_hand(path: Path) -> tuple[float, float]:
    """Raw and length-controlled win rate (in %) of the one model against the baseline:
    the fractional-logit fit logit P = θ + φ tanh(δ / sd δ), δ = characters of output_1
    minus output_2, maximised here with scipy (no statsmodels); LC = σ(θ)."""
    recs = _records(path)
    y = np.array([0.5 if r["preference"] in (0, 1.5) else r["preference"] - 1 for r in recs])
    delta = np.array([len(r["output_1"]) - len(r["output_2"]) for r in recs], float)
    x = np.tanh(delta / np.std(delta, ddof=1))

    def nll(b: np.ndarray) -> float:
        eta = b[0] + b[1] * x
        return float(np.sum(np.logaddexp(0, eta) - y * eta))

    fit = optimize.minimize(nll, np.zeros(2), method="BFGS", options={"gtol": 1e-10})
    return 100 * float(y.mean()), 100 / (1 + math.exp(-fit.x[0]))


@pytest.mark.parametrize("path", [AE1, AE2])
def test_alpaca_eval_length_controlled_win_rate_matches_a_hand_fit(path: Path) -> None:
    """One annotations.json (one model against the baseline) audits to its raw and
    length-controlled win rate (was: "fewer than three systems", nothing estimated)."""
    from recuse.driver import AuditOptions, audit

    report = audit([path], options=AuditOptions(n_boot=100, only=("leaderboard",)))
    tables = [t for s in report.sections for t in s.tables if t.name.startswith("lc-win-rate")]
    assert len(tables) == 1
    row = tables[0].frame.iloc[0]
    raw, lc = _lc_by_hand(path)
    assert row["win_rate"] == pytest.approx(raw, abs=1e-9)
    assert row["lc_win_rate"] == pytest.approx(lc, abs=1e-3)
    assert row["n"] == len(_records(path))


def test_alpaca_eval_hand_numbers() -> None:
    """The raw win rates written out: 6.5 of 30 (AlpacaEval 1, one draw) and the mean
    of preference - 1 over the 12 weighted annotations."""
    assert _lc_by_hand(AE1)[0] == pytest.approx(100 * 6.5 / 30)
    prefs = [r["preference"] for r in _records(AE2)]
    assert _lc_by_hand(AE2)[0] == pytest.approx(100 * (sum(prefs) - 12) / 12)


COHERE = UP / "alpaca_eval/results/cohere"
COHERE_COT = COHERE / "alpaca_eval_cot_gpt4_turbo_fn/annotations.json"
COHERE_FN = COHERE / "alpaca_eval_gpt4_turbo_fn/annotations.json"


def _win_rate_by_hand(path: Path) -> tuple[int, float]:
    """n and win rate (in %) of one annotations.json, with pandas: mean of preference - 1,
    0 and 1.5 (draws) as 0.5."""
    pref = pd.read_json(path)["preference"].astype(float)
    won = (pref - 1).mask(pref.isin([0.0, 1.5]), 0.5)
    return len(pref), 100 * float(won.mean())


def test_two_templates_of_one_judge_are_not_pooled() -> None:
    """cohere's folder holds two annotator configs that the roster maps to one judge,
    gpt-4-1106-preview (13 and 12 annotations, 12 instructions in both): one is kept,
    the first by name (cot; neither is the leaderboard's), and a note says which was
    left out. Was: both pooled, win rate 8.00% "n = 25 instructions" of 13."""
    from recuse.driver import AuditOptions, audit

    n, rate = _win_rate_by_hand(COHERE_COT)
    assert n == 13 and len(set(pd.read_json(COHERE_COT)["instruction"])) == 13
    imported = read_import(COHERE, "alpaca-eval", unknown_models="keep")
    frame = imported.frame
    assert len(frame) == 13 and frame["prompt_id"].is_unique
    assert frame["item_id"].str.contains("/alpaca_eval_cot_gpt4_turbo_fn/").all()
    left = [x for x in imported.notes if "left out" in x]
    assert len(left) == 1
    assert "alpaca_eval_gpt4_turbo_fn's 12 annotations of cohere left out" in left[0]
    assert "kept alpaca_eval_cot_gpt4_turbo_fn's 13 annotations, the first by name." in left[0]
    report = audit([COHERE], options=AuditOptions(n_boot=100, only=("leaderboard",)))
    tables = [t for s in report.sections for t in s.tables if t.name.startswith("lc-win-rate")]
    row = tables[0].frame.iloc[0]
    assert row["n"] == n and row["win_rate"] == pytest.approx(rate, abs=1e-9)


def test_the_leaderboard_annotator_is_kept_and_the_dataset_reader_agrees(
    tmp_path: Path,
) -> None:
    """The leaderboard's config (weighted_alpaca_eval_gpt4_turbo) is kept over one first
    by name; the dataset reader (results/<model>/<annotator>/annotations.json) keeps the
    same rows as the folder import."""
    from recuse.data.alpaca_eval import read_alpaca_eval

    weighted = [{**r, "annotator": "weighted_alpaca_eval_gpt4_turbo"} for r in _records(COHERE_FN)]
    for name, recs in [
        ("alpaca_eval_cot_gpt4_turbo_fn", _records(COHERE_COT)),
        ("weighted_alpaca_eval_gpt4_turbo", weighted),
    ]:
        (tmp_path / "results/cohere" / name).mkdir(parents=True)
        (tmp_path / "results/cohere" / name / "annotations.json").write_text(json.dumps(recs))
    roster = Roster.builtin()
    roster.keep(["cohere"])  # not in the roster: its own model
    table = read_alpaca_eval(tmp_path, roster)
    imported = read_import(tmp_path / "results", "alpaca-eval", unknown_models="keep")
    n, rate = _win_rate_by_hand(COHERE_FN)
    for frame, notes in [(table, table.attrs["notes"]), (imported.frame, imported.notes)]:
        assert len(frame) == n == 12
        assert frame["item_id"].str.contains("/weighted_alpaca_eval_gpt4_turbo/").all()
        assert 100 * float((1 - frame["p_a"]).mean()) == pytest.approx(rate, abs=1e-12)
        left = [x for x in notes if "left out" in x]
        assert len(left) == 1, notes
        assert "alpaca_eval_cot_gpt4_turbo_fn's 13 annotations of cohere left out" in left[0]
        # the kept config covers fewer instructions (12 of the 13): said, with both counts
        assert (
            "kept weighted_alpaca_eval_gpt4_turbo's 12 annotations, the leaderboard's, "
            "though it holds fewer (12 to 13)."
        ) in left[0]


def test_two_templates_of_one_judge_against_two_baselines_are_both_kept(
    tmp_path: Path,
) -> None:
    """Two configs of gpt-4-1106-preview on cohere's answers, each against its own
    baseline (cot against gpt4_1106_preview as upstream, fn against text_davinci_003,
    AlpacaEval 1's): two comparisons, no instruction counted twice, so both are kept
    (13 + 12 rows) and no note says one was left out, in the dataset reader and the
    folder import alike. Was: one per judge, model and variant, the baseline not
    looked at, so the fn config's 12 rows against text_davinci_003 were dropped."""
    from recuse.data.alpaca_eval import read_alpaca_eval

    davinci = [{**r, "generator_1": "text_davinci_003"} for r in _records(COHERE_FN)]
    for name, recs in [
        ("alpaca_eval_cot_gpt4_turbo_fn", _records(COHERE_COT)),
        ("alpaca_eval_gpt4_turbo_fn", davinci),
    ]:
        (tmp_path / "results/cohere" / name).mkdir(parents=True)
        (tmp_path / "results/cohere" / name / "annotations.json").write_text(json.dumps(recs))
    roster = Roster.builtin()
    roster.keep(["cohere"])
    table = read_alpaca_eval(tmp_path, roster)
    imported = read_import(tmp_path / "results", "alpaca-eval", unknown_models="keep")
    for frame, notes in [(table, table.attrs["notes"]), (imported.frame, imported.notes)]:
        assert len(frame) == 13 + 12
        assert frame.groupby("model_a").size().to_dict() == {
            "gpt-4-1106-preview": 13,
            "text-davinci-003": 12,
        }
        assert not [x for x in notes if "left out" in x], notes


def test_a_judge_seen_through_two_templates_across_models_says_so(tmp_path: Path) -> None:
    """cohere judged by two configs of gpt-4-1106-preview (cot kept, the first by name)
    beside Samba-CoE-v0.1 judged by alpaca_eval_gpt4_turbo_fn alone: one config per
    model, but the judge's win rates still compare cohere under the cot template with
    Samba under the fn one. Only cohere's left-out rows were said; now a note names each
    config's models (dataset reader and folder import alike). Upstream's own files."""
    from recuse.data.alpaca_eval import read_alpaca_eval

    samba = UP / "alpaca_eval/results/Samba-CoE-v0.1/alpaca_eval_gpt4_turbo_fn"
    for src in (COHERE_COT.parent, COHERE_FN.parent, samba):
        dest = tmp_path / "results" / src.parent.name / src.name
        dest.mkdir(parents=True)
        (dest / "annotations.json").write_text((src / "annotations.json").read_text("utf-8"))
    roster = Roster.builtin()
    roster.keep(["cohere", "Samba-CoE-v0.1"])
    table = read_alpaca_eval(tmp_path, roster)
    imported = read_import(tmp_path / "results", "alpaca-eval", unknown_models="keep")
    for frame, notes in [(table, table.attrs["notes"]), (imported.frame, imported.notes)]:
        assert len(frame) == 13 + 12  # cohere's cot, Samba's fn
        said = [x for x in notes if "annotator configs, one per model" in x]
        assert len(said) == 1, notes
        assert (
            "judge gpt-4-1106-preview (against gpt-4-1106-preview) judged the models "
            "through 2 annotator configs, one per model (alpaca_eval_cot_gpt4_turbo_fn: "
            "cohere; alpaca_eval_gpt4_turbo_fn: Samba-CoE-v0.1)"
        ) in said[0]


def test_one_file_holding_two_templates_of_one_judge_reads_as_the_folder_does(
    tmp_path: Path,
) -> None:
    """cohere's two annotations.json joined into one file (any name, as `recuse audit
    FILE` takes it): the folder import kept one config, the file pooled both (25 rows of
    13 instructions, each counted twice). Now the file keeps the same 13 rows and says
    what it left out, so file and folder give one win rate."""
    joined = tmp_path / "cohere-annotations.json"
    joined.write_text(json.dumps(_records(COHERE_FN) + _records(COHERE_COT)), "utf-8")
    one = read_import(joined, "alpaca-eval", unknown_models="keep")
    folder = read_import(COHERE, "alpaca-eval", unknown_models="keep")
    n, rate = _win_rate_by_hand(COHERE_COT)
    assert len(one.frame) == len(folder.frame) == n == 13
    assert one.frame["prompt_id"].is_unique
    for frame in (one.frame, folder.frame):
        assert 100 * float((1 - frame["p_a"]).mean()) == pytest.approx(rate, abs=1e-12)
    left = [x for x in one.notes if "left out" in x]
    assert len(left) == 1
    assert left[0].startswith("cohere-annotations.json: annotator alpaca_eval_gpt4_turbo_fn's 12")


# ------------------------------------------------------------------ FastChat single


def test_fastchat_single_reads_as_ratings() -> None:
    recs = _records(SINGLE)
    imported = read_import(SINGLE, "fastchat-single", unknown_models="keep")
    frame = imported.frame
    assert imported.table == "ratings" and len(frame) == len(recs) == 16
    by_key = {(str(r["question_id"]), f"turn {r['turn']}"): float(r["score"]) for r in recs}
    keys = zip(frame["prompt_id"], frame["dimension"], strict=True)
    got = dict(zip(keys, frame["rating"], strict=True))
    assert got == by_key
    assert set(frame["judge"]) == {"gpt-4"} and frame["reference"].isna().all()
    assert set(frame["judge_prompt"]) == {
        "single-v1", "single-v1-multi-turn", "single-math-v1", "single-math-v1-multi-turn"
    }  # fmt: skip
    # hand: turn-1 scores 10 10 2 10 9 10 9 10 -> 70 / 8
    assert frame.loc[frame["dimension"] == "turn 1", "rating"].mean() == pytest.approx(70 / 8)
    assert any("--reference-judge" in n for n in imported.notes)


def test_fastchat_single_minus_one_is_unparsed_and_error_is_failed(tmp_path: Path) -> None:
    recs = _records(SINGLE)[:3]
    recs[0]["score"] = -1
    recs[1]["score"], recs[1]["judgment"] = -1, "$ERROR$"
    path = tmp_path / "judge_single.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), "utf-8")
    frame = read_import(path, "fastchat-single", unknown_models="keep").frame
    assert frame["status"].tolist() == ["unparsed", "failed", "ok"]
    assert frame["rating"].isna().tolist() == [True, True, False]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("score", "8", "line 2 (data row 2), column 'score': score must be a number"),
        ("score", True, "line 2 (data row 2), column 'score': score must be a number"),
        # 10**400: np.isfinite of a Python int beyond int64 raised a TypeError traceback
        ("score", 10**400, "line 2 (data row 2), column 'score': score must be a number"),
        ("turn", 3, "line 2 (data row 2), column 'turn': turn must be 1 or 2"),
        (
            "judge",
            5,
            "line 2 (data row 2), column 'judge': judge must be [judge model, prompt name]",
        ),
    ],
)
def test_fastchat_single_bad_fields_name_the_line(
    tmp_path: Path, field: str, value: object, message: str
) -> None:
    recs = _records(SINGLE)[:2]
    recs[1][field] = value
    path = tmp_path / "x_single.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), "utf-8")
    with pytest.raises(InputError, match=re.escape(message)):
        read_import(path, "fastchat-single", unknown_models="keep")


def test_fastchat_single_score_off_the_scale_is_unparsed(tmp_path: Path) -> None:
    """FastChat's pattern takes any [[number]]: 85, 0 or 10**19 are a judge that broke
    the 1-10 format, unparsed and left out (10**19 was a TypeError traceback; 85 was
    read as a rating of 85)."""
    recs = _records(SINGLE)[:5]
    for r, score in zip(recs, [85, 0, 10**19, 10, 1.5], strict=True):
        r["score"] = score
    path = tmp_path / "x_single.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), "utf-8")
    frame = read_import(path, "fastchat-single", unknown_models="keep").frame
    assert frame["status"].tolist() == ["unparsed"] * 3 + ["ok"] * 2
    assert frame["rating"].tolist()[3:] == [10.0, 1.5]


def test_fastchat_single_scores_off_the_scale_are_counted_in_a_note(tmp_path: Path) -> None:
    """A judge prompt asking for 0–10: its 0s (a quarter of the real file's grades here,
    its worst) were read as missing with nothing said but a count of rows without a
    rating: the mean rating read 7.5 where the grades average 5.6. A note counts them and
    names the values; the real file (every score 1–10) gets none."""
    recs = _records(SINGLE)
    assert not any(
        "off FastChat" in n
        for n in read_import(SINGLE, "fastchat-single", unknown_models="keep").notes
    )
    for r in recs[::4]:
        r["score"] = 0
    path = tmp_path / "x_single.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), "utf-8")
    imported = read_import(path, "fastchat-single", unknown_models="keep")
    scores = np.array([r["score"] for r in recs], float)
    assert imported.frame["rating"].mean() == pytest.approx(scores[scores > 0].mean())  # 0s out
    assert scores.mean() < imported.frame["rating"].mean() - 1.5
    (note,) = [n for n in imported.notes if "off FastChat" in n]
    assert note.startswith("x_single.jsonl: 4 scores off FastChat's 1–10 scale (0) read as ")


def _two_judges(tmp_path: Path) -> tuple[Path, pd.DataFrame]:
    """The real gpt-4 grades of gemini-1.5-flash, plus records written for this test in
    FastChat's single format: gpt-4 grading its own answers (model gpt-4) and
    claude-v1 grading both models on the same questions and turns."""
    real = _records(SINGLE)
    rng = np.random.default_rng(7)
    extra = []
    for r in real:
        own = dict(r, model="gpt-4", score=int(rng.integers(5, 11)))
        extra.append(own)
        for model in ("gemini-1.5-flash", "gpt-4"):
            ref = dict(r, model=model, judge=["claude-v1", r["judge"][1]])
            ref["score"] = int(rng.integers(1, 11))
            extra.append(ref)
    path = tmp_path / "all_single.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [*real, *extra]), "utf-8")
    return path, pd.DataFrame([*real, *extra])


def test_reference_judge_joins_on_question_model_and_turn(tmp_path: Path) -> None:
    path, raw = _two_judges(tmp_path)
    imported = read_import(
        path, "fastchat-single", unknown_models="keep", references=References(judge="claude-v1")
    )
    frame = imported.frame
    assert set(frame["judge"]) == {"gpt-4"} and len(frame) == 32
    ref = raw[raw["judge"].str[0] == "claude-v1"]
    want = {
        (str(q), m, t): float(s)
        for q, m, t, s in ref[["question_id", "model", "turn", "score"]].itertuples(index=False)
    }
    got = {
        (p, m, int(d[-1])): float(v)
        for p, m, d, v in frame[["prompt_id", "model", "dimension", "reference"]].itertuples(
            index=False
        )
    }
    assert {k: want[(k[0], "gpt-4" if k[1] == "gpt-4" else k[1], k[2])] for k in got} == got
    assert any("relative to claude-v1" in n for n in imported.notes)
    assert not any("cannot be fitted" in n for n in imported.notes)


def test_reference_judge_self_bias_matches_least_squares(tmp_path: Path) -> None:
    """γ of gpt-4 from the audit equals the OLS coefficient of the own-answer dummy in
    rating/M_d ~ 1 + reference/M_d + own + turn 2 (M_d = the largest score of the
    turn), solved here with numpy's lstsq."""
    from recuse.analyses.favoritism import SELF_BIAS
    from recuse.driver import AuditOptions, run_audit

    path, _ = _two_judges(tmp_path)
    roster = Roster.load()
    inp = load_input(
        path, roster=roster, unknown_models="keep", references=References(judge="claude-v1")
    )
    report = run_audit([inp], options=AuditOptions(n_boot=100, robustness=()), roster=roster)
    gamma = [f for f in report.findings if f.bias is SELF_BIAS]
    assert [f.judge for f in gamma] == ["gpt-4"]
    f = inp.frame
    scale = f.groupby("dimension")[["rating", "reference"]].max().max(axis=1)
    m = f["dimension"].map(scale).to_numpy(float)
    x = np.column_stack(
        [
            np.ones(len(f)),
            f["reference"].to_numpy(float) / m,
            (f["model"] == "gpt-4").to_numpy(float),
            (f["dimension"] == "turn 2").to_numpy(float),
        ]
    )
    beta = np.linalg.lstsq(x, f["rating"].to_numpy(float) / m, rcond=None)[0]
    assert gamma[0].estimate == pytest.approx(beta[2], abs=1e-9)


def test_reference_judge_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="'nobody' is not a judge of this table"):
        read_import(
            SINGLE, "fastchat-single", unknown_models="keep", references=References(judge="nobody")
        )
    with pytest.raises(InputError, match="gpt-4 is the only judge"):
        read_import(
            SINGLE, "fastchat-single", unknown_models="keep", references=References(judge="gpt-4")
        )
    with pytest.raises(ConfigError, match="--reference-scorer names a scorer of an Inspect log"):
        read_import(SINGLE, "fastchat-single", references=References(scorer="match"))
    with pytest.raises(ConfigError, match="--reference-judge applies to ratings"):
        read_import(AE1, "alpaca-eval", references=References(judge="gpt-4"))
    with pytest.raises(ConfigError, match="apply to files, not to named datasets"):
        load_input("play-favorites", references=References(judge="gpt-4o"))


# ------------------------------------------------------------------ Inspect, two versions


def test_inspect_0_3_43_model_graded_log_is_read() -> None:
    """Inspect 0.3.43 lists scorers only in results.scores and does not record which
    model wrote the grading reply (was refused: "score with model_graded_fact")."""
    log = json.loads(INSPECT_OLD.read_text("utf-8"))
    assert "scorers" not in log["eval"]
    imported = read_import(INSPECT_OLD, "inspect", unknown_models="keep")
    frame = imported.frame
    assert frame[["prompt_id", "model", "dimension", "judge", "rating", "status"]].to_dict(
        "records"
    ) == [
        {
            "prompt_id": "1",
            # eval.model openai/gpt-4o-mini; the sample's output names the snapshot
            "model": "gpt-4o-mini-2024-07-18",
            "dimension": "model_graded_fact",
            "judge": "gpt-4o-mini-2024-07-18",  # no grader named: the evaluated model
            "rating": 1.0,  # grade C
            "status": "ok",
        }
    ]
    assert frame["self_graded"].all()
    assert any("no grader named" in n for n in imported.notes)
    # one row, said in the singular (it read "(1 rows)")
    assert any("own family's answers (1 row) are not independent" in n for n in imported.notes)


def test_inspect_0_3_95_log_is_read() -> None:
    log = json.loads(INSPECT_NEW.read_text("utf-8"))
    grades = [s["scores"]["model_graded_fact"]["value"] for s in log["samples"]]
    frame = read_import(INSPECT_NEW, "inspect", unknown_models="keep").frame
    want = [{"C": 1.0, "P": 0.5, "I": 0.0}[g] for g in grades]
    assert frame.sort_values("prompt_id")["rating"].tolist() == want
    assert frame["self_graded"].all() and len(frame) == 3


def test_inspect_undated_model_grading_itself_reads_as_self() -> None:
    """eval.model openai/gpt-4o-mini; each sample's output and the grader's reply are
    from gpt-4o-mini-2024-07-18, the snapshot the undated name resolved to: one model,
    so the evaluated model grading itself is self (it read as family before)."""
    log = json.loads(INSPECT_NEW.read_text("utf-8"))
    assert log["eval"]["model"] == "openai/gpt-4o-mini"
    assert {s["output"]["model"] for s in log["samples"]} == {"gpt-4o-mini-2024-07-18"}
    imported = read_import(INSPECT_NEW, "inspect", unknown_models="keep")
    frame = imported.frame
    assert set(frame["model"]) == set(frame["judge"]) == {"gpt-4o-mini-2024-07-18"}
    assert (frame["judge"] == frame["model"]).all()
    assert any("answered as gpt-4o-mini-2024-07-18" in n for n in imported.notes)


def _paths(node: object, prefix: tuple = ()) -> list[tuple]:
    """Every path into the parts of a log the reader uses (not texts or events)."""
    skip = {"events", "attachments", "messages", "store", "model_usage", "output", "input"}
    out: list[tuple] = []
    items = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else []
    )
    for k, v in items:
        if k in skip or len(prefix) >= 6:
            continue
        out.append((*prefix, k))
        out.extend(_paths(v, (*prefix, k)))
    return out


def test_mutated_inspect_logs_give_one_line_errors(tmp_path: Path) -> None:
    """Every field the reader uses, replaced by a number, a boolean or a string: the
    log reads or fails with one RecuseError line (was: tracebacks, e.g. scores = 7)."""
    log = json.loads(INSPECT_OLD.read_text("utf-8"))
    log["eval"]["scorers"] = [{"name": "model_graded_fact", "options": {"model": "m"}}]
    log["eval"]["model_roles"] = {"grader": {"model": "openai/gpt-4o"}}
    used = {"model", "scorers", "model_roles", "task", "dataset"}
    paths = [
        p
        for p in _paths(log)
        if p[0] in ("results", "samples") or (p[0] == "eval" and (len(p) == 1 or p[1] in used))
    ]
    assert ("samples", 0, "scores", "model_graded_fact", "metadata", "grading") in paths
    roster = Roster.load()
    path = tmp_path / "log.json"
    failures = []
    for where in paths:
        for value in (7, True):
            doc = json.loads(json.dumps(log))
            node = doc
            for k in where[:-1]:
                node = node[k]
            node[where[-1]] = value
            path.write_text(json.dumps(doc), "utf-8")
            try:
                read_import(path, "inspect", roster=roster, unknown_models="keep")
            except RecuseError as exc:
                if "\n" in str(exc):
                    failures.append((where, value, "several lines"))
            except Exception as exc:  # the test's point: no other exception
                failures.append((where, value, f"{type(exc).__name__}: {exc}"))
    assert failures == []
    assert len(paths) > 20


@pytest.mark.parametrize("value", [7, True, "C"])
def test_a_score_that_is_not_an_object_is_named(tmp_path: Path, value: object) -> None:
    log = json.loads(INSPECT_NEW.read_text("utf-8"))
    log["samples"][1]["scores"]["model_graded_fact"] = value
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log), "utf-8")
    with pytest.raises(InputError, match=r"sample 2, scorer model_graded_fact: the score is a"):
        read_import(path, "inspect", unknown_models="keep")


def test_a_real_eval_log_without_a_model_graded_scorer_is_refused_in_one_line() -> None:
    """Inspect 0.3.58's .eval (a zip with a journal) is read; its samples hold no
    scores (its one scorer, match, grades without a model anyway), and the error says so."""
    with pytest.raises(InputError) as info:
        read_import(INSPECT_EVAL, "inspect", unknown_models="keep")
    message = str(info.value)
    assert "no model-graded scores (no sample has a score; none records a grader model)" in message
    assert "\n" not in message


def test_an_inspect_grade_too_large_for_a_float_is_named(tmp_path: Path) -> None:
    """A grade written as a 400-digit JSON integer: float() raised an OverflowError
    traceback in grade_value; now the grade is unreadable, named in one line."""
    log = json.loads(INSPECT_OLD.read_text("utf-8"))
    log["samples"][0]["scores"]["model_graded_fact"]["value"] = 10**400
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log), "utf-8")
    with pytest.raises(InputError, match=r"sample 1, scorer model_graded_fact: grade 1000"):
        read_import(path, "inspect", unknown_models="keep")


# ------------------------------------------------------------------ FastChat pairwise

PAIR = UP / "fastchat/gpt-4_pair.jsonl"


def test_fastchat_pair_real_file_reads_every_game_by_hand() -> None:
    """A real gen_judgment.py --mode pairwise-all run (judge gpt-4, pair-v2 and
    pair-math-v1): 11 records covering every winner pair in the 75-line upstream file,
    ties on either side, one game and both games with the API error ($ERROR$). Each
    game read from the raw JSON by hand: model_1 = 1, tie = 0.5, model_2 = 0 in a's
    (model_1's) frame whichever game, error = no verdict (status failed)."""
    records = _records(PAIR)
    assert sniff(PAIR) == "fastchat-pair"
    with pytest.warns(UserWarning, match="phi-3"):
        t = read_import(PAIR, "fastchat-pair").frame
    assert len(t) == len(records) == 11
    value = {"model_1": 1.0, "model_2": 0.0, "tie": 0.5, "error": math.nan}
    first = [value[r["g1_winner"]] for r in records]
    second = [value[r["g2_winner"]] for r in records]
    np.testing.assert_array_equal(t["p_a_first"], first)
    np.testing.assert_array_equal(t["p_a_second"], second)
    assert t["status_first"].tolist() == ["ok"] * 10 + ["failed"]
    assert t["status_second"].tolist() == ["ok"] * 9 + ["failed", "failed"]
    assert t["judge_prompt"].tolist() == [r["judge"][1] for r in records]
    assert set(t["model_a"]) == {"phi-3"} and set(t["model_b"]) == {"phi-3-dpo"}
    # p_a: the mean over the games with a verdict (the error/error record has none)
    hand = [0.5, 0.0, 1.0, 0.5, 0.75, 0.5, 0.5, 0.25, 0.25, 1.0, math.nan]
    np.testing.assert_array_equal(t["p_a"], hand)
    # first shown wins: p_a_first and 1 - p_a_second, over the 9 records with both
    both = t.dropna(subset=["p_a_first", "p_a_second"])
    share = ((both["p_a_first"] + 1 - both["p_a_second"]) / 2).mean()
    assert len(both) == 9 and share == pytest.approx(19 / 36)
