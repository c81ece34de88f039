"""vLLM ``logprob_token_ids``: exact verdict log-probs, with the top-k fallback.

Every prompt gets the same planted next-token distribution, chosen so that the
top 20 hold ``A`` and 19 fillers while ``B`` (and `` A``, `` B``, ``C``) lie
outside it. Expected numbers are worked out by hand from the planted probabilities.
The stand-in answers the field in the request and response shapes read from vLLM's
source (see :mod:`recuse.testing.standin`).
"""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from judging.helpers import fake_pairs
from recuse.cli import main
from recuse.errors import JudgeError
from recuse.judging import PairwiseProtocol, Runner, Store
from recuse.judging.backends.base import TopK, TransientError
from recuse.judging.backends.http import HTTPBackend
from recuse.judging.protocols import Message, Prompt
from recuse.testing.standin import STANDIN_VOCAB, StandIn
from recuse.verdict_parsing import VerdictTokens

PROBS = {"A": 0.30, " A": 0.02, "B": 0.01, " B": 0.004, "C": 0.006}
PROBS |= {f"f{i}": 0.03 for i in range(19)}  # ranks 2-20 after A; sum 0.91 <= 1
PLANTED = {t: math.log(p) for t, p in PROBS.items()}
# Eq. 3 on the exact log-probs: p(A) = P(A) + P(" A"), p(B) = P(B) + P(" B")
EXACT_FIRST = (0.30 + 0.02) / (0.30 + 0.02 + 0.01 + 0.004)  # 0.32 / 0.334
OUTSIDE = "verdict token outside top-k: no log-prob for B among the server's top 20"
# the brackets format's single-token verdict texts, in the order the judge asks them
IDS = [STANDIN_VOCAB[t] for t in ("A", " A", "B", " B", "C", " C")]


def _judge(
    server: StandIn, tmp_path: Path, protocol: PairwiseProtocol, *, n: int = 3, concurrency: int = 1
) -> tuple[pd.DataFrame, HTTPBackend]:
    pairs = pd.DataFrame(fake_pairs(n))
    with Store(tmp_path / "s.db") as store:
        backend = HTTPBackend(server.base_url, model="m", concurrency=concurrency)
        Runner(backend, store, progress=False).pairwise(pairs, protocol=protocol)
        rows = store.judgments()
    return rows, backend


def _asked(server: StandIn) -> list[object]:
    return [b.get("logprob_token_ids") for b in server.bodies]


def test_honoured_gives_exact_eq3_where_top_k_lost_b(tmp_path: Path) -> None:
    with StandIn(token_ids="honoured", planted=PLANTED) as server:
        rows, backend = _judge(server, tmp_path, PairwiseProtocol())
        # once per run, not per prompt: "[[", then 3 labels x 6 texts after it, and the
        # 12 that are not one token after it ("[[A]") alone
        assert server.tokenize_calls == 31
    assert _asked(server) == [IDS] * 6
    # vLLM needs `logprobs` set with the field; the answer is read by token id
    assert all(b["logprobs"] == 20 and b["return_tokens_as_token_ids"] for b in server.bodies)
    assert backend.exact_ids is True
    assert set(rows["status"]) == {"ok"}
    first = rows[rows["slot"] == "first"]
    second = rows[rows["slot"] == "second"]
    assert first["p_slot_a"].to_numpy() == pytest.approx([EXACT_FIRST] * 3, abs=1e-12)
    assert first["value"].to_numpy() == pytest.approx([EXACT_FIRST] * 3, abs=1e-12)
    assert second["value"].to_numpy() == pytest.approx([1 - EXACT_FIRST] * 3, abs=1e-12)
    assert rows["mass"].to_numpy() == pytest.approx([0.334] * 6, abs=1e-12)
    assert rows["p_tie"].to_numpy() == pytest.approx([0.006] * 6, abs=1e-12)


def test_requests_in_flight_share_one_tokenize_lookup(tmp_path: Path) -> None:
    with StandIn(token_ids="honoured", planted=PLANTED) as server:
        rows, backend = _judge(server, tmp_path, PairwiseProtocol(), n=6, concurrency=4)
        # 18 texts asked once, not once per request in flight (4 x 18 = 72 before)
        assert server.tokenize_calls == 31
    assert backend.exact_ids is True and len(rows) == 12
    assert _asked(server) == [IDS] * 12
    first = rows[rows["slot"] == "first"]
    assert first["value"].to_numpy() == pytest.approx([EXACT_FIRST] * 6, abs=1e-12)


