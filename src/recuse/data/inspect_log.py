"""Inspect AI evaluation logs of model-graded scorers as ``ratings``.

Inspect writes a log either as ``.eval`` — a zip holding ``header.json`` (the eval
spec, results), ``samples/<id>_epoch_<n>.json`` (one sample each) and journal files,
its members compressed with deflate or, in current releases, Zstandard (ZIP method
93) — or as ``.json``, one document ``{version, status, eval, plan, results, stats,
samples, ...}``. Both are read here with the standard library and pyarrow's zstd
codec; inspect-ai is not needed.

A sample's ``scores`` maps each scorer's name to ``{value, answer, explanation,
metadata, ...}``. A scorer is **model-graded** when its scores record the grading
conversation (``metadata.grading``, as ``model_graded_qa`` / ``model_graded_fact``
write it), its options name a grader ``model``, or it is one of those two. Each of its
grades becomes one ``ratings`` row:

    prompt_id = sample id, model = the evaluated model (``eval.model``),
    dimension = scorer name, judge = the grader, rating = grade as a number

The grader is the model that answered in ``metadata.grading``, else the scorer's
``model`` option, else the ``grader`` model role, else — Inspect's default when no
grader is named — the evaluated model itself. The evaluated model is the snapshot
that answered: ``eval.model`` names what was asked for (``openai/gpt-4o-mini``), a
sample's ``output.model`` what the API answered with (``gpt-4o-mini-2024-07-18``);
a dated name there that is a snapshot of the undated ``eval.model`` (by its roster
line, or the name without its date) is the model, so the evaluated model grading
itself reads as self, as it is. Two different dated snapshots stay two models.

Grades map to numbers as Inspect's ``value_to_float`` does: ``C`` = 1, ``P`` = 0.5,
``I`` = ``N`` = 0, yes/true = 1, no/false = 0, numbers as they are. An unscored grade
(``NaN`` / ``null``, e.g. "Grade not found") is a missing rating with status
``unparsed``; a sample that errored has status ``failed``. A scorer whose grades are
on the 0–1 scale (``model_graded_qa`` / ``model_graded_fact``, or any scorer whose
grades in the log are letters or yes/no) gives a number outside it (``1e30``) as a
missing rating with status ``unparsed``, counted in a note, never as a rating. With
several epochs the rating is the mean over the epochs with a grade (Inspect's default
``mean`` reducer); ``epochs`` counts them.

The log holds no independent score of each answer, so ``reference`` is empty unless
``reference_scorer`` names a scorer whose grades serve as one (e.g. a deterministic
``match`` / ``includes``); favoritism then has nothing to adjust for and is skipped.
A grader whose roster family is the evaluated model's is **self-grading**: the row's
``self_graded`` is True and the frame's ``attrs["notes"]`` says so. A log whose
``status`` is not ``success`` (an eval cancelled, stopped by an error, or still running)
is read as it is, with a note (:func:`_unfinished`).
"""

from __future__ import annotations

import json
import math
import re
import struct
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from recuse.data.model_names import UnknownModels, canonicalize_models
from recuse.data.reference_judge import NO_REFERENCE
from recuse.errors import InputError
from recuse.files import max_input_bytes, read_json, too_big
from recuse.roster import Roster
from recuse.tables import shown, validate_ratings

__all__ = ["GRADES", "NoModelGrades", "grade_value", "is_inspect_json", "read_inspect_log"]

GRADES: dict[str, float] = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}  # value_to_float's
_WORDS = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}
MODEL_GRADED = ("model_graded_qa", "model_graded_fact")
ZIP_ZSTD = 93  # APPNOTE 4.4.5 compression method: Zstandard
_LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")  # APPNOTE 4.3.7, 30 bytes
_JSON_LOG = re.compile(r'\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:')


class NoModelGrades(InputError):
    """An Inspect log whose scorers record no grader model (nothing to import as
    ratings); a log folder lists such a log as skipped rather than refusing the folder."""


UNIT_SCALE = (0.0, 1.0)  # the scale of C/P/I and yes/no grades (value_to_float)


def _letter(value: Any) -> bool:
    """Whether a grade is written as a letter or word (C/P/I/N, yes/no, true/false)."""
    if isinstance(value, bool):
        return True
    return isinstance(value, str) and (value in GRADES or value.strip().lower() in _WORDS)


