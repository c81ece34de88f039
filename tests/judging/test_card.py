"""The evaluator card: usage the stand-in server reports, recorded per run, priced."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from judging.helpers import fake_pairs
from recuse.cli import main
from recuse.errors import InputError
from recuse.judging.card import Card, cards, read_prices
from recuse.judging.store import Store
from recuse.testing.standin import StandIn


def test_card_from_a_judged_store_against_the_stand_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "pairs.jsonl"
    pd.DataFrame(fake_pairs(5)).to_json(src, orient="records", lines=True)
    store = tmp_path / "s.db"
    args = ["judge", "--model", "gpt-4o", "--data", str(src), "--out", str(store), "--no-progress"]
    with StandIn() as server:
        assert main([*args[:3], "--base-url", server.base_url, *args[3:]]) == 0
        out = capsys.readouterr().out
        assert "card: gpt-4o:" in out and "tokens in" in out
        # a rerun computes nothing: no new run, the card is unchanged
        assert main([*args[:3], "--base-url", server.base_url, *args[3:]]) == 0
    with Store(store, read_only=True) as s:
        runs = s.runs()
    assert len(runs) == 1 and runs["judgments"].iloc[0] == 10
    # the stand-in reports prompt tokens = words of the prompt, completion tokens = 1
    prices = tmp_path / "prices.csv"
    prices.write_text("judge,input_per_million,output_per_million\ngpt-4o,2.5,10\n")
    (c,) = cards(runs, read_prices(prices))
    tin, tout = runs["tokens_in"].iloc[0] / 10, runs["tokens_out"].iloc[0] / 10
    assert tout == 1 and tin > 20
    assert c.usd_per_1000_judgments == pytest.approx(1000 * (tin * 2.5 + tout * 10) / 1e6)
    assert main(["judge", "card", str(store), "--prices", str(prices)]) == 0
    assert "per 1,000 judgments" in capsys.readouterr().out


def test_bad_price_tables(tmp_path: Path) -> None:
    bad = tmp_path / "p.csv"
    bad.write_text("judge,input_per_million,output_per_million\ngpt-4o,cheap,1\n")
    with pytest.raises(InputError, match="not a non-negative number"):
        read_prices(bad)
    toml = tmp_path / "p.toml"
    toml.write_text('["gpt-4o"]\ninput_per_million = 2.5\n')
    with pytest.raises(InputError, match="needs"):
        read_prices(toml)
    toml.write_text('["gpt-4o"]\ninput_per_million = 2.5\noutput_per_million = 10\n')
    assert read_prices(toml) == {"gpt-4o": (2.5, 10.0)}
    toml.write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")  # was a RecursionError
    with pytest.raises(InputError, match="nested too deeply for Python's TOML reader"):
        read_prices(toml)
    bad.write_text("judge,input_per_million,output_per_million\ngpt-4o,2.5,1e300\n")
    with pytest.raises(InputError, match=r"row 1.*'1e300' is over 1e\+09 USD per million"):
        read_prices(bad)  # was read, and the card wrote a 300-digit cost
    bad.write_text("judge,input_per_million,output_per_million\ngpt-4o,1e9,0\n")
    assert read_prices(bad) == {"gpt-4o": (1e9, 0.0)}
    bad.write_text("judge,input_per_million,output_per_million\n")  # said no fix
    with pytest.raises(InputError, match="empty — give one row per judge: judge,input_per"):
        read_prices(bad)


def test_audit_shows_the_card_and_an_old_store_has_no_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json
    import sqlite3

    src = tmp_path / "pairs.jsonl"
    pd.DataFrame(fake_pairs(12)).to_json(src, orient="records", lines=True)
    store, table, report = tmp_path / "s.db", tmp_path / "p.csv", tmp_path / "r"
    with StandIn() as server:
        assert main(["judge", "--model", "gpt-4o", "--base-url", server.base_url, "--data",
                     str(src), "--out", str(store), "--no-progress"]) == 0  # fmt: skip
    assert main(["judge", "export", str(store), "--out", str(table)]) == 0
    assert main(["audit", str(table), "--store", str(store), "--out", str(report)]) == 0
    d = json.loads((report / "report.json").read_text())
    assert any(s["id"] == "evaluator-card" for s in d["sections"])
    assert "Evaluator card" in (report / "report.html").read_text()
    capsys.readouterr()
    # a store from before runs were recorded: the table is missing, the card says so
    with sqlite3.connect(store) as conn:
        conn.execute("DROP TABLE runs")
    assert main(["judge", "card", str(store)]) == 0
    assert "no runs recorded" in capsys.readouterr().out


def _judged(tmp_path: Path, *judge: str) -> Path:
    """A store of one stand-in run: 3 pairs judged by ``--model gpt-4o`` plus ``judge``
    options (e.g. ``--judge-id``)."""
    tmp_path.mkdir(exist_ok=True)
    src = tmp_path / "pairs.jsonl"
    pd.DataFrame(fake_pairs(3)).to_json(src, orient="records", lines=True)
    store = tmp_path / "s.db"
    with StandIn() as server:
        assert main(["judge", "--model", "gpt-4o", "--base-url", server.base_url, "--data",
                     str(src), "--out", str(store), "--no-progress", *judge]) == 0  # fmt: skip
    return store


def _prices(tmp_path: Path, *rows: str) -> Path:
    path = tmp_path / "prices.csv"
    path.write_text("judge,input_per_million,output_per_million\n" + "\n".join(rows) + "\n")
    return path


def test_prices_match_judges_through_the_roster_and_unmatched_rows_are_noted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    roster = tmp_path / "roster.toml"
    roster.write_text('[[model]]\nid = "house-judge"\nfamily = "house"\naliases = ["hj-v1"]\n')
    store = _judged(tmp_path, "--judge-id", "HJ-v1")  # the id as the user wrote it
    with Store(store, read_only=True) as s:
        runs = s.runs()
    tin, tout = runs["tokens_in"].iloc[0] / 6, runs["tokens_out"].iloc[0] / 6
    # the row names the roster id, the store holds an alias in other case: one judge
    prices = _prices(tmp_path, "house-judge,2,8", "gpt-5-preview,1,1")
    capsys.readouterr()
    assert main(["--roster", str(roster), "judge", "card", str(store), "--prices",
                 str(prices)]) == 0  # fmt: skip
    out = capsys.readouterr().out
    cost = 1000 * (tin * 2 + tout * 8) / 1e6
    assert "HJ-v1: " in out and f"${cost:.3f} per 1,000 judgments" in out
    assert "price row 2 ('gpt-5-preview') matches no judge in" in out
    assert "judges there: HJ-v1" in out
    # case alone, with the built-in roster's id
    store2 = _judged(tmp_path / "two")
    prices = _prices(tmp_path, "GPT-4O,2,8")
    capsys.readouterr()
    assert main(["judge", "card", str(store2), "--prices", str(prices)]) == 0
    out = capsys.readouterr().out
    assert "no price given" not in out and "per 1,000 judgments" in out and "note:" not in out


def test_a_judge_priced_twice_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = _judged(tmp_path)
    roster = tmp_path / "roster.toml"
    roster.write_text('[[model]]\nid = "house-judge"\nfamily = "house"\naliases = ["hj-v1"]\n')
    cases = [
        (("gpt-4o,2,8", "x,1,1", "gpt-4o,3,9"), [], "row 3", "(also in row 1)"),
        (("gpt-4o,2,8", "GPT-4o,3,9"), [], "row 2", "'gpt-4o' and 'GPT-4o'"),
        (("house-judge,2,8", "HJ-V1,3,9"), ["--roster", str(roster)], "row 2",
         "one judge through the roster"),
    ]  # fmt: skip
    for rows, extra, row, why in cases:
        prices = _prices(tmp_path, *rows)
        capsys.readouterr()
        assert main([*extra, "judge", "card", str(store), "--prices", str(prices)]) == 2
        err = capsys.readouterr().err.strip()
        assert "priced twice" in err and row in err and why in err and "column 'judge'" in err
        assert len(err.splitlines()) == 1
    toml = tmp_path / "p.toml"
    toml.write_text('["gpt-4o"]\ninput_per_million = 1\noutput_per_million = 2\n'
                    '["GPT-4o"]\ninput_per_million = 1\noutput_per_million = 2\n')  # fmt: skip
    with pytest.raises(InputError, match=r"row 2.*priced twice \(also in row 1"):
        read_prices(toml)


def test_audit_notes_unmatched_price_rows_in_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    store = _judged(tmp_path)
    table, report = tmp_path / "p.csv", tmp_path / "r"
    assert main(["judge", "export", str(store), "--out", str(table)]) == 0
    prices = _prices(tmp_path, "gpt-4o,2,8", "claude-v1,3,15")
    capsys.readouterr()
    args = ["audit", str(table), "--only", "position", "--out", str(report), "--prices",
            str(prices)]  # fmt: skip
    assert main(args) == 2  # a price table without a store prices nothing
    assert "--prices goes with --store" in capsys.readouterr().err
    assert main([*args, "--store", str(store)]) == 0
    assert "price row 2 ('claude-v1') matches no judge" in capsys.readouterr().out
    d = json.loads((report / "report.json").read_text())
    (card,) = [s for s in d["sections"] if s["id"] == "evaluator-card"]
    assert any("('claude-v1') matches no judge" in n for n in card["notes"])


def test_failed_judgments_do_not_thin_the_tokens_per_judgment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the stand-in answers a direct judgment with exactly 1 completion token; a 500
    # reports no usage. Counting failed judgments gave 0.4-0.6 tokens out per judgment.
    src = tmp_path / "pairs.jsonl"
    pd.DataFrame(fake_pairs(6)).to_json(src, orient="records", lines=True)
    store = tmp_path / "s.db"
    args = ["judge", "--model", "gpt-4o", "--data", str(src), "--out", str(store),
            "--max-attempts", "1", "--no-progress"]  # fmt: skip
    with StandIn(faults={"500": 0.4}, seed=3) as server:
        assert main([*args, "--base-url", server.base_url]) == 1
        failed = server.served["500"]
    with StandIn() as server:
        assert main([*args, "--base-url", server.base_url]) == 0
    with Store(store, read_only=True) as s:
        runs = s.runs()
    assert list(runs["judgments"]) == [12 - failed, failed]
    (c,) = cards(runs)
    assert c.judgments == 12 and c.tokens_out_per_judgment == 1.0
    capsys.readouterr()
    assert main(["judge", "card", str(store)]) == 0
    assert "(12 answered, ok or unparsed, in " in capsys.readouterr().out


def test_an_interrupted_run_that_stored_judgments_is_on_the_card(tmp_path: Path) -> None:
    """A run stopped (Ctrl-C; here the server goes away) after some judgments were
    stored is recorded with the
    judgments it stored (before, only finished runs were, so a store judged in two
    interrupted runs said "no runs recorded"); the resumed run adds the rest, and the
    runs' judgments add up to the store's."""
    from judging.helpers import FakeBackend
    from recuse.judging import PairwiseProtocol, Runner

    class Interrupted(FakeBackend):
        at = 3  # the call that is interrupted

        async def _tick(self) -> None:
            await super()._tick()
            if self.calls >= self.at:  # gone for good
                raise ConnectionAbortedError("the server went away")

    pairs = pd.DataFrame(fake_pairs(8))  # 16 judgments, 4 per batch
    with Store(tmp_path / "s.db") as store:
        backend = Interrupted()
        backend.concurrency = 1
        with pytest.raises(ConnectionAbortedError):
            Runner(backend, store, judge="j", progress=False).pairwise(pairs, PairwiseProtocol())
        stored = len(store.judgments())
        assert 8 <= stored < 16  # the batches answered before the third was interrupted
        runs = store.runs()
        assert runs["judgments"].tolist() == [stored] and runs["seconds"].iloc[0] > 0
        done = Runner(FakeBackend(), store, judge="j", progress=False).pairwise(
            pairs, PairwiseProtocol()
        )
        assert done.cached == stored and done.ok + done.unparsed == 16 - stored
        assert store.runs()["judgments"].tolist() == [stored, 16 - stored]
    # interrupted before any judgment was stored: no run
    with Store(tmp_path / "t.db") as store:
        backend = Interrupted()
        backend.at = 1
        with pytest.raises(ConnectionAbortedError):
            Runner(backend, store, judge="k", progress=False).pairwise(pairs, PairwiseProtocol())
        assert store.judgments().empty and store.runs().empty


def test_a_card_pricing_one_judge_twice_stops_certify_naming_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # two runs of one judge under two spellings, on texts of other lengths: the card
    # gives each its own price per 1,000 judgments; certify said "costs: ... are both
    # judge ...", a Python keyword the CLI user never typed
    store = _judged(tmp_path, "--judge-id", "gpt-4o")
    long = [dict(p, prompt=p["prompt"] * 40) for p in fake_pairs(3)]
    src = tmp_path / "long.jsonl"
    pd.DataFrame(long).to_json(src, orient="records", lines=True)
    with StandIn() as server:
        assert main(["judge", "--model", "gpt-4o", "--base-url", server.base_url, "--data",
                     str(src), "--out", str(store), "--no-progress",
                     "--judge-id", "GPT-4o"]) == 0  # fmt: skip
    prices = _prices(tmp_path, "gpt-4o,2,8")
    with Store(store, read_only=True) as s:
        priced = {c.judge: c.usd_per_1000_judgments for c in cards(s.runs(), read_prices(prices))}
    assert len(priced) == 2 and len(set(priced.values())) == 2  # two names, two prices
    capsys.readouterr()
    args = ["certify", "judgebench", "--store", str(store), "--prices", str(prices)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{store}: the evaluator card prices one judge twice: " in err
    assert "0.308" in err and "0.464" in err and "costs:" not in err
    assert "give its price with --cost GPT-4o=USD" in err or "--cost gpt-4o=USD" in err
    # a price given with --cost settles it: it overrides the card's, for every spelling
    from recuse.cli.certify import _costs
    from recuse.roster import Roster

    got = _costs(["GPT-4O=3"], store, prices, Roster.builtin())
    assert got == {"GPT-4O": 3.0}


def test_certify_prices_a_judge_on_its_undamaged_runs_and_says_which_it_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The card certify prices a judge from leaves a damaged run out (as the audit's card
    does); certify said nothing of it. The price is the undamaged runs' (the same as a
    store without the damaged run), and a note names the run."""
    from recuse.cli.certify import _costs
    from recuse.roster import Roster

    store = _judged(tmp_path, "--judge-id", "gpt-4o")
    prices = _prices(tmp_path, "gpt-4o,2,8")
    clean = _costs([], store, prices, Roster.builtin())
    assert capsys.readouterr().err == ""
    with Store(store) as s:
        s.put_run("gpt-4o", judgments=3, seconds=-4.0, tokens=(10**12, 10**12))
    assert _costs([], store, prices, Roster.builtin()) == clean
    err = capsys.readouterr().err
    assert err.startswith(f"recuse: note: {store}: run 2 of judge 'gpt-4o' in the runs table ")
    assert "the store is damaged there; not in the evaluator card's price" in err


