"""`recuse judge` and `recuse judge export` end to end (tiny local model, stand-in server)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import pytest

from judging.helpers import fake_pairs, read_mt_bench_pairs
from recuse.cli import main
from recuse.testing.standin import StandIn

if TYPE_CHECKING:
    from conftest import StopOnce


def test_judge_local_folder_then_resume_then_export(
    tiny_model_dir: Path, tmp_path: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pairs = pd.DataFrame(read_mt_bench_pairs(shared_data, "gpt-4", "alpaca-13b", 3))
    pairs["human"] = ["a", "b", "tie"]
    src = tmp_path / "pairs.csv"
    pairs.to_csv(src, index=False)
    store = tmp_path / "judged.db"
    args = ["judge", "--model", str(tiny_model_dir), "--data", str(src), "--out", str(store)]
    assert main([*args, "--no-progress", "--judge-id", "tiny"]) == 0
    assert "6 judgments: 0 already stored, 6 ok" in capsys.readouterr().out
    assert main([*args, "--no-progress", "--judge-id", "tiny"]) == 0
    assert "6 already stored" in capsys.readouterr().out
    out = tmp_path / "pairs_out.csv"
    assert main(["judge", "export", str(store), "--out", str(out)]) == 0
    # the spreadsheet-safe copy beside the export is named where it is written
    copy = tmp_path / "for-spreadsheets" / "pairs_out.csv"
    assert copy.is_file()
    assert f"wrote 3 rows to {out} (exact, for scripts) and {copy} (for spreadsheets" in (
        capsys.readouterr().out
    )
    table = pd.read_csv(out)
    assert len(table) == 3 and set(table["judge"]) == {"tiny"}
    assert table["p_a_first"].between(0, 1).all() and table["p_a_second"].between(0, 1).all()
    assert list(table["human"]) == [1.0, 0.0, 0.5]
    assert (table["model_a"] == "gpt-4").all()


def test_judge_over_http_with_key_from_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MY_KEY", "sk-cli-secret-987")
    src = tmp_path / "pairs.jsonl"
    pd.DataFrame(fake_pairs(4)).to_json(src, orient="records", lines=True)
    store = tmp_path / "s.db"
    with StandIn() as server:
        code = main(
            [
                "judge",
                "--model",
                "gpt-4o",
                "--base-url",
                server.base_url,
                "--api-key-env",
                "MY_KEY",
                "--data",
                str(src),
                "--out",
                str(store),
                "--no-progress",
            ]
        )
    assert code == 0
    assert "8 ok" in capsys.readouterr().out
    out = tmp_path / "p.parquet"
    assert main(["judge", "export", str(store), "--out", str(out)]) == 0
    table = pd.read_parquet(out)
    assert set(table["judge"]) == {"gpt-4o"}  # roster id
    assert b"sk-cli-secret-987" not in store.read_bytes() + out.read_bytes()


@pytest.mark.parametrize(
    "option", ["--mode", "--protocol", "--endpoint", "--dtype", "--logprobs-mode"]
)
def test_choices_are_the_library_literals(
    option: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    store = tmp_path / "s.db"
    assert main(["judge", "--data", "x", "--out", str(store), option, "nonsense"]) == 2
    err = capsys.readouterr().err
    assert option in err and "nonsense" in err and not store.exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["judge", "--data", "x.csv"], "give --data"),
        (["judge", "export", "nope.db", "--out", "x.csv"], "no such store"),
        # counts out of range: --limit -3 judged every item, --max-attempts 0 was read
        # as 1, --timeout 0 failed every request
        (["judge", "-d", "x", "-o", "s.db", "--limit", "-3"], "--limit must be 0 (all) or more"),
        (["judge", "-d", "x", "-o", "s.db", "--prompts", "-1"], "--prompts must be 0 (all)"),
        (["judge", "-d", "x", "-o", "s.db", "--concurrency", "0"], "--concurrency must be 1"),
        (["judge", "-d", "x", "-o", "s.db", "--max-attempts", "0"], "--max-attempts must be 1"),
        (["judge", "-d", "x", "-o", "s.db", "--timeout", "0"], "--timeout must be a number"),
        (["judge", "-d", "x", "-o", "s.db", "--batch-size", "-2"], "--batch-size must be 0"),
        (["judge", "-d", "x", "-o", "s.db", "--max-batch-tokens", "-1"], "--max-batch-tokens"),
        # with --limit, numpy's "expected non-negative integer" traceback after the
        # judge was asked which model it serves
        (
            ["judge", "-d", "x", "-o", "s.db", "--seed", "-1", "--limit", "5"],
            "--seed must be 0 or more; got -1",
        ),
        (
            ["judge", "--data", "x", "--out", "s.db", "--protocol", "likert", "--perplexity"],
            "--perplexity goes with pairwise",
        ),
        (  # the map was ignored: the error said the file lacked the column it renamed
            ["judge", "-d", "x", "-o", "s.db", "--protocol", "likert", "--map", "a=response"],
            "--map, --values, --swapped-frame and --confidence read a pairs file",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("command", ["card", "export"])
def test_an_export_given_as_the_store_says_which_file_goes_where(
    command: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`recuse judge card pairs.csv` (the export, not the store) told a reader to 'give
    a new file name', which only starts a store on `recuse judge --out`."""
    pairs = tmp_path / "pairs.csv"
    pd.DataFrame(fake_pairs(2)).to_csv(pairs, index=False)
    before = pairs.read_bytes()
    again = tmp_path / "again.csv"
    out = ["--out", str(again)] if command == "export" else []
    assert main(["judge", command, str(pairs), *out]) == 2
    err = capsys.readouterr().err.strip()
    assert "not a recuse judgment store" in err and "read by `recuse audit`" in err
    assert "the store `recuse judge --out STORE` wrote" in err
    assert pairs.read_bytes() == before and not again.exists()


