"""Cell-level helpers every table reader and check shares: a value shown in an error
message, the check that schema cells hold one text or number, the first flagged row,
a column of names or ids as text (:func:`as_text`).

A leaf (it imports only :mod:`recuse.errors`): :mod:`recuse.tables` and
:mod:`recuse.probe_tables` both read it, so neither imports the other's helpers.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from recuse.errors import InputError

__all__ = [
    "FLAT_KINDS",
    "MISSING_TEXTS",
    "among",
    "check_scalars",
    "column_list",
    "first_true",
    "shown",
]


def column_list(names: Iterable[object], limit: int = 40) -> str:
    """A file's column names for a message, joined with ", " (at most ``limit``, then
    "…"): bare, except a name a reader could not tell apart there, quoted as
    :func:`repr` writes it (one holding a comma, with spaces around it, or empty). A
    column ``score, raw`` was listed as "p_a_first, score, raw", two columns to the eye.

    >>> column_list(["item_id", "score, raw", "human "])
    "item_id, 'score, raw', 'human '"
    """
    texts = [str(n) for n in names]
    bare = [t if t and t == t.strip() and "," not in t else repr(t) for t in texts[:limit]]
    return ", ".join(bare) + (" …" if len(texts) > limit else "")


def shown(value: object, limit: int = 60) -> str:
    """``repr(value)`` for an error message: numpy scalars as plain Python values, long
    values cut to ``limit`` characters with their full length noted.

    >>> shown("x" * 100, limit=10)
    "'xxxxxxx… (100 characters)"
    """
    if isinstance(value, np.generic | np.ndarray):
        value = value.tolist()
    text = repr(value)
    if len(text) <= limit:
        return text
    size = len(value) if isinstance(value, str | bytes | list | dict) else len(text)
    return f"{text[: limit - 2]}… ({size:,} {'characters' if isinstance(value, str) else 'long'})"


#: the texts a CSV file's reader (pandas' ``read_csv`` by default) reads as a missing
#: cell. Every table door reads them so in the schema columns, and only there (a
#: DataFrame, JSON or Parquet cell holding the text ``"NA"`` is the same data as a CSV
#: cell ``NA``): :func:`recuse.tables.validate_pairs` and ``validate_ratings``. recuse's
#: own CSV reader (:func:`recuse.data.delimited.read_csv`) keeps them as texts, so that
#: a free-text cell (a prompt, an answer "None") is kept as written.
MISSING_TEXTS = frozenset(
    {
        "",
        "#N/A",
        "#N/A N/A",
        "#NA",
        "-1.#IND",
        "-1.#QNAN",
        "-NaN",
        "-nan",
        "1.#IND",
        "1.#QNAN",
        "<NA>",
        "N/A",
        "NA",
        "NULL",
        "NaN",
        "None",
        "n/a",
        "nan",
        "null",
    }
)

# pandas.api.types.infer_dtype results that cannot hold a list, dict or array
FLAT_KINDS = frozenset({"string", "integer", "floating", "mixed-integer-float", "boolean", "empty"})
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
        if pd.api.types.infer_dtype(s, skipna=True) in FLAT_KINDS:
            continue
        kinds = s.map(_nested)
        bad = kinds.notna()
        if bad.any():
            i = first_true(bad)
            raise InputError(
                f"expected one text or number, found a {kinds.iloc[i]} {shown(s.iloc[i])}",
                file=str(file) if file is not None else None,
                row=i + 1,
                column=col,
                fix="flatten the file: one text or number per cell in the schema columns "
                "(lists and objects may stay in extra columns)",
            )


def first_true(mask: pd.Series) -> int:
    """Positional index of the first True in ``mask``."""
    return int(np.flatnonzero(mask.to_numpy())[0])


def among(cells: pd.Series | pd.Index, values: Iterable[object]) -> NDArray[np.bool_]:
    """Which of ``cells`` are among ``values``: what ``cells.isin(values)`` gives, each
    value and cell hashed as the Python object it is. pandas 3's text columns and
    indexes (``str``, held in Arrow) make a pyarrow scalar of each value in ``isin``:
    0.95 s for 600,000 item ids among 300,000, against 0.1 s so.

    >>> among(pd.Series(["a", "b", None, "c"], dtype="str"), {"c", "a"}).tolist()
    [True, False, False, True]
    >>> among(pd.Series(["a", None], dtype="str"), ["b", None]).tolist()
    [False, True]
    """
    given = values if isinstance(values, pd.Index | pd.Series | np.ndarray) else list(values)
    table = pd.Index(np.asarray(given, dtype=object), dtype=object)
    plain = pd.Series(np.asarray(cells, dtype=object), dtype=object)
    out = np.array(plain.isin(table), dtype=bool)  # a copy: written below
    if isinstance(cells.dtype, pd.StringDtype | pd.CategoricalDtype):
        # pandas' text and categorical isin take every missing value (None, NaN, pd.NA)
        # for one: a missing cell is among values holding any of them; as Python
        # objects a NaN cell and a None value are two
        gone = np.asarray(pd.isna(cells), dtype=bool)
        out[gone] = bool(np.asarray(pd.isna(table)).any())
    return out


def one_text(text: str) -> str:
    """The text a free-text cell (a prompt, an answer) is compared and named by: line
    ends as LF and no spaces around it, so that one text written by two tools (CRLF and
    LF, a trailing newline) is one text: one prompt id, one cluster of the bootstrap,
    rows of one item that agree."""
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def as_text(s: pd.Series) -> pd.Series:
    """``s`` as text; in a column of floats, a whole number as the integer it is: ids
    ``7`` that pandas made ``7.0`` where another row's is missing (NaN has no integer)
    are ``"7"``, the judge ``7``'s own model, not a model ``"7.0"`` of their own.

    >>> as_text(pd.Series([7.0, 2.5, 2.0**60])).tolist()  # 2**60: past exact floats
    ['7', '2.5', '1.152921504606847e+18']
    """
    text = s.astype(str)
    if s.dtype.kind != "f":
        return text
    v = s.to_numpy(float, na_value=np.nan)
    whole = np.isfinite(v) & (v == np.round(v)) & (np.abs(v) < 2.0**53)  # exact integers
    if whole.any():
        ints = np.where(whole, v, 0).astype(np.int64).astype(str)
        text = text.where(~whole, pd.Series(ints, index=s.index, dtype=object))
    return text