@pytest.mark.parametrize("mode", ["ignored", "unknown"])
def test_ignored_falls_back_to_top_k_and_counts_b_outside_it(mode: str, tmp_path: Path) -> None:
    with StandIn(token_ids=mode, planted=PLANTED) as server:
        rows, backend = _judge(server, tmp_path, PairwiseProtocol())
    # asked once, then remembered: the server answered top-k only; that first prompt
    # is asked again without the field (its answer named tokens by id, or was a top-k
    # read for the exact ids)
    assert _asked(server) == [IDS] + [None] * 6
    assert "return_tokens_as_token_ids" not in server.bodies[1]
    assert backend.exact_ids is False
    # before, B's absence read as P(B) = 0 and every row scored p_slot_a = 1.0, "ok"
    assert set(rows["status"]) == {"unparsed"}
    assert rows["value"].isna().all()
    assert set(rows["reason"]) == {OUTSIDE}


@pytest.mark.parametrize("mode", ["ignored", "unknown"])
def test_a_top_k_that_holds_every_verdict_is_not_taken_for_an_exact_answer(
    mode: str, tmp_path: Path
) -> None:
    # top 25 holds A, " A", B, " B" and C: before, a server that ignored the field
    # passed for one that honoured it (every requested text was in its answer) and
    # the run said "exact"; an exact answer holds only the requested ids and the
    # sampled token, never 25 tokens
    with StandIn(token_ids=mode, planted=PLANTED) as server:
        rows, backend = _judge(server, tmp_path, PairwiseProtocol(top_k=25))
    assert backend.exact_ids is False and "ignored" in backend.exact_note
    assert _asked(server) == [IDS] + [None] * 6
    first = rows[rows["slot"] == "first"]
    assert first["value"].to_numpy() == pytest.approx([EXACT_FIRST] * 3, abs=1e-12)


def test_a_top_k_that_lists_a_spelling_without_its_twin_bounds_p_a(tmp_path: Path) -> None:
    # top 22: A, 19 fillers, " A" (0.02) and B (0.01, the smallest listed); " B" (0.004)
    # is not listed though its twin " A" is. Before, " B" read as 0 and p_a = 0.32 / 0.33
    # stood as exact, with nothing said. Its probability is at most 0.01 (the smallest
    # listed), so p_a lies in [0.32 / (0.33 + 0.01), 0.32 / 0.33] = [0.941, 0.970],
    # which holds the exact 0.32 / 0.334 = 0.958 (planted)
    with StandIn(token_ids="ignored", planted=PLANTED) as server:
        rows, _ = _judge(server, tmp_path, PairwiseProtocol(top_k=22))
    read = 0.32 / 0.33
    low = 0.32 / 0.34
    assert low < EXACT_FIRST < read
    assert set(rows["status"]) == {"ok"}  # either end of it prefers A: firm enough
    first = rows[rows["slot"] == "first"]
    assert first["p_slot_a"].to_numpy() == pytest.approx([read] * 3, abs=1e-12)  # as before
    assert (f"{low:.3f}", f"{read:.3f}") == ("0.941", "0.970")
    assert set(rows["reason"]) == {
        "verdict spelling outside top-k: ' B' not among the server's top 22 while its twin "
        "is, so its probability is unknown (at most 0.01, the smallest listed): p_a lies "
        "between 0.941 and 0.970; read with it at 0: 0.970"
    }


def test_a_top_k_that_holds_both_twins_reads_as_before(tmp_path: Path) -> None:
    # top 24 lists A, " A", B and " B": no bound, no reason (the common case, unchanged)
    with StandIn(token_ids="ignored", planted=PLANTED) as server:
        rows, _ = _judge(server, tmp_path, PairwiseProtocol(top_k=24))
    assert set(rows["status"]) == {"ok"} and rows["reason"].isna().all()
    first = rows[rows["slot"] == "first"]
    assert first["p_slot_a"].to_numpy() == pytest.approx([EXACT_FIRST] * 3, abs=1e-12)


