"""Probe tables: pairs tables with ``base_item, probe, treated`` (``recuse probe``),
their version names and the checks that keep a probe effect from being silently wrong.

Beside :mod:`recuse.tables` (whose ``validate_pairs`` calls :func:`check_probe_table`;
both read the cell helpers of :mod:`recuse.cells`), outside :mod:`recuse.probes`: the statistics
(:mod:`recuse.metrics.probes`, :mod:`recuse.metrics.recognition`) read probe tables
without loading the judging runner that the probes' rewrites need.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from recuse.cells import among, check_scalars, first_true, shown
from recuse.errors import InputError
from recuse.probe_edits import RECOGNITION as RECOGNITION

__all__ = ["ORIGINAL", "PROBE_COLUMNS", "RECOGNITION", "check_probe_table", "is_probe_table"]

#: the columns a probe table adds to pairs (recuse.probes): kept, never verdicts; a
#: table holding all three is a probe table (:func:`check_probe_table`)
PROBE_COLUMNS = ("base_item", "probe", "treated")
#: the probe table's version name of the unedited pair (RECOGNITION: recuse.probe_edits)
ORIGINAL = "original"


def is_probe_table(df: pd.DataFrame) -> bool:
    """Whether ``df`` holds every probe column (:data:`PROBE_COLUMNS`)."""
    return set(PROBE_COLUMNS) <= set(df.columns)


def check_probe_table(df: pd.DataFrame, *, file: str | Path | None = None) -> pd.DataFrame:
    """Check and normalise the probe columns of a probe table; returns a new DataFrame
    (``df`` itself when it is not a probe table).

    ``probe`` and ``treated`` are read case- and space-insensitively; every row needs a
    ``base_item``, a ``probe`` (its version: ``original``, ``placebo``, a probe, or
    ``self-recognition``) and ``treated`` = ``a`` or ``b``. The versions of a base pair
    share one prompt; its edited versions share one treated side, which its original
    row takes (the original has no edit and may leave treated empty; without edits it
    takes the self-recognition rows' side, the judge's own answer, which those rows
    keep); where the texts are given, the answer that is not edited is the same in
    every version; a judge judges each version of a base pair once. A row with all
    three empty is a plain pair judged beside the probes (e.g. ``recuse judge`` into the
    same store) and stays one; a row with only some empty is an error. Anything else is an
    :class:`InputError` naming the row: a probe effect read off such a table would be
    silently wrong (a side counted as the other, a version counted twice).
    """
    if not is_probe_table(df):
        return df
    fname = str(file) if file is not None else None
    out = df.copy()
    check_scalars(out, PROBE_COLUMNS, file=fname)
    texts = {}
    for col in PROBE_COLUMNS:
        cells = out[col].astype(object)  # plain text: no arrow booleans below (string[pyarrow])
        text = cells.map(lambda v: v if isinstance(v, str) else "" if pd.isna(v) else str(v))
        texts[col] = text.str.strip() if col == "base_item" else text.str.strip().str.lower()
    # a row with all three empty is a plain pair judged beside the probes (one store)
    plain = pd.concat([t == "" for t in texts.values()], axis=1).all(axis=1)
    # an original row may leave treated empty: it has no edit, it takes its edits' side
    side_later = (texts["treated"] == "") & (texts["probe"] == ORIGINAL) & ~plain
    for col, text in texts.items():
        empty = (text == "") & ~plain & ~(side_later & (col == "treated"))
        if empty.any():
            raise InputError(
                f"empty {col} in a probe table",
                file=fname,
                row=first_true(empty) + 1,
                column=col,
                fix="every row of a probe table names its base pair (base_item), its version "
                "(probe: original, placebo, a probe, self-recognition) and the edited side "
                "(treated: a or b); drop the probe columns to read it as plain pairs",
            )
        out[col] = text.where(~plain, np.nan)
    bad = ~out["treated"].isin(["a", "b"]) & ~plain & ~side_later
    if bad.any():
        i = first_true(bad)
        raise InputError(
            f"treated is {shown(df['treated'].iloc[i])}, expected a or b",
            file=fname,
            row=i + 1,
            column="treated",
            fix="treated names the side the probe edits: a or b",
        )
    if plain.all():
        return out
    base_rows = ~plain & (out["probe"] != RECOGNITION)
    _one_prompt_per_base(out, base_rows, fname)
    edits = out[~out["probe"].isin([ORIGINAL, RECOGNITION]) & ~plain]
    sides = edits.groupby("base_item", sort=False)["treated"].nunique()
    if (sides > 1).any():
        base = sides.index[sides.to_numpy() > 1][0]
        rows = edits[edits["base_item"] == base]
        side = rows["treated"].iloc[0]
        odd = rows[rows["treated"] != side]

        def versions(v: pd.DataFrame) -> str:
            return ", ".join(dict.fromkeys(v["probe"].astype(str)))

        raise InputError(
            f"base pair {shown(base)} is treated on side {side} in "
            f"{versions(rows[rows['treated'] == side])} but on side "
            f"{odd['treated'].iloc[0]} in {versions(odd)}",
            file=fname,
            row=first_true(
                (out["base_item"] == base)
                & ~out["probe"].isin([ORIGINAL, RECOGNITION])
                & ~plain
                & (out["treated"] != side)
            )
            + 1,
            column="treated",
            fix="one side is edited in every version of a base pair; correct treated",
        )
    # the original is unedited: its treated side is the edits' (a self-recognition run
    # into the same store may have written the judge's own side there); without edits
    # an empty one takes the self-recognition rows' side (the judge's own answer)
    side_of = edits.drop_duplicates("base_item").set_index("base_item")["treated"]
    is_original = (out["probe"] == ORIGINAL) & among(out["base_item"], side_of.index)
    out.loc[is_original, "treated"] = out.loc[is_original, "base_item"].map(side_of)
    asks = out[out["probe"] == RECOGNITION].drop_duplicates("base_item")
    pending = side_later & ~is_original
    own_side = asks.set_index("base_item")["treated"].astype(object)
    out.loc[pending, "treated"] = out.loc[pending, "base_item"].map(own_side).astype(object)
    unsided = pending & out["treated"].isna()
    if unsided.any():
        raise InputError(
            f"the original row of base pair {shown(out['base_item'][unsided].iloc[0])} has "
            "no treated side, and no edited or self-recognition version to take it from",
            file=fname,
            row=first_true(unsided) + 1,
            column="treated",
            fix="write a or b in treated: the side the probes of this base pair edit",
        )
    _unedited_answer_kept(out, base_rows, fname)
    key = ["judge", "base_item", "probe"] if "judge" in out.columns else ["base_item", "probe"]
    filled = out[key].astype(object).where(out[key].notna(), "\x00")  # no judge: one judge
    dup = filled.duplicated(keep=False) & ~plain
    if dup.any():
        rows = np.flatnonzero(dup.to_numpy())
        first = out.iloc[rows[0]]
        same = np.flatnonzero((filled == filled.iloc[rows[0]]).all(axis=1).to_numpy())
        ids = ", ".join(shown(out["item_id"].iloc[r]) for r in same[:4]) if "item_id" in out else ""
        raise InputError(
            f"version {shown(first['probe'])} of base pair {shown(first['base_item'])} appears "
            f"{len(same)} times for one judge (rows {', '.join(str(r + 1) for r in same[:4])}"
            + (f"; item_id {ids})" if ids else ")"),
            file=fname,
            row=int(same[1]) + 1,
            column="probe",
            fix="a judge judges each version of a base pair once; remove the repeated rows",
        )
    return out


def _probe_rows(out: pd.DataFrame, versions: pd.Series) -> pd.DataFrame:
    """The ``versions`` rows of ``out``, positionally indexed, with ``_row`` (file row)."""
    t = out[versions.to_numpy()].assign(_row=np.flatnonzero(versions.to_numpy()) + 1)
    t.index = pd.RangeIndex(len(t))
    return t


def _one_prompt_per_base(out: pd.DataFrame, versions: pd.Series, file: str | None) -> None:
    """The ``versions`` rows of a base pair are one prompt's pair (a base_item reused
    across prompts would mix pairs); refused with the row named."""
    if "prompt_id" not in out.columns:
        return
    t = _probe_rows(out, versions)
    first = t.groupby("base_item", sort=False)["prompt_id"].transform("first")
    odd = t["prompt_id"].astype(str) != first.astype(str)
    if odd.any():
        i = first_true(odd)
        raise InputError(
            f"base pair {shown(t['base_item'][i])} spans prompts {shown(first[i])} and "
            f"{shown(t['prompt_id'][i])}",
            file=file,
            row=int(t["_row"][i]),
            column="base_item",
            fix="base_item names one prompt's pair; give each pair its own base_item",
        )


def _unedited_answer_kept(out: pd.DataFrame, versions: pd.Series, file: str | None) -> None:
    """Where the texts are given, the ``versions`` rows of a base pair share the answer
    that is not edited (a treated side naming the unedited answer would turn every
    effect's sign); refused with the row named."""
    if not {"response_a", "response_b"} <= set(out.columns):
        return
    t = _probe_rows(out, versions)
    kept = t["response_b"].where(t["treated"] == "a", t["response_a"])
    given = t.assign(_kept=kept)[kept.notna()]
    base = given.groupby("base_item", sort=False)[["_kept", "probe"]].transform("first")
    odd = given["_kept"].astype(str) != base["_kept"].astype(str)
    if odd.any():
        i = first_true(odd)
        row = given.iloc[i]
        raise InputError(
            f"base pair {shown(row['base_item'])}: the answer that is not edited (response_"
            f"{'b' if row['treated'] == 'a' else 'a'}) differs between version "
            f"{shown(base['probe'].iloc[i])} and version {shown(row['probe'])}",
            file=file,
            row=int(row["_row"]),
            column="treated",
            fix="treated names the side the probes edit, and the other answer stays as it "
            "is in every version: check treated, or give the versions their own base_item",
        )