def _old_runs_table(path: Path, *rows: tuple[str, object, object]) -> None:
    """The runs table as a recuse before the run's clock (and the hardware columns)
    wrote it, holding ``(judge, judgments, seconds)`` rows: seconds of the whole run."""
    import sqlite3

    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE runs")
        conn.execute(
            "CREATE TABLE runs (judge TEXT NOT NULL, judgments INTEGER NOT NULL, seconds REAL "
            "NOT NULL, tokens_in INTEGER, tokens_out INTEGER, created_at REAL NOT NULL)"
        )
        conn.executemany(
            "INSERT INTO runs VALUES (?, ?, ?, NULL, NULL, 1.0)", [(j, n, s) for j, n, s in rows]
        )
    conn.close()


def test_an_old_stores_runs_are_said_to_be_timed_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run an earlier recuse recorded timed the whole run (reading the store, loading
    a model); a run now times its first call to its last outcome. The card summed both
    as "from each run's first call to its last". Now the store records what each run's
    seconds time (a column added to an old store), and the card says how many of its
    seconds are whole runs: read-only (nothing added) and after a new run."""
    from judging.helpers import FakeBackend
    from recuse.judging import PairwiseProtocol, Runner
    from recuse.judging.store import RUN_CLOCK

    path = tmp_path / "s.db"
    with Store(path) as s:
        s.put_run("j", judgments=1, seconds=1.0, tokens=None)
    _old_runs_table(path, ("j", 10, 4.0))
    assert main(["judge", "card", str(path)]) == 0
    assert capsys.readouterr().out.startswith(
        "j: 2.50 answered judgments/s (10 answered, ok or unparsed, in 4.00 s from each "
        "run's first call to its last (4.00 s of them whole runs, as an earlier recuse "
        "timed them); failed ones not counted)"
    )
    with Store(path) as s:
        summary = Runner(FakeBackend(), s, judge="j", progress=False).pairwise(
            pd.DataFrame(fake_pairs(3)), PairwiseProtocol()
        )
        runs = s.runs()
    assert runs["clock"].isna().tolist() == [True, False] and runs["clock"].iloc[1] == RUN_CLOCK
    assert runs["seconds"].tolist() == [4.0, summary.seconds]
    (c,) = cards(runs)
    assert c.seconds == 4.0 + summary.seconds and c.whole_run_seconds == 4.0
    assert c.judgments == 10 + 6 and c.judgments_per_second == 16 / (4.0 + summary.seconds)
    assert c.record()["of them whole runs (timed so by an earlier recuse)"] == 4.0
    # a store of new runs only: nothing said, no column
    with Store(tmp_path / "new.db") as s:
        s.put_run("j", judgments=3, seconds=1.5, tokens=None)
        (new,) = cards(s.runs())
    assert new.whole_run_seconds == 0.0 and "whole runs" not in new.line()
    assert not any("whole runs" in k for k in new.record())


def test_a_card_without_time_says_so_and_a_damaged_run_is_named_and_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run recorded with 0 seconds read "nan answered judgments/s"; one with -1 s or
    seconds as text ("abc") read "in −1.00 s" or was a ValueError traceback, then
    refused the whole store (the card, and the audit given it). Now such a run is named
    (the store, the run) and left out: the card is the other runs'."""
    path = tmp_path / "s.db"
    with Store(path) as s:
        s.put_run("j", judgments=5, seconds=0.0, tokens=None)
        (c,) = cards(s.runs())
    # it read "no time recorded" beside "in 0.00 s"
    assert c.line().startswith("j: no rate (0.00 s recorded) (5 answered, ok or unparsed, in 0.00")
    assert "nan" not in c.line()
    for judgments, seconds in ((5, -1.0), (5, "abc"), (-2, 1.0), ("x", 1.0)):
        _old_runs_table(path, ("j", 6, 3.0), ("j", judgments, seconds))
        with Store(path, read_only=True) as s:
            (c,) = cards(s.runs())
        assert (c.judgments, c.seconds, c.judgments_per_second) == (6, 3.0, 2.0)
        said = f"{path}: run 2 of judge 'j' in the runs table records {judgments!r} judgments"
        assert c.damaged == (f"{said} in {seconds!r} seconds (a count and seconds of 0 or "
                             "more were expected)",)  # fmt: skip
        assert main(["judge", "card", str(path)]) == 0
        out = capsys.readouterr()
        assert out.out.startswith("j: 2.00 answered judgments/s (6 answered")
        assert f"; 1 damaged run not counted: {said}" in out.out and not out.err


