"""SQLite store of judgments and perplexities (WAL), keyed by a content hash of what
changes the output. The store owns every table and every SQL statement of judging:
``judgments`` and ``items`` (what was judged, for export), ``perplexities`` (one row
per scored text), ``perplexity_judges`` (which model's perplexities stand for a
judge, for ``ppl_a``/``ppl_b`` in :meth:`Store.export_pairs`), and ``leases`` and
``lease_runs`` (which running run is judging which judgment: :mod:`recuse.judging.leases`).

The key hashes the judge (model id + revision), the rendered prompt, the protocol
version and the decoding parameters; never timeouts, concurrency or batch sizes.
The runner commits finished judgments at least every 0.1 s, so a killed run keeps
all but the last moment of work; ``failed`` rows carry a reason and are retried by
the next run, ``ok`` and ``unparsed`` rows are final. Nothing secret is ever
written here: rows hold model ids, prompts' item ids, scores, generated text and
failure reasons only (the HTTP backend scrubs every text a server sends).

Opening checks the file (``PRAGMA quick_check``): a damaged store is an
:class:`~recuse.errors.InputError` saying what to do, before any work. A store
opened with ``read_only=True`` (export) is never written, so it can be read from
read-only media (SQLite's ``mode=ro``, or ``immutable=1`` where even the WAL index
cannot be created). Every SQLite error met later becomes one line: a damaged page
an :class:`~recuse.errors.InputError`, a full disk or a read-only file an
:class:`~recuse.errors.OutputError`; what was committed before stays.

Export never refuses a store for one bad row: an ``ok`` row without a usable
value (written by an older version, or by hand) is exported as ``failed``.
"""

from __future__ import annotations

import contextlib
import json
import math
import operator
import os
import sqlite3
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import recuse.judging.leases as leasing
from recuse.choices import JudgmentKind as JudgmentKind
from recuse.errors import ConfigError, InputError, OutputError, ReaderNote, RecuseError
from recuse.files import is_file
from recuse.judging.leases import Holder, Leased, LeaseId
from recuse.judging.protocols import (
    SPELLING_OUTSIDE,
    content_key,
    json_text,
    perplexity_key,
    response_prompt,
)
from recuse.judging.served import (
    EarlierRun,
    Served,
    mixed_runs,
    read_served,
    served_json,
    served_words,
)
from recuse.tables import validate_pairs, validate_ratings

__all__ = [
    "PROMPT_COLUMNS",
    "RUN_CLOCK",
    "Judgment",
    "JudgmentKind",
    "Perplexity",
    "RunRecord",
    "Store",
    "content_key",
    "no_store",
    "prompt_line",
]


_JUDGMENTS = """
CREATE TABLE IF NOT EXISTS judgments (
    key TEXT NOT NULL,
    kind TEXT NOT NULL,
    judge TEXT NOT NULL,
    item_id TEXT NOT NULL,
    slot TEXT NOT NULL,
    status TEXT NOT NULL,
    value REAL,
    p_slot_a REAL,
    mass REAL,
    p_tie REAL,
    label TEXT,
    text TEXT,
    reason TEXT,
    attempts INTEGER NOT NULL DEFAULT 1,
    created_at REAL NOT NULL,
    PRIMARY KEY (key, item_id, slot, judge)
);
"""
_SCHEMA = (
    _JUDGMENTS
    + """
CREATE INDEX IF NOT EXISTS judgments_item ON judgments (kind, judge, item_id, slot);
CREATE TABLE IF NOT EXISTS items (
    kind TEXT NOT NULL,
    item_id TEXT NOT NULL,
    meta TEXT NOT NULL,
    PRIMARY KEY (kind, item_id)
);
CREATE TABLE IF NOT EXISTS perplexities (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    revision TEXT NOT NULL,
    status TEXT NOT NULL,
    n_tokens INTEGER,
    sum_logprob REAL,
    reason TEXT,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS rewrites (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    revision TEXT NOT NULL,
    status TEXT NOT NULL,
    text TEXT,
    reason TEXT,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    judge TEXT NOT NULL,
    judgments INTEGER NOT NULL,
    seconds REAL NOT NULL,
    tokens_in INTEGER,
    tokens_out INTEGER,
    created_at REAL NOT NULL,
    hardware TEXT,
    device TEXT,
    block_params INTEGER,
    clock TEXT,
    run TEXT,
    ended INTEGER,
    served TEXT,
    rendering TEXT
);
CREATE TABLE IF NOT EXISTS served_models (
    what TEXT NOT NULL,
    model TEXT NOT NULL,
    revision TEXT NOT NULL,
    name TEXT NOT NULL,
    answers INTEGER NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (what, model, revision, name)
);
CREATE TABLE IF NOT EXISTS judge_models (
    judge TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    revision TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS judge_asked (
    judge TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS judge_prompts (
    judge TEXT PRIMARY KEY,
    prompt TEXT NOT NULL,
    name TEXT NOT NULL,
    created_at REAL NOT NULL,
    format TEXT,
    sha256 TEXT
);
CREATE TABLE IF NOT EXISTS perplexity_judges (
    judge TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    revision TEXT NOT NULL,
    route TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS leases (
    judge TEXT NOT NULL,
    kind TEXT NOT NULL,
    item_id TEXT NOT NULL,
    slot TEXT NOT NULL,
    run TEXT NOT NULL,
    PRIMARY KEY (judge, kind, item_id, slot)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lease_runs (
    run TEXT PRIMARY KEY,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    started REAL NOT NULL,
    heartbeat REAL NOT NULL,
    process_start TEXT
);
"""
)


@dataclass(frozen=True)
class Judgment:
    """One stored judgment. Pairwise: ``slot`` is the order ("first"/"second") and
    ``value`` P(a better) in the a/b frame. Likert: ``slot`` is the dimension and
    ``value`` the rating. ``value`` is NaN unless ``status == "ok"``."""

    key: str
    kind: JudgmentKind
    judge: str
    item_id: str
    slot: str
    status: str
    value: float = math.nan
    p_slot_a: float = math.nan
    mass: float = math.nan
    p_tie: float = math.nan
    label: str | None = None
    text: str | None = None
    reason: str | None = None
    attempts: int = 1


_FLOATS = ("value", "p_slot_a", "mass", "p_tie")

#: what a run's recorded seconds time (the runs table's ``clock``): from its first call
#: to its last outcome (:class:`recuse.judging.rate.RunClock`). A run an earlier recuse
#: recorded has none: its seconds are the whole run's wall time
RUN_CLOCK = "first call to last outcome"
#: the columns :meth:`Store.export_pairs` names each verdict's judge prompt in
PROMPT_COLUMNS = ("judge_prompt", "judge_prompt_format", "judge_prompt_sha256")
#: what :meth:`Store.runs` says of each run (its ``state``): it recorded its end; its
#: process still runs; it ended without recording its end (killed: ``kill -9``, the
#: machine lost; or its end could not be written: a full disk), its record as its last
#: commit left it
RUN_STATES = ("ended", "running", "killed")


@dataclass(frozen=True)
class RunRecord:
    """A run's row of the runs table (:meth:`Store.put_run`), as it stands: ``run`` its
    id (the :class:`~recuse.judging.leases.Holder`'s), ``judgments`` the backend
    answered so far (ok or unparsed), ``seconds`` its clock so far (first call to last
    outcome), ``tokens`` in/out (None: not reported), ``ended`` whether it is its last
    (the run recorded its end), ``served`` ``{served model name: answers}`` its
    server's answers named (:mod:`recuse.judging.served`; empty: none). Written with
    each commit of the run's judgments (:meth:`Store.put`), in the same transaction, so
    a killed run's record holds what its last commit stored."""

    judge: str
    run: str
    judgments: int
    seconds: float
    tokens: tuple[int, int] | None = None
    hardware: str = ""
    device: str = ""
    block_params: int | None = None
    ended: bool = False
    served: Mapping[str, int] = field(default_factory=dict)
    #: who wrote the prompt text a server's model read
    #: (:attr:`~recuse.judging.backends.base.Backend.rendering`); empty for a local model
    rendering: str = ""


@dataclass(frozen=True)
class Perplexity:
    """The log-probs of one text after its prompt: ``n_tokens`` scored tokens summing
    to ``sum_logprob`` (NaN unless ``status == "ok"``; a failure has a ``reason``)."""

    key: str
    status: str
    n_tokens: int = 0
    sum_logprob: float = math.nan
    reason: str | None = None

    @property
    def mean_logprob(self) -> float:
        ok = self.status == "ok" and self.n_tokens > 0
        return self.sum_logprob / self.n_tokens if ok else math.nan

    @property
    def ppl(self) -> float:
        mean = self.mean_logprob
        return math.exp(-mean) if not math.isnan(mean) else math.nan


@dataclass(frozen=True)
class Rewrite:
    """A model's rewrite of one text (probes): ``ok`` with its ``text``; ``unparsed``
    (empty, or cut at the token limit: kept, never used, not redone — greedy decoding
    would give it again) or ``failed`` (retried by the next run) with a ``reason``."""

    key: str
    status: str
    text: str | None = None
    reason: str | None = None


