"""Readers of recorded judge outputs: the replies a judge wrote, per pair and order.

Each reader returns a :class:`Recording` (the pairs,
and per pair and shown order the judge's raw reply, its log-probs where recorded,
and the verdict the file's own parser read) for
:func:`recuse.judging.replay.replay`:

* LLMBar ``Dataset/<set>/evaluators/<judge>/<prompting>/result.json``;
* JudgeBench ``outputs/…,judge_name=arena_hard,judge_model=<model>.jsonl``;
* AlpacaEval ``results/<model>/<annotator>/annotations.json`` with ``raw_completion``;
* a table of replies (CSV / JSONL / Parquet: ``item_id, prompt, response_a,
  response_b, order, text``).

The pairs come from the dataset readers in :mod:`recuse.data`, so replayed rows join
the dataset's rows. The file's sha256 is the replayed judge's revision.

Order conventions (slot A = the response shown first; ``order == "first"`` shows a
in slot A):

* LLMBar: ``swap = False`` is ``first``; ``winner`` names the better output in the
  original indexing, so upstream slot-A probability is ``winner == "1"`` for
  ``first`` and ``winner == "2"`` for ``second``.
* JudgeBench: ``judgments[0]`` is ``first``, ``judgments[1]`` is ``second`` and its
  ``decision`` is in the shown (swapped) frame.
* AlpacaEval: each instruction was shown once, swapped when
  ``random.Random("is_switched_outputs" + instruction + "0").choices([False, True])``
  drew True (the seeding of the AlpacaEval release that wrote these files; it
  reproduces every recorded preference), so each item has one order.
"""

from __future__ import annotations

import json
import math
import os
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np
import pandas as pd

from recuse.cells import one_text
from recuse.data.record_lines import rows_located
from recuse.data.table_files import read_frame
from recuse.errors import InputError
from recuse.files import file_sha256, is_file, no_file, read_json, read_text
from recuse.roster import Roster
from recuse.tables import note_missing_texts, read_missing_texts
from recuse.verdict_parsing import (
    ALPACA_FN_RANKING,
    ALPACA_RANKING,
    ALPACA_TOKENS,
    ARENA_HARD,
    LLMBAR,
    ORDERS,
    Order,
    VerdictFormat,
    token_logprobs,
)

__all__ = [
    "RECORDING_FORMATS",
    "Recorded",
    "Recording",
    "RecordingFormat",
    "alpaca_switched",
    "detect_source",
    "file_revision",
    "read_alpaca_annotations",
    "read_judgebench_output",
    "read_llmbar_result",
    "read_recording",
    "read_reply_table",
]

#: which reader a file of recorded replies needs: the tool that wrote it (its layout), a
#: plain table of replies, or "auto" (from the file's name: :func:`detect_source`)
RecordingFormat = Literal["auto", "llmbar", "judgebench", "alpaca-eval", "table"]
RECORDING_FORMATS: tuple[RecordingFormat, ...] = get_args(RecordingFormat)
_PAIR_COLUMNS = ("item_id", "prompt", "response_a", "response_b")


@dataclass(frozen=True)
class Recorded:
    """One recorded reply for one pair in one shown order.

    ``text`` is None when the file holds no reply (``missing`` says why).
    ``tokens``/``dists`` are the reply's tokens and top log-probs when recorded.
    ``upstream`` is the slot-A probability the file's own parser recorded (NaN when
    it could not parse the reply; None when the file records none).
    """

    item_id: str
    order: Order
    text: str | None
    tokens: tuple[str, ...] = ()
    dists: tuple[dict[str, float], ...] = ()
    finish_reason: str | None = None
    missing: str | None = None
    upstream: float | None = None


@dataclass(frozen=True)
class Recording:
    """A judge's recorded replies over a set of pairs, and how to read them."""

    judge: str
    source: str
    revision: str
    verdict: VerdictFormat
    pairs: pd.DataFrame = field(repr=False)
    outputs: tuple[Recorded, ...] = field(repr=False)