def is_inspect_json(head: str) -> bool:
    """Whether the start of a ``.json`` file looks like an Inspect log (``{"version": n,
    "status": ...``, the order Inspect writes)."""
    return _JSON_LOG.match(head.lstrip("\ufeff")) is not None


def grade_value(value: Any) -> float | None:
    """A grade as Inspect's ``value_to_float`` reads it; NaN for an unscored grade, None
    for a value it cannot read (which Inspect would count as 0 with a warning).

    >>> grade_value("C"), grade_value("P"), grade_value("I"), grade_value("yes"), grade_value(3)
    (1.0, 0.5, 0.0, 1.0, 3.0)
    """
    if value is None:
        return math.nan
    if isinstance(value, bool | int | float):
        try:
            return float(value)
        except OverflowError:  # a JSON integer of 400 digits: no float holds it
            return None
    if isinstance(value, str):
        if value in GRADES:
            return GRADES[value]
        text = value.strip().lower()
        if text in _WORDS:
            return _WORDS[text]
        try:
            number = float(text)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


# ------------------------------------------------------------------ reading the file


def _not_inspect(path: Path, why: str) -> InputError:
    return InputError(
        f"not an Inspect AI log ({why})",
        file=path,
        fix="give the .eval or .json file Inspect wrote to its log folder",
    )


def _member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path) -> bytes:
    """One zip member's bytes; Zstandard members are decompressed with pyarrow."""
    try:
        if info.compress_type != ZIP_ZSTD:
            return zf.read(info)
        import pyarrow as pa

        with path.open("rb") as fh:
            fh.seek(info.header_offset)
            fields = _LOCAL_HEADER.unpack(fh.read(_LOCAL_HEADER.size))
            if fields[0] != 0x04034B50:
                raise zipfile.BadZipFile(f"bad local header of {info.filename}")
            fh.seek(fields[9] + fields[10], 1)  # name and extra field
            raw = fh.read(info.compress_size)
        data = pa.Codec("zstd").decompress(raw, decompressed_size=info.file_size, asbytes=True)
        if zlib.crc32(data) != info.CRC:
            raise zipfile.BadZipFile(f"bad CRC-32 for {info.filename}")
        return bytes(data)
    except (zipfile.BadZipFile, NotImplementedError, OSError, EOFError, zlib.error) as exc:
        raise _not_inspect(path, f"member {info.filename} is damaged: {exc}") from None
    except Exception as exc:  # pyarrow's ArrowInvalid / OSError on a corrupt frame
        raise _not_inspect(path, f"member {info.filename} does not decompress: {exc}") from None


def _json_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path) -> Any:
    data = _member(zf, info, path)
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError, ValueError) as exc:
        raise _not_inspect(path, f"{info.filename} is not valid JSON: {exc}") from None


def _read_eval_zip(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The eval spec (from header.json or the journal's start.json) and the samples."""
    limit = max_input_bytes()
    try:
        if path.stat().st_size > limit:
            raise too_big(path, "the file holds", limit)
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise _not_inspect(path, f"not a readable zip: {exc}") from None
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror or exc})", file=path) from None
    with zf:
        infos = {i.filename: i for i in zf.infolist()}
        head = infos.get("header.json") or infos.get("_journal/start.json")
        if head is None:
            raise _not_inspect(path, "a zip without header.json or _journal/start.json")
        names = sorted(n for n in infos if n.startswith("samples/") and n.endswith(".json"))
        total = head.file_size + sum(infos[n].file_size for n in names)
        if total > limit:
            raise too_big(path, "the log decompresses to", limit)
        header = _json_member(zf, head, path)
        if not isinstance(header, dict) or not isinstance(header.get("eval"), dict):
            raise _not_inspect(path, f"{head.filename} has no eval object")
        samples = [_json_member(zf, infos[n], path) for n in names]
    return header, samples


def _read_log(path: Path) -> tuple[dict[str, Any], list[Any]]:
    if path.name.lower().endswith((".json", ".json.gz")):
        log = read_json(path)
        if not isinstance(log, dict) or not isinstance(log.get("eval"), dict):
            raise _not_inspect(path, "a JSON document without an eval object")
        samples = log.get("samples") or []
        if not isinstance(samples, list):
            raise _not_inspect(path, "samples is not a list")
        return log, samples
    return _read_eval_zip(path)


