"""One resolver of "dataset name, file or folder" for every command: what a command is
given becomes a typed table and where it came from (:class:`Source`, kept in the
report's provenance).

:func:`load_input` reads evidence (a ``pairs`` or ``ratings`` table) from a registered
dataset's name, a plain table file (:func:`recuse.data.plain_tables.read_table`) or a
file or folder written by another tool (:mod:`recuse.data.importers`);
:func:`load_responses` reads the responses a Likert judge rates. Both find what they are
given the same way (:func:`locate`), with the same errors.
"""

from __future__ import annotations

import difflib
import errno
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from recuse.data import registry
from recuse.data.columns import ColumnMapping
from recuse.data.model_names import UnknownModels
from recuse.data.reading_notes import pairs_notes, spaceless_words
from recuse.data.record_lines import rows_located
from recuse.data.value_maps import ValueReading
from recuse.errors import ConfigError, InputError, RecuseError
from recuse.files import ABSENT_ERRNOS, path_text, unreadable_path
from recuse.reference import LABEL_NAMES, REFERENCE_NAMES, ReferenceKind
from recuse.renaming import mapping_named, mapping_sources
from recuse.roster import Roster
from recuse.tables import (
    TableKind,
    caller_option,
    note_missing_texts,
    read_missing_texts,
    shown,
    takes_mapping,
)

if TYPE_CHECKING:
    from recuse.data.importers import Imported, ImportFormat, References


@dataclass(frozen=True)
class Source:
    """One input: a named dataset or a file, what was read and from where. ``files``: a
    file input's name; a named dataset's whole download as ``sources.toml`` lists it
    (what ``recuse data fetch`` brings), of which its reader may open only some
    (llmbar-mtbench: 108 files of LLMBar and MT-Bench, 12 read)."""

    name: str
    table: str  # "pairs" or "ratings"
    rows: int
    location: str = ""
    files: tuple[str, ...] = ()
    upstream: str = ""
    judges: tuple[str, ...] = ()
    label: str = ""  # what its human/reference label is; "" = not known (a user's file)
    #: the kind of that label, which the report's words name (a user's file: human)
    reference: ReferenceKind = "human"
    format: str = ""  # a foreign format it was imported from (data/importers.py), else ""
    notes: tuple[str, ...] = ()  # what its importer tells the user (e.g. self-grading)
    #: (judge, name, format, sha256) of the judge prompt each judge's verdicts were made
    #: with, where the table says (a store's export: :func:`judge_prompts`)
    judge_prompts: tuple[tuple[str, str, str, str], ...] = ()

    @property
    def shown_location(self) -> str:
        """:attr:`location` as text every writer takes (:func:`recuse.files.path_text`):
        the report's page held a folder's name that is not UTF-8 as it was, and its
        write ended in a traceback."""
        return path_text(self.location)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "table": self.table,
            "rows": self.rows,
            "location": self.shown_location,
            "files": list(self.files),
            "upstream": self.upstream,
            "judges": list(self.judges),
            "label": self.label,
            "reference": REFERENCE_NAMES[self.reference],
            "format": self.format,
            "notes": list(self.notes),
            "judge_prompts": [
                {"judge": j, "name": n, "format": f, "sha256": h}
                for j, n, f, h in self.judge_prompts
            ],
        }


#: the columns a store's export names each verdict's judge prompt in
#: (:data:`recuse.judging.store.PROMPT_COLUMNS`)
PROMPT_COLUMNS = ("judge_prompt", "judge_prompt_format", "judge_prompt_sha256")


def judge_prompts(frame: pd.DataFrame) -> tuple[tuple[str, str, str, str], ...]:
    """``(judge, name, format, sha256)`` of every distinct judge prompt in ``frame``'s
    ``judge_prompt*`` columns (written by ``recuse judge export``), by judge; a judge
    whose rows name none is left out."""
    if "judge" not in frame.columns or PROMPT_COLUMNS[0] not in frame.columns:
        return ()
    cols = ["judge", *(c for c in PROMPT_COLUMNS if c in frame.columns)]
    rows = frame[cols].dropna(subset=["judge", PROMPT_COLUMNS[0]]).drop_duplicates()

    def text(v: object) -> str:
        return "" if v is None or (isinstance(v, float) and v != v) else str(v)

    found = {
        (text(r["judge"]), text(r.get(PROMPT_COLUMNS[0])), text(r.get(PROMPT_COLUMNS[1])),
         text(r.get(PROMPT_COLUMNS[2])))
        for r in rows.to_dict("records")
    }  # fmt: skip
    return tuple(sorted(found))


