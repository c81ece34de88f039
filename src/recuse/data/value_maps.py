"""Value maps (``--values``): how a pairs file writes its verdicts and labels, as
numbers P(a better), checked and applied before validation; :class:`ValueReading`
carries them with the swapped frame and the confidence column."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from recuse.cells import MISSING_TEXTS
from recuse.data.columns import ColumnMapping, mapping_pairs, no_such_column
from recuse.errors import ConfigError, InputError, ReaderNote
from recuse.tables import (
    PAIRS,
    VERDICTS,
    ConfidenceOf,
    SwappedFrame,
    as_number,
    caller_option,
    shown,
    side_word,
)

__all__ = [
    "ValueMap",
    "ValueMapUnmatched",
    "ValueReading",
    "apply_values",
    "check_value_map",
    "refuse_double_turn",
    "refuse_other_columns",
]

# {file column: {written value: P(a better)}}
ValueMap = Mapping[str, Mapping[str, float]]


class ValueMapUnmatched(ReaderNote):
    """A value map (``--values``) matched no cell of its column, so the column was read
    by the built-in rules alone."""


@dataclass(frozen=True)
class ValueReading:
    """How a pairs file writes its verdicts and labels, as one value for the callers
    that pass it along (:func:`recuse.data.inputs.load_input`, :func:`recuse.driver.audit`):
    the ``values``, ``swapped_frame``, ``confidence`` and ``confidence_of`` arguments of
    :func:`recuse.data.plain_tables.read_table`."""

    values: ValueMap | None = None
    swapped_frame: SwappedFrame = "original"
    confidence: str | None = None
    confidence_of: ConfidenceOf = "winner"


def check_value_map(values: ValueMap) -> dict[str, dict[str, float]]:
    """A value map with every number checked to be a probability in [0, 1]. Keys are
    matched case-insensitively after trimming (:func:`apply_values`), and kept as the
    user wrote them, for the notes to quote (of two spellings of one value, the first)."""
    out: dict[str, dict[str, float]] = {}
    for column, table in values.items():
        if not isinstance(table, Mapping) or not table:
            raise ConfigError(
                f"value map for {column!r}: give {{value: number}} pairs, "
                "e.g. {'A': 1, 'B': 0, 'tie': 0.5}"
            )
        for value, number in table.items():
            ok = isinstance(number, int | float) and not isinstance(number, bool)
            if not ok or not 0 <= number <= 1:  # (an int past any float is compared too)
                raise ConfigError(
                    f"value map for {column!r}: {value!r} → {shown(number)} is not a probability "
                    "in [0, 1] (P(a better): 1 = a, 0 = b, 0.5 = tie)"
                )
        folded: dict[str, float] = {}
        written: dict[str, str] = {}  # folded key -> the value as the user wrote it
        for value, number in table.items():
            key = _folded(value)
            same = key if key in folded else None
            if same is None and (x := _written_number(key)) is not None:
                same = next((k for k in folded if _written_number(k) == x), None)
            if same is not None and folded[same] != float(number):
                raise ConfigError(
                    f"value map for {column!r}: {written[same]!r} and {str(value)!r} are one "
                    f"value, given as {folded[same]:g} and {float(number):g} (values match "
                    "ignoring case and spaces, and numbers by value: 1 = 1.0) — keep one"
                )
            folded[key] = float(number)
            written.setdefault(key, str(value))
        out[column] = {written[key]: number for key, number in folded.items()}
    return out


def _folded(value: object) -> str:
    return str(value).strip().casefold()


def _written_number(key: str) -> float | None:
    """The finite number a folded value-map key or cell is written as (``1``, ``1.0``,
    ``1e0``), else None: numbers match by value, whatever a writer made of them (pandas
    writes a float column's 1 as ``1.0``, JSON and Parquet keep floats)."""
    number = as_number(key)
    return number if number is not None and np.isfinite(number) else None


def _value_lookup(mapped: Mapping[str, float]) -> Any:
    """A function from a cell to its number in the value map ``mapped`` (keys as
    written), or None: text matches trimmed and case-folded; a cell that is a number (or
    a text written as one) matches a key that is the same number (``1`` = ``1.0``).
    Missing, boolean and nested cells match nothing (nested cells are reported by
    :func:`recuse.tables.check_scalars`)."""
    folded = {_folded(k): v for k, v in mapped.items()}
    numeric = {x: v for k, v in folded.items() if (x := _written_number(k)) is not None}

    def lookup(cell: object) -> float | None:
        if isinstance(cell, bool | np.bool_) or not isinstance(
            cell, str | int | float | np.integer | np.floating | Decimal
        ):
            return None
        x = as_number(cell)
        if x is not None and np.isnan(x) and not isinstance(cell, str):
            return None  # a missing number (NaN, also a Parquet decimal's NaN)
        key = _folded(cell)
        if key in folded:
            return folded[key]
        return numeric.get(x) if x is not None and np.isfinite(x) else None

    return lookup


def refuse_double_turn(values: dict[str, dict[str, float]], mapping: ColumnMapping) -> None:
    """``swapped_frame="presented"`` turns ``p_a_second`` from the judge's slots (A =
    shown first = b) to a/b; a value map of that column that already sends the
    first-shown label A to b (``A=0,B=1``) has turned it, and both would flip every
    swapped verdict back to the judge's slots: refused, with the two ways out."""
    for column, table in values.items():
        targets = [t for s, t in mapping_pairs(mapping) if s == column] or [column]
        if "p_a_second" not in targets:
            continue
        sides = {side_word(k): v for k, v in table.items() if side_word(k) in (0.0, 1.0)}
        if sides.get(1.0, 1.0) < 0.5 or sides.get(0.0, 0.0) > 0.5:
            turned = ", ".join(f"{k}={v:g}" for k, v in table.items())
            raise ConfigError(
                f"the value map for {column!r} ({turned}) already reads the swapped order "
                "in the a/b frame (the first-shown answer A is b), and --swapped-frame "
                "presented turns it once more, which would flip every swapped verdict "
                "back — keep one: the map as the judge wrote it (A=1,B=0) with "
                "--swapped-frame presented, or this map with --swapped-frame original"
            )


#: the columns a value map may write: a label or a verdict, read as P(a better)
MAPPED_TO = ("human", *VERDICTS)


def value_map() -> str:
    """The value map as its errors name it, as the caller gave it: on the command line a
    flag or a recuse.toml; in Python the ``values=`` keyword."""
    return caller_option("the value map (--values, or [values] in recuse.toml)",
                         "the value map (values=)")  # fmt: skip


def refuse_other_columns(
    values: Mapping[str, object], mapping: ColumnMapping, columns: Iterable[object], path: Path
) -> None:
    """A value map turns written values into P(a better): one of a file column that
    feeds no label or verdict (a model name, an id, the confidence, a text) would put
    numbers there, read as names or ids with at most a note. Refused, naming what the
    column feeds; a column the file lacks is left to :func:`apply_values`' error."""
    have = {str(c) for c in columns}
    for column in values:
        if column not in have:
            continue
        targets = [t for s, t in mapping_pairs(mapping) if s == column] or [column]
        if not any(t in MAPPED_TO for t in targets):
            feeds = (
                f"feeds {', '.join(targets)}"
                if any(t in PAIRS.names for t in targets)
                else "is not read as a label or verdict"
            )
            raise InputError(
                f"{value_map()} names this column, which {feeds}: a value map "
                "gives P(a better) to written labels and verdicts",
                file=path,
                column=column,
                fix=f"map the column that holds the labels or verdicts ({', '.join(MAPPED_TO)} "
                f"or the file column {caller_option('--map', 'mapping=')} sends there), or "
                f"drop this one from {caller_option('--values or [values]', 'values=')}",
            )


_MISSING_FOLDED = {t.casefold() for t in MISSING_TEXTS if t}


def _note_missing_keys(column: str, s: pd.Series, mapped: Mapping[str, float], path: Path) -> None:
    """A note for a map's values that are texts read as missing ('NA', 'None', ...)
    and match no cell: such cells are missing before any map applies, in every table
    (:func:`recuse.tables.read_missing_texts`), so
    the map never meets them (a ``none`` cell, not read as missing, still matches)."""
    keys = [k for k in mapped if k.strip().casefold() in _MISSING_FOLDED]
    if keys:
        present = set(s.dropna().astype(str).str.strip().str.casefold())
        keys = [k for k in keys if k.strip().casefold() not in present]
    if keys:
        warnings.warn(
            f"{path}: the value map for column {column!r} names "
            + ", ".join(repr(k) for k in keys)
            + (", a text" if len(keys) == 1 else ", texts")
            + " recuse reads as missing in that column (in every table) before any "
            "map applies: those cells stay missing — write another value in the file, "
            "or drop it from the map",
            ValueMapUnmatched,
            stacklevel=4,
        )


def apply_values(df: pd.DataFrame, values: dict[str, dict[str, float]], path: Path) -> pd.DataFrame:
    """Replace the written values of the file columns named in ``values`` (a map
    checked by :func:`check_value_map`) by numbers; cells the map does not name are
    left for the built-in rules. A map that matches no cell of its column is told
    (:class:`ValueMapUnmatched`): the column is then read by the built-in rules alone,
    which may read its values another way than the map meant."""
    out = df.copy()
    for column, mapped in values.items():
        if column not in out.columns:
            raise no_such_column(value_map(), column, out, path)
        s = out[column]
        _note_missing_keys(column, s, mapped, path)
        hit = s.map(_value_lookup(mapped)).astype(float)
        if hit.isna().all() and s.notna().any():
            seen = ", ".join(shown(v, 20) for v in s.dropna().astype(str).unique()[:6])
            warnings.warn(
                f"{path}: the value map for column {column!r} ("
                + ", ".join(f"{k}={v:g}" for k, v in mapped.items())
                + f") matched none of its values ({seen}); the column is read by the "
                "built-in rules (A/B/tie words, model names, AlpacaEval's 1/2, "
                "probabilities) — check the map's values against the file's",
                ValueMapUnmatched,
                stacklevel=3,
            )
        out[column] = s.astype(object).where(hit.isna(), hit)
    return out