def _sql(v: Any) -> Any:
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


#: a judgment's fields in :attr:`Store.COLUMNS` order
_fields = operator.attrgetter(*Judgment.__dataclass_fields__)


class Store:
    """A judgments database at ``path`` (created on first use unless ``read_only``).

    One thread uses a store: the one that opened it, or the worker it is lent to
    (:meth:`lent`) while it waits for that worker. Another thread's use is refused
    (:class:`~recuse.errors.ConfigError`), as SQLite's own check refused it (its
    connection is opened with ``check_same_thread=False`` so that a lent store can be
    used by the worker; this check, made on every use, takes the place of SQLite's)."""

    COLUMNS = tuple(Judgment.__dataclass_fields__)

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self._tables: set[str] = set()
        #: the run whose heartbeat each commit refreshes (:meth:`take_leases`)
        self._beat: str | None = None
        self._beat_at = 0.0
        #: the one thread that may use the connection now (:meth:`lent`)
        self._user = threading.current_thread()
        if self.path.parent and not self.path.parent.exists():
            raise InputError(
                "the folder for the store does not exist",
                file=self.path,
                fix="create the folder or give another --out path",
            )
        if read_only and not self.path.is_file():
            raise no_store(self.path, fix="run `recuse judge` first")
        self.conn = self._connect()

    def _connect(self) -> sqlite3.Connection:
        if not self.read_only:
            with self._guard():
                conn = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False)
                try:
                    self._check(conn)
                    conn.execute("PRAGMA journal_mode=WAL")
                    conn.execute("PRAGMA synchronous=NORMAL")
                    _migrate(conn)
                    conn.executescript(_SCHEMA)
                    _add_run_hardware(conn)
                    _add_prompt_record(conn)
                    self._tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
                except BaseException:
                    conn.close()
                    raise
            return conn
        # Read-write where the file system allows it (SQLite then tidies the WAL files
        # up on close), else read-only, else immutable (read-only media, where not
        # even the WAL index can be made). Nothing is written either way.
        uri = self.path.resolve().as_uri()
        for flags in ("mode=rw", "mode=ro", "mode=ro&immutable=1"):
            conn = sqlite3.connect(
                f"{uri}?{flags}", uri=True, timeout=30.0, check_same_thread=False
            )
            try:
                self._check(conn)
                tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            except sqlite3.Error as exc:
                conn.close()
                name = str(getattr(exc, "sqlite_errorname", ""))
                if "immutable" in flags or not name.startswith(
                    ("SQLITE_CANTOPEN", "SQLITE_READONLY")
                ):
                    raise _database_error(exc, self.path) from None
                continue
            except BaseException:
                conn.close()
                raise
            if not {"judgments", "items"} <= tables:
                conn.close()
                raise InputError(
                    "not a recuse judgment store (it has no judgments table)",
                    file=self.path,
                    fix="give a store written by `recuse judge`",
                )
            self._tables = tables
            return conn
        raise AssertionError("unreachable")  # pragma: no cover

    def _check(self, conn: sqlite3.Connection) -> None:
        """Refuse a damaged file before any work (reads every page once)."""
        problems = [str(r[0]) for r in conn.execute("PRAGMA quick_check(3)")]
        if problems != ["ok"]:
            raise _damaged(self.path, "; ".join(problems))

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        """SQLite errors as one-line recuse errors naming the store, and a use of it by
        a thread other than its user refused (every use of the connection is in here)."""
        self._held_here()
        try:
            yield
        except sqlite3.Error as exc:
            raise _database_error(exc, self.path, kept=lambda: kept_words(self.path)) from None

    def _rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """All rows of one query (every read goes through here)."""
        with self._guard():
            return self.conn.execute(sql, params).fetchall()

    def _write(
        self,
        sql: str,
        rows: Sequence[Sequence[object]],
        *,
        then: Callable[[], None] | None = None,
    ) -> None:
        """One committed transaction of ``sql`` over ``rows`` (every write goes here),
        ``then`` (more statements on :attr:`conn`) in it too."""
        if self.read_only:
            raise OutputError(f"cannot write {self.path}: the store was opened read-only")
        if not rows and then is None:
            return
        with self._guard(), self.conn:
            if rows:
                self.conn.executemany(sql, rows)
            if then is not None:
                then()
            now = time.time()
            if self._beat is not None and now - self._beat_at >= leasing.HEARTBEAT_SECONDS:
                # the leasing run's heartbeat, in the same commit (a page of the WAL)
                self.conn.execute(
                    "UPDATE lease_runs SET heartbeat = ? WHERE run = ?", (now, self._beat)
                )
                self._beat_at = now

    def close(self) -> None:
        with self._guard():
            self.conn.close()

    def _held_here(self) -> threading.Thread:
        """This thread, where it is the store's user; else a ConfigError."""
        here = threading.current_thread()
        if here is not self._user:
            raise ConfigError(
                f"the store {self.path} is used by thread {here.name!r} while thread "
                f"{self._user.name!r} holds it: a Store is used by one thread at a time "
                "(open one Store per thread)"
            )
        return here

    @contextlib.contextmanager
    def lent(self, worker: threading.Thread) -> Iterator[None]:
        """The store used by ``worker`` alone for the block, by this thread (its user)
        again after it: for a caller that waits, for the block, while the worker uses it
        (:func:`recuse.interrupt.run` where a notebook's event loop runs). One thread
        uses the connection at any time, as SQLite's check ensured for its opener: the
        connection, its transactions and :attr:`_beat` are never shared. The caller
        must not end the block before the worker is done with the store."""
        here = self._held_here()
        self._user = worker
        try:
            yield
        finally:
            self._user = here

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writing ---------------------------------------------------------------------

    def put(
        self,
        judgments: Iterable[Judgment],
        *,
        run: RunRecord | None = None,
        guard: Callable[[], None] | None = None,
    ) -> None:
        """Insert or replace judgments in one transaction (committed on return), with
        ``run``'s record as it stands now (:meth:`put_run`) in the same transaction (no
        write of its own: a killed run's record holds what its last commit stored).
        ``guard`` is called in the transaction, the judgments written and the store's
        write lock held (no other commit comes between its reads and this one): what it
        raises rolls the transaction back (the runner's check of the served models of
        runs at once, :mod:`recuse.judging.served`)."""
        now = time.time()  # fields read directly: dataclasses.asdict deep-copies
        # NaN as NULL (as _sql, inline: 3x faster per row)
        rows = [
            (*[None if isinstance(v, float) and v != v else v for v in _fields(j)], now)
            for j in judgments
        ]
        cols = ", ".join((*self.COLUMNS, "created_at"))
        marks = ", ".join("?" * (len(self.COLUMNS) + 1))

        def then() -> None:
            if guard is not None:
                guard()
            if run is not None:
                self._record_run(run)

        self._write(
            f"INSERT OR REPLACE INTO judgments ({cols}) VALUES ({marks})",
            rows,
            then=None if run is None and guard is None else then,
        )

    def put_items(self, kind: JudgmentKind, items: Mapping[str, Mapping[str, object]]) -> None:
        """Remember what was judged (texts, generator ids, labels) for export."""
        texts: dict[str, str] = {}  # each distinct text's JSON, written once
        rows = [(kind, item_id, _meta_json(meta, texts)) for item_id, meta in items.items()]
        self._write("INSERT OR REPLACE INTO items (kind, item_id, meta) VALUES (?, ?, ?)", rows)

    def claim_judge(self, judge: str, *, model_id: str, revision: str, keys: Iterable[str]) -> bool:
        """Record that ``judge``'s judgments in this store come from ``model_id`` at
        ``revision``; refuse a second model under the same judge id. True where this
        call recorded it (see :meth:`release_judge`).

        One judge id stands for one model: two models' verdicts under one id would be
        merged by export. A judge first seen here is recorded. A judge with rows
        written before stores recorded their models is recorded when at least one of
        those rows has a key of this run (``keys``; a key hashes the model id and
        revision, so a shared key proves the same weights); with none in common it
        is refused, since nothing says which weights made the old rows.
        """
        fix = (
            "give this model another judge id (--judge-id NAME, or Runner(judge=...)) so "
            "both are kept apart, or judge into a new store (--out)"
        )

        def claimed() -> bool:
            """Is ``judge`` recorded (refused where by another model)?"""
            rows = self._rows("SELECT model, revision FROM judge_models WHERE judge = ?", (judge,))
            if not rows:
                return False
            model, rev = str(rows[0][0]), str(rows[0][1])
            if (model, rev) != (model_id, revision):
                raise ConfigError(
                    f"{self.path}: judge id {judge!r} already holds judgments of model "
                    f"{model!r} at revision {rev or '(none)'}; this model is {model_id!r} at "
                    f"revision {revision or '(none)'} (other weights or dtype) — {fix}"
                )
            return True

        if claimed():
            return False
        (n,) = self._rows("SELECT COUNT(*) FROM judgments WHERE judge = ?", (judge,))[0]
        if n:
            wanted = set(keys)
            old = self._rows("SELECT DISTINCT key FROM judgments WHERE judge = ?", (judge,))
            if not any(str(k) in wanted for (k,) in old):
                raise ConfigError(
                    f"{self.path}: judge id {judge!r} holds {n} judgments written before "
                    "recuse recorded which weights made them, none of them by this model "
                    f"({model_id!r} at revision {revision or '(none)'}) on these items — {fix}"
                )
        # another run on this store may have claimed it since: the first claim stands
        self._write(
            "INSERT OR IGNORE INTO judge_models (judge, model, revision, created_at) "
            "VALUES (?, ?, ?, ?)",
            [(judge, model_id, revision, time.time())],
        )
        claimed()
        return True

    def claim_asked(self, judge: str, *, model: str) -> bool:
        """Record that a served ``judge``'s verdicts in this store are the answers of the
        model named ``model`` on the server; refuse another name under the same judge id.
        True where this call recorded it (see :meth:`release_asked`).

        A served judge's content keys hash its judge id's model id (``recuse judge``'s
        is the judge id), not the name asked: ``--model beta`` under a judge id whose
        verdicts ``--model alpha`` gave found every one stored and asked nothing, its
        summary saying the judge was judged. A record whose runs stored no verdict (every
        request failed, or a run still going) is not taken over by another model (a run
        in flight would mix two models under one id): the refusal says no verdict is
        stored. A store written before this records the first name asked of it: which
        model gave its earlier verdicts, nothing in it says."""

        def recorded() -> str | None:
            rows = self._rows("SELECT model FROM judge_asked WHERE judge = ?", (judge,))
            return str(rows[0][0]) if rows else None

        def check(before: str, held: int) -> None:
            if before != model:
                what = (
                    f"holds the verdicts of model {before!r} asked of the server"
                    if held
                    else f"was claimed by a run asking for model {before!r} (its requests "
                    "failed, or it is still running: no verdict stored yet)"
                )
                raise ConfigError(
                    f"{self.path}: judge id {judge!r} {what}; this run asks for {model!r} — "
                    "give it another judge id (--judge-id NAME, or Runner(judge=...)) so both "
                    "are kept apart, or judge into a new store (--out)"
                )

        before = recorded()
        (held,) = self._rows(  # its verdicts (failed rows are none)
            "SELECT COUNT(*) FROM judgments WHERE judge = ? AND status != 'failed'", (judge,)
        )[0]
        if before is not None:
            check(before, held)
            return False
        if held:  # written before the record: which model gave them, nothing says
            warnings.warn(
                ReaderNote(
                    f"{self.path}: judge id {judge!r} holds {held:,} verdicts written before "
                    "recuse recorded the model a served judge asks for: they are taken as the "
                    f"verdicts of {model!r} from now on — if another model gave them, judge "
                    "into a new store (--out) or under another --judge-id"
                ),
                stacklevel=2,
            )
        self._write(
            "INSERT OR IGNORE INTO judge_asked (judge, model, created_at) VALUES (?, ?, ?)",
            [(judge, model, time.time())],
        )
        check(recorded() or model, held)  # another run may have claimed it since: it stands
        return True

    def release_asked(self, judge: str, *, model: str) -> None:
        """Withdraw :meth:`claim_asked`'s record where the store holds no judgment of
        ``judge`` (as :meth:`release_judge`)."""
        self._write(
            "DELETE FROM judge_asked WHERE judge = ? AND model = ? AND "
            "NOT EXISTS (SELECT 1 FROM judgments WHERE judge = ?)",
            [(judge, model, judge)],
        )

    def release_judge(self, judge: str, *, model_id: str, revision: str) -> None:
        """Withdraw :meth:`claim_judge`'s record for ``judge`` (``model_id`` at
        ``revision``) where the store holds no judgment of ``judge``: a run that judged
        nothing says nothing about which weights the id stands for."""
        self._write(
            "DELETE FROM judge_models WHERE judge = ? AND model = ? AND revision = ? AND "
            "NOT EXISTS (SELECT 1 FROM judgments WHERE judge = ?)",
            [(judge, model_id, revision, judge)],
        )

    def claim_prompt(
        self,
        judge: str,
        *,
        prompt: str,
        name: str,
        keys: Iterable[str],
        format: str = "",
        sha256: str = "",
    ) -> bool:
        """Record that ``judge``'s pairwise verdicts here come from the judge prompt
        ``prompt`` (a judge template's sha256, or recuse's own prompt); refuse another.
        True where this call recorded it (see :meth:`release_prompt`). ``name``,
        ``format`` (the template's file kind, or ``recuse``) and ``sha256`` (its content
        hash) are kept with it: export puts them on every verdict of ``judge``
        (:meth:`judge_prompts`).

        One judge id stands for one prompt: export keeps one verdict per (judge, item,
        order), so two prompts' verdicts under one id would be merged. A judge whose
        pairwise rows predate this record was judged with recuse's own prompt (the only
        one there was): a template is refused there unless one of those rows has a key
        of this run (``keys``: a key hashes the template, so a shared key proves it).
        """
        rows = self._rows("SELECT prompt, name FROM judge_prompts WHERE judge = ?", (judge,))
        fix = (
            "give this prompt's verdicts another judge id (--judge-id NAME, or "
            "Runner(judge=...)), or judge into a new store (--out)"
        )
        if rows:
            held, held_name = str(rows[0][0]), str(rows[0][1])
            if held != prompt:
                # the same name with other content: a template edited in place
                edited = (
                    " (the same name, other content: edited since?)" if held_name == name else ""
                )
                raise ConfigError(
                    f"{self.path}: judge id {judge!r} already holds verdicts made with the "
                    f"judge prompt {held_name!r} ({_prompt_hash(held)}); this run uses "
                    f"{name!r} ({_prompt_hash(prompt)}){edited} — {fix}"
                )
            if format or sha256:  # a claim of a store from before they were recorded
                self._write(
                    "UPDATE judge_prompts SET format = ?, sha256 = ? WHERE judge = ? AND "
                    "prompt = ? AND (format IS NULL OR sha256 IS NULL)",
                    [(format or None, sha256 or None, judge, prompt)],
                )
            return False
        old = self._rows(
            "SELECT DISTINCT key FROM judgments WHERE judge = ? AND kind = 'pairwise'", (judge,)
        )
        if old and not prompt.startswith("recuse:"):
            wanted = set(keys)
            if not any(str(k) in wanted for (k,) in old):
                raise ConfigError(
                    f"{self.path}: judge id {judge!r} holds verdicts made with recuse's own "
                    f"judge prompt; this run uses {name!r} — {fix}"
                )
        # another run on this store may have claimed it since (two runs started at
        # once): the first claim stands, and this one is checked against it
        self._write(
            "INSERT OR IGNORE INTO judge_prompts (judge, prompt, name, created_at, format, "
            "sha256) VALUES (?, ?, ?, ?, ?, ?)",
            [(judge, prompt, name, time.time(), format or None, sha256 or None)],
        )
        self.claim_prompt(judge, prompt=prompt, name=name, keys=(), format=format, sha256=sha256)
        return True

    def release_prompt(self, judge: str, *, prompt: str) -> None:
        """Withdraw :meth:`claim_prompt`'s record for ``judge`` (made with ``prompt``)
        where the store holds no pairwise verdict of ``judge``: a run that judged
        nothing says nothing about which prompt the id stands for."""
        self._write(
            "DELETE FROM judge_prompts WHERE judge = ? AND prompt = ? AND NOT EXISTS "
            "(SELECT 1 FROM judgments WHERE judge = ? AND kind = 'pairwise')",
            [(judge, prompt, judge)],
        )

    def ok_verdicts(self, judge: str) -> list[tuple[float | None, str | None]]:
        """Each ok pairwise verdict of ``judge`` that export keeps, the newest of each
        (item, order) where several content keys hold one (:func:`_one_per_order`: a run
        keyed otherwise, a server's endpoint, judged it again), as ``(mass, reason)``:
        p(A) + p(B) where it was read from probabilities (None for one read from a
        reply's text), and its stored reason (None for most: an ok verdict has one where
        its p_a is bounded, not exact, as :func:`recuse.judging.handlers.pairwise.bounded`
        says)."""
        rows = self._rows(
            "SELECT item_id, slot, status, mass, reason FROM judgments WHERE judge = ? AND "
            "kind = 'pairwise' ORDER BY created_at, rowid",
            (judge,),
        )
        newest = {(item, slot): (status, mass, why) for item, slot, status, mass, why in rows}
        return [
            (float(m) if isinstance(m, (int, float)) else None, why)
            for status, m, why in newest.values()
            if status == "ok"
        ]

    def verdict_masses(self, judge: str) -> list[float]:
        """p(A) + p(B) of each of :meth:`ok_verdicts` read from probabilities."""
        return [m for m, _ in self.ok_verdicts(judge) if m is not None]

    def judge_prompts(self) -> dict[str, tuple[str, str, str]]:
        """``{judge: (name, format, sha256)}`` of the judge prompt each judge's pairwise
        verdicts were made with (:meth:`claim_prompt`). A store from before formats and
        hashes were recorded gives a template's hash from its prompt id and ``""``
        where nothing says; judges judged before prompts were recorded are absent."""
        if "judge_prompts" not in self._tables:
            return {}
        have = {r[1] for r in self._rows("PRAGMA table_info(judge_prompts)")}
        picked = [c if c in have else f"NULL AS {c}" for c in ("format", "sha256")]
        rows = self._rows(f"SELECT judge, prompt, name, {', '.join(picked)} FROM judge_prompts")
        out = {}
        for judge, prompt, name, kind, sha in rows:
            head = str(prompt).partition("|")[0]
            if not sha and _is_sha256(head):
                sha = head
            out[str(judge)] = (str(name), str(kind or ""), str(sha or ""))
        return out

    def judge_models(self) -> dict[str, tuple[str, str]]:
        """``{judge: (model id, revision)}`` recorded by :meth:`claim_judge`."""
        if "judge_models" not in self._tables:
            return {}
        rows = self._rows("SELECT judge, model, revision FROM judge_models")
        return {str(j): (str(m), str(r)) for j, m, r in rows}

    # --- leases ----------------------------------------------------------------------

    def take_leases(self, run: Holder, wanted: Iterable[LeaseId]) -> Leased:
        """Lease the judgments ``wanted`` to ``run`` (:mod:`recuse.judging.leases`), in
        one transaction: the leases of dead runs are dropped first, then every one not
        held by a live run is ``run``'s. Until :meth:`drop_leases`, a commit of this store
        refreshes ``run``'s heartbeat where it is ``leases.HEARTBEAT_SECONDS`` old (in
        the same transaction: no write of its own)."""
        ids = list(dict.fromkeys(wanted))
        now = time.time()
        conn = self.conn
        with self._guard():
            conn.execute("BEGIN IMMEDIATE")  # one run leases at a time
            try:
                runs = [
                    Holder(
                        str(r), int(p), str(h), float(s), float(b), None if t is None else str(t)
                    )
                    for r, p, h, s, b, t in conn.execute(
                        "SELECT run, pid, host, started, heartbeat, process_start FROM lease_runs"
                    )
                ]
                live = {h.run: h for h in runs if h.alive(now)}
                dead = [(h.run,) for h in runs if h.run not in live]
                conn.executemany("DELETE FROM lease_runs WHERE run = ?", dead)
                conn.execute("DELETE FROM leases WHERE run NOT IN (SELECT run FROM lease_runs)")
                conn.execute(
                    "INSERT INTO lease_runs (run, pid, host, started, heartbeat, process_start) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (run.run, run.pid, run.host, run.started, run.heartbeat, run.process_start),
                )
                taken = conn.executemany(
                    "INSERT OR IGNORE INTO leases (judge, kind, item_id, slot, run) "
                    "VALUES (?, ?, ?, ?, ?)",
                    [(*i, run.run) for i in ids],
                ).rowcount
                elsewhere: dict[LeaseId, str] = {}
                if taken != len(ids):
                    asked = set(ids)
                    for judge in sorted({i[0] for i in ids}):
                        for *lease, holder in conn.execute(
                            "SELECT judge, kind, item_id, slot, run FROM leases "
                            "WHERE judge = ? AND run != ?",
                            (judge, run.run),
                        ):
                            key = (str(lease[0]), str(lease[1]), str(lease[2]), str(lease[3]))
                            if key in asked:
                                elsewhere[key] = str(holder)
                conn.commit()
            except BaseException:
                conn.rollback()
                raise
        self._beat, self._beat_at = run.run, run.heartbeat
        holders = tuple(live[r] for r in dict.fromkeys(elsewhere.values()) if r in live)
        return Leased(run, frozenset(elsewhere), holders)

    def drop_leases(self, run: Holder) -> None:
        """Give back every lease of ``run`` (its run has ended)."""
        self._beat = None
        with self._guard(), self.conn:
            self.conn.execute("DELETE FROM leases WHERE run = ?", (run.run,))
            self.conn.execute("DELETE FROM lease_runs WHERE run = ?", (run.run,))

    def leases(self) -> dict[LeaseId, str]:
        """``{(judge, kind, item id, slot): run id}`` of every lease held now."""
        if "leases" not in self._tables:
            return {}
        rows = self._rows("SELECT judge, kind, item_id, slot, run FROM leases")
        return {(str(j), str(k), str(i), str(s)): str(r) for j, k, i, s, r in rows}

    # --- reading ---------------------------------------------------------------------

    def lookup(self, keys: Iterable[str]) -> list[Judgment]:
        """Stored judgments with any of these content keys (for any item). ``keys``
        is not read where the store holds no judgment: a run's tasks on a fresh store
        then compute their keys as their outcomes are stored, beside the device's
        passes, not all before the first one (see :class:`~recuse.judging.tasks.Task`)."""
        if not self._rows("SELECT 1 FROM judgments LIMIT 1"):
            return []
        keys = sorted(set(keys))
        out: list[Judgment] = []
        cols = ", ".join(self.COLUMNS)
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            for row in self._rows(
                f"SELECT {cols} FROM judgments WHERE key IN ({marks}) ORDER BY created_at, rowid",
                chunk,
            ):
                values: dict[str, Any] = {
                    c: (math.nan if v is None and c in _FLOATS else v)
                    for c, v in zip(self.COLUMNS, row, strict=True)
                }
                out.append(Judgment(**values))
        return out

    def judgments(self) -> pd.DataFrame:
        """Every stored judgment, oldest first (without timestamps)."""
        cols = ", ".join(self.COLUMNS)
        rows = self._rows(f"SELECT {cols} FROM judgments ORDER BY created_at, rowid")
        df = pd.DataFrame(rows, columns=list(self.COLUMNS))
        for c in _FLOATS:
            df[c] = pd.to_numeric(df[c], errors="coerce").astype(float)
        return df

    def put_run(
        self,
        judge: str,
        *,
        judgments: int,
        seconds: float,
        tokens: tuple[int, int] | None,
        hardware: str = "",
        device: str = "",
        block_params: int | None = None,
        run: str = "",
        served: Mapping[str, int] | None = None,
        rendering: str = "",
    ) -> None:
        """What one run computed, recorded at its end: judgments the backend answered
        (ok or unparsed; not copies, not failed ones), the run's wall time from its first
        call to its last outcome (:class:`recuse.judging.rate.RunClock`), the tokens
        in/out the backend reported (None: not reported), where a local model ran
        (``"cuda:0 bfloat16"``; empty for a server), the accelerator's name (``"NVIDIA
        H200"``; empty off a GPU) and the model's transformer-block parameters (None:
        unknown): the card's model FLOP utilisation. ``run``: the run's id, whose record
        its commits wrote as it went (:meth:`put`): that record is the one ended.
        ``served``: the served model names its server's answers gave, with how many
        answers named each (:mod:`recuse.judging.served`). ``rendering``: who wrote
        the prompt text a server's model read (empty for a local model)."""
        record = RunRecord(
            judge, run, judgments, seconds, tokens, hardware, device, block_params,
            ended=True, served=served or {}, rendering=rendering,
        )  # fmt: skip
        self._write("", [], then=lambda: self._record_run(record))

    def _record_run(self, record: RunRecord) -> None:
        """``record`` in the runs table (inside a transaction of :meth:`_write`): the row
        of its run updated where there is one, else added."""
        tin, tout = record.tokens if record.tokens is not None else (None, None)
        figures = (
            record.judgments, record.seconds, tin, tout, record.hardware or None,
            record.device or None, record.block_params, RUN_CLOCK, int(record.ended),
            served_json(record.served), record.rendering or None,
        )  # fmt: skip
        if record.run and (
            self.conn.execute(
                "UPDATE runs SET judgments = ?, seconds = ?, tokens_in = ?, tokens_out = ?, "
                "hardware = ?, device = ?, block_params = ?, clock = ?, ended = ?, "
                "served = ?, rendering = ? WHERE run = ?",
                (*figures, record.run),
            ).rowcount
        ):
            return
        self.conn.execute(
            "INSERT INTO runs (judgments, seconds, tokens_in, tokens_out, hardware, device, "
            "block_params, clock, ended, served, rendering, judge, run, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*figures, record.judge, record.run or None, time.time()),
        )

    def runs(self) -> pd.DataFrame:
        """Every recorded run, oldest first: judge, judgments, seconds, tokens_in,
        tokens_out, hardware, device, block_params, clock (:data:`RUN_CLOCK` where the
        seconds run from the first call to the last outcome; None in a run an earlier
        recuse recorded, whose seconds are the whole run's wall time) and state (one of
        :data:`RUN_STATES`: a run's record is written with each commit of its judgments,
        so a run killed (``kill -9``) is there, as its last commit left it, ``killed``;
        one whose process still runs is ``running``; the others, those of an earlier
        recuse too, recorded their end). An old store without the table has none; runs
        recorded before a column was have none in it.

        ``served`` names the models its server's answers named as serving them, with
        how many answers named each (``'gpt-4o-2024-08-06' (120 answers)``; None where
        none was recorded: a local model, a server that names none, a run an earlier
        recuse recorded); ``served_note`` says, of a run whose judge's verdicts now come
        from a second served model, which (:func:`recuse.judging.served.mixed_runs`),
        else None; ``served_names`` the served names alone (a tuple, empty where none),
        which the evaluator card says. ``rendering`` says who wrote the prompt text a
        server's model read (``recuse's ChatML over /v1/completions``; None for a local
        model and a run an earlier recuse recorded).

        A column ``damaged`` says, of a run no real run could have recorded (a hand-edited
        or damaged store: :func:`run_damage`), what is wrong with it, naming the store and
        the run (``STORE: run 3 of judge 'j' records 5 judgments in 1e-300 seconds ...``);
        None for the others. The card leaves such a run out and says so
        (:func:`recuse.judging.card.cards`): one bad row refused the whole store, the
        audit with it, and a run of 1e-300 seconds, which was not refused, gave the card
        a rate of three hundred digits."""
        cols = [
            "judge", "judgments", "seconds", "tokens_in", "tokens_out", "hardware", "device",
            "block_params", "clock",
        ]  # fmt: skip
        self.conn  # noqa: B018 - opens the store, which lists its tables
        if "runs" not in self._tables:
            return pd.DataFrame(
                columns=[*cols, "state", "served", "served_note", "served_names", "rendering"]
            )
        have = {r[1] for r in self._rows("PRAGMA table_info(runs)")}
        wanted = (*cols, "run", "ended", "served", "rendering")
        picked = [c if c in have else f"NULL AS {c}" for c in wanted]
        rows = self._rows(f"SELECT {', '.join(picked)} FROM runs ORDER BY created_at, rowid")
        now = time.time()
        live = self._live_runs(now)
        damaged, states = [], []
        served = [(str(row[0]), read_served(row[-2])) for row in rows]
        for k, row in enumerate(rows, 1):
            judge, judgments, seconds, tin, tout, _, _, blocks, _, run, ended, _, _ = row
            what = run_damage(judgments, seconds, (tin, tout), blocks, ended, now=now)
            damaged.append(
                f"{self.path}: run {k} of judge {judge!r} in the runs table {what}"
                if what
                else None
            )
            states.append(
                "ended" if ended is None or ended == 1 else "running" if run in live else "killed"
            )
        out = pd.DataFrame([r[: len(cols)] for r in rows], columns=cols)
        out["state"] = pd.Series(states, index=out.index, dtype=object)
        out["served"] = pd.Series(
            [served_words(names) or None for _, names in served], index=out.index, dtype=object
        )
        out["served_note"] = pd.Series(mixed_runs(served), index=out.index, dtype=object)
        out["served_names"] = pd.Series(
            [tuple(names) for _, names in served], index=out.index, dtype=object
        )
        out["damaged"] = pd.Series(damaged, index=out.index, dtype=object)
        out["rendering"] = pd.Series(
            [r[-1] if isinstance(r[-1], str) and r[-1] else None for r in rows],
            index=out.index,
            dtype=object,
        )
        return out

    def served_runs(self, *judges: str) -> list[EarlierRun]:
        """The recorded runs of ``judges``, oldest first, each with its number among the
        store's runs, the verdicts it stored, the served model names its answers gave
        (:mod:`recuse.judging.served`; empty where none was recorded), its judge and
        its run id."""
        if "runs" not in self._tables:
            return []
        have = {r[1] for r in self._rows("PRAGMA table_info(runs)")}
        if "served" not in have:
            return []
        run = "run" if "run" in have else "NULL AS run"
        rows = self._rows(
            f"SELECT judge, judgments, served, {run}, rowid FROM runs ORDER BY created_at, rowid"
        )
        return [
            EarlierRun(
                k,
                n if type(n) is int else 0,
                read_served(names),
                judge=str(j),
                run=str(r or ""),
                row=int(i),
            )
            for k, (j, n, names, r, i) in enumerate(rows, 1)
            if j in judges
        ]

    def run_mark(self) -> int:
        """The runs table's last row so far (0: none), which :meth:`served_since` reads
        after: the runs recorded since."""
        if "runs" not in self._tables:
            return 0
        (mark,) = self._rows("SELECT MAX(rowid) FROM runs")[0]
        return int(mark or 0)

    def served_since(self, mark: int, *judges: str) -> list[tuple[int, str, dict[str, int]]]:
        """The runs of ``judges`` recorded after ``mark`` (:meth:`run_mark`) that name
        served models: each one's row, run id and ``{served name: answers}``. One
        indexed read of the few rows since, for a check in every commit."""
        if "runs" not in self._tables or not judges:
            return []
        have = {r[1] for r in self._rows("PRAGMA table_info(runs)")}
        if "served" not in have:
            return []
        run = "run" if "run" in have else "NULL AS run"
        marks = ", ".join("?" * len(judges))
        rows = self._rows(
            f"SELECT rowid, {run}, served FROM runs WHERE rowid > ? AND judge IN ({marks}) "
            "AND served IS NOT NULL",
            (mark, *judges),
        )
        return [(int(i), str(r or ""), read_served(names)) for i, r, names in rows]

    def _live_runs(self, now: float) -> set[str]:
        """The ids of the runs whose process still runs (:meth:`take_leases`' record of
        them, :meth:`~recuse.judging.leases.Holder.alive`)."""
        if "lease_runs" not in self._tables:
            return set()
        rows = self._rows(
            "SELECT run, pid, host, started, heartbeat, process_start FROM lease_runs"
        )
        holders = (
            Holder(str(r), int(p), str(h), float(s), float(b), None if t is None else str(t))
            for r, p, h, s, b, t in rows
        )
        return {h.run for h in holders if h.alive(now)}

    def items(self, kind: JudgmentKind) -> dict[str, dict[str, Any]]:
        rows = self._rows("SELECT item_id, meta FROM items WHERE kind = ?", (kind,))
        out: dict[str, dict[str, Any]] = {}
        for item_id, meta in rows:
            try:
                out[item_id] = json.loads(meta)
            except (TypeError, ValueError):
                raise _damaged(self.path, f"item {item_id!r} has unreadable metadata") from None
        return out

    # --- perplexities -------------------------------------------------------------

    def put_perplexities(
        self,
        model_id: str,
        revision: str,
        rows: Iterable[Perplexity],
        *,
        served: Served | None = None,
    ) -> None:
        """Insert or replace perplexity rows of model ``model_id`` in one transaction,
        with ``served`` (the served model names of a server's answers, :class:`Served`)
        checked and recorded in it."""
        now = time.time()
        values = [
            (
                r.key,
                model_id,
                revision,
                r.status,
                int(r.n_tokens),
                _sql(r.sum_logprob),
                r.reason,
                now,
            )
            for r in rows
        ]
        self._write(
            "INSERT OR REPLACE INTO perplexities "
            "(key, model, revision, status, n_tokens, sum_logprob, reason, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            values,
            then=None if served is None else lambda: self._put_served(served),
        )

    def stored_perplexities(self, keys: Iterable[str]) -> dict[str, Perplexity]:
        """The ``ok`` perplexity rows with these keys (failed ones are retried)."""
        if "perplexities" not in self._tables:
            return {}
        uniq = sorted(set(keys))
        out: dict[str, Perplexity] = {}
        for start in range(0, len(uniq), 500):
            chunk = uniq[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            for key, status, n, total, reason in self._rows(
                f"SELECT key, status, n_tokens, sum_logprob, reason FROM perplexities "
                f"WHERE key IN ({marks}) AND status = 'ok'",
                chunk,
            ):
                value = math.nan if total is None else float(total)
                out[key] = Perplexity(key, status, int(n or 0), value, reason)
        return out

    # --- rewrites -------------------------------------------------------------------

    def put_rewrites(
        self,
        model_id: str,
        revision: str,
        rows: Iterable[Rewrite],
        *,
        served: Served | None = None,
    ) -> None:
        """Insert or replace rewrite rows of model ``model_id`` in one transaction, with
        ``served`` checked and recorded in it (as :meth:`put_perplexities`)."""
        now = time.time()
        self._write(
            "INSERT OR REPLACE INTO rewrites (key, model, revision, status, text, reason, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(r.key, model_id, revision, r.status, r.text, r.reason, now) for r in rows],
            then=None if served is None else lambda: self._put_served(served),
        )

    # --- served model names of perplexities and rewrites ---------------------------

    def served_names(self, what: str, model_id: str, revision: str) -> dict[str, int]:
        """``{served model name: answers}`` recorded for the ``what`` (``perplexities``
        or ``rewrites``) of ``model_id`` at ``revision`` (:mod:`recuse.judging.served`),
        first recorded first; empty where none was (a store from before the record, or
        a backend that is no server)."""
        if "served_models" not in self._tables:
            return {}
        rows = self._rows(
            "SELECT name, answers FROM served_models WHERE what = ? AND model = ? AND "
            "revision = ? ORDER BY created_at, rowid",
            (what, model_id, revision),
        )
        return {str(name): int(n) for name, n in rows}

    def _put_served(self, served: Served) -> None:
        """In a write's transaction: ``served.guard`` (what it raises rolls the write
        back), then the answers each name gave since the last record added to it."""
        served.guard(self.served_names(served.what, served.model, served.revision))
        fresh = served.unrecorded()
        now = time.time()
        self.conn.executemany(
            "INSERT INTO served_models (what, model, revision, name, answers, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (what, model, revision, name) DO UPDATE "
            "SET answers = answers + excluded.answers",
            [(served.what, served.model, served.revision, n, k, now) for n, k in fresh.items()],
        )

    def stored_rewrites(self, keys: Iterable[str]) -> dict[str, Rewrite]:
        """The final rewrite rows with these keys: ``ok`` and ``unparsed`` (failed ones
        are retried)."""
        if "rewrites" not in self._tables:
            return {}
        uniq = sorted(set(keys))
        out: dict[str, Rewrite] = {}
        for start in range(0, len(uniq), 500):
            chunk = uniq[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            for key, status, text, reason in self._rows(
                f"SELECT key, status, text, reason FROM rewrites "
                f"WHERE key IN ({marks}) AND status IN ('ok', 'unparsed')",
                chunk,
            ):
                out[key] = Rewrite(key, status, text, reason)
        return out

    def link_perplexities(self, judge: str, *, model_id: str, revision: str, route: str) -> None:
        """Record that the perplexities of ``model_id`` (via ``route``) stand for ``judge``."""
        self._write(
            "INSERT OR REPLACE INTO perplexity_judges (judge, model, revision, route, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            [(judge, model_id, revision, route, time.time())],
        )

    def perplexity_links(self) -> dict[str, tuple[str, str, str]]:
        """``{judge: (model id, revision, route)}`` recorded by :meth:`link_perplexities`."""
        if "perplexity_judges" not in self._tables:
            return {}
        rows = self._rows("SELECT judge, model, revision, route FROM perplexity_judges")
        return {str(j): (str(m), str(r), str(route)) for j, m, r, route in rows}

    def judged_items(self, kind: JudgmentKind, judge: str) -> list[str]:
        """Ids of the items ``judge`` judged (any status), sorted."""
        rows = self._rows(
            "SELECT DISTINCT item_id FROM judgments WHERE kind = ? AND judge = ? ORDER BY item_id",
            (kind, judge),
        )
        return [str(r[0]) for r in rows]

    def judges(self, kind: JudgmentKind) -> list[str]:
        """Judges with judgments of ``kind``, sorted."""
        rows = self._rows(
            "SELECT DISTINCT judge FROM judgments WHERE kind = ? ORDER BY judge", (kind,)
        )
        return [str(r[0]) for r in rows]

    def attach_perplexities(self, pairs: pd.DataFrame) -> pd.DataFrame:
        """``pairs`` with ``ppl_a`` / ``ppl_b`` from the stored perplexities, where it has them.

        For the rows of every judge linked by :meth:`link_perplexities`, the perplexity
        of each response given the row's prompt under that judge's model (left as it
        was, NaN in an export, where it was not computed or failed). Without such a
        judge among the rows, ``pairs`` comes back unchanged (no columns added).
        """
        models = self.perplexity_links()
        need = {"judge", "prompt", "response_a", "response_b"}
        if not models or not need <= set(pairs.columns):
            return pairs
        judges = pairs["judge"].astype(object).where(pairs["judge"].notna(), None)
        mine = judges.isin(list(models)).to_numpy()
        if not mine.any():
            return pairs
        out = pairs.copy()
        positions = np.flatnonzero(mine)
        keys: dict[tuple[int, str], str] = {}
        for i in positions:
            model, revision, route = models[str(judges.iloc[i])]
            prompt = out["prompt"].iloc[i]
            if not isinstance(prompt, str):
                continue
            chat = response_prompt(prompt)
            for side in ("a", "b"):
                text = out[f"response_{side}"].iloc[i]
                if isinstance(text, str):
                    keys[(int(i), side)] = perplexity_key(model, revision, route, chat, text)
        found = self.stored_perplexities(keys.values())
        for side in ("a", "b"):
            col = f"ppl_{side}"
            values = (
                out[col].to_numpy(dtype=float, copy=True)
                if col in out.columns
                else np.full(len(out), np.nan)
            )
            for i in positions:
                key = keys.get((int(i), side))
                if key is not None and key in found:
                    values[i] = found[key].ppl
            out[col] = values
        return out

    # --- export ----------------------------------------------------------------------

    def export_pairs(
        self,
        *,
        notes: list[str] | None = None,
        judges: Sequence[str] = (),
        sources: Sequence[str] = (),
    ) -> pd.DataFrame:
        """The ``pairs`` table: one row per (item, judge), both orders side by side.

        Extra columns: ``mass_first``/``mass_second`` (p(A)+p(B) on the verdict token)
        and ``p_tie_first``/``p_tie_second`` (p(C)). A failed or unparsed order has an
        empty ``p_a_*`` and its status says why. Where the store holds perplexities
        for a judge's model (:func:`recuse.judging.perplexity.judge_perplexities`),
        that judge's rows get ``ppl_a``/``ppl_b``. The judge prompt each judge's
        verdicts were made with (:meth:`judge_prompts`) is in ``judge_prompt``,
        ``judge_prompt_format`` and ``judge_prompt_sha256`` (empty for verdicts
        stored before recuse recorded prompts).

        One verdict per (judge, item, order) is exported: where the store holds several
        under different content keys (see :func:`_one_per_order`), the newest, and a
        sentence saying so is appended to ``notes``.

        ``judges`` / ``sources`` keep the rows of those judge ids / datasets (the
        ``source`` each pair was judged from: ``recuse judge --data``) only; a name
        that matches no row is an error naming the ones the store holds.
        """
        df = _flag_unusable(self.judgments(), "pairwise")
        if df.empty:
            raise InputError(
                "the store holds no pairwise judgments",
                file=self.path,
                fix="run `recuse judge` first",
            )
        each = df.drop_duplicates(["judge", "item_id"])["judge"]  # one row per pair
        df = df[_picked(df["judge"], judges, "--judge", "judge ids", self.path, rows=each)]
        df = _one_per_order(df, notes)
        if notes is not None:
            notes.extend(_bounded_note(df))
        wide = df.pivot(index=["item_id", "judge"], columns="slot")
        out = pd.DataFrame(index=wide.index)
        for order in ("first", "second"):
            for src, dst in (
                ("value", f"p_a_{order}"),
                ("status", f"status_{order}"),
                ("mass", f"mass_{order}"),
                ("p_tie", f"p_tie_{order}"),
            ):
                out[dst] = wide[(src, order)] if (src, order) in wide.columns else np.nan
            status = f"status_{order}"
            out[status] = out[status].where(out[status].notna(), "missing")
        out = out.reset_index()
        meta = pd.DataFrame.from_dict(self.items("pairwise"), orient="index")
        if not meta.empty:
            meta = meta.drop(columns=[c for c in ("judge",) if c in meta.columns])
            out = out.merge(meta, left_on="item_id", right_index=True, how="left")
        if "prompt_id" not in out.columns:
            out["prompt_id"] = out["item_id"]
        for col in ("model_a", "model_b", "human"):
            if col not in out.columns:
                out[col] = np.nan
        out["p_a"] = np.nan
        if sources:
            held = out.get("source", pd.Series(np.nan, out.index, name="source"))
            out = out[_picked(held, sources, "--dataset", "datasets", self.path)]
        elif notes is not None and "source" in out.columns:
            notes.extend(_sources_note(out["source"]))
        prompts = self.judge_prompts()
        for i, col in enumerate(PROMPT_COLUMNS):
            out[col] = [(prompts[j][i] or None) if j in prompts else None for j in out["judge"]]
        out = self.attach_perplexities(out)
        return validate_pairs(out, file=self.path)

    def export_ratings(
        self, *, notes: list[str] | None = None, judges: Sequence[str] = ()
    ) -> pd.DataFrame:
        """The ``ratings`` table: one row per (prompt, model, dimension, judge); one
        rating each, chosen as :meth:`export_pairs` chooses (said in ``notes``);
        ``judges`` keeps those judge ids' rows only, as there."""
        df = _flag_unusable(self.judgments(), "likert")
        if df.empty:
            raise InputError(
                "the store holds no Likert judgments",
                file=self.path,
                fix="run `recuse judge --protocol likert` first",
            )
        each = df.drop_duplicates(["judge", "item_id", "slot"])["judge"]  # one per rating
        df = df[_picked(df["judge"], judges, "--judge", "judge ids", self.path, rows=each)]
        df = _one_per_order(df, notes, what="(judge, item, dimension)")
        meta = self.items("likert")
        rows = []
        for r in df.itertuples(index=False):
            m = meta.get(str(r.item_id), {})
            refs = m.get("reference") or {}
            ref = refs.get(r.slot) if isinstance(refs, dict) else None
            rows.append(
                {
                    "prompt_id": m.get("prompt_id", r.item_id),
                    "model": m.get("model", "unknown"),
                    "dimension": r.slot,
                    "judge": r.judge,
                    "rating": r.value,
                    "reference": np.nan if ref is None else float(ref),
                    "status": r.status,
                    "label": r.label,
                }
            )
        return validate_ratings(pd.DataFrame(rows), file=self.path)


def _one_per_order(
    df: pd.DataFrame, notes: list[str] | None, *, what: str = "(judge, item, order)"
) -> pd.DataFrame:
    """One row per (judge, item_id, slot) of ``df`` (oldest first). Rows of one of them
    under different content keys come from runs that rendered or keyed it differently:
    an older recuse (before the weights entered the keys), or the item's texts changed
    between runs. The newest row is kept (whatever its status: an older verdict may be
    about texts the item no longer has; the store keeps the texts last judged), and a
    sentence saying how many were chosen so is appended to ``notes``."""
    keys = ["judge", "item_id", "slot"]
    counts = df.groupby(keys, sort=False)["key"].transform("size").to_numpy()
    kept = df.drop_duplicates(keys, keep="last")
    several = df[counts > 1].drop_duplicates(keys)
    if len(several) and notes is not None:
        first = several.iloc[0]
        notes.append(
            f"{len(several)} {what} held verdicts under more than one content key "
            f"({int((counts > 1).sum())} rows; first: judge {first['judge']!r}, item "
            f"{first['item_id']!r}, {first['slot']}), written by runs that keyed them "
            "differently (an older recuse, before the weights entered the keys) or that "
            "judged other texts (the item changed between runs): the newest verdict of "
            "each was exported, the older ones left out"
        )
    return kept


def prompt_line(judge: str, name: str, format: str, sha256: str) -> str:
    """One line naming the judge prompt of ``judge`` (:meth:`Store.judge_prompts`)."""
    kind = f"{format}, " if format else ""
    digest = f"sha256 {sha256}" if sha256 else "content hash not recorded"
    return f"judge {judge}: judge prompt {name!r} ({kind}{digest})"


def _is_sha256(text: str) -> bool:
    return len(text) == 64 and all(c in "0123456789abcdef" for c in text)


def _prompt_hash(prompt: str) -> str:
    """A judge prompt's id as said in messages: a template's ``sha256 <12 hex>`` (the
    rest of the id, e.g. ``|explain``, kept), recuse's own prompt by its version."""
    head, sep, rest = prompt.partition("|")
    if _is_sha256(head):
        return f"sha256 {head[:12]}" + (f", {rest} mode" if sep else "")
    return prompt


def _migrate(conn: sqlite3.Connection) -> None:
    """Stores written before the judge id was part of the judgments' primary key kept
    one row per (key, item, slot): a second judge id over the same model replaced the
    first's rows. Rebuild such a table with the new key, keeping every row."""
    cols = conn.execute("PRAGMA table_info(judgments)").fetchall()
    if not cols or "judge" in {r[1] for r in cols if r[5]}:
        return
    conn.executescript(
        "BEGIN; ALTER TABLE judgments RENAME TO judgments_v1;"
        " DROP INDEX IF EXISTS judgments_item;"
        + _JUDGMENTS
        + "; INSERT INTO judgments SELECT * FROM judgments_v1; DROP TABLE judgments_v1; COMMIT;"
    )


def _add_run_hardware(conn: sqlite3.Connection) -> None:
    """Stores written before runs recorded their device and dtype, accelerator and
    block parameters, what their seconds time (``clock``), their id and whether they
    recorded their end (``run``, ``ended``: a run's record is written as it goes), or
    the model names their server's answers gave (``served``), or who wrote the prompt
    text a server's model read (``rendering``), get the columns; their runs have none in
    them (a run recorded at its end alone; served by nothing said)."""
    _add_columns(conn, "runs", (
        ("hardware", "TEXT"), ("device", "TEXT"), ("block_params", "INTEGER"), ("clock", "TEXT"),
        ("run", "TEXT"), ("ended", "INTEGER"), ("served", "TEXT"), ("rendering", "TEXT"),
    ))  # fmt: skip


def _add_prompt_record(conn: sqlite3.Connection) -> None:
    """Stores written before the judge prompt's format and content hash were recorded
    get the columns (empty for their prompts until a run claims them again)."""
    _add_columns(conn, "judge_prompts", (("format", "TEXT"), ("sha256", "TEXT")))


def _add_columns(conn: sqlite3.Connection, table: str, columns: Sequence[tuple[str, str]]) -> None:
    """Add the ``(name, type)`` ``columns`` that ``table`` lacks, in one transaction
    that holds the write lock (``BEGIN IMMEDIATE``) and reads the table's columns again
    under it: two processes opening one old store at once both find a column missing,
    and the second's ``ALTER TABLE`` failed ("duplicate column name")."""

    def missing() -> list[tuple[str, str]]:
        have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})").fetchall()}
        return [(name, kind) for name, kind in columns if name not in have]

    if not missing():  # the usual case: no lock taken
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        for name, kind in missing():
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")
    except BaseException:
        conn.rollback()
        raise
    conn.commit()


