"""Run a judge over many items: batching, concurrency, retries, resume, progress.

Three task kinds share one runner: ``pairwise`` (one task per pair and order),
``likert`` (per response and dimension) and ``perplexity`` (per distinct prompt and
response text: the log-probs of the response under the judge's model, from the
backend's ``continuation_logprobs`` primitive). The runner turns items into tasks,
drops tasks whose content key is already final in the store (a judgment judged for
another item with identical content is copied, reframed for its order; a failed
perplexity is computed again), sends the rest to the backend in batches cut from
:func:`send_order` (by tokens where the backend counts them, a pair's two orders side
by side; where calls overlap, counted slice by slice while the calls before run:
:meth:`Runner._send_slices`) with at most ``backend.concurrency`` batches in flight, and commits
finished batches together, at least every ``FLUSH_SECONDS`` (a slow judge's
batches one by one; a fast server's every ``FLUSH_ROWS`` rows, so SQLite is not
committing per request). One retry loop serves every kind: a
:class:`TransientError` is retried with exponential backoff (or the server's
Retry-After) up to ``RetryPolicy.max_attempts``; then, like a per-prompt
:class:`Failure`, it becomes a ``failed`` row with the reason. Failed rows are
tried again by the next run. One progress bar per run, one :class:`RunSummary`.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import math
import random
import signal
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Literal, Protocol, TypeVar

import numpy as np
import pandas as pd
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.progress import (
    Task as RichTask,
)
from rich.text import Text

from recuse import interrupt
from recuse.borrowed import Borrowed
from recuse.errors import ConfigError, InputError, JudgeError, RecuseError
from recuse.judging import leases
from recuse.judging.backends.base import Backend, TransientError, done_sink
from recuse.judging.handlers import (
    Handler,
    PerplexityHandler,
    RewriteHandler,
    handler_for,
)
from recuse.judging.handlers.base import reusable, usable
from recuse.judging.handlers.likert import reference_value
from recuse.judging.handlers.pairwise import (
    check_template,
    copy_judgment,
    pairs_to_judge,
    read_whole,
)
from recuse.judging.leases import Holder, Leased, LeaseId, left_line
from recuse.judging.protocols import (
    ORDERS,
    Dimension,
    LikertProtocol,
    Order,
    Pair,
    PairwiseProtocol,
    Prompt,
    perplexity_key,
)
from recuse.judging.rate import RunClock, per_second
from recuse.judging.served import (
    Served,
    answered_since,
    new_names,
    raced_model,
    second_model,
    served_words,
)
from recuse.judging.store import Judgment, Perplexity, Rewrite, RunRecord, Store
from recuse.judging.tasks import Keying, Task, Work
from recuse.numbers import count, counted, decimal
from recuse.terminal import one_line

Outcome = TypeVar("Outcome", Judgment, Perplexity, Rewrite)


@dataclass(frozen=True)
class RetryPolicy:
    """Attempts per batch and the backoff between them (seconds)."""

    max_attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 30.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Wait before attempt ``attempt + 1``: Retry-After if given, else
        ``base * 2**(attempt-1)`` with +-25 % jitter, capped at ``max_delay``."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay)
        d = self.base_delay * 2 ** (attempt - 1)
        return min(d * random.uniform(0.75, 1.25), self.max_delay)


#: how the reason of a task failed after its retries begins (:attr:`RunSummary.gave_up`)
GAVE_UP = "gave up after"


@dataclass(frozen=True)
class RunSummary:
    """What a run did: tasks in total, already in the store, and outcomes of this run.

    ``seconds`` is the run's wall time from its first call to its last outcome
    (:class:`~recuse.judging.rate.RunClock`; 0.0 where nothing was sent), the clock of
    :attr:`rate`, the progress bar's final figure and the evaluator card."""

    total: int
    cached: int
    ok: int
    unparsed: int
    failed: int
    seconds: float
    failures: Mapping[str, int] = field(default_factory=dict)  # reason -> count
    what: Literal["judgments", "perplexities", "rewrites"] = "judgments"
    #: the runs that sent something whose counts and seconds this summary adds up
    #: (:meth:`combine`), each timed by its own clock and shown on its own bar
    runs: int = 1
    #: tasks left to other runs in progress, which had leased them
    #: (:mod:`recuse.judging.leases`): neither judged here nor counted as failed
    left: int = 0
    #: those runs, in words (:meth:`~recuse.judging.leases.Holder.words`)
    holders: tuple[str, ...] = ()
    #: ``{served model name: answers}`` the server's answers of this run named
    #: (:mod:`recuse.judging.served`); empty where none did
    served: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def combine(cls, parts: Sequence[RunSummary]) -> RunSummary:
        """One summary of ``parts``, runs of one command one after another (a probe
        table's two questions, a recording's order groups): counts, failure reasons
        and seconds added, as the evaluator card adds the runs' seconds; the time
        between the runs is in none of them, and :meth:`line` says the seconds are
        the runs' clocks summed."""
        failures: dict[str, int] = {}
        for p in parts:
            for reason, n in p.failures.items():
                failures[reason] = failures.get(reason, 0) + n
        return cls(
            total=sum(p.total for p in parts), cached=sum(p.cached for p in parts),
            ok=sum(p.ok for p in parts), unparsed=sum(p.unparsed for p in parts),
            failed=sum(p.failed for p in parts), seconds=sum(p.seconds for p in parts),
            failures=failures, what=parts[0].what if parts else "judgments",
            runs=sum(p.runs for p in parts if p.finished), left=sum(p.left for p in parts),
            holders=tuple(dict.fromkeys(h for p in parts for h in p.holders)),
            served=_summed(p.served for p in parts),
        )  # fmt: skip

    @property
    def gave_up(self) -> int:
        """Failed tasks the backend gave up on after its retries (server errors,
        timeouts): a later run may succeed. The other failed ones were refused for
        good (a prompt longer than the model reads, a server's 4xx): a rerun fails
        them again."""
        return sum(n for reason, n in self.failures.items() if reason.startswith(GAVE_UP))

    @property
    def computed(self) -> int:
        """Perplexities: texts scored in this run (the ``ok`` count)."""
        return self.ok

    @property
    def finished(self) -> int:
        """Tasks this run sent and finished: answered (ok, unparsed) or failed."""
        return self.ok + self.unparsed + self.failed

    @property
    def rate(self) -> float | None:
        """:attr:`finished` per second of :attr:`seconds` (:mod:`recuse.judging.rate`);
        None where nothing was sent."""
        return per_second(self.finished, self.seconds)

    def line(self) -> str:
        """The counts with thousands separators, and the run's rate with what it counts
        and its seconds (``12,000 judgments: … 500 failed; 10,500 finished (answered or
        failed) in 3,725.40 s from the first call to the last: 2.82/s``),
        as every number a user reads is written (:mod:`recuse.numbers`); after the
        counts, the tasks left to other runs in progress (:attr:`left`), with those
        runs and that a rerun after them picks up what they did not finish."""
        total, cached, ok = count(self.total), count(self.cached), count(self.ok)
        unparsed, failed = count(self.unparsed), count(self.failed)
        if self.what == "rewrites":
            counts = (
                f"{total} rewrites: {cached} already stored, {ok} ok, "
                f"{unparsed} unusable, {failed} failed"
            )
        elif self.what == "perplexities":
            counts = (
                f"{total} perplexities: {cached} already stored, {ok} computed, {failed} failed"
            )
        else:
            counts = (
                f"{total} judgments: {cached} already stored, {ok} ok, "
                f"{unparsed} unparsed, {failed} failed"
            )
        if self.left:
            counts = f"{counts}; {left_line(self.left, self.what, self.holders)}"
        rate = self.rate
        served = (
            f"; the server's answers named the model serving them: {served_words(self.served)}"
            if self.served
            else ""
        )
        if rate is None:
            return (f"{counts}; none sent" if not self.finished else counts) + served
        clock = (
            f", each of its {self.runs} runs from its first call to its last, summed"
            if self.runs > 1
            else " from the first call to the last"
        )
        return (
            f"{counts}; {count(self.finished)} finished (answered or failed) in "
            f"{decimal(self.seconds, 2)} s{clock}: {rate_figure(rate)}{served}"
        )


def _summed(parts: Iterable[Mapping[str, int]]) -> dict[str, int]:
    """Counts by name added up over ``parts``, names in the order first seen."""
    out: dict[str, int] = {}
    for part in parts:
        for name, n in part.items():
            out[name] = out.get(name, 0) + n
    return out


def rate_figure(rate: float) -> str:
    """A rate as the bar's final figure and the summary line both write it (``1,234.50/s``)."""
    return f"{decimal(rate, 2)}/s"


