"""Run a judge over many items: batching, concurrency, retries, resume, progress.

Three task kinds share one runner: ``pairwise`` (one task per pair and order),
``likert`` (per response and dimension) and ``perplexity`` (per distinct prompt and
response text: the log-probs of the response under the judge's model, from the
backend's ``continuation_logprobs`` primitive). The runner turns items into tasks,
drops tasks whose content key is already final in the store (a judgment judged for
another item with identical content is copied, reframed for its order; a failed
perplexity is computed again), sends the rest to the backend in length-sorted
batches with at most ``backend.concurrency`` batches in flight, and commits
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
import math
import random
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
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
    TimeRemainingColumn,
)
from rich.progress import (
    Task as RichTask,
)
from rich.text import Text

from recuse.errors import ConfigError, InputError, RecuseError
from recuse.judging.backends.base import (
    Backend,
    Failure,
    Generation,
    TopK,
    TransientError,
    done_sink,
)
from recuse.judging.protocols import (
    BRACKETS,
    ORDERS,
    Dimension,
    LikertProtocol,
    Order,
    Pair,
    PairwiseProtocol,
    Prompt,
    VerdictFormat,
    VerdictScore,
    bad_logprobs,
    parse_rating,
    perplexity_key,
    score_distribution,
    score_labels,
    split_at_verdict,
    to_ab,
    verdict_score,
)
from recuse.judging.store import Judgment, Perplexity, Rewrite, Store, content_key

TaskKind = Literal["pairwise", "likert", "perplexity", "rewrite"]
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


@dataclass(frozen=True)
class Task:
    key: str
    kind: TaskKind
    item_id: str
    slot: str  # order for pairwise, dimension name for Likert, "" for perplexity
    prompt: Prompt
    order: Order | None = None
    dimension: Dimension | None = None
    continuation: str = ""  # perplexity: the text scored after the prompt

    @property
    def size(self) -> int:
        """Length used to put similar tasks in one batch."""
        return len(self.prompt.canonical()) + len(self.continuation)


#: how the reason of a task failed after its retries begins (:attr:`RunSummary.gave_up`)
GAVE_UP = "gave up after"


@dataclass(frozen=True)
class RunSummary:
    """What a run did: tasks in total, already in the store, and outcomes of this run."""

    total: int
    cached: int
    ok: int
    unparsed: int
    failed: int
    seconds: float
    failures: Mapping[str, int] = field(default_factory=dict)  # reason -> count
    what: Literal["judgments", "perplexities", "rewrites"] = "judgments"

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

    def line(self) -> str:
        if self.what == "rewrites":
            return (
                f"{self.total} rewrites: {self.cached} already stored, {self.ok} ok, "
                f"{self.unparsed} unusable, {self.failed} failed ({self.seconds:.1f} s)"
            )
        if self.what == "perplexities":
            return (
                f"{self.total} perplexities: {self.cached} already stored, {self.ok} "
                f"computed, {self.failed} failed ({self.seconds:.1f} s)"
            )
        return (
            f"{self.total} judgments: {self.cached} already stored, {self.ok} ok, "
            f"{self.unparsed} unparsed, {self.failed} failed ({self.seconds:.1f} s)"
        )


class _RateColumn(ProgressColumn):
    """Items per second: while running, rich's recent rate (it moves as each forward pass
    reports its prompts); once finished, all items over the whole elapsed time, never
    the rate of the last burst (a run whose one batch finished everything at once read
    "12/12 22213.05/s")."""

    def render(self, task: RichTask) -> Text:
        speed: float | None
        if task.finished and task.finished_time:
            speed = task.completed / task.finished_time
        else:
            speed = task.speed
        return Text("  -  /s" if speed is None else f"{speed:6.2f}/s", style="progress.data.speed")


Handler = Callable[[Sequence[Task]], Awaitable[list[Outcome]]]


@dataclass(frozen=True)
class Work:
    """What a run's tasks ask of the backend, as data another process can receive:
    pairwise or Likert judgments under their protocol, or perplexities."""

    kind: Literal["pairwise", "likert", "perplexity"]
    protocol: PairwiseProtocol | LikertProtocol | None = None


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
    ) -> None:
        """Compute every task of ``todo``; ``batch_size`` tasks go to a worker at once."""

    def usage(self) -> tuple[int, int] | None:
        """Tokens in and out the workers' backends reported so far (None: none did)."""


@dataclass(frozen=True)
class _Kind(Generic[Outcome]):
    """How one task kind's outcomes are made, failed, finished and saved."""

    verb: str  # progress bar: "<verb> with <judge>"
    handler: Handler[Outcome]
    fail: Callable[[Task, str], Outcome]
    save: Callable[[list[Outcome]], None]
    finish: Callable[[Outcome, int], Outcome]  # (outcome, attempts this run)
    batch_size: int
    work: Work | None = None  # set where an executor may compute the kind elsewhere