@dataclass(frozen=True)
class Input:
    """One evidence table and where it came from. ``whole``: the table before the
    audit's ``--judge`` took the other judges' rows out of ``frame`` (None: ``frame`` is
    the whole table), for the estimates that read every judge's rows whichever judges
    are reported (the shared bootstrap, the favoritism regression)."""

    name: str
    table: TableKind
    frame: pd.DataFrame
    source: Source
    whole: pd.DataFrame | None = None

    @property
    def every_judge(self) -> pd.DataFrame:
        """The whole table: ``whole``, or ``frame`` where no judge was left out."""
        return self.frame if self.whole is None else self.whole


PEEK_CHARS = 1 << 20  # the first line of a file read to guess its table kind


def _first_line(path: Path) -> str | None:
    """The first non-blank line (at most PEEK_CHARS characters; None if longer)."""
    import gzip

    opener: Any = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", newline="") as fh:
        for _ in range(100):
            line = fh.readline(PEEK_CHARS)
            if not line:
                return None
            if len(line) >= PEEK_CHARS and not line.endswith("\n"):
                return None
            if line.strip():
                return line.lstrip("\ufeff")
    return None


def _peek_columns(path: Path) -> set[str] | None:
    """Column names of a data file from its first line or schema, without reading it
    all and at bounded cost (None if unknown: the reader then gives its precise error)."""
    import csv
    import json

    name = path.name.lower()
    try:
        if name.endswith((".csv", ".csv.gz", ".tsv", ".tab", ".tsv.gz")):
            sep = "\t" if ".tsv" in name or name.endswith(".tab") else ","
            line = _first_line(path)
            return set(next(csv.reader([line], delimiter=sep))) if line else None
        if name.endswith((".jsonl", ".ndjson", ".jsonl.gz")):
            line = _first_line(path)
            obj = json.loads(line) if line else None
            return set(obj) if isinstance(obj, dict) else None
        if name.endswith((".parquet", ".pq")):
            import pyarrow.parquet as pq

            return set(pq.read_schema(path).names)
    except Exception:  # unreadable: let the reader give its precise error
        return None
    return None


def _guess_table(path: Path) -> TableKind:
    cols = _peek_columns(path)
    if cols is not None and "rating" in cols and "p_a" not in cols:
        return "ratings"
    return "pairs"


def _import(
    path: Path,
    fmt: ImportFormat,
    table: TableKind | None,
    mapping: ColumnMapping | None,
    roster: Roster,
    unknown_models: UnknownModels,
    references: References | None = None,
) -> Imported:
    """A file written by another tool (its format fixes the table and the columns)."""
    from recuse.data.importers import FORMATS, read_import

    if mapping:
        raise ConfigError(
            f"{_a_mapping()} does not apply to a {fmt} file: its columns are fixed; "
            f"{_leave_mapping_out()}"
        )
    if fmt in FORMATS and table is not None and table != FORMATS[fmt].table:
        raise InputError(
            f"a {fmt} file gives a {FORMATS[fmt].table} table, not {table}",
            file=path,
            fix=f"drop --table or use --table {FORMATS[fmt].table}",
        )
    return read_import(
        path, fmt, roster=roster, unknown_models=unknown_models, references=references
    )


def _plain_references(
    frame: pd.DataFrame,
    kind: TableKind,
    path: Path,
    roster: Roster,
    references: References | None,
) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """A plain table file with ``references`` applied (a judge as reference: ratings)."""
    if not references:
        return frame, ()
    if references.scorer is not None:
        raise ConfigError(
            "--reference-scorer names a scorer of an Inspect log; this file is not one"
        )
    if kind != "ratings":
        raise ConfigError("--reference-judge applies to ratings, and this file is read as pairs")
    from recuse.data.reference_judge import reference_from_judge

    assert references.judge is not None
    out = reference_from_judge(frame, references.judge, roster=roster, file=path)
    return out, tuple(str(n) for n in out.attrs.get("notes", ()))


