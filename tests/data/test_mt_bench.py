"""MT-Bench answers and the turn-1 expert votes (dataset mt-bench-human) on the real files."""

from __future__ import annotations

import json
import os
import shutil
from collections import defaultdict
from pathlib import Path

import pandas as pd
import pytest

from recuse.data import datasets, load
from recuse.data.mt_bench import read_mt_bench_answers, read_mt_bench_human, read_mt_bench_questions
from recuse.errors import DatasetNotFoundError, InputError
from recuse.roster import ModelsNotInRoster, Roster
from recuse.tables import renaming_by, validate_pairs

MODELS = {"alpaca-13b", "claude-v1", "gpt-3.5-turbo", "gpt-4", "llama-13b", "vicuna-13b"}


@pytest.fixture(scope="module")
def human(shared_data: Path) -> pd.DataFrame:
    return load("mt-bench-human", data_dir=shared_data, roster=Roster.builtin())


@pytest.fixture(scope="module")
def answers(shared_data: Path) -> pd.DataFrame:
    return read_mt_bench_answers(shared_data / "mt_bench", roster=Roster.builtin())


def _pair(df: pd.DataFrame, q: int, a: str, b: str) -> pd.Series:
    hit = df[(df["prompt_id"] == str(q)) & (df["model_a"] == a) & (df["model_b"] == b)]
    assert len(hit) == 1
    return hit.iloc[0]


def test_registered() -> None:
    ds = datasets()["mt-bench-human"]
    assert (ds.folder, ds.table) == ("mt_bench_human", "pairs")


def test_answers_table(answers: pd.DataFrame) -> None:
    assert list(answers.columns) == [
        "question_id", "category", "turn", "model", "question", "answer",
    ]  # fmt: skip
    assert len(answers) == 80 * 6 * 2
    assert set(answers["model"]) == MODELS  # vicuna-13b-v1.2 canonicalised
    assert answers.groupby("category")["question_id"].nunique().eq(10).all()
    assert len(answers.groupby("category")) == 8
    empty = answers[answers["answer"] == ""]
    assert empty[["question_id", "model", "turn"]].values.tolist() == [[127, "llama-13b", 1]]
    r = answers[(answers["question_id"] == 81) & (answers["model"] == "gpt-4")]
    assert r["turn"].tolist() == [1, 2]
    assert r["answer"].iloc[0].startswith("Title: Aloha, Hawaii! A Cultural and Natural Paradise")
    assert r["question"].iloc[1].startswith("Rewrite your previous response. Start every sentence")


def test_answers_are_cached_and_copied(shared_data: Path) -> None:
    a = read_mt_bench_answers(shared_data / "mt_bench", roster=Roster.builtin())
    a.loc[0, "answer"] = "changed"
    b = read_mt_bench_answers(shared_data / "mt_bench", roster=Roster.builtin())
    assert b.loc[0, "answer"] != "changed"
    q = read_mt_bench_questions(shared_data / "mt_bench")
    assert len(q) == 160 and q["turn"].value_counts().to_dict() == {1: 80, 2: 80}


def test_human_rows_and_votes(human: pd.DataFrame) -> None:
    assert len(human) == 910  # distinct question x model-pair combinations (data README)
    assert human["human_votes"].sum() == 1689
    assert human["human_votes"].value_counts().sort_index().to_dict() == {
        1: 425, 2: 283, 3: 136, 4: 47, 5: 13, 6: 5, 7: 1,
    }  # fmt: skip
    assert (human["model_a"] < human["model_b"]).all()
    assert set(human["model_a"]) | set(human["model_b"]) == MODELS
    assert human["judge"].isna().all() and human["p_a"].isna().all()
    assert human["prompt_id"].nunique() == 80
    assert not human.duplicated(["item_id"]).any()
    pd.testing.assert_frame_equal(validate_pairs(human), human)


def test_human_share_matches_raw_votes(human: pd.DataFrame, shared_data: Path) -> None:
    """Recount the votes with plain Python and compare every row."""
    lines = (shared_data / "mt_bench_human" / "human_judgments.jsonl").read_text("utf-8")
    score: dict[tuple[int, str, str], list[float]] = defaultdict(list)
    for line in lines.splitlines():
        v = json.loads(line)
        a, b = (m.replace("vicuna-13b-v1.2", "vicuna-13b") for m in (v["model_a"], v["model_b"]))
        winner = {"model_a": a, "model_b": b, "tie": None}[v["winner"]]
        lo, hi = sorted((a, b))
        score[(v["question_id"], lo, hi)].append(0.5 if winner is None else float(winner == lo))
    got = {
        (int(q), a, b): (h, n)
        for q, a, b, h, n in human[
            ["prompt_id", "model_a", "model_b", "human", "human_votes"]
        ].itertuples(index=False)
    }
    assert got.keys() == score.keys()
    for key, s in score.items():
        assert got[key][1] == len(s)
        assert got[key][0] == pytest.approx(sum(s) / len(s))