def file_revision(path: Path) -> str:
    """16 hex digits of the file's sha256 (the replayed judge's revision)."""
    return file_sha256(path)[:16]


def detect_source(path: Path) -> str:
    """Which reader a file needs, from its upstream name."""
    if path.name == "result.json" and "evaluators" in path.parts:
        return "llmbar"
    if path.name == "annotations.json":
        return "alpaca-eval"
    if path.suffix == ".jsonl" and "judge_name=" in path.name:
        return "judgebench"
    return "table"


@rows_located
def read_recording(
    path: str | Path,
    *,
    source: str = "auto",
    verdict: VerdictFormat | None = None,
    judge: str | None = None,
    roster: Roster | None = None,
) -> Recording:
    """Read recorded replies from ``path`` (``source`` ``auto`` guesses from the name).

    ``verdict`` and ``judge`` are needed for ``table`` files only (columns
    ``item_id, prompt, response_a, response_b, order, text``; optional ``judge``
    and ``pairs`` metadata columns).
    """
    path = Path(path)
    if is_file(path, folder=True):
        raise _a_folder(path)
    if not is_file(path):
        if path.exists():  # a pipe, socket or device: said as such, never opened
            raise no_file(path, fix="give a recorded judge output file")
        raise InputError("no such file", file=path, fix="give a recorded judge output file")
    if source not in RECORDING_FORMATS:
        raise InputError(
            f"unknown source {source!r}",
            fix=f"use one of {', '.join(RECORDING_FORMATS)}",
            file=path,
        )
    kind = detect_source(path) if source == "auto" else source
    roster = roster or Roster.builtin()
    if kind == "llmbar":
        return read_llmbar_result(path, roster=roster)
    if kind == "judgebench":
        return read_judgebench_output(path, roster=roster)
    if kind == "alpaca-eval":
        return read_alpaca_annotations(path, roster=roster)
    if verdict is None:
        raise InputError(
            "a table of replies needs its verdict format",
            file=path,
            fix="give --verdict-format (brackets, llmbar, arena-hard, ...)",
        )
    return read_reply_table(path, verdict=verdict, judge=judge)


#: what ``recuse judge replay`` reads: one file of a judge's recorded replies
_ONE_FILE = (
    "replay reads one file of a judge's recorded replies (an LLMBar result.json, a "
    "JudgeBench ...judge_name=....jsonl, an AlpacaEval annotations.json, or a .csv/.jsonl "
    "table of replies)"
)
#: at most this many of a folder's entries are looked at for recorded files to name
_LOOKED_AT = 5000


def _recorded_files(folder: Path, *, limit: int = 3) -> tuple[list[Path], bool]:
    """Up to ``limit`` files under ``folder`` that :func:`detect_source` names an upstream
    recording (LLMBar, JudgeBench, AlpacaEval), in sorted order, and whether there were
    more; :data:`_LOOKED_AT` entries at most are looked at (a home folder is not walked)."""
    found: list[Path] = []
    seen = 0
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            seen += 1
            if seen > _LOOKED_AT:
                return found, True
            if detect_source(Path(root) / name) != "table":
                if len(found) == limit:
                    return found, True
                found.append(Path(root) / name)
    return found, False


def _a_folder(path: Path) -> InputError:
    """The error for a folder given as the recording: what it is, what replay reads,
    and the recorded files in it, if any (a user gave LLMBar's ``evaluators/GPT-4``
    and was told "no such file" of a folder ``ls`` shows); where the look stopped at
    :data:`_LOOKED_AT` files before one was found, it says so (it said the folder held
    none, of 100,000 files beside an ``evaluators`` folder)."""
    found, more = _recorded_files(path)
    if not found:  # none, or none among the first _LOOKED_AT files (more: it stopped)
        looked = f" (none among the first {_LOOKED_AT:,} files in it)" if more else ""
        return InputError(f"a folder, not a file: {_ONE_FILE}", file=path,
                          fix=f"give the recorded file itself{looked}")  # fmt: skip
    names = ", ".join(str(p.relative_to(path)) for p in found) + (", ..." if more else "")
    return InputError(f"a folder, not a file: {_ONE_FILE}", file=path,
                      fix=f"give one of the recorded files in it ({names}); one replay "
                      "per file")  # fmt: skip


