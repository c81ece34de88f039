"""FastChat MT-Bench judgments: pairwise (``model_judgment/<judge>_pair.jsonl``) as
``pairs``, single-answer grading (``<judge>_single.jsonl``, MT-Bench's default mode) as
``ratings``.

FastChat's ``gen_judgment.py --mode pairwise-baseline|pairwise-all`` writes one JSON
line per (question, model pair, turn) with both games of the pair:

    question_id, model_1, model_2, g1_winner, g2_winner, judge = [judge model, prompt
    name], g1_user_prompt, g1_judgment, g2_user_prompt, g2_judgment, turn, tstamp

Game 1 shows ``model_1`` as assistant A (first), game 2 shows ``model_2`` first.
FastChat maps both games' verdicts back to model names before writing, so each
winner is ``model_1``, ``model_2``, ``tie`` or ``error`` (no ``[[A]]``/``[[B]]``/``[[C]]``
found in the judge's reply; the reply is ``$ERROR$`` when the API call itself failed).

One ``pairs`` row per record, with a = ``model_1`` and b = ``model_2``:

    p_a_first  = P(a better) in game 1 (a shown first)  = 1 / 0.5 / 0 for model_1 / tie / model_2
    p_a_second = P(a better) in game 2 (a shown second) = 1 / 0.5 / 0 for model_1 / tie / model_2

``error`` is a missing verdict with status ``unparsed`` (``failed`` when the reply is
``$ERROR$``), never a default. ``item_id`` is ``<question_id>/<model_1>/<model_2>/turn<turn>``,
``prompt_id`` the question id, ``judge`` the judge model; the prompt template name is
kept in ``judge_prompt`` and the turn in ``turn``. The file has no human labels.

Single-answer grading (``gen_judgment.py --mode single``) writes one JSON line per
(question, model, turn):

    question_id, model, judge = [judge model, prompt name], user_prompt, judgment,
    score, turn, tstamp

``score`` is the number the judge wrote in ``[[rating]]`` (1–10 by the prompt), or -1
when no rating was found (FastChat's marker; the judgment is ``$ERROR$`` when the API
call failed). One ``ratings`` row per record:

    prompt_id = question_id, model = model, dimension = "turn 1" / "turn 2",
    judge = the judge model, rating = score

-1 is a missing rating with status ``unparsed`` (``failed`` for ``$ERROR$``), never a
score; so is a number off the prompt's 1–10 scale (FastChat's pattern takes any
``[[number]]``: a judge that wrote ``[[85]]`` did not follow the format). The file
holds no independent score, so ``reference`` is empty: name another judge whose
ratings of the same (question, model, turn) serve as one (``--reference-judge``), or
give a ratings file with a reference column.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from recuse.data.model_names import UnknownModels, canonicalize_models
from recuse.data.reference_judge import NO_REFERENCE
from recuse.errors import InputError
from recuse.files import read_jsonl
from recuse.roster import Roster
from recuse.tables import as_number, shown, validate_pairs, validate_ratings

__all__ = ["KEYS", "SINGLE_KEYS", "WINNERS", "read_fastchat_pairs", "read_fastchat_single"]

KEYS = ("question_id", "model_1", "model_2", "g1_winner", "g2_winner", "judge")
SINGLE_KEYS = ("question_id", "model", "judge", "score")
NO_RATING = -1  # FastChat's score when the judgment holds no [[rating]]
# P(model_1 better) for each winner FastChat writes; "error" = no verdict
WINNERS: dict[str, float] = {"model_1": 1.0, "model_2": 0.0, "tie": 0.5, "error": np.nan}
API_ERROR = "$ERROR$"  # FastChat's judgment text when every API retry failed


def _text(value: Any, *, path: Path, row: int, column: str) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int) or str(value).strip() == "":
        raise InputError(
            f"expected a name or id, found {shown(value)}",
            file=path,
            row=row,
            column=column,
            fix="FastChat writes question_id as a number and model names as text",
        )
    return str(value).strip()


def _judge(value: Any, *, path: Path, row: int) -> tuple[str, str]:
    """``(judge model, prompt name)`` from FastChat's ``[model, prompt]`` pair (or a name)."""
    if isinstance(value, str) and value.strip():
        return value.strip(), ""
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, str) and v.strip() for v in value)
    ):
        return value[0].strip(), value[1].strip()
    raise InputError(
        f"judge must be [judge model, prompt name], found {shown(value)}",
        file=path,
        row=row,
        column="judge",
        fix='FastChat writes e.g. "judge": ["gpt-4", "pair-v2"]',
    )