def test_human_spot_checks(human: pd.DataFrame, answers: pd.DataFrame) -> None:
    # q82: gpt-3.5-turbo won 3 votes (one cast with it as model_b), vicuna 1, 1 tie -> 3.5 / 5
    r = _pair(human, 82, "gpt-3.5-turbo", "vicuna-13b")
    assert (r["human"], r["human_votes"]) == (0.7, 5)
    assert r["item_id"] == "mt-bench-human:82:gpt-3.5-turbo:vicuna-13b"
    # q112: all 7 votes for vicuna, 2 of them cast in the other orientation
    r = _pair(human, 112, "llama-13b", "vicuna-13b")
    assert (r["human"], r["human_votes"]) == (0.0, 7)
    # q128: author_0 voted tie twice, once in each order (both kept)
    r = _pair(human, 128, "claude-v1", "gpt-3.5-turbo")
    assert (r["human"], r["human_votes"]) == (0.5, 2)
    r = _pair(human, 81, "gpt-4", "vicuna-13b")
    assert (r["human"], r["human_votes"], r["category"]) == (1.0, 1, "writing")
    assert r["prompt"].startswith("Compose an engaging travel blog post about a recent trip")
    t1 = answers[(answers["question_id"] == 81) & (answers["turn"] == 1)].set_index("model")
    assert r["response_a"] == t1.loc["gpt-4", "answer"]
    assert r["response_b"] == t1.loc["vicuna-13b", "answer"]
    assert r["len_a"] == len(r["response_a"].split())
    # the empty llama-13b answer to q127 has length 0
    q127 = human[(human["prompt_id"] == "127") & (human["model_a"] == "llama-13b")]
    q127_b = human[(human["prompt_id"] == "127") & (human["model_b"] == "llama-13b")]
    assert (q127["len_a"] == 0).all() and (q127_b["len_b"] == 0).all()
    assert len(q127) + len(q127_b) > 0


def _copy_votes(tmp_path: Path, shared_data: Path, *, with_answers: bool) -> Path:
    root = tmp_path / "data"
    folder = root / "mt_bench_human"
    folder.mkdir(parents=True)
    shutil.copy(shared_data / "mt_bench_human" / "human_judgments.jsonl", folder)
    if with_answers:
        shutil.copy(shared_data / "mt_bench_human" / "human_judgment_answers.jsonl", folder)
    os.symlink(shared_data / "mt_bench", root / "mt_bench")
    return folder


def test_texts_from_model_answers_when_answer_file_absent(
    tmp_path: Path, shared_data: Path, human: pd.DataFrame
) -> None:
    folder = _copy_votes(tmp_path, shared_data, with_answers=False)
    other = read_mt_bench_human(folder, Roster.builtin())
    pd.testing.assert_frame_equal(other, human)


def test_bad_votes(tmp_path: Path, shared_data: Path) -> None:
    folder = _copy_votes(tmp_path, shared_data, with_answers=True)
    vfile = folder / "human_judgments.jsonl"
    lines = vfile.read_text("utf-8").splitlines()
    original = list(lines)
    lines[9] = lines[9].replace('"winner": "', '"winner": "x')
    vfile.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="unknown winner") as err:
        read_mt_bench_human(folder, Roster.builtin())
    assert (err.value.row, err.value.column) == (10, "winner")

    lines = list(original)
    lines[4] = lines[4].replace('"model_b": "', '"model_b": "mystery-')
    vfile.write_text("\n".join(lines) + "\n", encoding="utf-8")
    # a model the roster lacks is read as its own (a note), and then has no answers
    with pytest.warns(ModelsNotInRoster, match="model 'mystery-"):
        with pytest.raises(InputError, match="no turn-1 answer of 'mystery-") as err:
            read_mt_bench_human(folder, Roster.builtin())

    vfile.write_text("\n".join(original[:20]) + '\n{"question_id": 81, "jud\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"line 21 \(data row 21\): the line is not valid JSON"):
        read_mt_bench_human(folder, Roster.builtin())

    (folder.parent / "mt_bench").unlink()
    vfile.write_text("\n".join(original) + "\n", encoding="utf-8")
    with pytest.raises(DatasetNotFoundError, match="no MT-Bench data"):
        read_mt_bench_human(folder, Roster.builtin())


def test_votes_on_unknown_question(tmp_path: Path, shared_data: Path) -> None:
    folder = _copy_votes(tmp_path, shared_data, with_answers=True)
    vote = {"question_id": 999, "judge": "x", "model_a": "gpt-4", "model_b": "claude-v1",
            "winner": "tie"}  # fmt: skip
    with (folder / "human_judgments.jsonl").open("a", encoding="utf-8") as f:
        f.write(json.dumps(vote) + "\n")
    with pytest.raises(InputError, match="question 999"):
        read_mt_bench_human(folder, Roster.builtin())


def test_a_named_dataset_reads_names_its_roster_lacks_with_one_note(
    shared_data: Path, tmp_path: Path
) -> None:
    """A user roster that replaces the vicuna entry drops the alias vicuna-13b-v1.2 that
    the MT-Bench files use: the dataset still loads, that name its own model, one note."""
    user = tmp_path / "roster.toml"
    user.write_text('[[model]]\nid = "vicuna-13b"\nfamily = "llama"\n', "utf-8")
    roster = Roster.load(user)
    with pytest.warns(ModelsNotInRoster) as caught:
        table = load("mt-bench-human", data_dir=shared_data, roster=roster)
    notes = [str(w.message) for w in caught if issubclass(w.category, ModelsNotInRoster)]
    assert notes == [
        "dataset mt-bench-human: model 'vicuna-13b-v1.2' is not in the roster, read as its "
        "own model and family — to give them a family or aliases, add them to a roster "
        "file ([[model]] id, family, aliases) and pass roster=FILE (or a Roster)"
    ]
    # the command line's note names its option (this named the CLI's to a Python caller)
    with renaming_by("flag"), pytest.warns(ModelsNotInRoster) as caught:
        load("mt-bench-human", data_dir=shared_data, roster=Roster.load(user))
    (said,) = {str(w.message) for w in caught if issubclass(w.category, ModelsNotInRoster)}
    assert said.endswith("and pass --roster FILE (or set RECUSE_ROSTER)"), said
    models = set(table["model_a"]) | set(table["model_b"])
    assert "vicuna-13b-v1.2" in models and "vicuna-13b" not in models
    assert roster.family("vicuna-13b-v1.2") == "vicuna-13b-v1.2"
