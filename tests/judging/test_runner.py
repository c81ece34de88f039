"""Runner + store: resume, retries, failures as rows, export, and SIGKILL safety."""

from __future__ import annotations

import io
import math
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
import pytest
from rich.console import Console

import recuse.judging.runner as runner_module
from judging.helpers import FakeBackend, RevokedMidRun, fake_pairs, mirrored_pairs
from recuse.errors import InputError, JudgeError, OutputError
from recuse.judging import PairwiseProtocol, RetryPolicy, Runner, Store
from recuse.judging.backends.base import Failure
from recuse.judging.handlers.pairwise import pairs_to_judge
from recuse.judging.protocols import DIMENSIONS, Prompt, score_distribution, to_ab
from recuse.judging.store import content_key
from recuse.judging.tasks import Keying

FAST = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.01)
_R = TypeVar("_R")
VALUE_COLUMNS = ["key", "item_id", "slot", "status", "value", "mass", "p_tie", "reason"]


def _table(store: Store) -> pd.DataFrame:
    return store.judgments()[VALUE_COLUMNS].sort_values(["item_id", "slot"]).reset_index(drop=True)


def test_content_key_depends_on_output_relevant_fields_only() -> None:
    base = {"model_id": "m", "revision": "r", "prompt": "p", "params": {"mode": "direct"}}
    k = content_key(**base)  # type: ignore[arg-type]
    assert k == content_key(**base)  # type: ignore[arg-type]
    for field, value in [
        ("model_id", "m2"),
        ("revision", "r2"),
        ("prompt", "p2"),
        ("params", {"mode": "explain"}),
    ]:
        assert content_key(**{**base, field: value}) != k  # type: ignore[arg-type]


def test_pairwise_scores_are_eq3_in_ab_frame(tmp_path: Path) -> None:
    pairs = pd.DataFrame(fake_pairs(6))
    with Store(tmp_path / "s.db") as store:
        summary = Runner(FakeBackend(), store, progress=False).pairwise(pairs)
        assert (summary.total, summary.ok, summary.failed) == (12, 12, 0)
        out = store.export_pairs()
    proto = PairwiseProtocol()
    from recuse.judging.protocols import Pair

    for r in out.itertuples():
        src = pairs.set_index("item_id").loc[r.item_id]
        pair = Pair(r.item_id, src.prompt, src.response_a, src.response_b)
        for order, got in (("first", r.p_a_first), ("second", r.p_a_second)):
            d = FakeBackend.dist(proto.prompt(pair, order).canonical())  # type: ignore[arg-type]
            pa, pb = math.exp(d["A"]), math.exp(d[" B"])
            assert got == pytest.approx(to_ab(pa / (pa + pb), order))  # type: ignore[arg-type]
            assert score_distribution(d).mass == pytest.approx(pa + pb)
        assert r.p_a == pytest.approx((r.p_a_first + r.p_a_second) / 2)
    assert set(out["status_first"]) == {"ok"}
    assert {"mass_first", "mass_second", "model_a", "human", "prompt"} <= set(out.columns)
    assert out["human"].notna().all()


def test_rerun_skips_finished_and_identical_content_is_copied(tmp_path: Path) -> None:
    pairs = fake_pairs(5)
    with Store(tmp_path / "s.db") as store:
        fake = FakeBackend(batch_size=1)
        Runner(fake, store, progress=False).pairwise(pd.DataFrame(pairs))
        calls = fake.calls
        again = Runner(fake, store, progress=False).pairwise(pd.DataFrame(pairs))
        assert again.cached == 10 and again.ok == 0 and fake.calls == calls
        twin = {**pairs[0], "item_id": "twin"}
        third = Runner(fake, store, progress=False).pairwise(pd.DataFrame([twin]))
        assert third.cached == 2 and fake.calls == calls
        out = store.export_pairs().set_index("item_id")
        assert out.loc["twin", "p_a_first"] == out.loc[pairs[0]["item_id"], "p_a_first"]


class _FirstCallSees(FakeBackend):
    """At its first call, notes how many content keys the run had computed and which
    items the store held."""

    def __init__(self, store: Store, keyed: list[int]) -> None:
        super().__init__(batch_size=2)
        self.store, self.keyed = store, keyed
        self.at_first: tuple[int, set[str]] | None = None

    async def _tick(self) -> None:
        if self.at_first is None:
            self.at_first = (self.keyed[0], set(self.store.items("pairwise")))
        await super()._tick()


