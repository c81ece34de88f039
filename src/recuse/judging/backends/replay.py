"""Replay judge outputs recorded in a file through the same parsing as a live judge.

Published judge runs (LLMBar ``result.json``, JudgeBench ``outputs/*.jsonl``,
AlpacaEval ``annotations.json`` with ``raw_completion``, or any table of raw
replies) are read into a :class:`Recording`: the pairs and, per pair and shown
order, the judge's raw reply (and its log-probs where recorded). :func:`replay`
sends them through :class:`~recuse.judging.runner.Runner` with a
:class:`ReplayBackend`, so the store rows, statuses and the exported ``pairs``
table are those of a live judge: the reply is parsed in the recording's
:class:`~recuse.judging.protocols.VerdictFormat`, a reply that breaks the format
is an ``unparsed`` row (counted, never a default score) and an order the file
holds no reply for is a ``failed`` row with the reason.

The content key of a replayed judgment hashes the judge id, the file's sha256
(as the revision), the verdict format and the item id with both texts in slot
order, so replaying a changed file never reuses stale rows.

Where the file also records the verdict its own parser read, :func:`compare_upstream`
counts how often our parse agrees (slot frame; both unparsed counts as agreement).

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

import hashlib
import json
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from recuse.errors import InputError
from recuse.judging.backends.base import Backend, Failure, Generation, TokenFilter
from recuse.judging.backends.http import token_logprobs
from recuse.judging.protocols import (
    ALPACA_RANKING,
    ALPACA_TOKENS,
    ARENA_HARD,
    LLMBAR,
    ORDERS,
    Message,
    Order,
    Pair,
    PairwiseProtocol,
    Prompt,
    VerdictFormat,
    present,
)
from recuse.judging.runner import RetryPolicy, Runner, RunSummary
from recuse.judging.store import Store
from recuse.roster import Roster

REPLAY_VERSION = "replay-v1"
Source = Literal["auto", "llmbar", "judgebench", "alpaca-eval", "table"]
SOURCES: tuple[str, ...] = ("auto", "llmbar", "judgebench", "alpaca-eval", "table")
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


@dataclass(frozen=True)
class ReplayProtocol(PairwiseProtocol):
    """Pairwise protocol for recorded replies: the prompt only identifies the reply."""

    mode: Literal["direct", "explain"] = "explain"
    version: str = REPLAY_VERSION

    def prompt(self, pair: Pair, order: Order) -> Prompt:
        shown = present(pair, order)
        text = (
            f"item {pair.item_id}\n\nquestion:\n{pair.prompt}\n\n"
            f"shown first:\n{shown.slot_a}\n\nshown second:\n{shown.slot_b}"
        )
        return Prompt((Message("user", text),))

    def key_params(self) -> dict[str, object]:
        return {"protocol": self.version, "verdict_format": self.verdict.name}


class ReplayBackend(Backend):
    """Answers ``generate`` with the recorded reply for each prompt (no model).

    Stop strings and token limits do not apply: the recorded reply is what the
    judge said. Log-probs other than those recorded are not available.
    """

    def __init__(self, recording: Recording, protocol: ReplayProtocol) -> None:
        self.model_id = recording.judge
        self.revision = recording.revision
        self.batch_size = 1024
        self.concurrency = 1
        self.supports_prefix = False
        pairs = {
            str(r["item_id"]): Pair(
                str(r["item_id"]), r["prompt"], r["response_a"], r["response_b"]
            )
            for r in recording.pairs.to_dict("records")
        }
        self._by_prompt: dict[str, Recorded] = {}
        for rec in recording.outputs:
            pair = pairs.get(rec.item_id)
            if pair is not None:
                self._by_prompt[protocol.prompt(pair, rec.order).canonical()] = rec

    async def generate(
        self,
        prompts: Sequence[Prompt],
        *,
        max_new_tokens: int,
        stop: Sequence[str] = (),
        top_k: int = 0,
    ) -> list[Generation | Failure]:
        out: list[Generation | Failure] = []
        for p in prompts:
            rec = self._by_prompt.get(p.canonical())
            if rec is None:
                out.append(Failure("the file holds no reply for this pair and order"))
            elif rec.text is None:
                out.append(Failure(rec.missing or "the file holds no reply"))
            else:
                out.append(
                    Generation(
                        text=rec.text,
                        tokens=rec.tokens,
                        dists=rec.dists,
                        finish_reason=rec.finish_reason,
                    )
                )
        return out

    async def next_token_logprobs(
        self, prompts: Sequence[Prompt], *, top_k: int = 20, select: TokenFilter | None = None
    ) -> list[dict[str, float] | Failure]:
        return [Failure("a replayed judge has only its recorded replies") for _ in prompts]

    async def continuation_logprobs(
        self, prompts: Sequence[Prompt], continuations: Sequence[str]
    ) -> list[np.ndarray | Failure]:
        return [Failure("a replayed judge has only its recorded replies") for _ in prompts]


# --- running ------------------------------------------------------------------------


def replay(
    recording: Recording,
    store: Store,
    *,
    judge: str | None = None,
    progress: bool = False,
) -> RunSummary:
    """Parse every recorded reply into ``store``, exactly as a live run would store it.

    Items are run grouped by the orders the file holds for them (AlpacaEval shows
    each pair once), so an order that was never shown is not a failure.
    """
    protocol = ReplayProtocol(verdict=recording.verdict)
    backend = ReplayBackend(recording, protocol)
    runner = Runner(
        backend,
        store,
        judge=judge or recording.judge,
        retry=RetryPolicy(max_attempts=1),
        progress=progress,
    )
    held: dict[str, set[str]] = {}
    for rec in recording.outputs:
        held.setdefault(rec.item_id, set()).add(rec.order)
    pairs = recording.pairs[recording.pairs["item_id"].astype(str).isin(held)]
    groups: dict[tuple[Order, ...], list[int]] = {}
    for i, item in enumerate(pairs["item_id"].astype(str)):
        orders = tuple(o for o in ORDERS if o in held[item])
        groups.setdefault(orders, []).append(i)
    summaries = [
        runner.pairwise(pairs.iloc[rows], protocol, orders=orders)
        for orders, rows in sorted(groups.items())
    ]
    failures: dict[str, int] = {}
    for s in summaries:
        for reason, n in s.failures.items():
            failures[reason] = failures.get(reason, 0) + n
    return RunSummary(
        total=sum(s.total for s in summaries),
        cached=sum(s.cached for s in summaries),
        ok=sum(s.ok for s in summaries),
        unparsed=sum(s.unparsed for s in summaries),
        failed=sum(s.failed for s in summaries),
        seconds=sum(s.seconds for s in summaries),
        failures=failures,
    )


@dataclass(frozen=True)
class UpstreamAgreement:
    """Our parse vs the verdict the file's own parser recorded (slot frame).

    ``compared`` replies had both; ``agree`` of them match (equal within 1e-6, or
    both unparsed); ``disagreements`` lists (item_id, order, ours, upstream).
    """

    compared: int
    agree: int
    disagreements: tuple[tuple[str, str, float, float], ...]

    def line(self) -> str:
        return (
            f"agreement with the file's own parser: {self.agree} of {self.compared} "
            f"recorded verdicts"
        )


def compare_upstream(
    recording: Recording, store: Store, *, judge: str | None = None
) -> UpstreamAgreement:
    """Count stored replayed verdicts that match ``Recorded.upstream`` (slot frame)."""
    df = store.judgments()
    df = df[(df["kind"] == "pairwise") & (df["judge"] == (judge or recording.judge))]
    df = df.drop_duplicates(["item_id", "slot"], keep="last")
    stored: dict[tuple[str, str], float] = {
        (str(i), str(o)): float(p) if st == "ok" else math.nan
        for i, o, p, st in zip(df["item_id"], df["slot"], df["p_slot_a"], df["status"], strict=True)
    }
    compared = agree = 0
    bad: list[tuple[str, str, float, float]] = []
    for rec in recording.outputs:
        if rec.upstream is None or rec.text is None or (rec.item_id, rec.order) not in stored:
            continue
        ours = stored[(rec.item_id, rec.order)]
        theirs = float(rec.upstream)
        compared += 1
        same = (math.isnan(ours) and math.isnan(theirs)) or (
            not math.isnan(ours) and not math.isnan(theirs) and abs(ours - theirs) <= 1e-6
        )
        if same:
            agree += 1
        else:
            bad.append((rec.item_id, rec.order, ours, theirs))
    return UpstreamAgreement(compared, agree, tuple(bad))


# --- readers --------------------------------------------------------------------------


def file_revision(path: Path) -> str:
    """16 hex digits of the file's sha256 (the replayed judge's revision)."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