class _Collector(Generic[Outcome]):
    """Counts finished outcomes and commits them together: at once when the last
    commit is ``FLUSH_SECONDS`` old (so a slow judge commits every batch), else when
    ``FLUSH_ROWS`` are waiting; a killed run loses at most that much work."""

    def __init__(
        self,
        kind: _Kind[Outcome],
        counts: dict[str, int],
        failures: dict[str, int],
        outcomes: list[Outcome],
    ) -> None:
        self.kind: _Kind[Outcome] = kind
        self.counts = counts
        self.failures = failures
        self.outcomes: list[Outcome] = outcomes
        self.pending: list[Outcome] = []
        self.last_flush = time.perf_counter()

    def add(self, results: Sequence[Outcome]) -> None:
        self.pending.extend(results)
        self.outcomes.extend(results)
        now = time.perf_counter()
        if len(self.pending) >= FLUSH_ROWS or now - self.last_flush >= FLUSH_SECONDS:
            self.flush()
        for r in results:
            self.counts[r.status] += 1
            if r.status == "failed":
                reason = r.reason or "unknown"
                self.failures[reason] = self.failures.get(reason, 0) + 1

    def flush(self) -> None:
        batch = self.pending[:]
        self.pending.clear()  # an error writing them (disk full) is not met twice
        self.last_flush = time.perf_counter()
        self.kind.save(batch)


