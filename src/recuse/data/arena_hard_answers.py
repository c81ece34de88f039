"""Arena-Hard-Auto's answer style counts (``model_answer/<model>.jsonl``), for its
style-controlled score.

Arena-Hard-Auto keeps each model's answers in ``data/<bench>/model_answer/``, beside
``model_judgment/``; its ``add_markdown_info.py`` adds to every answer a ``metadata``
object (``conv_metadata`` in older files) with the answer's ``token_len`` and its
``header_count``, ``list_count`` and ``bold_count`` (each an integer or an object of
integers per kind, e.g. ``{"h1": 0, "h2": 3, ...}``, summed here as upstream sums them).
The judgment files hold no answer, so the style-controlled score
(:func:`recuse.metrics.tool_scores.arena_hard_style_scores`) can be computed only where
these files sit beside the judgments; :func:`answers_folder` finds them.

One row per answer: ``model`` (canonical, as the judgments' reader names it),
``prompt_id`` (``uid`` in v2.0, ``question_id`` in v0.1) and the four counts. An answer
file without style metadata gives no rows (the score is then not style-controlled, and
the report says why).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from recuse.data.model_names import UnknownModels, canonicalize_models
from recuse.errors import InputError
from recuse.files import read_jsonl
from recuse.metrics.tool_scores import STYLE_FEATURES
from recuse.roster import Roster
from recuse.tables import shown

__all__ = ["answers_folder", "read_style_counts"]


def answers_folder(location: str | Path) -> Path | None:
    """The ``model_answer/`` folder beside the ``model_judgment/`` folder that holds
    ``location`` (a judgment file, a judge's folder or the ``model_judgment/`` root), or
    None when there is none."""
    if not str(location):
        return None
    here = Path(location)
    for folder in (here, *here.parents):
        if folder.name == "model_judgment":
            answers = folder.parent / "model_answer"
            return answers if answers.is_dir() else None
    return None


def _count(value: Any, *, path: Path, row: int, column: str) -> float:
    if isinstance(value, dict):
        return float(sum(_count(v, path=path, row=row, column=column) for v in value.values()))
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise InputError(
            f"expected a count (a non-negative number, or an object of them), found {shown(value)}",
            file=path,
            row=row,
            column=column,
            fix="add_markdown_info.py writes token_len and the header, list and bold counts",
        )
    return float(value)


def read_style_counts(
    folder: str | Path, *, roster: Roster | None = None, unknown_models: UnknownModels = "keep"
) -> pd.DataFrame:
    """Every answer's style counts in Arena-Hard-Auto's ``model_answer/`` ``folder``
    (module docstring): columns ``model``, ``prompt_id`` and
    :data:`~recuse.metrics.tool_scores.STYLE_FEATURES`; answers without metadata are
    left out. A metadata object missing a count, or a count that is not a number,
    raises :class:`InputError` naming the file, line and field."""
    folder = Path(folder)
    rows = []
    for path in sorted(folder.glob("*.jsonl")):
        for row, rec in enumerate(read_jsonl(path), start=1):
            meta = rec.get("metadata", rec.get("conv_metadata"))
            if not isinstance(meta, dict):
                continue
            key = "uid" if "uid" in rec else "question_id"
            model = rec.get("model", rec.get("model_id"))
            if key not in rec or not isinstance(model, str) or not model.strip():
                raise InputError(
                    "an answer with style metadata names no model or no uid / question_id",
                    file=path,
                    row=row,
                    column="model" if key in rec else key,
                    fix="give the model_answer files gen_answer.py wrote",
                )
            counts = {}
            for name in STYLE_FEATURES:
                if name not in meta:
                    raise InputError(
                        f"the answer's metadata has no {name}",
                        file=path,
                        row=row,
                        column=f"metadata.{name}",
                        fix="run Arena-Hard-Auto's add_markdown_info.py on the answers",
                    )
                counts[name] = _count(meta[name], path=path, row=row, column=f"metadata.{name}")
            rows.append({"model": model.strip(), "prompt_id": str(rec[key]).strip(), **counts})
    if not rows:
        return pd.DataFrame(columns=["model", "prompt_id", *STYLE_FEATURES])
    frame = pd.DataFrame(rows)
    return canonicalize_models(
        frame, ("model",), roster or Roster.builtin(), file=folder, unknown_models=unknown_models
    )
