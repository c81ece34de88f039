"""HTTP backend against a fault-injecting stand-in and a real llama.cpp server."""

from __future__ import annotations

import gc
import logging
import math
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pandas as pd
import pytest

from judging.helpers import fake_pairs
from recuse.cli import main
from recuse.errors import InputError
from recuse.judging import PairwiseProtocol, RetryPolicy, Runner, RunSummary, Store
from recuse.judging.backends.http import HTTPBackend, render_chatml, retry_after_seconds
from recuse.judging.protocols import Pair, score_distribution, to_ab
from recuse.testing.standin import StandIn, standin_distribution

FAST = RetryPolicy(max_attempts=4, base_delay=0.005, max_delay=0.05)
ALL_FAULTS = {"429": 0.12, "500": 0.12, "timeout": 0.04, "malformed": 0.08, "nologprobs": 0.08}


def _expected(pair: Pair, order: str) -> float:
    prompt = PairwiseProtocol().prompt(pair, order)  # type: ignore[arg-type]
    s = score_distribution(standin_distribution(render_chatml(prompt)))
    return to_ab(s.p_slot_a, order)  # type: ignore[arg-type]


def test_retry_after_parsing() -> None:
    assert retry_after_seconds("2.5") == 2.5
    assert retry_after_seconds(None) is None
    assert retry_after_seconds("soon") is None
    future = time.time() + 100
    from email.utils import formatdate

    assert 95 <= (retry_after_seconds(formatdate(future, usegmt=True)) or 0) <= 101


def test_completions_direct_scores_match_eq3(tmp_path: Path) -> None:
    pairs = fake_pairs(6)
    with StandIn() as a, StandIn() as b, Store(tmp_path / "s.db") as store:
        backend = HTTPBackend([a.base_url, b.base_url], model="m", concurrency=4)
        summary = Runner(backend, store, progress=False).pairwise(pd.DataFrame(pairs))
        assert summary.ok == 12
        assert a.requests == b.requests == 6  # round-robin over both servers
        out = store.export_pairs().set_index("item_id")
    for p in pairs:
        pair = Pair(p["item_id"], p["prompt"], p["response_a"], p["response_b"])
        assert out.loc[p["item_id"], "p_a_first"] == pytest.approx(_expected(pair, "first"))
        assert out.loc[p["item_id"], "p_a_second"] == pytest.approx(_expected(pair, "second"))


@pytest.mark.parametrize(
    ("endpoint", "mode"),
    [("completions", "direct"), ("completions", "explain"), ("chat", "explain")],
)
def test_faults_end_judged_or_failed_never_crash(tmp_path: Path, endpoint: str, mode: str) -> None:
    pairs = fake_pairs(20)
    with StandIn(faults=ALL_FAULTS, seed=7, hang=5.0, retry_after=0.01) as server:
        backend = HTTPBackend(
            server.base_url,
            model="m",
            endpoint=endpoint,  # type: ignore[arg-type]
            concurrency=8,
            # the "timeout" fault hangs 5 s; an answer the server sends at once must not
            # time out too, as at 0.3 s it could on a loaded machine (the stand-in shares
            # this process): each attempt lost so moves "ok" (~30 of 40 in explain mode)
            # toward the bound below
            timeout=1.0,
        )
        with Store(tmp_path / "s.db") as store:
            summary = Runner(backend, store, retry=FAST, progress=False).pairwise(
                pd.DataFrame(pairs),
                PairwiseProtocol(mode=mode),  # type: ignore[arg-type]
            )
            rows = store.judgments()
            out = store.export_pairs()
    assert summary.ok + summary.failed + summary.unparsed == 40 == len(rows)
    assert summary.ok > 20  # retries recover most
    assert set(server.served) >= {"ok", "429", "500", "timeout", "malformed", "nologprobs"}
    failed = rows[rows["status"] == "failed"]
    assert failed["reason"].str.startswith("gave up after 4 attempts").all()
    assert failed["value"].isna().all()
    ok = rows[rows["status"] == "ok"]
    assert ok["value"].between(0, 1).all()
    if endpoint == "completions" and mode == "direct":
        by_id = {p["item_id"]: p for p in pairs}
        for r in out.itertuples():
            p = by_id[r.item_id]
            pair = Pair(p["item_id"], p["prompt"], p["response_a"], p["response_b"])
            if r.status_first == "ok":
                assert r.p_a_first == pytest.approx(_expected(pair, "first"))