# ------------------------------------------------------------------ grades -> rows


def _model_name(value: Any) -> str | None:
    """A model named by a scorer option or role: a string or ``{"model": name, ...}``."""
    if isinstance(value, dict):
        value = value.get("model")
    return value.strip() if isinstance(value, str) and value.strip() else None


def _grader_messages(score: dict[str, Any]) -> list[dict[str, Any]]:
    """The assistant turns of the score's recorded grading conversation."""
    meta = score.get("metadata")
    grading = meta.get("grading") if isinstance(meta, dict) else None
    if not isinstance(grading, list):
        return []
    return [m for m in grading if isinstance(m, dict) and m.get("role") == "assistant"]


def _graded_by_model(score: dict[str, Any]) -> bool:
    """Whether a model answered in the score's grading conversation (older Inspect
    releases record the reply without the ``model`` that wrote it)."""
    return bool(_grader_messages(score))


def _grading_model(score: dict[str, Any]) -> str | None:
    """The model that answered in the score's recorded grading conversation, when the
    log names it (Inspect 0.3.5x and later)."""
    for message in reversed(_grader_messages(score)):
        name = _model_name(message)
        if name is not None:
            return name
    return None


def _roster_name(name: str, roster: Roster) -> str:
    """``name`` as the roster knows it: as written, or without Inspect's provider
    prefix (``openai/gpt-4o`` -> ``gpt-4o``); else unchanged."""
    if name in roster or "/" not in name:
        return name
    bare = name.split("/", 1)[1]
    return bare if bare in roster else name


def _answered_by(sample: dict[str, Any], model: str, roster: Roster) -> str:
    """The model that answered the sample: ``output.model`` where it is a dated
    snapshot of the undated ``model`` (``gpt-4o-mini-2024-07-18`` for
    ``openai/gpt-4o-mini``), else ``model`` as named."""
    from recuse.roster import date_token

    output = sample.get("output")
    answered = _model_name(output.get("model")) if isinstance(output, dict) else None
    if answered is None or answered == model:
        return model
    bare = model.split("/", 1)[1] if "/" in model else model
    if date_token(bare) is not None or date_token(answered) is None:
        return model  # a dated request, or an undated answer: the name asked for
    if _undated(answered).casefold() == bare.casefold():
        return answered
    return answered if _snapshot_of(answered, model, roster) else model


def _undated(name: str) -> str:
    """``name`` without its (last) date and the separator before it:
    ``gpt-4o-mini-2024-07-18`` -> ``gpt-4o-mini``."""
    from recuse.roster import DATE_IN_NAME

    found = list(DATE_IN_NAME.finditer(name))
    if not found:
        return name
    last = found[-1]
    return (name[: last.start()].rstrip("-_@.:") + name[last.end() :]).strip()


def _snapshot_of(answered: str, model: str, roster: Roster) -> bool:
    """Whether the dated ``answered`` is, by the roster, a snapshot of ``model``'s line."""
    bare = _roster_name(model, roster)
    if answered not in roster or bare not in roster:
        return False
    return roster.line(answered) == roster.canonical(bare, unknown="error")


def _sample_id(sample: dict[str, Any], *, path: Path, number: int) -> str:
    sid = sample.get("id")
    if isinstance(sid, bool) or not isinstance(sid, str | int) or str(sid).strip() == "":
        raise InputError(
            f"sample {number} has no usable id ({shown(sid)})",
            file=path,
            row=number,
            column="id",
            fix="Inspect gives every sample an id; the log may be damaged",
        )
    return str(sid)