def test_a_rerun_with_nothing_left_never_loads_the_model(
    tiny_model_dir: Path,
    tmp_path: Path,
    shared_data: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import shutil

    folder = tmp_path / "model"
    shutil.copytree(tiny_model_dir, folder)
    src = tmp_path / "pairs.csv"
    pairs = pd.DataFrame(read_mt_bench_pairs(shared_data, "gpt-4", "alpaca-13b", 2))
    pairs.assign(human="a").to_csv(src, index=False)
    args = ["judge", "--model", str(folder), "--data", str(src), "--out", str(tmp_path / "s.db"),
            "--no-progress"]  # fmt: skip
    assert main(args) == 0
    capsys.readouterr()
    from recuse.judging.backends.local import LocalBackend

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the rerun loaded the model")

    # (deleting the weights, as this test once did, now changes the folder's fingerprint)
    monkeypatch.setattr(LocalBackend, "load", refuse)
    assert main(args) == 0
    assert "4 already stored" in capsys.readouterr().out


def test_readme_trial_limit_spreads_over_prompts_and_gives_estimates(
    tmp_path: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store, pairs, report = tmp_path / "s.db", tmp_path / "pairs.csv", tmp_path / "report"
    with StandIn() as server:
        code = main(["judge", "--model", "gpt-4o", "--base-url", server.base_url, "--data",
                     "mt-bench-human", "--data-dir", str(shared_data), "--out", str(store),
                     "--limit", "20", "--no-progress"])  # fmt: skip
    assert code == 0
    assert main(["judge", "export", str(store), "--out", str(pairs)]) == 0
    table = pd.read_csv(pairs)
    assert len(table) == 20 and table["prompt_id"].nunique() == 20  # not 2 of 80 prompts
    capsys.readouterr()
    assert main(["audit", str(pairs), "--out", str(report)]) == 0
    import json

    findings = [
        f
        for r in json.loads((report / "report.json").read_text())["summary"]
        for f in r["findings"]
    ]
    assert findings  # the trial estimates something (position, verbosity, agreement)


def test_exit_code_is_1_when_judgments_failed_and_a_rerun_retries_only_those(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "pairs.jsonl"
    pd.DataFrame(fake_pairs(6)).to_json(src, orient="records", lines=True)  # 12 judgments
    store = tmp_path / "s.db"

    def run(server: StandIn) -> int:
        url = server.base_url
        return main(["judge", "--model", "gpt-4o", "--base-url", url, "--data", str(src),
                     "--out", str(store), "--max-attempts", "1", "--no-progress"])  # fmt: skip

    # one request per judgment and one attempt: each 500 is one failed judgment, each
    # answer without a verdict one unparsed judgment
    with StandIn(faults={"500": 0.4, "noverdict": 0.3}, seed=3) as server:
        code = run(server)
        served = dict(server.served)
    failed, unparsed = served["500"], served["noverdict"]
    assert failed and unparsed and sum(served.values()) == 12
    cap = capsys.readouterr()
    assert code == 1
    assert f"{12 - failed - unparsed} ok, {unparsed} unparsed, {failed} failed" in cap.out
    assert f"recuse: {failed} judgments failed after retries" in cap.err
    assert "run the same command again to retry only those" in cap.err
    with StandIn() as server:  # healthy: only the failed ones are sent again
        code = run(server)
        resent = server.requests
    cap = capsys.readouterr()
    assert code == 0 and resent == failed and cap.err == ""
    assert f"{12 - failed} already stored, {failed} ok, 0 unparsed, 0 failed" in cap.out


def test_prompts_refused_for_good_exit_0_with_a_line_saying_a_rerun_fails_them_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A server's 400 for a prompt longer than its model reads is not a failure a rerun
    can mend: the judgments are stored as failed and counted, the command says a rerun
    fails them again, and exits 0 (as for unparsed replies). With judgments the server
    gave up on too, it exits 1 and names only those as retried."""
    src = tmp_path / "pairs.jsonl"
    pd.DataFrame(fake_pairs(6)).to_json(src, orient="records", lines=True)  # 12 judgments

    def run(server: StandIn, store: Path) -> int:
        return main(["judge", "--model", "gpt-4o", "--base-url", server.base_url, "--data",
                     str(src), "--out", str(store), "--max-attempts", "1",
                     "--no-progress"])  # fmt: skip

    with StandIn(faults={"toolong": 0.5}, seed=3) as server:
        code = run(server, tmp_path / "a.db")
        refused = server.served["toolong"]
    cap = capsys.readouterr()
    assert code == 0 and 0 < refused < 12
    assert f"{12 - refused} ok, 0 unparsed, {refused} failed" in cap.out
    assert "maximum context length is 2048 tokens" in cap.out  # the server's reason
    assert f"recuse: {refused} judgments failed for good" in cap.err
    assert "a rerun fails them again" in cap.err and "retry only those" not in cap.err
    with StandIn(faults={"toolong": 0.3, "500": 0.3}, seed=4) as server:
        code = run(server, tmp_path / "b.db")
        refused, gave_up = server.served["toolong"], server.served["500"]
    cap = capsys.readouterr()
    assert code == 1 and refused and gave_up
    assert f"recuse: {refused} judgments failed for good" in cap.err
    assert f"recuse: {gave_up} judgments failed after retries" in cap.err


def test_unparsed_judgments_alone_exit_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "pairs.jsonl"
    pd.DataFrame(fake_pairs(3)).to_json(src, orient="records", lines=True)
    with StandIn(faults={"noverdict": 1.0}) as server:
        code = main(["judge", "--model", "gpt-4o", "--base-url", server.base_url, "--data",
                     str(src), "--out", str(tmp_path / "s.db"), "--no-progress"])  # fmt: skip
    cap = capsys.readouterr()
    assert code == 0 and "0 ok, 6 unparsed, 0 failed" in cap.out and cap.err == ""


def test_a_folder_given_as_dot_is_judged_under_its_own_name(
    tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """`--model .` from inside the folder (or `--model final/sub/..`): the judge id was
    the path's last component as typed, "" or "..", so every row of the store was
    written under an empty judge name (an empty cell in the exported table)."""
    import shutil

    folder = tmp_path / "runs" / "final"
    shutil.copytree(tiny_model_dir, folder)
    (folder / "sub").mkdir()
    src = tmp_path / "pairs.csv"
    pd.DataFrame(fake_pairs(1)).to_csv(src, index=False)
    monkeypatch.chdir(folder)
    for model in (".", "sub/.."):
        store = tmp_path / f"s{len(model)}.db"
        args = ["judge", "--model", model, "--data", str(src), "--out", str(store)]
        assert main([*args, "--no-progress"]) == 0
        assert capsys.readouterr().out.startswith("judge final: local model on cpu")
        out = tmp_path / "t.csv"
        assert main(["judge", "export", str(store), "--out", str(out)]) == 0
        assert list(pd.read_csv(out)["judge"]) == ["final"]
        capsys.readouterr()


def test_a_pair_without_an_answer_is_named_by_file_and_row_before_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty answer cell in the 3rd row: the error names the file, row and column,
    and no store is made. It was 'row 3, column 'response_a': response_a is not text'
    without the file (raised as the judge was sent the deduplicated pairs), after an
    empty store had been created. (An answer 'N/A' is a text, judged as written.)"""
    pairs = pd.DataFrame(fake_pairs(6))
    pairs.loc[2, "response_a"] = None
    src, store = tmp_path / "pairs.csv", tmp_path / "s.db"
    pairs.to_csv(src, index=False)
    with StandIn() as server:
        code = main(["judge", "--data", str(src), "--out", str(store), "--base-url",
                     server.base_url, "--model", "gpt-4o", "--no-progress"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    said = f"{src}, line 4 (data row 3), column 'response_a': response_a must be text, found"
    assert said in err
    assert not store.exists()


def test_export_onto_its_own_store_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A store named store.csv exported --out store.csv: the export replaced the store
    and every judgment in it (exit 0); now exit 2, the store kept."""
    src, store = tmp_path / "pairs.csv", tmp_path / "store.csv"
    pd.DataFrame(fake_pairs(4)).to_csv(src, index=False)
    with StandIn() as server:
        assert main(["judge", "--data", str(src), "--out", str(store), "--base-url",
                     server.base_url, "--model", "gpt-4o", "--no-progress"]) == 0  # fmt: skip
    before = store.read_bytes()
    capsys.readouterr()
    assert main(["judge", "export", str(store), "--out", str(store)]) == 2
    assert "is the input" in capsys.readouterr().err
    assert store.read_bytes() == before
    # the data file given as the store: refused before it is opened as one
    assert main(["judge", "--data", str(src), "--out", str(src), "--base-url",
                 "http://127.0.0.1:9/v1", "--model", "gpt-4o"]) == 2  # fmt: skip
    assert "is the input" in capsys.readouterr().err


def test_export_of_one_dataset_and_judge_from_a_mixed_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A store judged over two datasets exported them together with a note; the note
    now names --dataset, --dataset/--judge keep those rows, and a misspelt one is one
    line, exit 2, naming what the store holds, with nothing written."""
    from judging.helpers import FakeBackend
    from recuse.judging import Runner, Store

    pairs = pd.DataFrame(fake_pairs(5))
    pairs["source"] = ["llmbar"] * 3 + ["mt-bench-human"] * 2
    store = tmp_path / "s.db"
    with Store(store) as s:
        for judge in ("x", "y"):
            Runner(FakeBackend(), s, judge=judge, progress=False).pairwise(pairs)
    every, one, typo = (tmp_path / f"{n}.csv" for n in ("every", "one", "typo"))
    assert main(["judge", "export", str(store), "--out", str(every)]) == 0
    assert "to export one dataset alone, give --dataset NAME" in capsys.readouterr().out
    argv = ["judge", "export", str(store), "--out", str(one)]
    assert main([*argv, "--dataset", "llmbar", "--judge", "y"]) == 0
    assert "--dataset" not in capsys.readouterr().out
    table = pd.read_csv(one)
    assert sorted(table["item_id"]) == ["i0", "i1", "i2"] and set(table["judge"]) == {"y"}
    argv = ["judge", "export", str(store), "--out", str(typo)]
    assert main([*argv, "--dataset", "mt-bench"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and not typo.exists()
    assert "--dataset 'mt-bench' matches no row" in err
    assert "'llmbar' 6, 'mt-bench-human' 4" in err
    assert main([*argv, "--table", "ratings", "--dataset", "llmbar"]) == 2
    assert "ratings record no dataset" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["export", "card"])
def test_a_folder_given_as_the_store_is_called_a_folder(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`recuse judge export runs/` said 'no such store' of a folder that is there."""
    folder = tmp_path / "runs"
    folder.mkdir()
    out = ["--out", str(tmp_path / "x.csv")] if command == "export" else []
    assert main(["judge", command, str(folder), *out]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{folder}: is a folder, not a store" in err
    assert "give the store's file" in err and not (tmp_path / "x.csv").exists()


_PIPE = "not a regular file (a pipe, socket or device)"
_NO_STORE = f"is {_PIPE}, not a store"
_JUDGE = ["judge", "--data", "{pairs}", "--out", "{tmp}/s.db", "--model", "m", "--base-url"]
_CERTIFY = ["certify", "run", "{pairs}", "--store"]


@pytest.mark.parametrize(
    ("argv", "what"),
    [
        (["judge", "export", "{pipe}", "--out", "{tmp}/x.csv"], _NO_STORE),
        (["judge", "card", "{pipe}"], _NO_STORE),
        ([*_CERTIFY, "{pipe}"], _NO_STORE),
        ([*_CERTIFY, "{store}", "--prices", "{pipe}"], _PIPE),
        ([*_CERTIFY, "{store}", "--prices", "{tmp}"], "a folder, not a file"),
        (["judge", "templates", "{pipe}"], _PIPE),
        (["judge", "templates", "{tmp}"], "a folder, not a file"),
        ([*_JUDGE, "http://127.0.0.1:9", "--template", "{pipe}"], f"is {_PIPE}"),
    ],
    ids=["export", "card", "certify-store", "prices-pipe", "prices-folder", "templates-pipe",
         "templates-folder", "template-pipe"],
)  # fmt: skip
def test_a_pipe_or_folder_given_for_a_file_is_called_what_it_is(
    argv: list[str], what: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A named pipe (or a folder) given as a store, a price table or a judge template
    was "no such store", "price file not found", "no such file": the user, who sees it
    with ls, looked for a missing file. It is never opened (a pipe would wait)."""
    from recuse.judging.store import Store

    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    pairs = tmp_path / "pairs.csv"
    pd.DataFrame(fake_pairs(4)).assign(judge="m", p_a_first=1.0).to_csv(pairs, index=False)
    with Store(tmp_path / "store.db"):
        pass
    names = {"pipe": pipe, "tmp": tmp_path, "pairs": pairs, "store": tmp_path / "store.db"}
    code = main([a.format(**names) for a in argv])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and what in err, err
    assert "no such" not in err and "not found" not in err


@pytest.fixture
def judged_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store of 4 pairs judged by a stand-in server (gpt-4o)."""
    monkeypatch.setenv("MY_KEY", "sk-test")
    src = tmp_path / "pairs.jsonl"
    pd.DataFrame(fake_pairs(4)).to_json(src, orient="records", lines=True)
    store = tmp_path / "s.db"
    with StandIn() as server:
        argv = ["judge", "--model", "gpt-4o", "--base-url", server.base_url, "--api-key-env",
                "MY_KEY", "--data", str(src), "--out", str(store), "--no-progress"]  # fmt: skip
        assert main(argv) == 0
    return store


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_export_stopped_as_it_says_wrote_says_the_file_is_complete(
    judged_store: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    suffix: str,
    stop_once: StopOnce,
) -> None:
    """A Ctrl-C while `recuse judge export` prints its "wrote N rows" line: the file
    (and a CSV's spreadsheet copy) is whole, exit 130 and words that say so, not
    "start it over"."""
    import recuse.cli.judge as judge_cli

    capsys.readouterr()
    hit = stop_once(judge_cli, "echo", lambda text, *a, **k: "wrote" in text)
    out = tmp_path / f"e{suffix}"
    assert main(["judge", "export", str(judged_store), "--out", str(out)]) == 130
    err = " ".join(capsys.readouterr().err.split())
    assert hit and f"{out}" in err and "complete and in place" in err
    assert "start it over" not in err
    if suffix == ".csv":
        copy = tmp_path / "for-spreadsheets" / out.name
        assert f"{out} (exact, for scripts) and {copy}" in err and copy.is_file()
        assert len(pd.read_csv(out)) == 4
    else:
        assert len(pd.read_json(out, lines=True)) == 4


@pytest.mark.parametrize("where", ["write_text", "csv_text", "spreadsheet copy"])
def test_export_stopped_before_its_file_is_whole_says_start_it_over(
    judged_store: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    where: str,
    stop_once: StopOnce,
) -> None:
    """A Ctrl-C before the export's files are all in place (the exact CSV being
    written, or its spreadsheet copy after it): exit 130 and "start it over"; the words
    of whole files are never said early, and no half file is left under the name."""
    from recuse import outputs

    capsys.readouterr()
    out = tmp_path / "e.csv"
    if where == "spreadsheet copy":  # the exact file in place, its copy not yet
        hit = stop_once(outputs, "write_text", lambda p, *a, **k: "for-spread" in str(p))
    else:
        hit = stop_once(outputs, where, lambda *a, **k: True)
    assert main(["judge", "export", str(judged_store), "--out", str(out)]) == 130
    err = " ".join(capsys.readouterr().err.split())
    assert hit and "start it over" in err and "complete and in place" not in err
    assert "go on where it stopped" not in err  # an export keeps nothing to go on from
    assert not out.exists()  # undone: the exact file without its copy is not left


def test_export_stopped_as_it_prints_its_notes_says_the_file_is_complete(
    judged_store: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    stop_once: StopOnce,
) -> None:
    """A Ctrl-C as `recuse judge export` prints its notes, after the "wrote" line: the
    file is whole and said so (it said a rerun goes on where it stopped)."""
    import recuse.cli.judge as judge_cli
    from recuse.judging.store import Store

    real = Store.export_pairs

    def noted(self: Store, *, notes: list[str], **kwargs: Any) -> pd.DataFrame:
        notes.append("a planted note")
        return real(self, notes=notes, **kwargs)

    monkeypatch.setattr(Store, "export_pairs", noted)
    capsys.readouterr()
    hit = stop_once(judge_cli, "echo", lambda text, *a, **k: text.startswith("note:"))
    out = tmp_path / "e.csv"
    assert main(["judge", "export", str(judged_store), "--out", str(out)]) == 130
    err = " ".join(capsys.readouterr().err.split())
    assert hit and f"{out} (exact, for scripts)" in err and "complete and in place" in err
    assert len(pd.read_csv(out)) == 4