def test_a_fresh_store_keys_and_keeps_items_beside_the_calls_not_before_the_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing to reuse: no content key is computed and no item stored before the first
    call (on a GPU that work delayed the first pass by ~60 ms); each key is computed as
    its judgment is stored, and equals the one worked out from the prompt directly."""
    keyed = [0]
    original = Keying.key

    def counting(self: Keying, prompt: Prompt) -> str:
        keyed[0] += 1
        return original(self, prompt)

    monkeypatch.setattr(Keying, "key", counting)
    pairs = fake_pairs(6)
    proto = PairwiseProtocol()
    with Store(tmp_path / "s.db") as store:
        fake = _FirstCallSees(store, keyed)
        Runner(fake, store, progress=False).pairwise(pd.DataFrame(pairs[:4]))
        assert fake.at_first == (0, set())
        got = store.judgments().set_index(["item_id", "slot"])["key"]
        for p in pairs_to_judge(pd.DataFrame(pairs[:4]))[0]:
            for order in ("first", "second"):
                want = content_key(
                    model_id="fake-judge",
                    revision="r1",
                    prompt=proto.prompt(p, order).canonical(),  # type: ignore[arg-type]
                    params=proto.key_params(),
                )
                assert got[(p.item_id, order)] == want
        assert set(store.items("pairwise")) == {f"i{k}" for k in range(4)}
        # a store that holds judgments looks up every task's key before the first call
        keyed[0] = 0
        more = _FirstCallSees(store, keyed)
        summary = Runner(more, store, progress=False).pairwise(pd.DataFrame(pairs))
        assert summary.cached == 8 and summary.ok == 4
        assert more.at_first is not None and more.at_first[0] == 12
        assert more.at_first[1] == {f"i{k}" for k in range(4)}  # the new ones not yet
        assert set(store.items("pairwise")) == {f"i{k}" for k in range(6)}


def test_items_are_kept_by_a_run_with_nothing_to_judge_and_not_by_one_that_stored_nothing(
    tmp_path: Path,
) -> None:
    pairs = pd.DataFrame(fake_pairs(2))
    with Store(tmp_path / "s.db") as store:
        fake = RevokedMidRun()
        fake.calls = 2  # its first call raises the 401
        with pytest.raises(JudgeError, match="key revoked"):
            Runner(fake, store, retry=FAST, progress=False).pairwise(pairs.iloc[:1])
        assert store.items("pairwise") == {} and store.judgments().empty
        Runner(FakeBackend(), store, progress=False).pairwise(pairs)
        relabelled = pairs.assign(human=["b", "a"])
        summary = Runner(FakeBackend(), store, progress=False).pairwise(relabelled)
        assert summary.cached == 4 and summary.ok == 0
        assert [store.items("pairwise")[i]["human"] for i in ("i0", "i1")] == ["b", "a"]


def test_resumed_run_over_mirrored_pairs_equals_a_single_run(tmp_path: Path) -> None:
    # Item i1 shows i0's responses swapped: i0's first order renders the same prompt as
    # i1's second order. A copy between them must change frame (the stored value is in
    # the source item's a/b frame); before the fix, the resumed i1 was inverted.
    pairs = pd.DataFrame(mirrored_pairs(2))
    with Store(tmp_path / "single.db") as store:
        Runner(FakeBackend(), store, progress=False).pairwise(pairs)
        single = store.export_pairs().set_index("item_id")
    with Store(tmp_path / "resumed.db") as store:
        Runner(FakeBackend(), store, progress=False).pairwise(pairs.iloc[:1])  # --limit 1
        second = Runner(FakeBackend(), store, progress=False).pairwise(pairs)
        resumed = store.export_pairs().set_index("item_id")
    assert second.cached == 4  # i0's two orders, and both of i1's copied from them
    cols = ["p_a_first", "p_a_second", "p_a"]
    pd.testing.assert_frame_equal(resumed.loc[["i0", "i1"], cols], single.loc[["i0", "i1"], cols])
    # the same prompts in mirrored frames: i1's a is i0's b, and its orders are swapped
    i0, i1 = resumed.loc["i0"], resumed.loc["i1"]
    assert i1["p_a_second"] == pytest.approx(1 - i0["p_a_first"])
    assert i1["p_a_first"] == pytest.approx(1 - i0["p_a_second"])
    assert i1["p_a"] == pytest.approx(1 - i0["p_a"])


def test_transient_errors_retry_then_succeed(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        fake = FakeBackend(transient=2, retry_after=0.01, batch_size=100)
        summary = Runner(fake, store, retry=FAST, progress=False).pairwise(
            pd.DataFrame(fake_pairs(3))
        )
        assert summary.ok == 6 and fake.calls == 3
        assert set(store.judgments()["attempts"]) == {3}


@pytest.mark.parametrize("note_after", [0.3, 5.0])
def test_an_error_stops_the_run_after_the_calls_in_flight_are_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, note_after: float
) -> None:
    monkeypatch.setattr(runner_module, "STOP_NOTE_AFTER", note_after)
    pairs = pd.DataFrame(fake_pairs(10))
    with Store(tmp_path / "s.db") as store:
        fake = RevokedMidRun()
        fake.timeout = 12.5  # a server's bound on each request, said with the wait
        said = io.StringIO()
        console = Console(file=said, width=80)
        with pytest.raises(JudgeError, match="key revoked"):
            Runner(fake, store, retry=FAST, progress=False, console=console).pairwise(pairs)
        lines = said.getvalue().splitlines()
        if note_after > fake.answer_after:  # the calls in flight ended first: the error alone
            assert lines == []
            return
        # a wait that lasts is said (a hung request takes its whole timeout), on one
        # line, once the fourth call has failed: the first two are still in flight
        assert len(lines) == 1 and "once the 2 calls in flight end and are stored" in lines[0]
        assert "(HTTP 401: key revoked)" in lines[0]  # why, before the wait (or a Ctrl-C)
        assert "Ctrl-C stops now" in lines[0]
        assert "each request within 12.5 s (the timeout)" in lines[0]
        # the two answered calls are stored; the one that failed transiently is not
        # retried while the run stops (nor stored as given up); no other call is sent
        assert fake.calls == 4
        rows = store.judgments()
        assert len(rows) == 2 and set(rows["status"]) == {"ok"}
        again = FakeBackend()
        Runner(again, store, retry=FAST, progress=False).pairwise(pairs)
        assert len(store.judgments()) == 20 and set(store.judgments()["status"]) == {"ok"}


class _SlicedCounting(FakeBackend):
    """Counts tokens (so the runner counts slices beside the calls), two calls in
    flight, one prompt a call; the second slice's count ends once ``failed`` is set."""

    def __init__(self) -> None:
        super().__init__(batch_size=1, sleep=0.01)
        self.concurrency = 2
        self.counted = 0
        self.failed = threading.Event()

    def token_counts(
        self, prompts: Sequence[Prompt], continuations: Sequence[str] | None = None
    ) -> list[int]:
        self.counted += 1
        if self.counted == 2:
            self.failed.wait(30)
        return [len(p.canonical()) // 4 for p in prompts]


def test_a_store_that_cannot_write_stops_the_run_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that fails (a full disk) while the second slice is counted: no call is
    sent after it and no further slice counted (the calls queued behind it went out,
    storing nothing, until the last slice was counted)."""
    monkeypatch.setattr(runner_module, "FLUSH_ROWS", 1)  # each finished call is written
    pairs = pd.DataFrame(fake_pairs(200))  # 400 tasks: slices of 64, 128 and the rest
    fake = _SlicedCounting()
    at_failure: list[int] = []
    with Store(tmp_path / "s.db") as store:
        put = store.put

        def full(rows: Any, **record: Any) -> None:
            if fake.calls == 0:
                return put(rows, **record)  # the runner's own write before any call
            at_failure.append(fake.calls)
            fake.failed.set()
            raise OutputError("cannot write the store: the disk is full")

        monkeypatch.setattr(store, "put", full)
        with pytest.raises(OutputError, match="disk is full"):
            Runner(fake, store, retry=FAST, progress=False).pairwise(pairs)
    # no call started after the failed write (the one beside it had started), and the
    # third slice was never counted
    assert at_failure and fake.calls == at_failure[0]
    assert fake.counted == 2


def test_give_up_is_a_failed_row_and_next_run_retries(tmp_path: Path) -> None:
    pairs = pd.DataFrame(fake_pairs(3))
    with Store(tmp_path / "s.db") as store:
        fake = FakeBackend(transient=100, batch_size=100)
        summary = Runner(fake, store, retry=FAST, progress=False).pairwise(pairs)
        assert summary.failed == 6 and summary.ok == 0
        rows = store.judgments()
        assert set(rows["status"]) == {"failed"}
        assert rows["reason"].str.contains("gave up after 3 attempts: HTTP 429").all()
        assert rows["value"].isna().all()
        out = store.export_pairs()
        assert out["p_a_first"].isna().all() and set(out["status_first"]) == {"failed"}
        again = Runner(FakeBackend(), store, retry=FAST, progress=False).pairwise(pairs)
        assert again.ok == 6 and again.cached == 0
        assert len(store.judgments()) == 6  # replaced, not duplicated
        assert set(store.judgments()["attempts"]) == {4}


def test_permanent_failure_per_prompt(tmp_path: Path) -> None:
    pairs = pd.DataFrame(fake_pairs(4))
    with Store(tmp_path / "s.db") as store:
        fake = FakeBackend(fail_marker="Question number 2?")
        summary = Runner(fake, store, progress=False).pairwise(pairs)
        assert summary.failed == 2 and summary.ok == 6
        assert summary.failures == {"marked to fail": 2}


def test_explain_mode_and_likert_through_generation(tmp_path: Path) -> None:
    pairs = pd.DataFrame(fake_pairs(3))
    with Store(tmp_path / "s.db") as store:
        runner = Runner(FakeBackend(), store, progress=False)
        s = runner.pairwise(pairs, PairwiseProtocol(mode="explain"))
        assert s.ok == 6
        rows = pd.DataFrame(
            {
                "prompt_id": ["q1", "q2"],
                "model": ["gpt-4", "claude-v1"],
                "prompt": ["P1", "P2"],
                "response": ["R1", "R2"],
                "reference_conciseness": [3.0, 1.0],
            }
        )
        dims = [DIMENSIONS["conciseness"], DIMENSIONS["logical_correctness"]]
        lik = runner.likert(rows, dims)
        assert lik.total == 4
        ratings = store.export_ratings()
    # the fake answers "mostly": on the conciseness scale that is 3, not a correctness label
    conc = ratings[ratings["dimension"] == "conciseness"]
    assert list(conc["rating"]) == [3.0, 3.0] and set(conc["reference"]) == {1.0, 3.0}
    corr = ratings[ratings["dimension"] == "logical_correctness"]
    assert set(corr["status"]) == {"unparsed"} and corr["rating"].isna().all()


def test_missing_columns_and_empty_store_are_clear_errors(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        with pytest.raises(InputError, match="response_b"):
            Runner(FakeBackend(), store, progress=False).pairwise(
                pd.DataFrame({"item_id": ["1"], "prompt": ["p"], "response_a": ["a"]})
            )
        with pytest.raises(InputError, match="no pairwise judgments"):
            store.export_pairs()
    bad = tmp_path / "not.db"
    bad.write_text("this is not sqlite " * 100)
    with pytest.raises(InputError, match="not a recuse judgment store"):
        Store(bad)


WORKER = Path(__file__).with_name("kill_worker.py")


def _worker(store: Path, n: int, sleep: float, kind: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, str(WORKER), str(store), str(n), str(sleep), kind],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


@pytest.mark.parametrize("kind", ["plain", "mirrored-staged"])
def test_sigkill_at_random_points_then_resume_equals_uninterrupted(
    tmp_path: Path, kind: str
) -> None:
    # "mirrored-staged": every odd item shows the previous item's responses swapped and
    # the killed runs judge the even items before all of them, so resumes copy stored
    # judgments across items (which must change frame); the reference is one plain run.
    # 12 batches of 4, 2 in flight: an uninterrupted run takes ~0.6 s (staged: the odd
    # items' judgments are all copies, so judge twice as many items)
    n, sleep = (24 if kind == "plain" else 48), 0.1
    reference = tmp_path / "reference.db"
    proc = _worker(reference, n, 0.0, kind.removesuffix("-staged"))
    assert proc.wait(timeout=120) == 0, proc.stderr.read() if proc.stderr else ""
    rng = random.Random(1234)
    killed = tmp_path / "killed.db"
    kills = 0
    for _ in range(30):
        proc = _worker(killed, n, sleep, kind)
        assert proc.stdout is not None
        proc.stdout.readline()  # "ready": store open, judging starts
        time.sleep(rng.uniform(0.0, 0.4))
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            kills += 1
        elif proc.returncode == 0:
            break
        else:
            raise AssertionError(proc.stderr.read() if proc.stderr else "worker failed")
    else:
        proc = _worker(killed, n, sleep, kind)
        assert proc.wait(timeout=120) == 0
    assert kills >= 2  # the loop really did kill runs
    with Store(reference) as a, Store(killed) as b:
        ta, tb = _table(a), _table(b)
        assert len(ta) == 2 * n
        assert not tb.duplicated(["item_id", "slot"]).any()
        check = ["item_id", "slot", "status", "value", "mass", "p_tie"]
        pd.testing.assert_frame_equal(ta[check], tb[check])
        ea = a.export_pairs().sort_values("item_id").reset_index(drop=True)
        eb = b.export_pairs().sort_values("item_id").reset_index(drop=True)
        cols = ["item_id", "p_a_first", "p_a_second", "p_a"]
        pd.testing.assert_frame_equal(ea[cols], eb[cols])


def test_two_judge_ids_over_one_model_keep_both_judges_rows(tmp_path: Path) -> None:
    # Same model, two --judge-id labels, one store: the second run copies the first's
    # judgments under its own id. The primary key once lacked the judge, so the copies
    # replaced the first judge's rows and its verdicts were lost.
    pairs = pd.DataFrame(fake_pairs(4))
    with Store(tmp_path / "s.db") as store:
        Runner(FakeBackend(), store, judge="judge-a", progress=False).pairwise(pairs)
        second = Runner(FakeBackend(), store, judge="judge-b", progress=False).pairwise(pairs)
        assert second.cached == 8
        out = store.export_pairs()
    assert sorted(out["judge"].value_counts().items()) == [("judge-a", 4), ("judge-b", 4)]
    a = out[out["judge"] == "judge-a"].set_index("item_id")["p_a"]
    b = out[out["judge"] == "judge-b"].set_index("item_id")["p_a"]
    pd.testing.assert_series_equal(a, b, check_names=False)


def test_a_store_with_the_old_primary_key_is_migrated_keeping_every_row(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "old.db"
    with Store(path) as store:
        Runner(FakeBackend(), store, judge="judge-a", progress=False).pairwise(
            pd.DataFrame(fake_pairs(3))
        )
        before = _table(store)
    # rebuild the table as stores before the fix had it: no judge in the key
    conn = sqlite3.connect(path)
    ddl = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'judgments'").fetchone()[0]
    old = ddl.replace("PRIMARY KEY (key, item_id, slot, judge)", "PRIMARY KEY (key, item_id, slot)")
    conn.executescript(
        "ALTER TABLE judgments RENAME TO j; DROP INDEX judgments_item; "
        f"{old}; INSERT INTO judgments SELECT * FROM j; DROP TABLE j;"
    )
    conn.close()
    with Store(path) as store:
        pd.testing.assert_frame_equal(_table(store), before)
        Runner(FakeBackend(), store, judge="judge-b", progress=False).pairwise(
            pd.DataFrame(fake_pairs(3))
        )
        assert set(store.judgments()["judge"]) == {"judge-a", "judge-b"}
        assert len(store.judgments()) == 2 * len(before)


def test_with_a_progress_bar_the_first_judgment_goes_alone(tmp_path: Path) -> None:
    import io

    from rich.console import Console

    with Store(tmp_path / "s.db") as store:
        fake = FakeBackend(batch_size=100)
        quiet = Console(file=io.StringIO())
        summary = Runner(fake, store, progress=True, console=quiet).pairwise(
            pd.DataFrame(fake_pairs(3))
        )
        assert summary.ok == 6 and fake.calls == 2  # 1 judgment, then the other 5
        # a local model on a GPU (calls overlap) reports its passes: no call of one
    with Store(tmp_path / "gpu.db") as store:
        gpu = FakeBackend(batch_size=100)
        gpu.concurrency, gpu.hardware = 2, "cuda:0 bfloat16"
        summary = Runner(gpu, store, progress=True, console=quiet).pairwise(
            pd.DataFrame(fake_pairs(3))
        )
        assert summary.ok == 6 and gpu.calls == 1


@pytest.mark.parametrize(
    ("judge", "seen"),
    [
        ("org/model[fp16]", "org/model[fp16]"),  # rich markup ate "[fp16]"
        ("judge\x1b[2J\u202eevil", "judge\\x1b[2J\\u202eevil"),  # escapes, not acted on
    ],
)
def test_the_progress_bar_shows_the_judge_as_named(tmp_path: Path, judge: str, seen: str) -> None:
    import io

    from rich.console import Console

    out = io.StringIO()
    with Store(tmp_path / "s.db") as store:
        terminal = Console(file=out, force_terminal=True, width=200, color_system=None)
        Runner(FakeBackend(), store, judge=judge, progress=True, console=terminal).pairwise(
            pd.DataFrame(fake_pairs(2))
        )
        assert set(store.judgments()["judge"]) == {judge}  # the store keeps the name as read
    assert f"judging with {seen}" in out.getvalue()
    assert "\x1b[2J" not in out.getvalue() and "\u202e" not in out.getvalue()


class _SteppingBackend(FakeBackend):
    """Reports each prompt as done on its own, like a local model's length buckets."""

    def __init__(self, *, over_report: int = 1, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.over_report = over_report

    async def next_token_logprobs(self, prompts, *, top_k=20, select=None):  # type: ignore[no-untyped-def,override]
        from recuse.judging.backends.base import report_done

        out = await super().next_token_logprobs(prompts, top_k=top_k, select=select)
        for _ in prompts:
            report_done(self.over_report)
        return out


def _advances(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    from rich.progress import Progress

    seen: list[float] = []
    real = Progress.advance

    def record(self: Progress, task_id: object, advance: float = 1) -> None:
        seen.append(advance)
        real(self, task_id, advance)  # type: ignore[arg-type]

    monkeypatch.setattr(Progress, "advance", record)
    return seen


def test_the_bar_moves_per_step_the_backend_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from rich.console import Console

    seen = _advances(monkeypatch)
    with Store(tmp_path / "s.db") as store:
        fake = _SteppingBackend(batch_size=4)  # concurrency 2: two batches in flight
        quiet = Console(file=io.StringIO())
        Runner(fake, store, progress=True, console=quiet).pairwise(pd.DataFrame(fake_pairs(5)))
    steps = [a for a in seen if a]
    assert sum(seen) == 10 and steps == [1] * 10  # per judgment, never a batch at once


def test_over_reporting_and_retries_never_push_the_bar_past_the_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from rich.console import Console

    seen = _advances(monkeypatch)
    with Store(tmp_path / "s.db") as store:
        fake = _SteppingBackend(batch_size=4, over_report=3, transient=1)
        quiet = Console(file=io.StringIO())
        summary = Runner(fake, store, retry=FAST, progress=True, console=quiet).pairwise(
            pd.DataFrame(fake_pairs(5))
        )
    assert summary.ok == 10 and sum(seen) == 10


def test_the_final_rate_is_judgments_over_the_whole_run() -> None:
    """12 judgments that finish in two reports 0.5 ms apart after two minutes read
    0.10/s (12 / 120 s), not rich's rate of the last burst (11 / 0.5 ms = 22000/s)."""
    from rich.progress import Progress

    from recuse.judging.runner import _RateColumn

    now = [0.0]
    bar = Progress(_RateColumn(), get_time=lambda: now[0], disable=True)
    task = bar.add_task("judging", total=12)
    now[0] = 119.9995
    bar.advance(task, 1)
    assert str(_RateColumn().render(bar.tasks[0])) == "  -  /s"  # one report: no rate yet
    now[0] = 120.0
    bar.advance(task, 11)
    assert bar.tasks[0].finished
    assert str(_RateColumn().render(bar.tasks[0])) == "  0.10/s"


class _GCWatcher(FakeBackend):
    """Records the garbage collector's frozen objects and young threshold at each call;
    asks for a quiet collector as a server's backend does, unless ``quiet=False``."""

    def __init__(self, *, quiet: bool = True, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.quiet_collector = quiet
        self.frozen: list[int] = []
        self.young: list[int] = []

    async def next_token_logprobs(self, prompts, *, top_k=20, select=None):  # type: ignore[no-untyped-def,override]
        import gc

        self.frozen.append(gc.get_freeze_count())
        self.young.append(gc.get_threshold()[0])
        return await super().next_token_logprobs(prompts, top_k=top_k, select=select)


def test_the_collector_is_kept_quiet_during_a_run_and_given_back(tmp_path: Path) -> None:
    import gc

    from recuse.judging.runner import GC_YOUNG

    assert gc.get_freeze_count() == 0
    thresholds = gc.get_threshold()
    gc.set_threshold(123, thresholds[1], 9)
    try:
        with Store(tmp_path / "s.db") as store:
            fake = _GCWatcher(batch_size=2)
            summary = Runner(fake, store, progress=False).pairwise(pd.DataFrame(fake_pairs(3)))
        assert summary.ok == 6 and fake.calls == 3
        # every object alive before the run (modules, the store, the tasks) left out of
        # full passes while it runs; young passes further apart; both handed back after
        assert all(n > 1000 for n in fake.frozen), fake.frozen
        assert fake.young == [GC_YOUNG] * 3
        assert gc.get_freeze_count() == 0
        assert gc.get_threshold() == (123, thresholds[1], 9)
    finally:
        gc.set_threshold(*thresholds)


class _FirstCallWaits(_GCWatcher):
    """A quiet-collector watcher whose first call runs ``first()`` before it records."""

    def __init__(self, first: Callable[[], object]) -> None:
        super().__init__(batch_size=2)
        self.first: Callable[[], object] | None = first

    async def next_token_logprobs(self, prompts, *, top_k=20, select=None):  # type: ignore[no-untyped-def,override]
        first, self.first = self.first, None
        if first is not None:
            first()
        return await super().next_token_logprobs(prompts, top_k=top_k, select=select)


def test_runs_in_two_threads_keep_the_collector_quiet_until_the_last_ends(
    tmp_path: Path,
) -> None:
    # the first run to end gave the collector back while the second still ran (its
    # calls saw the threshold and freeze of no run); each run saved what it found, so
    # two that began together could leave the other's threshold for good
    import gc

    from recuse.judging.runner import GC_YOUNG

    wait = 30.0  # seconds: a bound on each wait, never reached when the code is right
    a_in, b_in, a_done = threading.Event(), threading.Event(), threading.Event()
    first = _FirstCallWaits(lambda: (a_in.set(), b_in.wait(wait)))
    second = _FirstCallWaits(lambda: (b_in.set(), a_done.wait(wait)))
    summaries: dict[str, Any] = {}

    def judge(name: str, fake: _GCWatcher, done: threading.Event | None) -> None:
        try:
            with Store(tmp_path / f"{name}.db") as store:
                runner = Runner(fake, store, progress=False)
                summaries[name] = runner.pairwise(pd.DataFrame(fake_pairs(3)))
        finally:
            if done is not None:
                done.set()

    assert gc.get_freeze_count() == 0
    thresholds = gc.get_threshold()
    gc.set_threshold(123, thresholds[1], 9)
    try:
        threads = [
            threading.Thread(target=judge, args=("a", first, a_done)),
            threading.Thread(target=judge, args=("b", second, None)),
        ]
        threads[0].start()
        assert a_in.wait(wait)  # the first run is in its calls: the second begins
        threads[1].start()
        for t in threads:
            t.join(4 * wait)
        assert summaries["a"].ok == summaries["b"].ok == 6
        # every call of the second run, all made after the first run ended, still quiet
        assert len(second.young) == 3 and second.young == [GC_YOUNG] * 3
        assert all(n > 1000 for n in second.frozen), second.frozen
        assert gc.get_freeze_count() == 0
        assert gc.get_threshold() == (123, thresholds[1], 9)
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def test_a_local_models_run_leaves_the_collector_as_it_is(tmp_path: Path) -> None:
    import gc

    from recuse.judging.backends.http import HTTPBackend
    from recuse.judging.backends.local import LocalBackend

    # a local model's tensors in a reference cycle from before the run (a dropped
    # backend) must stay collectable: only a server's backend asks for quiet
    assert HTTPBackend("http://127.0.0.1:9/v1", model="m").quiet_collector
    assert not LocalBackend.quiet_collector
    thresholds = gc.get_threshold()
    with Store(tmp_path / "s.db") as store:
        fake = _GCWatcher(quiet=False)
        Runner(fake, store, progress=False).pairwise(pd.DataFrame(fake_pairs(2)))
    assert fake.frozen == [0] * len(fake.frozen) and fake.frozen
    assert fake.young == [thresholds[0]] * len(fake.young)


def test_a_process_that_manages_its_collector_keeps_it_as_it_is(tmp_path: Path) -> None:
    import gc

    thresholds = gc.get_threshold()
    gc.freeze()  # (as a server does before it forks)
    try:
        before = gc.get_freeze_count()
        with Store(tmp_path / "s.db") as store:
            fake = _GCWatcher()
            Runner(fake, store, progress=False).pairwise(pd.DataFrame(fake_pairs(2)))
        # neither frozen again (thousands more) nor unfrozen (0) by the run; a few frozen
        # objects may be freed meanwhile by another thread of this process (an earlier
        # test's Ray driver threads, in a suite run)
        assert fake.frozen and all(before - 50 <= n <= before for n in fake.frozen)
        assert fake.young == [thresholds[0]] * len(fake.young)
        assert before - 50 <= gc.get_freeze_count() <= before  # not unfrozen by the run
    finally:
        gc.unfreeze()
    gc.disable()
    try:
        with Store(tmp_path / "t.db") as store:
            fake = _GCWatcher()
            Runner(fake, store, progress=False).pairwise(pd.DataFrame(fake_pairs(2)))
        assert fake.frozen == [0] * len(fake.frozen) and fake.frozen
        assert not gc.isenabled()
    finally:
        gc.enable()
    # a threshold of 0 turns automatic collection off too (gc.set_threshold): raising
    # it to GC_YOUNG for the run would turn it back on
    thresholds = gc.get_threshold()
    gc.set_threshold(0, *thresholds[1:])
    try:
        with Store(tmp_path / "u.db") as store:
            fake = _GCWatcher()
            Runner(fake, store, progress=False).pairwise(pd.DataFrame(fake_pairs(2)))
        assert fake.young == [0] * len(fake.young) and fake.young
        assert fake.frozen == [0] * len(fake.frozen)
        assert gc.get_threshold()[0] == 0
    finally:
        gc.set_threshold(*thresholds)


def _in_a_cell(judge: Callable[[], _R], outer: str = "jupyter") -> _R:
    """``judge()`` called as a notebook cell calls it: from plain synchronous code
    inside a running event loop. ``outer`` "jupyter": the loop as Jupyter's kernel runs
    it (no SIGINT handler of its own: Ctrl-C raises KeyboardInterrupt where the cell
    is); "jupyter-await": a cell with a top-level await, whose SIGINT handler (as
    ipykernel's) only asks the loop to cancel the cell; "asyncio.run": an ``async def``
    main (asyncio's SIGINT handler cancels it)."""
    import asyncio

    async def cell() -> _R:
        return judge()

    if outer == "asyncio.run":
        return asyncio.run(cell())
    loop = asyncio.new_event_loop()
    task = loop.create_task(cell())
    before = signal.getsignal(signal.SIGINT)
    if outer == "jupyter-await":
        signal.signal(signal.SIGINT, lambda *_: loop.call_soon_threadsafe(task.cancel))
    try:
        return loop.run_until_complete(task)
    finally:
        signal.signal(signal.SIGINT, before)
        if task.done() and not task.cancelled():
            # raised here: else the task logs it when collected, which may be inside
            # an ast.parse (CPython 3.11 then fails every later ast.parse)
            task.exception()
        loop.close()


def test_a_run_in_a_notebook_cell_stores_what_a_plain_run_stores_and_resumes(
    tmp_path: Path, recwarn: pytest.WarningsRecorder
) -> None:
    """A Runner called inside a running event loop (a notebook cell, an async
    function) was refused (asyncio.run cannot start there): its event loop now runs in
    a worker thread, lent the store, and the run stores exactly what a plain run stores
    (keys, values, statuses), with the same summary; a rerun in a cell reuses all of it
    and calls the backend no more. The store is the caller's again after each run."""
    import gc

    pairs = pd.DataFrame(fake_pairs(6))
    with Store(tmp_path / "plain.db") as store:
        plain = Runner(FakeBackend(batch_size=2), store, progress=False).pairwise(pairs)
        expected = _table(store)
    gc.collect()  # what earlier tests left (their unclosed sockets warn as collected)
    recwarn.clear()
    with Store(tmp_path / "cell.db") as store:
        fake = FakeBackend(batch_size=2)
        run = Runner(fake, store, progress=False)
        summary = _in_a_cell(lambda: run.pairwise(pairs))
        assert (summary.total, summary.ok, summary.cached) == (12, 12, 0)
        assert (plain.total, plain.ok, plain.cached) == (12, 12, 0)
        pd.testing.assert_frame_equal(_table(store), expected)
        calls = fake.calls
        again = _in_a_cell(lambda: run.pairwise(pairs))
        assert (again.cached, again.ok, fake.calls) == (12, 0, calls)
        pd.testing.assert_frame_equal(_table(store), expected)
    gc.collect()  # an unawaited coroutine warns as it is collected
    assert [str(w.message) for w in recwarn if "never awaited" in str(w.message)] == []


def test_a_run_in_a_notebook_cell_draws_its_progress_bar_once(tmp_path: Path) -> None:
    """The progress bar drawn by the worker thread that runs a cell's event loop: one
    final line, the whole count, on the runner's console, as from a plain run."""
    pairs = pd.DataFrame(fake_pairs(4))
    lines = {}
    for where in ("plain", "cell"):
        out = io.StringIO()
        console = Console(file=out, width=120, force_terminal=False)
        with Store(tmp_path / f"{where}.db") as store:
            run = Runner(FakeBackend(), store, progress=True, console=console).pairwise
            _in_a_cell(lambda r=run: r(pairs)) if where == "cell" else run(pairs)
        lines[where] = [line for line in out.getvalue().splitlines() if line.strip()]
    assert len(lines["cell"]) == len(lines["plain"]) == 1
    words = lines["cell"][0].split()
    assert words[:5] == lines["plain"][0].split()[:5]
    assert words[:3] == ["judging", "with", "fake-judge"] and words[4] == "8/8"
    assert set(words[3]) == {"━"}  # the bar, whole


class _InterruptsAtCall(FakeBackend):
    """One prompt a call, one call at a time; its call ``at`` (1-based) raises
    KeyboardInterrupt in the main thread, as Jupyter's "interrupt kernel" does
    (:func:`_thread.interrupt_main`), and waits to be cancelled; where ``again``, it
    does so once more as it is cancelled, and holds up its thread a while (a second
    press while the run stops, a CPU pass that Python cannot cut short). Remembers
    the prompts it answered and the threads it ran in."""

    def __init__(self, at: int, *, again: bool = False) -> None:
        super().__init__(batch_size=1)
        self.concurrency = 1
        self.at, self.again = at, again
        self.answered: list[str] = []
        self.threads: set[str] = set()

    async def next_token_logprobs(  # type: ignore[override]
        self, prompts: Sequence[Prompt], **options: Any
    ) -> list[dict[str, float] | Failure]:
        import _thread
        import asyncio

        self.calls += 1
        self.threads.add(threading.current_thread().name)
        if self.calls == self.at:
            _thread.interrupt_main()
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                if self.again:  # the press lands while this thread is held up
                    _thread.interrupt_main()
                    time.sleep(0.3)  # (the thread that waits looks every 0.1 s)
                raise
        self.answered += [p.canonical() for p in prompts]
        return [self.dist(p.canonical()) for p in prompts]


@pytest.mark.parametrize("again", [False, True], ids=["once", "twice"])
@pytest.mark.parametrize("outer", ["jupyter", "jupyter-await", "asyncio.run"])
def test_interrupting_a_notebook_cell_keeps_what_finished_and_a_rerun_goes_on(
    tmp_path: Path, again: bool, outer: str
) -> None:
    """Ctrl-C in Jupyter ("interrupt kernel") raises KeyboardInterrupt in the main
    thread, which waits for the worker that runs the cell's event loop: the run's task
    is cancelled as a plain run's is on Ctrl-C, the two judgments finished are
    committed, the store is the caller's again and the cell gets KeyboardInterrupt. A
    second press while it stops is the same stop (the run is not cut short, the worker
    not left running). A rerun in a cell judges the ten left, not the two stored, and
    the store then holds what a plain run stores. The worker installed no signal
    handler (Python refuses it outside the main thread) and left the caller's. Under
    asyncio.run, whose handler cancels the calling task instead, the same. In a cell
    with a top-level await, whose handler leaves the cell's cancel to the loop that the
    run holds up, the interrupt did nothing until the run ended: now the same too
    (tests/test_interrupt_kernel.py checks it in a real kernel)."""
    pairs = pd.DataFrame(fake_pairs(6))
    with Store(tmp_path / "plain.db") as store:
        Runner(FakeBackend(), store, progress=False).pairwise(pairs)
        expected = _table(store)
    handler = signal.getsignal(signal.SIGINT)
    with Store(tmp_path / "cell.db") as store:
        fake = _InterruptsAtCall(3, again=again)
        with pytest.raises(KeyboardInterrupt):
            _in_a_cell(lambda: Runner(fake, store, progress=False).pairwise(pairs), outer)
        assert fake.threads == {"recuse-run"}
        assert "recuse-run" not in {t.name for t in threading.enumerate()}
        stored = _table(store)  # the caller's thread uses the store again
        assert len(stored) == len(fake.answered) == 2 and set(stored["status"]) == {"ok"}
        pd.testing.assert_frame_equal(
            stored, expected[expected["key"].isin(stored["key"])].reset_index(drop=True)
        )
        with sqlite3.connect(tmp_path / "cell.db") as db:
            assert db.execute("SELECT COUNT(*) FROM leases").fetchone()[0] == 0
        rest = _InterruptsAtCall(0)
        summary = _in_a_cell(lambda: Runner(rest, store, progress=False).pairwise(pairs))
        assert (summary.cached, summary.ok, rest.calls) == (2, 10, 10)
        assert not set(rest.answered) & set(fake.answered)
        pd.testing.assert_frame_equal(_table(store), expected)
    assert signal.getsignal(signal.SIGINT) is handler


class _InterruptedInAPass(FakeBackend):
    """One prompt a call, one call at a time and no timeout, as a local model on the
    CPU: its second call is a pass that holds its thread (which Python cannot cut
    short) and takes the Ctrl-C of a notebook's "interrupt kernel" while it runs."""

    def __init__(self) -> None:
        super().__init__(batch_size=1)
        self.concurrency = 1
        self.answered = 0

    async def next_token_logprobs(  # type: ignore[override]
        self, prompts: Sequence[Prompt], **options: Any
    ) -> list[dict[str, float] | Failure]:
        import _thread
        import asyncio

        self.calls += 1
        await asyncio.sleep(0)  # the call's setup, as a model's: the loop runs
        if self.calls == 2:
            _thread.interrupt_main()
            time.sleep(0.4)  # the pass; the thread that waits looks every 0.1 s
        self.answered += 1
        return [self.dist(p.canonical()) for p in prompts]


def test_interrupting_a_cell_during_a_pass_says_so_at_once_and_stores_the_pass(
    tmp_path: Path,
) -> None:
    """Ctrl-C in a notebook cell while a local model's pass runs on the run's thread:
    the note a plain run's signal handler prints at once (the run stops once the pass
    ends, its judgments stored) is printed by the thread that waits, while the pass
    still runs; the pass's judgment is then stored beside the one before it, and the
    cell gets KeyboardInterrupt."""
    out = io.StringIO()
    console = Console(file=out, width=200, force_terminal=False)
    fake = _InterruptedInAPass()
    with Store(tmp_path / "s.db") as store:
        run = Runner(fake, store, progress=False, console=console)
        with pytest.raises(KeyboardInterrupt):
            _in_a_cell(lambda: run.pairwise(pd.DataFrame(fake_pairs(4))))
        assert len(store.judgments()) == fake.answered == 2
    note = "recuse: stopping once the model's pass in progress ends (its judgments are stored)"
    assert out.getvalue().splitlines() == [note]


def test_a_run_from_python_code_leaves_its_signal_handlers_as_they_were(tmp_path: Path) -> None:
    """Recuse used as a library: a run (whose event loop the program's Ctrl-C and
    SIGTERM stop, recuse.interrupt) installs no handler of its own and leaves the
    caller's in place, twice in a row; a Ctrl-C during it goes to the caller's."""
    got: list[int] = []

    def mine(signum: int, _frame: object) -> None:
        got.append(signum)

    class CtrlCOnThird(FakeBackend):
        async def _tick(self) -> None:
            await super()._tick()
            if self.calls == 3:
                os.kill(os.getpid(), signal.SIGINT)

    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        for s in before:
            signal.signal(s, mine)
        for n in (10, 20):  # the second run goes on from the first's store
            with Store(tmp_path / "s.db") as store:
                summary = Runner(CtrlCOnThird(), store, progress=False).pairwise(
                    pd.DataFrame(fake_pairs(n))
                )
            # not stopped (the caller's handler took the Ctrl-C): 20 judged each time,
            # the second run those of pairs 10 to 19 only
            assert summary.ok == 20
            assert {s: signal.getsignal(s) for s in before} == dict.fromkeys(before, mine)
        assert got == [signal.SIGINT, signal.SIGINT]
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def test_the_bars_eta_is_the_runs_mean_rate_not_a_burst() -> None:
    """A local model reports its items a pass at a time: 1 item at 1 s, then 16 at
    50 s and 16 at 51 s of 48. rich's time-remaining column (its rate over the last
    passes) read about a second left; the bar's ETA is the 15 left at the run's mean
    rate, 33 items in 51 s: 15 * 51 / 33 = 23.2 s, shown rounded up."""
    from rich.progress import Progress, TimeRemainingColumn

    from recuse.judging.runner import _EtaColumn

    now = [0.0]
    progress = Progress(get_time=lambda: now[0], disable=True)
    bar = progress.add_task("judging", total=48)
    for at, items in ((1.0, 1), (50.0, 16), (51.0, 16)):
        now[0] = at
        progress.advance(bar, items)
    task = progress.tasks[0]
    assert _EtaColumn().render(task).plain == "0:00:24"
    assert TimeRemainingColumn().render(task).plain in ("0:00:01", "0:00:02")  # the burst
    now[0] = 60.0
    progress.advance(bar, 15)
    assert _EtaColumn().render(progress.tasks[0]).plain == "0:00:00"  # done
    fresh = Progress(get_time=lambda: now[0], disable=True)
    fresh.add_task("judging", total=48)
    assert _EtaColumn().render(fresh.tasks[0]).plain == "-:--:--"  # nothing done yet
