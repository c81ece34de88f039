"""Work-sharing leases: two runs of one judge on one store never judge a judgment twice."""

from __future__ import annotations

import contextlib
import math
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import recuse
from judging.helpers import FakeBackend, fake_pairs
from recuse.cli import main
from recuse.errors import JudgeError
from recuse.judging import Runner, Store, leases
from recuse.judging.card import cards
from recuse.judging.leases import LEASE_STALE_SECONDS, Holder, process_start
from recuse.judging.protocols import Message, Prompt, response_prompt
from recuse.judging.store import Perplexity
from recuse.testing.standin import StandIn

SRC = str(Path(recuse.__file__).resolve().parents[1])
HOST = socket.gethostname()


class Counting(FakeBackend):
    """The fake judge, counting the prompts it is sent (one judgment each)."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.prompts = 0

    async def next_token_logprobs(self, prompts: Sequence[Prompt], **options: object):  # type: ignore[no-untyped-def, override]
        self.prompts += len(prompts)
        return await super().next_token_logprobs(prompts, **options)  # type: ignore[arg-type]


def _judge_cli(url: str, data: Path, store: Path) -> list[str]:
    return ["judge", "--model", "gpt-4o", "--base-url", url, "--data", str(data),
            "--out", str(store), "--concurrency", "1", "--no-progress"]  # fmt: skip


def _start(args: list[str]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.Popen(
        [sys.executable, "-m", "recuse", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip


def _wait_for(store: Path, sql: str, proc: subprocess.Popen[str], at_least: int = 1) -> None:
    """Until ``sql`` (a count) reads ``at_least`` on ``store`` while ``proc`` runs."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        try:
            with sqlite3.connect(store, timeout=5) as conn:
                if conn.execute(sql).fetchone()[0] >= at_least:
                    return
        except sqlite3.OperationalError:  # not created yet
            pass
        time.sleep(0.01)
    raise AssertionError(f"{sql} never reached {at_least}")


def _counts(line: str) -> dict[str, int]:
    m = re.search(r"(\d+) judgments: (\d+) already stored, (\d+) ok, (\d+) unparsed", line)
    assert m, line
    left = re.search(r"; (\d+) judgments left to a run in progress", line)
    return {
        "total": int(m[1]), "cached": int(m[2]), "ok": int(m[3]) + int(m[4]),
        "left": int(left[1]) if left else 0,
    }  # fmt: skip


def test_two_runs_of_one_judge_at_once_judge_each_judgment_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same `recuse judge` started twice on one store sent every judgment twice (160
    requests for 80 judgments, the card counting both runs). Now the second run judges
    only what the first has not leased: a process judges items 0-11 while this one
    judges items 0-23; the server answers each of the 48 judgments once, both exit 0,
    the second says how many it left to the first (naming its pid), and the card counts
    48 answered judgments."""
    pairs = pd.DataFrame(fake_pairs(24))
    few, many = tmp_path / "few.jsonl", tmp_path / "many.jsonl"
    pairs.iloc[:12].to_json(few, orient="records", lines=True)
    pairs.to_json(many, orient="records", lines=True)
    store = tmp_path / "s.db"
    with StandIn(latency=0.08) as server:
        first = _start(_judge_cli(server.base_url, few, store))
        _wait_for(store, "SELECT COUNT(*) FROM leases", first, at_least=24)
        code = main(_judge_cli(server.base_url, many, store))
        out_first, err_first = first.communicate(timeout=120)
        requests = server.requests
    second = capsys.readouterr().out
    assert first.returncode == 0 and code == 0, err_first
    mine, theirs = _counts(second), _counts(out_first)
    assert theirs == {"total": 24, "cached": 0, "ok": 24, "left": 0}
    assert mine["total"] == 48 and mine["ok"] == 24  # items 12-23, each order once
    assert mine["left"] > 0 and mine["cached"] + mine["left"] == 24
    assert f"left to a run in progress (pid {first.pid} on {HOST}, started " in second
    assert "rerun after it ends to pick up any it did not finish" in second
    assert requests == 48
    with Store(store) as s:
        table = s.judgments()
        assert len(table) == 48 and not table.duplicated(["item_id", "slot"]).any()
        assert int(s.runs()["judgments"].sum()) == 48
        (card,) = cards(s.runs())
        assert card.judgments == 48
        assert s.leases() == {}  # both gave theirs back


def test_a_killed_runs_leases_are_taken_over_by_the_next_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run SIGKILLed mid-way leaves its leases in the store; its process is gone, so
    the next run takes them over and judges everything left, nothing twice."""
    data = tmp_path / "pairs.jsonl"
    pd.DataFrame(fake_pairs(12)).to_json(data, orient="records", lines=True)
    store = tmp_path / "s.db"
    with StandIn(latency=0.05) as server:
        killed = _start(_judge_cli(server.base_url, data, store))
        _wait_for(store, "SELECT COUNT(*) FROM judgments", killed, at_least=4)
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait()
        with Store(store) as s:
            done = len(s.judgments())
            held = set(s.leases().values())
            assert 4 <= done < 24 and len(held) == 1  # the dead run's leases are there
        before = server.requests
        code = main(_judge_cli(server.base_url, data, store))
        sent = server.requests - before
    out = capsys.readouterr().out
    assert code == 0
    assert sent == 24 - done
    assert f"24 judgments: {done} already stored, {24 - done} ok" in out
    assert "left to" not in out
    with Store(store) as s:
        table = s.judgments()
        assert len(table) == 24 and not table.duplicated(["item_id", "slot"]).any()
        assert s.leases() == {}


