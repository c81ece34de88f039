"""MT-Bench: questions and pre-generated answers, and the turn-1 expert votes.

Files (see the data README): ``mt_bench/question.jsonl`` (80 questions, two turns),
``mt_bench/model_answer/<model>.jsonl`` (answers of six models to both turns), and
``mt_bench_human/human_judgments.jsonl`` (turn-1 expert votes, one per line:
``question_id, judge, model_a, model_b, winner`` with winner ``model_a | model_b | tie``)
with ``mt_bench_human/human_judgment_answers.jsonl`` (the turn-1 texts voted on).

Dataset ``mt-bench-human`` is a human-only ``pairs`` table with ONE row per
(question, unordered model pair): a and b are ordered so that ``model_a < model_b``
(canonical ids, alphabetically), and

    human = (votes for a + 0.5 * ties) / votes,    human_votes = votes

so ``human`` is the share of expert votes for a with a tie worth half.
``prompt_id`` is the MT-Bench question id (as text, e.g. ``"81"``), shared with
``llmbar-mtbench``.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pandas as pd

from recuse.data.registry import Dataset, register
from recuse.errors import DatasetNotFoundError, InputError
from recuse.files import read_jsonl, word_count
from recuse.roster import Roster
from recuse.tables import validate_pairs

__all__ = ["read_mt_bench_answers", "read_mt_bench_human", "read_mt_bench_questions"]

SOURCE = "mt-bench-human"
VOTES_FILE = "human_judgments.jsonl"
ANSWERS_FILE = "human_judgment_answers.jsonl"
WINNERS = {"model_a", "model_b", "tie"}


def _mt_bench_dir(folder: str | Path) -> Path:
    path = Path(folder).expanduser()
    if not (path / "question.jsonl").is_file():
        raise DatasetNotFoundError(
            f"no MT-Bench data in {path} (question.jsonl is missing) — put FastChat's "
            "mt_bench/ folder (question.jsonl, model_answer/*.jsonl) there"
        )
    return path


def _int_ids(values: pd.Series, *, file: Path, column: str) -> pd.Series:
    """Integer ids (question numbers); anything else names its row."""
    ints = pd.to_numeric(values, errors="coerce")
    bad = ints.isna() | (ints != ints.round())
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(
            f"{column} {values.iloc[i]!r} is not an integer", file=file, row=i + 1, column=column
        )
    return ints.astype("int64")


def _signature(path: Path) -> tuple[tuple[str, int, int], ...]:
    """What the cache must notice: each MT-Bench file's name, size and mtime."""
    files = [path / "question.jsonl", *sorted((path / "model_answer").glob("*.jsonl"))]
    out = []
    for f in files:
        st = f.stat()
        out.append((f.name, st.st_size, st.st_mtime_ns))
    return tuple(out)