def _game(rec: dict[str, Any], g: str, *, path: Path, row: int) -> tuple[float, str]:
    """P(model_1 better) of game ``g`` ("g1"/"g2") and its status."""
    winner = rec[f"{g}_winner"]
    if not isinstance(winner, str) or winner not in WINNERS:
        raise InputError(
            f"unknown winner {shown(winner)}",
            file=path,
            row=row,
            column=f"{g}_winner",
            fix="FastChat pair judgments hold model_1, model_2, tie or error",
        )
    if winner != "error":
        return WINNERS[winner], "ok"
    failed = str(rec.get(f"{g}_judgment", "")).strip() == API_ERROR
    return np.nan, "failed" if failed else "unparsed"


def read_fastchat_pairs(
    path: str | Path,
    *,
    roster: Roster | None = None,
    unknown_models: UnknownModels = "keep",
) -> pd.DataFrame:
    """A FastChat ``*_pair.jsonl`` judgment file as a validated ``pairs`` table.

    Both games of each record become one row in the a/b frame (a = ``model_1``):
    ``p_a_first`` from game 1 (a shown first), ``p_a_second`` from game 2 (a shown
    second; FastChat already names the winner by model), ``p_a`` their mean over the
    games with a verdict. A winner outside model_1 / model_2 / tie / error, a record
    without one of the keys, or a single-answer grading record raises
    :class:`InputError` naming the line and field.
    """
    path = Path(path).expanduser()
    records = read_jsonl(path, keys=KEYS)
    if not records:
        raise InputError("the file holds no judgments", file=path, fix="give a *_pair.jsonl")
    rows = []
    for row, rec in enumerate(records, start=1):
        if "m1_score" in rec or "m2_score" in rec:
            raise InputError(
                "a single-answer grading record (m1_score / m2_score): both games hold the "
                "same unordered verdict, not one per order",
                file=path,
                row=row,
                column="m1_score",
                fix="import pairwise judgments (judge prompts of type pairwise)",
            )
        qid = _text(rec["question_id"], path=path, row=row, column="question_id")
        m1 = _text(rec["model_1"], path=path, row=row, column="model_1")
        m2 = _text(rec["model_2"], path=path, row=row, column="model_2")
        judge, prompt = _judge(rec["judge"], path=path, row=row)
        turn = _turn(rec, path=path, row=row)
        p1, s1 = _game(rec, "g1", path=path, row=row)
        p2, s2 = _game(rec, "g2", path=path, row=row)
        rows.append(
            {
                "item_id": f"{qid}/{m1}/{m2}/turn{turn}",
                "prompt_id": qid,
                "model_a": m1,
                "model_b": m2,
                "human": np.nan,
                "judge": judge,
                "p_a_first": p1,
                "p_a_second": p2,
                "p_a": np.nan,
                "status_first": s1,
                "status_second": s2,
                "source": "fastchat-pair",
                "turn": int(turn),
                "judge_prompt": prompt,
            }
        )
    frame = canonicalize_models(
        pd.DataFrame(rows),
        ("model_a", "model_b", "judge"),
        roster or Roster.builtin(),
        file=path,
        unknown_models=unknown_models,
    )
    return validate_pairs(frame, file=path)


def _turn(rec: dict[str, Any], *, path: Path, row: int) -> int:
    turn = rec.get("turn", 1)
    if isinstance(turn, bool) or turn not in (1, 2):
        raise InputError(
            f"turn must be 1 or 2, found {shown(turn)}",
            file=path,
            row=row,
            column="turn",
            fix="FastChat writes turn 1 (single-turn) or 2 (multi-turn judgments)",
        )
    return int(turn)