#: the column naming each row's dataset, by table (its values: registered dataset names)
ROW_DATASET: dict[str, str] = {"pairs": "source", "ratings": "dataset"}
#: the column of the reference label, by table
LABEL_COLUMN: dict[str, str] = {"pairs": "human", "ratings": "reference"}


def file_reference(frame: pd.DataFrame, table: str) -> tuple[ReferenceKind, str, tuple[str, ...]]:
    """The kind of a file's reference labels (:mod:`recuse.reference`), what its label is
    ("" = not known) and a note when it mixes kinds.

    Each labelled row takes the kind of the registered dataset its ``source`` (ratings:
    ``dataset``) column names (``judgebench``: correctness); a row naming none is read
    as human-labelled, as any file is. One kind: that kind (all rows of one dataset:
    its label). Both: ``"mixed"``, worded with the neutral "reference label" (a
    pooled estimate is one against the file's labels, whatever their kind: defined,
    but neither a human nor a correctness one), and a note counting the rows of each
    kind, so the reader can split the file.
    """
    column, labels = ROW_DATASET.get(table, ""), LABEL_COLUMN.get(table, "")
    if column not in frame.columns or labels not in frame.columns:
        return "human", "", ()
    known = registry.datasets()
    rows = frame.loc[frame[labels].notna(), column]
    names = rows.where(rows.notna(), "").astype(str).str.strip()
    # one look-up per distinct name (a million-row file names a handful of datasets)
    codes, distinct = pd.factorize(names.str.lower())
    kind_of = np.array([known[n].reference if n in known else "human" for n in distinct], object)
    kinds = pd.Series(kind_of[codes], index=names.index, dtype=object)
    found = set(kind_of)
    if found <= {"human"}:
        return "human", "", _near_misses(names, known)
    if len(found) == 1:
        sets = set(names.str.lower())
        return kinds.iloc[0], known[sets.pop()].label if len(sets) == 1 else "", ()

    def said(kind: ReferenceKind) -> str:
        mine = sorted(set(names[kinds == kind]) - {""})
        where = ", ".join(mine[:3]) + (", …" if len(mine) > 3 else "")
        blank = "none named" if (names[kinds == kind] == "").any() else ""
        return f"{int((kinds == kind).sum()):,} of {LABEL_NAMES[kind]}s (source: " + (
            "; ".join(w for w in (where, blank) if w) + ")"
        )

    note = (
        f"the file's {len(kinds):,} labelled rows mix kinds of reference label: "
        + ", ".join(said(k) for k in sorted(found))
        + f". Its findings and reasons say {LABEL_NAMES['mixed']!r} for all of them; to have "
        "each kind named, give its rows as a file of their own."
    )
    return "mixed", "", (note, *_near_misses(names, known))


def _near_misses(names: pd.Series, known: dict[str, Any]) -> tuple[str, ...]:
    """A note for each source that names no dataset but nearly names one whose labels
    are not human (``judge_bench``): its rows are read as human-labelled, which a typo
    would make silently wrong."""
    other = [n for n, d in known.items() if d.reference != "human"]
    out = []
    for name, rows in names[names != ""].value_counts(sort=False).items():
        if str(name).lower() in known:
            continue
        close = difflib.get_close_matches(str(name).lower(), other, n=1, cutoff=0.8)
        if close:
            plural = "" if rows == 1 else "s"
            out.append(
                f"source {str(name)!r} ({rows:,} labelled row{plural}) names no dataset "
                f"recuse knows, so its labels are read as human ones; if it means {close[0]!r} "
                f"({LABEL_NAMES[known[close[0]].reference]}s), write it so"
            )
    return tuple(out)