def _meta_json(meta: Mapping[str, object], texts: dict[str, str]) -> str:
    """``json.dumps(dict(meta), ensure_ascii=False, default=_json_default)``, the same
    text. A table of texts alone (a pair's prompt, responses and ids) is written from
    its names' and values' JSON (:func:`~recuse.judging.protocols.json_text`), each
    distinct text's written once and kept in ``texts``: a run's pairs share their
    questions and responses, and the items are written on the run's event loop, whose
    hold of the GIL the thread queueing a GPU's passes waits for (400 MT-Bench pairs'
    items, texts not hashed before: 4.1 ms by json.dumps, 2.0 ms so)."""
    parts = []
    for name, value in meta.items():
        if type(name) is not str or type(value) is not str:
            return json.dumps(dict(meta), ensure_ascii=False, default=_json_default)
        written = texts.get(name)
        if written is None:
            written = texts[name] = json_text(name).decode("utf-8")
        shown = texts.get(value)
        if shown is None:
            shown = texts[value] = json_text(value).decode("utf-8")
        parts.append(f"{written}: {shown}")
    return "{" + ", ".join(parts) + "}"


def _json_default(v: object) -> object:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    raise TypeError(f"cannot store {type(v).__name__} in item metadata")


def _bounded_note(df: pd.DataFrame) -> list[str]:
    """The sentence saying how many of the ok verdicts of ``df`` (the ones exported)
    carry an interval for p_a in their reason, not a point: read from a server's top-k
    that lists a spelling of A or B without its twin
    (:func:`recuse.judging.handlers.pairwise.bounded`); none where none does. The
    export's p_a columns cannot say it, and the reason is not exported."""
    ok = df[df["status"] == "ok"]
    n = int(ok["reason"].fillna("").str.startswith(SPELLING_OUTSIDE).sum())
    if not n:
        return []
    return [
        f"{n:,} of the {len(ok):,} ok verdicts exported were read from a server's top-k "
        "that lists a spelling of A or B without its twin: their p_a_first / p_a_second "
        "is the p_a read with the absent twin at 0, one point of an interval, not exact "
        "(each verdict's interval is in its reason in the store: "
        "Store(path).judgments()['reason'])"
    ]