def _list(value: Any, *, path: Path, where: str) -> list[Any]:
    """A field Inspect writes as a list (absent or null: empty)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise _not_inspect(path, f"{where} is a JSON {_kind(value)}, not a list")
    return value


def _kind(value: Any) -> str:
    return {bool: "boolean", int: "number", float: "number", str: "string", dict: "object"}.get(
        type(value), "array" if isinstance(value, list) else type(value).__name__
    )


def _scorer_options(
    spec: dict[str, Any], results: Any, path: Path
) -> tuple[dict[str, dict[str, Any]], set[str], set[str]]:
    """Each scorer's options, the scorers that are model-graded (by their kind or a
    grader ``model`` option) and those of a model-graded kind (C/P/I grades).

    Current logs list the scorers in ``eval.scorers`` (``name``, ``options``); older
    ones (Inspect 0.3.4x) only in ``results.scores`` (``name``, ``scorer``,
    ``params``). Both are read; ``eval.scorers`` wins where both name a scorer.
    """
    options: dict[str, dict[str, Any]] = {}
    kinds: dict[str, str] = {}
    res_scores = results.get("scores") if isinstance(results, dict) else None
    for entry in _list(res_scores, path=path, where="results.scores"):
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            params = entry.get("params")
            options[entry["name"]] = params if isinstance(params, dict) else {}
            scorer = entry.get("scorer")
            kinds[entry["name"]] = scorer if isinstance(scorer, str) else entry["name"]
    for entry in _list(spec.get("scorers"), path=path, where="eval.scorers"):
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            opts = entry.get("options")
            options[entry["name"]] = opts if isinstance(opts, dict) else {}
            kinds.setdefault(entry["name"], entry["name"])
    by_kind = {n for n in options if kinds[n].split("/")[-1] in MODEL_GRADED or n in MODEL_GRADED}
    graded = by_kind | {n for n, o in options.items() if "model" in o}
    return options, graded, by_kind


def _scores(sample: dict[str, Any], *, path: Path, number: int) -> dict[str, Any]:
    """A sample's ``scores``: an object of objects (absent or null: none)."""
    scores = sample.get("scores")
    if scores is None:
        return {}
    if not isinstance(scores, dict):
        raise InputError(
            f"sample {number}: scores is a JSON {_kind(scores)}, not an object",
            file=path,
            row=number,
            column="scores",
            fix="Inspect writes scores as {scorer name: {value, answer, explanation, ...}}; "
            "the log may be damaged",
        )
    for name, score in scores.items():
        if score is not None and not isinstance(score, dict):
            raise InputError(
                f"sample {number}, scorer {name}: the score is a JSON {_kind(score)} "
                f"({shown(score)}), not an object",
                file=path,
                row=number,
                column=f"scores.{name}",
                fix="Inspect writes each score as {value, answer, explanation, metadata}; "
                "the log may be damaged or written by another tool",
            )
    return scores