def detect_source(path: Path) -> str:
    """Which reader a file needs, from its upstream name."""
    if path.name == "result.json" and "evaluators" in path.parts:
        return "llmbar"
    if path.name == "annotations.json":
        return "alpaca-eval"
    if path.suffix == ".jsonl" and "judge_name=" in path.name:
        return "judgebench"
    return "table"


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
    if not path.is_file():
        raise InputError("no such file", file=path, fix="give a recorded judge output file")
    if source not in SOURCES:
        raise InputError(
            f"unknown source {source!r}", fix=f"use one of {', '.join(SOURCES)}", file=path
        )
    kind = detect_source(path) if source == "auto" else source
    roster = roster or Roster.load()
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


def _pairs_only(rows: pd.DataFrame) -> pd.DataFrame:
    drop = [
        c
        for c in ("judge", "p_a_first", "p_a_second", "p_a", "status_first", "status_second")
        if c in rows.columns
    ]
    return rows.drop(columns=drop).drop_duplicates("item_id").reset_index(drop=True)


def read_llmbar_result(path: Path, *, roster: Roster) -> Recording:
    """LLMBar ``Dataset/<set>/evaluators/<judge>/<prompting>/result.json``.

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
    records = _json(path)
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
    with path.open(encoding="utf-8") as f:
        for row, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"not JSON ({exc.msg})", file=path, row=row) from None
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
    (one token with top-5 log-probs) with ``alpaca-tokens``, Eq. 3 on P(m), P(M).
    """
    from recuse.data.alpaca_eval import preference_to_p_a, read_annotations

    rows = read_annotations(path, roster)
    records = _json(path)
    raws = [r.get("raw_completion") for r in records]
    kinds = {type(r) for r in raws if r is not None}
    if not kinds:
        raise InputError(
            "the file holds no raw judge replies (raw_completion)",
            file=path,
            fix="replay an annotations.json that has raw_completion",
        )
    fmt = ALPACA_TOKENS if dict in kinds else ALPACA_RANKING
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


