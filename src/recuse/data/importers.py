"""Files written by other evaluation tools, read as evidence tables.

===================  ===========  ===================================================
format               table        file
===================  ===========  ===================================================
``fastchat-pair``    pairs        FastChat MT-Bench ``model_judgment/*_pair.jsonl``
``fastchat-single``  ratings      FastChat MT-Bench ``model_judgment/*_single.jsonl``
``arena-hard``       pairs        Arena-Hard-Auto ``model_judgment/<judge>/<model>.jsonl``
``alpaca-eval``      pairs        AlpacaEval ``results/<model>/<annotator>/annotations.json``
``inspect``          ratings      Inspect AI log, ``.eval`` (zip) or ``.json``
===================  ===========  ===================================================

:func:`sniff` recognises them without being told, from the name and the first 64 KiB:
``.eval``, or a zip holding ``header.json``: Inspect; a ``.json`` object whose
top-level keys include ``eval`` (with ``model`` and ``task`` inside) and ``version``,
``status`` or ``samples``, in any order: Inspect; a ``.json`` array whose first object
has ``instruction``, ``output_1``, ``output_2``, ``generator_2`` and ``preference``:
AlpacaEval; JSON lines whose first record has ``g1_winner`` and ``g2_winner``:
FastChat pairwise; ``score``, ``model``, ``judge`` and ``question_id``: FastChat single;
``games`` and ``judge``: Arena-Hard. :func:`read_import` reads one; each reader's module
documents its mapping. :class:`References` says where a ratings table's reference
comes from when the file has none (an Inspect scorer, or another judge).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

import pandas as pd

from recuse.choices import ImportFormat as ImportFormat
from recuse.data.model_names import UnknownModels
from recuse.data.record_lines import rows_located
from recuse.data.reference_judge import NO_REFERENCE
from recuse.errors import ConfigError, InputError
from recuse.roster import Roster
from recuse.tables import TableKind

__all__ = [
    "FORMATS",
    "ImportFormat",
    "Imported",
    "Importer",
    "References",
    "folder_formats",
    "json_keys",
    "read_import",
    "sniff",
    "sniff_folder",
]

PEEK_BYTES = 1 << 16


@dataclass(frozen=True)
class References:
    """Where a ratings table's independent reference score comes from, when the file
    holds none: ``scorer`` names an Inspect scorer whose grades are the reference
    (``--reference-scorer``); ``judge`` names a judge whose ratings of the same
    (prompt, model, dimension) are the reference for the other judges
    (``--reference-judge``, see :func:`recuse.data.reference_judge.reference_from_judge`)."""

    scorer: str | None = None
    judge: str | None = None

    def __bool__(self) -> bool:
        return self.scorer is not None or self.judge is not None


#: the reader of one foreign format: (file or folder, roster, unknown models, references)
ImportReader = Callable[[Path, Roster, UnknownModels, References], pd.DataFrame]


@dataclass(frozen=True)
class Importer:
    """One foreign format: the table it gives, the tool that writes it, its reader."""

    name: ImportFormat
    table: TableKind
    tool: str
    read: ImportReader


@dataclass(frozen=True)
class Imported:
    """An imported table with its format and the notes its reader left for the user."""

    format: ImportFormat
    table: TableKind
    frame: pd.DataFrame
    notes: tuple[str, ...]


def _fastchat(
    path: Path, roster: Roster, unknown_models: UnknownModels, refs: References
) -> pd.DataFrame:
    from recuse.data.fastchat import read_fastchat_pairs

    return read_fastchat_pairs(path, roster=roster, unknown_models=unknown_models)


def _fastchat_single(
    path: Path, roster: Roster, unknown_models: UnknownModels, refs: References
) -> pd.DataFrame:
    from recuse.data.fastchat import read_fastchat_single

    return read_fastchat_single(path, roster=roster, unknown_models=unknown_models)


def _arena_hard(
    path: Path, roster: Roster, unknown_models: UnknownModels, refs: References
) -> pd.DataFrame:
    from recuse.data.arena_hard import read_arena_hard

    return read_arena_hard(path, roster=roster, unknown_models=unknown_models)


def _alpaca_eval(
    path: Path, roster: Roster, unknown_models: UnknownModels, refs: References
) -> pd.DataFrame:
    from recuse.data.alpaca_eval import read_annotation_file

    return read_annotation_file(path, roster=roster, unknown_models=unknown_models)


def _inspect(
    path: Path, roster: Roster, unknown_models: UnknownModels, refs: References
) -> pd.DataFrame:
    from recuse.data.inspect_log import read_inspect_log

    return read_inspect_log(
        path, roster=roster, unknown_models=unknown_models, reference_scorer=refs.scorer
    )


FORMATS: dict[ImportFormat, Importer] = {
    "fastchat-pair": Importer("fastchat-pair", "pairs", "FastChat llm_judge", _fastchat),
    "fastchat-single": Importer(
        "fastchat-single", "ratings", "FastChat llm_judge", _fastchat_single
    ),
    "arena-hard": Importer("arena-hard", "pairs", "Arena-Hard-Auto", _arena_hard),
    "alpaca-eval": Importer("alpaca-eval", "pairs", "AlpacaEval", _alpaca_eval),
    "inspect": Importer("inspect", "ratings", "Inspect AI", _inspect),
}
assert set(FORMATS) == set(get_args(ImportFormat))


def _head(path: Path) -> bytes:
    """The first bytes of ``path`` (gzip-decompressed for ``.gz``); b"" if unreadable."""
    import gzip

    try:
        if path.name.lower().endswith(".gz"):
            with gzip.open(path, "rb") as fh:
                return fh.read(PEEK_BYTES)
        with path.open("rb") as fh:
            return fh.read(PEEK_BYTES)
    except (OSError, EOFError):
        return b""


def _inspect_zip(path: Path) -> bool:
    """Whether a zip not named ``.eval`` holds an Inspect log's header (an ``.xlsx`` or
    other zip is left to the table readers)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
    except (zipfile.BadZipFile, OSError):
        return False
    return bool(names & {"header.json", "_journal/start.json"})