def _rows(
    path: Path,
    log: dict[str, Any],
    samples: list[Any],
    reference_scorer: str | None,
    roster: Roster,
) -> tuple[list[dict[str, Any]], list[str], dict[str, str]]:
    spec: dict[str, Any] = log["eval"]
    model = _model_name(spec.get("model"))
    if model is None:
        raise _not_inspect(path, "eval.model names no model")
    options, graded, by_kind = _scorer_options(spec, log.get("results"), path)
    roles = spec.get("model_roles") if isinstance(spec.get("model_roles"), dict) else {}
    role_grader = _model_name((roles or {}).get("grader"))
    seen: set[str] = set()
    for number, s in enumerate(samples, start=1):
        if not isinstance(s, dict):
            raise _not_inspect(path, f"sample {number} is a JSON {_kind(s)}")
        for name, score in _scores(s, path=path, number=number).items():
            seen.add(name)
            if isinstance(score, dict) and _graded_by_model(score):
                graded.add(name)
    panels = {n for n in graded if isinstance(options.get(n, {}).get("model"), list)}
    graded -= panels
    if reference_scorer is not None:
        if reference_scorer not in seen:
            raise InputError(
                f"reference scorer {reference_scorer!r} is not in the log",
                file=path,
                fix=f"choose one of: {', '.join(sorted(seen)) or '(no scores)'}",
            )
        graded.discard(reference_scorer)
    fallback: dict[str, str] = {}  # scorer -> where its grader name came from
    unit = _unit_scale(samples, graded, by_kind)
    off_scale: dict[str, int] = {}  # scorer -> grades outside its 0-1 scale
    resolved: set[str] = set()  # dated snapshots that answered for the undated eval.model
    rows: list[dict[str, Any]] = []
    first: dict[tuple[str, str], int] = {}  # (id, epoch) -> sample number
    for number, sample in enumerate(samples, start=1):
        sid = _sample_id(sample, path=path, number=number)
        epoch = sample.get("epoch", 1)
        if isinstance(epoch, bool) or not isinstance(epoch, int | str):
            raise InputError(
                f"sample {sid}: epoch {shown(epoch)} is not a number",
                file=path,
                row=number,
                column="epoch",
                fix="Inspect numbers each sample's epochs 1, 2, ...; the log may be damaged",
            )
        epoch = str(epoch)
        if (sid, epoch) in first:  # would count as another epoch and weigh the mean
            raise InputError(
                f"sample {sid}, epoch {epoch} appears twice (samples {first[sid, epoch]} "
                f"and {number})",
                file=path,
                row=number,
                column="id",
                fix="Inspect logs each (id, epoch) once; the log may be damaged or two logs "
                "joined — keep one copy",
            )
        first[sid, epoch] = number
        scores = _scores(sample, path=path, number=number)
        errored = sample.get("error") is not None
        answered = _answered_by(sample, model, roster)
        if answered != model:
            resolved.add(answered)
        reference = math.nan
        if reference_scorer is not None and isinstance(scores.get(reference_scorer), dict):
            ref = grade_value(scores[reference_scorer].get("value"))
            if ref is None:
                raise _bad_grade(path, number, sid, reference_scorer, scores[reference_scorer])
            reference = ref
        for name in sorted(graded):
            score = scores.get(name)
            named = _model_name(options.get(name, {}).get("model")) or role_grader
            judge = _grading_model(score) if isinstance(score, dict) else None
            judge = judge or named or answered
            if named is None and (judge in (model, answered) or name in MODEL_GRADED):
                fallback[name] = "no grader named: Inspect grades with the evaluated model"
            if not isinstance(score, dict):
                status = "failed" if errored else "missing"
                rows.append(_row(sid, answered, name, judge, math.nan, reference, status))
                continue
            value = grade_value(score.get("value"))
            if value is None:
                raise _bad_grade(path, number, sid, name, score)
            if name in unit and not UNIT_SCALE[0] <= value <= UNIT_SCALE[1]:
                off_scale[name] = off_scale.get(name, 0) + 1
                value = math.nan  # off the scorer's scale: no rating, as FastChat's -1 / [[85]]
            status = "ok" if not math.isnan(value) else ("failed" if errored else "unparsed")
            rows.append(_row(sid, answered, name, judge, value, reference, status))
    notes = []
    if resolved:
        notes.append(
            f"{path.name}: the evaluated model {model} answered as "
            f"{', '.join(sorted(resolved))} (the snapshot the name resolved to, as each "
            "sample's output records it); its answers are read as that snapshot's."
        )
    for name, count in sorted(off_scale.items()):
        notes.append(
            f"{path.name}: scorer {name} grades on a 0–1 scale (C = 1, P = 0.5, I = 0); "
            f"{count} grade{'s' if count != 1 else ''} outside it read as missing "
            "(status unparsed), not as ratings."
        )
    if panels:
        notes.append(
            f"{path.name}: scorer(s) {', '.join(sorted(panels))} grade by a panel of models "
            "(one combined grade, no single grader) and were not imported."
        )
    other = sorted(seen - graded - panels - {reference_scorer or ""})
    if other:
        notes.append(
            f"{path.name}: scorer(s) {', '.join(other)} have no grader model and were not "
            "imported as ratings."
        )
    return rows, notes, fallback


def _unit_scale(samples: list[Any], graded: set[str], by_kind: set[str]) -> set[str]:
    """The graded scorers whose scale is 0–1: ``model_graded_qa`` / ``model_graded_fact``
    (by name or kind; their grades are C/P/I), and any scorer whose grades in the log
    include a letter or yes/no word (value_to_float maps those to 0–1)."""
    unit = {n for n in graded if n in MODEL_GRADED or n in by_kind}
    for s in samples:
        scores = s.get("scores") if isinstance(s, dict) else None
        if not isinstance(scores, dict):
            continue
        for name, score in scores.items():
            if name in graded and isinstance(score, dict) and _letter(score.get("value")):
                unit.add(name)
    return unit