def _upstream(name: str) -> tuple[str, tuple[str, ...]]:
    """Upstream repositories@commits and the files of a named dataset, when known."""
    try:
        from recuse.data import fetch

        files = fetch.files_for(name)
    except (ImportError, AttributeError, RecuseError):
        return "", ()
    repos: dict[str, None] = {}
    for f in files:
        parts = f.url.split("/")
        if "raw.githubusercontent.com" in f.url and len(parts) > 5:
            repos[f"github.com/{parts[3]}/{parts[4]}@{parts[5][:12]}"] = None
    return ", ".join(repos), tuple(f"{f.folder}/{f.path}" for f in files)


def locate(spec: str | Path) -> registry.Dataset | Path:
    """What a command was given: the registered dataset of that name, else an existing
    file or folder. A name that is both a dataset and a file is the dataset (write
    ``./name`` for the file; a :class:`~pathlib.Path` is always a path). An unknown name
    that cannot be a path raises :class:`~recuse.errors.DatasetNotFoundError` listing
    the known datasets; a missing path raises :class:`InputError`."""
    text = str(spec)
    known = registry.datasets()
    if not isinstance(spec, Path) and text in known:
        return known[text]
    path = Path(text).expanduser()
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        if exc.errno not in ABSENT_ERRNOS:
            raise unreadable_path(path, exc) from None  # too long, not searchable
        if path.is_symlink():  # a link to nothing, or a loop of links
            why = "a loop of links" if exc.errno == errno.ELOOP else "a missing file"
            raise InputError(
                f"a symbolic link to {why} ({exc.strerror or exc})",
                file=path,
                fix="point the link at the data file, or give the file's own path",
            ) from None
        if "/" not in text and "\\" not in text and "." not in path.name:
            registry.get(text)  # an unknown name: the registry lists the known ones
        raise InputError(
            "file not found", file=path, fix="check the path, or give a dataset name"
        ) from None
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        # a FIFO, socket or device: opening one may wait for a writer for ever
        raise InputError(
            "not a regular file (a pipe, socket or device)",
            file=path,
            fix="write the data to a file and give its path",
        )
    return path


def read_paths(spec: str | Path, data_dir: str | Path | None = None) -> list[Path]:
    """What reading ``spec`` opens, for an output that must not replace it
    (:func:`recuse.outputs.check_output`'s ``inputs``): a dataset's folder, or the file
    or folder given; none where it cannot be found (reading it says why)."""
    try:
        where = locate(spec)
        return [
            registry.folder(where.name, data_dir) if isinstance(where, registry.Dataset) else where
        ]
    except RecuseError:
        return []


def _a_mapping() -> str:
    """``a column mapping (--map)``, named where the user set it
    (:func:`recuse.renaming.mapping_named`)."""
    return "a" + mapping_named().removeprefix("the")


def _leave_mapping_out() -> str:
    """How to leave the column mapping out, where the user set it: ``leave --map out``,
    ``leave mapping= out``, and for a recuse.toml's ``[map]`` (which the user may not
    have in mind) a config file without it. Where that is not said, both ways the
    caller could have given one."""
    places = mapping_sources()
    if not places:
        return caller_option(
            "leave --map out; for recuse.toml's [map], give --config a file without it",
            "leave mapping= out",
        )
    config = caller_option("--config", "config=")
    return "; ".join(
        f"leave {words} out" if path is None
        else f"remove [map] from {path}, or give {config} a file without it"
        for words, path in places
    )  # fmt: skip


def _dataset_takes_no_file_options(
    mapping: ColumnMapping | None,
    format: ImportFormat | None,
    references: References | None,
    reading: ValueReading | None,
) -> None:
    """Options that say how a file is written mean nothing for a named dataset."""
    if mapping:  # also a recuse.toml's [map], which the user may not have in mind
        applies = caller_option("files", "files and tables")
        raise ConfigError(
            f"{_a_mapping()} applies to {applies}, not to named datasets: {_leave_mapping_out()}"
        )
    if format is not None:
        raise ConfigError("--format applies to files, not to named datasets")
    if references:
        raise ConfigError(
            "--reference-scorer and --reference-judge apply to files, not to named datasets"
        )
    if reading is not None and reading != ValueReading():
        raise ConfigError(
            "--values, --swapped-frame and --confidence (or their entries in recuse.toml) "
            "apply to files, not to named datasets"
        )