def json_keys(text: str, *, max_depth: int = 3) -> set[tuple[str, ...]]:
    """The object keys of a (possibly cut-off) JSON text, as paths of at most
    ``max_depth`` keys; an array level adds no key (``[{"a": 1}]`` gives ``("a",)``).

    A scanner, not a parser: it tracks strings and nesting only, so it reads the start
    of a file too large to parse, and never fails (a text that is no JSON gives
    whatever keys it seems to have).

    >>> sorted(json_keys('{"eval": {"model": "m", "x": [1, {"y": 2}]}, "vers'))
    [('eval',), ('eval', 'model'), ('eval', 'x'), ('eval', 'x', 'y')]
    """
    keys: set[tuple[str, ...]] = set()
    stack: list[str | None] = []  # per open container: "{" or "["
    path: list[str] = []  # the key of each open object, or "" before one is read
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                break
            k = j + 1
            while k < n and text[k] in " \t\r\n":
                k += 1
            if k < n and text[k] == ":" and stack and stack[-1] == "{":
                try:
                    key = json.loads(text[i : j + 1])
                except ValueError:
                    key = text[i + 1 : j]
                depth = [p for p, s in zip(path, stack, strict=True) if s == "{"]
                depth[-1] = str(key)
                path[-1] = str(key)
                if len(depth) <= max_depth:
                    keys.add(tuple(depth))
            i = j + 1
            continue
        if c in "{[":
            stack.append(c)
            path.append("")
        elif c in "}]":
            if stack:
                stack.pop()
                path.pop()
        i += 1
    return keys


def _sniff_json(text: str) -> ImportFormat | None:
    """An Inspect log or AlpacaEval annotations, from the keys of the first bytes."""
    start = text.lstrip("\ufeff \t\r\n")[:1]
    keys = json_keys(text)
    top = {k[0] for k in keys if len(k) == 1}
    if start == "{":
        inner = {k[1] for k in keys if len(k) == 2 and k[0] == "eval"}
        if "eval" in top and {"model", "task"} <= inner and top & {"version", "status", "samples"}:
            return "inspect"
        return None
    if start == "[" and {"instruction", "output_1", "output_2", "generator_2", "preference"} <= top:
        return "alpaca-eval"
    return None