def _bad_grade(path: Path, number: int, sid: str, scorer: str, score: Any) -> InputError:
    return InputError(
        f"sample {sid}, scorer {scorer}: grade {shown(score.get('value'))} is not a number "
        "or one of C, P, I, N, yes, no, true, false",
        file=path,
        row=number,
        column=f"scores.{scorer}.value",
        fix="recuse reads grades as Inspect's value_to_float does; map custom grades to numbers",
    )


def _row(
    sid: str, model: str, scorer: str, judge: str, rating: float, reference: float, status: str
) -> dict[str, Any]:
    return {
        "prompt_id": sid,
        "model": model,
        "dimension": scorer,
        "judge": judge,
        "rating": rating,
        "reference": reference,
        "status": status,
    }


def _over_epochs(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (sample, scorer, grader): mean grade over the epochs with one."""
    keys = ["prompt_id", "model", "dimension", "judge"]
    graded = frame["rating"].notna()
    out = frame.groupby(keys, sort=False, as_index=False).agg(
        rating=("rating", "mean"),
        reference=("reference", "mean"),
        epochs=("rating", "size"),
    )
    # a status per group: ok if any epoch has a grade, else the first epoch's reason
    first_bad = frame[~graded].groupby(keys, sort=False)["status"].first()
    status = pd.Series("ok", index=pd.MultiIndex.from_frame(out[keys]))
    missing = out["rating"].isna().to_numpy()
    status[missing] = first_bad.reindex(status.index[missing]).to_numpy()
    out["status"] = status.to_numpy()
    return out


def _refuse_single_scores(path: Path, samples: list[Any]) -> None:
    """Refuse a log of Inspect before July 2024 (0.3.17 and older): each sample holds
    one ``score``, not ``scores`` by scorer name (current Inspect renames it on
    reading); read as it was, such a log said no sample had a score."""
    old = [
        i
        for i, s in enumerate(samples, start=1)
        if isinstance(s, dict) and "score" in s and "scores" not in s
    ]
    if old:
        raise InputError(
            f"sample {old[0]} holds 'score' (one score per sample, the layout of Inspect "
            "before July 2024), not 'scores' by scorer name: this older log layout is not read",
            file=path,
            column="score",
            fix="re-save the log with a current Inspect (inspect log convert), which "
            "rewrites each sample's score as scores",
        )


def read_inspect_log(
    path: str | Path,
    *,
    roster: Roster | None = None,
    unknown_models: UnknownModels = "keep",
    reference_scorer: str | None = None,
) -> pd.DataFrame:
    """An Inspect AI log (``.eval`` or ``.json``) as a validated ``ratings`` table.

    One row per (sample, model-graded scorer, grader); see the module docstring for the
    mapping. Extra columns: ``task``, ``dataset``, ``epochs``, ``self_graded``.
    ``frame.attrs["notes"]`` holds sentences for the user: self-grading, scorers not
    imported, the missing reference (also in ``attrs[NO_REFERENCE]``). A file that is not an
    Inspect log, a damaged member or a grade that is no number or known letter raises
    :class:`InputError`.
    """
    path = Path(path).expanduser()
    if not path.is_file():
        raise InputError("file not found", file=path, fix="check the path")
    roster = roster or Roster.builtin()
    log, samples = _read_log(path)
    spec: dict[str, Any] = log["eval"]
    if not samples:
        raise InputError(
            "the log holds no samples",
            file=path,
            fix="run the eval with samples logged (log_samples is on by default)",
        )
    _refuse_single_scores(path, samples)
    rows, notes, fallback = _rows(path, log, samples, reference_scorer, roster)
    if not rows:
        names = sorted(
            {str(n) for smp in samples if isinstance(smp, dict) for n in (smp.get("scores") or {})}
        )
        found = f"its scorers: {', '.join(names)}" if names else "no sample has a score"
        raise NoModelGrades(
            f"the log has no model-graded scores ({found}; none records a grader model)",
            file=path,
            fix="score with model_graded_qa / model_graded_fact or another scorer that "
            "records its grading in metadata.grading",
        )
    frame = _over_epochs(pd.DataFrame(rows))
    for col in ("model", "judge"):
        frame[col] = frame[col].map(lambda n: _roster_name(n, roster))
    frame["task"] = spec.get("task") if isinstance(spec.get("task"), str) else None
    dataset = spec.get("dataset")
    name = dataset.get("name") if isinstance(dataset, Mapping) else None
    frame["dataset"] = name if isinstance(name, str) else None
    frame = canonicalize_models(
        frame, ("model", "judge"), roster, file=path, unknown_models=unknown_models
    )
    families = roster.families(frame["judge"]), roster.families(frame["model"])
    frame["self_graded"] = (families[0] == families[1]).to_numpy(dtype=bool)
    out = validate_ratings(frame, file=path)
    out.attrs["notes"] = [
        *_self_grading_notes(path, out, fallback),
        *notes,
        *_unfinished(path, log, samples),
    ]
    if reference_scorer is None:
        out.attrs[NO_REFERENCE] = (
            f"{path.name}: an Inspect log holds no independent reference score, so the "
            "favoritism regression cannot be fitted (reference is empty); name a scorer "
            "whose grades serve as one (--reference-scorer NAME, e.g. a match or includes "
            "scorer) or a judge (--reference-judge NAME)."
        )
        out.attrs["notes"].append(out.attrs[NO_REFERENCE])
    return out


def _unfinished(path: Path, log: Mapping[str, Any], samples: list[Any]) -> list[str]:
    """A note where the log's ``status`` is not ``success`` (``cancelled``, ``error``, or
    none: a journal's start of an eval still running): its samples are those graded
    before it stopped, which a user reading its numbers as the whole eval's was not told
    (a cancelled log of 2 of its 16 samples read as a valid ratings table, no word of it).
    Samples are counted by id, each once however many of its epochs were logged, and
    with several epochs (``eval.config.epochs``) the gradings logged and planned too.

    >>> _unfinished(Path("x.json"), {"status": "cancelled",
    ...             "eval": {"dataset": {"samples": 16}}}, [{"id": 1}, {"id": 2}])[0][:60]
    "x.json: the eval's status is 'cancelled', not success: its 2"
    """
    status = log.get("status")
    if status == "success":
        return []
    ids = {smp.get("id") for smp in samples if isinstance(smp, dict)}
    dataset = log["eval"].get("dataset") if isinstance(log.get("eval"), Mapping) else None
    planned = dataset.get("samples") if isinstance(dataset, Mapping) else None
    of = f" of the {planned:,} its dataset holds" if is_count(planned) else ""
    epochs = _epochs_planned(log)
    if epochs > 1:  # each sample graded once an epoch: count the gradings too
        runs = {(smp.get("id"), smp.get("epoch")) for smp in samples if isinstance(smp, dict)}
        every = (
            f" of {planned * epochs:,}" if isinstance(planned, int) and is_count(planned) else ""
        )
        of += f", in {len(runs):,}{every} gradings ({epochs} epochs)"
    said = f"is {shown(status)}, not success" if status is not None else "is not recorded"
    return [
        f"{path.name}: the eval's status {said}: its {len(ids):,} sample(s){of} are those "
        "logged before it stopped (or so far), and every number from this log is of them "
        "alone — rerun or resume the eval (inspect eval-retry) for the whole set"
    ]


def _epochs_planned(log: Mapping[str, Any]) -> int:
    """The epochs the eval was run for (``eval.config.epochs``; 1 where not given).

    >>> _epochs_planned({"eval": {"config": {"epochs": 3}}}), _epochs_planned({})
    (3, 1)
    """
    ev = log.get("eval")
    config = ev.get("config") if isinstance(ev, Mapping) else None
    epochs = config.get("epochs") if isinstance(config, Mapping) else None
    return epochs if isinstance(epochs, int) and is_count(epochs) and epochs > 1 else 1


def is_count(value: object) -> bool:
    """A whole number of 0 or more (not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _self_grading_notes(path: Path, frame: pd.DataFrame, fallback: dict[str, str]) -> list[str]:
    notes = []
    own = frame[frame["self_graded"]]
    for (scorer, judge, model), rows in own.groupby(["dimension", "judge", "model"], sort=True):
        same = "is the evaluated model" if judge == model else f"is in the family of {model}"
        why = f" ({fallback[str(scorer)]})" if str(scorer) in fallback else ""
        notes.append(
            f"Self-grading in {path.name}: scorer {scorer} is graded by {judge}, which {same}"
            f"{why}; its grades of its own family's answers ({len(rows)} "
            f"row{'s' if len(rows) != 1 else ''}) are not independent."
        )
    return notes