def _flag_unusable(df: pd.DataFrame, kind: JudgmentKind) -> pd.DataFrame:
    """Rows of ``kind``; an ``ok`` row whose value is not usable (not finite; for
    pairwise not a probability) becomes ``failed`` with an empty value."""
    df = df[df["kind"] == kind].copy()
    value = df["value"].astype(float)
    usable = np.isfinite(value)
    if kind == "pairwise":
        usable &= value.between(0.0, 1.0)
    bad = (df["status"] == "ok") & ~usable
    df.loc[bad, "status"] = "failed"
    df.loc[bad, "value"] = np.nan
    df.loc[bad, "reason"] = "stored as ok without a usable value"
    return df


def no_store(path: Path, *, fix: str) -> InputError:
    """The error for a store to read at ``path`` that is not a file: a folder (a
    folder given for the store's file, as ``recuse audit --out`` takes one) is told
    apart from nothing there."""
    if is_file(path, folder=True):
        return InputError(
            "is a folder, not a store (the one SQLite file `recuse judge --out STORE` writes)",
            file=path,
            fix="give the store's file, e.g. runs/smol.sqlite",
        )
    if path.exists():  # a pipe was "no such store", though ls shows it
        return InputError(
            "is not a regular file (a pipe, socket or device), not a store",
            file=path,
            fix="give the store's file, e.g. runs/smol.sqlite",
        )
    return InputError("no such store", file=path, fix=fix)