def _pairs_only(rows: pd.DataFrame) -> pd.DataFrame:
    drop = [
        c
        for c in ("judge", "p_a_first", "p_a_second", "p_a", "status_first", "status_second")
        if c in rows.columns
    ]
    return rows.drop(columns=drop).drop_duplicates("item_id").reset_index(drop=True)


#: LLMBar prompting strategies whose replies state the verdict as ``Output (a)`` /
#: ``Output (b)`` at the start (each replays its upstream winner on every reply of
#: LLMBar/Natural for all six judges); CoT and Swap replies do not (GPT-4's and
#: ChatGPT's: 98 to 127 of 200 agreed), Rating, Metrics and Reference results differ in
#: layout
LLMBAR_PROMPTINGS = ("Vanilla_NoRules", "Vanilla", "Vanilla_1shot", "Vanilla_2shot")


def read_llmbar_result(path: Path, *, roster: Roster) -> Recording:
    """LLMBar ``Dataset/<set>/evaluators/<judge>/<prompting>/result.json``, for a
    prompting in :data:`LLMBAR_PROMPTINGS` (others are refused by name).

    Pairs (ids, texts, gold/human label; MT-Bench generators) come from the
    ``llmbar`` dataset reader, so replayed rows join the dataset's rows.
    """
    from recuse.data.llmbar import MT_BENCH_SET, read_llmbar_mtbench, read_llmbar_set

    parts = path.resolve().parts
    if "Dataset" not in parts or "evaluators" not in parts:
        raise InputError(
            "not an LLMBar result file",
            file=path,
            fix="give Dataset/<set>/evaluators/<judge>/<prompting>/result.json",
        )
    prompting = path.parent.name
    if prompting not in LLMBAR_PROMPTINGS:
        raise InputError(
            f"LLMBar's {prompting} replies are not replayed: recuse reads the verdict "
            "'Output (a)' / 'Output (b)' at the start of a reply or line, as the Vanilla "
            "prompts ask; a CoT or Swap reply opens its reasoning with those words and "
            "ends 'Therefore, Output (b) is better.', and the Rating, Metrics and "
            "Reference results hold other fields",
            file=path,
            fix=f"replay a result.json under one of {', '.join(LLMBAR_PROMPTINGS)}",
        )
    d, e = parts.index("Dataset"), len(parts) - 1 - parts[::-1].index("evaluators")
    set_name = "/".join(parts[d + 1 : e])
    set_dir = Path(*parts[:e])
    folder = Path(*parts[:d])
    judge = roster.canonical(path.parents[1].name, file=str(path), column="judge")
    if set_name == MT_BENCH_SET and (folder.parent / "mt_bench" / "question.jsonl").is_file():
        rows = read_llmbar_mtbench(folder, roster)
    else:
        rows = read_llmbar_set(set_dir, set_name, roster)
    pairs = _pairs_only(rows)
    records = read_json(path)
    if not isinstance(records, list) or len(records) != len(pairs):
        raise InputError(
            f"{len(records) if isinstance(records, list) else 'no'} results for "
            f"{len(pairs)} items in dataset.json",
            file=path,
            fix="result.json must have the rows of its dataset.json, in order",
        )
    outputs: list[Recorded] = []
    keys: dict[Order, str] = {"first": "swap = False", "second": "swap = True"}
    for row, (rec, item_id) in enumerate(zip(records, pairs["item_id"], strict=True), start=1):
        results = rec.get("results") if isinstance(rec, dict) else None
        if not (isinstance(results, list) and results and isinstance(results[0], dict)):
            raise InputError("results must be a list holding one object", file=path, row=row)
        for order, key in keys.items():
            entry = results[0].get(key)
            if not isinstance(entry, dict):
                outputs.append(Recorded(str(item_id), order, None, missing=f"no {key!r} entry"))
                continue
            completion = entry.get("completion")
            if not (isinstance(completion, list) and completion and isinstance(completion[0], str)):
                raise InputError(
                    "completion must be [text, finish reason]",
                    file=path,
                    row=row,
                    column=f"results[0].{key}.completion",
                )
            finish = completion[1] if len(completion) > 1 else None
            winner = entry.get("winner")
            wins_first = {"1": 1.0, "2": 0.0}.get(str(winner), math.nan)
            upstream = wins_first if order == "first" else 1.0 - wins_first
            outputs.append(
                Recorded(
                    str(item_id),
                    order,
                    completion[0],
                    finish_reason=str(finish) if finish else None,
                    upstream=upstream,
                )
            )
    return Recording(judge, str(path), file_revision(path), LLMBAR, pairs, tuple(outputs))