def test_a_server_naming_tokens_by_id_is_read_exactly(tmp_path: Path) -> None:
    # vLLM started with --return-tokens-as-token-ids names every token token_id:N;
    # before, no requested text matched those names and every row fell to top-k
    # (unparsed here: B is outside the top 20)
    with StandIn(token_ids="honoured", planted=PLANTED, server_token_ids=True) as server:
        rows, backend = _judge(server, tmp_path, PairwiseProtocol())
    assert backend.exact_ids is True and set(rows["status"]) == {"ok"}
    first = rows[rows["slot"] == "first"]
    assert first["value"].to_numpy() == pytest.approx([EXACT_FIRST] * 3, abs=1e-12)


def test_refused_retries_without_the_field_and_remembers(tmp_path: Path) -> None:
    # a top-k of 25 holds every planted token: Eq. 3 on it equals the exact value
    with StandIn(token_ids="refused", planted=PLANTED) as server:
        rows, backend = _judge(server, tmp_path, PairwiseProtocol(top_k=25))
    assert server.served.get("ok") == 7  # 6 prompts + the refused first try
    assert _asked(server) == [IDS] + [None] * 6
    assert backend.exact_ids is False and "refused" in backend.exact_note
    assert "out-of-vocab token ids" in backend.exact_note  # vLLM's own message
    # said whole, not as the first 200 characters of its JSON body (cut mid-field)
    assert backend.exact_note == (
        "the server refused logprob_token_ids (HTTP 400: token_id(s) [1, 4, 2, 5, 3, 6] in "
        "logprob_token_ids contain out-of-vocab token ids. Vocabulary size: 1)"
    )
    assert set(rows["status"]) == {"ok"}
    first = rows[rows["slot"] == "first"]
    assert first["value"].to_numpy() == pytest.approx([EXACT_FIRST] * 3, abs=1e-12)


def test_server_without_tokenize_uses_top_k(tmp_path: Path) -> None:
    with StandIn(planted=PLANTED) as server:  # no /tokenize route (404)
        rows, backend = _judge(server, tmp_path, PairwiseProtocol())
    assert _asked(server) == [None] * 6
    assert "/tokenize did not answer (HTTP 404" in backend.exact_note
    assert set(rows["reason"]) == {OUTSIDE}


def cli_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str, *extra: str
) -> tuple[str, pd.DataFrame]:
    """`recuse judge` of two pairs against the stand-in server (``mode``: how it treats
    logprob_token_ids) with ``extra`` options, then `recuse judge export`: what the
    judge printed, and the exported table."""
    src = tmp_path / "pairs.jsonl"
    pd.DataFrame(fake_pairs(2)).to_json(src, orient="records", lines=True)
    store, out = tmp_path / "s.db", tmp_path / "p.csv"
    with StandIn(token_ids=mode, planted=PLANTED) as server:
        args = ["judge", "--model", "m", "--base-url", server.base_url, "--data", str(src)]
        assert main([*args, *extra, "--out", str(store), "--no-progress"]) == 0
    said = capsys.readouterr().out
    assert main(["judge", "export", str(store), "--out", str(out)]) == 0
    return said, pd.read_csv(out)