def _sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def _holder(pid: int, *, host: str = HOST, age: float = 0.0, start: str | None = "") -> Holder:
    now = time.time() - age
    return Holder("planted", pid, host, now, now, process_start(pid) if start == "" else start)


#: planted holders of leases: (the holder from a live process's pid, respected?)
PLANTED: dict[str, tuple[Callable[[int], Holder], bool]] = {
    "a live process on this host": (lambda pid: _holder(pid), True),
    "a live process, start unknown": (lambda pid: _holder(pid, start=None), True),
    "a process that exited": (lambda pid: _holder(pid + 10**7), False),
    "a reused pid (another start)": (lambda pid: _holder(pid, start="1"), False),
    "another host, recent heartbeat": (lambda pid: _holder(pid, host="elsewhere"), True),
    "another host, stale heartbeat": (
        lambda pid: _holder(pid, host="elsewhere", age=LEASE_STALE_SECONDS + 5),
        False,
    ),
}


@pytest.mark.parametrize("case", list(PLANTED))
def test_a_lease_is_respected_only_while_its_run_is_alive(tmp_path: Path, case: str) -> None:
    """Leases planted on items 0-3 of 8 (8 of 16 judgments): a live holder keeps them
    (the run judges the other 8 and says it left 8 to that run, named by its pid and
    host); a dead one (its process gone or its pid reused, or another host's that has
    not committed for LEASE_STALE_SECONDS) loses them to the run, which judges all 16."""
    if sys.platform != "linux" and "reused" in case:
        pytest.skip("process start times are read on Linux")
    make, respected = PLANTED[case]
    sleeper = _sleeper()
    try:
        holder = make(sleeper.pid)
        pairs = pd.DataFrame(fake_pairs(8))
        with Store(tmp_path / "s.db") as planting:
            leased = planting.take_leases(
                holder,
                [
                    ("fake-judge", "pairwise", f"i{k}", o)
                    for k in range(4)
                    for o in ("first", "second")
                ],
            )
            assert not leased.elsewhere
        backend = Counting()
        with Store(tmp_path / "s.db") as store:
            summary = Runner(backend, store, progress=False).pairwise(pairs)
            left = set(store.leases().values())
        line = summary.line()
        if respected:
            assert backend.prompts == 8 and summary.ok + summary.unparsed == 8
            assert summary.left == 8
            assert (
                f"8 judgments left to a run in progress (pid {holder.pid} on {holder.host}" in line
            )
            assert left == {"planted"}  # its leases stay; this run's are gone
        else:
            assert backend.prompts == 16 and summary.left == 0 and "left to" not in line
            assert left == set()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_run_gives_its_leases_back_however_it_ends(tmp_path: Path) -> None:
    """Finished, or stopped by an error: no lease of the run is left in the store."""
    pairs = pd.DataFrame(fake_pairs(6))

    class Revoked(FakeBackend):
        async def next_token_logprobs(self, prompts, **options):  # type: ignore[no-untyped-def]
            raise JudgeError("HTTP 401: key revoked")

    with Store(tmp_path / "s.db") as store:
        with pytest.raises(JudgeError):
            Runner(Revoked(), store, progress=False).pairwise(pairs)
        assert store.leases() == {}
        summary = Runner(FakeBackend(), store, progress=False).pairwise(pairs)
        assert summary.ok + summary.unparsed == 12 and store.leases() == {}


