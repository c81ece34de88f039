"""vLLM ``logprob_token_ids`` on the chat route, and servers that name tokens by id.

A chat judge writes its whole reply (``Fine. [[A]]``) and its verdict is read from
the log-probs at the token after ``[[``. Every prompt gets the planted distribution
of :mod:`judging.test_http_token_ids` at every position: the top 20 hold ``A`` and 19
fillers, while ``B`` (p = 0.01), `` A`` (0.02), `` B`` (0.004) and ``C`` (0.006) lie
outside it. Expected numbers are worked out by hand from those probabilities.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from judging.helpers import fake_pairs
from judging.test_http_token_ids import EXACT_FIRST, IDS, PLANTED, cli_judge
from recuse.errors import JudgeError
from recuse.judging import PairwiseProtocol, Runner, Store
from recuse.judging.backends.http import HTTPBackend
from recuse.testing.standin import StandIn

EXPLAIN = PairwiseProtocol(mode="explain")
# the top 20 at the verdict hold A (0.30) and no B: Eq. 3 on them reads P(B) as 0
TOP20_MASS = 0.30


def _judge(
    server: StandIn,
    tmp_path: Path,
    protocol: PairwiseProtocol = EXPLAIN,
    *,
    endpoint: str = "chat",
    n: int = 3,
) -> tuple[pd.DataFrame, HTTPBackend]:
    pairs = pd.DataFrame(fake_pairs(n))
    with Store(tmp_path / "s.db") as store:
        backend = HTTPBackend(
            server.base_url,
            model="m",
            endpoint=endpoint,  # type: ignore[arg-type]
            concurrency=1,
        )
        Runner(backend, store, progress=False).pairwise(pairs, protocol=protocol)
        rows = store.judgments()
    return rows, backend


def _asked(server: StandIn) -> list[object]:
    return [b.get("logprob_token_ids") for b in server.bodies]


@pytest.mark.parametrize("server_token_ids", [False, True])
def test_chat_honoured_reads_the_verdict_exactly_where_top_k_lost_b(
    server_token_ids: bool, tmp_path: Path
) -> None:
    with StandIn(
        token_ids="honoured", planted=PLANTED, server_token_ids=server_token_ids
    ) as server:
        rows, backend = _judge(server, tmp_path)
        assert server.tokenize_calls == 31  # once per run: [[, 18 texts after it, 12 alone
    # vLLM's chat route needs logprobs: true with the field; answers named by id
    assert _asked(server) == [IDS] * 6
    assert all(b["logprobs"] is True and b["return_tokens_as_token_ids"] for b in server.bodies)
    assert backend.exact_ids is True
    assert set(rows["status"]) == {"ok"}
    assert set(rows["text"]) == {"Fine. [[A]]"}
    first, second = rows[rows["slot"] == "first"], rows[rows["slot"] == "second"]
    # Eq. 3: (0.30 + 0.02) / (0.30 + 0.02 + 0.01 + 0.004); before, the top 20 read 1.0
    assert first["value"].to_numpy() == pytest.approx([EXACT_FIRST] * 3, abs=1e-12)
    assert second["value"].to_numpy() == pytest.approx([1 - EXACT_FIRST] * 3, abs=1e-12)
    assert rows["mass"].to_numpy() == pytest.approx([0.334] * 6, abs=1e-12)
    assert rows["p_tie"].to_numpy() == pytest.approx([0.006] * 6, abs=1e-12)


@pytest.mark.parametrize("mode", ["ignored", "unknown", "refused"])
def test_chat_falls_back_to_top_k_and_remembers(mode: str, tmp_path: Path) -> None:
    with StandIn(token_ids=mode, planted=PLANTED) as server:
        rows, backend = _judge(server, tmp_path)
    # asked once; that reply is asked again without the field, the rest never with it
    assert _asked(server) == [IDS] + [None] * 6
    assert "return_tokens_as_token_ids" not in server.bodies[1]
    assert backend.exact_ids is False
    assert ("refused" if mode == "refused" else "ignored") in backend.exact_note
    # top-k: B is outside the top 20, so its log-prob is unknown and Eq. 3 cannot be
    # read: every row is unparsed with that reason, as on the completions route, and
    # the reply's text verdict (A) is not put in its place. (Before, Eq. 3 read
    # P(B) = 0 and each row was ok at 1.0; only the exact route recovers 0.958.)
    assert set(rows["status"]) == {"unparsed"}
    assert rows["value"].isna().all() and rows["p_slot_a"].isna().all()
    assert set(rows["reason"]) == {
        "verdict token outside top-k: no log-prob for B among the server's top 20"
    }
    assert rows["mass"].to_numpy() == pytest.approx([TOP20_MASS] * 6, abs=1e-12)


@pytest.mark.parametrize("mode", ["ignored", "refused"])
def test_chat_top_k_that_holds_every_verdict_token_gives_the_same_eq3(
    mode: str, tmp_path: Path
) -> None:
    # the top 25 hold every planted token: the fallback reads the same value by text
    with StandIn(token_ids=mode, planted=PLANTED) as server:
        rows, backend = _judge(server, tmp_path, PairwiseProtocol(mode="explain", top_k=25))
    assert backend.exact_ids is False
    first = rows[rows["slot"] == "first"]
    assert first["value"].to_numpy() == pytest.approx([EXACT_FIRST] * 3, abs=1e-12)


def test_chat_without_tokenize_never_sends_the_field(tmp_path: Path) -> None:
    with StandIn(planted=PLANTED) as server:  # no /tokenize route
        rows, backend = _judge(server, tmp_path)
    assert _asked(server) == [None] * 6
    assert "/tokenize did not answer" in backend.exact_note
    assert rows["mass"].to_numpy() == pytest.approx([TOP20_MASS] * 6, abs=1e-12)


def test_chat_without_logprobs_sends_no_field(tmp_path: Path) -> None:
    with StandIn(token_ids="honoured", planted=PLANTED) as server, Store(tmp_path / "s") as st:
        backend = HTTPBackend(server.base_url, model="m", endpoint="chat", logprobs=False)
        Runner(backend, st, progress=False).pairwise(pd.DataFrame(fake_pairs(2)), EXPLAIN)
        rows = st.judgments()
        assert server.tokenize_calls == 0
    assert _asked(server) == [None] * 4 and backend.logprobs_line(20) is None
    assert set(rows["p_slot_a"]) == {1.0} and rows["mass"].isna().all()  # text verdicts


def test_an_honoured_answer_without_token_texts_falls_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the verdict position is found from each token's text (content[i].bytes); an
    # answer without them cannot be read exactly, so the run asks for top-k
    completion = StandIn._completion

    def no_bytes(self: StandIn, *args: Any, **kw: Any) -> dict[str, Any]:
        answer = completion(self, *args, **kw)
        for entry in (answer["choices"][0].get("logprobs") or {}).get("content", []):
            entry["bytes"] = None
        return answer

    monkeypatch.setattr(StandIn, "_completion", no_bytes)
    with StandIn(token_ids="honoured", planted=PLANTED) as server:
        rows, backend = _judge(server, tmp_path, PairwiseProtocol(mode="explain", top_k=25))
    assert backend.exact_ids is False and "bytes" in backend.exact_note
    assert _asked(server) == [IDS] + [None] * 6
    # top 25 by name: the text names, read as before (the bytes are not needed there)
    first = rows[rows["slot"] == "first"]
    assert first["value"].to_numpy() == pytest.approx([EXACT_FIRST] * 3, abs=1e-12)


# --- a vLLM started with --return-tokens-as-token-ids that ignores the field ----------


@pytest.mark.parametrize("endpoint", ["completions", "chat"])
def test_tokens_named_by_id_are_asked_again_as_text(endpoint: str, tmp_path: Path) -> None:
    # before, the top-k fallback named every token token_id:N: no A or B could be read
    # (completions: every row unparsed "verdict token outside top-k"; chat: no [[ among
    # the tokens, so the text verdict 1.0 with no mass)
    protocol = PairwiseProtocol(mode="direct" if endpoint == "completions" else "explain", top_k=25)
    with StandIn(token_ids="ignored", planted=PLANTED, server_token_ids=True) as server:
        rows, backend = _judge(server, tmp_path, protocol, endpoint=endpoint)
    assert backend.exact_ids is False and "ignored" in backend.exact_note
    # the exact try, its plain re-ask (named by id), that asked as text, then text only
    assert _asked(server) == [IDS] + [None] * 7
    flags = [b.get("return_tokens_as_token_ids") for b in server.bodies]
    assert flags == [True, None] + [False] * 6
    assert set(rows["status"]) == {"ok"}
    first = rows[rows["slot"] == "first"]
    assert first["value"].to_numpy() == pytest.approx([EXACT_FIRST] * 3, abs=1e-12)
    assert rows["mass"].to_numpy() == pytest.approx([0.334] * 6, abs=1e-12)


def test_without_the_exact_route_an_answer_named_by_id_is_asked_as_text(
    tmp_path: Path,
) -> None:
    # the exact route turned off: the first plain answer is the one named by id
    with StandIn(token_ids="ignored", planted=PLANTED, server_token_ids=True) as server:
        pairs = pd.DataFrame(fake_pairs(2))
        with Store(tmp_path / "s.db") as store:
            backend = HTTPBackend(
                server.base_url, model="m", verdict_token_ids=False, concurrency=1
            )
            Runner(backend, store, progress=False).pairwise(pairs, PairwiseProtocol(top_k=25))
            rows = store.judgments()
    flags = [b.get("return_tokens_as_token_ids") for b in server.bodies]
    assert flags[0] is None and flags[1:] == [False] * 4
    assert rows[rows["slot"] == "first"]["value"].to_numpy() == pytest.approx(
        [EXACT_FIRST] * 2, abs=1e-12
    )


def test_a_server_that_names_ids_whatever_it_is_asked_stops_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a vLLM whose per-request switch is unknown: its answers can never be read
    monkeypatch.setattr(StandIn, "_as_ids", lambda self, req: self.server_token_ids)
    with (
        StandIn(token_ids="ignored", planted=PLANTED, server_token_ids=True) as server,
        pytest.raises(JudgeError, match="restart it without --return-tokens-as-token-ids"),
    ):
        _judge(server, tmp_path, PairwiseProtocol(top_k=25), endpoint="completions")


@pytest.mark.parametrize("mode", ["honoured", "ignored"])
def test_cli_chat_judge_says_which_log_probs_it_read(
    mode: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    printed, table = cli_judge(tmp_path, capsys, mode, "--endpoint", "chat", "--mode", "explain")
    said = printed.splitlines()
    if mode == "ignored":
        assert (
            "verdict log-probs: the server's top 20 only (the server ignored "
            "logprob_token_ids (top-k only)); a row whose A or B is not among them at "
            "the verdict is unparsed (verdict token outside top-k), not read from its text"
        ) in said
        # B is outside the top 20 at every verdict: all four rows are counted unparsed
        # and export no value (before: ok, and 1.0 for A)
        assert any("0 ok, 4 unparsed, 0 failed" in line for line in said)
        assert table["p_a_first"].isna().all() and table["p_a_second"].isna().all()
        return
    assert (
        "verdict log-probs: exact, for the verdict tokens themselves (the server "
        "honoured vLLM's logprob_token_ids)"
    ) in said
    assert table["p_a_first"].to_numpy() == pytest.approx([EXACT_FIRST] * 2, abs=1e-9)
    assert table["p_a_second"].to_numpy() == pytest.approx([1 - EXACT_FIRST] * 2, abs=1e-9)