def _jsonl_keys(text: str) -> set[str]:
    """The top-level keys of the JSON lines in ``text`` (the file's first bytes), all
    lines together: one damaged record (a key missing) leaves the format recognised,
    and its reader names the key. A line cut off by the peek gives its keys as far as
    read; a line that is not an object gives none."""
    keys: set[str] = set()
    for line in text.lstrip("\ufeff \t\r\n").split("\n"):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):  # cut off by the peek, damaged or too deep:
            # its keys as far as read (a line nested 5,000 deep was a traceback here)
            record = {k[0]: None for k in json_keys(line, max_depth=1)}
        if isinstance(record, dict):
            keys |= set(record)
    return keys


def sniff(path: str | Path) -> ImportFormat | None:
    """The foreign format of the file at ``path``, or None for a plain table file.

    Looks at the name and the first 64 KiB only (for JSON lines, the keys of every line
    there); a damaged file is left to its reader, which gives the precise error.
    """
    path = Path(path)
    name = path.name.lower()
    if not path.is_file():
        return None
    head = _head(path)
    if name.endswith(".eval") or (head.startswith(b"PK\x03\x04") and _inspect_zip(path)):
        return "inspect"
    text = head.decode("utf-8", errors="replace")
    if name.endswith((".json", ".json.gz")):
        return _sniff_json(text)
    if not name.endswith((".jsonl", ".jsonl.gz", ".ndjson")):
        return None
    keys = _jsonl_keys(text)
    if {"g1_winner", "g2_winner"} <= keys:
        return "fastchat-pair"
    if {"question_id", "model", "judge", "score"} <= keys and "games" not in keys:
        return "fastchat-single"
    if {"games", "judge"} <= keys:
        return "arena-hard"
    return None


#: formats whose tool writes its files in subfolders of the folder a user names:
#: Arena-Hard-Auto's ``model_judgment/<judge>/<model>.jsonl`` and AlpacaEval's
#: ``results/<model>/<annotator>/annotations.json`` (depths: folders below; AlpacaEval
#: from ``results/`` or from one model's folder)
NESTED: dict[ImportFormat, tuple[int, ...]] = {"arena-hard": (1,), "alpaca-eval": (1, 2)}
#: formats of one tool that one folder may hold together, each read as its own table
#: (FastChat's ``model_judgment/``: ``<judge>_pair.jsonl`` beside ``<judge>_single.jsonl``)
TOGETHER: frozenset[ImportFormat] = frozenset({"fastchat-pair", "fastchat-single"})


def _files(folder: Path) -> list[Path]:
    try:
        entries = sorted(folder.iterdir())
    except OSError as exc:
        raise InputError(f"cannot list the folder ({exc.strerror or exc})", file=folder) from None
    return [f for f in entries if not f.name.startswith(".")]


def _folder_formats(folder: Path) -> dict[ImportFormat, list[Path]]:
    """The files of ``folder`` by the format :func:`sniff` finds (others left out): those
    directly in it, or, when it holds none, those its tool writes in subfolders
    (:data:`NESTED`: the root of Arena-Hard-Auto's ``model_judgment/``, one subfolder
    per judge; AlpacaEval's ``results/``)."""
    found: dict[ImportFormat, list[Path]] = {}
    entries = _files(folder)
    for f in entries:
        if not f.is_file():
            continue
        fmt = sniff(f)
        if fmt is not None:
            found.setdefault(fmt, []).append(f)
    if found:
        return found
    level = [d for d in entries if d.is_dir()]
    for depth in range(1, max(max(d) for d in NESTED.values()) + 1):
        below: list[Path] = []
        for d in level:
            for f in _files(d):
                if f.is_dir():
                    below.append(f)
                    continue
                fmt = sniff(f) if f.is_file() else None
                if fmt is not None and depth in NESTED.get(fmt, ()):
                    found.setdefault(fmt, []).append(f)
        level = below
    return found


