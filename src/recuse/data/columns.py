"""A file's columns against the schema: the column mapping (``--map``, file column ->
schema column), the unused columns that look like verdicts or labels, and the prompt
id a file without one is given."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from recuse.cells import column_list, one_text
from recuse.errors import InputError, ReaderNote
from recuse.renaming import mapping_named, mapping_renames
from recuse.tables import (
    PAIRS,
    PROBE_COLUMNS,
    RATINGS,
    TableKind,
    map_option,
    side_word,
)

__all__ = [
    "IGNORED",
    "MISNAMED",
    "ColumnMapping",
    "ColumnsIgnored",
    "apply_mapping",
    "derive_prompt_id",
    "file_column_names",
    "mapping_pairs",
    "no_such_column",
    "schema_spelling",
    "verdict_like_columns",
]

# the key of DataFrame.attrs where read_table lists the file columns it left unused
# that look like verdicts or labels ({column: why})
IGNORED = "recuse.ignored_columns"


def column_mapping(entries: Iterable[tuple[str, str]] = ()) -> str:
    """The mapping as its errors name it, where the user set it: ``--map``, a
    recuse.toml's ``[map]`` (which the user may not have in mind) or both (of a merged
    mapping, those that hold one of ``entries``, the error's); in Python the
    ``mapping=`` keyword (:func:`recuse.renaming.mapping_named`)."""
    return mapping_named(entries)


class ColumnsIgnored(ReaderNote):
    """A file's columns that look like judge verdicts were not read (a half mapping)."""


ColumnMapping = Mapping[str, str | tuple[str, ...]]
"""File column -> schema column(s): one file column may feed several schema columns
(e.g. ``{"id": ("item_id", "prompt_id")}``: each pair is its own prompt)."""


def mapping_pairs(mapping: ColumnMapping) -> list[tuple[str, str]]:
    """The (file column, schema column) pairs of a column mapping.

    >>> mapping_pairs({"id": ("item_id", "prompt_id"), "label": "human"})
    [('id', 'item_id'), ('id', 'prompt_id'), ('label', 'human')]
    """
    return [
        (source, t)
        for source, target in mapping.items()
        for t in ((target,) if isinstance(target, str) else target)
    ]


def apply_mapping(
    df: pd.DataFrame, mapping: ColumnMapping, table: TableKind, path: Path
) -> pd.DataFrame:
    schema = PAIRS if table == "pairs" else RATINGS
    mapping = _padded_sources(mapping, df.columns)
    pairs = mapping_pairs(mapping)
    for source, target in pairs:
        if source not in df.columns:
            raise no_such_column(column_mapping([(source, target)]), source, df, path)
        if target not in schema.names:
            import difflib

            close = difflib.get_close_matches(target, schema.names, n=1, cutoff=0.6)
            raise InputError(
                f"{column_mapping([(source, target)])} renames {source!r} to {target!r}, "
                "which is not a "
                f"{table} column",
                file=path,
                column=source,
                fix=(f"did you mean {close[0]!r}? " if close else "")
                + f"{table} columns: {', '.join(schema.names)}",
            )
    targets = [t for _, t in pairs]
    twice = {t for t in targets if targets.count(t) > 1}
    if twice:
        raise InputError(
            f"{column_mapping(p for p in pairs if p[1] == min(twice))} gives {min(twice)!r} twice",
            file=path,
            fix="map one file column to each schema column",
        )
    clash = [t for t in targets if t in df.columns and t not in mapping]
    if clash:
        raise InputError(
            f"the file already has a column {clash[0]!r} and "
            f"{column_mapping(p for p in pairs if p[1] == clash[0])} renames "
            "another column to it",
            file=path,
            column=clash[0],
            fix="drop one of them from the mapping or rename the file column",
        )
    out = df.drop(columns=list(mapping))
    for source, target in pairs:
        out[target] = df[source]
    return out


def _padded_sources(mapping: ColumnMapping, columns: Iterable[object]) -> ColumnMapping:
    """``mapping`` with each file column it names that the file lacks, but holds with
    spaces around it (``" item_id"``, the only such column), named as the file holds it:
    ``--map`` strips the spaces of what it is given, so it could not name that column.

    >>> _padded_sources({"item_id": "item_id", "b": "human"}, [" item_id", "b"])
    {' item_id': 'item_id', 'b': 'human'}
    """
    have = [c for c in columns if isinstance(c, str)]
    out = {}
    for source, target in mapping.items():
        padded = [c for c in have if c.strip() == source]
        out[padded[0] if source not in have and len(padded) == 1 else source] = target
    return out


@contextmanager
def file_column_names(mapping: ColumnMapping) -> Iterator[None]:
    """Errors raised inside, about a column ``mapping`` renamed, name it as the file
    does (with the schema name beside it): the name the user's file, ``--values`` and
    ``--map`` know, where the schema name alone sent them to a column the file lacks."""
    renamed = {t: s for s, t in mapping_pairs(mapping) if s != t}
    try:
        yield
    except InputError as err:
        source = renamed.get(err.column or "")
        if source is None:
            raise
        raise InputError(
            f"{err.reason} (the column mapped to {err.column!r})",
            file=err.file,
            row=err.row,
            column=source,
            fix=err.fix,
            line=err.line,
        ) from None


