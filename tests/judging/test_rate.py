"""One rate per judging run: the bar's final figure, the summary line and the card.

Before, a stand-in run of 80 judgments read 102.85/s on the bar (its own clock, from
when the bar was added, counting failed judgments), 101.05 judgments/s on the card
(the run's whole wall time, answered judgments only) and "(0.8 s)" on the summary
line, with nothing said about why they differed.
"""

from __future__ import annotations

import io
import re
import time
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from judging.helpers import FakeBackend, fake_pairs
from recuse.cli import main
from recuse.judging import PairwiseProtocol, Runner
from recuse.judging.card import cards
from recuse.judging.protocols import Prompt
from recuse.judging.rate import RunClock, per_second
from recuse.judging.store import Store
from recuse.numbers import decimal
from recuse.testing.standin import StandIn

LINE = re.compile(
    r"; (\d+) finished \(answered or failed\) in ([\d.,]+) s from the first call to the last: "
    r"([\d.,]+)/s"
)


def test_bar_summary_and_card_over_a_run_with_planted_failures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """20 judgments, one request each and one attempt: the stand-in's 500s are the
    failed judgments, its answers without a verdict the unparsed ones. The bar and the
    summary line count all 20 over the run's clock, the card the answered ones over the
    same seconds (the run's recorded ones), and each says what it counts."""
    src = tmp_path / "pairs.jsonl"
    pd.DataFrame(fake_pairs(10)).to_json(src, orient="records", lines=True)
    store = tmp_path / "s.db"
    with StandIn(faults={"500": 0.35, "noverdict": 0.2}, seed=5, latency=0.01) as server:
        code = main(["judge", "--model", "gpt-4o", "--base-url", server.base_url, "--data",
                     str(src), "--out", str(store), "--max-attempts", "1"])  # fmt: skip
        served = dict(server.served)
    failed, unparsed = served["500"], served["noverdict"]
    answered = 20 - failed
    assert code == 1 and failed and unparsed and sum(served.values()) == 20
    cap = capsys.readouterr()
    with Store(store, read_only=True) as s:
        runs = s.runs()
    assert runs["judgments"].tolist() == [answered]
    seconds = float(runs["seconds"].iloc[0])  # the run's clock, as recorded
    # the summary line: 20 finished over the recorded seconds, its rate by hand
    (summary,) = [line for line in cap.out.splitlines() if line.startswith("20 judgments:")]
    assert f"{answered - unparsed} ok, {unparsed} unparsed, {failed} failed" in summary
    found = LINE.search(summary)
    assert found is not None, summary
    assert found.groups() == ("20", decimal(seconds, 2), decimal(20 / seconds, 2))
    # the bar's final figure: the same number, beside the 20/20 it counts
    assert re.search(rf"20/20 +{re.escape(decimal(20 / seconds, 2))}/s ", cap.err), cap.err
    # the card: answered judgments over the same seconds, said so
    (card,) = [line for line in cap.out.splitlines() if line.startswith("card: ")]
    assert (
        f"gpt-4o: {decimal(answered / seconds, 2)} answered judgments/s ({answered} answered, "
        f"ok or unparsed, in {decimal(seconds, 2)} s from each run's first call to its last; "
        "failed ones not counted)"
    ) in card, card
    (c,) = cards(runs)
    assert c.judgments == answered and c.seconds == seconds
    assert c.judgments_per_second == answered / seconds


class _SlowToLoad(FakeBackend):
    """Counts tokens (a local model would, loading itself the first time) for
    ``load`` seconds before its first call; each call takes ``sleep``."""

    def __init__(self, load: float, **kwargs: float) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.load = load
        self.first_call: float | None = None
        self.last_end: float | None = None

    def token_counts(
        self, prompts: Sequence[Prompt], continuations: Sequence[str] | None = None
    ) -> list[int] | None:
        time.sleep(self.load)
        return None

    async def _tick(self) -> None:
        if self.first_call is None:
            self.first_call = time.perf_counter()
        await super()._tick()
        self.last_end = time.perf_counter()


