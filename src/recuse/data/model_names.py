"""Model and judge names to canonical ids through the roster: each distinct name looked
up once, unknown names kept as models of their own (one note) or refused."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from recuse.cells import as_text
from recuse.errors import InputError, ReaderNote
from recuse.roster import Roster, split_dated
from recuse.tables import VERDICTS, TableKind, shown, side_word

__all__ = [
    "MODEL_COLUMNS",
    "SnapshotsKeptApart",
    "UnknownModels",
    "canonical_ids",
    "canonical_label_names",
    "canonicalize_models",
]

UnknownModels = Literal["error", "keep"]

# columns holding model names, per table kind
MODEL_COLUMNS: dict[TableKind, tuple[str, ...]] = {
    "pairs": ("model_a", "model_b", "judge"),
    "ratings": ("model", "judge"),
}


class SnapshotsKeptApart(ReaderNote):
    """Dated model names that the roster maps to one id were kept as models of their own."""


LABELS = ("human", *VERDICTS)


def canonical_label_names(df: pd.DataFrame, roster: Roster) -> pd.DataFrame:
    """Cells of the verdict and label columns that name a model the roster knows become
    its canonical id, so they compare with the canonical ``model_a`` / ``model_b``."""
    out = df
    numbers_named = _names_a_number(roster)
    for col in LABELS:
        if col not in out.columns or pd.api.types.is_numeric_dtype(out[col].dtype):
            continue
        s = out[col]
        codes, uniques = pd.factorize(s, use_na_sentinel=True)
        values = np.asarray(uniques, dtype=object)
        # a number (a probability, AlpacaEval's 1/2/1.5) names no model unless the roster
        # has a name that reads as one (an alias "1.5" or "007": skipped, a label naming it
        # read as a tie or refused): the other texts only are looked up then (200,000
        # probabilities as texts took 3 s, each keyed)
        number = _numbers(values) & (not numbers_named)
        at = [i for i, u in enumerate(values) if not number[i] and isinstance(u, str)
              and u.strip() and side_word(u) is None]  # fmt: skip
        ids, _ = roster.lookup(pd.Series(values[at], dtype=object))
        if ids.isna().all():
            continue
        # each distinct value once: its canonical id, or itself; missing stays missing
        found = ids.notna().to_numpy()
        new = np.append(values, np.array([None], dtype=object))
        new[np.asarray(at, dtype=int)[found]] = ids.to_numpy(dtype=object)[found]
        out = out.copy() if out is df else out
        out[col] = pd.Series(new[codes], index=s.index, dtype=object).where(s.notna(), s)
    return out


def _names_a_number(roster: Roster) -> bool:
    """Whether an id or alias of ``roster`` reads as a number (as :func:`_numbers` reads
    a cell): a label cell that is a number may then name a model."""
    names = [name for e in roster.entries.values() for name in (e.id, *e.aliases)]
    return bool(_numbers(np.asarray(names, dtype=object)).any())


def _numbers(values: np.ndarray) -> np.ndarray:
    """Which of ``values`` (distinct cells) read as a finite or infinite number; a cell
    pandas cannot read (a list) is none."""
    try:
        read = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce")
    except (TypeError, ValueError):
        return np.zeros(len(values), dtype=bool)
    return np.asarray(read.notna().to_numpy(), dtype=bool)


def _blank_name(name: object) -> bool:
    return isinstance(name, str) and not name.strip()


def canonical_ids(
    names: pd.Series,
    roster: Roster,
    *,
    file: str | Path | None = None,
    column: str | None = None,
    unknown_models: UnknownModels = "keep",
) -> pd.Series:
    """``roster.canonicalize(names)``, looking each distinct name up once (fast on long
    columns with few models). An unknown name is read as its own model (one note), or
    with ``unknown_models="error"`` raises naming its first row, as
    :meth:`Roster.canonicalize` does. A blank name ("" or spaces, as JSON can give) is
    missing, as an empty CSV cell is."""
    fname = str(file) if file is not None else None
    codes, uniques = pd.factorize(names, use_na_sentinel=True)
    distinct = [None if _blank_name(u) else u for u in uniques.tolist()]
    how = unknown_models
    try:
        ids = roster.canonicalize(
            pd.Series(distinct, dtype=object), file=fname, column=column, unknown=how
        )
    except InputError:
        real = names.mask(names.map(_blank_name).astype(bool))
        roster.canonicalize(real, file=fname, column=column, unknown=how)  # the real row
        raise
    # code -1 (missing name) picks the trailing None
    lookup = np.array([*ids.tolist(), None], dtype=object)
    return pd.Series(lookup[codes], index=names.index, dtype=object)


def canonicalize_models(
    df: pd.DataFrame,
    columns: tuple[str, ...],
    roster: Roster,
    *,
    file: str | Path | None = None,
    unknown_models: UnknownModels = "keep",
) -> pd.DataFrame:
    """Map the model-name ``columns`` of ``df`` to canonical ids (in a copy).

    With ``unknown_models="keep"`` (the default) a name the roster lacks becomes its
    own id and family and is added to ``roster`` (so later family look-ups on the same
    roster work), and one :class:`~recuse.roster.ModelsNotInRoster` note lists them;
    with ``"error"`` it raises :class:`InputError` naming the row.
    """
    out = df.copy()
    fname = str(file) if file is not None else None
    present_cols = [c for c in columns if c in out.columns]
    for col in present_cols:  # model 7 is "7", where a missing name made the column floats
        if out[col].dtype.kind == "f":
            out[col] = out[col].astype(object).where(out[col].isna(), as_text(out[col]))
    met = (
        pd.unique(pd.concat([out[c] for c in present_cols], ignore_index=True).dropna())
        if present_cols
        else np.array([], dtype=object)
    )
    split = split_dated(roster, met.tolist())
    if split:
        listed = ", ".join(f"{shown(n)} (not {shown(t)})" for n, t in sorted(split.items()))
        warnings.warn(
            f"{fname or 'the table'}: dated snapshots kept as models of their own though "
            f"the roster names them as one: {listed}",
            SnapshotsKeptApart,
            stacklevel=2,
        )
    if unknown_models == "error":  # every unknown name of every column in one message
        counts: dict[object, int] = {}
        first: tuple[int, str] | None = None
        for col in present_cols:  # each distinct name looked up once
            codes, uniques = pd.factorize(out[col], use_na_sentinel=True)
            distinct = pd.Series([None if _blank_name(u) else u for u in uniques], dtype=object)
            _, unknown = roster.lookup(distinct)
            bad = np.flatnonzero(unknown.to_numpy())
            if bad.size:
                rows = np.bincount(codes[codes >= 0], minlength=len(uniques))
                for k in bad:
                    counts[distinct.iloc[k]] = counts.get(distinct.iloc[k], 0) + int(rows[k])
                i = int(np.flatnonzero(np.isin(codes, bad))[0])
                if first is None or i < first[0]:
                    first = (i, col)
        if first is not None:
            raise roster.unknown_error(counts, file=fname, row=first[0] + 1, column=first[1])
    if unknown_models == "keep":  # one note for every column's unknown names
        present = [u for u in met.tolist() if not _blank_name(u)]
        roster.keep(present, where=fname)
    for col in present_cols:
        out[col] = canonical_ids(out[col], roster, file=fname, column=col)
    return out