#: the finest time a run's clock counts (:class:`recuse.judging.rate.RunClock`'s
#: ``perf_counter``, a nanosecond): a run recorded as taking more than 0 seconds but
#: less than this was not timed by it
CLOCK_TICK = 1e-9
#: the most tokens one judgment can read or write in a real run: ten times the longest
#: context window a model offers (10 million tokens)
MOST_TOKENS_PER_JUDGMENT = 100_000_000


def run_damage(
    judgments: object,
    seconds: object,
    tokens: tuple[object, object],
    block_params: object = None,
    ended: object = None,
    *,
    now: float,
) -> str:
    """What a run record of the runs table says that no real run could have ("" where
    nothing): its judgments not a count; its seconds not a number of 0 or more (NaN,
    negative: its end before its start), more than 0 but under :data:`CLOCK_TICK` (the
    clock that timed it counts no finer), or more than have passed since 1970 (``now``,
    the epoch's seconds); its tokens in or out not a count, or over
    :data:`MOST_TOKENS_PER_JUDGMENT` a judgment it answered; its model's block
    parameters not a positive count; whether it ended not 0 or 1 (None: recorded by an
    earlier recuse, at its end). Each gave the card a rate, a token count or a
    model FLOP utilisation no judge has: 300 digits, a negative share, 10¹⁸ tokens.

    >>> run_damage(5, 2.0, (100, 10), now=2e9), run_damage(5, 1e-300, (None, None), now=2e9)
    ('', 'records 5 judgments in 1e-300 seconds, under the nanosecond its clock counts in')
    """

    def counted(v: object) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0

    timed = isinstance(seconds, int | float) and math.isfinite(seconds) and seconds >= 0
    if not (counted(judgments) and timed):
        return (
            f"records {judgments!r} judgments in {seconds!r} seconds (a count and seconds "
            "of 0 or more were expected)"
        )
    assert isinstance(judgments, int) and isinstance(seconds, int | float)
    if 0 < seconds < CLOCK_TICK:
        return (
            f"records {judgments:,} judgments in {seconds!r} seconds, under the "
            "nanosecond its clock counts in"
        )
    if seconds > now:
        return f"records {seconds!r} seconds, more than have passed since 1970"
    for name, value in zip(("in", "out"), tokens, strict=True):
        if value is None:
            continue
        if not counted(value):
            return f"records {value!r} tokens {name} (a count of 0 or more was expected)"
        assert isinstance(value, int)
        if judgments and value > MOST_TOKENS_PER_JUDGMENT * judgments:
            return (
                f"records {value:,} tokens {name} for {judgments:,} judgment(s), over "
                f"{MOST_TOKENS_PER_JUDGMENT:,} a judgment (ten times the longest context "
                "a model reads)"
            )
    if block_params is not None and not (counted(block_params) and block_params != 0):
        return f"records {block_params!r} model parameters (a positive count was expected)"
    if ended is not None and (type(ended) is not int or ended not in (0, 1)):
        return f"records its end as {ended!r} (0, 1 or nothing was expected)"
    return ""