def _score(rec: dict[str, Any], *, path: Path, row: int) -> tuple[float, str]:
    """The rating of a single-answer record and its status (-1: no rating found)."""
    score = rec["score"]
    numeric = isinstance(score, int | float) and not isinstance(score, bool)
    number = as_number(score) if numeric else None
    if number is None or not np.isfinite(number):  # 10**19: no float64 ufunc takes it
        raise InputError(
            f"score must be a number, found {shown(score)}",
            file=path,
            row=row,
            column="score",
            fix="FastChat writes the judge's [[rating]] as a number, -1 when none was found",
        )
    if 1 <= number <= 10:  # the scale FastChat's single prompts ask for
        return number, "ok"
    if number != NO_RATING:
        return np.nan, "unparsed"  # off the scale: the judge broke the format
    failed = str(rec.get("judgment", "")).strip() == API_ERROR
    return np.nan, "failed" if failed else "unparsed"


def read_fastchat_single(
    path: str | Path,
    *,
    roster: Roster | None = None,
    unknown_models: UnknownModels = "keep",
) -> pd.DataFrame:
    """A FastChat ``*_single.jsonl`` judgment file as a validated ``ratings`` table
    (mapping in the module docstring). Extra columns: ``turn``, ``judge_prompt``,
    ``source``. A record without one of the keys, a score that is not a number, a turn
    other than 1 or 2, or a (question, model, turn, judge) graded twice (FastChat
    appends to the file when rerun) raises :class:`InputError` naming the line.
    ``frame.attrs["notes"]`` (and ``attrs[NO_REFERENCE]``) say that the reference is empty.
    """
    path = Path(path).expanduser()
    records = read_jsonl(path, keys=SINGLE_KEYS)
    if not records:
        raise InputError("the file holds no judgments", file=path, fix="give a *_single.jsonl")
    rows = []
    for row, rec in enumerate(records, start=1):
        if "g1_winner" in rec:
            raise InputError(
                "a pairwise record (g1_winner) in a single-answer file",
                file=path,
                row=row,
                column="g1_winner",
                fix="read *_pair.jsonl files with --format fastchat-pair",
            )
        judge, prompt = _judge(rec["judge"], path=path, row=row)
        turn = _turn(rec, path=path, row=row)
        rating, status = _score(rec, path=path, row=row)
        rows.append(
            {
                "prompt_id": _text(rec["question_id"], path=path, row=row, column="question_id"),
                "model": _text(rec["model"], path=path, row=row, column="model"),
                "dimension": f"turn {turn}",
                "judge": judge,
                "rating": rating,
                "reference": np.nan,
                "status": status,
                "source": "fastchat-single",
                "turn": turn,
                "judge_prompt": prompt,
            }
        )
    frame = canonicalize_models(
        pd.DataFrame(rows),
        ("model", "judge"),
        roster or Roster.builtin(),
        file=path,
        unknown_models=unknown_models,
    )
    out = validate_ratings(frame, file=path)
    out.attrs[NO_REFERENCE] = (
        f"{path.name}: FastChat single-answer grades hold no independent reference score, "
        "so the favoritism regression cannot be fitted; name a judge whose ratings of the "
        "same question, model and turn serve as the reference (--reference-judge NAME)."
    )
    out.attrs["notes"] = [*_off_scale(path, records), out.attrs[NO_REFERENCE]]
    return out


def _off_scale(path: Path, records: list[dict[str, Any]]) -> list[str]:
    """A note counting the scores off FastChat's 1–10 scale (not its -1), read as missing:
    a judge prompt asking for 0–10 had every 0 (its worst grades) left out of the ratings
    with nothing said but a count of rows without a rating."""
    off = [
        r["score"]
        for r in records
        if isinstance(r.get("score"), int | float)
        and not isinstance(r.get("score"), bool)
        and r["score"] != NO_RATING
        and not 1 <= r["score"] <= 10
    ]
    if not off:
        return []
    seen = ", ".join(f"{v:g}" for v in sorted(set(off))[:5])
    return [
        f"{path.name}: {len(off):,} score{'s' if len(off) != 1 else ''} off FastChat's 1–10 "
        f"scale ({seen}) read as missing (status unparsed), not as ratings — if the judge "
        "prompt asks for another scale (0–10), give the ratings as a ratings file"
    ]