def read_judgebench_output(path: Path, *, roster: Roster) -> Recording:
    """JudgeBench ``outputs/...,judge_name=<name>,judge_model=<model>.jsonl`` (LLM judges).

    The reply is ``judgments[i].judgment.response`` (Arena-Hard verdicts); reward
    model files hold scores, not replies, and are refused.
    """
    from recuse.data.judgebench import read_judgebench

    tags = dict(p.split("=", 1) for p in path.name.removesuffix(".jsonl").split(",") if "=" in p)
    if tags.get("judge_name") != "arena_hard":
        raise InputError(
            f"judge_name={tags.get('judge_name')} outputs hold no replies in the Arena-Hard format",
            file=path,
            fix="replay a judge_name=arena_hard file",
        )
    judge = roster.canonical(tags.get("judge_model", ""), file=str(path), column="judge_model")
    table = read_judgebench(path.parent.parent, roster)
    rows = table[(table["judge"] == judge) & (table["category"] == "arena_hard")]
    pairs = _pairs_only(rows)
    outputs: list[Recorded] = []
    known = set(pairs["item_id"])
    decisions = {"A>B": 1.0, "B>A": 0.0, "A=B": 0.5}
    for row, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"not JSON ({exc.msg})", file=path, row=row) from None
        if not isinstance(rec, dict):
            raise InputError("each line must be a JSON object", file=path, row=row)
        item_id = f"judgebench:{rec.get('pair_id')}"
        judgments = rec.get("judgments")
        if item_id not in known or not isinstance(judgments, list) or len(judgments) != 2:
            raise InputError("expected a known pair_id and two judgments", file=path, row=row)
        orders: tuple[Order, Order] = ORDERS
        for order, j in zip(orders, judgments, strict=True):
            reply = (j or {}).get("judgment") or {}
            text = reply.get("response") if isinstance(reply, dict) else None
            if not isinstance(text, str):
                outputs.append(
                    Recorded(item_id, order, None, missing="the judge call failed upstream")
                )
                continue
            decision = j.get("decision")
            outputs.append(
                Recorded(item_id, order, text, upstream=decisions.get(decision, math.nan))
            )
    return Recording(judge, str(path), file_revision(path), ARENA_HARD, pairs, tuple(outputs))


def alpaca_switched(instruction: str) -> bool:
    """Whether AlpacaEval showed ``output_2`` first for this instruction (see module doc)."""
    rng = random.Random("is_switched_outputs" + instruction + "0")
    return bool(rng.choices([False, True], k=1)[0])