def _alpaca_text(raw: Mapping[str, Any]) -> str | None:
    message = raw.get("message")
    if isinstance(message, dict) and isinstance(message.get("content"), str):
        return str(message["content"])
    return str(raw["text"]) if isinstance(raw.get("text"), str) else None


def read_reply_table(path: Path, *, verdict: VerdictFormat, judge: str | None) -> Recording:
    """A CSV/JSONL/Parquet table: ``item_id, prompt, response_a, response_b, order, text``.

    ``order`` is ``first`` (a shown first) or ``second``; ``text`` the raw reply
    (empty cell = no reply). The judge comes from ``judge`` or a single-valued
    ``judge`` column. Other ``pairs`` columns (human, model_a, ...) are kept.
    """
    suffix = path.suffix.lower()
    if suffix == ".csv":
        df = pd.read_csv(path, dtype={"item_id": str})
    elif suffix in (".jsonl", ".json"):
        df = pd.read_json(path, lines=suffix == ".jsonl", dtype={"item_id": str})
    elif suffix == ".parquet":
        df = pd.read_parquet(path)
    else:
        raise InputError(f"unknown table type {suffix!r}", file=path, fix="use .csv or .jsonl")
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


def _json(path: Path) -> Any:
    try:
        with path.open(encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON ({exc.msg})", file=path, row=exc.lineno) from None
