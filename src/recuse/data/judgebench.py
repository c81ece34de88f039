"""JudgeBench (Tan et al. 2024): response pairs labelled by objective correctness, and judges.

Layout (upstream, see the data README): ``data/*.jsonl`` holds the pairs
(``pair_id, source, question, response_model, response_A, response_B, label`` with
label ``"A>B"`` or ``"B>A"`` = which response is correct) and each
``outputs/...,judge_name=<name>,judge_model=<model>.jsonl`` holds one judge's
``judgments``: element 0 judges (A, B) as given, element 1 the swapped order with
its ``decision`` stated in the SWAPPED frame. Both LLM judges (``arena_hard``)
and reward models (``reward_model``) are read.

Mapping to ``pairs`` (a = response_A, b = response_B), with
``v("A>B") = 1, v("B>A") = 0, v("A=B") = 0.5`` (a tie verdict):

    human      = 1 if label == "A>B" else 0
    p_a_first  = v(judgments[0].decision)          (a shown first)
    p_a_second = 1 - v(judgments[1].decision)      (a shown second, back to the a/b frame)

A reward model's element holds its two rewards (``judgment.scores``, in the order shown)
and upstream's ``decision`` = "A>B" if the first is higher else "B>A": equal rewards,
a tie, were written "B>A", which read in both orders as a flip towards the answer shown
second (Skywork-Reward-Gemma-2-27B on 3 pairs, Skywork-Reward-Llama-3.1-8B on 1, each an
equal bfloat16 reward in both orders: a position preference of 0.496 for a model that
scores each answer alone). Two equal rewards are read as ``v = 0.5``, a tie. A reward
that is not a finite number (NaN, ±inf: JSON's ``NaN``, ``Infinity``) was written "B>A"
too (``NaN > x`` is false) and is no decision: NaN with ``status_* = "unparsed"``.

A null decision gives NaN with ``status_* = "unparsed"``; a null judgment element
(the judge call itself failed) gives NaN with ``"failed"``. One row per (pair,
judge); ``item_id = "judgebench:<pair_id>"``, ``prompt_id`` is shared by pairs with
the same question, ``model_a = model_b = response_model``, ``task = source``,
``category = judge_name``.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from recuse.data.registry import Dataset, register
from recuse.errors import DatasetNotFoundError, InputError
from recuse.files import check_text, read_jsonl, word_count
from recuse.roster import Roster
from recuse.tables import validate_pairs

__all__ = ["read_judgebench"]

SOURCE = "judgebench"
PAIR_FIELDS = (
    "pair_id", "source", "question", "response_model", "response_A", "response_B", "label",
)  # fmt: skip
LABELS = {"A>B": 1.0, "B>A": 0.0}
DECISIONS: dict[Any, float] = {"A>B": 1.0, "B>A": 0.0, "A=B": 0.5}


def _file_tags(path: Path) -> dict[str, str]:
    """``key=value`` parts of an upstream file name (``dataset=…,judge_model=….jsonl``)."""
    stem = path.name.removesuffix(".jsonl")
    return dict(part.split("=", 1) for part in stem.split(",") if "=" in part)


def _prompt_id(question: str) -> str:
    return SOURCE + ":q" + hashlib.sha1(question.encode("utf-8")).hexdigest()[:12]


def _read_pairs(folder: Path, roster: Roster) -> pd.DataFrame:
    files = sorted((folder / "data").glob("*.jsonl"))
    if not files:
        raise DatasetNotFoundError(f"no JudgeBench pair files in {folder / 'data'}")
    frames = []
    for file in files:
        frame = pd.DataFrame(read_jsonl(file, keys=PAIR_FIELDS), columns=list(PAIR_FIELDS))
        check_text(frame, ("pair_id", "source", "question", "response_A", "response_B"), file=file)
        human = frame["label"].map(LABELS)
        if human.isna().any():
            i = int(np.flatnonzero(human.isna().to_numpy())[0])
            raise InputError(
                f"label {frame['label'].iloc[i]!r} is not 'A>B' or 'B>A'",
                file=file,
                row=i + 1,
                column="label",
            )
        frame["human"] = human
        frame["model"] = roster.canonicalize(
            frame["response_model"], file=str(file), column="response_model"
        )
        frames.append(frame)
    pairs = pd.concat(frames, ignore_index=True)
    pairs["len_a"] = word_count(pairs["response_A"])
    pairs["len_b"] = word_count(pairs["response_B"])
    pairs["prompt_id"] = pairs["question"].map(_prompt_id)
    dup = pairs["pair_id"].duplicated()
    if dup.any():
        raise InputError(
            f"pair_id {pairs['pair_id'][dup].iloc[0]!r} appears twice in {folder / 'data'}",
            column="pair_id",
        )
    return pairs


def _equal_rewards(inner: Any) -> bool:
    """Whether a reward model's judgment holds two equal, finite rewards (``scores``).

    >>> _equal_rewards({"scores": [13.9375, 13.9375]}), _equal_rewards({"scores": [2, 1]})
    (True, False)
    >>> _equal_rewards({"response": "[[A>B]]"}), _equal_rewards(None)
    (False, False)
    """
    scores = inner.get("scores") if isinstance(inner, dict) else None
    if not isinstance(scores, list) or len(scores) != 2:
        return False
    a, b = scores
    numbers = all(isinstance(x, int | float) and not isinstance(x, bool) for x in (a, b))
    return numbers and math.isfinite(a) and a == b


def _unscored(inner: Any) -> bool:
    """Whether a reward model's judgment holds a reward that is not a finite number,
    which upstream's ``"A>B" if first > second else "B>A"`` wrote "B>A".

    >>> _unscored({"scores": [float("nan"), 1.5]}), _unscored({"scores": [2.0, 1.5]})
    (True, False)
    >>> _unscored({"response": "[[A>B]]"})
    False
    """
    scores = inner.get("scores") if isinstance(inner, dict) else None
    if not isinstance(scores, list) or len(scores) != 2:
        return False
    numbers = [x for x in scores if isinstance(x, int | float) and not isinstance(x, bool)]
    return any(not math.isfinite(x) for x in numbers)


def _decision(judgment: Any, *, file: Path, row: int, order: int) -> tuple[float, str]:
    if judgment is None:
        return np.nan, "failed"
    if not isinstance(judgment, dict) or "decision" not in judgment:
        raise InputError(
            f"judgments[{order}] is not an object with a 'decision'",
            file=file,
            row=row,
            column="judgments",
        )
    value = judgment["decision"]
    if value is None:
        return np.nan, "unparsed"
    if value in ("A>B", "B>A") and _unscored(judgment.get("judgment")):
        return np.nan, "unparsed"  # upstream's "B>A" of a NaN or infinite reward
    if value in ("A>B", "B>A") and _equal_rewards(judgment.get("judgment")):
        return 0.5, "ok"  # upstream wrote a tie of the rewards as "B>A"
    try:
        return DECISIONS[value], "ok"
    except (KeyError, TypeError):
        raise InputError(
            f"decision {value!r} is not 'A>B', 'B>A', 'A=B' or null",
            file=file,
            row=row,
            column=f"judgments[{order}].decision",
        ) from None


def _read_judge(file: Path, pairs: pd.DataFrame, roster: Roster) -> pd.DataFrame:
    tags = _file_tags(file)
    if "judge_model" not in tags:
        raise InputError(
            "the file name does not say judge_model=…",
            file=file,
            fix="keep the upstream file names (…,judge_name=…,judge_model=….jsonl)",
        )
    judge = roster.canonical(tags["judge_model"], file=str(file), column="judge_model")
    records = read_jsonl(file, keys=("pair_id", "judge_name", "judgments"))
    rows: dict[str, list[Any]] = {k: [] for k in ("p1", "s1", "p2", "s2")}
    for row, rec in enumerate(records, start=1):
        judgments = rec["judgments"]
        if not isinstance(judgments, list) or len(judgments) != 2:
            raise InputError(
                "judgments must be a list of two (original order, swapped order)",
                file=file,
                row=row,
                column="judgments",
            )
        p1, s1 = _decision(judgments[0], file=file, row=row, order=0)
        p2, s2 = _decision(judgments[1], file=file, row=row, order=1)
        rows["p1"].append(p1)
        rows["s1"].append(s1)
        rows["p2"].append(1.0 - p2)  # swapped frame -> a/b frame
        rows["s2"].append(s2)
    ids = pd.Series([rec["pair_id"] for rec in records])
    if ids.duplicated().any():
        raise InputError(
            f"pair_id {ids[ids.duplicated()].iloc[0]!r} appears twice",
            file=file,
            row=int(np.flatnonzero(ids.duplicated().to_numpy())[0]) + 1,
            column="pair_id",
        )
    verdicts = pd.DataFrame(
        {
            "pair_id": ids,
            "judge": judge,
            "category": [rec["judge_name"] for rec in records],
            "p_a_first": rows["p1"],
            "status_first": rows["s1"],
            "p_a_second": rows["p2"],
            "status_second": rows["s2"],
        }
    )
    out = verdicts.merge(pairs, on="pair_id", how="left", validate="1:1")
    unknown = out["question"].isna()
    if unknown.any():
        i = int(np.flatnonzero(unknown.to_numpy())[0])
        raise InputError(
            f"pair_id {out['pair_id'].iloc[i]!r} is not in data/*.jsonl",
            file=file,
            row=i + 1,
            column="pair_id",
            fix="use the outputs made for these pairs",
        )
    return out


def read_judgebench(folder: Path, roster: Roster) -> pd.DataFrame:
    """Dataset ``judgebench``: every judge file in ``outputs/`` joined to ``data/`` on pair_id.

    See the module docstring for the mapping. Pairs that no judge saw are left out.
    """
    pairs = _read_pairs(folder, roster)
    files = sorted((folder / "outputs").glob("*.jsonl"))
    if not files:
        raise DatasetNotFoundError(f"no JudgeBench judge outputs in {folder / 'outputs'}")
    table = pd.concat([_read_judge(f, pairs, roster) for f in files], ignore_index=True)
    table["item_id"] = SOURCE + ":" + table["pair_id"].astype(str)
    table["model_a"] = table["model"]
    table["model_b"] = table["model"]
    table["p_a"] = np.nan  # filled by validate_pairs from the two orders
    table["prompt"] = table["question"]
    table["response_a"] = table["response_A"]
    table["response_b"] = table["response_B"]
    table["task"] = table["source"]
    table["source"] = SOURCE
    cols = [
        "item_id", "prompt_id", "model_a", "model_b", "human", "judge", "p_a_first",
        "p_a_second", "p_a", "prompt", "response_a", "response_b", "source", "task",
        "category", "len_a", "len_b", "status_first", "status_second",
    ]  # fmt: skip
    return validate_pairs(table[cols], file=folder / "outputs")


register(
    Dataset(
        name="judgebench",
        folder="judgebench",
        table="pairs",
        summary="JudgeBench: 620 same-model response pairs labelled by correctness; 2 LLM judges "
        "(arena_hard) and 5 reward models, both orders",
        reader=read_judgebench,
        label="objective correctness (which response is right)",
        reference="correctness",
    )
)
