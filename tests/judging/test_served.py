"""A hosted judge whose alias is served by another model: recorded per run, and a run
whose answers name a second model stops before its verdicts mix into one judge's."""

from __future__ import annotations

import hashlib
import shlex
import shutil
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judging.helpers import FakeBackend, fake_pairs
from recuse.cli import main
from recuse.errors import JudgeError
from recuse.judging import Runner, RunSummary, Store
from recuse.judging.backends.http import HTTPBackend
from recuse.judging.protocols import Message, Prompt
from recuse.judging.served import Served, mixed_runs, new_names, read_served, served_words
from recuse.judging.tasks import Task
from recuse.testing.standin import StandIn

#: a store written by recuse at main before runs recorded served names (3abdc2e8):
#: StandIn (no "model" field), HTTPBackend(model="m"), Runner(...).pairwise(fake_pairs(4))
OLD_STORE = Path(__file__).parent / "fixtures" / "store_before_served.sqlite"
MAY, AUGUST = "gpt-4o-2024-05-13", "gpt-4o-2024-08-06"


def _judge(server: StandIn, store: Store, pairs: int) -> RunSummary:
    backend = HTTPBackend(server.base_url, model="gpt-4o", concurrency=1)
    return Runner(backend, store, progress=False).pairwise(pd.DataFrame(fake_pairs(pairs)))


def test_a_run_records_the_served_name_and_its_summary_says_it(tmp_path: Path) -> None:
    with StandIn(served_as=MAY) as server, Store(tmp_path / "s.db") as store:
        summary = _judge(server, store, 3)
        runs = store.runs()
    line = summary.line()
    assert line.endswith(f"the server's answers named the model serving them: '{MAY}' (6 answers)")
    assert runs["served"].tolist() == [f"'{MAY}' (6 answers)"]
    assert runs["served_note"].tolist() == [None]
    conn = sqlite3.connect(tmp_path / "s.db")
    (raw,) = conn.execute("SELECT served FROM runs").fetchone()
    conn.close()
    assert read_served(raw) == {MAY: 6}


def test_a_resumed_store_served_by_another_model_stops_before_storing_it(
    tmp_path: Path,
) -> None:
    """Judged in May (3 pairs, 6 verdicts); resumed in August over 5 pairs: the first
    answer names the August snapshot, and the run stops with none of its verdicts
    stored, saying which names, each run's verdicts and what to do."""
    path = tmp_path / "s.db"
    with StandIn(served_as=MAY) as server, Store(path) as store:
        _judge(server, store, 3)
    with StandIn(served_as=AUGUST) as server, Store(path) as store:
        with pytest.raises(JudgeError) as caught:
            _judge(server, store, 5)
        sent = server.requests
        held = len(store.judgments())
        runs = store.runs()
    said = str(caught.value)
    assert sent == 1 and held == 6  # one request (concurrency 1), nothing of it kept
    assert f"judge id 'gpt-4o' holds verdicts served as '{MAY}' (run 1: 6 verdicts" in said
    now = f"the server now answers as '{AUGUST}' (this run's answers: '{AUGUST}' (1 answer))"
    assert now in said
    assert "it stored 0 verdicts before" in said
    assert "judge into a new store (--out NEW.sqlite)" in said
    assert f"--revision {AUGUST} --judge-id NEW_ID" in said
    assert len(runs) == 1  # the stopped run stored nothing: no run recorded
    # the May model back: the run resumes and judges the 4 left
    with StandIn(served_as=MAY) as server, Store(path) as store:
        summary = _judge(server, store, 5)
        assert server.requests == 4
    assert (summary.cached, summary.ok) == (6, 4)


def test_an_alias_that_flips_mid_run_stops_at_the_flip(tmp_path: Path) -> None:
    """Answers 1-3 served as May, then August: the 3 May verdicts are stored and
    recorded as the run's, the August one is not; a rerun served as August is
    refused against that record."""
    path = tmp_path / "s.db"
    flip = StandIn(served_as=lambda n: MAY if n <= 3 else AUGUST)
    with flip as server, Store(path) as store:
        with pytest.raises(JudgeError) as caught:
            _judge(server, store, 5)
        assert server.requests == 4
        held = store.judgments()
        runs = store.runs()
    said = str(caught.value)
    assert f"judge id 'gpt-4o': this run's answers were served as '{MAY}' first" in said
    assert f"'{MAY}' (3 answers), '{AUGUST}' (1 answer)" in said
    assert "it stored 3 verdicts before" in said
    assert len(held) == 3 and set(held["status"]) == {"ok"}
    assert runs[["judgments", "served"]].values.tolist() == [[3, f"'{MAY}' (3 answers)"]]
    with StandIn(served_as=AUGUST) as server, Store(path) as store:
        with pytest.raises(JudgeError, match=r"\(run 1: 3 verdicts served as 'gpt-4o-2024-05"):
            _judge(server, store, 5)