def test_runs_that_answered_none_are_not_in_the_rate_and_are_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The card divided the answered judgments by the seconds of every run, those in
    which every call failed (a server down) too: 15 judgments in runs of 4 s and 1 s
    beside a 6 s run that answered none read 15 / 11 = 1.36/s. Now the rate is over
    the runs that answered: 15 / (4 + 1) = 3.00/s, and the card says the other run and
    its 6 s are not in it; a judge whose runs all failed has no rate, said so."""
    path = tmp_path / "s.db"
    with Store(path) as s:
        s.put_run("j", judgments=10, seconds=4.0, tokens=(1000, 10))
        s.put_run("j", judgments=0, seconds=6.0, tokens=(0, 0))
        s.put_run("j", judgments=5, seconds=1.0, tokens=(500, 5))
        s.put_run("down", judgments=0, seconds=2.5, tokens=None)
        runs = s.runs()
    down, j = cards(runs)
    assert j.judgments == 15 and j.seconds == 5.0 and j.judgments_per_second == 3.0
    assert (j.unanswered_runs, j.unanswered_seconds) == (1, 6.0)
    assert j.tokens_in_per_judgment == 100.0 and j.tokens_out_per_judgment == 1.0
    assert j.record()["their seconds"] == 6.0
    assert main(["judge", "card", str(path)]) == 0
    out = capsys.readouterr().out
    assert (
        "j: 3.00 answered judgments/s (15 answered, ok or unparsed, in 5.00 s from each "
        "run's first call to its last; failed ones not counted; 1 run that answered none "
        "(every call failed, 6.00 s) not in the rate)"
    ) in out
    assert down.judgments == 0 and down.seconds == 0.0
    assert (
        "down: no rate (no run answered a judgment) (0 answered, ok or unparsed, in 0.00 s "
        "from each run's first call to its last; failed ones not counted; 1 run that "
        "answered none (every call failed, 2.50 s) not in the rate)"
    ) in out


def test_a_run_whose_every_call_failed_leaves_the_rate_of_the_run_that_answered(
    tmp_path: Path,
) -> None:
    """A judge run whose every call fails, then one that answers all: the card's rate is
    the second run's own (its summary line's: judgments over its clock)."""
    from judging.helpers import FakeBackend
    from recuse.judging import Runner
    from recuse.judging.runner import RetryPolicy

    pairs = pd.DataFrame(fake_pairs(4))
    with Store(tmp_path / "s.db") as store:
        failing = Runner(
            FakeBackend(fail_marker="Question"), store, judge="j", progress=False,
            retry=RetryPolicy(max_attempts=1),
        ).pairwise(pairs)  # fmt: skip
        answered = Runner(FakeBackend(sleep=0.02), store, judge="j", progress=False).pairwise(pairs)
        runs = store.runs()
    assert failing.failed == 8 and answered.ok + answered.unparsed == 8
    assert list(runs["judgments"]) == [0, 8]
    (c,) = cards(runs)
    assert c.judgments_per_second == answered.rate == 8 / answered.seconds
    assert (c.unanswered_runs, c.unanswered_seconds) == (1, failing.seconds)


def test_a_card_given_no_seconds_reads_without_a_stray_comma() -> None:
    """A Card built with no seconds (the field's default, through the API) read
    '(3 answered, ok or unparsed,; failed ones not counted)'."""
    c = Card("j", 3, math.nan, None, None, None)
    assert c.line().startswith(
        "j: no rate (no time recorded) (3 answered, ok or unparsed; failed ones not counted); "
    )


def test_a_run_no_real_run_could_record_never_reaches_the_cards_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A hand-edited store's run of 1e-300 seconds gave the card a rate of 5e300
    judgments/s, written in three hundred digits; tokens of 1e18 (or 1e300, stored as a
    float) a count of eighteen (three hundred) digits a judgment; block parameters of
    −1e12 a model FLOP utilisation of −10.1% (an ASCII hyphen). Each such run is named,
    with its store, and in nothing the card counts: its rate is the real run's, 2.50/s."""
    import sqlite3

    path = tmp_path / "s.db"
    gpu = {"device": "NVIDIA H200", "hardware": "cuda:0 bfloat16"}
    with Store(path) as s:
        s.put_run("j", judgments=5, seconds=2.0, tokens=(100, 10), block_params=10**9, **gpu)
        s.put_run("j", judgments=5, seconds=1e-300, tokens=(100, 10))
        s.put_run("j", judgments=5, seconds=2.0, tokens=(10**18, 10))
        s.put_run("j", judgments=5, seconds=2.0, tokens=(100, 10), block_params=-(10**12), **gpu)
        s.put_run("j", judgments=5, seconds=1e12, tokens=None)
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO runs (judge, judgments, seconds, tokens_in, tokens_out, created_at) "
            "VALUES ('j', 5, 2.0, 1e300, 10, 1e12), ('j', 5, 2.0, -100, 10, 1e12)"
        )
    conn.close()
    with Store(path, read_only=True) as s:
        (c,) = cards(s.runs())
    # by hand: the first run alone, 5 judgments in 2 s, 100 in and 10 out
    assert (c.judgments, c.seconds, c.judgments_per_second) == (5, 2.0, 2.5)
    assert (c.tokens_in_per_judgment, c.tokens_out_per_judgment) == (20.0, 2.0)
    assert c.mfu == pytest.approx(2 * 10**9 * 100 / (2.0 * 989.0 * 1e12), rel=0.05)
    head = f"{path}: run {{}} of judge 'j' in the runs table records "
    assert c.damaged == (
        head.format(2) + "5 judgments in 1e-300 seconds, under the nanosecond its clock counts in",
        head.format(3) + "1,000,000,000,000,000,000 tokens in for 5 judgment(s), over "
        "100,000,000 a judgment (ten times the longest context a model reads)",
        head.format(4) + "-1000000000000 model parameters (a positive count was expected)",
        head.format(5) + "1000000000000.0 seconds, more than have passed since 1970",
        head.format(6) + "1e+300 tokens in (a count of 0 or more was expected)",
        head.format(7) + "-100 tokens in (a count of 0 or more was expected)",
    )
    assert main(["judge", "card", str(path)]) == 0
    line = capsys.readouterr().out
    assert line.startswith("j: 2.50 answered judgments/s on cuda:0 bfloat16 (5 answered")
    assert "6 damaged runs not counted: " + "; ".join(c.damaged) in line
    assert "20 tokens in / 2.0 out per judgment" in line and "−" not in line.split("; 6")[0]
    # every run damaged: no rate, said why, and no seconds
    with Store(tmp_path / "bad.db") as s:
        s.put_run("k", judgments=5, seconds=1e-300, tokens=None)
        (bad,) = cards(s.runs())
    assert bad.seconds is None and bad.line().startswith(
        "k: no rate (every run of it in the store is damaged) (0 answered, ok or unparsed; "
        "failed ones not counted; 1 damaged run not counted: "
    )