def read_alpaca_annotations(path: Path, *, roster: Roster) -> Recording:
    """AlpacaEval ``results/<model>/<annotator>/annotations.json`` with ``raw_completion``.

    AlpacaEval 1 rankings are read with ``alpaca-ranking``; AlpacaEval 2 replies
    (one token with top-5 log-probs) with ``alpaca-tokens``, Eq. 3 on P(m), P(M); the
    ``*_fn`` annotators' function calls (``ordered_models``) with ``alpaca-fn-ranking``.
    """
    from recuse.data.alpaca_eval import preference_to_p_a, read_annotations

    rows = read_annotations(path, roster)
    records = read_json(path)
    raws = [r.get("raw_completion") for r in records]
    kinds = {type(r) for r in raws if r is not None}
    if not kinds:
        raise InputError(
            "the file holds no raw judge replies (raw_completion)",
            file=path,
            fix="replay an annotations.json that has raw_completion",
        )
    fmt = _alpaca_format(raws, path)
    p_a = preference_to_p_a(pd.Series([r.get("preference") for r in records], dtype=object))
    pairs = _pairs_only(rows)
    judge = str(rows["judge"].iloc[0])
    outputs: list[Recorded] = []
    for rec, raw, item_id, pa in zip(records, raws, pairs["item_id"], p_a, strict=True):
        order: Order = "second" if alpaca_switched(str(rec["instruction"])) else "first"
        upstream = float(pa) if order == "first" else 1.0 - float(pa)
        if raw is None:
            outputs.append(
                Recorded(str(item_id), order, None, missing="no raw_completion recorded")
            )
        elif fmt is ALPACA_FN_RANKING:
            outputs.append(Recorded(str(item_id), order, _fn_reply(raw), upstream=upstream))
        elif isinstance(raw, dict):
            tokens, dists = token_logprobs(raw)
            text = _alpaca_text(raw)
            outputs.append(
                Recorded(
                    str(item_id),
                    order,
                    text if text is not None else "".join(tokens),
                    tuple(tokens),
                    tuple(dists),
                    finish_reason=raw.get("finish_reason"),
                    upstream=upstream,
                )
            )
        else:
            outputs.append(Recorded(str(item_id), order, str(raw), upstream=upstream))
    return Recording(judge, str(path), file_revision(path), fmt, pairs, tuple(outputs))


def _fn_arguments(raw: Any) -> dict[str, Any] | None:
    """A ``*_fn`` annotator's function-call arguments ``{ordered_models: [...]}``, as
    recorded: an object, or its JSON text (3 of upstream's 21 such files, Ein-70B-v0.1
    and Samba-CoE-v0.1/v0.2, keep the call's arguments as text); None for anything
    else."""
    if isinstance(raw, str) and "ordered_models" in raw:
        try:
            raw = json.loads(raw)
        except ValueError:
            return None
    return raw if isinstance(raw, dict) and "ordered_models" in raw else None


def _fn_reply(raw: Any) -> str:
    """The reply ``alpaca-fn-ranking`` reads: the call's ``ordered_models`` as JSON with
    sorted keys, from an object or its JSON text; any other text as it is (unparsed
    unless it is such a ranking itself)."""
    args = _fn_arguments(raw)
    if args is not None:
        return json.dumps(args["ordered_models"], sort_keys=True)
    return raw if isinstance(raw, str) else json.dumps(raw, sort_keys=True)


def _alpaca_format(raws: list[Any], path: Path) -> VerdictFormat:
    """How an annotations.json's ``raw_completion`` values are read: a function call's
    ``ordered_models`` (the ``*_fn`` annotators; an object or its JSON text), other
    texts (AlpacaEval 1's rankings), or
    one token's log-probs or text (``weighted_alpaca_eval_gpt4_turbo``). Objects holding
    none of these are refused: each would replay as an empty, unparsed reply."""
    if any(_fn_arguments(r) is not None for r in raws):
        return ALPACA_FN_RANKING
    objects = [r for r in raws if isinstance(r, dict)]
    if not objects:
        return ALPACA_RANKING
    if any(isinstance(r.get("logprobs"), dict) or _alpaca_text(r) is not None for r in objects):
        return ALPACA_TOKENS
    keys = sorted({str(k) for r in objects for k in r})[:8]
    raise InputError(
        f"raw_completion holds objects with no log-probs, text or ordered_models "
        f"ranking (keys: {', '.join(keys)})",
        file=path,
        column="raw_completion",
        fix="replay AlpacaEval files whose annotator records a ranking or one token's log-probs",
    )