def _wrong_table(dataset: registry.Dataset, table: TableKind) -> InputError:
    others = sorted(n for n, d in registry.datasets().items() if d.table == table)
    return InputError(
        f"dataset {dataset.name!r} is a {dataset.table} table, but a {table} table is needed",
        fix=f"choose a {table} dataset: {', '.join(others)}",
    )


def load_inputs(spec: str | Path, **kwargs: Any) -> list[Input]:
    """:func:`load_input`, as a list: a folder holding FastChat's pair judgments and its
    single-answer grades (``model_judgment/`` as FastChat writes it) gives both, a
    ``pairs`` and a ``ratings`` input named ``<folder> (fastchat-pair)`` and
    ``<folder> (fastchat-single)``; anything else gives one input. ``references``
    (``--reference-judge``) are the ratings input's: the pairs input is read without
    them, where the folder read as a whole was refused for its pair files."""
    from dataclasses import replace

    from recuse.data import importers

    where = locate(spec)
    if kwargs.get("format") is None and isinstance(where, Path) and where.is_dir():
        formats = importers.folder_formats(where)
        if len(formats) > 1:
            out = []
            for fmt in formats:
                ratings = importers.FORMATS[fmt].table == "ratings"
                given = {**kwargs, "format": fmt}
                if not ratings:
                    given["references"] = None
                inp = load_input(spec, **given)
                name = f"{inp.name} ({fmt})"
                out.append(replace(inp, name=name, source=replace(inp.source, name=name)))
            return out
    return [load_input(spec, **kwargs)]


@takes_mapping
def load_input(
    spec: str | Path,
    *,
    table: TableKind | None = None,
    data_dir: str | Path | None = None,
    roster: Roster | None = None,
    mapping: ColumnMapping | None = None,
    unknown_models: UnknownModels = "keep",
    format: ImportFormat | None = None,
    reading: ValueReading | None = None,
    references: References | None = None,
) -> Input:
    """A named dataset or a file (``.csv``, ``.jsonl``, ``.parquet``, ...) as an audit input.

    ``table`` says whether a file holds ``pairs`` or ``ratings``; without it a file
    with a ``rating`` column (and no ``p_a``) is read as ratings, else as pairs.
    ``mapping`` renames a file's columns to schema columns; ``unknown_models="keep"``
    accepts model names the roster does not know (each its own family).
    ``format`` reads a file written by another tool (``fastchat-pair``, ``arena-hard``,
    ``inspect``; see :mod:`recuse.data.importers`); without it such a file is recognised
    by :func:`~recuse.data.importers.sniff`. ``reading`` says how a plain pairs file
    writes its verdicts (value maps, swapped frame, confidence). ``references`` names
    where a ratings file's reference comes from (an Inspect scorer, or a judge; see
    :class:`~recuse.data.importers.References`).
    """
    from recuse.data import importers
    from recuse.data.plain_tables import read_table

    roster = roster or Roster.builtin()
    fmt: ImportFormat | None = None
    notes: tuple[str, ...] = ()
    where = locate(spec)
    if isinstance(where, registry.Dataset):
        _dataset_takes_no_file_options(mapping, format, references, reading)
        if table is not None and table != where.table:
            raise _wrong_table(where, table)
        frame = registry.load(where.name, data_dir=data_dir, roster=roster)
        location = str(registry.folder(where.name, data_dir))
        upstream, files = _upstream(where.name)
        kind: TableKind = where.table
        name, label, reference = where.name, where.label, where.reference
    else:
        path = where
        fmt = format or (importers.sniff_folder(path) if path.is_dir() else importers.sniff(path))
        if fmt is None and path.is_dir():
            raise InputError(
                "the folder holds no file recuse recognises as another tool's",
                file=path,
                fix="give a file, or a folder of FastChat, Arena-Hard-Auto, AlpacaEval or "
                "Inspect files (or name the format with --format)",
            )
        if fmt is not None:
            imported = _import(path, fmt, table, mapping, roster, unknown_models, references)
            frame, kind, notes = imported.frame, imported.table, imported.notes
        else:
            kind = table or _guess_table(path)
            how = reading or ValueReading()
            frame = read_table(
                path,
                table=kind,
                roster=roster,
                mapping=mapping,
                unknown_models=unknown_models,
                values=how.values if kind == "pairs" else None,
                swapped_frame=how.swapped_frame if kind == "pairs" else "original",
                confidence=how.confidence if kind == "pairs" else None,
                confidence_of=how.confidence_of,
            )
            frame, notes = _plain_references(frame, kind, path, roster, references)
            if kind == "pairs":
                notes = (*notes, *pairs_notes(frame, swapped_frame=how.swapped_frame))
        if kind == "pairs":
            notes = (*notes, *spaceless_words(frame))
        # a name whose bytes are not UTF-8 (held as lone surrogates) as \xNN escapes: it
        # names tables and the report, whose writers take no surrogate (a traceback)
        name = path_text(path.name)
        location, upstream, files = str(path.resolve()), "", (name,)
        reference, label, mix = file_reference(frame, kind)
        notes = (*notes, *mix)
    judges: tuple[str, ...] = ()
    if "judge" in frame.columns:
        judges = tuple(sorted(str(j) for j in frame["judge"].dropna().unique()))
    source = Source(
        name=name,
        table=kind,
        rows=len(frame),
        location=location,
        files=files,
        upstream=upstream,
        judges=judges,
        label=label,
        reference=reference,
        format=fmt or "",
        notes=notes,
        judge_prompts=judge_prompts(frame),
    )
    return Input(name=name, table=kind, frame=frame, source=source)