def test_a_slow_rate_never_reads_zero() -> None:
    """A rate or a time under 0.005 read 0.00 at the card's two decimals (one judgment in
    a run of 1e9 s: "0.00 answered judgments/s", as if none were answered). It takes
    the decimals that show it (numbers.small_decimals), a bound past six."""
    slow = Card("j", 1, 1 / 1e9, None, None, None, seconds=1e9)
    assert slow.line().startswith("j: < 0.000001 answered judgments/s (1 answered")
    assert "in 1,000,000,000.00 s" in slow.line()
    fair = Card("j", 1, 1 / 400, None, None, None, seconds=400.0)
    assert fair.line().startswith("j: 0.003 answered judgments/s")
    mfu = Card("j", 1, 1.0, None, None, None, accelerator="NVIDIA H200", mfu=0.00004,
               peak_tflops=989.0)  # fmt: skip
    assert "model FLOP utilisation 0.004% of NVIDIA H200's" in mfu.line()


def test_the_audit_names_a_damaged_run_of_its_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A damaged run record refused the whole store: the audit given it stopped (exit 2).
    It runs, its evaluator card is the real runs', and a note names the damaged run."""
    import json

    store = _judged(tmp_path)
    with Store(store) as s:
        real = cards(s.runs())[0].judgments_per_second
        s.put_run("gpt-4o", judgments=3, seconds=-4.0, tokens=None)
    table, report = tmp_path / "p.csv", tmp_path / "r"
    assert main(["judge", "export", str(store), "--out", str(table)]) == 0
    args = ["audit", str(table), "--only", "position", "--out", str(report)]
    assert main([*args, "--store", str(store)]) == 0, capsys.readouterr().err
    d = json.loads((report / "report.json").read_text())
    (card,) = [s for s in d["sections"] if s["id"] == "evaluator-card"]
    (row,) = d["tables"]["evaluator-card"]["rows"]
    assert row["answered judgments per second"] == real
    assert card["notes"] == [
        f"{store}: run 2 of judge 'gpt-4o' in the runs table records 3 judgments in -4.0 "
        "seconds (a count and seconds of 0 or more were expected): the store is damaged "
        "there; not on the card"
    ]


