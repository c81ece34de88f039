"""The two evidence tables, ``pairs`` and ``ratings``, as code, with validation.

Every reader returns one of these tables and every analysis takes one. Validation
coerces types, fills derived columns and names the file, row and column of the
first problem it meets (rows are 1-based data records, header not counted).

pairs — one row per (item, judge) pairwise comparison
    item_id, prompt_id            str, never missing
    model_a, model_b              str or missing (unknown generator)
    human                         float in [0, 1]: probability that a is better by
                                  the human/independent label (1 = a, 0 = b, 0.5 = tie),
                                  NaN = no label. Written values are read as
                                  :func:`verdict_values` says (A/B/tie, [[A]], model
                                  names, AlpacaEval's 1/2/1.5, probabilities).
    judge                         str, or missing for human-only rows
    p_a_first, p_a_second         judge's probability that a is better when a is shown
                                  first / second (both in the original a/b frame;
                                  verdict-only judges give 0, 0.5 or 1); NaN = that
                                  order was not judged or its output was unparsed;
                                  written values as for human
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
import unicodedata
import warnings
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from recuse.cells import FLAT_KINDS as _FLAT
from recuse.cells import MISSING_TEXTS, as_text, check_scalars, column_list, one_text, shown
from recuse.cells import first_true as _first
from recuse.choices import ConfidenceOf as ConfidenceOf
from recuse.choices import SwappedFrame as SwappedFrame
from recuse.choices import TableKind as TableKind
from recuse.errors import ConfigError, InputError, ReaderNote
from recuse.numbers import exact
from recuse.probe_tables import PROBE_COLUMNS as PROBE_COLUMNS  # re-exported for readers
from recuse.probe_tables import check_probe_table
from recuse.renaming import Renaming as Renaming
from recuse.renaming import caller_option as caller_option
from recuse.renaming import map_hint as map_hint
from recuse.renaming import map_option as map_option
from recuse.renaming import map_source as map_source
from recuse.renaming import renaming_by as renaming_by
from recuse.renaming import takes_mapping as takes_mapping

#: what a column holds, which says how validation coerces and checks it
ColumnKind = Literal["id", "str", "prob", "float", "nonneg", "human", "verdict", "status"]
STATUSES = ("ok", "unparsed", "failed", "missing")

# Words that name a side, as judges, annotators and tools write them (matched after
# trimming, case-folding and removing [[...]], [...], (...) or quotes around the value).
# "c" is MT-Bench's tie, but only in brackets ([[C]]): a bare "c" is refused.
SIDE_WORDS: dict[str, float] = {
    "a": 1.0,
    "b": 0.0,
    "tie": 0.5,
    "draw": 0.5,
    "equal": 0.5,
    "tie (bothbad)": 0.5,
    "model_a": 1.0,
    "model_b": 0.0,
    "response_a": 1.0,
    "response_b": 0.0,
    "answer_a": 1.0,
    "answer_b": 0.0,
}
_BRACKETED = {"c": 0.5}
_WRAPPERS = re.compile(r"^(?:\[\[(.*)\]\]|\[(.*)\]|\((.*)\)|\"(.*)\"|'(.*)')$", re.S)
# AlpacaEval's preference: 1 = first output (a) better, 2 = second (b), 1.5 = tie
ALPACA_CODES: dict[float, float] = {1.0: 1.0, 1.5: 0.5, 2.0: 0.0}
VALUE_HELP = (
    "write A / B / tie (any case, also [[A]], model_a/model_b), the name of the row's "
    "model_a or model_b, a probability in [0, 1] that a is better, or AlpacaEval's "
    "1 / 2 / 1.5; map any other value with --values COLUMN:VALUE=NUMBER,... "
    "(library: values={column: {value: number}})"
)


@dataclass(frozen=True)
class Column:
    """One column of a table schema: its ``name``, its ``kind`` (how its values are read
    and checked), whether a table must have it (``required``) and what it holds (``doc``)."""

    name: str
    kind: ColumnKind
    required: bool = True
    doc: str = ""


@dataclass(frozen=True)
class Schema:
    """A table's schema (:data:`PAIRS`, :data:`RATINGS`): its ``name``, its ``columns`` in
    order, the ``key`` columns no two rows may share, and ``filled``, the required
    columns a file may leave out (they are added empty). ``names`` lists every column,
    ``required`` those a table must have; each :class:`Column`'s ``doc`` says what it holds."""

    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    # required columns a file or frame may leave out (with_optional_pairs_columns adds
    # them empty): told apart from the truly required ones in errors
    filled: tuple[str, ...] = ()

    @property
    def required(self) -> list[str]:
        return [c.name for c in self.columns if c.required]

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]