class _WatchesHeartbeat(FakeBackend):
    """Reads its run's heartbeat from another connection at each call."""

    def __init__(self, path: Path) -> None:
        super().__init__(sleep=0.06, batch_size=2)
        self.concurrency = 1
        self.path = path
        self.beats: list[float] = []

    async def next_token_logprobs(self, prompts, **options):  # type: ignore[no-untyped-def]
        with sqlite3.connect(self.path) as conn:
            self.beats += [b for (b,) in conn.execute("SELECT heartbeat FROM lease_runs")]
        return await super().next_token_logprobs(prompts, **options)


def test_a_runs_commits_refresh_its_heartbeat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run on another host is alive while its heartbeat is recent: the run's commits
    refresh it (here every commit, every 0.1 s: FLUSH_SECONDS; HEARTBEAT_SECONDS is 0)."""
    monkeypatch.setattr(leases, "HEARTBEAT_SECONDS", 0.0)
    backend = _WatchesHeartbeat(tmp_path / "s.db")
    with Store(tmp_path / "s.db") as store:
        Runner(backend, store, progress=False).pairwise(pd.DataFrame(fake_pairs(6)))
    assert len(backend.beats) == 6
    assert backend.beats == sorted(backend.beats) and backend.beats[-1] > backend.beats[0] + 0.05


def test_a_store_from_before_leases_opens_and_gets_them(tmp_path: Path) -> None:
    """A store written before the lease tables existed: read as it is (export), and
    given the tables by a run, which leases and judges as usual."""
    path = tmp_path / "old.db"
    with Store(path) as store:
        Runner(FakeBackend(), store, progress=False).pairwise(pd.DataFrame(fake_pairs(2)))
    with sqlite3.connect(path) as conn:
        conn.executescript("DROP TABLE leases; DROP TABLE lease_runs;")
    with Store(path, read_only=True) as store:
        assert store.leases() == {} and len(store.export_pairs()) == 2
    backend = Counting()
    with Store(path) as store:
        summary = Runner(backend, store, progress=False).pairwise(pd.DataFrame(fake_pairs(4)))
        assert store.leases() == {}
    assert summary.cached == 4 and backend.prompts == 4


def test_the_summary_of_combined_runs_keeps_what_was_left() -> None:
    """A command of several runs (a probe table's two questions) says every judgment
    left to another run, and each run that holds them once."""
    from recuse.judging.runner import RunSummary

    a = RunSummary(4, 0, 2, 0, 0, 1.0, left=2, holders=("pid 1 on h, started t",))
    b = RunSummary(
        4, 0, 1, 0, 0, 1.0, left=3, holders=("pid 1 on h, started t", "pid 2 on h2, started u")
    )
    both = RunSummary.combine([a, b])
    assert both.left == 5
    assert (
        "5 judgments left to runs in progress (pid 1 on h, started t; pid 2 on h2, " in both.line()
    )


def _count_lease_writes(path: Path) -> Callable[[], int]:
    """Count every row written to the lease tables of the store at ``path`` from now
    on (triggers in the file, so the store's own connection is counted); returns the
    count so far."""
    with sqlite3.connect(path) as conn:
        conn.executescript(
            "CREATE TABLE lease_writes (n INTEGER); INSERT INTO lease_writes VALUES (0);"
            "CREATE TRIGGER count_leases AFTER INSERT ON leases "
            "BEGIN UPDATE lease_writes SET n = n + 1; END;"
            "CREATE TRIGGER count_lease_runs AFTER INSERT ON lease_runs "
            "BEGIN UPDATE lease_writes SET n = n + 1; END;"
        )

    def written() -> int:
        with contextlib.closing(sqlite3.connect(path)) as conn:
            return int(conn.execute("SELECT n FROM lease_writes").fetchone()[0])

    return written


def test_a_resume_of_a_run_the_store_holds_whole_leases_nothing(tmp_path: Path) -> None:
    """A run leased every judgment it was given before reading the store: resuming a
    finished run of 100,000 judgments wrote and dropped 100,000 lease rows. Now it
    leases only what the store lacks: 0 rows for 16 stored judgments; 4 rows (and its
    run's) for 4 new ones beside them."""
    path = tmp_path / "s.db"
    with Store(path) as store:
        Runner(FakeBackend(), store, progress=False).pairwise(pd.DataFrame(fake_pairs(8)))
    written = _count_lease_writes(path)
    backend = Counting()
    with Store(path) as store:
        again = Runner(backend, store, progress=False).pairwise(pd.DataFrame(fake_pairs(8)))
        assert store.leases() == {}
    assert written() == 0
    assert again.cached == 16 and again.finished == 0 and backend.prompts == 0
    with Store(path) as store:
        more = Runner(backend, store, progress=False).pairwise(pd.DataFrame(fake_pairs(10)))
    assert written() == 4 + 1  # items 8 and 9 in two orders, and the run
    assert more.cached == 16 and more.ok + more.unparsed == 4 and backend.prompts == 4


def test_a_judgment_stored_between_the_lookup_and_the_lease_is_not_judged_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another run stores item i0's two judgments (and gives its leases back) after this
    run read the store but before it leased: the run reads what it leased again, so it
    judges the other 6 only, counts those 2 as stored and keeps their values."""
    pairs = pd.DataFrame(fake_pairs(4))
    with Store(tmp_path / "other.db") as other:
        Runner(FakeBackend(), other, progress=False).pairwise(pairs.iloc[:1])
        theirs = other.lookup(other.judgments()["key"])
    assert len(theirs) == 2
    path = tmp_path / "s.db"
    backend = Counting()
    with Store(path) as store:
        take = store.take_leases

        def stored_meanwhile(run: Holder, wanted: object) -> leases.Leased:
            with Store(path) as elsewhere:  # the other run, done before this one leases
                elsewhere.put(theirs)
            return take(run, wanted)  # type: ignore[arg-type]

        monkeypatch.setattr(store, "take_leases", stored_meanwhile)
        summary = Runner(backend, store, progress=False).pairwise(pairs)
        table = store.judgments()
    assert backend.prompts == 6
    assert summary.cached == 2 and summary.ok + summary.unparsed == 6 and summary.total == 8
    assert len(table) == 8 and not table.duplicated(["item_id", "slot"]).any()
    kept = table[table["item_id"] == "i0"].set_index("slot")["value"]
    assert kept.to_dict() == {j.slot: j.value for j in theirs}


class _Scores(Counting):
    """The fake judge with a perplexity: -0.5 per character of the response, counting
    the texts it scores; ``during`` runs at its first call."""

    def __init__(self) -> None:
        super().__init__()
        self.scored = 0
        self.during: Callable[[], None] = lambda: None

    async def continuation_logprobs(  # type: ignore[override]
        self, prompts: Sequence[Prompt], continuations: Sequence[str]
    ) -> list[object]:
        if not self.scored:
            self.during()
        self.scored += len(prompts)
        return [np.full(len(text), -0.5) for text in continuations]


def test_perplexities_are_leased_and_those_of_a_live_run_left_to_it(tmp_path: Path) -> None:
    """A live run (a process of this host) holds the leases of texts 0-3 of 8: this run
    scores texts 4-7 only. The other run stores texts 0 and 1 while this one runs: they
    are read at its end and count as stored; 2 and 3 are left to it (status ``left``,
    the run named) and the summary says so."""
    from recuse.judging.perplexity import perplexities

    prompts = [f"Question {k}?" for k in range(8)]
    texts = [f"answer {'x' * k}" for k in range(8)]
    with Store(":memory:") as scratch:
        keys, _, _ = Runner(_Scores(), scratch, progress=False).perplexity(
            [response_prompt(p) for p in prompts], texts
        )
    sleeper = _sleeper()
    try:
        holder = _holder(sleeper.pid)
        path = tmp_path / "s.db"
        with Store(path) as planting:
            planting.take_leases(holder, [("fake-judge", "perplexity", k, "") for k in keys[:4]])
        backend = _Scores()

        def other_run_stores() -> None:
            with Store(path) as other:
                rows = [Perplexity(k, "ok", 3, -3.0) for k in keys[:2]]
                other.put_perplexities("fake-judge", "r1", rows)

        backend.during = other_run_stores
        with Store(path) as store:
            frame, run = perplexities(backend, prompts, texts, store=store)
            left = store.leases()
    finally:
        sleeper.kill()
        sleeper.wait()
    assert backend.scored == 4
    assert (run.total, run.cached, run.computed, run.left) == (8, 2, 4, 2)
    assert list(frame["status"]) == ["ok", "ok", "left", "left", "ok", "ok", "ok", "ok"]
    assert list(frame["ppl"].iloc[:2]) == [math.exp(1.0)] * 2  # the other run's rows
    expected = [math.exp(0.5)] * 4  # -0.5 per token of this run's texts
    assert frame["ppl"].iloc[4:].tolist() == pytest.approx(expected)
    assert f"left to a run in progress (pid {sleeper.pid} on {HOST}" in frame["reason"][2]
    assert f"2 perplexities left to a run in progress (pid {sleeper.pid}" in run.line()
    assert set(left.values()) == {"planted"}  # this run gave its leases back


def test_rewrites_are_leased_in_the_same_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rewrite run leases what the store lacks under kind ``rewrite`` (the model and
    the content key); one stored by another run between its lookup and its lease is
    not generated again, and a resume leases nothing."""
    prompts = [Prompt((Message("user", f"Rewrite text {k}."),)) for k in range(4)]
    with Store(tmp_path / "other.db") as other:
        keys, rows, _ = Runner(FakeBackend(), other, progress=False).rewrite(
            prompts[:1], max_new_tokens=8, version="v1"
        )
    path = tmp_path / "s.db"
    asked: list[tuple[str, str, str, str]] = []
    backend = FakeBackend()
    with Store(path) as store:
        take = store.take_leases

        def stored_meanwhile(run: Holder, wanted: object) -> leases.Leased:
            asked.extend(wanted)  # type: ignore[call-overload]
            with Store(path) as elsewhere:
                elsewhere.put_rewrites("fake-judge", "r1", rows.values())
            return take(run, asked)

        monkeypatch.setattr(store, "take_leases", stored_meanwhile)
        all_keys, done, run = Runner(backend, store, progress=False).rewrite(
            prompts, max_new_tokens=8, version="v1"
        )
    assert {(j, kind, slot) for j, kind, _, slot in asked} == {("fake-judge", "rewrite", "")}
    assert sorted(k for _, _, k, _ in asked) == sorted(all_keys)
    assert all_keys[0] == keys[0] and done[keys[0]] == rows[keys[0]]
    assert (run.total, run.cached, run.ok) == (4, 1, 3) and backend.calls == 1
    written = _count_lease_writes(path)
    with Store(path) as store:
        again = Runner(FakeBackend(), store, progress=False).rewrite(
            prompts, max_new_tokens=8, version="v1"
        )[2]
    assert again.cached == 4 and written() == 0