def test_answers_that_name_no_model_are_not_counted(tmp_path: Path) -> None:
    with StandIn() as server, Store(tmp_path / "s.db") as store:
        summary = _judge(server, store, 2)
        runs = store.runs()
    assert "served" not in summary.line()
    assert runs["served"].tolist() == [None]
    with StandIn(served_as=AUGUST) as server, Store(tmp_path / "s.db") as store:
        _judge(server, store, 3)  # nothing said who served run 1: not refused
        assert store.runs()["served"].tolist() == [None, f"'{AUGUST}' (2 answers)"]


def test_a_store_written_before_the_column_opens_and_resumes_with_no_request(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.sqlite"
    shutil.copy(OLD_STORE, path)
    conn = sqlite3.connect(path)
    cols = {r[1] for r in conn.execute("PRAGMA table_info(runs)")}
    conn.close()
    assert "served" not in cols and "ended" in cols  # written without the column
    old = Store(path, read_only=True).runs()  # read as it is
    assert old[["judge", "judgments", "served", "served_note"]].values.tolist() == [
        ["m", 8, None, None]
    ]
    with StandIn(served_as=AUGUST) as server, Store(path) as store:
        backend = HTTPBackend(server.base_url, model="m", concurrency=2)
        summary = Runner(backend, store, progress=False).pairwise(pd.DataFrame(fake_pairs(4)))
        assert server.requests == 0
        assert (summary.cached, summary.ok) == (8, 0)
        summary = Runner(backend, store, progress=False).pairwise(pd.DataFrame(fake_pairs(6)))
        assert server.requests == 4 and summary.ok == 4
        runs = store.runs()
    assert runs["served"].tolist() == [None, f"'{AUGUST}' (4 answers)"]


def test_revision_enters_the_content_keys(tmp_path: Path) -> None:
    """Another judge id of the same server model and revision copies the stored
    verdicts (their keys match: no request); another revision asks the server again."""
    with StandIn(served_as=AUGUST) as server, Store(tmp_path / "s.db") as store:

        def judge(judge: str, revision: str) -> int:
            before = server.requests
            backend = HTTPBackend(server.base_url, model="gpt-4o", revision=revision)
            Runner(backend, store, judge=judge, progress=False).pairwise(
                pd.DataFrame(fake_pairs(3))
            )
            return server.requests - before

        assert judge("a", "") == 6
        assert judge("b", "") == 0  # the same keys: copied
        assert judge("c", AUGUST) == 6  # keyed apart
        assert judge("d", AUGUST) == 0
        assert judge("e", MAY) == 6


def test_revision_option_keys_a_server_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--revision reaches the judge (its first line, the store's record of its model),
    a rerun with it resumes, and another revision under the same judge id is refused
    (one judge id, one model) before a request."""
    src = tmp_path / "pairs.jsonl"
    pd.DataFrame(fake_pairs(3)).to_json(src, orient="records", lines=True)
    store = tmp_path / "s.db"

    def run(*extra: str) -> tuple[int, int]:
        with StandIn(served_as=AUGUST) as server:
            code = main(["judge", "--model", "gpt-4o", "--base-url", server.base_url, "--data",
                         str(src), "--out", str(store), "--no-progress", *extra])  # fmt: skip
            return code, server.requests

    assert run("--revision", AUGUST) == (0, 6)
    assert run("--revision", AUGUST) == (0, 0)  # resumed
    cap = capsys.readouterr()
    assert f"judge gpt-4o: model gpt-4o asked of the server at revision {AUGUST}" in cap.out
    # one answer to "which model served": the first line said "served model gpt-4o"
    # above the last line's names from the answers
    assert "served model gpt-4o" not in cap.out
    assert f"the server's answers named the model serving them: '{AUGUST}'" in cap.out
    assert run("--revision", MAY) == (2, 0)
    err = capsys.readouterr().err
    assert f"already holds judgments of model 'gpt-4o' at revision {AUGUST}" in err
    with Store(store, read_only=True) as s:
        assert s.judge_models()["gpt-4o"] == ("gpt-4o", AUGUST)


@pytest.mark.parametrize(
    ("first", "second", "judge_id"),
    [
        ("alpha", "beta", ["--judge-id", "J"]),  # one judge id given to two models
        ("openai/gpt-4o", "gpt-4o", []),  # a roster alias: both judge id gpt-4o
    ],
)
def test_another_model_asked_under_a_judge_id_is_refused_not_served_its_verdicts(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    first: str,
    second: str,
    judge_id: list[str],
) -> None:
    """A served judge's content keys hash its judge id, not the model asked: ``--model
    beta`` under the judge id whose verdicts ``--model alpha`` gave found all of them
    stored, asked nothing and exited 0, beta's "verdicts" alpha's. One judge id stands for
    one model asked: the second run is refused before a request (exit 2, one line, the
    fix), and the fix it names judges beta afresh."""
    src = tmp_path / "pairs.jsonl"
    pd.DataFrame(fake_pairs(3)).to_json(src, orient="records", lines=True)
    store = tmp_path / "s.db"

    def run(model: str, *extra: str) -> tuple[int, int]:
        with StandIn() as server:
            code = main(["judge", "--model", model, "--base-url", server.base_url, "--data",
                         str(src), "--out", str(store), "--no-progress", *extra])  # fmt: skip
            return code, server.requests

    assert run(first, *judge_id) == (0, 6)
    assert run(first, *judge_id) == (0, 0)  # the same model resumes
    capsys.readouterr()
    assert run(second, *judge_id) == (2, 0)
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert f"holds the verdicts of model {first!r} asked of the server" in err, err
    assert f"this run asks for {second!r}" in err and "--judge-id NAME" in err
    with Store(store, read_only=True) as s:
        assert len(s.judgments()) == 6
    assert run(second, "--judge-id", "other") == (0, 6)


def test_a_judge_id_whose_runs_stored_no_verdict_is_refused_saying_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run whose every request failed stored failed rows only: the next model under the
    judge id was refused as if the id "holds the verdicts of model 'alpha'". Taking the id
    over let a second run mix models while the first was still waiting on its answers
    (review), so it is still refused, saying no verdict is stored; the same model
    retries."""
    src = tmp_path / "pairs.jsonl"
    pd.DataFrame(fake_pairs(3)).to_json(src, orient="records", lines=True)
    store = tmp_path / "s.db"
    args = ["judge", "--data", str(src), "--out", str(store), "--no-progress", "--judge-id", "J",
            "--max-attempts", "1"]  # fmt: skip
    with StandIn(faults={"500": 1.0}) as server:
        assert main([*args, "--model", "alpha", "--base-url", server.base_url]) == 1
    capsys.readouterr()
    with StandIn() as server:
        assert main([*args, "--model", "beta", "--base-url", server.base_url]) == 2
        assert server.requests == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "judge id 'J' was claimed by a run asking for model 'alpha' (its requests failed" in err
    assert "holds the verdicts" not in err
    with StandIn() as server:
        assert main([*args, "--model", "alpha", "--base-url", server.base_url]) == 0
        assert server.requests == 6


def test_a_store_written_before_the_model_asked_was_recorded_says_whose_it_takes_them_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A store from before judge_asked cannot say which model gave a judge id's verdicts:
    the first run to resume it records the model it asks for, and now says so, with the
    fix, instead of nothing (another model's run took them as its own, silently)."""
    src = tmp_path / "pairs.jsonl"
    pd.DataFrame(fake_pairs(3)).to_json(src, orient="records", lines=True)
    store = tmp_path / "s.db"
    args = ["judge", "--data", str(src), "--out", str(store), "--no-progress", "--judge-id", "J"]
    with StandIn() as server:
        assert main([*args, "--model", "alpha", "--base-url", server.base_url]) == 0
    with sqlite3.connect(store) as conn:
        conn.execute("DROP TABLE judge_asked")  # as an older recuse wrote it
    capsys.readouterr()
    with StandIn() as server:
        assert main([*args, "--model", "alpha", "--base-url", server.base_url]) == 0
        assert server.requests == 0
    err = " ".join(capsys.readouterr().err.split())
    assert (
        "judge id 'J' holds 6 verdicts written before recuse recorded the model a served "
        "judge asks for: they are taken as the verdicts of 'alpha' from now on" in err
    )
    with StandIn() as server:  # recorded now: said once, and another model is refused
        assert main([*args, "--model", "alpha", "--base-url", server.base_url]) == 0
        assert main([*args, "--model", "beta", "--base-url", server.base_url]) == 2
    assert "written before recuse recorded" not in capsys.readouterr().err


def test_a_resumed_store_served_by_another_model_exits_2_on_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "pairs.jsonl"
    pd.DataFrame(fake_pairs(3)).to_json(src, orient="records", lines=True)
    store = tmp_path / "s.db"
    for name, pairs, want in ((MAY, 2, 0), (AUGUST, 3, 2)):
        pd.DataFrame(fake_pairs(pairs)).to_json(src, orient="records", lines=True)
        with StandIn(served_as=name) as server:
            code = main(["judge", "--model", "gpt-4o", "--base-url", server.base_url, "--data",
                         str(src), "--out", str(store), "--no-progress"])  # fmt: skip
        assert code == want
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert f"(run 1: 4 verdicts served as '{MAY}')" in err and f"--revision {AUGUST}" in err


def test_revision_refused_for_a_local_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "pairs.jsonl"
    pd.DataFrame(fake_pairs(2)).to_json(src, orient="records", lines=True)
    code = main(["judge", "--data", str(src), "--out", str(tmp_path / "s.db"), "--no-progress",
                 "--revision", "r1"])  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "--revision goes with --base-url" in err and "files' fingerprint" in err
    assert not (tmp_path / "s.db").exists()


def test_the_words_and_the_runs_notes() -> None:
    assert served_words({MAY: 1, AUGUST: 1200}) == f"'{MAY}' (1 answer), '{AUGUST}' (1,200 answers)"
    assert new_names([MAY], {MAY: 4, AUGUST: 1}) == [AUGUST]
    assert new_names([], {MAY: 4}) == [] and new_names([], {MAY: 4, AUGUST: 1}) == [AUGUST]
    assert read_served('{"a": -1, "b": 2.5, "c": 3}') == {"c": 3}  # hand-edited counts
    notes = mixed_runs([("j", {MAY: 2}), ("k", {}), ("j", {MAY: 1}), ("j", {AUGUST: 3}),
                        ("k", {"x": 1, "y": 1})])  # fmt: skip
    assert notes[:3] == [None, None, None]
    assert notes[3] == (
        f"judge 'j' was served as '{AUGUST}' in this run, and as '{MAY}' before it: two "
        "models' verdicts under one judge id"
    )
    assert notes[4] == "judge 'k' was served as 'x' and 'y' within this run: two models' " + (
        "verdicts under one judge id"
    )


def test_the_runs_frame_says_a_judge_served_by_two_models(tmp_path: Path) -> None:
    """Two runs recorded with other served names (two runs started at once on one
    store, each finding nothing recorded before it): the later one's note says so."""
    with Store(tmp_path / "s.db") as store:
        for served in ({MAY: 4}, {AUGUST: 2}):
            store.put_run("gpt-4o", judgments=4, seconds=1.0, tokens=None, served=served)
        runs = store.runs()
        assert [r.number for r in store.served_runs("gpt-4o")] == [1, 2]
    assert runs["served"].tolist() == [f"'{MAY}' (4 answers)", f"'{AUGUST}' (2 answers)"]
    assert runs["served_note"].tolist() == [
        None,
        f"judge 'gpt-4o' was served as '{AUGUST}' in this run, and as '{MAY}' before it: two "
        "models' verdicts under one judge id",
    ]


def test_a_backend_judging_a_second_store_names_this_runs_first_model(tmp_path: Path) -> None:
    """One backend, two stores: the first run's answers name August (2), the second's
    May (2) then August. The second run's first name is May, whatever the backend saw
    before it: the error says May first and August now, and keys August apart."""
    flip = StandIn(served_as=lambda n: AUGUST if n <= 2 or n >= 5 else MAY)
    with flip as server:
        backend = HTTPBackend(server.base_url, model="gpt-4o", concurrency=1)
        with Store(tmp_path / "one.db") as store:
            Runner(backend, store, progress=False).pairwise(pd.DataFrame(fake_pairs(1)))
        with Store(tmp_path / "two.db") as store, pytest.raises(JudgeError) as caught:
            Runner(backend, store, progress=False).pairwise(pd.DataFrame(fake_pairs(3)))
        with Store(tmp_path / "two.db") as store:
            runs = store.runs()
    said = str(caught.value)
    assert f"this run's answers were served as '{MAY}' first" in said
    assert f"the server now answers as '{AUGUST}'" in said
    assert f"it stored 2 verdicts before, served as '{MAY}'" in said
    assert f"--revision {AUGUST} --judge-id" in said
    assert runs["served"].tolist() == [f"'{MAY}' (2 answers)"]


def test_the_printed_revision_is_one_shell_word(tmp_path: Path) -> None:
    """llama.cpp's server names the model by its file's path, which may hold a space
    (a macOS folder): the --revision the error prints is quoted for the shell."""
    path = "/Users/me/My Models/llama-3-8b.Q4_K_M.gguf"
    with StandIn(served_as=MAY) as server, Store(tmp_path / "s.db") as store:
        _judge(server, store, 1)
    with StandIn(served_as=path) as server, Store(tmp_path / "s.db") as store:
        with pytest.raises(JudgeError) as caught:
            _judge(server, store, 2)
    said = str(caught.value)
    assert f"--revision '{path}' --judge-id NEW_ID" in said
    assert shlex.split(said.split("--revision ")[1])[0] == path


def test_another_judge_id_of_the_same_model_is_checked_against_its_verdicts(
    tmp_path: Path,
) -> None:
    """Judged in May as 'gpt-4o' (3 pairs); in August as judge id 'gpt-4o-aug', same
    model and revision, over 5 pairs: the 6 May verdicts share their content keys and
    are copied to it, so its August answers would mix two models under one judge id.
    The run stops at its first answer, naming the run whose verdicts it copied."""
    path = tmp_path / "s.db"
    with StandIn(served_as=MAY) as server, Store(path) as store:
        _judge(server, store, 3)
    with StandIn(served_as=AUGUST) as server, Store(path) as store:
        backend = HTTPBackend(server.base_url, model="gpt-4o", concurrency=1)
        runner = Runner(backend, store, judge="gpt-4o-aug", progress=False)
        with pytest.raises(JudgeError) as caught:
            runner.pairwise(pd.DataFrame(fake_pairs(5)))
        assert server.requests == 1
        held = store.judgments()
    said = str(caught.value)
    assert (held["judge"] == "gpt-4o-aug").sum() == 6  # the copies, all served as May
    assert f"(run 1, judge id 'gpt-4o': 6 verdicts served as '{MAY}')" in said
    assert (
        f"it stored 0 verdicts before, served as '{MAY}' (and 6 verdicts copied from another "
        "judge id)"
    ) in said
    assert f"the server now answers as '{AUGUST}'" in said
    assert f"--revision {AUGUST} --judge-id NEW_ID" in said
    # the fix it prints: keyed apart, nothing copied, all 10 asked of August
    with StandIn(served_as=AUGUST) as server, Store(path) as store:
        backend = HTTPBackend(server.base_url, model="gpt-4o", revision=AUGUST)
        summary = Runner(backend, store, judge="NEW_ID", progress=False).pairwise(
            pd.DataFrame(fake_pairs(5))
        )
        assert server.requests == 10 and summary.ok == 10


def test_two_runs_at_once_served_by_two_models_store_one_models_verdicts(
    tmp_path: Path,
) -> None:
    """Two runs of one judge on one store at once, each finding nothing recorded as it
    began: the other (another process, its server serving May) commits its record
    while this one (August) judges. This run's commit finds it in its transaction
    and stops, rolled back: none of its August verdicts stored, no record of it."""
    path = tmp_path / "s.db"

    def august(n: int) -> str:
        if n == 1:  # the other run's commit, from its own connection, before any answer
            with Store(path) as other:
                other.put_run(
                    "gpt-4o", judgments=4, seconds=1.0, tokens=None, served={MAY: 4}, run="other"
                )
        return AUGUST

    with StandIn(served_as=august) as server, Store(path) as store:
        with pytest.raises(JudgeError) as caught:
            _judge(server, store, 4)
        asked = server.requests  # all 8, or fewer where a commit came before the end
        held = len(store.judgments())
        runs = store.runs()
    said = str(caught.value)
    assert held == 0
    assert runs[["judgments", "served"]].values.tolist() == [[4, f"'{MAY}' (4 answers)"]]
    assert (
        f"judge id 'gpt-4o': another run, started while this one ran, stored verdicts served "
        f"as '{MAY}' (run 1: 4 verdicts served as '{MAY}'), and this run's answers were served "
        f"as '{AUGUST}' (this run's answers: '{AUGUST}' ({asked} answer"
    ) in said
    assert 1 <= asked <= 8
    assert "it stored 0 verdicts before" in said
    assert f"--revision {AUGUST} --judge-id NEW_ID" in said


def test_replicas_that_name_one_model_differently_are_told_what_to_do(tmp_path: Path) -> None:
    """Two --base-url replicas of one model, one started with a served name and one
    naming it by its path (llama.cpp): the run stops at the second name, and the
    error says how to give them one name, or to judge through one of them."""
    named, path = StandIn(served_as="llama-3-8b"), StandIn(served_as="/models/llama-3-8b.gguf")
    with named as one, path as two, Store(tmp_path / "s.db") as store:
        backend = HTTPBackend([one.base_url, two.base_url], model="llama-3-8b", concurrency=1)
        with pytest.raises(JudgeError) as caught:
            Runner(backend, store, progress=False).pairwise(pd.DataFrame(fake_pairs(2)))
    said = str(caught.value)
    assert "'llama-3-8b' (1 answer)" in said and "'/models/llama-3-8b.gguf' (1 answer)" in said
    assert (
        "if the names are of one model, which the 2 servers (--base-url) name differently, "
        "give every server one name for it (vLLM: --served-model-name; llama.cpp: --alias) "
        "or judge through one --base-url"
    ) in said
    flip = StandIn(served_as=lambda n: MAY if n == 1 else AUGUST)
    with flip as server, Store(tmp_path / "one.db") as store:
        with pytest.raises(JudgeError) as caught:
            _judge(server, store, 1)
    assert "servers (--base-url)" not in str(caught.value)  # one server: no replicas


def test_a_ten_megabyte_name_is_recorded_by_its_length_and_digest(tmp_path: Path) -> None:
    """A server answering 10 MB of "model": recorded as its length and digest, the
    backend's scrubber run over no more than a model name's length per answer (it ran
    over the whole 10 MB with each answer: 0.6 s, the event loop held)."""
    huge = "m" * 10_000_000
    with StandIn(served_as=huge) as server, Store(tmp_path / "s.db") as store:
        backend = HTTPBackend(server.base_url, model="m", concurrency=1)
        scrubbed: list[int] = []
        scrub = backend.scrub
        backend.scrub = lambda text: scrubbed.append(len(text)) or scrub(text)  # type: ignore[method-assign]
        summary = Runner(backend, store, progress=False).pairwise(pd.DataFrame(fake_pairs(1)))
        runs = store.runs()
    digest = hashlib.sha256(huge.encode()).hexdigest()[:16]
    name = f"<a name of 10,000,000 characters, sha256 {digest}>"
    assert summary.served == {name: 2}
    assert runs["served"].tolist() == [f"'{name}' (2 answers)"]
    assert max(scrubbed, default=0) <= 200


# --- perplexities and rewrites ------------------------------------------------------


def _prompts(n: int) -> list[Prompt]:
    return [Prompt((Message("user", f"rewrite answer {i}"),), "") for i in range(n)]


def _rewrite(server: StandIn, store: Store, n: int) -> RunSummary:
    backend = HTTPBackend(server.base_url, model="gpt-4o", concurrency=1)
    _, _, summary = Runner(backend, store, progress=False).rewrite(
        _prompts(n), max_new_tokens=8, version="v1"
    )
    return summary


def test_rewrites_record_their_served_model_and_a_resume_served_by_another_stops(
    tmp_path: Path,
) -> None:
    """Rewrites made in May (3), resumed in August over 5: the first August answer
    stops the run before its rewrite is stored (before, the 3 May rewrites were reused
    and 2 August ones added under one model id, nothing said). The May model back, the
    run resumes."""
    path = tmp_path / "s.db"
    with StandIn(served_as=MAY) as server, Store(path) as store:
        summary = _rewrite(server, store, 3)
        assert store.served_names("rewrites", "gpt-4o", "") == {MAY: 3}
    assert summary.ok == 3 and dict(summary.served) == {MAY: 3}
    with StandIn(served_as=AUGUST) as server, Store(path) as store:
        with pytest.raises(JudgeError) as caught:
            _rewrite(server, store, 5)
        assert server.requests == 1
        assert len(store.stored_rewrites(_rewrite_keys(store, 5))) == 3  # nothing added
        assert store.served_names("rewrites", "gpt-4o", "") == {MAY: 3}
    said = str(caught.value)
    assert (
        f"model 'gpt-4o' at revision (none): the rewrites of it stored here were served as "
        f"'{MAY}', and the server now answers as '{AUGUST}' (this run's answers: '{AUGUST}' "
        "(1 answer)) — the run stopped before storing a row served so"
    ) in said
    assert "it stored 0 rows before" in said
    assert f"HTTPBackend(revision='{AUGUST}')" in said
    with StandIn(served_as=MAY) as server, Store(path) as store:
        summary = _rewrite(server, store, 5)
        assert server.requests == 2 and store.served_names("rewrites", "gpt-4o", "") == {MAY: 5}
    assert (summary.cached, summary.ok) == (3, 2)


def _rewrite_keys(store: Store, n: int) -> list[str]:
    """The content keys of :func:`_rewrite`'s first ``n`` prompts."""
    backend = HTTPBackend("http://127.0.0.1:9/v1", model="gpt-4o")
    runner = Runner(backend, store, progress=False)
    keying = runner._keying({"protocol": "v1", "max_new_tokens": 8, "decoding": "greedy"})
    return [Task(keying, "rewrite", "", "", p).key for p in _prompts(n)]


def test_rewrites_whose_alias_flips_mid_run_stop_at_the_flip(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with StandIn(served_as=lambda n: MAY if n <= 2 else AUGUST) as server, Store(path) as store:
        with pytest.raises(JudgeError) as caught:
            _rewrite(server, store, 4)
        assert server.requests == 3
        assert store.served_names("rewrites", "gpt-4o", "") == {MAY: 2}
        held = store.stored_rewrites(_rewrite_keys(store, 4))
    assert len(held) == 2
    said = str(caught.value)
    assert f"this run's answers were served as '{MAY}' first" in said
    assert f"'{MAY}' (2 answers), '{AUGUST}' (1 answer)" in said
    assert "it stored 2 rows before" in said


class _Continuations(FakeBackend):
    """Continuation log-probs (-1 per character) from a 'server' whose answers name
    ``names(n)`` for its nth answer, as :meth:`HTTPBackend.served` counts them."""

    def __init__(self, names: Callable[[int], str]) -> None:
        super().__init__(batch_size=1)
        self.names, self.answers, self.model_id, self.revision = names, 0, "gpt-4o", ""
        self.totals: dict[str, int] = {}

    async def continuation_logprobs(  # type: ignore[override]
        self, prompts: Sequence[Prompt], continuations: Sequence[str]
    ) -> list[np.ndarray]:
        out = []
        for text in continuations:
            self.answers += 1
            name = self.names(self.answers)
            self.totals[name] = self.totals.get(name, 0) + 1
            out.append(np.full(len(text), -1.0))
        return out

    def served(self) -> dict[str, int]:
        return dict(self.totals)


def test_perplexities_are_held_to_one_served_model(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    prompts = _prompts(4)
    texts = ["one", "two", "three", "four"]
    with Store(path) as store:
        runner = Runner(_Continuations(lambda n: MAY), store, progress=False)
        _, rows, summary = runner.perplexity(prompts[:2], texts[:2])
        assert store.served_names("perplexities", "gpt-4o", "") == {MAY: 2}
        assert store.served_names("rewrites", "gpt-4o", "") == {}
    assert [r.sum_logprob for r in rows.values()] == [-3.0, -3.0]
    assert dict(summary.served) == {MAY: 2}
    with Store(path) as store:
        august = _Continuations(lambda n: AUGUST)
        with pytest.raises(JudgeError) as caught:
            Runner(august, store, progress=False).perplexity(prompts, texts)
        assert august.answers == 1
        assert len(store.stored_perplexities(list(rows))) == 2
        kept = store._rows("SELECT COUNT(*) FROM perplexities")[0][0]
    assert kept == 2
    said = str(caught.value)
    assert f"the perplexities of it stored here were served as '{MAY}'" in said
    assert f"--revision {AUGUST} (recuse judge --perplexity" in said
    # another revision keys them apart: computed, and recorded under it
    with Store(path) as store:
        august = _Continuations(lambda n: AUGUST)
        august.revision = AUGUST
        _, rows, summary = Runner(august, store, progress=False).perplexity(prompts, texts)
        assert store.served_names("perplexities", "gpt-4o", AUGUST) == {AUGUST: 4}
    assert summary.ok == 4


def test_perplexities_stored_by_another_run_meanwhile_stop_this_ones_commit(
    tmp_path: Path,
) -> None:
    """Two runs at once, each finding nothing recorded as it began: the other
    (another connection, its server serving May) records May while this one computes
    with August; this run's commit finds it in its transaction and rolls back."""
    path = tmp_path / "s.db"

    def august(n: int) -> str:
        if n == 1:
            with Store(path) as other:
                record = Served(lambda: {MAY: 1}, what="perplexities", model="gpt-4o",
                                revision="", recorded={}, store=str(path))  # fmt: skip
                record.before = {}
                record.check()  # its answer: May, accepted
                other.put_perplexities("gpt-4o", "", [], served=record)
        return AUGUST

    with Store(path) as store:
        with pytest.raises(JudgeError) as caught:
            Runner(_Continuations(august), store, progress=False).perplexity(
                _prompts(2), ["one", "two"]
            )
        assert store._rows("SELECT COUNT(*) FROM perplexities")[0][0] == 0
        assert store.served_names("perplexities", "gpt-4o", "") == {MAY: 1}
    said = str(caught.value)
    assert (
        f"another run, started while this one ran, stored perplexities of it served as "
        f"'{MAY}', and this run's answers were served as '{AUGUST}'"
    ) in said


def test_perplexities_are_held_to_the_served_model_of_the_judges_verdicts(
    tmp_path: Path,
) -> None:
    """Verdicts of gpt-4o judged in May (2 pairs, 4 verdicts), its perplexities asked
    later in August (recuse judge --perplexity again: the verdicts all stored, the
    perplexities new). Before, the August perplexities were stored beside the May
    verdicts, nothing said: the perplexity analysis would pair one snapshot's
    perplexities with another's verdicts. Now the perplexities of a model id and
    revision none of whose perplexities are recorded are held to the served name of its
    judge ids' verdicts: the run stops before storing one; May back, they are stored."""
    path = tmp_path / "s.db"
    with StandIn(served_as=MAY) as server, Store(path) as store:
        assert _judge(server, store, 2).ok == 4
    with Store(path) as store:
        august = _Continuations(lambda n: AUGUST)
        with pytest.raises(JudgeError) as caught:
            Runner(august, store, progress=False).perplexity(_prompts(2), ["one", "two"])
        assert august.answers == 1
        assert store._rows("SELECT COUNT(*) FROM perplexities")[0][0] == 0
        assert store.served_names("perplexities", "gpt-4o", "") == {}
    said = str(caught.value)
    assert (
        f"model 'gpt-4o' at revision (none): the verdicts of judge id 'gpt-4o' stored here "
        f"were served as '{MAY}', and the server now answers as '{AUGUST}'"
    ) in said
    assert "it stored 0 rows before" in said
    with Store(path) as store:
        may = Runner(_Continuations(lambda n: MAY), store, progress=False)
        _, done, summary = may.perplexity(_prompts(2), ["one", "two"])
        assert [r.sum_logprob for r in done.values()] == [-3.0, -3.0]
        assert store.served_names("perplexities", "gpt-4o", "") == {MAY: 2}
    assert summary.ok == 2


def test_verdicts_are_held_to_the_served_model_of_their_models_perplexities(
    tmp_path: Path,
) -> None:
    """The other way round: perplexities of gpt-4o computed in May (2), its verdicts
    judged in August (no run of it recorded a name). Before, the August verdicts were
    stored beside the May perplexities, nothing said; now the first August answer stops
    the run with none of its verdicts stored; May back, the verdicts are judged."""
    path = tmp_path / "s.db"
    with Store(path) as store:
        Runner(_Continuations(lambda n: MAY), store, progress=False).perplexity(
            _prompts(2), ["one", "two"]
        )
    with StandIn(served_as=AUGUST) as server, Store(path) as store:
        with pytest.raises(JudgeError) as caught:
            _judge(server, store, 2)
        assert server.requests == 1 and store.judgments().empty
    said = str(caught.value)
    assert (
        f"judge id 'gpt-4o': the perplexities of its model and revision stored here were "
        f"served as '{MAY}', and the server now answers as '{AUGUST}'"
    ) in said
    assert "it stored 0 verdicts before" in said
    with StandIn(served_as=MAY) as server, Store(path) as store:
        assert _judge(server, store, 2).ok == 4