#: the columns of a table of responses to rate (:func:`load_responses`)
RESPONSE_COLUMNS = ("prompt_id", "model", "prompt", "response")


@rows_located
def load_responses(spec: str | Path) -> pd.DataFrame:
    """The responses a Likert judge rates: a table file (any format
    :func:`~recuse.data.table_files.read_frame` reads) with the columns
    :data:`RESPONSE_COLUMNS` (an optional ``reference_<dimension>`` column is kept as
    that dimension's reference). ``prompt_id`` and ``model`` are never empty, ``prompt``
    and ``response`` are text, kept as written (an answer ``None`` is one word); in the
    other columns ``NA``, ``null``, ... are missing, with a note, as in a ratings table.
    Errors name the file, row and column. Found as
    :func:`load_input` finds its input (:func:`locate`): a dataset's name is refused,
    no dataset being a table of responses."""
    from recuse.data.table_files import read_frame
    from recuse.files import check_text

    where = locate(spec)
    needs = ", ".join(RESPONSE_COLUMNS)
    if isinstance(where, registry.Dataset):
        raise InputError(
            f"dataset {where.name!r} is a {where.table} table, and Likert judging rates responses",
            fix=f"give a file with columns {needs}",
        )
    df = read_frame(where)
    texts = ("prompt", "response")
    note_missing_texts(read_missing_texts(df, [c for c in df.columns if c not in texts]), where)
    missing = [c for c in RESPONSE_COLUMNS if c not in df.columns]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)} for Likert judging",
            file=where,
            fix=f"give a table with columns {needs}",
        )
    for col in ("prompt_id", "model"):
        empty = df[col].isna().to_numpy()
        if empty.any():
            raise InputError(
                "the cell is empty",
                file=where,
                row=int(empty.argmax()) + 1,
                column=col,
                fix=f"give every row its {col}",
            )
    check_text(df, ["prompt", "response"], file=where)
    twice = df.duplicated(["prompt_id", "model"]).to_numpy()
    if twice.any():  # one rating per (prompt, model, dimension): the export keeps one
        i = int(twice.argmax())
        raise InputError(
            f"duplicate responses row (prompt_id={shown(df['prompt_id'].iloc[i])}, "
            f"model={shown(df['model'].iloc[i])}) — each model answers each prompt once",
            file=where,
            row=i + 1,
            fix="remove the duplicate, or give the other answer its own prompt_id or model",
        )
    return df