class _RateColumn(ProgressColumn):
    """Items per second: while running, rich's recent rate (it moves as each forward pass
    reports its prompts); once the run has ended, the run's rate as the runner sets it
    (the ``rate`` field: :attr:`RunSummary.rate`, one clock and count for the bar, the
    summary line and the card), else all items over the whole elapsed time, never the
    rate of the last burst (a run whose one batch finished everything at once read
    "12/12 22213.05/s")."""

    def render(self, task: RichTask) -> Text:
        speed: float | None
        if task.fields.get("rate") is not None:
            return Text(f"{rate_figure(task.fields['rate']):>8}", style="progress.data.speed")
        if task.finished and task.finished_time:
            speed = task.completed / task.finished_time
        else:
            speed = task.speed
        return Text("  -  /s" if speed is None else f"{speed:6.2f}/s", style="progress.data.speed")


class _EtaColumn(ProgressColumn):
    """Time left at the run's mean rate so far (items done over the time since the bar
    started), not rich's rate over its last 30 s: a local model reports its items a
    pass at a time, and two passes ending close together read as a burst: "33/48
    0.31/s eta 0:00:01" with 48 s left. Before the first item, and once done, as rich
    shows it."""

    def render(self, task: RichTask) -> Text:
        elapsed, total = task.elapsed, task.total
        if task.finished:
            return Text("0:00:00", style="progress.remaining")
        if not task.completed or not elapsed or total is None:
            return Text("-:--:--", style="progress.remaining")
        left = (total - task.completed) * elapsed / task.completed
        return Text(eta_figure(left), style="progress.remaining")