@functools.lru_cache(maxsize=4)
def _parse(
    path: Path, signature: tuple[tuple[str, int, int], ...]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Parsed questions (long: one row per turn) and answers (raw model names)."""
    del signature  # only part of the cache key
    qfile = path / "question.jsonl"
    qrows = []
    for rec in read_jsonl(qfile, keys=("question_id", "category", "turns")):
        turns = rec["turns"]
        if not isinstance(turns, list) or not all(isinstance(t, str) for t in turns):
            raise InputError(
                f"question {rec['question_id']!r}: 'turns' must be a list of strings",
                file=qfile,
                column="turns",
            )
        for t, text in enumerate(turns, start=1):
            qrows.append((rec["question_id"], rec["category"], t, text))
    questions = pd.DataFrame(qrows, columns=["question_id", "category", "turn", "question"])
    questions["question_id"] = _int_ids(questions["question_id"], file=qfile, column="question_id")
    if questions.duplicated(["question_id", "turn"]).any():
        raise InputError("a question_id appears twice", file=qfile, column="question_id")

    answer_files = sorted((path / "model_answer").glob("*.jsonl"))
    if not answer_files:
        raise DatasetNotFoundError(f"no answer files in {path / 'model_answer'}")
    frames = []
    for afile in answer_files:
        arows = []
        for rec in read_jsonl(afile, keys=("question_id", "model_id", "choices")):
            choices = rec["choices"]
            turns = choices[0].get("turns") if isinstance(choices, list) and choices else None
            if (
                not isinstance(choices[0], dict)
                or not isinstance(turns, list)
                or not all(isinstance(t, str) for t in turns)
            ):
                raise InputError(
                    f"question {rec['question_id']!r}: choices[0].turns must be a list of strings",
                    file=afile,
                    column="choices",
                )
            for t, text in enumerate(turns, start=1):
                arows.append((rec["question_id"], rec["model_id"], t, text))
        frame = pd.DataFrame(arows, columns=["question_id", "model", "turn", "answer"])
        frame["question_id"] = _int_ids(frame["question_id"], file=afile, column="question_id")
        frame["file"] = str(afile)
        frames.append(frame)
    answers = pd.concat(frames, ignore_index=True)
    return questions, answers


def read_mt_bench_questions(folder: str | Path) -> pd.DataFrame:
    """MT-Bench questions, one row per turn: ``question_id, category, turn, question``."""
    path = _mt_bench_dir(folder)
    questions, _ = _parse(path.resolve(), _signature(path))
    return questions.copy()


def read_mt_bench_answers(folder: str | Path, *, roster: Roster | None = None) -> pd.DataFrame:
    """All pre-generated MT-Bench answers joined to their questions.

    Columns ``question_id`` (int), ``category``, ``turn`` (1 or 2), ``model``
    (canonical id via ``roster``, default :meth:`Roster.builtin`), ``question`` (the
    user turn), ``answer``; sorted by question, model, turn. Parsed files are
    cached per folder until one changes.
    """
    path = _mt_bench_dir(folder)
    roster = roster or Roster.builtin()
    questions, raw = _parse(path.resolve(), _signature(path))
    answers = raw.copy()
    names = answers[["file", "model"]].drop_duplicates()
    canonical = {
        (f, m): roster.canonical(m, file=f, column="model_id")
        for f, m in names.itertuples(index=False)
    }
    answers["model"] = [canonical[k] for k in zip(answers["file"], answers["model"], strict=True)]
    dup = answers.duplicated(["question_id", "model", "turn"])
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise InputError(
            f"model {answers['model'].iloc[i]!r} answers question "
            f"{answers['question_id'].iloc[i]} twice",
            file=answers["file"].iloc[i],
            fix="keep one answer file per model",
        )
    out = answers.merge(questions, on=["question_id", "turn"], how="left", validate="m:1")
    unknown = out["question"].isna()
    if unknown.any():
        i = int(np.flatnonzero(unknown.to_numpy())[0])
        raise InputError(
            f"answer to unknown question {out['question_id'].iloc[i]} (turn {out['turn'].iloc[i]})",
            file=out["file"].iloc[i],
            fix="use the question.jsonl the answers were made for",
        )
    cols = ["question_id", "category", "turn", "model", "question", "answer"]
    return out.sort_values(["question_id", "model", "turn"], ignore_index=True)[cols]


def _turn1_answers(folder: Path, roster: Roster) -> pd.DataFrame:
    """Turn-1 texts ``question_id, model, answer`` from the human-judgment folder
    (``human_judgment_answers.jsonl``), else from ``../mt_bench/model_answer``."""
    afile = folder / ANSWERS_FILE
    if not afile.is_file():
        answers = read_mt_bench_answers(folder.parent / "mt_bench", roster=roster)
        return answers.loc[answers["turn"] == 1, ["question_id", "model", "answer"]]
    recs = read_jsonl(afile, keys=("question_id", "model", "answer"))
    answers = pd.DataFrame(recs, columns=["question_id", "model", "answer"])
    answers["question_id"] = _int_ids(answers["question_id"], file=afile, column="question_id")
    answers["model"] = roster.canonicalize(answers["model"], file=str(afile), column="model")
    dup = answers.duplicated(["question_id", "model"])
    if dup.any():
        raise InputError(
            "two answers for one (question_id, model)",
            file=afile,
            row=int(np.flatnonzero(dup.to_numpy())[0]) + 1,
        )
    return answers


def read_mt_bench_human(folder: Path, roster: Roster) -> pd.DataFrame:
    """Dataset ``mt-bench-human``: turn-1 expert votes aggregated per question and model pair.

    Needs ``folder/human_judgments.jsonl``, the turn-1 texts (``folder/
    human_judgment_answers.jsonl`` or ``../mt_bench/model_answer``) and
    ``../mt_bench/question.jsonl``. See the module docstring for ``human``.
    """
    vfile = folder / VOTES_FILE
    recs = read_jsonl(vfile, keys=("question_id", "model_a", "model_b", "winner"))
    votes = pd.DataFrame(recs, columns=["question_id", "judge", "model_a", "model_b", "winner"])
    votes["question_id"] = _int_ids(votes["question_id"], file=vfile, column="question_id")
    a = roster.canonicalize(votes["model_a"], file=str(vfile), column="model_a")
    b = roster.canonicalize(votes["model_b"], file=str(vfile), column="model_b")
    bad = ~votes["winner"].isin(WINNERS)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(
            f"unknown winner {votes['winner'].iloc[i]!r}",
            file=vfile,
            row=i + 1,
            column="winner",
            fix="use model_a, model_b or tie",
        )
    same = a == b
    if same.any():
        raise InputError(
            f"a vote compares {a[same].iloc[0]!r} with itself",
            file=vfile,
            row=int(np.flatnonzero(same.to_numpy())[0]) + 1,
            column="model_b",
        )
    lo = a.where(a < b, b)
    hi = a.where(a > b, b)
    # The vote seen from the alphabetically first model: 1 = it won, 0 = it lost, 0.5 = tie.
    winner = votes["winner"].to_numpy()
    lo_won = np.where(winner == "model_a", a == lo, b == lo).astype(float)
    score = np.where(winner == "tie", 0.5, lo_won)
    grouped = (
        pd.DataFrame(
            {"question_id": votes["question_id"], "model_a": lo, "model_b": hi, "s": score}
        )
        .groupby(["question_id", "model_a", "model_b"], sort=True)["s"]
        .agg(["mean", "size"])
        .reset_index()
        .rename(columns={"mean": "human", "size": "human_votes"})
    )

    questions = read_mt_bench_questions(folder.parent / "mt_bench")
    turn1 = questions.loc[questions["turn"] == 1, ["question_id", "category", "question"]]
    table = grouped.merge(turn1, on="question_id", how="left", validate="m:1")
    if table["question"].isna().any():
        qid = table.loc[table["question"].isna(), "question_id"].iloc[0]
        raise InputError(
            f"votes on question {qid}, which is not in mt_bench/question.jsonl",
            file=vfile,
            column="question_id",
        )
    answers = _turn1_answers(folder, roster)
    for side in ("a", "b"):
        table = table.merge(
            answers.rename(columns={"model": f"model_{side}", "answer": f"response_{side}"}),
            on=["question_id", f"model_{side}"],
            how="left",
            validate="m:1",
        )
        lacking = table[f"response_{side}"].isna()
        if lacking.any():
            row = table[lacking].iloc[0]
            raise InputError(
                f"no turn-1 answer of {row[f'model_{side}']!r} to question {row['question_id']}",
                file=folder / ANSWERS_FILE,
                fix="use the answers the votes were cast on",
            )

    qid = table["question_id"].astype(str)
    table["item_id"] = SOURCE + ":" + qid + ":" + table["model_a"] + ":" + table["model_b"]
    table["prompt_id"] = qid
    table["prompt"] = table["question"]
    table["judge"] = None
    for col in ("p_a_first", "p_a_second", "p_a"):
        table[col] = np.nan
    table["source"] = SOURCE
    table["task"] = "mt-bench"
    table["len_a"] = word_count(table["response_a"])
    table["len_b"] = word_count(table["response_b"])
    cols = [
        "item_id",
        "prompt_id",
        "model_a",
        "model_b",
        "human",
        "judge",
        "p_a_first",
        "p_a_second",
        "p_a",
        "prompt",
        "response_a",
        "response_b",
        "source",
        "task",
        "category",
        "len_a",
        "len_b",
        "human_votes",
    ]
    return validate_pairs(table[cols], file=vfile)


register(
    Dataset(
        name="mt-bench-human",
        folder="mt_bench_human",
        table="pairs",
        summary="MT-Bench turn-1 expert votes, one human-only row per question and model pair "
        "(share of votes for a, ties = 0.5), with texts; 6 generators, 80 questions",
        reader=read_mt_bench_human,
    )
)
