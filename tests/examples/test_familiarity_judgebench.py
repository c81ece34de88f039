"""The JudgeBench example's answer key, grading and pairing (the model runs are not repeated)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from committed_outputs import assert_analyses_redone, committed_copy, damage_csv

from recuse.metrics.bootstrap import Resampling
from recuse.roster import Roster

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))
example = pytest.importorskip("familiarity_judgebench")


@pytest.mark.parametrize(
    ("text", "option"),
    [
        ("Answer: C\nExplanation: because", "C"),
        ("The answer to the question is: A. No, because", "A"),
        ('The answer to the question "Is it likely?" is option D.', "D"),
        ("The correct answer is (J).", "J"),
        ("Answer: It is B", "B"),
        ("The answer is:\n\n(A) first option\n(B) second option", None),  # a list of options
        ("Answer:\n\n(A) Yes, because", None),
        ("The most likely result is (B)", None),  # no answer statement
        ("", None),
        (None, None),
    ],
)
def test_stated_option(text: str | None, option: str | None) -> None:
    assert example.stated_option(text) == option


def test_answer_key_from_the_real_files(shared_data: Path) -> None:
    questions, dropped = example.mmlu_pro_questions(shared_data / "judgebench", Roster.load())
    assert dropped == {"no_right_option": 0, "same_option_both": 0}
    assert len(questions) == 308 and questions["question_id"].nunique() == 265
    assert set(questions["other_model"]) == {"gpt-4o-2024-05-13", "claude-3.5-sonnet-20240620"}
    assert not questions["question"].str.contains(example.FORMAT_CUT).any()
    # the right option is the last five-fold letter of the response labelled correct ...
    last = questions["correct_response"].str.findall(r"([A-J])\1{4}").str[-1]
    assert (last == questions["right"]).all()
    # ... and both files agree on it where they share a question
    assert (questions.groupby("question_id")["right"].nunique() == 1).all()
    # spot check against the raw file
    name = "dataset=judgebench,response_model=gpt-4o-2024-05-13.jsonl"
    raw = json.loads((shared_data / "judgebench" / "data" / name).read_text().splitlines()[0])
    row = questions[questions["question_id"] == str(raw["original_id"])].iloc[0]
    good = raw["response_A"] if raw["label"] == "A>B" else raw["response_B"]
    assert row["correct_response"] == good and row["question"] in raw["question"]


def test_pairs_pit_a_right_answer_against_a_wrong_one() -> None:
    questions = pd.DataFrame(
        {
            "question_id": ["1", "1", "2", "3"],
            "source": "mmlu-pro-law",
            "question": ["Q1", "Q1", "Q2", "Q3"],
            "right": ["A", "A", "B", "C"],
            "other_model": ["gpt-4o", "claude-3.5-sonnet", "gpt-4o", "gpt-4o"],
            "correct_response": ["g1", "c1", "g2", "g3"],
            "incorrect_response": ["G1", "C1", "G2", "G3"],
        }
    )
    graded = pd.DataFrame(
        {
            "generator": ["m"] * 3,
            "question_id": ["1", "2", "3"],
            "question": ["Q1", "Q2", "Q3"],
            "answer": ["Answer: A", "Answer: D", "Answer: E"],
            "stated": ["A", "D", "E"],
            "right": ["A", "B", "C"],
            "correct": [True, False, False],
        }
    )
    pairs = example.build_pairs(questions, graded, n_wrong=1, rng=np.random.default_rng(3))
    assert len(pairs) == 2  # the right answer and one of the two wrong ones
    for _, p in pairs.iterrows():
        own = "a" if p["model_a"] == "m" else "b"
        other = "b" if own == "a" else "a"
        own_text, other_text = p[f"response_{own}"], p[f"response_{other}"]
        own_right = own_text == "Answer: A"
        # the other response is a wrong one when the own answer is right, a right one otherwise
        assert other_text.isupper() == own_right and other_text[0] in "GgCc"
        assert p["human"] == float((own == "a") == own_right)
        assert p["prompt"] == "Q" + p["prompt_id"].rsplit(":", 1)[1]


WRITTEN = (  # what --from-pairs rewrites
    "familiarity_judgebench.json",
    "familiarity_judgebench_selfpref.csv",
    "familiarity_judgebench_curve_by_self.csv",
)
COMMITTED = ("familiarity_judgebench_pairs.csv", *WRITTEN)


def _few_resamples(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """``analyse`` with 20 resamples whatever the JSON says: the same code, in a second or
    two; what it returned is appended to the list given back."""
    real, returned = example.analyse, []

    def quick(judged: pd.DataFrame, **opts: Any) -> Any:
        returned.append(real(judged, **{**opts, "boot": Resampling(n_boot=20, seed=0)}))
        return returned[-1]

    monkeypatch.setattr(example, "analyse", quick)
    return returned


def test_from_pairs_rewrites_the_analyses_and_keeps_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = committed_copy(COMMITTED, tmp_path)
    before = json.loads((out / "familiarity_judgebench.json").read_text())
    monkeypatch.setattr(example, "OUT", out)
    returned = _few_resamples(monkeypatch)
    example.recompute_analyses()
    after = json.loads((out / "familiarity_judgebench.json").read_text())
    (done,) = returned
    # the analyses are replaced (20 resamples here, not the JSON's 2000); the model run's
    # record is kept, in its order, and the JSON says what was redone
    sections, _ = assert_analyses_redone(out, before, after, done)
    assert set(sections) == {k for k in before if "preference" in k or "familiarity" in k
                             or "perplexity" in k or "ensembles" in k}  # fmt: skip
    assert "self_preference_calibrated[qwen2.5-coder-0.5b-instruct]" in capsys.readouterr().out


@pytest.mark.parametrize("how", ["truncated", "wrong columns", "bad value", "missing"])
def test_from_pairs_refuses_a_damaged_pairs_file_and_keeps_the_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    out = committed_copy(COMMITTED, tmp_path)
    before = {name: (out / name).read_bytes() for name in WRITTEN}
    damage_csv(out / "familiarity_judgebench_pairs.csv", how, 7)  # p_a_first
    monkeypatch.setattr(example, "OUT", out)
    with pytest.raises(SystemExit) as stop:
        example.recompute_analyses()
    assert stop.value.code == 2
    message = capsys.readouterr().err.strip()
    assert len(message.splitlines()) == 1 and "familiarity_judgebench_pairs.csv" in message
    # the committed results are not replaced by skips or by numbers from a broken file
    assert {name: (out / name).read_bytes() for name in WRITTEN} == before


@pytest.mark.parametrize("text", ["{oops", '{"judges": {}}', ""])
def test_from_pairs_refuses_a_damaged_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    out = committed_copy(COMMITTED, tmp_path)
    (out / "familiarity_judgebench.json").write_text(text)
    monkeypatch.setattr(example, "OUT", out)
    with pytest.raises(SystemExit) as stop:
        example.recompute_analyses()
    assert stop.value.code == 2
    message = capsys.readouterr().err.strip()
    assert len(message.splitlines()) == 1 and "familiarity_judgebench.json" in message
    assert (out / "familiarity_judgebench.json").read_text() == text


def test_from_pairs_says_so_when_the_json_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A read-only output folder (root ignores permissions, so the write is made to fail)."""
    out = committed_copy(COMMITTED, tmp_path)
    monkeypatch.setattr(example, "OUT", out)
    _few_resamples(monkeypatch)

    def refuse(self: Path, *args: object, **kwargs: object) -> int:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "write_text", refuse)
    with pytest.raises(SystemExit) as stop:
        example.recompute_analyses()
    assert stop.value.code == 2
    message = capsys.readouterr().err.strip()
    assert len(message.splitlines()) == 1
    assert "familiarity_judgebench.json" in message and "Permission denied" in message