def _damaged(path: Path, detail: str) -> InputError:
    return InputError(
        f"the store is damaged ({detail})",
        file=path,
        fix="restore it from a copy, or start a new store with another --out "
        "(`sqlite3 STORE .recover` may save its rows)",
    )


def _held(values: pd.Series) -> str:
    """The distinct names of ``values`` with their rows: ``a 3, b 2`` (sorted)."""
    counts = values.dropna().astype(str).value_counts()
    return ", ".join(f"{name!r} {n:,}" for name, n in sorted(counts.items()))


def _picked(
    values: pd.Series,
    wanted: Sequence[str],
    option: str,
    what: str,
    path: Path,
    *,
    rows: pd.Series | None = None,
) -> pd.Series:
    """Which rows of ``values`` (a column of the store's rows) are among ``wanted`` (all
    where none is given). A name that matches no row is an error naming the ones held:
    a typo exported nothing, or every row but the misspelt one's. ``rows``: the names
    once per row the export would write (default ``values``), counted in that error as
    "wrote N rows" counts them (a pair's two orders are two judgments but one row)."""
    if not wanted:
        return pd.Series(True, index=values.index)
    held = set(values.dropna().astype(str))
    missing = [w for w in dict.fromkeys(wanted) if w not in held]
    if missing:
        names = ", ".join(repr(m) for m in missing)
        raise InputError(
            f"{option} {names} matches no row of the store; its {what} (rows): "
            + (_held(values if rows is None else rows) or "none recorded"),
            file=path,
            fix=f"give {option} one of those, as written"
            if held
            else f"leave out {option}: the store's rows were judged from data without a "
            f"{values.name} column",
        )
    return values.astype(str).isin(set(wanted)) & values.notna()