PAIRS = Schema(
    name="pairs",
    key=("item_id", "judge"),
    filled=("model_a", "model_b", "human", "judge", "p_a_first", "p_a_second", "p_a"),
    columns=(
        Column("item_id", "id", doc="one comparison of two responses"),
        Column("prompt_id", "id", doc="the prompt; bootstrap clusters on it"),
        Column("model_a", "str", doc="generator of response a (canonical id)"),
        Column("model_b", "str", doc="generator of response b (canonical id)"),
        Column("human", "human", doc="P(a better) by the independent label; NaN = none"),
        Column("judge", "str", doc="judge id; missing for human-only rows"),
        Column("p_a_first", "verdict", doc="judge P(a better), a shown first"),
        Column("p_a_second", "verdict", doc="judge P(a better), a shown second"),
        Column("p_a", "verdict", doc="mean over the judged orders"),
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


def _first_bool(s: pd.Series) -> int | None:
    """Position of the first boolean in ``s`` (JSON ``true`` / ``false``), or None; in
    pandas' nullable ``boolean``, its first value present (``pd.NA`` is missing)."""
    if pd.api.types.is_bool_dtype(s.dtype):
        present = s.notna()
        return _first(present) if present.any() else None
    if s.dtype != object or pd.api.types.infer_dtype(s, skipna=True) in _FLAT - {"boolean"}:
        return None
    is_bool = s.map(lambda v: isinstance(v, bool | np.bool_))
    return _first(is_bool) if is_bool.any() else None


# ASCII digits only: Python's \d takes any script's (fullwidth "１０", Arabic-Indic "٧"),
# which pandas reads as no number, and they were "number too large"
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", re.ASCII)
_ASCII_SPACE = " \t\r\n\v\f"
#: a plus sign before a number's digits, after any ASCII spaces (kept)
_PLUS = re.compile(r"^([ \t\r\n\v\f]*)\+(?=[0-9.])")


def _to_numeric(s: pd.Series) -> pd.Series:
    """``pd.to_numeric(s, errors="coerce")``, where a Python int too large for a float
    (from JSON) becomes NaN like any other value that is no usable number, and a text
    with a plus sign before its digits is read without it: pandas 3.1's to_numeric
    rounds a fifth to a quarter of such texts to a neighbour of their nearest float
    ("+9.678934028836e-50" gave 9.678934028835999e-50), as ``float()`` and
    ``pandas.read_csv`` never do. An Arrow text column's plain decimals are read by
    :func:`_decimals_arrow`."""
    if _arrow_backed(s) and len(s):
        return _decimals_arrow(s)
    if isinstance(s.dtype, pd.StringDtype):
        plus = s.str.contains("+", regex=False).to_numpy(dtype=bool, na_value=False)
        # the same parse of the same texts, from Python strings: pandas makes them
        # itself, in half again the time (0.31 s against 0.19 s for 960,000 cells)
        s = pd.Series(s.to_numpy(dtype=object), index=s.index, name=s.name, dtype=object)
    elif s.dtype == object:  # texts among numbers (JSON)
        plus = np.fromiter((isinstance(v, str) and "+" in v for v in s), bool, count=len(s))
    else:
        plus = np.zeros(0, dtype=bool)
    rows = np.flatnonzero(plus)
    if len(rows):
        cells = s.to_numpy(dtype=object, copy=True)
        cells[rows] = [_PLUS.sub(r"\1", t, count=1) for t in cells[rows]]
        s = pd.Series(cells, index=s.index, name=s.name, dtype=object)
    try:
        return pd.to_numeric(s, errors="coerce")
    except OverflowError:
        return pd.to_numeric(s.map(_float_or_nan), errors="coerce")


#: a plain decimal (ASCII digits, no space): what Arrow's cast to float64 reads as
#: ``float()`` does, correctly rounded (``tests/test_tables.py`` pins it)
_DECIMAL = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
#: the longest such text Arrow reads: pandas reads a whole number of more than 4,300
#: digits (Python's int_max_str_digits) as no number ("number too large"), Arrow as inf
_DECIMAL_BYTES = 100


def _decimals_arrow(s: pd.Series) -> pd.Series:
    """:func:`_to_numeric` of an Arrow text column as floats: each cell that is a plain
    decimal (:data:`_DECIMAL`, at most :data:`_DECIMAL_BYTES` long) cast by Arrow, any
    other text (a space around it, "nan", "inf", "1_000", 5,000 nines) read by pandas
    as before. A plain decimal's value is the nearest float both ways (pandas' int64
    of a whole number, which the callers make a float, is that float too), and no such
    text is refused by either, so the numbers and the cells that are none are the
    same; Arrow takes 0.06 s of the 0.19 s pandas took for 960,000 cells."""
    import pyarrow as pa
    import pyarrow.compute as pc

    cells = s.array.__arrow_array__()
    plain = pc.and_(  # missing where the cell is
        pc.match_substring_regex(cells, _DECIMAL),
        pc.less_equal(pc.binary_length(cells), _DECIMAL_BYTES),
    )
    kept = pc.if_else(plain, cells, pa.scalar(None, type=cells.type))
    out = np.array(pc.cast(kept, pa.float64()).to_numpy(zero_copy_only=False), dtype=float)
    rest = ~plain.fill_null(True).to_numpy(zero_copy_only=False)  # other texts
    if rest.any():
        rows = np.flatnonzero(rest)  # as Python strings: not this function again
        texts = pd.Series(s.iloc[rows].to_numpy(dtype=object), dtype=object)
        out[rest] = _to_numeric(texts).to_numpy(dtype=float, na_value=np.nan)
    return pd.Series(out, index=s.index, name=s.name)


def _float_or_nan(value: object) -> object:
    if isinstance(value, int):
        try:
            return float(value)
        except OverflowError:
            return np.nan
    return value


def side_word(value: str) -> float | None:
    """P(a better) of a word naming a side (:data:`SIDE_WORDS`), or None."""
    key = value.strip().casefold()
    if key in SIDE_WORDS:
        return SIDE_WORDS[key]
    wrapped = _WRAPPERS.match(key)
    if wrapped:
        inner = next(g for g in wrapped.groups() if g is not None).strip()
        if inner in SIDE_WORDS:
            return SIDE_WORDS[inner]
        return _BRACKETED.get(inner)
    return None


def as_number(value: object) -> float | None:
    """A value that is a number (not a boolean), or a text that is one; else None."""
    if isinstance(value, bool | np.bool_):
        return None
    if isinstance(value, int | np.integer):
        try:
            return float(value)
        except OverflowError:
            return np.inf
    if isinstance(value, float | np.floating | Decimal):  # Parquet decimals are Decimal
        try:
            return float(value)
        except OverflowError:
            return np.inf
    if isinstance(value, str):
        text = value.strip()
        if _NUMBER.fullmatch(text) or text.casefold().lstrip("+-") in ("inf", "infinity"):
            return float(text)
    return None


def _names(s: pd.Series | None, n: int) -> np.ndarray:
    if s is None:
        return np.full(n, None, dtype=object)
    return s.map(lambda v: v.strip().casefold() if isinstance(v, str) else None).to_numpy(
        dtype=object
    )


@dataclass(frozen=True)
class Verdicts:
    """A verdict or label column read as numbers (see :func:`verdict_values`)."""

    values: np.ndarray  # P(a better); NaN where the cell is empty or unreadable
    named: np.ndarray  # True where the cell named a model (the same in either frame)
    bad: int | None  # position of the first cell that could not be read
    alpaca: bool  # the column's numbers were read as AlpacaEval preferences


def verdict_values(
    s: pd.Series, *, model_a: pd.Series | None = None, model_b: pd.Series | None = None
) -> Verdicts:
    """Read a verdict or label column as written by people and tools: P(a better).

    Each cell is, in this order of trial:

    - a word naming a side (:data:`SIDE_WORDS`; any case; also wrapped as ``[[A]]``,
      ``[A]``, ``(A)`` or quoted; ``[[C]]`` is MT-Bench's tie): A = 1, B = 0, tie = 0.5;
    - a number: a probability in [0, 1] that a is better — unless the column holds
      AlpacaEval preferences: when **every** number of the column is 1, 1.5 or 2 and
      **some** number is 1.5 or 2, they are AlpacaEval's codes (1 = first output, a,
      better → 1; 2 = b better → 0; 1.5 = tie → 0.5). A column of only 0s and 1s, or
      only 1s, is probabilities (1 = a better);
    - the name of that row's ``model_a`` (→ 1) or ``model_b`` (→ 0), compared after
      trimming and case-folding (the file reader first maps names through the roster,
      so aliases match canonical ids).

    Empty cells and blank texts are missing (NaN). Range is not checked here.

    >>> v = verdict_values(pd.Series(["A", "[[B]]", "tie", None]))
    >>> v.values.tolist()[:3], v.bad
    ([1.0, 0.0, 0.5], None)
    >>> verdict_values(pd.Series([1, 2, 1.5])).values.tolist()
    [1.0, 0.0, 0.5]
    >>> verdict_values(pd.Series([1, 0, 1])).values.tolist()
    [1.0, 0.0, 1.0]
    """
    n = len(s)
    if pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype):
        nums = s.to_numpy(dtype=float, na_value=np.nan, copy=True)
        present = ~np.isnan(nums)
        rest = np.zeros(n, dtype=bool)
    else:
        nums = _to_numeric(s).to_numpy(dtype=float, na_value=np.nan, copy=True)
        present = s.notna().to_numpy(copy=True)
        rest = present & np.isnan(nums)  # not a number: words, model names, blanks
    side = np.full(n, np.nan)
    texts = np.zeros(n, dtype=bool)  # a text that may be a model name
    if rest.any():
        codes, uniques = pd.factorize(s[rest], use_na_sentinel=True)
        uniq = list(uniques)
        u_num, u_side = np.full(len(uniq), np.nan), np.full(len(uniq), np.nan)
        u_text, u_blank = np.zeros(len(uniq), dtype=bool), np.zeros(len(uniq), dtype=bool)
        for k, u in enumerate(uniq):
            num = as_number(u)
            if num is not None:
                u_num[k] = num
            elif isinstance(u, str) and not u.strip():
                u_blank[k] = True
            elif isinstance(u, str):
                found = side_word(u)
                if found is None:
                    u_text[k] = True
                else:
                    u_side[k] = found
        nums[rest], side[rest], texts[rest] = u_num[codes], u_side[codes], u_text[codes]
        present[np.flatnonzero(rest)[u_blank[codes]]] = False
    finite = nums[np.isfinite(nums)]
    alpaca = bool(
        finite.size
        and np.isin(finite, list(ALPACA_CODES)).all()
        and np.isin(finite, (1.5, 2.0)).any()
    )
    if alpaca:
        for code, p in ALPACA_CODES.items():
            nums = np.where(nums == code, p, nums)
    out = np.where(np.isnan(side), nums, side)
    named = np.zeros(n, dtype=bool)
    if texts.any():
        value = _names(s.where(pd.Series(texts, index=s.index)), n)
        is_a = (value == _names(model_a, n)) & (value != None)  # noqa: E711 (elementwise)
        is_b = (value == _names(model_b, n)) & (value != None)  # noqa: E711
        named = texts & (is_a ^ is_b)
        out = np.where(named & is_a, 1.0, np.where(named & is_b, 0.0, out))
    unread = present & np.isnan(out)
    bad = int(np.flatnonzero(unread)[0]) if unread.any() else None
    return Verdicts(values=out.astype(float), named=named, bad=bad, alpaca=alpaca)


_DECIMAL_COMMA = re.compile(r"[+-]?\d*,\d+")


def _verdict_column(df: pd.DataFrame, col: Column, file: str | None, *, flip: bool) -> pd.Series:
    """A human or verdict column as P(a better) (:func:`verdict_values`); with ``flip``
    (a swapped-order column written as the judge saw it) positional values become
    1 − p, model names stay as they are."""
    s = df[col.name]
    where: dict[str, Any] = {"file": file, "column": col.name}
    read = verdict_values(s, model_a=df.get("model_a"), model_b=df.get("model_b"))
    if read.bad is not None:
        what = "human label" if col.kind == "human" else "verdict"
        models = [df[c].iloc[read.bad] for c in ("model_a", "model_b") if c in df.columns]
        row_models = (
            f" (this row compares {shown(models[0])} and {shown(models[1])})"
            if len(models) == 2 and all(isinstance(m, str) for m in models)
            else ""
        )
        value = s.iloc[read.bad]
        if (
            len(models) == 2
            and isinstance(value, str)
            and all(isinstance(m, str) for m in models)
            and value.strip().casefold()
            == str(models[0]).strip().casefold()
            == str(models[1]).strip().casefold()
        ):
            raise InputError(
                f"{what} {shown(value)} names both answers: this row compares "
                f"{shown(models[0])} with itself",
                row=read.bad + 1,
                **where,
                fix="write A / B / tie (or a probability) on rows whose two answers come "
                "from one model",
            )
        comma = isinstance(value, str) and _DECIMAL_COMMA.fullmatch(value.strip())
        raise InputError(
            f"unknown {what} {shown(value)}{row_models}",
            row=read.bad + 1,
            **where,
            fix="write numbers with a dot as decimal separator (0.7, not 0,7)"
            if comma
            else VALUE_HELP,
        )
    values = read.values
    if np.isinf(values).any():
        i = int(np.flatnonzero(np.isinf(values))[0])
        raise InputError("infinite value", row=i + 1, **where, fix="use a finite number")
    out_of_range = (values < 0) | (values > 1)
    if out_of_range.any():
        i = int(np.flatnonzero(out_of_range)[0])
        raise InputError(
            f"{values[i]:g} is not a probability",
            row=i + 1,
            **where,
            fix="use a number between 0 and 1 (probability that a is better); numbers are "
            "AlpacaEval preferences only when every one is 1, 1.5 or 2",
        )
    if flip:
        values = np.where(read.named, values, 1.0 - values)
    return pd.Series(values, index=s.index, dtype=float)


# other tools' names of the schema columns, for "did you mean" (case-insensitive)
SYNONYMS: dict[str, tuple[str, ...]] = {
    "item_id": ("id", "pair_id", "comparison_id", "row_id", "uid", "sample_id", "example_id"),
    "prompt_id": ("question_id", "instruction_id", "conversation_id", "qid", "prompt_idx"),
    "human": (
        "human_winner", "winner", "label", "preference", "human_label", "human_preference",
        "human_choice", "gold", "gold_label", "ground_truth", "annotation",
    ),
    "judge": ("judge_model", "judge_name", "evaluator", "annotator", "grader", "judge_id"),
    "prompt": ("question", "instruction", "input", "query"),
    "model_a": ("model_1", "model1", "generator_a", "generator_1"),
    "model_b": ("model_2", "model2", "generator_b", "generator_2"),
    "response_a": ("output_1", "output_a", "answer_a", "completion_a", "response_1"),
    "response_b": ("output_2", "output_b", "answer_b", "completion_b", "response_2"),
    "p_a_first": ("judge_winner", "judge_verdict", "verdict", "prediction", "pred"),
    "p_a_second": ("judge_winner_swapped", "verdict_swapped", "judge_verdict_swapped"),
    "model": ("generator", "model_name", "policy"),
    "dimension": ("aspect", "criterion", "metric"),
    "rating": ("score", "judge_score", "judge_rating"),
    "reference": ("human_score", "gold_score", "reference_score", "human_rating"),
}  # fmt: skip


def suggest_columns(have: Iterable[object], missing: Iterable[str]) -> dict[str, str]:
    """``{file column: schema column}`` guesses for the ``missing`` schema columns among
    the file's columns ``have``: a known synonym first (:data:`SYNONYMS`), else the
    closest name by :func:`difflib.get_close_matches`.

    >>> suggest_columns(["id", "human_winner", "prompt"], ["item_id", "human"])
    {'id': 'item_id', 'human_winner': 'human'}
    """
    import difflib

    names = [str(c) for c in have]
    free = {n.strip().casefold(): n for n in names}
    out: dict[str, str] = {}
    for target in missing:
        hit = next((free[s] for s in SYNONYMS.get(target, ()) if s in free), None)
        if hit is None:
            close = difflib.get_close_matches(target, list(free), n=1, cutoff=0.75)
            hit = free[close[0]] if close else None
        if hit is not None and hit not in out:
            out[hit] = target
            free.pop(hit.strip().casefold(), None)
    return out


def _coerce(
    df: pd.DataFrame, col: Column, schema: Schema, file: str | None, *, flip: bool = False
) -> pd.Series:
    s = df[col.name]
    where: dict[str, Any] = {"file": file, "column": col.name}

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
        # without the spaces around it (an id), as a model name is read: "p0 " beside
        # "p0" was a second prompt, and the intervals took the two for independent
        strip = col.kind == "id"
        if isinstance(s.dtype, pd.StringDtype) or (  # texts alone: each distinct one read once
            s.dtype == object and pd.api.types.infer_dtype(s, skipna=True) == "string"
        ):
            out, texts = _texts_and_cells(s, strip=strip)
        else:
            # a missing cell as it is, any other as text (numpy's where: pandas' where
            # aligning an Arrow column with an object one took a third of validate_pairs)
            cells = np.where(
                missing.to_numpy(bool), s.to_numpy(dtype=object), as_text(s).to_numpy(dtype=object)
            )
            out = pd.Series(cells, index=s.index, name=s.name, dtype=object)
            out = out.str.strip() if strip else out
            texts = np.array([""], dtype=object)  # not known: every cell is looked at
        if col.kind == "id" and (texts == "").any():  # its distinct texts: one empty
            empty = out == ""
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
    if col.kind in ("human", "verdict"):
        return _verdict_column(df, col, file, flip=flip)
    kind = col.kind

    num = _to_numeric(s)
    bad = num.isna() & s.notna()
    if bad.any():
        i = _first(bad)
        text = str(s.iloc[i])
        if _NUMBER.fullmatch(text.strip()) and not _NUMBER.fullmatch(text.strip(_ASCII_SPACE)):
            raise InputError(
                f"expected a number, got {shown(text)}: a space other than the ordinary one "
                "(a no-break space, as spreadsheets in some languages write) beside it",
                row=i + 1,
                **where,
                fix="remove that space, or save the file with plain numbers",
            )
        if _NUMBER.fullmatch(text.strip(_ASCII_SPACE)):
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


def _texts_by_value(s: pd.Series, *, strip: bool) -> pd.Series:
    """A text column (pandas' ``str`` dtype, or an object column of texts alone) as an
    object column of its texts, without
    the spaces around each with ``strip``, a missing cell as it is: what ``as_text`` and
    ``str.strip`` give row by row, each distinct text read once (the column's ids repeat
    over its judges and pairs; a 200,000-row table's seven such columns took 0.3 s).

    >>> _texts_by_value(pd.Series([" p0", "p0 ", None, " p0"], dtype="str"), strip=True).tolist()
    ['p0', 'p0', nan, 'p0']
    """
    return _texts_and_cells(s, strip=strip)[0]


def _texts_and_cells(s: pd.Series, *, strip: bool) -> tuple[pd.Series, NDArray[np.object_]]:
    """:func:`_texts_by_value`'s column, and its distinct texts (a check of every
    text, as the ids' for an empty one, reads those alone)."""
    codes, uniques = pd.factorize(s)  # a missing cell is -1, kept as it is
    texts = np.fromiter(
        (str(t).strip() if strip else str(t) for t in uniques), dtype=object, count=len(uniques)
    )
    if isinstance(s.dtype, pd.StringDtype):  # its missing cells all hold its na_value
        cells = np.append(texts, np.array([s.dtype.na_value], dtype=object))[codes]
    else:  # None, NaN or pd.NA, as each is
        cells = s.to_numpy(dtype=object, copy=True)  # pointers: the texts are not made
        given = codes >= 0
        cells[given] = texts[codes[given]]
    return pd.Series(cells, index=s.index, name=s.name, dtype=object), texts


def missing_columns_error(
    schema: Schema,
    missing: list[str],
    have: Iterable[object],
    file: str | Path | None,
    *,
    derived: str = "",
) -> InputError:
    """The error for a table without the ``missing`` columns: which are required and
    which optional, the file's columns, and ``--map`` guesses (:func:`suggest_columns`).
    ``derived`` says how the reader fills a required column that is absent (a file's
    ``prompt_id``, from its prompt texts or its items): the list of what a file needs
    then leaves that column out and says so, where it read "needs item_id, prompt_id"
    to a file that lacked only ``item_id``."""
    names = [str(c) for c in have]
    other = _other_kind(schema, names)
    if other is not None:  # no --map turns one kind into the other
        needs = [c for c in schema.required if c not in schema.filled]
        return InputError(
            f"a {other} table, not the {schema.name} table this needs",
            file=str(file) if file is not None else None,
            fix=f"give a {schema.name} file ({', '.join(needs)} required); "
            + caller_option(
                "`recuse audit` and `recuse validate` read either kind without --table",
                "recuse.audit reads either kind without table=",
            ),
        )
    absent = [c for c in schema.filled if c not in names]  # optional, but worth a guess
    guess = suggest_columns([c for c in names if c not in schema.names], [*missing, *absent])
    must = [c for c in schema.required if c not in schema.filled]
    optional = [c for c in schema.names if c not in must]
    fix = map_hint(guess)
    told = ", ".join(c for c in must if c != derived.split(":")[0])
    if derived:
        told += f" ({derived})"
    fix += f"a {schema.name} file needs {told}; optional: {', '.join(optional)}" + (
        f"; the file has {column_list(names, limit=30)}" if names else "; it has no columns"
    )
    return InputError(
        f"missing required column(s) {', '.join(missing)}",
        file=str(file) if file is not None else None,
        fix=fix,
    )


def _other_kind(schema: Schema, names: Sequence[str]) -> str | None:
    """``"pairs"`` / ``"ratings"`` when the columns ``names`` make a table of the kind
    ``schema`` is not: a ratings table's required columns all there, or a pairs table's
    (item_id, prompt_id) with a pairs column beside them (a model side or a verdict)."""
    have = set(names)
    if schema.name == "pairs":
        ratings = {"prompt_id", "model", "dimension", "judge", "rating", "reference"}
        return "ratings" if ratings <= have else None
    side = {"model_a", "model_b", "human", "p_a_first", "p_a_second", "p_a", "response_a"}
    return "pairs" if {"item_id", "prompt_id"} <= have and have & side else None


def check_header(df: pd.DataFrame, *, file: str | Path | None = None) -> None:
    """Raise :class:`InputError` where ``df``'s header is not one name per column: two
    levels (a ``MultiIndex``, as ``pivot_table`` or ``concat(keys=)`` make), a name
    given to two columns (``concat(axis=1)``), where ``df[name]`` is not one column, or
    to two index levels, which :func:`index_as_columns` makes columns."""
    fname = str(file) if file is not None else None
    if isinstance(df.columns, pd.MultiIndex):
        first = ", ".join(shown(c) for c in df.columns[:3])
        raise InputError(
            f"the table has {df.columns.nlevels} header levels (a MultiIndex: {first} …)",
            file=fname,
            fix="give one name per column, e.g. df.columns = "
            "['_'.join(map(str, c)) for c in df.columns], then rename the columns recuse reads",
        )
    if not df.columns.is_unique:
        name = df.columns[df.columns.duplicated()][0]
        n = int((df.columns == name).sum())
        raise InputError(
            f"{n} columns named {shown(name)}",
            file=fname,
            column=str(name),
            fix="one name per column: drop or rename the copies "
            "(df.loc[:, ~df.columns.duplicated()] keeps the first)",
        )
    named = _named_levels(df)
    twice = next((n for n in named if named.count(n) > 1), None)
    if twice is not None:  # its named levels are columns of the table (index_as_columns)
        raise InputError(
            f"{named.count(twice)} index levels named {shown(twice)}",
            file=fname,
            column=str(twice),
            fix="one name per index level: rename them (df.index.names = [...]), or "
            "drop the index (df.reset_index(drop=True))",
        )


def index_as_columns(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its named index levels as columns (``df`` itself where it has none),
    as ``to_csv`` writes them: a column made the index (``set_index("item_id")``) is
    still a column of the table. Unnamed levels (row numbers) and a level named like a
    column are left out."""
    named = _named_levels(df)
    return df.reset_index(level=named) if named else df


def _named_levels(df: pd.DataFrame) -> list[Any]:
    """The names of ``df``'s index levels that :func:`index_as_columns` makes columns:
    the named ones, but for a name a column already has."""
    return [n for n in df.index.names if n is not None and n not in df.columns]


def _empty_table(df: pd.DataFrame, schema: Schema, file: str | None) -> InputError:
    """The error for a table of no rows: a file's is a header alone (no mapping of its
    columns leaves rows out). The fix names the required columns it lacks only (a
    file's reader has filled the ones it derives, e.g. prompt_id, and said so)."""
    must = [c for c in schema.required if c not in schema.filled]
    lacking = [c for c in must if c not in df.columns]
    fix = f"add a row per {schema.name[:-1]}" + (" under the header" if file else "")
    if lacking:
        fix += f", with the column(s) {', '.join(lacking)}"
    return InputError(
        f"the {schema.name} table is empty: "
        + ("it has columns but no data rows" if file else "it has no rows"),
        file=file,
        fix=fix,
    )


def _validate(
    df: pd.DataFrame,
    schema: Schema,
    file: str | Path | None,
    *,
    flip: frozenset[str] = frozenset(),
    texts_read: Collection[str] = (),
) -> pd.DataFrame:
    fname = str(file) if file is not None else None
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"expected a {schema.name} table (pandas DataFrame)", file=fname)
    check_header(df, file=fname)
    df = index_as_columns(df)
    if len(df) == 0:
        raise _empty_table(df, schema, fname)
    missing = [c for c in schema.required if c not in df.columns]
    if missing:
        raise missing_columns_error(schema, missing, df.columns, fname)
    out = df.reset_index(drop=True).copy()
    check_scalars(out, schema.names, file=fname)
    # told before any error, which may be about a cell read as missing here
    # a file's reader has read its columns' texts already (before its value map): the
    # columns it read are not read again here (a second pass over every cell)
    unread = [c for c in schema.names if c not in texts_read]
    if unread:
        note_missing_texts(read_missing_texts(out, unread), fname)
    for col in schema.columns:
        if col.name in out.columns:
            out[col.name] = _coerce(out, col, schema, fname, flip=col.name in flip)
    dup = out.duplicated(list(schema.key), keep="first")
    if dup.any():
        i = _first(dup)
        # a key column left empty (a file to judge has no judge) is not said: judge=None
        named = [k for k in schema.key if not pd.isna(out[k].iloc[i])] or list(schema.key)
        key = ", ".join(f"{k}={out[k].iloc[i]!r}" for k in named)
        each = named[0] if len(named) == 1 else f"({', '.join(named)})"
        raise InputError(
            f"duplicate {schema.name} row ({key})",
            file=fname,
            row=i + 1,
            fix=f"each {each} may appear once; remove or rename the duplicate",
        )
    return out


#: the free-text columns: a prompt or a response is what was written, and a model may
#: answer "None" or "N/A" (AlpacaEval holds such answers), so these are never read by
#: :func:`read_missing_texts`
FREE_TEXT = ("prompt", "response_a", "response_b")


def read_missing_texts(frame: pd.DataFrame, columns: Iterable[object]) -> dict[str, pd.Series]:
    """Make missing, in place, each cell of ``frame``'s ``columns`` (those it has, but
    :data:`FREE_TEXT`) that holds one of the texts that mark a missing value (pandas'
    defaults, :data:`recuse.cells.MISSING_TEXTS`: ``""``, ``"NA"``, ``"nan"``, ``"None"``,
    ``"null"``, ...), so that a DataFrame, JSON, Parquet or CSV table reads alike.
    Returns the texts made missing, by column (a Series indexed by 0-based row
    position), for :func:`note_missing_texts` to name. Spaces around such a
    text are no part of it (``" NA "`` is ``NA``), as recuse reads the model names,
    verdicts, labels and numbers beside it trimmed: a model ``" NA "`` was trimmed to a
    model ``NA`` and then read as missing, told as both. A cell of spaces alone is left
    to the column's own rule."""
    found: dict[str, pd.Series] = {}
    for name in dict.fromkeys(columns):
        if name in FREE_TEXT or name not in frame.columns or frame[name].dtype.kind not in "OUS":
            continue  # a number or bool column holds no text
        s = frame[name]
        hit = _missing_texts_in(s)
        if hit.any():  # by position: a Parquet file's index may be any labels
            found[str(name)] = pd.Series(s.to_numpy()[hit], index=np.flatnonzero(hit))
            frame[name] = s.where(~hit, None if s.dtype == object else np.nan)
    return found


#: the missing texts a cell holding spaces around them is (spaces alone are not one)
_TRIMMED_MISSING = MISSING_TEXTS - {""}


def _missing_texts_in(s: pd.Series) -> NDArray[np.bool_]:
    """Which cells of ``s`` hold a text that marks a missing value, spaces around it
    aside (:func:`read_missing_texts`). Each distinct value is read once, in Python:
    pandas' ``isin`` and ``str.strip`` cost a millisecond a call however short the
    column, and a table's ~10 columns are read each time one is validated.

    >>> _missing_texts_in(pd.Series(["NA", " nan ", "", " ", "x", None, 1, ["NA"]])).tolist()
    [True, True, True, False, False, False, False, False]
    """
    if _arrow_backed(s):
        return _missing_texts_arrow(s)
    try:
        codes, uniques = pd.factorize(s)  # a missing cell is -1: not a text
        values = np.asarray(uniques, dtype=object)
    except TypeError:  # unhashable cells (lists): each one read
        codes, values = np.arange(len(s)), s.to_numpy(dtype=object)
    known = np.fromiter(
        (isinstance(v, str) and (v in MISSING_TEXTS or v.strip() in _TRIMMED_MISSING)
         for v in values),
        dtype=bool, count=len(values),
    )  # fmt: skip
    return np.append(known, False)[codes]


def _arrow_backed(s: pd.Series) -> bool:
    """Whether ``s`` is pandas' text column held in Arrow (what the CSV reader gives)."""
    return isinstance(s.dtype, pd.StringDtype) and s.dtype.storage == "pyarrow"


#: the ASCII characters Python's ``str.strip()`` removes (``str.isspace``)
_ASCII_STRIPPED = "".join(c for c in map(chr, range(128)) if c.isspace())


def _missing_texts_arrow(s: pd.Series) -> NDArray[np.bool_]:
    """:func:`_missing_texts_in` of an Arrow text column, in Arrow's compute kernels: a
    cell is one where it is a missing text as written, or (checked in Python, the few
    such cells) where it starts or ends with an ASCII space ``str.strip`` removes, or
    is not ASCII (a space past ASCII may end it), and is one without those spaces. Any
    other cell is its own ``strip()``, so the two agree
    cell for cell (``tests/test_tables.py`` compares them); a 960,000-row ratings
    file's read of its ten columns took 0.65 s value by value, its numbers' texts
    being nearly all distinct."""
    import pyarrow as pa
    import pyarrow.compute as pc

    cells = s.array.__arrow_array__()
    exact = pc.is_in(cells, value_set=pa.array(sorted(MISSING_TEXTS)))
    # a space at either end: an ASCII one, or any cell not ASCII (read in Python)
    trimmed = pc.ascii_trim(cells, characters=_ASCII_STRIPPED)
    spaced = pc.or_(
        pc.not_equal(pc.binary_length(trimmed), pc.binary_length(cells)),
        pc.invert(pc.string_is_ascii(cells)),
    )
    hit = exact.to_numpy(zero_copy_only=False).astype(bool)  # a missing cell is False
    odd = pc.and_(spaced, pc.invert(exact)).fill_null(False).to_numpy(zero_copy_only=False)
    rows = np.flatnonzero(odd)
    if len(rows):  # each distinct one read once (a column of ids not in ASCII)
        codes, uniques = pd.factorize(s.iloc[rows])
        known = [t.strip() in _TRIMMED_MISSING for t in uniques]
        hit[rows] = np.asarray(known, dtype=bool)[codes]
    return hit


def note_missing_texts(texts: Mapping[str, pd.Series], file: str | Path | None) -> None:
    """The note for the cells :func:`read_missing_texts` made missing: which texts, in
    which columns and rows (1-based data rows). An empty text is left out: it is a CSV
    file's empty cell, which every table writer (and ``fillna("")``) writes for a
    missing one."""
    parts = []
    for name, held in texts.items():
        held = held[held != ""]
        if held.empty:
            continue
        words = ", ".join(shown(v) for v in dict.fromkeys(held.tolist()))
        n, row = len(held), int(held.index[0]) + 1
        rows = f"{n:,} rows, first data row {row}" if n > 1 else f"data row {row}"
        parts.append(f"{words} in {name} ({rows})")
    if not parts:
        return
    where = f"{file}: " if file is not None else ""
    warnings.warn(
        f"{where}read as missing: {'; '.join(parts)} — texts that mark a missing value "
        "(pandas' defaults), which recuse reads so in the columns of models, ids, labels, "
        "verdicts and scores of every table (CSV, JSON, Parquet or DataFrame alike; a "
        "prompt or an answer keeps them as written); if one is a real value, rename it "
        "(a model 'NA' as 'NA-model')",
        ReaderNote,
        stacklevel=3,
    )


def _note_replaced_p_a(given: pd.Series, mean: pd.Series, file: str | None) -> None:
    """A note where a given ``p_a`` differs from the mean of the orders that replaces it
    (a verdict averaged another way, or stale): the replacement is never silent."""
    differs = given.notna() & mean.notna() & ((given.astype(float) - mean).abs() > 1e-6)
    if not differs.any():
        return
    n, row = int(differs.sum()), _first(differs) + 1
    where = f"{file}: " if file else ""
    warnings.warn(
        f"{where}p_a differs from the mean of p_a_first and p_a_second in {n:,} row"
        f"{'s' if n != 1 else ''} (first: row {row}); recuse reads each pair's verdict as "
        "that mean, over the orders judged — drop p_a, or fix the per-order columns",
        ReaderNote,
        stacklevel=3,
    )


#: the judge's verdict columns of a pairs table (both orders, and order unknown)
VERDICTS = ("p_a_first", "p_a_second", "p_a")


def with_optional_pairs_columns(df: pd.DataFrame, *, verdicts: bool = True) -> pd.DataFrame:
    """``df`` with the ``pairs`` columns a table may leave out added empty (``df``
    itself where none is missing):

    - a table with some verdict columns gets the other ones (``p_a`` alone is a single
      verdict of unknown order; ``p_a`` is derived from the two orders anyway);
    - a table with no judge and no verdict columns is human-only data: ``judge`` and
      the verdicts are added empty;
    - a table with neither ``model_a`` nor ``model_b`` has unknown generators;
    - a table without ``human`` has no labels.

    A judge without verdicts, or one generator column without the other, stays
    incomplete and is refused by validation. ``verdicts=False`` adds the label and
    generator columns only (a metric's table, whose ``p_a`` is not derived again).

    >>> sorted(with_optional_pairs_columns(pd.DataFrame({"item_id": [1]})).columns)
    ['human', 'item_id', 'judge', 'model_a', 'model_b', 'p_a', 'p_a_first', 'p_a_second']
    """
    add: dict[str, float | None] = {}
    if not verdicts:
        pass
    elif any(c in df.columns for c in VERDICTS):
        add |= {c: np.nan for c in VERDICTS if c not in df.columns}
    elif "judge" not in df.columns:
        add |= {"judge": None, **dict.fromkeys(VERDICTS, np.nan)}
    if "model_a" not in df.columns and "model_b" not in df.columns:
        add |= {"model_a": None, "model_b": None}
    if "human" not in df.columns:
        add["human"] = np.nan
    return df.assign(**add) if add else df


def validate_pairs(
    df: pd.DataFrame,
    *,
    file: str | Path | None = None,
    swapped_frame: SwappedFrame = "original",
    confidence: str | None = None,
    confidence_of: ConfidenceOf = "winner",
    texts_read: Collection[str] = (),
) -> pd.DataFrame:
    """Check and normalise a ``pairs`` table; returns a new DataFrame.

    Verdict and label cells are read by :func:`verdict_values` (A/B/tie, [[A]], model
    names, AlpacaEval's 1/2/1.5, probabilities).

    ``swapped_frame`` says how ``p_a_second`` (the order with b shown first) is written:
    ``"original"`` — already in the a/b frame (A or 1 = a better); ``"presented"`` — as
    the judge saw it (A or 1 = the response shown first, which is b), so p = 1 − value.
    A model name means that model in either frame.

    ``confidence`` names a column with the judge's confidence in [0, 1] for its verdict
    in the first order (``p_a_first``, or ``p_a`` when the table has only that): with
    ``confidence_of="winner"`` it is the probability of the verdict given, so
    P(a better) = c where the verdict is a, 1 − c where it is b (a tie stays 0.5);
    with ``"a"`` it is P(a better) itself and replaces the verdict. Rows without a
    confidence keep the verdict.

    ``p_a`` is filled with the mean of ``p_a_first`` and ``p_a_second`` over the
    orders that were judged wherever either is present; where neither is present a
    given ``p_a`` (single verdict, order unknown) is kept.

    ``texts_read`` names the columns whose missing-value texts (``"NA"``, ``"None"``,
    ...) the caller has already made missing with :func:`read_missing_texts`, as a
    file's reader does before its value map: validation reads only the others (each
    cell is read once). A DataFrame given directly leaves it empty.
    """
    if swapped_frame not in ("original", "presented"):
        raise ConfigError(f"swapped_frame {swapped_frame!r}: use 'original' or 'presented'")
    if confidence_of not in ("winner", "a"):
        raise ConfigError(f"confidence_of {confidence_of!r}: use 'winner' or 'a'")
    flip = frozenset({"p_a_second"} if swapped_frame == "presented" else ())
    if isinstance(df, pd.DataFrame):
        check_header(df, file=file)
        df = index_as_columns(df)
        must = [c for c in PAIRS.required if c not in PAIRS.filled and c not in df.columns]
        if must and len(df):  # named against the frame's own columns, before filling
            raise missing_columns_error(PAIRS, must, df.columns, file)
        df = with_optional_pairs_columns(df)
    out = _validate(df, PAIRS, file, flip=flip, texts_read=texts_read)
    fname = str(file) if file is not None else None
    _check_items(out, fname)
    _note_items_half_given(out, fname)
    if confidence is not None:
        _apply_confidence(out, confidence, confidence_of, fname)
    both = out[["p_a_first", "p_a_second"]]
    judged = both.notna().any(axis=1)
    mean = both.mean(axis=1)  # NaN where neither order was judged
    _note_replaced_p_a(out["p_a"], mean, fname)
    out.loc[judged, "p_a"] = mean[judged]
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
            # a verdict the judge did not give holds no value: a placeholder (0.5 for
            # "no verdict") would otherwise be read as the judge's verdict
            value = out[f"p_a_{order}"]
            placeholder = out[status].isin(("unparsed", "failed", "missing")) & value.notna()
            if placeholder.any():
                i = _first(placeholder)
                raise InputError(
                    f"status_{order} is {out[status].iloc[i]!r} but p_a_{order} holds "
                    f"{value.iloc[i]:g}: a verdict the judge did not give has no value",
                    file=fname,
                    row=i + 1,
                    column=f"p_a_{order}",
                    fix=f"empty p_a_{order} where status_{order} is not 'ok' (recuse counts "
                    f"and leaves those out), or set status_{order} to 'ok' if it is the "
                    "judge's verdict",
                )
    return check_probe_table(out, file=file)


#: what one comparison is: the same in every row of its item (one row per judge); the
#: prompt's text before its id, which a file without prompt_id has made from the text
#: (:func:`recuse.data.columns.derive_prompt_id`): two texts are named as the file has them
ITEM_FIELDS = (
    "prompt", "prompt_id", "model_a", "model_b", "human", "response_a", "response_b",
    "len_a", "len_b",
)  # fmt: skip


def _check_items(out: pd.DataFrame, file: str | None) -> None:
    """Raise :class:`InputError` where two rows of one item disagree on its prompt, its
    models or its human label (a missing value agrees with any; texts compared by
    :func:`~recuse.cells.one_text`: line ends and spaces around them apart)."""
    repeated = out["item_id"].duplicated(keep=False)
    if not repeated.any():
        return
    rows = out[repeated]
    for col in (c for c in ITEM_FIELDS if c in rows.columns):
        values = rows[col]
        if col in FREE_TEXT:
            values = _one_texts(values)
        distinct = values.groupby(rows["item_id"], sort=False).nunique(dropna=True)
        if not (distinct > 1).any():
            continue
        item = distinct[distinct > 1].index[0]
        of_item = values[rows["item_id"] == item].dropna()
        first = of_item.index[0]
        other = next(i for i in of_item.index if of_item[i] != of_item[first])
        of_item = rows.loc[of_item.index, col]  # shown as written
        raise InputError(
            f"item {shown(item)} has {col} {shown(of_item[first])} in row {first + 1} and "
            f"{shown(of_item[other])} here: the rows of one comparison (one per judge) "
            "must describe it alike",
            file=file,
            row=int(other) + 1,
            column=col,
            fix="give each comparison its own item_id, or make its rows agree (rows from a "
            "tool that puts a and b the other way round need model_a/model_b, human and "
            "the verdicts swapped together)",
        )


def _one_texts(s: pd.Series) -> pd.Series:
    """``s`` with each text as :func:`~recuse.cells.one_text` reads it (other cells as
    they are), each distinct text read once: an item's rows (one per judge) repeat its
    prompt and answers, which were read row by row.

    >>> _one_texts(pd.Series([" a\\r\\nb ", " a\\r\\nb ", None, 1.5])).tolist()
    ['a\\nb', 'a\\nb', None, 1.5]
    """
    codes, uniques = pd.factorize(s)  # a missing cell is -1, kept as it is
    read = np.fromiter(
        (one_text(v) if isinstance(v, str) else v for v in np.asarray(uniques, dtype=object)),
        dtype=object, count=len(uniques),
    )  # fmt: skip
    cells = s.to_numpy(dtype=object).copy()
    given = codes >= 0
    cells[given] = read[codes[given]]
    return pd.Series(cells, index=s.index, name=s.name, dtype=object)


#: what one comparison's rows may each hold or lack, its label, models and texts
#: (:func:`_note_items_half_given`)
HALF_GIVEN = ("human", "model_a", "model_b", "response_a", "response_b", "len_a", "len_b")


def _note_items_half_given(out: pd.DataFrame, file: str | None) -> None:
    """A note where some rows of an item lack a value (the human label, a model, a text
    or length) that its other rows give. :func:`_check_items` lets a missing value agree
    with any, and every judge's analyses read its own row: a label joined onto one
    judge's rows only left that judge's labelled analyses without the comparison (its n
    and estimate on fewer pairs than the others'), with nothing said."""
    if not out["item_id"].duplicated().any():
        return
    said: list[str] = []
    first: tuple[int, str] | None = None
    item, n_items = _item_codes(out["item_id"])  # the items found once, for every column
    for col in (c for c in HALF_GIVEN if c in out.columns):
        given = out[col].notna().to_numpy(dtype=bool)
        # a row lacks it where its item's rows give it (any of them) and it does not
        lacking = (np.bincount(item, weights=given, minlength=n_items) > 0)[item] & ~given
        k = int(lacking.sum())
        if k:
            said.append(f"{k:,} row{'s' if k != 1 else ''} lack{'s' if k == 1 else ''} {col}")
            i = int(np.flatnonzero(lacking)[0])
            if first is None or i < first[0]:
                first = (i, col)
    if first is None:
        return
    i, col = first
    warnings.warn(
        f"{file + ': ' if file else ''}rows of an item lack what its other rows give "
        f"({'; '.join(said)}; first: data row {i + 1}, item {shown(out['item_id'].iloc[i])}, "
        f"judge {shown(out['judge'].iloc[i]) if 'judge' in out else 'none'}, {col}): each "
        "judge's analyses read its own row, so those judges go without it — give it in "
        "every row of the item",
        ReaderNote,
        stacklevel=4,
    )


def _item_codes(items: pd.Series) -> tuple[NDArray[np.intp], int]:
    """Each row's item as a number 0..n-1 (its first appearance's order), and n: the
    ids of a validated table, never missing.

    >>> _item_codes(pd.Series(["i2", "i1", "i2"]))
    (array([0, 1, 0]), 2)
    """
    codes, uniques = pd.factorize(items)
    return codes.astype(np.intp, copy=False), len(uniques)


def _apply_confidence(out: pd.DataFrame, column: str, of: ConfidenceOf, file: str | None) -> None:
    """Turn the first-order verdict of ``out`` into P(a better) from the confidence
    ``column`` (in place); see :func:`validate_pairs`."""
    if column not in out.columns:
        raise InputError(
            f"the confidence column {column!r} is not in the table",
            file=file,
            fix=f"columns: {', '.join(map(str, out.columns[:30]))}",
        )
    schema = {c.name: c for c in PAIRS.columns}
    if column in schema:  # `--confidence human --confidence-of a` made the labels the
        # judge's verdicts: certified at 100% agreement, without a word
        what = schema[column].doc or f"read as {column}"
        option = caller_option("--confidence", "confidence=")
        raise InputError(
            f"the confidence column is the table's {column!r} ({what}), which recuse reads "
            "as such: a judge's confidence in its verdict is a column of its own",
            file=file,
            column=column,
            fix=f"give {option} the column holding the judge's confidence, or leave it out",
        )
    check_scalars(out, [column], file=file)
    raw = out[column]
    flag = _first_bool(raw)
    conf = _to_numeric(raw).astype(float)
    bad = conf.isna() & raw.notna() & (raw.astype(str).str.strip() != "")
    if flag is not None or bad.any():
        i = flag if flag is not None else _first(bad)
        raise InputError(
            f"expected a confidence (a number in [0, 1]), got {shown(raw.iloc[i])}",
            file=file,
            row=i + 1,
            column=column,
            fix="write the judge's confidence as a probability with a dot as decimal separator",
        )
    values = conf.to_numpy()
    outside = ~np.isnan(values) & ((values < 0) | (values > 1))
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise InputError(
            # as typed, never rounded: 1.0000000000000002 read "confidence 1 is outside [0, 1]"
            f"confidence {exact(values[i])} is outside [0, 1]",
            file=file,
            row=i + 1,
            column=column,
            fix="a confidence is a probability in [0, 1] (percentages: divide by 100)",
        )
    target = "p_a" if out["p_a_first"].isna().all() and out["p_a"].notna().any() else "p_a_first"
    verdict = out[target].to_numpy(dtype=float)
    if of == "a":
        p = np.where(np.isnan(values), verdict, values)
    else:
        if np.isnan(verdict).all():
            raise InputError(
                f"the confidence column {column!r} gives the probability of the verdict, "
                "but the table has no verdict (p_a_first or p_a)",
                file=file,
                column=column,
                fix=f"map the judge's verdict column to p_a_first "
                f"({caller_option('--map', 'mapping=')}), or say the confidence is P(a "
                f"better) ({caller_option('--confidence-of a', 'confidence_of=' + repr('a'))})",
            )
        # a confidence below 0.5 in the verdict given would turn it (A at 0.4 read P(a
        # better) 0.4, a pick of b): the chosen option's share among three (A, B, tie) is
        # one, and P(a better) cannot be told from it
        turned = (values < 0.5) & ~np.isnan(verdict) & (verdict != 0.5)
        if turned.any():
            i, n_turned = int(np.flatnonzero(turned)[0]), int(turned.sum())
            side = "a" if verdict[i] > 0.5 else "b"
            raise InputError(
                f"confidence {exact(values[i])} in a verdict for {side}: the confidence of "
                f"the verdict given is at least 0.5, and read as it is it would turn the "
                f"verdict (P({side} better) = {exact(values[i])}, a pick of the other "
                f"answer); {n_turned:,} row{'s' if n_turned != 1 else ''} of the table "
                f"hold{'s' if n_turned == 1 else ''} one",
                file=file,
                row=i + 1,
                column=column,
                fix="if the confidence is the chosen option's share among A, B and tie, "
                "P(a better) cannot be read from it: give P(a better) as the confidence "
                f"({caller_option('--confidence-of a', 'confidence_of=' + repr('a'))}) or "
                f"leave {caller_option('--confidence', 'confidence=')} out",
            )
        chosen = np.where(verdict > 0.5, values, np.where(verdict < 0.5, 1.0 - values, 0.5))
        p = np.where(np.isnan(values) | np.isnan(verdict), verdict, chosen)
    # a tie given the probability of its verdict is 0.5 either way
    kept = np.isnan(values) & ~np.isnan(verdict) & ((verdict != 0.5) | (of == "a"))
    if kept.any():
        n, row = int(kept.sum()), int(np.flatnonzero(kept)[0]) + 1
        warnings.warn(
            f"{file + ': ' if file else ''}{n:,} verdict{'s' if n != 1 else ''} without a "
            f"confidence in {column!r} (first: row {row}) kept as written ({target} "
            f"{verdict[row - 1]:g}), a certainty beside the other rows' probabilities — give "
            "every judged row its confidence, or leave those rows out",
            ReaderNote,
            stacklevel=4,
        )
    out[target] = p


def validate_ratings(
    df: pd.DataFrame, *, file: str | Path | None = None, texts_read: Collection[str] = ()
) -> pd.DataFrame:
    """Check and normalise a ``ratings`` table; returns a new DataFrame.

    A missing ``rating`` is allowed only where ``status`` says why (``unparsed``,
    ``failed`` or ``missing``), and such a status needs the rating empty (a placeholder
    would be read as the judge's rating); a missing status on a present rating becomes
    ``ok``. ``texts_read``: as :func:`validate_pairs` has it.
    """
    out = _validate(df, RATINGS, file, texts_read=texts_read)
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
    placeholder = out["status"].isin(STATUSES[1:]) & ~nan_rating
    if placeholder.any():
        i = _first(placeholder)
        raise InputError(
            f"status is {out['status'].iloc[i]!r} but rating holds {out['rating'].iloc[i]:g}: "
            "a rating the judge did not give has no value",
            file=fname,
            row=i + 1,
            column="rating",
            fix="empty rating where status is not 'ok' (recuse counts and leaves those out), "
            "or set status to 'ok' if it is the judge's rating",
        )
    _one_dimension_spelling(out, fname)
    _check_answers(out, fname)
    return out


#: how many joined dimensions :func:`_one_dimension_spelling`'s note names (the rest
#: counted): a file of thousands of dimensions would otherwise print them all
SPELLINGS_SHOWN = 3


def _one_dimension_spelling(out: pd.DataFrame, file: str | None) -> None:
    """Write each dimension in its first spelling, with a note, where the file spells one
    dimension in several ways that differ only in case, Unicode form or inner spaces
    ("Helpfulness", "helpfulness", "helpfulness "): read as written, each was a dimension
    of its own, normalised to its own top score and fitted apart, with nothing said.

    Spellings of which one judge rates one answer (prompt_id, model) in two, or that
    give one answer two references, are two dimensions, and stay apart: an Inspect
    log's scorers ``match`` and ``Match`` each grade every sample, and joined they were
    two ratings of one answer in one dimension; joined, references 1 and 5 of one
    answer were refused as one answer's two references.

    >>> t = pd.DataFrame({"prompt_id": ["p", "q", "p"], "model": "m", "judge": "j",
    ...                   "dimension": ["Helpfulness", "helpfulness", "harm"],
    ...                   "reference": 1.0})
    >>> with warnings.catch_warnings(record=True):
    ...     _one_dimension_spelling(t, None)
    >>> t["dimension"].tolist()
    ['Helpfulness', 'Helpfulness', 'harm']
    """
    written = pd.unique(out["dimension"])
    if len(written) < 2:
        return
    spellings: dict[str, list[str]] = {}  # each key's spellings, first first
    for name in written:
        key = " ".join(unicodedata.normalize("NFKC", str(name)).casefold().split())
        spellings.setdefault(key, []).append(name)
    joined = {n: names[0] for names in spellings.values() if len(names) > 1 for n in names}
    if not joined:
        return
    dimension = out["dimension"]
    one = dimension.map(joined)
    rows = out.loc[one.notna(), ["prompt_id", "model", "judge", "reference"]].assign(dimension=one)
    keys = ["prompt_id", "model", "judge", "dimension"]
    apart = set(rows.loc[rows.duplicated(keys, keep=False), "dimension"])  # two of one answer
    scales = _references_differ(rows["reference"], [rows[k] for k in ANSWER])
    apart.update(rows.loc[scales, "dimension"])  # two scales
    groups = [n for n in spellings.values() if len(n) > 1 and n[0] not in apart]
    if not groups:
        return
    joined = {n: names[0] for names in groups for n in names}
    out["dimension"] = dimension.map(joined).where(dimension.isin(joined), dimension)
    said = [f"{', '.join(shown(n) for n in names)} as {shown(names[0])}" for names in groups]
    more = len(said) - SPELLINGS_SHOWN
    listed = "; ".join(said[:SPELLINGS_SHOWN]) + (
        f"; and {more:,} more dimensions so spelled" if more > 0 else ""
    )
    warnings.warn(
        f"{file + ': ' if file else ''}dimension names that differ only in case or spacing "
        f"are read as one dimension: {listed} (read apart, each would be normalised "
        "to its own top score and fitted apart) — write each dimension one way",
        ReaderNote,
        stacklevel=4,
    )


#: two references of one answer closer than this, relative to the larger (at least 1),
#: are one (a mean rating written to 10 digits in one judge's rows, 16 in another's)
REFERENCE_TOL = 1e-6


#: the columns naming one rated answer
ANSWER = ("prompt_id", "model", "dimension")


def _references_differ(reference: pd.Series, keys: list[pd.Series]) -> np.ndarray:
    """Mask of the rows whose group (by ``keys``) holds references further apart than
    :data:`REFERENCE_TOL` of the larger |reference| (at least 1); a missing one agrees."""
    by = reference.groupby(keys, sort=False, dropna=False)
    top, bottom = by.transform("max").to_numpy(float), by.transform("min").to_numpy(float)
    size = np.maximum(np.maximum(np.abs(top), np.abs(bottom)), 1.0)  # the larger |reference|
    return np.asarray(top - bottom > REFERENCE_TOL * size)


def _check_answers(out: pd.DataFrame, file: str | None) -> None:
    """Raise :class:`InputError` where two judges' rows of one answer (its prompt_id,
    model and dimension) give it two reference scores (a missing one agrees with any):
    the reference is the answer's independent score, one number, as a pairs item's
    human label is one (:func:`_check_items`). Read as they were, each judge was
    adjusted for a reference of its own, and the corrections table took the first.
    References within :data:`REFERENCE_TOL` of each other (relative) are one: refused,
    3.3333333333 beside 3.333333333333333 read "3.33333 in row 1 and 3.33333 here"."""
    key = list(ANSWER)
    ref = out["reference"]
    odd = pd.Series(_references_differ(ref, [out[k] for k in key]), index=out.index)
    if not odd.any():
        return
    i = _first(odd)
    same = ((out[key] == out[key].iloc[i]).all(axis=1) & ref.notna()).to_numpy()
    first = int(np.flatnonzero(same)[0])
    apart = np.where(same, np.abs(ref.to_numpy(float) - ref.iloc[first]), -1.0)
    other = int(np.argmax(apart))
    raise InputError(
        f"the answer of model {shown(out['model'].iloc[i])} to prompt "
        f"{shown(out['prompt_id'].iloc[i])} ({shown(out['dimension'].iloc[i])}) has reference "
        f"{exact(ref.iloc[first])} in row {first + 1} (judge {shown(out['judge'].iloc[first])}) "
        f"and {exact(ref.iloc[other])} here (judge {shown(out['judge'].iloc[other])}): an "
        "answer's reference is its one independent score, the same beside every judge's rating",
        file=file,
        row=other + 1,
        column="reference",
        fix="give each answer one reference (the same in every judge's row), or tell the "
        "answers apart by prompt_id, model or dimension",
    )


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
