"""The two evidence tables, ``pairs`` and ``ratings``, as code, with validation.

Every reader returns one of these tables and every analysis takes one. Validation
coerces types, fills derived columns and names the file, row and column of the
first problem it meets (rows are 1-based data records, header not counted).

pairs — one row per (item, judge) pairwise comparison
    item_id, prompt_id            str, never missing
    model_a, model_b              str or missing (unknown generator)
    human                         float in [0, 1]: probability that a is better by
                                  the human/independent label (1 = a, 0 = b, 0.5 = tie),
                                  NaN = no label. Inputs "a" / "b" / "tie" are accepted.
    judge                         str, or missing for human-only rows
    p_a_first, p_a_second         judge's probability that a is better when a is shown
                                  first / second (both in the original a/b frame;
                                  verdict-only judges give 0, 0.5 or 1); NaN = that
                                  order was not judged or its output was unparsed
    p_a                           combined: mean of the orders that were judged
    optional: prompt, response_a, response_b, source, task, category (str);
              len_a, len_b, ppl_a, ppl_b (float >= 0);
              status_first, status_second in {"ok", "unparsed", "failed", "missing"}

ratings — one row per (prompt, model, dimension, judge) absolute score
    prompt_id, model, dimension, judge   str, never missing
    rating                         float; NaN only where status says why
    reference                      float (independent score, e.g. mean of humans) or NaN
    optional: task, dataset (str); length (float >= 0); status (as above)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from recuse.errors import InputError

Kind = Literal["id", "str", "prob", "float", "nonneg", "human", "status"]
STATUSES = ("ok", "unparsed", "failed", "missing")
HUMAN_LABELS = {"a": 1.0, "b": 0.0, "tie": 0.5}


@dataclass(frozen=True)
class Column:
    name: str
    kind: Kind
    required: bool = True
    doc: str = ""


@dataclass(frozen=True)
class Schema:
    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]

    @property
    def required(self) -> list[str]:
        return [c.name for c in self.columns if c.required]

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]


PAIRS = Schema(
    name="pairs",
    key=("item_id", "judge"),
    columns=(
        Column("item_id", "id", doc="one comparison of two responses"),
        Column("prompt_id", "id", doc="the prompt; bootstrap clusters on it"),
        Column("model_a", "str", doc="generator of response a (canonical id)"),
        Column("model_b", "str", doc="generator of response b (canonical id)"),
        Column("human", "human", doc="P(a better) by the independent label; NaN = none"),
        Column("judge", "str", doc="judge id; missing for human-only rows"),
        Column("p_a_first", "prob", doc="judge P(a better), a shown first"),
        Column("p_a_second", "prob", doc="judge P(a better), a shown second"),
        Column("p_a", "prob", doc="mean over the judged orders"),
        Column("prompt", "str", required=False),
        Column("response_a", "str", required=False),
        Column("response_b", "str", required=False),
        Column("source", "str", required=False, doc="dataset the row came from"),
        Column("task", "str", required=False),
        Column("category", "str", required=False),
        Column("len_a", "nonneg", required=False),
        Column("len_b", "nonneg", required=False),
        Column("ppl_a", "nonneg", required=False),
        Column("ppl_b", "nonneg", required=False),
        Column("status_first", "status", required=False),
        Column("status_second", "status", required=False),
    ),
)

RATINGS = Schema(
    name="ratings",
    key=("prompt_id", "model", "dimension", "judge"),
    columns=(
        Column("prompt_id", "id"),
        Column("model", "id", doc="generator (canonical id)"),
        Column("dimension", "id", doc="what was rated, e.g. faithfulness"),
        Column("judge", "id", doc="judge (canonical id)"),
        Column("rating", "float", doc="judge score; NaN only with a non-ok status"),
        Column("reference", "float", doc="independent score, e.g. mean of humans"),
        Column("task", "str", required=False),
        Column("dataset", "str", required=False),
        Column("length", "nonneg", required=False),
        Column("status", "status", required=False),
    ),
)


def shown(value: object, limit: int = 60) -> str:
    """``repr(value)`` for an error message: numpy scalars as plain Python values, long
    values cut to ``limit`` characters with their full length noted.

    >>> shown("x" * 100, limit=10)
    "'xxxxxxxx… (100 characters)"
    """
    if isinstance(value, np.generic | np.ndarray):
        value = value.tolist()
    text = repr(value)
    if len(text) <= limit:
        return text
    size = len(value) if isinstance(value, str | bytes | list | dict) else len(text)
    return f"{text[: limit - 2]}… ({size:,} {'characters' if isinstance(value, str) else 'long'})"


# pandas.api.types.infer_dtype results that cannot hold a list, dict or array
_FLAT = frozenset({"string", "integer", "floating", "mixed-integer-float", "boolean", "empty"})
_NESTED_NAMES = {dict: "JSON object", list: "JSON list", tuple: "list", set: "set"}


def _nested(value: object) -> str | None:
    """What ``value`` is if it is not one cell value (text, number, missing), else None."""
    if isinstance(value, bytes | bytearray | memoryview):
        return "binary value"
    if isinstance(value, np.ndarray):
        return "list"
    for kind, name in _NESTED_NAMES.items():
        if isinstance(value, kind):
            return name
    return None


def check_scalars(
    df: pd.DataFrame, columns: Iterable[str], *, file: str | Path | None = None
) -> None:
    """Raise :class:`InputError` at the first cell of ``columns`` (those present) that
    holds a list, an object or binary data instead of one text or number.

    Fast on ordinary columns: only object columns that pandas cannot type as flat are
    looked at value by value.
    """
    for col in columns:
        if col not in df.columns or df[col].dtype != object:
            continue
        s = df[col]
        if pd.api.types.infer_dtype(s, skipna=True) in _FLAT:
            continue
        kinds = s.map(_nested)
        bad = kinds.notna()
        if bad.any():
            i = _first(bad)
            raise InputError(
                f"expected one text or number, found a {kinds.iloc[i]} {shown(s.iloc[i])}",
                file=str(file) if file is not None else None,
                row=i + 1,
                column=col,
                fix="flatten the file: one text or number per cell in the schema columns "
                "(lists and objects may stay in extra columns)",
            )


def _first_bool(s: pd.Series) -> int | None:
    """Position of the first boolean in ``s`` (JSON ``true`` / ``false``), or None."""
    if pd.api.types.is_bool_dtype(s.dtype):
        return 0 if len(s) else None
    if s.dtype != object or pd.api.types.infer_dtype(s, skipna=True) in _FLAT - {"boolean"}:
        return None
    is_bool = s.map(lambda v: isinstance(v, bool | np.bool_))
    return _first(is_bool) if is_bool.any() else None


def _first(mask: pd.Series) -> int:
    """Positional index of the first True in ``mask``."""
    return int(np.flatnonzero(mask.to_numpy())[0])


_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _to_numeric(s: pd.Series) -> pd.Series:
    """``pd.to_numeric(s, errors="coerce")``, where a Python int too large for a float
    (from JSON) becomes NaN like any other value that is no usable number."""
    try:
        return pd.to_numeric(s, errors="coerce")
    except OverflowError:
        return pd.to_numeric(s.map(_float_or_nan), errors="coerce")


def _float_or_nan(value: object) -> object:
    if isinstance(value, int):
        try:
            return float(value)
        except OverflowError:
            return np.nan
    return value


def _coerce(df: pd.DataFrame, col: Column, schema: Schema, file: str | None) -> pd.Series:
    s = df[col.name]
    where = {"file": file, "column": col.name}

    if col.kind in ("id", "str", "status"):
        missing = s.isna()
        if col.kind == "id" and missing.any():
            i = _first(missing)
            raise InputError(
                f"missing {col.name}",
                row=i + 1,
                **where,
                fix=f"every {schema.name} row needs a value in {col.name}",
            )
        out = s.astype(object).where(missing, s.astype(str))
        if col.kind == "id":
            empty = out.str.strip() == ""
            if empty.any():
                raise InputError(
                    f"empty {col.name}",
                    row=_first(empty) + 1,
                    **where,
                    fix=f"every {schema.name} row needs a non-empty value in {col.name}",
                )
        if col.kind == "status":
            bad = ~missing & ~out.isin(STATUSES)
            if bad.any():
                i = _first(bad)
                raise InputError(
                    f"unknown status {shown(out.iloc[i])}",
                    row=i + 1,
                    **where,
                    fix=f"use one of {', '.join(STATUSES)}",
                )
        return out

    flag = _first_bool(s)
    if flag is not None:
        raise InputError(
            f"expected a number, got {shown(s.iloc[flag])}",
            row=flag + 1,
            **where,
            fix="write 1 / 0 (or a / b / tie for human) instead of true / false",
        )
    if col.kind == "human":
        if s.dtype == object or pd.api.types.is_string_dtype(s.dtype):
            lowered = s.astype(str).str.strip().str.lower()
            mapped = lowered.map(HUMAN_LABELS)
            numeric = _to_numeric(s)
            s = mapped.fillna(numeric).where(s.notna())
            bad = s.isna() & df[col.name].notna()
            if bad.any():
                i = _first(bad)
                raise InputError(
                    f"unknown human label {shown(df[col.name].iloc[i])}",
                    row=i + 1,
                    **where,
                    fix="use 'a', 'b', 'tie' or a probability in [0, 1] that a is better",
                )
        kind: Kind = "prob"
    else:
        kind = col.kind

    num = _to_numeric(s)
    bad = num.isna() & s.notna()
    if bad.any():
        i = _first(bad)
        if _NUMBER.fullmatch(str(s.iloc[i]).strip()):
            raise InputError(
                f"number too large: {shown(s.iloc[i])}",
                row=i + 1,
                **where,
                fix="use a number of ordinary size (within ±1e308)",
            )
        raise InputError(
            f"expected a number, got {shown(s.iloc[i])}",
            row=i + 1,
            **where,
            fix="write numbers with a dot as decimal separator, or leave the cell empty",
        )
    num = num.astype(float)
    values = num.to_numpy()
    if np.isinf(values).any():
        i = int(np.flatnonzero(np.isinf(values))[0])
        raise InputError("infinite value", row=i + 1, **where, fix="use a finite number")
    if kind == "prob":
        out_of_range = (values < 0) | (values > 1)
        if out_of_range.any():
            i = int(np.flatnonzero(out_of_range)[0])
            raise InputError(
                f"{values[i]:g} is not a probability",
                row=i + 1,
                **where,
                fix="use a number between 0 and 1 (probability that a is better)",
            )
    if kind == "nonneg" and (values < 0).any():
        i = int(np.flatnonzero(values < 0)[0])
        raise InputError(
            f"negative value {values[i]:g}",
            row=i + 1,
            **where,
            fix="lengths and perplexities are >= 0",
        )
    return num


def _validate(df: pd.DataFrame, schema: Schema, file: str | Path | None) -> pd.DataFrame:
    fname = str(file) if file is not None else None
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"expected a {schema.name} table (pandas DataFrame)", file=fname)
    if len(df) == 0:
        raise InputError(
            f"the {schema.name} table is empty",
            file=fname,
            fix="check the file and the column mapping",
        )
    missing = [c for c in schema.required if c not in df.columns]
    if missing:
        raise InputError(
            f"missing required column(s) {', '.join(missing)}",
            file=fname,
            fix=f"a {schema.name} table needs columns {', '.join(schema.required)}",
        )
    out = df.reset_index(drop=True).copy()
    check_scalars(out, schema.names, file=fname)
    for col in schema.columns:
        if col.name in out.columns:
            out[col.name] = _coerce(out, col, schema, fname)
    dup = out.duplicated(list(schema.key), keep="first")
    if dup.any():
        i = _first(dup)
        key = ", ".join(f"{k}={out[k].iloc[i]!r}" for k in schema.key)
        raise InputError(
            f"duplicate {schema.name} row ({key})",
            file=fname,
            row=i + 1,
            fix=f"each ({', '.join(schema.key)}) may appear once; remove or rename the duplicate",
        )
    return out


def validate_pairs(df: pd.DataFrame, *, file: str | Path | None = None) -> pd.DataFrame:
    """Check and normalise a ``pairs`` table; returns a new DataFrame.

    ``p_a`` is filled with the mean of ``p_a_first`` and ``p_a_second`` over the
    orders that were judged wherever either is present; where neither is present a
    given ``p_a`` (single verdict, order unknown) is kept.
    """
    out = _validate(df, PAIRS, file)
    fname = str(file) if file is not None else None
    both = out[["p_a_first", "p_a_second"]]
    judged = both.notna().any(axis=1)
    out.loc[judged, "p_a"] = both[judged].mean(axis=1)
    has_verdict = out["p_a"].notna()
    no_judge = out["judge"].isna()
    if (has_verdict & no_judge).any():
        i = _first(has_verdict & no_judge)
        raise InputError(
            "judge verdict without a judge name",
            file=fname,
            row=i + 1,
            column="judge",
            fix="name the judge that produced p_a_first / p_a_second",
        )
    for order in ("first", "second"):
        status = f"status_{order}"
        if status in out.columns:
            ok_but_nan = (out[status] == "ok") & out[f"p_a_{order}"].isna()
            if ok_but_nan.any():
                raise InputError(
                    f"status_{order} is 'ok' but p_a_{order} is empty",
                    file=fname,
                    row=_first(ok_but_nan) + 1,
                    column=f"p_a_{order}",
                    fix="give the verdict or mark the row 'unparsed' / 'failed'",
                )
    return out


def validate_ratings(df: pd.DataFrame, *, file: str | Path | None = None) -> pd.DataFrame:
    """Check and normalise a ``ratings`` table; returns a new DataFrame.

    A missing ``rating`` is allowed only where ``status`` says why (``unparsed``,
    ``failed`` or ``missing``); a missing status on a present rating becomes ``ok``.
    """
    out = _validate(df, RATINGS, file)
    fname = str(file) if file is not None else None
    nan_rating = out["rating"].isna()
    if "status" not in out.columns:
        out["status"] = None
    out["status"] = out["status"].where(out["status"].notna() | nan_rating, "ok")
    unexplained = nan_rating & ~out["status"].isin(STATUSES[1:])
    if unexplained.any():
        raise InputError(
            "rating is missing",
            file=fname,
            row=_first(unexplained) + 1,
            column="rating",
            fix="give a number, or set status to 'unparsed'/'failed' to record why it is missing",
        )
    return out


def reject_human_ties(pairs: pd.DataFrame, *, file: str | Path | None = None) -> None:
    """Raise :class:`InputError` at the first row whose human label is a tie (0.5).

    For analyses where a tie has no meaning (the caller asked for ties to be refused
    rather than dropped or split).
    """
    tie = pairs["human"] == 0.5
    if tie.any():
        raise InputError(
            "the human label is a tie, and ties are not allowed here",
            file=file,
            row=_first(tie) + 1,
            column="human",
            fix="remove the tied rows, or choose --human-ties drop (leave them out) "
            "or split (count half for each side)",
        )