def _alpaca_text(raw: Mapping[str, Any]) -> str | None:
    message = raw.get("message")
    if isinstance(message, dict) and isinstance(message.get("content"), str):
        return str(message["content"])
    return str(raw["text"]) if isinstance(raw.get("text"), str) else None


def _one_reply_per_order(df: pd.DataFrame, path: Path) -> None:
    """One reply per item and order, and an item's rows alike in its texts: a second
    reply, or another text, was left out with nothing said (one row of each kept). Texts
    compare by :func:`recuse.cells.one_text`, as a pairs table's rows of one item do: a
    prompt written CRLF in one row and LF in the other is one prompt."""
    twice = df.duplicated(["item_id", "order"]).to_numpy()
    if twice.any():
        i = int(twice.argmax())
        raise InputError(
            f"a second reply for item {df['item_id'].iloc[i]!r}, order {df['order'].iloc[i]!r}",
            file=path,
            row=i + 1,
            fix="keep one reply per item and order (first: a shown first; second: b)",
        )
    for col in _PAIR_COLUMNS[1:]:  # texts compared as a pairs table's rows are (one_text)
        texts = df[col].map(lambda v: one_text(v) if isinstance(v, str) else v)
        differs = (texts.groupby(df["item_id"], sort=False).transform("nunique") > 1).to_numpy()
        if differs.any():
            item = df["item_id"].iloc[int(differs.argmax())]
            i = int(np.flatnonzero((df["item_id"] == item).to_numpy())[1])  # its 2nd row
            raise InputError(
                f"item {df['item_id'].iloc[i]!r} has another {col} than in its other row",
                file=path,
                row=i + 1,
                column=col,
                fix="the two orders of one item show the same prompt and responses: give "
                "them one text, or each pair its own item_id",
            )


def read_reply_table(path: Path, *, verdict: VerdictFormat, judge: str | None) -> Recording:
    """A CSV/JSONL/Parquet table: ``item_id, prompt, response_a, response_b, order, text``.

    ``order`` is ``first`` (a shown first) or ``second``; ``text`` the raw reply
    (empty cell = no reply; a reply ``None`` is the text the judge wrote). The judge
    comes from ``judge`` or a single-valued ``judge`` column (``NA``, ``null``, ... in
    it are missing, with a note, as in a pairs table). Other ``pairs`` columns (human,
    model_a, ...) are kept.
    """
    df = read_frame(path)  # the project's reader: errors name the file and row
    need = [*_PAIR_COLUMNS, "order", "text"]
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)}",
            file=path,
            fix="a reply table has columns " + ", ".join(need),
        )
    bad = ~df["order"].isin(ORDERS)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(
            f"order {df['order'].iloc[i]!r} is not first or second",
            file=path,
            row=i + 1,
            column="order",
        )
    note_missing_texts(read_missing_texts(df, ["judge"]), path)
    if judge is None:
        names: list[object] = list(df["judge"].dropna().unique()) if "judge" in df.columns else []
        if len(names) != 1:
            raise InputError(
                "say which judge wrote the replies",
                file=path,
                fix="give --judge-id, or a judge column with one value",
            )
        judge = str(names[0])
    df["item_id"] = df["item_id"].astype(str)
    _one_reply_per_order(df, path)
    pairs = df.drop(columns=["order", "text"]).drop_duplicates("item_id").reset_index(drop=True)
    outputs = tuple(
        Recorded(
            str(r["item_id"]),
            r["order"],
            r["text"] if isinstance(r["text"], str) else None,
            missing=None if isinstance(r["text"], str) else "empty text cell",
        )
        for r in df.to_dict("records")
    )
    return Recording(judge, str(path), file_revision(path), verdict, pairs, outputs)