def _sources_note(sources: pd.Series) -> list[str]:
    """A sentence when the exported rows come from more than one dataset (a store reused
    for another --data): the export holds them all, and an audit of it reads them as
    one table of pairs, with nothing else saying so."""
    counts = sources.dropna().astype(str).value_counts()
    if len(counts) < 2:
        return []
    listed = ", ".join(f"{name} {n:,}" for name, n in sorted(counts.items()))
    first = sorted(counts.index)[0]
    return [
        f"the store holds pairs of {len(counts)} datasets (rows: {listed}), exported "
        "together: an audit of this file reads them as one table; to export one dataset "
        f"alone, give --dataset NAME (e.g. --dataset {first})"
    ]


#: the longest full path SQLite's unix VFS opens (MAX_PATHNAME, in bytes)
SQLITE_MAX_PATH = 512


def _full_path_bytes(path: Path) -> int:
    """Length of ``path`` made absolute, in bytes (0 where the folder is unreadable)."""
    try:
        return len(os.fsencode(os.path.abspath(path)))
    except OSError:
        return 0


def _file_size_limit() -> int | None:
    """The largest file this process may write (``RLIMIT_FSIZE``, ``ulimit -f``), in
    bytes; None where there is no limit (or no such limit: Windows)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return None
    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return None if soft == resource.RLIM_INFINITY else soft


def kept_words(path: Path) -> str:
    """What the store at ``path`` keeps after a write failed, read from the store by a
    connection of its own (the one that met the error may be unusable): ``"12 finished
    judgments (ok or unparsed) are kept and resumed"`` (and its perplexities and
    rewrites); where it holds none, ``"nothing was stored: a rerun starts from the
    beginning"`` (it said "finished judgments are kept" after a first commit that
    failed); where it cannot be read, that what was committed before stays."""
    counted = (
        ("finished judgments (ok or unparsed)", "judgments", "status != 'failed'"),
        ("perplexities", "perplexities", "status = 'ok'"),
        ("rewrites", "rewrites", "status != 'failed'"),
    )
    held = []
    try:
        uri = f"{path.resolve().as_uri()}?mode=ro"
        with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=1.0)) as conn:
            tables = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master")}
            for words, table, final in counted:
                if table in tables:
                    (n,) = conn.execute(f"SELECT COUNT(*) FROM {table} WHERE {final}").fetchone()
                    if n:
                        held.append(f"{int(n):,} {words}")
    except (sqlite3.Error, OSError, ValueError):
        return "what was committed before is kept (the store could not be read to count it)"
    if not held:
        return "nothing was stored: a rerun starts from the beginning"
    return f"the store keeps {' and '.join(held)}, and a rerun resumes from them"


def _database_error(
    exc: sqlite3.Error, path: Path, *, kept: Callable[[], str] | None = None
) -> RecuseError:
    """One-line error for an SQLite error met on the store at ``path``; ``kept`` says
    what the store keeps (:func:`kept_words`), asked for a full disk or an I/O error."""
    said = "what was committed before is kept"
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    detail = " ".join(str(exc).split())
    if name == "SQLITE_NOTADB" or "not a database" in detail:
        return InputError(
            "not a recuse judgment store (not an SQLite database)",
            file=path,
            fix="give the store `recuse judge --out STORE` wrote (a table it exported, "
            "such as pairs.csv, is read by `recuse audit`); to start a new store, give "
            "`recuse judge --out` a new file name",
        )
    if name == "SQLITE_CORRUPT" or "malformed" in detail:
        return _damaged(path, detail)
    if name == "SQLITE_FULL" or "disk is full" in detail:
        return OutputError(
            f"cannot write {path}: the disk is full — free some space and run again "
            f"({kept() if kept else said})"
        )
    if name.startswith("SQLITE_READONLY") or "readonly" in detail:
        return OutputError(
            f"cannot write {path}: it is read-only — judge into a store on writable "
            "media with --out (export reads it where it is)"
        )
    if name.startswith("SQLITE_IOERR"):
        limit = _file_size_limit()
        # SQLite reports a write past RLIMIT_FSIZE (EFBIG) as a plain I/O error
        past = (
            ", or the store (or its -wal log beside it) would pass the largest file this "
            f"process may write (ulimit -f: {limit:,} bytes) — raise that limit"
            if limit is not None
            else ""
        )
        return OutputError(
            f"cannot use {path}: input/output error ({detail}) — the disk may be full or "
            f"failing{past}; {kept() if kept else said}"
        )
    if name in ("SQLITE_BUSY", "SQLITE_LOCKED"):
        return OutputError(f"{path}: the store is busy in another process — wait and run again")
    if name == "SQLITE_CANTOPEN":
        length = _full_path_bytes(path)
        if length > SQLITE_MAX_PATH:
            return InputError(
                f"cannot open the store: its full path is {length} bytes long and SQLite "
                f"opens paths of at most {SQLITE_MAX_PATH}",
                file=path,
                fix="put the store in a folder with a shorter path (--out /tmp/run.sqlite) "
                "and export it where you like",
            )
        return InputError(f"cannot open the store ({detail})", file=path)
    return InputError(f"cannot use the store ({detail})", file=path)