def no_such_column(what: str, name: str, df: pd.DataFrame, path: Path) -> InputError:
    import difflib

    have = [str(c) for c in df.columns]
    padded = [c for c in have if c.strip() == name.strip()]
    if len(padded) > 1:  # --map strips a name: it can tell none of them from the others
        return InputError(
            f"{what} names {name!r}, and the file has {len(padded)} columns named so with "
            f"spaces around it: {', '.join(map(repr, padded))}",
            file=path,
            column=name,
            fix="rename them in the file to differ by more than spaces (--map drops the "
            "spaces around a name), or in Python give the exact name ("
            + " or ".join(map(repr, padded))
            + ")",
        )
    close = difflib.get_close_matches(name, have, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return InputError(
        f"{what} names {name!r}, which is not in the file",
        file=path,
        column=name,
        fix=f"{hint}use the file's own column names (before {mapping_renames()} them): "
        f"{column_list(have)}",
    )


_VERDICT_NAME = re.compile(
    r"judge|winner|verdict|pred|score|confidence|preference|label|choice|rating|vote", re.I
)


#: how :func:`verdict_like_columns` says that a column is a schema column misspelt
MISNAMED = "its name is"


def schema_spelling(name: str, columns: Iterable[object]) -> str | None:
    """The pairs column ``name`` is written as in another case or spacing (``Human``,
    `` len_a``), where the table lacks that column; else None.

    >>> schema_spelling("Human ", ["Human ", "item_id"]), schema_spelling("Human", ["human"])
    ('human', None)
    """
    folded = " ".join(name.split()).casefold()
    target = next((c for c in (*PAIRS.names, *PROBE_COLUMNS) if c.casefold() == folded), None)
    return target if target is not None and target not in set(map(str, columns)) else None


def verdict_like_columns(df: pd.DataFrame, used: set[str]) -> dict[str, str]:
    """The columns of ``df`` outside ``used`` and the schema that look like verdicts or
    labels — by name (judge, winner, verdict, pred, score, confidence, ..., or a pairs
    column's name in another case or spacing: ``Human``) or by values (most of the
    first 1,000 are A / B / tie words) — with why."""
    out: dict[str, str] = {}
    for col in df.columns:
        name = str(col)
        if name in used or name in PAIRS.names or name in PROBE_COLUMNS:
            continue
        target = schema_spelling(name, df.columns)
        if target is not None:
            out[name] = f"{MISNAMED} {target!r} written another way (case or spaces)"
            continue
        if _VERDICT_NAME.search(name):
            out[name] = "its name looks like a judge, verdict or label column"
            continue
        s = df[col].dropna().head(1000)
        if len(s) and not pd.api.types.is_numeric_dtype(s.dtype):
            words = s.map(lambda v: isinstance(v, str) and side_word(v) is not None)
            if words.mean() >= 0.8:
                out[name] = "its values look like verdicts (A / B / tie)"
    return out


def derive_prompt_id(df: pd.DataFrame, path: Path) -> pd.DataFrame:
    """A file without ``prompt_id``: with ``prompt`` texts, identical texts are one
    prompt (the bootstrap's cluster; the id is a short hash of the text); without them,
    each ``item_id`` is its own prompt, which is said in a :class:`ReaderNote`."""
    import hashlib

    if "prompt_id" in df.columns:
        return df
    if "prompt" not in df.columns:
        if "item_id" not in df.columns:
            return df  # the missing columns are reported by validation
        warnings.warn(
            f"{path}: no prompt_id or prompt column, so each pair (item_id) is its own "
            "prompt: intervals then treat pairs as independent — map a prompt id "
            f"({map_option([('COLUMN', 'prompt_id')])}) or give the prompt texts if pairs "
            "share prompts",
            ReaderNote,
            stacklevel=3,
        )
        return df.assign(prompt_id=df["item_id"])
    text = df["prompt"]
    empty = text.isna().to_numpy()
    if empty.any():  # no text to name its prompt: the row's prompt is unknown
        raise InputError(
            "the prompt text is missing, and the file has no prompt_id column: each row's "
            "prompt is named by its text",
            file=path,
            row=int(empty.argmax()) + 1,
            column="prompt",
            fix="give every row its prompt text, or add a prompt_id column (or "
            f"{map_option([('COLUMN', 'prompt_id')])})",
        )
    # each distinct text hashed once: a prompt's rows (its pairs, its judges) repeat it
    codes, uniques = pd.factorize(text.astype(str))
    ids = np.array(
        [
            "prompt-" + hashlib.sha256(one_text(t).encode("utf-8", "replace")).hexdigest()[:12]
            for t in uniques
        ],
        dtype=object,
    )
    out = df.copy()
    out["prompt_id"] = pd.Series(ids[codes], index=df.index, dtype=object)
    return out
