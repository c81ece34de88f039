"""Replay judge outputs recorded in a file through the same parsing as a live judge.

Published judge runs (LLMBar ``result.json``, JudgeBench ``outputs/*.jsonl``,
AlpacaEval ``annotations.json`` with ``raw_completion``, or any table of raw
replies) are read into a :class:`~recuse.judging.backends.replay.Recording` by
:mod:`recuse.data.recorded`. :func:`replay` sends them through the
:class:`~recuse.judging.runner.Runner` with a
:class:`~recuse.judging.backends.replay.ReplayBackend`, so the store rows, statuses
and the exported ``pairs`` table are those of a live judge: the reply is parsed in
the recording's :class:`~recuse.judging.protocols.VerdictFormat`, a reply that
breaks the format is an ``unparsed`` row (counted, never a default score) and an
order the file holds no reply for is a ``failed`` row with the reason.

Where the file also records the verdict its own parser read, :func:`compare_upstream`
counts how often our parse agrees (slot frame; both unparsed counts as agreement).
The order conventions of each source are described in :mod:`recuse.data.recorded`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from recuse.cells import among
from recuse.judging.backends.replay import Recording, ReplayBackend, ReplayProtocol
from recuse.judging.protocols import ORDERS, Order
from recuse.judging.runner import RetryPolicy, Runner, RunSummary
from recuse.judging.store import Store

__all__ = ["UpstreamAgreement", "compare_upstream", "replay"]


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
    pairs = recording.pairs[among(recording.pairs["item_id"].astype(str), held)]
    groups: dict[tuple[Order, ...], list[int]] = {}
    for i, item in enumerate(pairs["item_id"].astype(str)):
        orders = tuple(o for o in ORDERS if o in held[item])
        groups.setdefault(orders, []).append(i)
    summaries = [
        runner.pairwise(pairs.iloc[rows], protocol, orders=orders)
        for orders, rows in sorted(groups.items())
    ]
    return RunSummary.combine(summaries)


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
