"""A judge as the reference of a ratings table (``--reference-judge``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from recuse.errors import InputError
from recuse.roster import Roster
from recuse.tables import validate_ratings

__all__ = ["NO_REFERENCE", "reference_from_judge"]

#: ``frame.attrs`` key of the note (also in ``attrs["notes"]``) an importer leaves when
#: its ratings have no reference; a reference judge fills it in and drops the note
NO_REFERENCE = "no_reference_note"


def reference_from_judge(
    ratings: pd.DataFrame, judge: str, *, roster: Roster, file: str | Path | None = None
) -> pd.DataFrame:
    """``ratings`` with ``judge``'s ratings as the reference of the other judges.

    For every row of another judge, ``reference`` = ``judge``'s rating of the same
    (prompt_id, model, dimension) — NaN where it gave none (no row, or an unparsed or
    failed one: the favoritism fit then leaves the row out and counts it). ``judge``'s
    own rows become the reference and leave the table. ``frame.attrs["notes"]`` says so
    and how many rows found no reference. The reference judge may itself be biased: the
    estimates are then relative to it, which a note says too.

    Raises :class:`InputError` when the table already has a reference (it would be
    replaced), when ``judge`` is not one of its judges, or when no other judge is left.
    """
    fname = str(file) if file is not None else None
    known = sorted(ratings["judge"].dropna().astype(str).unique())
    name = roster.canonical(judge) if judge in roster else judge.strip()
    if name not in known:
        raise InputError(
            f"--reference-judge {judge!r} is not a judge of this table",
            file=fname,
            column="judge",
            fix=f"choose one of: {', '.join(known)}",
        )
    if ratings["reference"].notna().any():
        raise InputError(
            "the table already has reference scores; --reference-judge would replace them",
            file=fname,
            row=int(np.flatnonzero(ratings["reference"].notna().to_numpy())[0]) + 1,
            column="reference",
            fix="drop --reference-judge, or give a table without a reference column",
        )
    keys = ["prompt_id", "model", "dimension"]
    mine = ratings["judge"] == name
    if mine.all():
        raise InputError(
            f"{name} is the only judge: no other judge's ratings to compare with it",
            file=fname,
            column="judge",
            fix="give the ratings of the judges to audit and of the reference judge together",
        )
    ref = ratings.loc[mine, [*keys, "rating"]].rename(columns={"rating": "reference"})
    if ref.duplicated(keys).any():  # validate_ratings keeps (keys, judge) unique
        raise InputError(f"{name} rates one (prompt, model, dimension) twice", file=fname)
    others = ratings.loc[~mine].drop(columns=["reference"])
    out = others.merge(ref, on=keys, how="left", validate="many_to_one")
    out = out[[*ratings.columns]].reset_index(drop=True)
    missing = int(out["reference"].isna().sum())
    notes = [
        f"reference: {name}'s rating of the same prompt, model and dimension "
        f"({int(mine.sum()):,} of its rows serve as the reference and are not audited); "
        "a biased reference judge shifts every estimate, so the biases are relative to "
        f"{name}."
    ]
    if missing:
        notes.append(
            f"{missing:,} rows of other judges have no usable rating by {name} to compare "
            "with and are left out of the favoritism fit."
        )
    result = validate_ratings(out, file=file)
    kept = {k: v for k, v in ratings.attrs.items() if k != NO_REFERENCE}
    result.attrs = {**kept, "notes": notes}
    return result