def test_the_clock_runs_from_the_first_call_to_the_last(tmp_path: Path) -> None:
    """A model loading for 0.6 s before the first of 4 calls of 0.05 s (two at a time):
    the run's seconds are those of its calls, not the load's; the bar's final figure is
    the summary's rate, the card's the answered judgments over the same seconds."""
    pairs = pd.DataFrame(fake_pairs(8))  # 16 judgments, 4 per call, 1 marked to fail
    pairs.loc[3, "response_a"] = "FAILME"
    out = io.StringIO()
    backend = _SlowToLoad(0.6, sleep=0.05)
    backend.fail_marker = "FAILME"
    with Store(tmp_path / "s.db") as store:
        runner = Runner(backend, store, judge="j", console=Console(file=out, width=200))
        started = time.perf_counter()
        summary = runner.pairwise(pairs, PairwiseProtocol())
        whole = time.perf_counter() - started
        runs = store.runs()
    assert summary.failed == 2 and summary.finished == 16 and summary.ok + summary.unparsed == 14
    assert backend.first_call is not None and backend.last_end is not None
    calls = backend.last_end - backend.first_call
    # the calls' span, within the commit of the last outcome; the load is not in it
    assert calls <= summary.seconds < calls + 0.25 and whole > summary.seconds + 0.55
    assert summary.rate == 16 / summary.seconds
    figure = re.escape(decimal(16 / summary.seconds, 2))
    assert re.search(rf"16/16 +{figure}/s ", out.getvalue()), out.getvalue()
    assert runs["seconds"].tolist() == [summary.seconds] and runs["judgments"].tolist() == [14]
    (c,) = cards(runs)
    assert c.judgments_per_second == 14 / summary.seconds


def test_the_clock_and_the_division() -> None:
    clock = RunClock()
    assert clock.seconds == 0.0  # nothing sent
    clock.call()
    first = clock.first
    clock.call()  # only the first call starts it
    assert clock.first == first and clock.seconds == 0.0  # nothing back yet
    assert first is not None
    clock.outcome(first + 2.0)
    clock.outcome(first + 5.0)  # the last outcome ends it
    assert clock.seconds == 5.0
    assert per_second(10, 4.0) == 2.5 and per_second(3, 0.0) is None


def test_a_run_that_sends_nothing_says_so_and_has_no_rate(tmp_path: Path) -> None:
    pairs = pd.DataFrame(fake_pairs(2))
    with Store(tmp_path / "s.db") as store:
        Runner(FakeBackend(), store, judge="j", progress=False).pairwise(pairs)
        again = Runner(FakeBackend(), store, judge="j", progress=False).pairwise(pairs)
        assert len(store.runs()) == 1  # the second run computed nothing: no run recorded
    assert again.rate is None and again.seconds == 0.0
    assert again.line() == "4 judgments: 4 already stored, 0 ok, 0 unparsed, 0 failed; none sent"


def test_the_runs_of_one_command_are_said_summed(tmp_path: Path) -> None:
    """A probe table's two questions (and a recording's order groups) are two runs, each
    with its bar and its clock; their summary added the seconds and said "from the first
    call to the last", which the time between the runs is not in. The combined line
    says the runs' clocks are summed, the seconds the card sums for them; a run that
    sent nothing is not counted among them."""
    from recuse.judging.runner import RunSummary

    pairs = pd.DataFrame(fake_pairs(6))
    with Store(tmp_path / "s.db") as store:
        runner = Runner(FakeBackend(sleep=0.01), store, judge="j", progress=False)
        parts = [runner.pairwise(pairs.iloc[:2]), runner.pairwise(pairs.iloc[2:]),
                 runner.pairwise(pairs.iloc[:2])]  # fmt: skip
        runs = store.runs()
    assert [p.finished for p in parts] == [4, 8, 0]
    total = RunSummary.combine(parts)
    seconds = parts[0].seconds + parts[1].seconds
    assert (total.runs, total.total, total.cached, total.finished) == (2, 16, 4, 12)
    assert total.seconds == seconds and float(runs["seconds"].sum()) == seconds
    assert total.line().endswith(
        f"; 12 finished (answered or failed) in {decimal(seconds, 2)} s, each of its 2 runs "
        f"from its first call to its last, summed: {decimal(12 / seconds, 2)}/s"
    ), total.line()
    # one run that sent: the single run's words; none: none sent
    assert "from the first call to the last" in RunSummary.combine(parts[1:]).line()
    assert RunSummary.combine(parts[2:]).line().endswith("; none sent")