def folder_formats(path: str | Path) -> list[ImportFormat]:
    """The foreign formats :func:`read_import` reads from the folder ``path``, each as
    its own table: one format, or FastChat's pair and single-answer files together
    (:data:`TOGETHER`); empty when it holds none. A folder that mixes other formats
    raises :class:`InputError` naming them."""
    found = _folder_formats(Path(path))
    if len(found) > 1 and set(found) <= TOGETHER:
        return sorted(found)
    one = sniff_folder(path)
    return [one] if one is not None else []


def sniff_folder(path: str | Path) -> ImportFormat | None:
    """The one foreign format of the files directly in the folder ``path`` (an Inspect
    log folder, FastChat's ``model_judgment/``) or in its tool's subfolders (the root of
    Arena-Hard-Auto's ``model_judgment/``, AlpacaEval's ``results/``), None when it
    holds none; a folder that mixes formats raises :class:`InputError` naming them
    (FastChat's pair and single files together: :func:`folder_formats` reads both)."""
    folder = Path(path)
    found = _folder_formats(folder)
    if set(found) == TOGETHER:
        raise InputError(
            "the folder holds FastChat pair judgments and single-answer grades",
            file=folder,
            fix="audit the folder (both are read, each as its own table), or give "
            "--format fastchat-pair or fastchat-single to read one of them",
        )
    if len(found) > 1:
        listed = "; ".join(
            f"{fmt}: {', '.join(f.name for f in fs[:3])}" for fmt, fs in found.items()
        )
        raise InputError(
            f"the folder holds files of several tools ({listed})",
            file=folder,
            fix="give --format to read one of them, or give the files one by one",
        )
    return next(iter(found), None)


def _rel(file: Path, folder: Path) -> str:
    """``file``'s path below ``folder`` (its name when directly in it)."""
    try:
        return file.relative_to(folder).as_posix()
    except ValueError:
        return file.name


def _read_each(
    files: list[Path],
    importer: Importer,
    roster: Roster,
    unknown_models: UnknownModels,
    refs: References,
    folder: Path,
) -> tuple[list[pd.DataFrame], dict[Path, str]]:
    """Each file read, and the Inspect logs left out with the reason: a log whose
    scorers record no grader model holds nothing to import (real log folders mix
    model-graded and deterministic evals); any other error stops the folder. Raises
    :class:`InputError` when every log is left out."""
    from recuse.data.inspect_log import NoModelGrades

    frames: list[pd.DataFrame] = []
    skipped: dict[Path, str] = {}
    for f in files:
        try:
            frames.append(importer.read(f, roster, unknown_models, refs))
        except NoModelGrades as exc:
            if importer.name != "inspect":
                raise
            skipped[f] = exc.reason
    if not frames:
        listed = "; ".join(f"{f.name}: {why}" for f, why in list(skipped.items())[:3])
        raise InputError(
            f"none of the {len(skipped)} Inspect logs has a model-graded scorer ({listed})",
            file=folder,
            fix="score with model_graded_qa / model_graded_fact or another scorer that "
            "records its grading in metadata.grading",
        )
    return frames, skipped