def _answered(path: Path) -> int:
    """The judgments (ok or unparsed) the store at ``path`` holds, read with sqlite3."""
    import contextlib
    import sqlite3

    with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as db:
        (n,) = db.execute("SELECT COUNT(*) FROM judgments WHERE status != 'failed'").fetchone()
    return int(n)


def test_a_killed_run_is_on_the_card_as_far_as_its_last_commit(tmp_path: Path) -> None:
    """A run's record was written only at its end, so a run killed (kill -9) was
    missing from the runs table: after a resume the card counted the second run's
    judgments and seconds alone, and said nothing of the first. Now each commit of its
    judgments writes its record too (one transaction): while it runs the record says so,
    once killed it holds what its last commit stored (the judgments counted here from
    the store's rows), and the card counts both runs' judgments and seconds, saying
    that one was killed."""
    import os
    import signal
    import subprocess
    import sys
    import time

    worker = Path(__file__).with_name("kill_worker.py")
    path = tmp_path / "s.db"
    n = 60  # 120 judgments, 4 a call, 2 calls at a time, 0.1 s each: about 1.5 s
    proc = subprocess.Popen(
        [sys.executable, str(worker), str(path), str(n), "0.1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        deadline = time.monotonic() + 60
        while _answered(path) < 8 and time.monotonic() < deadline:
            time.sleep(0.01)
        with Store(path, read_only=True) as s:
            running = s.runs()
        assert proc.poll() is None, "the run ended before it was killed"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert running["state"].tolist() == ["running"]
    assert running["judgments"].iloc[0] >= 8
    first = _answered(path)
    assert 8 <= first < 2 * n
    with Store(path, read_only=True) as s:
        killed = s.runs()
    assert killed["state"].tolist() == ["killed"]
    assert killed["judgments"].tolist() == [first]  # its record is its last commit's
    assert killed["seconds"].iloc[0] > 0 and killed["damaged"].isna().all()
    resumed = subprocess.run(
        [sys.executable, str(worker), str(path), str(n), "0"],
        capture_output=True, timeout=120, check=False,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert _answered(path) == 2 * n
    with Store(path) as s:
        runs = s.runs()
        (card,) = cards(runs)
    assert runs["state"].tolist() == ["killed", "ended"]
    assert runs["judgments"].tolist() == [first, 2 * n - first]
    assert card.judgments == 2 * n  # both runs', as the store holds
    assert card.seconds == pytest.approx(float(runs["seconds"].sum()))
    assert card.seconds > float(runs["seconds"].iloc[1])  # the killed run's time too
    assert (card.killed_runs, card.running_runs) == (1, 0)
    assert (
        "; 1 run killed before its end (or stopped by a full disk), counted to the last commit"
        in card.line()
    )
    assert card.record()["runs killed before their end (counted to their last commit)"] == 1


def test_an_old_stores_runs_read_as_ended_and_a_bad_end_is_damage(tmp_path: Path) -> None:
    """A store written before runs recorded their ids and ends reads as it did: each of
    its runs ended (read-only, nothing added; and once opened to write, the columns
    added empty). A record whose end is neither 0 nor 1 no run wrote: named and left
    out of the card, as any damaged run."""
    import sqlite3

    path = tmp_path / "s.db"
    Store(path).close()
    _old_runs_table(path, ("j", 6, 3.0), ("j", 4, 1.0))
    with Store(path, read_only=True) as s:
        old = s.runs()
    assert old["state"].tolist() == ["ended", "ended"] and old["damaged"].isna().all()
    with Store(path) as s:
        assert s.runs()["state"].tolist() == ["ended", "ended"]
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE runs SET ended = 7 WHERE judgments = 4")
    conn.close()
    with Store(path, read_only=True) as s:
        (c,) = cards(s.runs())
    assert (c.judgments, c.seconds) == (6, 3.0)
    assert c.damaged == (
        f"{path}: run 2 of judge 'j' in the runs table records its end as 7 (0, 1 or "
        "nothing was expected)",
    )


def test_the_card_says_which_model_served_the_verdicts(tmp_path: Path) -> None:
    # a hosted alias (gpt-4o) is answered by a dated snapshot; the card named the alias
    # only, so a report could not say which model judged
    src = tmp_path / "pairs.jsonl"
    pd.DataFrame(fake_pairs(3)).to_json(src, orient="records", lines=True)
    store = tmp_path / "s.db"
    args = ["judge", "--model", "gpt-4o", "--data", str(src), "--out", str(store), "--no-progress"]
    with StandIn(served_as="gpt-4o-2024-08-06") as server:
        assert main([*args[:3], "--base-url", server.base_url, *args[3:]]) == 0
    with Store(store) as s:
        s.put_run("local", judgments=2, seconds=1.0, tokens=None, hardware="cpu float32")
        runs = s.runs()
    gpt, local = cards(runs)
    assert (gpt.served, local.served) == (("gpt-4o-2024-08-06",), ())
    assert " served as 'gpt-4o-2024-08-06' (6 answered" in gpt.line()
    assert "served as" not in local.line()
    assert gpt.record()["served as (the answers' model field)"] == "gpt-4o-2024-08-06"
    # who wrote the prompts the server's model read, recorded with each run (the run's
    # first line no longer says it every time: setup.chatml_note)
    assert gpt.rendering == ("recuse's ChatML over /v1/completions",)
    assert gpt.line().endswith(
        "; no price given; prompts written in recuse's ChatML over /v1/completions"
    )
    assert gpt.record()["prompts written in"] == "recuse's ChatML over /v1/completions"
    assert "prompts written in" not in local.line() and local.record()["prompts written in"] is None
    assert local.record()["served as (the answers' model field)"] is None