@pytest.mark.parametrize("mode", ["honoured", "ignored"])
def test_cli_judge_reads_exact_log_probs(
    mode: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    said, table = cli_judge(tmp_path, capsys, mode)
    if mode == "ignored":
        assert "4 unparsed" in said
        assert "spelling of A or B without its twin" not in said
        assert (
            "verdict log-probs: the server's top 20 only (the server ignored "
            "logprob_token_ids (top-k only)); a row whose A or B is not among them is unparsed"
        ) in said.splitlines()
        return
    assert "4 ok" in said
    assert "verdict log-probs: exact, for the verdict tokens themselves" in said
    assert table["p_a_first"].to_numpy() == pytest.approx([EXACT_FIRST] * 2, abs=1e-9)
    assert table["p_a_second"].to_numpy() == pytest.approx([1 - EXACT_FIRST] * 2, abs=1e-9)


@pytest.mark.parametrize("error", [JudgeError("HTTP 401"), TransientError("HTTP 503")])
def test_a_tokenize_route_that_fails_means_top_k_not_a_stop(
    error: Exception, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    post = HTTPBackend._post

    async def failing(self: HTTPBackend, path: str, body: dict[str, Any], **kw: Any) -> Any:
        if kw.get("root"):
            raise error
        return await post(self, path, body, **kw)

    monkeypatch.setattr(HTTPBackend, "_post", failing)
    with StandIn(token_ids="honoured", planted=PLANTED) as server:
        rows, backend = _judge(server, tmp_path, PairwiseProtocol(top_k=25))
    assert _asked(server) == [None] * 6 and backend.exact_ids is False
    assert str(error) in backend.exact_note
    first = rows[rows["slot"] == "first"]
    assert first["value"].to_numpy() == pytest.approx([EXACT_FIRST] * 3, abs=1e-12)


def test_a_verdict_without_a_single_token_id_means_top_k(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tokenize = StandIn._tokenize

    def split_b(self: StandIn, raw: bytes) -> Any:  # "B" and " B" become two tokens
        text = json.loads(raw)["prompt"]
        if text.removeprefix("[[").strip() == "B":  # alone or after the opener
            return 200, {}, json.dumps({"tokens": [7, 8]}).encode()
        return tokenize(self, raw)

    monkeypatch.setattr(StandIn, "_tokenize", split_b)
    with StandIn(token_ids="honoured", planted=PLANTED) as server:
        rows, backend = _judge(server, tmp_path, PairwiseProtocol())
    # exact ids for A and C only would have read P(B) = 0 and scored 1.0, "ok"
    assert _asked(server) == [None] * 6 and backend.exact_ids is False
    assert "single-token" in backend.exact_note
    assert set(rows["reason"]) == {OUTSIDE}


def _select(texts: tuple[str, ...]) -> VerdictTokens:
    return VerdictTokens(lambda t: t.strip() in ("A", "B"), texts)


@pytest.mark.parametrize("endpoint", ["completions", "chat"])
def test_the_exact_answer_holds_the_sampled_token_and_is_read_by_id(endpoint: str) -> None:
    # vLLM returns the sampled token (A, argmax) beside the requested ids (B, " B"):
    # the answer is exact, and only the requested tokens are read from it
    prompt = Prompt(messages=(Message("user", "Which is better?"),))
    select = _select(("B", " B"))

    async def ask(backend: HTTPBackend) -> list[Any]:
        try:
            return await backend.next_token_logprobs([prompt], top_k=20, select=select)
        finally:
            await backend.aclose()

    with StandIn(token_ids="honoured", planted=PLANTED) as server:
        backend = HTTPBackend(server.base_url, model="m", endpoint=endpoint)  # type: ignore[arg-type]
        (got,) = asyncio.run(ask(backend))
    assert backend.exact_ids is True and not isinstance(got, TopK)
    assert got == pytest.approx({"B": math.log(0.01), " B": math.log(0.004)}, abs=1e-12)
    body = server.bodies[0]
    assert body["logprob_token_ids"] == [STANDIN_VOCAB["B"], STANDIN_VOCAB[" B"]]
    assert body["logprobs"] is True if endpoint == "chat" else body["logprobs"] == 20


def test_more_verdict_ids_than_vllm_takes_means_top_k() -> None:
    # vLLM refuses more than 128 ids (HTTP 400); the judge does not send them
    texts = tuple(chr(0x4E00 + k) for k in range(129))  # one token each in the stand-in

    async def ids(backend: HTTPBackend) -> dict[int, str]:
        try:
            return await backend._verdict_ids(texts)
        finally:
            await backend.aclose()

    with StandIn(token_ids="honoured") as server:
        backend = HTTPBackend(server.base_url, model="m")
        assert asyncio.run(ids(backend)) == {}
    assert backend.exact_ids is False and "128" in backend.exact_note


def test_tokenize_is_asked_without_special_tokens() -> None:
    # vLLM's /tokenize adds the BOS unless told not to: "A" would be two tokens
    with StandIn(token_ids="honoured") as server:
        backend = HTTPBackend(server.base_url, model="m")

        async def ids() -> dict[int, str]:
            try:
                return await backend._verdict_ids(("A", " A"))
            finally:
                await backend.aclose()

        assert asyncio.run(ids()) == {STANDIN_VOCAB["A"]: "A", STANDIN_VOCAB[" A"]: " A"}


@pytest.mark.parametrize("endpoint", ["completions", "chat"])
def test_a_tokenizer_that_prefixes_a_space_to_every_text_is_asked_for_the_bare_label(
    endpoint: str, tmp_path: Path
) -> None:
    """A SentencePiece tokenizer of Llama 2 or Mistral puts a space before every text
    it tokenizes: ``A`` alone is ``▁A`` (the stand-in's `` A``, id 4), while the token
    after ``[[`` is the bare ``A`` (id 1). Each verdict text is asked after the opener,
    so the ids are those of the bare and the spaced labels, and Eq. 3 reads
    (0.30 + 0.02) / 0.334 = 0.958 by hand. Before, ``A`` alone gave id 4 only (and
    `` A``, two tokens alone, nothing): Eq. 3 read the spaced tokens only, 0.02 /
    (0.02 + 0.004) = 0.833, said to be exact."""
    protocol = PairwiseProtocol(mode="direct" if endpoint == "completions" else "explain")
    with StandIn(token_ids="honoured", planted=PLANTED, dummy_prefix=True) as server:
        pairs = pd.DataFrame(fake_pairs(2))
        with Store(tmp_path / "s.db") as store:
            backend = HTTPBackend(server.base_url, model="m", endpoint=endpoint)  # type: ignore[arg-type]
            Runner(backend, store, progress=False).pairwise(pairs, protocol=protocol)
            rows = store.judgments()
    assert _asked(server) == [IDS] * 4 and backend.exact_ids is True
    first = rows[rows["slot"] == "first"]
    assert first["value"].to_numpy() == pytest.approx([EXACT_FIRST] * 2, abs=1e-12)
    assert rows["mass"].to_numpy() == pytest.approx([0.334] * 4, abs=1e-12)


class _CountsTokenizeInFlight(StandIn):
    """Each /tokenize answer takes 50 ms; ``most`` is the most lookups in flight at once."""

    in_flight = 0
    most = 0

    async def _respond(
        self, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        if path != "/tokenize":
            return await super()._respond(path, headers, raw)
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        try:
            await asyncio.sleep(0.05)
            return await super()._respond(path, headers, raw)
        finally:
            self.in_flight -= 1


def test_the_token_id_lookups_go_out_together(tmp_path: Path) -> None:
    # 31 lookups one after another held the first judgment back ~3 s on a remote
    # server; the opener alone first, then the texts after it at once, then those read
    # alone: the same 31 lookups and ids, as many in flight as the lanes allow
    with _CountsTokenizeInFlight(token_ids="honoured", planted=PLANTED) as server:
        rows, backend = _judge(server, tmp_path, PairwiseProtocol(), n=2, concurrency=4)
        assert server.tokenize_calls == 31
    assert server.most == 4
    assert set(rows["status"]) == {"ok"}
    assert backend.exact_ids is True and _asked(server) == [IDS] * 4


def test_cli_judge_counts_verdicts_whose_p_a_is_bounded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 17 fillers, not 19: the top 20 lists A, " A" and B, not " B" (as top 22 above)
    planted = {t: lp for t, lp in PLANTED.items() if t not in ("f17", "f18")}
    src = tmp_path / "pairs.jsonl"
    pd.DataFrame(fake_pairs(2)).to_json(src, orient="records", lines=True)
    store, out = tmp_path / "s.db", tmp_path / "p.csv"
    with StandIn(token_ids="ignored", planted=planted) as server:
        args = ["judge", "--model", "m", "--base-url", server.base_url, "--data", str(src)]
        assert main([*args, "--out", str(store), "--no-progress"]) == 0
    said = capsys.readouterr().out
    assert "4 ok" in said
    assert (
        "verdicts read from a server's top-k that lists a spelling of A or B without its "
        "twin (' A' without ' B'): 4 of 4 verdicts; the absent twin's probability is "
        "unknown and read as 0, so their p_a are not exact: each lies in an interval, at "
        "its end where only one verdict's spelling lacks its twin (the interval is in the "
        "verdict's stored reason; one whose interval holds 0.5 is unparsed instead, one "
        "narrower than 0.0005 is read as exact)"
    ) in said.splitlines()
    assert main(["judge", "export", str(store), "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert table["p_a_first"].to_numpy() == pytest.approx([0.32 / 0.33] * 2, abs=1e-9)
    # the export's p_a columns look exact: the export says they are not (before, nothing)
    assert (
        "note: 4 of the 4 ok verdicts exported were read from a server's top-k that lists "
        "a spelling of A or B without its twin: their p_a_first / p_a_second is the p_a "
        "read with the absent twin at 0, one point of an interval, not exact"
    ) in " ".join(capsys.readouterr().out.split())
