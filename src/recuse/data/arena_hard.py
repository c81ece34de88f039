"""Arena-Hard-Auto judgments (``model_judgment/<judge>/<model>.jsonl``) as ``pairs``.

Arena-Hard-Auto's ``gen_judgment.py`` writes one JSON line per (question, model)
comparing the model's answer with a baseline's, in two games:

* v2.0: ``uid, category, judge, model, baseline, games``;
* v0.1: ``question_id, model, judge, games`` (the baseline was fixed by the config,
  ``baseline_model: gpt-4-0314``, and is not in the record).

Game 1 (``games[0]``) shows the **baseline** as assistant A (first) and the model as
B; game 2 swaps them. Each game holds the ``score`` the judge's verdict label parsed to
(``A>>B``, ``A>B``, ``A=B``, ``B>A``, ``B>>A``; upstream's table also reads ``A<B``,
``A<<B``, ``B<A``, ``B<<A``, ``B=A``) or ``null`` when no single label was found; in
v2.0 a whole game is ``null`` when the API call returned nothing.

One ``pairs`` row per record with a = the evaluated **model** and b = the baseline
(upstream scores the model against the baseline, so ``p_a`` is the model's win
probability):

    p_a_first  = P(a better) in game 2 (a shown first)
    p_a_second = P(a better) in game 1 (a shown second)

A verdict's direction is kept, its strength is not: P(a better) = 1 when a wins
(slightly or significantly), 0.5 for a tie, 0 when a loses. The strength is kept in
``strength_first`` / ``strength_second``: +2 / +1 / 0 / -1 / -2 for a much better /
better / tie / worse / much worse, in the a/b frame; ``baseline`` repeats ``model_b``
(the length-controlled win rate reads it to know which side is the baseline).
Upstream's leaderboard instead counts a significant win (``>>``) as three wins in its
Bradley-Terry fit (``weight=3``); recuse's metrics read a probability, so it keeps the
strength beside it rather than inventing a probability for "slightly better". A
``null`` score is a missing verdict with status ``unparsed``, a ``null`` game one with
status ``failed``. ``arena_hard_version`` says which layout the record came in
(``"v2.0"``: it has ``uid``; ``"v0.1"``: ``question_id``), for the leaderboard rule of
that version's ``show_result.py`` (:func:`recuse.metrics.tool_scores.arena_hard_battles`:
v2.0 leaves out a whole record with a ``null`` game or score, v0.1 that game alone).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from recuse.data.model_names import UnknownModels, canonicalize_models
from recuse.errors import InputError
from recuse.files import read_jsonl
from recuse.roster import Roster
from recuse.tables import shown, validate_pairs

__all__ = ["LABELS", "V01_BASELINE", "read_arena_hard"]

# verdict label -> strength for assistant A (shown first): +2 much better ... -2 much worse
LABELS: dict[str, int] = {
    "A>>B": 2,
    "A>B": 1,
    "A=B": 0,
    "B>A": -1,
    "B>>A": -2,
    "A<<B": -2,
    "A<B": -1,
    "B=A": 0,
    "B<A": 1,
    "B<<A": 2,
}
V01_BASELINE = "gpt-4-0314"  # arena-hard-v0.1's config: baseline_model


def _name(value: Any, *, path: Path, row: int, column: str) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int) or str(value).strip() == "":
        raise InputError(
            f"expected a name or id, found {shown(value)}",
            file=path,
            row=row,
            column=column,
            fix="Arena-Hard-Auto writes uid / question_id, model, judge and baseline as text",
        )
    return str(value).strip()


def _game(game: Any, *, path: Path, row: int, index: int) -> tuple[float, str]:
    """Strength for assistant A of ``games[index]`` (NaN when missing) and its status."""
    where = f"games[{index}].score"
    if game is None:
        return np.nan, "failed"
    if not isinstance(game, dict) or "score" not in game:
        raise InputError(
            f"a game must be an object with a score, found {shown(game)}",
            file=path,
            row=row,
            column=f"games[{index}]",
            fix="each game is {score, judgment, ...} as gen_judgment.py writes it",
        )
    score = game["score"]
    if score is None:
        return np.nan, "unparsed"
    label = score.strip() if isinstance(score, str) else score
    if not isinstance(label, str) or label not in LABELS:
        raise InputError(
            f"unknown verdict {shown(score)}",
            file=path,
            row=row,
            column=where,
            fix="Arena-Hard-Auto scores are A>>B, A>B, A=B, B>A, B>>A (or null when unparsed)",
        )
    return float(LABELS[label]), "ok"


def read_arena_hard(
    path: str | Path,
    *,
    baseline: str | None = None,
    roster: Roster | None = None,
    unknown_models: UnknownModels = "keep",
) -> pd.DataFrame:
    """An Arena-Hard-Auto judgment file (v0.1 or v2.0 layout) as a validated ``pairs`` table.

    ``baseline`` names the baseline model of records that do not carry one (v0.1);
    default :data:`V01_BASELINE`, the baseline of arena-hard-v0.1's config. A record
    without ``games``, ``model`` or ``judge``, with more than two games, or with a
    verdict label outside :data:`LABELS` raises :class:`InputError` naming the line and
    field.
    """
    path = Path(path).expanduser()
    records = read_jsonl(path, keys=("model", "judge", "games"))
    if not records:
        raise InputError("the file holds no judgments", file=path, fix="give a judgment .jsonl")
    rows = []
    for row, rec in enumerate(records, start=1):
        key = "uid" if "uid" in rec else "question_id"
        if key not in rec:
            raise InputError(
                "the record has neither uid (v2.0) nor question_id (v0.1)",
                file=path,
                row=row,
                column="uid",
                fix="give the judgment files gen_judgment.py wrote",
            )
        qid = _name(rec[key], path=path, row=row, column=key)
        model = _name(rec["model"], path=path, row=row, column="model")
        judge = _name(rec["judge"], path=path, row=row, column="judge")
        base = rec.get("baseline", baseline or V01_BASELINE)
        base = _name(base, path=path, row=row, column="baseline")
        games = rec["games"]
        if not isinstance(games, list) or not 1 <= len(games) <= 2:
            raise InputError(
                f"games must be a list of one or two games, found {shown(games)}",
                file=path,
                row=row,
                column="games",
                fix="game 1 shows the baseline first, game 2 the model first",
            )
        # game 1: baseline is A (a = model shown second); game 2: model is A (shown first)
        s1, st1 = _game(games[0], path=path, row=row, index=0)
        s2, st2 = (np.nan, "missing")
        if len(games) == 2:
            s2, st2 = _game(games[1], path=path, row=row, index=1)
        second, first = 0.0 - s1, s2  # strengths for a in the a/b frame (no -0.0)
        rows.append(
            {
                "item_id": f"{qid}/{model}/{base}",
                "prompt_id": qid,
                "model_a": model,
                "model_b": base,
                "human": np.nan,
                "judge": judge,
                "p_a_first": np.sign(first) / 2 + 0.5,
                "p_a_second": np.sign(second) / 2 + 0.5,
                "p_a": np.nan,
                "status_first": st2,
                "status_second": st1,
                "source": "arena-hard",
                "category": rec.get("category") if isinstance(rec.get("category"), str) else None,
                "strength_first": first,
                "strength_second": second,
                "arena_hard_version": "v2.0" if key == "uid" else "v0.1",
            }
        )
    frame = canonicalize_models(
        pd.DataFrame(rows),
        ("model_a", "model_b", "judge"),
        roster or Roster.builtin(),
        file=path,
        unknown_models=unknown_models,
    )
    frame["baseline"] = frame["model_b"]  # named by the record: a fixed-baseline comparison
    return validate_pairs(frame, file=path)
