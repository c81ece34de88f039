"""A plain table file (CSV / TSV / JSON / JSONL / Parquet, not another tool's) read as
a validated ``pairs`` or ``ratings`` table: :func:`read_table`.

It reads the file (:func:`recuse.data.table_files.read_frame`), applies the value map
(:mod:`recuse.data.value_maps`) and the column mapping (:mod:`recuse.data.columns`),
maps model and judge names to canonical ids (:mod:`recuse.data.model_names`) and
validates the result against the schema (:mod:`recuse.tables`). Which file or dataset
a command reads is resolved in one place, :func:`recuse.data.inputs.load_input`.

Every problem is an :class:`~recuse.errors.InputError` naming the file and, where
there is one, the row (1-based data record: CSV rows without the header, JSON array
elements, JSONL lines) and column, with the fix.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd

from recuse.data.columns import (
    IGNORED,
    MISNAMED,
    ColumnMapping,
    ColumnsIgnored,
    apply_mapping,
    derive_prompt_id,
    file_column_names,
    mapping_pairs,
    no_such_column,
    verdict_like_columns,
)
from recuse.data.model_names import (
    MODEL_COLUMNS,
    UnknownModels,
    canonical_label_names,
    canonicalize_models,
)
from recuse.data.record_lines import rows_located
from recuse.data.table_files import read_frame
from recuse.data.value_maps import (
    ValueMap,
    apply_values,
    check_value_map,
    refuse_double_turn,
    refuse_other_columns,
)
from recuse.errors import ConfigError, InputError
from recuse.roster import Roster
from recuse.tables import (
    FREE_TEXT,
    PAIRS,
    RATINGS,
    VERDICTS,
    ConfidenceOf,
    SwappedFrame,
    TableKind,
    caller_option,
    check_scalars,
    map_hint,
    map_option,
    missing_columns_error,
    note_missing_texts,
    read_missing_texts,
    suggest_columns,
    takes_mapping,
    validate_pairs,
    validate_ratings,
    with_optional_pairs_columns,
)

__all__ = ["read_table"]


@takes_mapping
@rows_located
def read_table(
    path: str | Path,
    *,
    table: TableKind,
    mapping: ColumnMapping | None = None,
    roster: Roster | None = None,
    unknown_models: UnknownModels = "keep",
    values: ValueMap | None = None,
    swapped_frame: SwappedFrame = "original",
    confidence: str | None = None,
    confidence_of: ConfidenceOf = "winner",
) -> pd.DataFrame:
    """Read one file as a validated ``pairs`` or ``ratings`` table.

    The format comes from the extension: ``.csv``, ``.tsv``/``.tab``, ``.json`` (an
    array of objects), ``.jsonl``/``.ndjson`` (one object per line), ``.parquet``/``.pq``;
    text formats may be gzip-compressed (``.csv.gz``). ``mapping`` renames file columns
    to schema columns first. Model and judge names go through ``roster`` (default:
    :meth:`Roster.builtin`); see :func:`canonicalize_models` for ``unknown_models``.

    Pairs only: ``values`` maps written values to P(a better) per **file** column (its
    name before ``mapping``), e.g. ``{"judge_winner": {"A": 1, "B": 0, "tie": 0.5}}``;
    values it does not name are read by :func:`recuse.tables.verdict_values` (A/B/tie,
    [[A]], model names, AlpacaEval 1/2/1.5, probabilities). ``swapped_frame``,
    ``confidence`` (a file column) and ``confidence_of``: see
    :func:`recuse.tables.validate_pairs`. A pairs file without ``prompt_id`` gets one id
    per distinct ``prompt`` text or, without prompts, one per ``item_id`` (a
    :class:`ReaderNote` says so). A pairs file without ``human`` has no labels (the
    column is added empty). ``mapping`` may send one file column to several schema
    columns (``{"id": ("item_id", "prompt_id")}``).

    The file columns left unused that look like verdicts or labels are listed in
    ``result.attrs[IGNORED]``; when the table has no judge columns at all and such
    columns exist, a :class:`ColumnsIgnored` warning says so.
    """
    if table not in MODEL_COLUMNS:
        raise ConfigError(f"unknown table kind {table!r} — use 'pairs' or 'ratings'")
    if table == "ratings" and (values or confidence or swapped_frame != "original"):
        raise ConfigError(
            "value maps, --swapped-frame and --confidence apply to pairs files, not ratings"
        )
    rost = roster or Roster.builtin()  # a broken roster file is reported first
    path = Path(path).expanduser()
    df = read_frame(path)
    if confidence is not None and confidence not in df.columns:
        raise no_such_column(caller_option("--confidence", "confidence="), confidence, df, path)
    mapping = dict(mapping or {})
    schema = PAIRS if table == "pairs" else RATINGS
    # "NA", "nan", "None", "" ... in the columns read are missing, in every format (the
    # CSV reader keeps them as texts): before value maps and model names
    pairs = mapping_pairs(mapping)
    # a column mapped to free text is text (a column named like a schema column,
    # category=prompt, too); one mapped to free text and to a schema column as well is
    # read there, as that column, by validation: the prompt keeps its 'None'
    texts = {str(s).strip() for s, t in pairs if t in FREE_TEXT}
    sources = {str(s).strip() for s, t in pairs if t not in FREE_TEXT} - texts
    read = [
        c
        for c in df.columns
        if (c in schema.names and str(c).strip() not in texts)
        or str(c).strip() in {*sources, confidence}
    ]
    note_missing_texts(read_missing_texts(df, read), path)
    # every schema column validation gets was read here, but one a text column was
    # mapped to as well: validation reads that one alone (each cell read once)
    texts_read = set(schema.names) - {t for s, t in pairs if str(s).strip() in texts}
    if values:
        checked = check_value_map(values)
        if table == "pairs":
            refuse_other_columns(checked, mapping, df.columns, path)
        if swapped_frame == "presented":
            refuse_double_turn(checked, mapping)
        df = apply_values(df, checked, path)
    if mapping:
        df = apply_mapping(df, mapping, table, path)
    with file_column_names(mapping):
        check_scalars(df, schema.names, file=path)
    needed = [c for c in schema.required if c not in schema.filled and c not in df.columns]
    if table == "pairs" and "prompt_id" in needed:
        # one id per prompt text, or per item, below; item_id is needed in any case, so
        # a file without either is told of item_id alone
        needed.remove("prompt_id")
    if needed:  # named against the file's own columns, before any are filled in
        derived = "prompt_id: from a prompt column, else one per item_id, when absent"
        raise missing_columns_error(
            schema, needed, df.columns, path, derived=derived if table == "pairs" else ""
        )
    if table == "pairs" and "judge" in df.columns and not any(c in df.columns for c in VERDICTS):
        guess = suggest_columns([c for c in map(str, df.columns) if c not in PAIRS.names], VERDICTS)
        raise InputError(
            "the file names a judge but has no verdict column (p_a_first, p_a_second or p_a)",
            file=path,
            column="judge",
            fix=map_hint(guess)
            + "map the judge's verdict to p_a_first (a shown first), p_a_second (b shown "
            "first) or p_a (order unknown), or drop the judge column for human labels only",
        )
    ignored: dict[str, str] = {}
    if table == "pairs":
        if confidence:
            renamed = [t for s, t in mapping_pairs(mapping) if s == confidence]
            confidence = renamed[0] if renamed else confidence
        ignored = verdict_like_columns(df, {confidence} if confidence else set())
        half = bool(ignored) and not any(c in df.columns for c in ("judge", *VERDICTS))
        unlabelled = bool(ignored) and "human" not in df.columns
        with file_column_names(mapping):
            df = derive_prompt_id(with_optional_pairs_columns(df), path)
    with file_column_names(mapping):
        df = canonicalize_models(
            df, MODEL_COLUMNS[table], rost, file=path, unknown_models=unknown_models
        )
    if table == "pairs":
        with file_column_names(mapping):
            out = validate_pairs(
                canonical_label_names(df, rost),
                file=path,
                swapped_frame=swapped_frame,
                confidence=confidence,
                confidence_of=confidence_of,
                texts_read=texts_read,
            )
        if half:
            read_as = "without labels or verdicts" if unlabelled else "as human labels only"
            warnings.warn(
                f"{path}: no judge or verdict columns, so the file is read {read_as}; "
                f"these columns look like verdicts or labels and were not read: "
                f"{', '.join(map(repr, ignored))} — map them, e.g. "
                + map_option([("JUDGE_NAME_COLUMN", "judge"), ("VERDICT_COLUMN", "p_a_first")]),
                ColumnsIgnored,
                stacklevel=2,
            )
        elif unlabelled:
            warnings.warn(
                f"{path}: no human column, so the file is read without labels; these "
                f"columns look like verdicts or labels and were not read: "
                f"{', '.join(map(repr, ignored))} — map the label, e.g. "
                + map_option([("LABEL_COLUMN", "human")]),
                ColumnsIgnored,
                stacklevel=2,
            )
        else:
            _note_misnamed(ignored, path)
    else:
        with file_column_names(mapping):
            out = validate_ratings(df, file=path, texts_read=texts_read)
    out.attrs[IGNORED] = ignored
    return out


def _note_misnamed(ignored: dict[str, str], path: Path) -> None:
    """A note for the columns named like a pairs column in another case or spacing
    (``Len_A``), not read: the analyses they enable (verbosity for the lengths) would
    otherwise be skipped with no word of the column that was there."""
    misnamed = {c: why for c, why in ignored.items() if why.startswith(MISNAMED)}
    if not misnamed:
        return
    pairs = {c: why.split("'")[1] for c, why in misnamed.items()}
    warnings.warn(
        f"{path}: {', '.join(map(repr, pairs))} {'is' if len(pairs) == 1 else 'are'} named "
        f"like {', '.join(pairs.values())} in another case or spacing and not read — rename "
        f"{'it' if len(pairs) == 1 else 'them'}, or map: "
        + map_option(pairs.items()),  # as the caller gives it: --map or mapping=
        ColumnsIgnored,
        stacklevel=3,
    )