FLUSH_SECONDS = 0.1
FLUSH_ROWS = 64


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
        items, meta = _pairs(pairs)
        _check_template(protocol, items, self.backend)
        tasks = [
            self._task(
                "pairwise", p.item_id, o, protocol.prompt(p, o), protocol.key_params(), order=o
            )
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
            self.store.put_items("pairwise", meta)
            return self._judge(tasks, Work("pairwise", protocol))

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
        for r in rows.to_dict("records"):
            item_id = f"{r['prompt_id']}|{r['model']}"
            refs = {
                d.name: _float_or_none(r.get(f"reference_{d.name}"))
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
                params = {**protocol.key_params(), "dimension": d.name, "labels": list(d.labels)}
                tasks.append(self._task("likert", item_id, d.name, prompt, params, dimension=d))
        self.store.put_items("likert", meta)
        return self._judge(tasks, Work("likert", protocol))

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
        summary. Identical inputs are computed once. ``batch_size`` (default the
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
        start = time.perf_counter()
        done = self.store.stored_perplexities(tasks)
        todo = [t for k, t in tasks.items() if k not in done]
        kind: _Kind[Perplexity] = _Kind(
            verb="perplexity",
            handler=self._perplexity_batch,
            fail=lambda t, reason: Perplexity(t.key, "failed", reason=reason),
            save=lambda rows: self.store.put_perplexities(model, revision, rows),
            finish=lambda row, _attempts: row,
            batch_size=batch_size or self.backend.batch_size,
            work=Work("perplexity"),
        )
        counts, failures, computed = self._execute(todo, kind)
        done.update({r.key: r for r in computed})
        summary = RunSummary(
            total=len(tasks),
            cached=len(tasks) - len(todo),
            ok=counts["ok"],
            unparsed=0,
            failed=counts["failed"],
            seconds=time.perf_counter() - start,
            failures=failures,
            what="perplexities",
        )
        return keys, done, summary

    def rewrite(
        self, prompts: Sequence[Prompt], *, max_new_tokens: int, version: str
    ) -> tuple[list[str], dict[str, Rewrite], RunSummary]:
        """Greedy generations (a rewriting model's texts for the probes).

        Returns each prompt's key, the stored-or-computed row of every key and the
        run's summary. A generation that is empty or cut at ``max_new_tokens`` is
        ``unparsed`` (kept and not redone: greedy decoding gives it again); a failed
        one is retried by the next run. ``version`` names the prompt's wording (it
        enters the key, with the model, revision and token limit).
        """
        if max_new_tokens < 1:
            raise ConfigError(f"max_new_tokens must be 1 or more; got {max_new_tokens}")
        params = {"protocol": version, "max_new_tokens": max_new_tokens, "decoding": "greedy"}
        keys: list[str] = []
        tasks: dict[str, Task] = {}
        for p in prompts:
            t = self._task("rewrite", "", "", p, params)
            keys.append(t.key)
            tasks.setdefault(t.key, t)
        start = time.perf_counter()
        done = self.store.stored_rewrites(tasks)
        todo = [t for k, t in tasks.items() if k not in done]
        model, revision = self.backend.model_id, self.backend.revision

        async def handler(batch: Sequence[Task]) -> list[Rewrite]:
            gens = await self.backend.generate(
                [t.prompt for t in batch], max_new_tokens=max_new_tokens
            )
            return [_rewrite(t.key, g, max_new_tokens) for t, g in zip(batch, gens, strict=True)]

        kind: _Kind[Rewrite] = _Kind(
            verb="rewriting",
            handler=handler,
            fail=lambda t, reason: Rewrite(t.key, "failed", reason=reason),
            save=lambda rows: self.store.put_rewrites(model, revision, rows),
            finish=lambda row, _attempts: row,
            batch_size=self.backend.batch_size,
        )
        counts, failures, computed = self._execute(todo, kind)
        done.update({r.key: r for r in computed})
        summary = RunSummary(
            total=len(tasks), cached=len(tasks) - len(todo), ok=counts["ok"],
            unparsed=counts["unparsed"], failed=counts["failed"],
            seconds=time.perf_counter() - start, failures=failures, what="rewrites",
        )  # fmt: skip
        return keys, done, summary

    # --- tasks -------------------------------------------------------------------

    def _task(
        self,
        kind: TaskKind,
        item_id: str,
        slot: str,
        prompt: Prompt,
        params: Mapping[str, object],
        **extra: Any,
    ) -> Task:
        key = content_key(
            model_id=self.backend.model_id,
            revision=self.backend.revision,
            prompt=prompt.canonical(),
            params=params,
        )
        return Task(key, kind, item_id, slot, prompt, **extra)

    def _judge(self, tasks: list[Task], work: Work) -> RunSummary:
        """Claim the judge id for this model (:meth:`Store.claim_judge`), then run the
        tasks. A run that stores no judgment (the model failed to load, Ctrl-C before
        the first result) gives its fresh claim back, so fixing the folder (new weights,
        a new fingerprint) is not refused for verdicts the store never held."""
        claim = {"model_id": self.backend.model_id, "revision": self.backend.revision}
        fresh = self.store.claim_judge(self.judge, **claim, keys=(t.key for t in tasks))
        with _given_back(fresh, lambda: self.store.release_judge(self.judge, **claim)):
            return self._judge_claimed(tasks, work)

    def _judge_claimed(self, tasks: list[Task], work: Work) -> RunSummary:
        """Run judgment tasks: reuse what the store holds, judge the rest."""
        start = time.perf_counter()
        stored = self.store.lookup(t.key for t in tasks)
        mine = {(j.key, j.item_id, j.slot): j for j in stored if j.judge == self.judge}
        final_by_key = {j.key: j for j in stored if _reusable(j)}
        todo: list[Task] = []
        copies: list[Judgment] = []
        attempts_before: dict[tuple[str, str, str], int] = {}
        cached = 0
        for t in tasks:
            own = mine.get((t.key, t.item_id, t.slot))
            if own is not None and own.status != "failed":
                cached += 1
            elif t.key in final_by_key:  # same content judged for another item
                copies.append(_copy(final_by_key[t.key], t, self.judge))
                cached += 1
            else:
                if own is not None:
                    attempts_before[(t.key, t.item_id, t.slot)] = own.attempts
                todo.append(t)
        self.store.put(copies)

        def finish(j: Judgment, attempts: int) -> Judgment:
            before = attempts_before.get((j.key, j.item_id, j.slot), 0)
            return replace(_usable(j), attempts=attempts + before)

        kind: _Kind[Judgment] = _Kind(
            verb="judging",
            handler=self._handler(work),
            fail=lambda t, reason: _failed(t, self.judge, reason),
            save=self.store.put,
            finish=finish,
            batch_size=self.backend.batch_size,
            work=work,
        )
        meter: Backend | Executor = self.backend if self.executor is None else self.executor
        before = meter.usage()
        ran = time.perf_counter()
        counts = {"ok": 0, "unparsed": 0, "failed": 0}

        def record() -> None:
            """What a judgment costs (the evaluator card): only work sent to the backend,
            not copies, and only the judgments it answered (ok or unparsed): a failed one
            reports no usage and is sent again by the next run, so counting it would
            spread the answered ones' tokens over judgments that cost none."""
            after = meter.usage()
            tokens = None
            if after is not None:
                b = before or (0, 0)
                tokens = (after[0] - b[0], after[1] - b[1])
            self.store.put_run(
                self.judge,
                judgments=counts["ok"] + counts["unparsed"],
                seconds=time.perf_counter() - ran,
                tokens=tokens,
                hardware=self.backend.hardware,
            )

        try:
            counts, failures, _ = self._execute(todo, kind, counts)
        except BaseException:
            # an interrupted run (Ctrl-C, a server gone) that stored judgments is a run
            # too: the card counts it; its own error is the one said
            if counts["ok"] + counts["unparsed"]:
                with contextlib.suppress(RecuseError):
                    record()
            raise
        if todo:
            record()
        return RunSummary(
            total=len(tasks),
            cached=cached,
            ok=counts["ok"],
            unparsed=counts["unparsed"],
            failed=counts["failed"],
            seconds=time.perf_counter() - start,
            failures=failures,
        )

    def _execute(
        self, todo: list[Task], kind: _Kind[Outcome], counts: dict[str, int] | None = None
    ) -> tuple[dict[str, int], dict[str, int], list[Outcome]]:
        """Run ``todo``: status counts, failure reasons (reason -> count), outcomes.
        ``counts`` (zeros), where given, is counted into as outcomes are committed, so
        a caller still has them when the run is interrupted."""
        counts = counts if counts is not None else {"ok": 0, "unparsed": 0, "failed": 0}
        failures: dict[str, int] = {}
        outcomes: list[Outcome] = []
        collector = _Collector(kind, counts, failures, outcomes)
        if todo and self.executor is not None and kind.work is not None:
            self._distribute(todo, kind, kind.work, self.executor, collector)
        elif todo:
            asyncio.run(self._drive(todo, kind, collector))
        return counts, failures, outcomes

    def _progress(self) -> Progress:
        return Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            _RateColumn(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=self.console,
            disable=not self.progress,
            transient=False,
        )

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
        bar = progress.add_task(f"{kind.verb} with {self.judge}", total=len(todo))

        def collect(computed: Sequence[Computed]) -> None:
            collector.add([kind.finish(r, attempts) for r, attempts in computed])
            progress.advance(bar, len(computed))

        with progress:
            try:
                executor.run(
                    sorted(todo, key=lambda t: t.size),  # neighbours batch together
                    work,
                    judge=self.judge,
                    retry=self.retry,
                    batch_size=kind.batch_size * max(1, self.backend.concurrency),
                    collect=collect,
                )
            finally:
                collector.flush()

    async def compute(self, tasks: Sequence[Task], work: Work) -> list[Computed]:
        """Each task's outcome, with the attempts its batch took, from this runner's
        backend: batches of ``backend.batch_size``, ``backend.concurrency`` of them in
        flight, the one retry loop. Nothing is read from or written to the store: an
        :class:`Executor`'s workers call this and the runner that sent the tasks
        finishes and commits the outcomes."""
        fail: Callable[[Task, str], Any]
        if work.kind == "perplexity":
            fail = lambda t, reason: Perplexity(t.key, "failed", reason=reason)  # noqa: E731
        else:
            fail = lambda t, reason: _failed(t, self.judge, reason)  # noqa: E731
        kind: _Kind[Any] = _Kind(
            verb="",
            handler=self._handler(work),
            fail=fail,
            save=lambda _rows: None,
            finish=lambda row, _attempts: row,
            batch_size=self.backend.batch_size,
        )
        size = max(1, self.backend.batch_size)
        limit = asyncio.Semaphore(max(1, self.backend.concurrency))

        async def one(batch: list[Task]) -> list[Computed]:
            async with limit:
                results, attempts = await self._attempt(batch, kind)
            return [(r, attempts) for r in results]

        ordered = list(tasks)
        parts = await asyncio.gather(
            *(one(ordered[i : i + size]) for i in range(0, len(ordered), size))
        )
        return [c for part in parts for c in part]

    def _handler(self, work: Work) -> Handler[Any]:
        protocol = work.protocol
        if work.kind == "pairwise" and isinstance(protocol, PairwiseProtocol):
            return lambda batch: self._pairwise_batch(batch, protocol)
        if work.kind == "likert" and isinstance(protocol, LikertProtocol):
            return lambda batch: self._likert_batch(batch, protocol)
        if work.kind == "perplexity":
            return self._perplexity_batch
        raise ValueError(f"no handler for {work!r}")

    async def _drive(
        self, todo: list[Task], kind: _Kind[Outcome], collector: _Collector[Outcome]
    ) -> None:
        # length bucketing: neighbours in a batch have similar prompt lengths
        ordered = sorted(todo, key=lambda t: t.size)
        size = max(1, kind.batch_size)
        # with a progress bar, one judgment goes first on its own: the bar has a rate and
        # an ETA after seconds, not after a whole batch (a run smaller than a batch
        # would otherwise show none)
        head = 1 if self.progress and size > 1 and len(ordered) > 1 else 0
        batches = [ordered[:head]] if head else []
        batches += [ordered[i : i + size] for i in range(head, len(ordered), size)]
        limit = asyncio.Semaphore(max(1, self.backend.concurrency))
        progress = self._progress()

        async def one(batch: list[Task], bar: Any) -> None:
            shown = 0  # of this batch, on the bar already (the backend reports steps)

            def step(n: int) -> None:
                nonlocal shown
                n = min(n, len(batch) - shown)  # a retried batch reports its steps again
                shown += n
                progress.advance(bar, n)

            async with limit:
                with done_sink(step):
                    results, attempts = await self._attempt(batch, kind)
            collector.add([kind.finish(r, attempts) for r in results])
            progress.advance(bar, len(batch) - shown)

        with progress:
            bar = progress.add_task(f"{kind.verb} with {self.judge}", total=len(todo))
            jobs = [asyncio.ensure_future(one(b, bar)) for b in batches]
            try:
                await asyncio.gather(*jobs)
            finally:
                for p in jobs:
                    p.cancel()
                collector.flush()
        await self.backend.aclose()

    async def _attempt(self, batch: list[Task], kind: _Kind[Outcome]) -> tuple[list[Outcome], int]:
        """The batch's outcomes and the attempts they took: the one retry loop."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return await kind.handler(batch), attempt
            except TransientError as exc:
                if attempt >= self.retry.max_attempts:
                    reason = f"{GAVE_UP} {attempt} attempts: {exc.reason}"
                    return [kind.fail(t, reason) for t in batch], attempt
                await asyncio.sleep(self.retry.delay(attempt, exc.retry_after))

    # --- protocol handlers ----------------------------------------------------------

    def _judgment(
        self,
        t: Task,
        s: VerdictScore,
        *,
        label: str | None,
        text: str | None,
        fmt: VerdictFormat = BRACKETS,
        reason: str | None = None,
    ) -> Judgment:
        assert t.order is not None
        value = to_ab(s.p_slot_a, t.order) if s.status == "ok" else math.nan
        return Judgment(
            key=t.key,
            kind="pairwise",
            judge=self.judge,
            item_id=t.item_id,
            slot=t.slot,
            status=s.status,
            value=value,
            p_slot_a=s.p_slot_a,
            mass=s.mass,
            p_tie=s.p_tie,
            label=label,
            text=text,
            reason=reason
            if reason is not None or s.status == "ok"
            else f"no verdict {fmt.describe} in the output"
            if text is not None
            else f"no probability on A or B after {fmt.opener or 'the prompt'}",
        )

    async def _pairwise_batch(
        self, batch: Sequence[Task], protocol: PairwiseProtocol
    ) -> list[Judgment]:
        fmt = protocol.reads
        if protocol.mode == "direct":
            if not self.backend.supports_prefix:
                raise InputError(
                    f"the backend for {self.backend.model_id} cannot continue a pre-filled answer",
                    fix="use --mode explain, or the completions endpoint",
                )
            prompts = [t.prompt for t in batch]
            return await self._score_at(batch, prompts, [None] * len(batch), protocol, fmt)
        prefix_ok = self.backend.supports_prefix
        if prefix_ok and fmt is not BRACKETS and protocol.template is None:
            raise InputError(
                f"verdict format {fmt.name} is for recorded outputs; live judges use [[A]]/[[B]]",
                fix="judge with the default protocol, or replay the recorded file",
            )
        # a backend that continues a prefix stops where the verdict label comes (the
        # first mark) and scores it there; one that cannot reads the whole reply (and
        # its log-probs)
        if prefix_ok:
            stop = [fmt.opener] if fmt.opener else []
        else:
            # recuse's prompt stops after its first mark; a template's whole reply is
            # read by its tool's rule (FastChat's first-found label, Arena-Hard's one
            # distinct label ...)
            stop = ["]]"] if protocol.template is None else []
        # a reply read whole has its verdict read from the log-probs after the opener:
        # a backend that can gives exactly the verdict tokens' there (vLLM's chat route)
        reads_logprobs = not prefix_ok and protocol.top_k > 0 and not fmt.first_token_ambiguous
        gens = await self.backend.generate(
            [t.prompt for t in batch],
            max_new_tokens=protocol.max_new_tokens,
            stop=stop,
            top_k=0 if prefix_ok else protocol.top_k,
            select=fmt.selector() if reads_logprobs else None,
        )
        out: dict[int, Judgment] = {}
        follow: list[tuple[int, Prompt, str]] = []
        for i, (t, g) in enumerate(zip(batch, gens, strict=True)):
            if isinstance(g, Failure):
                out[i] = _failed(t, self.judge, g.reason)
                continue
            if not prefix_ok:  # the whole reply is here: parse it (and its log-probs)
                bad = next(filter(None, map(bad_logprobs, g.dists)), None)
                if bad is not None:
                    out[i] = _failed(t, self.judge, bad)
                    continue
                score, label, why = _read_generated(g, fmt, parsed=protocol.template is not None)
                out[i] = self._judgment(t, score, label=label, text=g.text, fmt=fmt, reason=why)
                continue
            if not fmt.opener:  # the reply is the label itself: read it as written
                verdict, label = fmt.read(g.text)
                score = verdict_score(verdict)
                out[i] = self._judgment(t, score, label=label, text=g.text, fmt=fmt)
                continue
            cut = split_at_verdict(g.text, fmt.opener)
            if cut is None:
                out[i] = self._judgment(t, verdict_score(None), label=None, text=g.text, fmt=fmt)
            else:
                follow.append((i, t.prompt.extend(cut), g.text))
        if follow:
            scored = await self._score_at(
                [batch[i] for i, _, _ in follow],
                [p for _, p, _ in follow],
                [text for _, _, text in follow],
                protocol,
                fmt,
            )
            for (i, _, _), j in zip(follow, scored, strict=True):
                out[i] = j
        return [out[i] for i in range(len(batch))]

    async def _score_at(
        self,
        tasks: Sequence[Task],
        prompts: Sequence[Prompt],
        texts: Sequence[str | None],
        protocol: PairwiseProtocol,
        fmt: VerdictFormat,
    ) -> list[Judgment]:
        """Eq. 3 right after each prompt's prefix, where the verdict label comes: from
        the next-token distribution or, when one first token can commit to two
        verdicts, from each label's whole text scored as a continuation."""
        if not fmt.first_token_ambiguous:
            select = fmt.selector()
            dists = await self.backend.next_token_logprobs(
                prompts, top_k=protocol.top_k, select=select
            )
            return [
                self._scored(t, d, text=x, fmt=fmt)
                for t, d, x in zip(tasks, dists, texts, strict=True)
            ]
        if self.backend.continuation_refusal:
            raise ConfigError(
                f"the labels of {fmt.name} ({fmt.describe}) share their first token, so "
                "each label's whole text is scored, which this backend cannot do: "
                + self.backend.continuation_refusal
            )
        labels = [label + fmt.closer for label, _ in fmt.labels]
        results = await self.backend.continuation_logprobs(
            [p for p in prompts for _ in labels], [c for _ in prompts for c in labels]
        )
        out = []
        for k, (t, x) in enumerate(zip(tasks, texts, strict=True)):
            mine = results[k * len(labels) : (k + 1) * len(labels)]
            failure = next((r for r in mine if isinstance(r, Failure)), None)
            if failure is not None:
                out.append(_failed(t, self.judge, failure.reason))
                continue
            arrays = [np.asarray(r, dtype=np.float64) for r in mine]
            if any(len(a) == 0 or not np.isfinite(a).all() or (a > 1e-6).any() for a in arrays):
                out.append(_failed(t, self.judge, "log-probs are not finite and <= 0"))
                continue
            logps = [float(a.sum()) for a in arrays]
            score = score_labels(logps, [meaning for _, meaning in fmt.labels])
            out.append(self._judgment(t, score, label=None, text=x, fmt=fmt))
        return out

    def _scored(
        self,
        t: Task,
        d: dict[str, float] | Failure,
        *,
        text: str | None,
        fmt: VerdictFormat = BRACKETS,
    ) -> Judgment:
        """Eq. 3 on the verdict token's log-probs, or a failed row saying why not."""
        if isinstance(d, Failure):
            return _failed(t, self.judge, d.reason)
        bad = bad_logprobs(d)
        if bad is not None:
            return _failed(t, self.judge, bad)
        score = score_distribution(d, fmt=fmt)
        reason = _outside_topk(d, fmt)
        if reason is not None:  # its log-prob is unknown, not zero: Eq. 3 cannot be read
            score = VerdictScore(math.nan, score.mass, score.p_tie, "unparsed")
            return self._judgment(t, score, label=None, text=text, fmt=fmt, reason=reason)
        return self._judgment(t, score, label=None, text=text, fmt=fmt)

    async def _likert_batch(
        self, batch: Sequence[Task], protocol: LikertProtocol
    ) -> list[Judgment]:
        gens = await self.backend.generate(
            [t.prompt for t in batch], max_new_tokens=protocol.max_new_tokens
        )
        out = []
        for t, g in zip(batch, gens, strict=True):
            if isinstance(g, Failure):
                out.append(_failed(t, self.judge, g.reason))
                continue
            assert t.dimension is not None
            r = parse_rating(g.text, t.dimension)
            out.append(
                Judgment(
                    key=t.key,
                    kind="likert",
                    judge=self.judge,
                    item_id=t.item_id,
                    slot=t.slot,
                    status=r.status,
                    value=r.value,
                    label=r.label,
                    text=g.text,
                    reason=None if r.status == "ok" else "no 'Answer: <label>' on the scale",
                )
            )
        return out

    async def _perplexity_batch(self, batch: Sequence[Task]) -> list[Perplexity]:
        results = await self.backend.continuation_logprobs(
            [t.prompt for t in batch], [t.continuation for t in batch]
        )
        return [_perplexity(t.key, r) for t, r in zip(batch, results, strict=True)]


@contextlib.contextmanager
def _given_back(fresh: bool, release: Callable[[], None]) -> Iterator[None]:
    """Where the block raises (Ctrl-C, a failed load) and this run made the claim
    (``fresh``), ``release`` it: the store's release keeps a claim that has rows. The
    run's own error is the one said, not an error releasing."""
    try:
        yield
    except BaseException:
        if fresh:
            with contextlib.suppress(RecuseError):
                release()
        raise


def _perplexity(key: str, res: np.ndarray | Failure) -> Perplexity:
    """A perplexity row from a backend's answer: ok only for finite log-probs <= 0."""
    if isinstance(res, Failure):
        return Perplexity(key, "failed", reason=res.reason)
    if len(res) == 0:
        return Perplexity(key, "failed", reason="the response has no tokens")
    if not np.isfinite(res).all() or (res > 1e-6).any():
        return Perplexity(key, "failed", len(res), reason="log-probs are not finite and <= 0")
    return Perplexity(key, "ok", len(res), float(np.sum(res, dtype=np.float64)))


def _rewrite(key: str, g: Generation | Failure, max_new_tokens: int) -> Rewrite:
    if isinstance(g, Failure):
        return Rewrite(key, "failed", reason=g.reason)
    text = g.text.strip()
    if not text:
        return Rewrite(key, "unparsed", g.text, reason="the rewrite is empty")
    if g.finish_reason == "length":
        return Rewrite(key, "unparsed", g.text, reason=f"cut at {max_new_tokens} tokens")
    return Rewrite(key, "ok", text)


def _outside_topk(d: dict[str, float], fmt: VerdictFormat) -> str | None:
    """Why Eq. 3 cannot be read from a server's top-k (:class:`TopK`) that holds no
    token for A or for B (that label's log-prob is unknown, not zero); None when it
    can (both present, or the distribution is not cut to a top-k)."""
    if not isinstance(d, TopK):
        return None
    absent = [v for v in ("A", "B") if not any(fmt.commits(tok, v) for tok in d)]
    if not absent:
        return None
    return (
        f"verdict token outside top-k: no log-prob for {' or '.join(absent)} "
        f"among the server's top {len(d)}"
    )


def _read_generated(
    g: Generation, fmt: VerdictFormat = BRACKETS, *, parsed: bool = False
) -> tuple[VerdictScore, str | None, str | None]:
    """Verdict from a whole reply: Eq. 3 from the log-probs of the token right after
    ``fmt.opener`` (``[[``; the first token when the opener is empty) when the backend
    returned them (its top-k, or exactly the verdict tokens' where it could: vLLM's
    ``logprob_token_ids``), else the verdict parsed in ``fmt`` (0 / 0.5 / 1). The
    label is the verdict mark as written (``"A"``, ``"A>>B"``, ``"m"`` ...).

    ``parsed`` (judge templates): a reply its tool's rule reads no verdict from is
    unparsed, whatever its log-probs (a reply that is one token, read from its
    log-probs as AlpacaEval reads it, has no opener and is exempt).

    A server's top-k (:class:`TopK`) at the verdict position that holds no token for A
    or for B makes the row unparsed ("verdict token outside top-k", as on the
    completions route): the missing label's log-prob is unknown, so Eq. 3 cannot be
    read, and the text verdict is not put in its place. The third item is that
    reason (None otherwise)."""
    verdict, label = fmt.read(g.text)
    if parsed and verdict is None and fmt.opener:
        return verdict_score(None), label, None
    if g.dists and len(g.dists) == len(g.tokens) and not fmt.first_token_ambiguous:
        at = _after_opener(g.tokens, fmt.opener)
        if at is not None and at < len(g.dists):
            d = g.dists[at]
            score = score_distribution(d, fmt=fmt)
            why = _outside_topk(d, fmt)
            if why is not None:
                return VerdictScore(math.nan, score.mass, score.p_tie, "unparsed"), label, why
            if score.status == "ok":
                return score, label, None
    return verdict_score(verdict), label, None


def _after_opener(tokens: Sequence[str], opener: str) -> int | None:
    """Index of the token right after the first ``opener`` (0 when it is empty)."""
    if not opener:
        return 0
    seen = ""
    for j, tok in enumerate(tokens):
        seen += tok
        if opener in seen:
            return j + 1 if seen.endswith(opener) else None
    return None


def _check_template(protocol: PairwiseProtocol, items: Sequence[Pair], backend: Backend) -> None:
    """Refuse, before anything is stored, what a template cannot judge: direct mode
    without an answer prefix, pairs without the reference answer it shows, labels that
    need whole-label scores from a backend that cannot give them."""
    template = protocol.template
    if template is None or protocol.question != "quality":
        return
    fmt = template.verdict
    scored = protocol.mode == "direct" or backend.supports_prefix
    if fmt.first_token_ambiguous and scored and backend.continuation_refusal:
        raise ConfigError(
            f"the labels of judge template {template.name!r} ({fmt.describe}) share their "
            "first token, so each label's whole text is scored, which this backend cannot "
            "do — over a server use the completions endpoint with --logprobs-mode, or "
            "--endpoint chat --mode explain (the verdict read from the reply)"
        )
    if protocol.mode == "direct" and template.answer_prefix is None:
        raise ConfigError(
            f"judge template {template.name!r} has no answer prefix to score its verdict "
            "at (its reply is a structure, not a label) — use --mode explain"
        )
    if template.needs_reference:
        bad = [i for i, p in enumerate(items, start=1) if p.reference is None]
        if bad:
            raise InputError(
                f"judge template {template.name!r} shows a reference answer and this pair "
                f"has none ({len(bad)} pair(s) without one)",
                row=bad[0],
                column="reference",
                fix="give every pair a reference answer as text (column reference)",
            )


def _copy(src: Judgment, t: Task, judge: str) -> Judgment:
    """A stored judgment reused for task ``t`` with the same content key.

    Equal keys mean equal rendered prompts, but not equal a/b frames: item X =
    (q, r1, r2) shown first and item Y = (q, r2, r1) shown second render the same
    prompt. What the judge said is stored in the slot frame (``p_slot_a``), so the
    a/b value is recomputed for ``t``'s order instead of copied.
    """
    value = src.value
    if t.order is not None and src.status == "ok":
        value = to_ab(src.p_slot_a, t.order)
    return replace(src, judge=judge, item_id=t.item_id, slot=t.slot, value=value)


def _usable(j: Judgment) -> Judgment:
    """``j``, or a failed row when it says ok without a usable value (a backend's
    numbers that are not finite, or not a probability): never stored as ok."""
    if j.status != "ok":
        return j
    bad = not math.isfinite(j.value)
    if j.kind == "pairwise":
        bad = bad or not 0.0 <= j.value <= 1.0 or not math.isfinite(j.p_slot_a)
    if not bad:
        return j
    return replace(
        j,
        status="failed",
        value=math.nan,
        p_slot_a=math.nan,
        reason=f"the judge's numbers are not usable (value {j.value!r})",
    )


def _reusable(j: Judgment) -> bool:
    """Final, and (pairwise ok) holding the slot-frame probability a copy needs."""
    if j.status == "failed":
        return False
    return not (j.kind == "pairwise" and j.status == "ok" and math.isnan(j.p_slot_a))


def _failed(t: Task, judge: str, reason: str) -> Judgment:
    assert t.kind == "pairwise" or t.kind == "likert"
    return Judgment(
        key=t.key,
        kind=t.kind,
        judge=judge,
        item_id=t.item_id,
        slot=t.slot,
        status="failed",
        reason=reason,
    )


def _float_or_none(v: object) -> float | None:
    try:
        f = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


_META_COLUMNS = (
    "prompt_id", "model_a", "model_b", "human", "source", "task", "category",
    "base_item", "probe", "treated",  # probe tables (recuse.probes)
)  # fmt: skip


def _pairs(pairs: Iterable[Pair] | pd.DataFrame) -> tuple[list[Pair], dict[str, dict[str, object]]]:
    """Pairs to judge and what export needs to rebuild the ``pairs`` table."""
    if isinstance(pairs, pd.DataFrame):
        need = ["item_id", "prompt", "response_a", "response_b"]
        missing = [c for c in need if c not in pairs.columns]
        if missing:
            raise InputError(
                f"missing column(s) {', '.join(missing)}",
                fix="judging needs the texts: columns item_id, prompt, response_a, response_b",
            )
        df = pairs.drop_duplicates("item_id", keep="first")
        items, meta = [], {}
        for i, r in enumerate(df.to_dict("records"), start=1):
            for c in need[1:]:
                if not isinstance(r[c], str):
                    raise InputError(
                        f"{c} is not text",
                        row=i,
                        column=c,
                        fix="give the prompt and both responses as text",
                    )
            item_id = str(r["item_id"])
            ref = r.get("reference")
            if ref is not None and not isinstance(ref, str):
                if not _isna(ref):
                    raise InputError(
                        "reference is not text",
                        row=i,
                        column="reference",
                        fix="give the reference answer as text",
                    )
                ref = None
            items.append(Pair(item_id, r["prompt"], r["response_a"], r["response_b"], ref))
            m = {c: r[c] for c in _META_COLUMNS if c in r and not _isna(r[c])}
            m.update(prompt=r["prompt"], response_a=r["response_a"], response_b=r["response_b"])
            meta[item_id] = m
        return items, meta
    items = list(pairs)
    meta = {
        p.item_id: {"prompt": p.prompt, "response_a": p.response_a, "response_b": p.response_b}
        for p in items
    }
    return items, meta


def _isna(v: object) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))