def _read_folder(
    folder: Path,
    importer: Importer,
    roster: Roster,
    unknown_models: UnknownModels,
    refs: References,
) -> pd.DataFrame:
    """Every ``importer.name`` file directly in ``folder`` as one table (the files of
    several runs: an Inspect log folder, one FastChat ``*_single.jsonl`` per judge)."""
    from recuse.tables import PAIRS, RATINGS, validate_pairs, validate_ratings

    files = _folder_formats(folder).get(importer.name, [])
    if not files:
        raise InputError(
            f"the folder holds no {importer.name} file",
            file=folder,
            fix="give the folder the tool wrote its files to, or one file",
        )
    frames, skipped = _read_each(files, importer, roster, unknown_models, refs, folder)
    files = [f for f in files if f not in skipped]
    if importer.name == "inspect":  # sample ids repeat across tasks: prefix the task
        tasks = {str(t) for fr in frames for t in fr["task"].dropna().unique()}
        if len(tasks) > 1:
            frames = [
                fr.assign(prompt_id=fr["task"].astype(str) + "/" + fr["prompt_id"].astype(str))
                for fr in frames
            ]
    key = list((PAIRS if importer.table == "pairs" else RATINGS).key)
    seen: dict[tuple[object, ...], Path] = {}
    for f, fr in zip(files, frames, strict=True):
        for row in fr[key].itertuples(index=False, name=None):
            if row in seen:
                raise InputError(
                    f"({', '.join(map(str, row))}) is in {_rel(seen[row], folder)} and in "
                    f"{_rel(f, folder)}",
                    file=folder,
                    column=", ".join(key),
                    fix="each file must hold other rows; keep one copy of a run's file",
                )
        seen.update(dict.fromkeys(fr[key].itertuples(index=False, name=None), f))
    table = pd.concat(frames, ignore_index=True)
    left_out: list[str] = []
    if importer.name == "alpaca-eval":  # two prompt templates of one judge: one kept
        from recuse.data.alpaca_eval import one_annotator_per_judge

        table, left_out = one_annotator_per_judge(table, where=folder.name)
    validate = validate_pairs if importer.table == "pairs" else validate_ratings
    out = validate(table, file=folder)
    no_reference = {str(fr.attrs[NO_REFERENCE]) for fr in frames if fr.attrs.get(NO_REFERENCE)}
    notes = [str(n) for fr in frames for n in fr.attrs.get("notes", ()) if n not in no_reference]
    out.attrs["notes"] = [
        f"{folder.name}: {len(files)} {importer.name} file{'s' if len(files) != 1 else ''} "
        "read as one table "
        f"({', '.join(_rel(f, folder) for f in files[:5])}{', ...' if len(files) > 5 else ''}).",
        *[f"{folder.name}: {f.name} skipped: {why}" for f, why in skipped.items()],
        *left_out,
        *notes,
    ]
    if no_reference:
        scorer = " or --reference-scorer NAME" if importer.name == "inspect" else ""
        out.attrs[NO_REFERENCE] = (
            f"{folder.name}: {len(no_reference)} of its files "
            f"{'holds' if len(no_reference) == 1 else 'hold'} no independent reference "
            "score, so the favoritism regression cannot be fitted on "
            f"{'it' if len(no_reference) == 1 else 'them'}; name one "
            f"(--reference-judge NAME{scorer})."
        )
        out.attrs["notes"].append(out.attrs[NO_REFERENCE])
    return out


@rows_located
def read_import(
    path: str | Path,
    format: ImportFormat,
    *,
    roster: Roster | None = None,
    unknown_models: UnknownModels = "keep",
    references: References | None = None,
) -> Imported:
    """Read ``path`` as ``format`` (see :data:`FORMATS`); ``references`` say where a
    ratings table's reference comes from (a scorer: Inspect logs only; a judge: any
    ratings format). A folder reads every file of ``format`` directly in it as one table
    (a row found in two files is an error naming both)."""
    if format not in FORMATS:
        raise ConfigError(f"unknown format {format!r} — use one of {', '.join(FORMATS)}")
    refs = references or References()
    importer = FORMATS[format]
    if refs.scorer is not None and format != "inspect":
        raise ConfigError(
            f"--reference-scorer names a scorer of an Inspect log; a {format} file has none"
        )
    if refs.judge is not None and importer.table != "ratings":
        raise ConfigError(
            f"--reference-judge applies to ratings; a {format} file gives a {importer.table} table"
        )
    roster = roster or Roster.builtin()
    where = Path(path).expanduser()
    if where.is_dir():
        frame = _read_folder(where, importer, roster, unknown_models, refs)
    else:
        frame = importer.read(where, roster, unknown_models, refs)
    notes = [str(n) for n in frame.attrs.get("notes", ())]
    if refs.judge is not None:
        from recuse.data.reference_judge import reference_from_judge

        no_reference = frame.attrs.get(NO_REFERENCE)  # the reader's note no longer holds
        frame = reference_from_judge(frame, refs.judge, roster=roster, file=path)
        notes = [n for n in notes if n != no_reference]
        notes.extend(str(n) for n in frame.attrs.get("notes", ()))
    return Imported(format=format, table=importer.table, frame=frame, notes=tuple(notes))