def test_chat_without_logprobs_parses_the_verdict(tmp_path: Path) -> None:
    with StandIn() as server, Store(tmp_path / "s.db") as store:
        backend = HTTPBackend(server.base_url, model="m", endpoint="chat", logprobs=False)
        Runner(backend, store, progress=False).pairwise(
            pd.DataFrame(fake_pairs(3)), PairwiseProtocol(mode="explain")
        )
        rows = store.judgments()
    assert set(rows["status"]) == {"ok"}
    assert set(rows["p_slot_a"]) <= {0.0, 0.5, 1.0}  # verdict-only
    assert rows["mass"].isna().all()


@pytest.mark.parametrize("share", [1.0, 0.4])
def test_chat_replies_without_log_probs_are_said_to_be_text_verdicts(
    share: float, tmp_path: Path
) -> None:
    """A chat server that sends no log-probs with a reply (always, or now and then)
    though they were asked: that reply's verdict is read from its text, p_a 1, 0 or
    0.5 with no mass. The run's line counts them and says what their p_a is; before, it
    said 'the server's top 20 only ... not read from its text' for a run whose every
    verdict was read from its text."""
    with StandIn(faults={"nologprobs": share}, seed=3) as server, Store(tmp_path / "s") as st:
        backend = HTTPBackend(server.base_url, model="m", endpoint="chat", concurrency=1)
        Runner(backend, st, progress=False).pairwise(
            pd.DataFrame(fake_pairs(6)), PairwiseProtocol(mode="explain")
        )
        rows = st.judgments()
    bare = rows["mass"].isna()
    assert set(rows.loc[bare, "value"]) <= {0.0, 0.5, 1.0} and bare.any()
    assert backend.verdict_replies == (12, int(bare.sum()))
    said = backend.logprobs_line(20)
    assert said is not None
    assert said.startswith(f"verdict log-probs: none in {int(bare.sum())} of 12 replies")
    assert "p_a is 1, 0 or 0.5 (the verdict itself, not a probability" in said
    if share == 1.0:  # no top-k was read: nothing said of one
        assert bare.all() and "top 20" not in said
    else:
        assert not bare.all() and "; the others: verdict log-probs: the server's top 20" in said


def test_a_judge_asked_again_over_the_chat_endpoint_is_not_served_the_completions_verdicts(
    tmp_path: Path,
) -> None:
    """One model judged in explain mode over /v1/completions (our ChatML, the verdict
    scored after the prefix) and then over /v1/chat/completions (the server's chat
    template, the reply read whole) into one store: two prompts as the model reads
    them. Before, the second run found all 6 judgments 'already stored' and never asked
    the chat route; now it asks it (6 requests more), and the completions default keeps
    the keys it had (a rerun over completions finds them)."""
    pairs = pd.DataFrame(fake_pairs(3))
    explain = PairwiseProtocol(mode="explain")
    with StandIn(seed=3) as server, Store(tmp_path / "s.db") as store:

        def run(endpoint: str) -> RunSummary:
            backend = HTTPBackend(server.base_url, model="m", endpoint=endpoint)  # type: ignore[arg-type]
            return Runner(backend, store, progress=False).pairwise(pairs, explain)

        assert run("completions").ok == 6
        asked = server.requests
        chat = run("chat")
        assert (chat.cached, chat.ok) == (0, 6) and server.requests == asked + 6
        assert run("completions").cached == 6 and run("chat").cached == 6
        assert HTTPBackend(server.base_url, model="m").key_params == {}