def eta_figure(seconds: float) -> str:
    """Seconds as rich's time-remaining column writes them (H:MM:SS, rounded up).

    >>> eta_figure(48.2), eta_figure(3725)
    ('0:00:49', '1:02:05')
    """
    whole = math.ceil(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


#: one computed outcome and the attempts its batch took
Computed = tuple[Any, int]


class Executor(Protocol):
    """Computes a run's tasks outside this process (``Runner(..., executor=)``; the Ray
    one is :class:`recuse.judging.distributed.RayExecutor`).

    The runner still decides what is left to do and commits, counts and shows every
    outcome; the executor only computes them (each worker with :meth:`Runner.compute`
    over its own backend) and hands them to ``collect`` as they finish.
    """

    def run(
        self,
        todo: Sequence[Task],
        work: Work,
        *,
        judge: str,
        retry: RetryPolicy,
        batch_size: int,
        collect: Callable[[Sequence[Computed]], None],
        note: Callable[[BaseException, str], None] | None = None,
    ) -> None:
        """Compute every task of ``todo``; ``batch_size`` tasks go to a worker at once.
        Where a failure stops the run and its wait for the work in flight lasts over
        :data:`STOP_NOTE_AFTER` seconds, ``note`` is called once (from any thread) with
        the error and what the run waits for, the words that complete "the run stops
        once ... stored" (:func:`stop_note`)."""

    def usage(self) -> tuple[int, int] | None:
        """Tokens in and out the workers' backends reported so far (None: none did)."""

    def served(self) -> dict[str, int]:
        """``{served model name: answers}`` the workers' backends' answers named so far
        (:meth:`Backend.served`, added up), each block's before its outcomes are
        collected."""


@dataclass(frozen=True)
class _Kind(Generic[Outcome]):
    """How one task kind's outcomes are made, failed, finished and saved."""

    verb: str  # progress bar: "<verb> with <judge>"
    handler: Handler[Outcome]
    save: Callable[[list[Outcome]], None]
    finish: Callable[[Outcome, int], Outcome]  # (outcome, attempts this run)
    batch_size: int
    work: Work | None = None  # set where an executor may compute the kind elsewhere
    what: Literal["judgments", "perplexities", "rewrites"] = "judgments"
    #: called before outcomes are counted or kept; raises to stop the run without them
    check: Callable[[], None] | None = None


@dataclass
class _Resume:
    """What a judgment run does with its tasks, the store read: ``todo`` to judge,
    ``copies`` of judgments stored for other items with the same content, ``cached``
    the tasks found stored (copies too), ``attempts_before`` the attempts of a stored
    failed judgment judged again, by (key, item, slot)."""

    todo: list[Task]
    copies: list[Judgment] = field(default_factory=list)
    cached: int = 0
    attempts_before: dict[tuple[str, str, str], int] = field(default_factory=dict)

    def then(self, again: _Resume) -> _Resume:
        """This plan, its ``todo`` read again (``again``: :meth:`Runner._resume` of
        the tasks of ``todo`` this run leased): what was found stored since is added."""
        return _Resume(
            again.todo,
            self.copies + again.copies,
            self.cached + again.cached,
            {**self.attempts_before, **again.attempts_before},
        )


class _Collector(Generic[Outcome]):
    """Counts finished outcomes and commits them together: at once when the last
    commit is ``FLUSH_SECONDS`` old (so a slow judge commits every batch), else when
    ``FLUSH_ROWS`` are waiting; a killed run loses at most that much work. Its
    ``clock`` is the run's (:class:`RunClock`): the callers mark each call sent, and
    each call's outcomes mark the last outcome as they arrive here."""

    def __init__(
        self,
        kind: _Kind[Outcome],
        counts: dict[str, int],
        failures: dict[str, int],
        outcomes: list[Outcome],
        clock: RunClock,
    ) -> None:
        self.kind: _Kind[Outcome] = kind
        self.counts = counts
        self.failures = failures
        self.outcomes: list[Outcome] = outcomes
        self.clock = clock
        self.pending: list[Outcome] = []
        self.last_flush = time.perf_counter()

    def add(self, results: Sequence[Outcome]) -> None:
        if self.kind.check is not None:
            self.kind.check()  # raised: these outcomes are neither counted nor stored
        now = time.perf_counter()
        self.clock.outcome(now)
        self.pending.extend(results)
        self.outcomes.extend(results)
        # counted before their commit: a second signal's stop (keep) that comes as the
        # commit ends says them, and records them in the run, as stored
        for r in results:
            self.counts[r.status] += 1
            if r.status == "failed":
                reason = r.reason or "unknown"
                self.failures[reason] = self.failures.get(reason, 0) + 1
        if len(self.pending) >= FLUSH_ROWS or now - self.last_flush >= FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        # written whole: a signal's stop waits for the commit (interrupt.shielded)
        with interrupt.shielded():
            batch = self.pending[:]
            self.pending.clear()  # an error writing them (disk full) is not met twice
            self.last_flush = time.perf_counter()
            self.kind.save(batch)

    def keep(self) -> str:
        """A hurried stop's commit (:func:`recuse.interrupt.on_hurry`): what is finished
        and not yet committed, and how many outcomes of this run the store now holds."""
        if self.pending:
            self.flush()
        return f"{count(sum(self.counts.values()))} {self.kind.what} of this run are stored"


FLUSH_SECONDS = 0.1
FLUSH_ROWS = 64


class _ServedCheck:
    """One judgment run's served model names (:mod:`recuse.judging.served`): the names
    its backend's answers gave since the run began, checked before each batch of its
    verdicts is counted and stored (:attr:`_Kind.check`). A name besides the one the
    judge's verdicts were served as (its earlier runs' in the store; else those the
    perplexities and rewrites of its model id and revision were; else this run's
    first) stops the run with a :class:`~recuse.errors.JudgeError` saying which, before
    a verdict of that name is stored; :attr:`kept` is what the run's record and summary
    say (the names of the verdicts it stored). The judge's earlier runs are those of
    every judge id of its model and revision (they share content keys); a run of them
    begun while this one ran is checked in each commit (:meth:`guard`)."""

    def __init__(
        self,
        backend: Backend | Executor,
        store: Store,
        judge: str,
        counts: Mapping[str, int],
        *,
        kin: Sequence[str] = (),
        copied: int = 0,
        run: str = "",
        replicas: int = 1,
        computed: Mapping[str, Mapping[str, int]] | None = None,
    ) -> None:
        self.backend, self.store, self.judge, self.counts = backend, store, judge, counts
        self.replicas = replicas  # the servers asked (several --base-url)
        self.copied = copied  # the verdicts the run copied (stored before it judged)
        self.run = run  # this run's id (its record's)
        self.before = backend.served()
        # the judge ids of the same model and revision (``kin``) too: their verdicts
        # share this judge's content keys, and a run copies them (Runner._resume)
        self.kin = list(dict.fromkeys([judge, *kin]))
        self.mark = store.run_mark()  # the runs recorded since are read by guard()
        self.earlier = store.served_runs(*self.kin)
        self.accepted = list(dict.fromkeys(n for r in self.earlier for n in r.served))
        #: with no verdicts' names recorded, the names the perplexities and rewrites of
        #: its model id and revision were recorded served as (``computed``, by kind)
        self.computed = {} if self.accepted else {k: v for k, v in (computed or {}).items() if v}
        if not self.accepted:
            self.accepted = list(dict.fromkeys(n for v in self.computed.values() for n in v))
        self.kept: dict[str, int] = {}
        #: what the run's last commit stored: verdicts, and :attr:`kept` as it stood
        self.stored, self.saved = 0, dict[str, int]()

    def now(self) -> dict[str, int]:
        """The names this run's answers gave so far, with their answers: the accepted
        ones first (the backend lists its names in the order it first met them, maybe
        in an earlier run: this run's first name is the one its check accepted)."""
        now = answered_since(self.before, self.backend.served())
        return {**{n: now[n] for n in self.accepted if n in now}, **now}

    def check(self) -> None:
        now = self.now()
        if not self.accepted and len(now) == 1:
            self.accepted = list(now)  # this run's first name, nothing recorded before it
        if new_names(self.accepted, now):
            stored = self.counts["ok"] + self.counts["unparsed"]
            raise JudgeError(
                second_model(
                    str(self.store.path),
                    self.judge,
                    earlier=self.earlier,
                    now=now,
                    stored=stored,
                    copied=self.copied,
                    replicas=self.replicas,
                    computed=self.computed,
                )
            )
        self.kept = now

    def guard(self) -> None:
        """In each commit's transaction (:meth:`Store.put`'s ``guard``): a run of this
        judge, or of a judge id of its model and revision, started while this one ran
        (two runs at once: neither found the other's record as it began) and recorded
        a served name other than this run's stops this one, the commit rolled back.
        The first of two such runs to commit stores; the other stops at its first."""
        if not self.accepted:
            return
        since = self.store.served_since(self.mark, *self.kin)
        rows = {row for row, run, names in since if run != self.run and names}
        if any(set(names) - set(self.accepted) for row, _, names in since if row in rows):
            others = [r for r in self.store.served_runs(*self.kin) if r.row in rows]
            raise _Raced(
                raced_model(
                    str(self.store.path),
                    self.judge,
                    others=others,
                    accepted=self.accepted,
                    now=self.kept,
                    stored=self.stored,
                )
            )

    def committed(self) -> None:
        """The run's commit is done: what it stored so far (:attr:`stored`, :attr:`saved`)."""
        self.stored = self.counts["ok"] + self.counts["unparsed"]
        self.saved = dict(self.kept)


class _Raced(JudgeError):
    """A commit refused by :meth:`_ServedCheck.guard`: its outcomes are not stored."""


class Runner:
    """Judges items with ``backend`` into ``store``.

    ``judge`` is the id written in the ``judge`` column (default: the backend's
    model id). ``progress`` shows rich progress bars on stderr. With an ``executor``
    (a Ray cluster), judgments and perplexities are computed by its workers; the
    backend here then only names the model (its id and revision make the keys) and
    this runner still commits every outcome to ``store`` as it arrives.
    """

    def __init__(
        self,
        backend: Backend,
        store: Store,
        *,
        judge: str | None = None,
        retry: RetryPolicy | None = None,
        progress: bool = True,
        console: Console | None = None,
        executor: Executor | None = None,
    ) -> None:
        self.backend = backend
        self.store = store
        self.judge = judge or backend.model_id
        self.retry = retry or RetryPolicy()
        self.progress = progress
        self.console = console or Console(stderr=True)
        self.executor = executor

    # --- public entry points -----------------------------------------------------

    def pairwise(
        self,
        pairs: Iterable[Pair] | pd.DataFrame,
        protocol: PairwiseProtocol | None = None,
        *,
        orders: Sequence[Order] = ORDERS,
    ) -> RunSummary:
        """Judge every pair in each of ``orders``; returns what was done."""
        protocol = protocol or PairwiseProtocol()
        items, meta = pairs_to_judge(pairs)
        check_template(protocol, items, self.backend)
        params = protocol.key_params()
        if self.backend.joins_labels and protocol.reads.first_token_ambiguous:
            params["label_tokens"] = "after-prompt"  # whole labels as they follow [[
        keying = self._keying(params)
        tasks = [
            Task(keying, "pairwise", p.item_id, o, protocol.prompt(p, o), order=o)
            for p in items
            for o in orders
        ]
        fresh, prompt = False, ""
        if protocol.question == "quality" and tasks:
            prompt, name = protocol.prompt_identity()
            _, kind, sha256 = protocol.prompt_record()
            fresh = self.store.claim_prompt(
                self.judge,
                prompt=prompt,
                name=name,
                keys=(t.key for t in tasks),
                format=kind,
                sha256=sha256,
            )
        with _given_back(fresh, lambda: self.store.release_prompt(self.judge, prompt=prompt)):
            return self._judge(
                tasks, Work("pairwise", protocol), lambda: self.store.put_items("pairwise", meta)
            )

    def likert(
        self,
        rows: pd.DataFrame,
        dimensions: Sequence[Dimension],
        protocol: LikertProtocol | None = None,
    ) -> RunSummary:
        """Rate each response (columns prompt_id, model, prompt, response) on each dimension.

        An optional ``reference_<dimension>`` column is kept for export as the reference.
        """
        protocol = protocol or LikertProtocol()
        need = ["prompt_id", "model", "prompt", "response"]
        missing = [c for c in need if c not in rows.columns]
        if missing:
            raise InputError(
                f"missing column(s) {', '.join(missing)} for Likert judging",
                fix=f"give a table with columns {', '.join(need)}",
            )
        meta: dict[str, dict[str, object]] = {}
        tasks = []
        keyings = {
            d.name: self._keying(
                {**protocol.key_params(), "dimension": d.name, "labels": list(d.labels)}
            )
            for d in dimensions
        }
        for r in rows.to_dict("records"):
            item_id = f"{r['prompt_id']}|{r['model']}"
            refs = {
                d.name: reference_value(r.get(f"reference_{d.name}"))
                for d in dimensions
                if f"reference_{d.name}" in r
            }
            meta[item_id] = {
                "prompt_id": str(r["prompt_id"]),
                "model": str(r["model"]),
                "reference": refs,
            }
            for d in dimensions:
                prompt = protocol.prompt(str(r["prompt"]), str(r["response"]), d)
                tasks.append(Task(keyings[d.name], "likert", item_id, d.name, prompt, dimension=d))
        return self._judge(
            tasks, Work("likert", protocol), lambda: self.store.put_items("likert", meta)
        )

    def perplexity(
        self,
        prompts: Sequence[Prompt],
        responses: Sequence[str],
        *,
        batch_size: int | None = None,
    ) -> tuple[list[str], dict[str, Perplexity], RunSummary]:
        """Log-probs of ``responses[i]`` after ``prompts[i]`` under the backend's model.

        Returns each input's key, the stored-or-computed row of every key (``ok``
        rows from earlier runs are reused; failed ones computed again) and the run's
        summary. Identical inputs are computed once. A text another run in progress
        is computing (it leased it: :mod:`recuse.judging.leases`) is left to it: its
        row is returned where that run stored it by the end of this one, else it has
        none and the summary counts it as left. ``batch_size`` (default the
        backend's) is how many texts one backend call carries.
        """
        if self.backend.continuation_refusal:
            raise ConfigError(self.backend.continuation_refusal)
        route = self.backend.perplexity_route
        model, revision = self.backend.model_id, self.backend.revision
        keys = [
            perplexity_key(model, revision, route, p, r)
            for p, r in zip(prompts, responses, strict=True)
        ]
        tasks: dict[str, Task] = {}
        for k, p, r in zip(keys, prompts, responses, strict=True):
            tasks.setdefault(k, Task(k, "perplexity", k, "", p, continuation=r))
        served = self._served("perplexities")

        kind: _Kind[Perplexity] = _Kind(
            verb="perplexity",
            handler=PerplexityHandler(self.backend),
            save=lambda rows: self.store.put_perplexities(model, revision, rows, served=served),
            finish=lambda row, _attempts: row,
            batch_size=batch_size or self.backend.batch_size,
            work=Work("perplexity"),
            what="perplexities",
            check=served.check,
        )
        done, summary = self._by_content(
            tasks, self.store.stored_perplexities, kind, "perplexities", served
        )
        return keys, done, summary

    def rewrite(
        self, prompts: Sequence[Prompt], *, max_new_tokens: int, version: str
    ) -> tuple[list[str], dict[str, Rewrite], RunSummary]:
        """Greedy generations (a rewriting model's texts for the probes).

        Returns each prompt's key, the stored-or-computed row of every key (none for
        one left to another run in progress, as :meth:`perplexity` says) and the
        run's summary. A generation that is empty or cut at ``max_new_tokens`` is
        ``unparsed`` (kept and not redone: greedy decoding gives it again); a failed
        one is retried by the next run. ``version`` names the prompt's wording (it
        enters the key, with the model, revision and token limit).
        """
        if max_new_tokens < 1:
            raise ConfigError(f"max_new_tokens must be 1 or more; got {max_new_tokens}")
        keying = self._keying(
            {"protocol": version, "max_new_tokens": max_new_tokens, "decoding": "greedy"}
        )
        keys: list[str] = []
        tasks: dict[str, Task] = {}
        for p in prompts:
            t = Task(keying, "rewrite", "", "", p)
            keys.append(t.key)
            tasks.setdefault(t.key, t)
        model, revision = self.backend.model_id, self.backend.revision
        served = self._served("rewrites")

        kind: _Kind[Rewrite] = _Kind(
            verb="rewriting",
            handler=RewriteHandler(self.backend, max_new_tokens),
            save=lambda rows: self.store.put_rewrites(model, revision, rows, served=served),
            finish=lambda row, _attempts: row,
            batch_size=self.backend.batch_size,
            what="rewrites",
            check=served.check,
        )
        done, summary = self._by_content(
            tasks, self.store.stored_rewrites, kind, "rewrites", served
        )
        return keys, done, summary

    def _served(self, what: Literal["perplexities", "rewrites"]) -> Served:
        """The served-model check of a run of ``what`` (:class:`Served`): the names the
        backend's answers (a Ray run: its workers') give, held to those the store
        recorded for them at the backend's model id and revision; where it recorded none
        of them, to those the runs of the judge ids of that model id and revision
        recorded for their verdicts (perplexities asked after the verdicts, by
        ``recuse judge --perplexity`` again, are the same served model's)."""
        meter: Backend | Executor = self.backend if self.executor is None else self.executor
        model, revision = self.backend.model_id, self.backend.revision
        recorded: Mapping[str, int] = self.store.served_names(what, model, revision)
        judges: tuple[str, ...] = ()
        if not recorded:  # none of its kind yet: the verdicts of its judge ids say who
            kin = [j for j, m in self.store.judge_models().items() if m == (model, revision)]
            runs = [r for r in self.store.served_runs(*kin) if r.served]
            recorded = _summed(r.served for r in runs)
            judges = tuple(dict.fromkeys(r.judge for r in runs))
        return Served(
            meter.served,
            what=what,
            model=model,
            revision=revision,
            recorded=recorded,
            store=str(self.store.path),
            judges=judges,
        )

    # --- tasks -------------------------------------------------------------------

    def _by_content(
        self,
        tasks: Mapping[str, Task],
        stored: Callable[[Iterable[str]], dict[str, Outcome]],
        kind: _Kind[Outcome],
        what: Literal["perplexities", "rewrites"],
        served: Served,
    ) -> tuple[dict[str, Outcome], RunSummary]:
        """Perplexities or rewrites, stored by content key (``tasks`` by key): the
        final rows ``stored`` reads (``ok``; a rewrite's ``unparsed`` too) are reused,
        the rest leased (:meth:`_leased`), read again and computed where still missing.
        Those another live run holds are left to it; what it stored by the end of this
        run is read and counted as stored, the others are not in the rows returned and
        the summary counts them as left. Returns every key's row found or computed and
        the run's summary, with the served model names its answers gave (``served``:
        the run's check of them, :class:`Served`)."""
        done = stored(tasks)
        with self._leased([t for k, t in tasks.items() if k not in done]) as (held, theirs, leased):
            done.update(stored(t.key for t in held))  # stored by another run meanwhile
            todo = [t for t in held if t.key not in done]
            clock = RunClock()
            counts = served.counts = {"ok": 0, "unparsed": 0, "failed": 0}
            counts, failures, computed = self._execute(todo, kind, clock, counts)
        done.update({r.key: r for r in computed})
        done.update(stored(t.key for t in theirs))  # what the runs holding them stored
        left = sum(t.key not in done for t in theirs)
        return done, RunSummary(
            total=len(tasks), cached=len(tasks) - len(todo) - left, ok=counts["ok"],
            unparsed=counts["unparsed"], failed=counts["failed"], seconds=clock.seconds,
            failures=failures, what=what, left=left,
            holders=tuple(h.words() for h in leased.holders) if left else (),
            served=served.now(),
        )  # fmt: skip

    def _keying(self, params: Mapping[str, object]) -> Keying:
        """What the content keys of tasks asked with ``params`` hash beside the prompt
        (and the backend's own :attr:`~Backend.key_params`: a server's endpoint)."""
        return Keying(
            self.backend.model_id, self.backend.revision, {**params, **self.backend.key_params}
        )

    def _judge(self, tasks: list[Task], work: Work, keep_items: Callable[[], None]) -> RunSummary:
        """Claim the judge id for this model (:meth:`Store.claim_judge`), then run the
        tasks. A run that stores no judgment (the model failed to load, Ctrl-C before
        the first result) gives its fresh claim back, so fixing the folder (new weights,
        a new fingerprint) is not refused for verdicts the store never held.
        ``keep_items`` stores what was judged (:meth:`Store.put_items`): just before the
        first judgment is stored, so beside the first pass, not before it; or at the
        end of a run that stores none."""
        claim = {"model_id": self.backend.model_id, "revision": self.backend.revision}
        fresh = self.store.claim_judge(self.judge, **claim, keys=(t.key for t in tasks))
        with _given_back(fresh, lambda: self.store.release_judge(self.judge, **claim)):
            asked = self.backend.model_asked
            if asked is None:
                return self._judge_claimed(tasks, work, keep_items)
            named = self.store.claim_asked(self.judge, model=asked)
            with _given_back(named, lambda: self.store.release_asked(self.judge, model=asked)):
                return self._judge_claimed(tasks, work, keep_items)

    def _lease_id(self, task: Task) -> LeaseId:
        """What a lease of ``task`` names: a judgment its judge, kind, item and slot
        (nothing is keyed for it); a perplexity or a rewrite, stored by its content key
        alone whoever asks, the backend's model and that key."""
        if task.kind in ("pairwise", "likert"):
            return (self.judge, task.kind, task.item_id, task.slot)
        return (self.backend.model_id, task.kind, task.key, "")

    @contextlib.contextmanager
    def _leased(self, todo: Sequence[Task]) -> Iterator[tuple[list[Task], list[Task], Leased]]:
        """Lease ``todo`` (what the store lacked when read) to this run
        (:meth:`Store.take_leases`) for the block, which gets the tasks this run now
        holds, those left to other live runs that hold them, and the leases. The leases
        are dropped when the block ends, however it ends. Nothing is leased (nor
        written) where ``todo`` is empty: a resume of a run the store holds whole.

        The store was read before the leases were taken, so the caller reads again the
        tasks it now holds: one another run stored (and gave back) in between is then
        found stored, not computed twice."""
        run = Holder.here()
        if not todo:
            yield [], [], Leased(run, frozenset(), ())
            return
        leases.begin(run)
        try:
            # a hurried stop (a second Ctrl-C) drops them too, as it ends the program; a
            # stop that lands as they are taken drops those taken (none if it came first)
            with interrupt.on_hurry(lambda: self.store.drop_leases(run)):
                try:
                    leased = self.store.take_leases(run, (self._lease_id(t) for t in todo))
                    mine = [t for t in todo if self._lease_id(t) not in leased.elsewhere]
                    theirs = [t for t in todo if self._lease_id(t) in leased.elsewhere]
                    yield mine, theirs, leased
                finally:
                    # left behind (a full disk), they are a dead run's once this one ends
                    with contextlib.suppress(RecuseError):
                        self.store.drop_leases(run)
        finally:
            leases.end(run)

    def _resume(self, tasks: Sequence[Task], work: Work | None = None) -> _Resume:
        """What of ``tasks`` the store holds (:class:`_Resume`), read now; refused where
        it holds, under their keys, verdicts this backend could not have written
        (:meth:`_refuse_read_whole`)."""
        # a store that holds nothing reads no key (Store.lookup): each task's is then
        # computed when its outcome is stored, beside the device's passes
        stored = self.store.lookup(t.key for t in tasks)
        if not stored:
            return _Resume(list(tasks))
        if work is not None:
            self._refuse_read_whole(stored, work)
        mine = {(j.key, j.item_id, j.slot): j for j in stored if j.judge == self.judge}
        final_by_key = {j.key: j for j in stored if reusable(j)}
        out = _Resume([])
        for t in tasks:
            own = mine.get((t.key, t.item_id, t.slot))
            if own is not None and own.status != "failed":
                out.cached += 1
            elif t.key in final_by_key:  # same content judged for another item
                out.copies.append(copy_judgment(final_by_key[t.key], t, self.judge))
                out.cached += 1
            else:
                if own is not None:
                    out.attempts_before[(t.key, t.item_id, t.slot)] = own.attempts
                out.todo.append(t)
        return out

    def _refuse_read_whole(self, stored: Sequence[Judgment], work: Work) -> None:
        """Refuse a run of a backend that continues a prefix, keyed as recuse's ChatML
        over /v1/completions (no :attr:`~Backend.key_params`), that would reuse explain
        verdicts read from whole replies (:func:`read_whole`): a store judged over
        ``--endpoint chat`` before the endpoint entered the content keys. Re-judging
        them would replace the chat verdicts under their keys; the user chooses."""
        if not self.backend.supports_prefix or self.backend.key_params:
            return
        if work.kind != "pairwise" or not isinstance(work.protocol, PairwiseProtocol):
            return
        found = read_whole(stored, work.protocol)
        if found:
            judges = ", ".join(repr(j) for j in dict.fromkeys(j.judge for j in found))
            raise InputError(
                f"{counted(len(found), 'stored verdict')} under this run's content keys "
                f"(judge id {judges}) were read from whole replies, as over --endpoint chat "
                f"(their text holds the verdict mark, {(found[0].text or '')[-40:]!r}, and its "
                "label), where a run over /v1/completions scores the verdict after the "
                "opener: a store judged over the chat endpoint before the endpoint entered "
                "the content keys (recuse before 0e83ab82); this run would reuse them as "
                "its own",
                file=self.store.path,
                fix="judge over /v1/completions into a new store (--out NEW.sqlite); to go "
                "on over the chat endpoint in this one, give --endpoint chat (its verdicts "
                "are judged again under the chat endpoint's own keys)",
            )

    def _judge_claimed(
        self, tasks: list[Task], work: Work, keep_items: Callable[[], None]
    ) -> RunSummary:
        """Run judgment tasks: reuse what the store holds, lease the rest
        (:meth:`_leased`), read those this run then holds again (another run may have
        stored them meanwhile) and judge what is still missing; those leased by another
        run are left to it."""
        before_lease = self._resume(tasks, work)
        with self._leased(before_lease.todo) as (held, theirs, leased):
            plan = before_lease.then(self._resume(held, work))
            return self._judge_rest(tasks, plan, work, keep_items, len(theirs), leased)

    def _judge_rest(
        self,
        tasks: list[Task],
        plan: _Resume,
        work: Work,
        keep_items: Callable[[], None],
        left: int,
        leased: Leased,
    ) -> RunSummary:
        """Store ``plan``'s copies and judge its tasks to do (the leases held); the
        run's summary, ``left`` tasks left to the runs holding their leases."""
        todo, copies, cached = plan.todo, plan.copies, plan.cached
        attempts_before = plan.attempts_before
        kept = False
        meter: Backend | Executor = self.backend if self.executor is None else self.executor
        before = meter.usage()
        clock = RunClock()
        counts = {"ok": 0, "unparsed": 0, "failed": 0}
        model = (self.backend.model_id, self.backend.revision)
        kin = [j for j, m in self.store.judge_models().items() if m == model]
        computed = {
            what: self.store.served_names(what, *model) for what in ("perplexities", "rewrites")
        }
        served = _ServedCheck(
            meter, self.store, self.judge, counts, kin=kin, copied=len(copies),
            run=leased.mine.run, replicas=len(getattr(self.backend, "base_urls", ())),
            computed=computed,
        )  # fmt: skip

        def run_record(*, ended: bool) -> RunRecord:
            """What a judgment costs (the evaluator card): only work sent to the backend,
            not copies, and only the judgments it answered (ok or unparsed): a failed one
            reports no usage and is sent again by the next run, so counting it would
            spread the answered ones' tokens over judgments that cost none. Its seconds
            are the run's clock, first call to last outcome (:class:`RunClock`), the
            summary line's and the bar's: as they stand now (``ended``: at the run's end)."""
            after = meter.usage()
            tokens = None
            if after is not None:
                b = before or (0, 0)
                tokens = (after[0] - b[0], after[1] - b[1])
            return RunRecord(
                self.judge,
                leased.mine.run,
                counts["ok"] + counts["unparsed"],
                clock.seconds,
                tokens,
                hardware=self.backend.hardware,
                device=self.backend.device_name,
                block_params=self.backend.block_parameters,
                ended=ended,
                served=served.kept,
                rendering=self.backend.rendering,
            )

        def save(judgments: Sequence[Judgment]) -> None:
            nonlocal kept
            if judgments and not kept:
                keep_items()
                kept = True
            # the run's record as it stands, in the judgments' commit (no write of its
            # own): a run killed (kill -9) is on the card as far as its last commit went.
            # Counted before the commit (_Collector.add), its counts are what it stores
            answered = counts["ok"] + counts["unparsed"]
            try:
                self.store.put(
                    judgments,
                    run=run_record(ended=False) if answered else None,
                    guard=served.guard if answered else None,
                )
            except _Raced:
                # rolled back: the run's counts and record are what it stored before
                for j in judgments:
                    counts[j.status] -= 1
                served.kept = served.saved
                raise
            served.committed()

        save(copies)

        def finish(j: Judgment, attempts: int) -> Judgment:
            n = attempts + attempts_before.get((j.key, j.item_id, j.slot), 0)
            j = usable(j)
            return j if j.attempts == n else replace(j, attempts=n)  # replace: 6 µs

        kind: _Kind[Judgment] = _Kind(
            verb="judging",
            handler=handler_for(work, self.backend, self.judge),
            save=save,
            finish=finish,
            batch_size=self.backend.batch_size,
            work=work,
            check=served.check,
        )

        def record() -> None:
            """The run's record at its end (:meth:`Store.put_run`: the one its commits
            wrote, where they wrote one)."""
            r = run_record(ended=True)
            self.store.put_run(
                r.judge, judgments=r.judgments, seconds=r.seconds, tokens=r.tokens,
                hardware=r.hardware, device=r.device, block_params=r.block_params, run=r.run,
                served=r.served, rendering=r.rendering,
            )  # fmt: skip

        def record_stopped() -> None:
            if counts["ok"] + counts["unparsed"]:
                record()

        try:
            with interrupt.on_hurry(record_stopped):  # after the judgments' commit
                counts, failures, _ = self._execute(todo, kind, clock, counts)
        except BaseException:
            # an interrupted run (Ctrl-C, a server gone) that stored judgments is a run
            # too: the card counts it; its own error is the one said
            if counts["ok"] + counts["unparsed"]:
                with contextlib.suppress(RecuseError):
                    record()
            raise
        if not kept:
            keep_items()
        if todo:
            record()
        return RunSummary(
            total=len(tasks),
            cached=cached,
            ok=counts["ok"],
            unparsed=counts["unparsed"],
            failed=counts["failed"],
            seconds=clock.seconds,
            failures=failures,
            left=left,
            holders=tuple(h.words() for h in leased.holders) if left else (),
            served=served.kept,
        )

    def _execute(
        self,
        todo: list[Task],
        kind: _Kind[Outcome],
        clock: RunClock,
        counts: dict[str, int] | None = None,
    ) -> tuple[dict[str, int], dict[str, int], list[Outcome]]:
        """Run ``todo``: status counts, failure reasons (reason -> count), outcomes;
        ``clock`` (new) times the run from its first call to its last outcome.
        ``counts`` (zeros), where given, is counted into as outcomes are committed, so
        a caller still has them when the run is interrupted."""
        counts = counts if counts is not None else {"ok": 0, "unparsed": 0, "failed": 0}
        failures: dict[str, int] = {}
        outcomes: list[Outcome] = []
        collector = _Collector(kind, counts, failures, outcomes, clock)
        # a second Ctrl-C or SIGTERM while the run stops commits what is finished and
        # ends the program at once, the calls in flight dropped (recuse.interrupt)
        with interrupt.on_hurry(collector.keep):
            if todo and self.executor is not None and kind.work is not None:
                self._distribute(todo, kind, kind.work, self.executor, collector)
            elif todo:
                with _quiet_collector(self.backend.quiet_collector):
                    # Ctrl-C and SIGTERM cancel the run's task, which commits as it ends;
                    # in a notebook cell its event loop runs in a worker, lent the store
                    interrupt.run(self._drive, todo, kind, collector, lend=self.store.lent)
        return counts, failures, outcomes

    def _progress(self) -> Progress:
        return Progress(
            # never read as markup: a judge named "org/model[fp16]" lost its "[fp16]"
            TextColumn("{task.description}", style="bold", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            _RateColumn(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            _EtaColumn(),
            console=self.console,
            disable=not self.progress,
            transient=False,
        )

    def _say_stop(self, exc: BaseException, waiting: str) -> None:
        """The note of a stopping run's wait (:func:`stop_note`), on the console."""
        self.console.print(
            stop_note(exc, waiting, self.backend.timeout),
            markup=False, highlight=False, soft_wrap=True,
        )  # fmt: skip

    def _distribute(
        self,
        todo: list[Task],
        kind: _Kind[Outcome],
        work: Work,
        executor: Executor,
        collector: _Collector[Outcome],
    ) -> None:
        """Run ``todo`` on ``executor``, committing outcomes as they come back."""
        progress = self._progress()
        bar = progress.add_task(one_line(f"{kind.verb} with {self.judge}"), total=len(todo))

        def collect(computed: Sequence[Computed]) -> None:
            collector.add([kind.finish(r, attempts) for r, attempts in computed])
            progress.advance(bar, len(computed))

        with progress, interrupt.on_hurry(progress.stop):  # as _drive's
            collector.clock.call()  # the tasks go to the workers now
            try:
                executor.run(
                    # by characters: counting tokens here would load the model on the
                    # driver, which only names it
                    send_order(todo, [t.size for t in todo]),
                    work,
                    judge=self.judge,
                    retry=self.retry,
                    batch_size=kind.batch_size * max(1, self.backend.concurrency),
                    collect=collect,
                    note=self._say_stop,
                )
            finally:
                collector.flush()
                _final_rate(progress, bar, collector)

    async def compute(
        self,
        tasks: Sequence[Task],
        work: Work,
        *,
        done: list[Computed] | None = None,
        stopping: asyncio.Event | None = None,
        raised: list[BaseException] | None = None,
    ) -> list[Computed]:
        """Each task's outcome, with the attempts its batch took, from this runner's
        backend: batches of ``backend.batch_size``, ``backend.concurrency`` of them in
        flight, the one retry loop. Nothing is read from or written to the store: an
        :class:`Executor`'s workers call this and the runner that sent the tasks
        finishes and commits the outcomes.

        A call that raises stops it as it stops a local run: ``stopping`` (a new event
        where not given; a caller may watch it) is set, no call is sent after it, the
        calls in flight finish (a failed one is not retried), and then the first error
        is raised; it is appended to ``raised`` (an empty list, where given) as
        ``stopping`` is set, so a caller that watches the event can say why at once.
        Each call's outcomes are appended to ``done`` as it ends, so a caller still has
        the finished ones when it raises."""
        kind: _Kind[Any] = _Kind(
            verb="",
            handler=handler_for(work, self.backend, self.judge),
            save=lambda _rows: None,
            finish=lambda row, _attempts: row,
            batch_size=self.backend.batch_size,
        )
        size = max(1, self.backend.batch_size)
        limit = asyncio.Semaphore(max(1, self.backend.concurrency))
        stop = stopping if stopping is not None else asyncio.Event()
        raised = raised if raised is not None else []

        async def one(batch: list[Task]) -> list[Computed]:
            async with limit:
                if stop.is_set():
                    return []
                try:
                    results, attempts = await self._attempt(batch, kind, stop)
                except Exception as exc:
                    if not raised:  # the first error is the one raised
                        raised.append(exc)
                    stop.set()
                    return []
            part = [(r, attempts) for r in results]
            if done is not None:
                done.extend(part)
            return part

        ordered = list(tasks)
        parts = await asyncio.gather(
            *(one(ordered[i : i + size]) for i in range(0, len(ordered), size))
        )
        if raised:
            raise raised[0]
        return [c for part in parts for c in part]

    async def _drive(
        self, todo: list[Task], kind: _Kind[Outcome], collector: _Collector[Outcome]
    ) -> None:
        size = max(1, kind.batch_size)
        # with a progress bar, one judgment goes first on its own: the bar has a rate and
        # an ETA after seconds, not after a whole batch (a run smaller than a batch
        # would otherwise show none). Not for a local model whose calls overlap (a GPU):
        # it reports each forward pass as it ends, and a pass of one prompt would cost
        # about a full pass's time on a small model (host-bound: ~30 ms for the 135M
        # shape on an H200, 3% of an 800-prompt run)
        passes_shown = self.backend.concurrency > 1 and bool(self.backend.hardware)
        head = 1 if self.progress and size > 1 and len(todo) > 1 and not passes_shown else 0
        limit = asyncio.Semaphore(max(1, self.backend.concurrency))
        progress = self._progress()

        # a call that raised stops the run, but the calls already sent finish and are
        # stored (a server may bill them, a pass is computed anyway): only calls not
        # yet sent are dropped, and a drained call is not retried (see _attempt)
        stopping = asyncio.Event()
        raised: list[BaseException] = []
        running = 0  # calls sent and not ended
        flying = 0  # their tasks
        notes: list[asyncio.TimerHandle] = []

        def waiting(exc: BaseException) -> None:
            """The wait for the calls in flight, said where it lasts (a hung request
            takes its whole timeout), with the error's reason now, not after it."""
            if running == 0:
                return
            if running == 1:
                self._say_stop(exc, "the call in flight ends and is")
            else:
                self._say_stop(exc, f"the {running} calls in flight end and are")

        def stop(exc: BaseException, *, drain: bool = True) -> None:
            """The first error stops the run (it is the one raised at the end); a
            later one, of a call drained, is that call's alone."""
            if stopping.is_set():
                return
            raised.append(exc)
            stopping.set()
            if drain and running > 1:  # others in flight: said if they take a while
                loop = asyncio.get_running_loop()
                notes.append(loop.call_later(STOP_NOTE_AFTER, waiting, exc))

        async def one(batch: list[Task], bar: Any) -> None:
            nonlocal running, flying
            shown = 0  # of this batch, on the bar already (the backend reports steps)

            def step(n: int) -> None:
                nonlocal shown
                n = min(n, len(batch) - shown)  # a retried batch reports its steps again
                shown += n
                progress.advance(bar, n)

            async with limit:
                if stopping.is_set():
                    return
                running += 1
                flying += len(batch)
                collector.clock.call()
                try:
                    with done_sink(step):
                        results, attempts = await self._attempt(batch, kind, stopping)
                except Exception as exc:
                    stop(exc)
                    return
                finally:
                    running -= 1
                    flying -= len(batch)
            try:
                collector.add([kind.finish(r, attempts) for r in results])
            except Exception as exc:
                # the store cannot take them (a full disk): no call is sent after this
                # one, and the gather ends now, as nothing more can be stored
                stop(exc, drain=False)
                raise
            progress.advance(bar, len(batch) - shown)

        def pressed(signum: int) -> None:
            """Ctrl-C (or SIGTERM) with a call in flight on this thread (a local model's
            pass on the CPU, which Python cannot cut short: one call at a time, no
            request timeout; a GPU's calls run in threads, a server's are cancelled):
            said at once, as the run waits for the pass to end and stores it (tens of
            seconds on a busy CPU, minutes for a 7B model), and what a second press
            does: as the program, it stops at once, that pass dropped (its judgments,
            "judgments" as the lines after say, not the data's prompts, are made again
            by the next run, :mod:`recuse.interrupt`); else (Python code
            calling recuse) it is Python's or asyncio's."""
            if running and self.backend.concurrency <= 1 and self.backend.timeout is None:
                term = "SIGTERM: " if signum == signal.SIGTERM else ""
                again = "SIGTERM" if term else "Ctrl-C"  # a scheduler's log has no Ctrl-C
                then = (
                    f"; {again} again stops now without them (the pass's {count(flying)} "
                    f"judgment{'' if flying == 1 else 's'} made again by the next run)"
                    if interrupt.hurries()
                    else ""
                )
                self.console.print(
                    f"recuse: {term}stopping once the model's pass in progress ends (its "
                    f"judgments are stored){then}",
                    markup=False, highlight=False, soft_wrap=True,
                )  # fmt: skip

        # a hurried stop (recuse.interrupt) ends the bar first: its line ended and the
        # terminal's cursor shown again (the process ends without rich's clean-up)
        with progress, _on_first_interrupt(pressed), interrupt.on_hurry(progress.stop):
            bar = progress.add_task(one_line(f"{kind.verb} with {self.judge}"), total=len(todo))
            jobs: list[asyncio.Future[None]] = []
            try:
                # a slice's calls are queued as soon as it is ordered (they take their
                # turn at ``limit`` in order) and run while the next slice is counted
                async for part, counts in self._send_slices(todo, size, stopping):
                    lead = head if not jobs else 0
                    batches = [part[:lead]] if lead else []
                    rest = None if counts is None else counts[lead:]
                    batches += _calls(self.backend, part[lead:], rest, size)
                    jobs += [asyncio.ensure_future(one(b, bar)) for b in batches]
                    if stopping.is_set():
                        break  # a call raised: the run stops now, not after counting
                try:
                    await asyncio.gather(*jobs)
                except Exception:
                    if not raised:
                        raise
                if raised:  # the error that stopped the run, not one met while it stopped
                    raise raised[0]
            finally:
                for p in jobs:
                    p.cancel()
                for note in notes:
                    note.cancel()
                try:
                    collector.flush()
                    _final_rate(progress, bar, collector)
                finally:
                    # however the run ends (done, a call raised, Ctrl-C), the cancelled
                    # calls end first (a server's request hands its connection back),
                    # then the backend closes what it holds: nothing is left open on
                    # this event loop, which interrupt.run closes
                    await asyncio.gather(*jobs, return_exceptions=True)
                    await self.backend.aclose()

    async def _send_slices(
        self, todo: Sequence[Task], size: int | None = None, stop: asyncio.Event | None = None
    ) -> AsyncIterator[tuple[list[Task], list[int] | None]]:
        """``todo`` in the order it goes to the backend, a part at a time: by tokens
        within each part where the backend counts them (:func:`send_order`), else by
        characters (:attr:`Task.size`).

        Counting tokens is tokenizing (the backend keeps the ids for the calls that
        follow, so nothing is tokenized twice), and on a fast device that takes about as
        long as the passes over them: counted all before the first call, the device
        idled through it (1.8 s of an emulated 135M model's 5.2 s of passes). Where
        calls overlap (``backend.concurrency`` > 1: the device runs one while the host
        prepares the next), the tasks are cut by characters into slices
        (:func:`count_slices`: :data:`FIRST_COUNT` tasks, then twice as many, and so
        on), each counted in a thread while the calls sent before it run: the first
        call waits only for the first slice's count. Characters only roughly follow
        tokens, so a slice's longest tasks by tokens may be longer than the next
        slice's shortest: a counted task goes out once its item's tokens are at most
        what a task not yet counted likely has (:data:`HELD_QUANTILE`), the others are
        ordered with the next slice; so are those that would join the part-filled last
        forward pass of the call they would go in (:data:`WHOLE_PASSES`). With one call
        at a time (the CPU) nothing would run beside the counting: one slice of
        everything. Each part comes with its tasks' token counts (None where the
        backend does not count); ``size`` is the tasks per call it will be cut into
        (:func:`_whole_passes`). Once ``stop`` is set (a call stopped the run) no
        further slice is counted."""
        by_chars = send_order(todo, [t.size for t in todo])
        first = FIRST_COUNT if self.backend.concurrency > 1 else len(by_chars)
        slices = count_slices(by_chars, first)
        scored = any(t.kind == "perplexity" for t in todo)
        # the fewest characters of a task in slices[k:], for every k
        fewest = [min(t.size for t in part) for part in slices]
        for k in range(len(slices) - 2, -1, -1):
            fewest[k] = min(fewest[k], fewest[k + 1])
        held: list[tuple[Task, int]] = []  # counted, not sent yet: (task, tokens)
        per_token: list[float] = []  # characters per token of every task counted
        for k, part in enumerate(slices):
            if stop is not None and stop.is_set():
                return
            args = ([t.prompt for t in part], [t.continuation for t in part] if scored else None)
            # the first here, as nothing runs yet (a lazy backend loads its model in
            # it, and Ctrl-C stops that at once); the next ones beside the calls
            first_count = k == 0
            counts = (
                self.backend.token_counts(*args)
                if first_count
                else await asyncio.to_thread(self.backend.token_counts, *args)
            )
            if counts is None:  # the backend does not count (a server): by characters
                yield [t for t, _ in held] + [t for rest in slices[k:] for t in rest], None
                return
            if len(counts) != len(part):  # a backend's bug, said as one (not zip's words)
                raise RuntimeError(
                    f"{type(self.backend).__name__}.token_counts gave {len(counts)} counts "
                    f"for {len(part)} prompts"
                )
            held += zip(part, counts, strict=True)
            per_token += [t.size / max(1, n) for t, n in zip(part, counts, strict=True)]
            if k + 1 == len(slices):
                ready, held = _in_send_order(held), []
            else:
                bound = fewest[k + 1] / float(np.quantile(per_token, HELD_QUANTILE))
                longest: dict[str, int] = {}
                for t, n in held:
                    longest[_group(t)] = max(longest.get(_group(t), 0), n)
                ready = _in_send_order([x for x in held if longest[_group(x[0])] <= bound])
                held = [x for x in held if longest[_group(x[0])] > bound]
                if WHOLE_PASSES:
                    ready, held = _whole_passes(self.backend, ready, held, first=k == 0, size=size)
            if ready:
                yield [t for t, _ in ready], [n for _, n in ready]

    async def _attempt(
        self, batch: list[Task], kind: _Kind[Outcome], stopping: asyncio.Event | None = None
    ) -> tuple[list[Outcome], int]:
        """The batch's outcomes and the attempts they took: the one retry loop. Once
        ``stopping`` is set (another call stopped the run) a failed attempt is not
        retried: its error is raised, and the batch stays to be judged on a rerun."""
        stop = stopping or asyncio.Event()  # never set where no run can stop it
        attempt = 0
        while True:
            attempt += 1
            try:
                return await kind.handler.run(batch), attempt
            except TransientError as exc:
                if stop.is_set():
                    raise
                if attempt >= self.retry.max_attempts:
                    reason = f"{GAVE_UP} {attempt} attempts: {exc.reason}"
                    return [kind.handler.fail(t, reason) for t in batch], attempt
                # the back-off, cut short where the run stops meanwhile
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.retry.delay(attempt, exc.retry_after))
                if stop.is_set():
                    raise


def _final_rate(progress: Progress, bar: Any, collector: _Collector[Any]) -> None:
    """The bar's final figure: the run's rate, as :attr:`RunSummary.rate` computes it
    (outcomes counted over the run's clock), not the bar's own clock and count; drawn
    now, as the bar ends: in a notebook rich draws no final state as it stops, and the
    bar stayed at its last refresh (11 of 12 judged, the rate before the end)."""
    finished = sum(collector.counts.values())
    progress.update(bar, rate=per_second(finished, collector.clock.seconds))
    progress.refresh()


def send_order(tasks: Sequence[Task], sizes: Sequence[int]) -> list[Task]:
    """The order ``tasks`` go to the backend in: by size (``sizes[i]`` is task i's
    tokens, or characters where the backend cannot count tokens), with the tasks of
    one item (a pair's two orders, a response's dimensions) next to each other.

    By size: calls are cut from this order and a local backend cuts each call into
    length buckets, so a call of similar lengths pads as little as one pass over all
    prompts sorted at once (the bare forward pass); sorted by characters instead, a
    call's token lengths straggle and the padding grew (the measured cause of most
    of the gap to the bare pass on a GPU).

    Together: both orders of a pair share the prompt up to the first answer (system
    text and question), so sent back to back (one call, or adjacent requests to an
    HTTP server) an engine's prefix cache (vLLM, SGLang) computes that prefix once.
    This does not fight the sort: an item's group is placed at its longest task's
    size, and the two orders of a pair hold the same texts, so their token counts
    differ by a token or two at most; the backend's buckets are cut by the exact
    lengths anyway. Ties keep the input order (a stable sort), so the order is
    deterministic. Perplexity and rewrite tasks are each their own group.
    """
    return [tasks[i] for i in _send_indices([_group(t) for t in tasks], sizes)]


def _send_indices(groups: Sequence[str], sizes: Sequence[int]) -> list[int]:
    """The indices of :func:`send_order`: by each group's largest size, then where the
    group first comes, then size."""
    longest: dict[str, int] = {}
    first: dict[str, int] = {}
    for i, (g, n) in enumerate(zip(groups, sizes, strict=True)):
        longest[g] = max(longest.get(g, n), n)
        first.setdefault(g, i)
    return sorted(
        range(len(groups)), key=lambda i: (longest[groups[i]], first[groups[i]], sizes[i])
    )


def _in_send_order(counted: Sequence[tuple[Task, int]]) -> list[tuple[Task, int]]:
    """``(task, tokens)`` pairs in :func:`send_order` of their tasks by those tokens."""
    order = _send_indices([_group(t) for t, _ in counted], [n for _, n in counted])
    return [counted[i] for i in order]


def _group(task: Task) -> str:
    """What keeps tasks together in the send order: a pair's two orders, a response's
    dimensions (their item); a perplexity or rewrite task is its own group."""
    return task.item_id if task.kind in ("pairwise", "likert") else task.key


#: seconds a stopping run waits for its calls in flight before it says so (with the
#: error's reason): a quick stop prints only the error, a hung request's wait is said
#: (a local run's calls, an executor's batches: :meth:`Executor.run`)
STOP_NOTE_AFTER = 2.0


def stop_note(exc: BaseException, waiting: str, timeout: float | None) -> str:
    """The note of a run that a failure stops while work is in flight: the error's
    reason (now, not after the wait), what it waits for (``waiting`` completes "the
    run stops once ... stored": "the 2 calls in flight end and are"), each request's
    bound where the backend has a timeout, and that Ctrl-C stops at once (what was
    stored is kept; the work in flight is not)."""
    bound = f", each request within {timeout:g} s (the timeout)" if timeout else ""
    said = one_line(exc) or type(exc).__name__
    return (
        f"note: a call failed ({said}); the run stops once {waiting} stored{bound}; "
        "Ctrl-C stops now without them"
    )


#: tasks in the first slice counted where calls overlap (:meth:`Runner._send_slices`),
#: counted in ~10 ms on an H200's host (2026-11-28), so the device starts at once. A
#: larger first slice gives the device a full first pass (a small pass is bound by
#: the host on a small model: 135M shape, 82 ms of device time for 15k tokens, a full
#: 65k-token pass 90 ms), but was not measurably faster there (800 MT-Bench prompts,
#: whole passes: 135M 0.862 s at 256 against 0.87 s at 64, best of 5; 0.899 s at 128,
#: 0.910 s at 512; 1.7B 4.39 s against 4.40-4.55 s, single runs) and on two CPU cores
#: its count kept the emulated device waiting 0.3 s longer (benchmarks/judge_pipeline.py:
#: 0.85-0.88 of the bare buckets against 0.88-0.91)
FIRST_COUNT = 64
#: a counted task is sent once its item's tokens are at most the next slice's fewest
#: characters over this quantile of the characters per token counted so far (the
#: fewest tokens a task not yet counted is likely to have); the others wait and are
#: ordered with the next slice. 2,400 MT-Bench prompts cut into the local backend's
#: 65,536-token passes, simulated: padded 1.042 of real tokens at 0.9 (as measured on
#: the emulated device, 34 passes), 1.073 at 0.5, 1.141 sending every counted task at
#: once (40 passes); 1.038 with every prompt counted before the first call (29 passes)
HELD_QUANTILE = 0.9


#: a counted task that would join a call's part-filled last forward pass
#: (:meth:`Backend.last_pass`) waits for the next slice, so calls run whole passes:
#: the first slice keeps one pass at least (the device starts at once), the last
#: slice runs what is left. On an H200 (800 MT-Bench prompts, 135M shape, 65,536-token
#: passes) 9 passes instead of 12, 0.893 s against 0.926 s (best of 3 each)
WHOLE_PASSES = True


def _whole_passes(
    backend: Backend,
    ready: list[tuple[Task, int]],
    held: list[tuple[Task, int]],
    *,
    first: bool,
    size: int | None = None,
) -> tuple[list[tuple[Task, int]], list[tuple[Task, int]]]:
    """``ready`` (in send order: :func:`_in_send_order`) less the items (all their
    tasks) with a task in the part-filled last pass its last call would end with
    (``ready`` cut into calls of ``size`` as :func:`_calls` cuts them; one call without
    ``size``), and ``held`` plus those; with ``first``, ``ready`` as it is where nothing
    would be left to send (that pass its only one, or every item with a task in it):
    the device starts at once. Whole items go, so what is sent stays in send order."""
    last = ready
    if size is not None and len(ready) > size:
        last = _cut(backend, ready, size)[-1]
    late = _late_groups(backend, last)
    if not late:
        return ready, held
    sent = [x for x in ready if _group(x[0]) not in late]
    if first and not sent:
        return ready, held
    return sent, held + [x for x in ready if _group(x[0]) in late]


def _calls(
    backend: Backend, part: list[Task], counts: list[int] | None, size: int
) -> list[list[Task]]:
    """``part`` (in send order, ``counts`` its tasks' tokens) cut into calls of at most
    ``size`` tasks. With :data:`WHOLE_PASSES` and counts, the items with a task in a
    call's part-filled last pass (:meth:`Backend.last_pass`) open the next call
    instead (:func:`_cut`), so a part larger than a call (calls of a smaller
    ``--batch-size``, or many held tasks) still runs whole passes. Cut every ``size``
    tasks, each call but the part's last ended on a part-filled pass: simulated with
    a first slice of 256 tasks, calls of 1,024 and 65,536-token passes, planted pairs
    of 200-1,200 characters a side, 3,000 pairs ran 58 passes where one pass over all
    runs 55 (55 cut so), 5,000 of 100-1,000 characters 85 against 79 (80 cut so, with
    :func:`_whole_passes` holding the part-filled pass of a part's last call)."""
    if counts is None or not WHOLE_PASSES:
        return [part[i : i + size] for i in range(0, len(part), size)]
    return [
        [t for t, _ in call] for call in _cut(backend, list(zip(part, counts, strict=True)), size)
    ]


def _cut(backend: Backend, rest: list[tuple[Task, int]], size: int) -> list[list[tuple[Task, int]]]:
    """``rest`` cut into calls of at most ``size``, the items of a call's part-filled
    last pass moved to the next call; a call keeps them where they are all it holds."""
    calls: list[list[tuple[Task, int]]] = []
    while len(rest) > size:
        call, rest = rest[:size], rest[size:]
        late = _late_groups(backend, call)
        keep = [x for x in call if _group(x[0]) not in late]
        if keep:
            rest = [x for x in call if _group(x[0]) in late] + rest
            call = keep
        calls.append(call)
    return [*calls, rest] if rest else calls


def _late_groups(backend: Backend, call: list[tuple[Task, int]]) -> set[str]:
    """The items (:func:`_group`) with a task in the part-filled last forward pass
    that ``call`` (``(task, tokens)`` in send order) would end with
    (:meth:`Backend.last_pass`); empty where that pass is full or not cut by tokens."""
    return {_group(call[i][0]) for i in backend.last_pass([n for _, n in call])}


#: a slice holds at most this many times the first slice's characters
#: (:func:`count_slices`)
SLICE_CAP = 8


def count_slices(ordered: Sequence[Task], first: int) -> list[list[Task]]:
    """``ordered`` (by characters, an item's tasks together: :func:`send_order`) cut
    into slices: the first ``first`` tasks, then each slice as many as hold twice the
    characters of the slice before it (:attr:`Task.size`), up to :data:`SLICE_CAP`
    times the first slice's, the last what is left; a slice that would end inside an
    item's group ends after it instead.

    Each slice is counted while the device runs the slices before it. Doubling
    builds a lead over the device at the start; the cap keeps each count short
    against what the device has queued when the host tokenizes not much faster than
    the device reads (2,400 MT-Bench prompts at 1.2x, simulated: 0.92 of the bare
    passes capped at 8x, 0.78 doubling to the end, 0.94 at 4x with 37 passes instead
    of 34; a fast host gives 0.99 either way)."""
    out: list[list[Task]] = []
    start, end, chars, cap = 0, 0, 0, 0
    while start < len(ordered):
        if not out:
            end = min(max(1, first), len(ordered))
        else:
            want, got = max(1, min(2 * chars, cap)), 0  # a task at least: sizes may be 0
            while end < len(ordered) and got < want:
                got += ordered[end].size
                end += 1
        while end < len(ordered) and _group(ordered[end]) == _group(ordered[end - 1]):
            end += 1
        out.append(list(ordered[start:end]))
        chars = sum(t.size for t in out[-1])
        cap = cap or SLICE_CAP * chars
        start = end
    return out


@contextlib.contextmanager
def _on_first_interrupt(say: Callable[[int], None]) -> Iterator[None]:
    """Within the block, the first Ctrl-C or SIGTERM calls ``say(signum)`` before the
    handler of the moment (the program's, :mod:`recuse.interrupt`, or asyncio's, which
    cancel the run) handles it; a later one goes to that handler alone. On the main
    thread only, where signals are handled, and for a signal whose handler is Python
    code (not one the shell ignores); in the worker thread of a notebook cell's run,
    the first stop (a Ctrl-C in the thread that waits for it) calls ``say`` there
    (:func:`recuse.interrupt.on_first_stop`)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        with interrupt.on_first_stop(say):
            yield
        return
    before: dict[int, Any] = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    said: list[bool] = []

    def handler(signum: int, frame: Any) -> None:
        if not said:
            said.append(True)
            with contextlib.suppress(Exception):
                say(signum)
        before[signum](signum, frame)

    wrapped = [s for s, h in before.items() if callable(h)]
    for s in wrapped:
        signal.signal(s, handler)
    try:
        yield
    finally:
        for s in wrapped:
            if signal.getsignal(s) is handler:
                signal.signal(s, before[s])


@contextlib.contextmanager
def _quiet_collector(on: bool) -> Iterator[None]:
    """With ``on`` (:attr:`Backend.quiet_collector`: a server's backend), the garbage
    collector kept off the event loop's back while a run's calls go out (:mod:`gc`;
    all as it was after the block):

    * the objects alive before the block are frozen (:func:`gc.freeze`), so a full
      pass skips them: over every module loaded, it took 90-120 ms in every other run
      of 640 HTTP requests (benchmarks/judge_http.py), the loop stalled with every
      request in flight;
    * a young pass waits for :data:`GC_YOUNG` net new objects, not 700: the JSON,
      requests and answers of a call die young, and 50-60 young passes cost 20-30 ms
      of a 640-request run, 2 ms at 7,000 (a few passes, over the same live set).

    Nothing is done where the process froze objects itself or turned the collector
    off (:func:`gc.disable`, or a threshold of 0, which stops automatic passes): it
    manages its collector. Runs in several threads at once (two judges' runs in a
    notebook) keep it quiet until the last ends (:class:`~recuse.borrowed.Borrowed`):
    the first run's end gave it back under the second's feet, and two runs that began
    together could each save the other's threshold, the last out leaving it for good."""
    if not on:
        yield
        return
    with _COLLECTOR.held():
        yield


def _collector_found() -> tuple[int, int, int] | None:
    """The collector's thresholds, None where the process manages it (see
    :func:`_quiet_collector`)."""
    if gc.get_freeze_count() or not gc.isenabled() or gc.get_threshold()[0] == 0:
        return None
    return gc.get_threshold()


def _collector_quiet(found: tuple[int, int, int] | None) -> None:
    if found is not None:
        gc.freeze()
        gc.set_threshold(max(found[0], GC_YOUNG), *found[1:])


def _collector_back(found: tuple[int, int, int] | None) -> None:
    if found is not None:
        gc.set_threshold(*found)
        gc.unfreeze()


#: net new container objects between young garbage-collector passes during a run
#: (:func:`_quiet_collector`; Python's default is 700)
GC_YOUNG = 7000
#: the collector, quiet while any run that asks for it is open (:func:`_quiet_collector`)
_COLLECTOR = Borrowed(_collector_found, _collector_quiet, _collector_back)


@contextlib.contextmanager
def _given_back(fresh: bool, release: Callable[[], None]) -> Iterator[None]:
    """Where the block raises (Ctrl-C, a failed load) and this run made the claim
    (``fresh``), ``release`` it: the store's release keeps a claim that has rows. The
    run's own error is the one said, not an error releasing."""
    try:
        with interrupt.on_hurry(lambda: release() if fresh else None):
            yield
    except BaseException:
        if fresh:
            with contextlib.suppress(RecuseError):
                release()
        raise