def test_a_store_judged_over_chat_before_the_endpoint_was_keyed_is_refused_to_completions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store judged in explain mode over --endpoint chat by a recuse whose keys held
    no endpoint (before 0e83ab82: key_params empty, as completions' still is) holds
    whole replies ('Fine. [[C]]', label C) under the completions keys. Before, a run
    over /v1/completions found all 6 'already stored' and sent nothing: chat verdicts
    served as its own. Now it is refused before a request, naming the store and the fix;
    a chat run goes on (its own keys), and a store judged over completions resumes."""
    pairs = pd.DataFrame(fake_pairs(3))
    explain = PairwiseProtocol(mode="explain")
    old = tmp_path / "old.db"
    with StandIn(seed=3) as server:
        with monkeypatch.context() as m, Store(old) as store:
            m.setattr(HTTPBackend, "key_params", property(lambda self: {}))
            chat = HTTPBackend(server.base_url, model="m", endpoint="chat")
            assert Runner(chat, store, progress=False).pairwise(pairs, explain).ok == 6
            rows = store.judgments()
        assert rows["label"].notna().all() and rows["text"].str.endswith("]]").all()
        asked = server.requests
        with Store(old) as store, pytest.raises(InputError) as caught:
            Runner(HTTPBackend(server.base_url, model="m"), store, progress=False).pairwise(
                pairs, explain
            )
        assert server.requests == asked
        said = str(caught.value)
        assert str(old) in said
        assert "6 stored verdicts under this run's content keys (judge id 'm') were read " in said
        assert "judge over /v1/completions into a new store (--out NEW.sqlite)" in said
        with Store(old) as store:  # over chat: its own keys, judged again
            chat = HTTPBackend(server.base_url, model="m", endpoint="chat")
            assert Runner(chat, store, progress=False).pairwise(pairs, explain).ok == 6
        with Store(tmp_path / "new.db") as store:  # completions rows resume as before
            ours = HTTPBackend(server.base_url, model="m")
            assert Runner(ours, store, progress=False).pairwise(pairs, explain).ok == 6
            again = Runner(ours, store, progress=False).pairwise(pairs, explain)
            assert again.cached == 6
            assert store.judgments()["label"].isna().all()


def test_api_key_is_sent_but_never_stored_logged_or_exported(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    secret = "sk-test-Zq81ThisIsSecret"
    monkeypatch.setenv("RECUSE_TEST_KEY", secret)
    caplog.set_level(logging.DEBUG)
    # 500 bodies echo the request headers back: the key must be scrubbed from reasons
    with StandIn(faults={"500": 0.5}, seed=3) as server:
        backend = HTTPBackend(server.base_url, model="m", api_key_env="RECUSE_TEST_KEY")
        with Store(tmp_path / "s.db") as store:
            retry = RetryPolicy(max_attempts=1)
            s = Runner(backend, store, retry=retry, progress=True).pairwise(
                pd.DataFrame(fake_pairs(8))
            )
            assert s.failed > 0  # some reasons hold the echoed (scrubbed) headers
            reasons = " ".join(store.judgments()["reason"].dropna())
            assert "authorization" in reasons.lower() and "***" in reasons
            store.export_pairs().to_csv(tmp_path / "pairs.csv")
    assert server.auth_headers and set(server.auth_headers) == {f"Bearer {secret}"}
    captured = capfd.readouterr()
    blobs = [p.read_bytes() for p in tmp_path.iterdir() if p.is_file()]
    for text in [captured.out, captured.err, caplog.text]:
        assert secret not in text
    for blob in blobs:
        assert secret.encode() not in blob


def test_missing_key_variable_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recuse.errors import ConfigError

    monkeypatch.delenv("RECUSE_NO_SUCH_KEY", raising=False)
    with StandIn() as server, pytest.raises(ConfigError, match="RECUSE_NO_SUCH_KEY"):
        # refused when the backend is made, before any store or request
        HTTPBackend(server.base_url, model="m", api_key_env="RECUSE_NO_SUCH_KEY")
    assert server.requests == 0


# --- a real OpenAI-compatible server: llama.cpp (xllamacpp) serving SmolLM2 -------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server() -> Iterator[str]:
    xllamacpp = pytest.importorskip("xllamacpp")
    from recuse.judging.models import smollm2_gguf

    params = xllamacpp.CommonParams()
    params.model.path = str(smollm2_gguf())
    params.n_ctx = 2048
    params.n_parallel = 2
    params.port = _free_port()
    params.hostnames = ["127.0.0.1"]
    params.cpuparams.n_threads = 2
    params.cpuparams_batch.n_threads = 2
    server = xllamacpp.Server(params)
    url = f"http://127.0.0.1:{params.port}"
    for _ in range(300):
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    else:
        raise RuntimeError("llama.cpp server did not become healthy")
    yield url + "/v1"
    del server
    gc.collect()


SHORT = [
    Pair("s1", "What is 2 + 2?", "2 + 2 = 4.", "2 + 2 = 5."),
    Pair("s2", "Name the capital of France.", "Paris.", "The capital of France is Berlin."),
]


@pytest.mark.slow
def test_real_llama_cpp_server_judges_both_orders(llama_server: str, tmp_path: Path) -> None:
    backend = HTTPBackend(
        llama_server, model="smollm2", model_id="smollm2-135m-instruct", revision="gguf-q4_1"
    )
    with Store(tmp_path / "s.db") as store:
        summary = Runner(backend, store, progress=False).pairwise(SHORT)
        assert summary.ok == 4, summary
        out = store.export_pairs()
        again = Runner(backend, store, progress=False).pairwise(SHORT)
        assert again.cached == 4
    for col in ("p_a_first", "p_a_second"):
        assert out[col].between(0, 1).all()
    assert (out["mass_first"] > 0.01).all() and (out["mass_first"] <= 1 + 1e-9).all()
    assert not math.isnan(out["p_a"].iloc[0])


def test_a_judge_with_little_probability_on_a_or_b_is_told_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Eq. 3 normalises over A and B only: a judge that puts 0.03 on A and 0.01 on B
    (0.96 on other words) reads p_a 0.75, as firm as one with all its probability
    there. `recuse judge` says the verdict mass (median 0.04 over the 4 verdicts, by
    hand) and counts those below 0.1; before, nothing but the export's mass columns
    said it."""
    from recuse.cli import main

    planted = {"A": math.log(0.03), "B": math.log(0.01), "The": math.log(0.96)}
    src, store = tmp_path / "pairs.jsonl", tmp_path / "s.db"
    pd.DataFrame(fake_pairs(2)).to_json(src, orient="records", lines=True)
    with StandIn(planted=planted) as server:
        args = ["judge", "--model", "m", "--base-url", server.base_url, "--data", str(src)]
        assert main([*args, "--out", str(store), "--no-progress"]) == 0
    said = capsys.readouterr().out
    with Store(store) as s:
        rows = s.judgments()
    assert rows["p_slot_a"].to_numpy() == pytest.approx([0.75] * 4)
    assert (
        "verdict mass p(A) + p(B) (the share of the judge's probability on A or B at the "
        "verdict; 1 = all of it): median 0.04 over 4 verdicts; 4 below 0.1, whose p_a is "
        "A's share of that small part of it (the export's mass_first, mass_second)"
    ) in " ".join(said.split())


def test_the_chatml_caveat_is_said_once_per_store_and_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """/v1/completions gets recuse's ChatML text whatever the model: a Llama 3 or
    Mistral server reads its marks as plain text. The run's first line said so on every
    run; now the caveat is a note on the first run of a judge in a store (the one that
    records it), the runs record who wrote the prompts and the card says it each run.
    A chat-endpoint judge's first line still says the server writes its prompts."""
    from recuse.judging.setup import describe

    url = "http://127.0.0.1:9/v1"
    assert describe(HTTPBackend(url, model="m"), "m") == "judge m: model m asked of the server"
    chat = describe(HTTPBackend(url, model="m", endpoint="chat"), "m")
    assert chat.endswith("; its prompts written by the server in the model's own chat template")
    src = tmp_path / "pairs.jsonl"
    pd.DataFrame(fake_pairs(2)).to_json(src, orient="records", lines=True)
    store = tmp_path / "s.db"
    note = (
        "note: this judge's prompts are written by recuse in ChatML (<|im_start|>…<|im_end|>) "
        "for /v1/completions: a ChatML model (Qwen, SmolLM2) reads them as its own turns, a "
        "model with another chat template (Llama 3, Mistral, Gemma) reads those marks as "
        "plain text; --endpoint chat --mode explain has the server write its own (said "
        "once per store and judge; the evaluator card says which each judge's runs used)"
    )
    said = []
    for n in (2, 3, 3):  # judged, resumed with one pair more, everything stored
        pd.DataFrame(fake_pairs(n)).to_json(src, orient="records", lines=True)
        with StandIn() as server:
            args = ["judge", "--model", "m", "--base-url", server.base_url, "--data", str(src)]
            assert main([*args, "--out", str(store), "--no-progress"]) == 0
        said.append(" ".join(capsys.readouterr().out.split()))
    assert [note in s for s in said] == [True, False, False]
    assert all("prompts written in recuse's ChatML over /v1/completions" in s for s in said)
    # another judge id in the same store is told once too
    with StandIn() as server:
        args = ["judge", "--model", "m", "--base-url", server.base_url, "--data", str(src)]
        assert main([*args, "--judge-id", "m2", "--out", str(store), "--no-progress"]) == 0
    assert note in " ".join(capsys.readouterr().out.split())
    with Store(store) as s:
        assert s.runs()["rendering"].tolist() == ["recuse's ChatML over /v1/completions"] * 3
