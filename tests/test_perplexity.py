"""Perplexity of responses: our code vs a direct transformers computation, batching, cache, HTTP."""

from __future__ import annotations

import contextlib
import json
import math
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from judging.helpers import build_tiny_model  # noqa: E402

from recuse.errors import ConfigError, InputError, JudgeError  # noqa: E402
from recuse.judging.backends.http import HTTPBackend  # noqa: E402
from recuse.judging.backends.local import LocalBackend  # noqa: E402
from recuse.judging.perplexity import (  # noqa: E402
    add_perplexities,
    perplexities,
)
from recuse.judging.store import Store  # noqa: E402

PROMPTS = [
    "Which answer is better?",
    "Explain the quick brown fox.",
    "What is two plus two?",
    "Question from the user: judge fair careful",
    "Décris un renard 🦊 en une phrase.",
]
RESPONSES = [
    "Answer A is better. [[A]]",
    "The quick brown fox jumps over the lazy dog. " * 6,
    "It is four.",
    "x",
    "Le renard brun saute — vite! 🦊",
]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("ppl-tiny"), seed=3)


@pytest.fixture(scope="module")
def plain_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("ppl-plain"), seed=4, template=False)


def direct_log_ppl(model: Any, tok: Any, prompt: str, response: str) -> float:
    """Mean negative log-prob of the response tokens, straight from transformers.

    The log-softmax is taken in the model's dtype (float32), as the model computes it;
    in float64 a 49k-token vocabulary shifts SmolLM2's mean by about 2e-5 nats.
    """
    if getattr(tok, "chat_template", None):
        head = tok.apply_chat_template(
            [{"role": "user", "content": prompt}], add_generation_prompt=True, tokenize=False
        )
        head_ids = tok(head, add_special_tokens=False)["input_ids"]
    else:
        head_ids = tok(prompt + "\n\n")["input_ids"]
    resp = tok(response, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([head_ids + resp])
    with torch.no_grad():
        logits = model(ids).logits[0]
    lp = torch.log_softmax(logits[len(head_ids) - 1 : -1], dim=-1)
    picked = lp.gather(1, torch.tensor(resp)[:, None])[:, 0]
    return float(-picked.double().mean())


def _load(folder: Path, **kw: Any) -> LocalBackend:
    return LocalBackend.load(folder, model_id="tiny", revision="r", **kw)


@pytest.mark.parametrize("which", ["tiny_dir", "plain_dir"])
def test_matches_direct_transformers_tiny(which: str, request: pytest.FixtureRequest) -> None:
    folder = request.getfixturevalue(which)
    backend = _load(folder)
    frame, run = perplexities(backend, PROMPTS, RESPONSES)
    assert run.failed == 0 and (frame["status"] == "ok").all()
    model = transformers.AutoModelForCausalLM.from_pretrained(folder).eval()
    tok = transformers.AutoTokenizer.from_pretrained(folder)
    for i, (p, r) in enumerate(zip(PROMPTS, RESPONSES, strict=True)):
        ref = direct_log_ppl(model, tok, p, r)
        assert math.log(frame["ppl"][i]) == pytest.approx(ref, abs=1e-5)
        assert frame["n_tokens"][i] == len(tok(r, add_special_tokens=False)["input_ids"])
    # the prompt matters: the same response under another prompt scores differently
    other, _ = perplexities(backend, [PROMPTS[2]], [RESPONSES[0]])
    assert abs(other["ppl"][0] - frame["ppl"][0]) > 1e-3


def test_batched_equals_one_at_a_time_tiny(tiny_dir: Path) -> None:
    batched, _ = perplexities(_load(tiny_dir, batch_size=16), PROMPTS * 3, RESPONSES[::-1] * 3)
    single, _ = perplexities(_load(tiny_dir, batch_size=1), PROMPTS * 3, RESPONSES[::-1] * 3)
    np.testing.assert_allclose(batched["sum_logprob"], single["sum_logprob"], rtol=0, atol=1e-5)
    np.testing.assert_allclose(np.log(batched["ppl"]), np.log(single["ppl"]), rtol=0, atol=1e-5)


def test_failures_are_rows_with_reasons(tiny_dir: Path) -> None:
    backend = _load(tiny_dir)
    frame, run = perplexities(backend, ["Q", "Q", "Q"], ["", "fine answer", "word " * 2000])
    assert frame["status"].tolist() == ["failed", "ok", "failed"]
    assert "no tokens" in frame["reason"][0]
    # the prompt and the response together pass the context: said so, with both counts
    # (it said 'prompt has N tokens' of the two together)
    assert re.fullmatch(
        r"prompt and text scored have (\d+) tokens \((\d+) \+ (\d+)\); "
        rf"the model reads at most {backend.max_length}",
        frame["reason"][2],
    )
    assert np.isnan(frame["ppl"][0]) and np.isnan(frame["ppl"][2])
    assert run.failed == 2 and run.computed == 1
    with pytest.raises(ConfigError, match="as many"):
        perplexities(backend, ["Q"], [])
    with pytest.raises(InputError, match="not text"):
        perplexities(backend, ["Q"], [None])  # type: ignore[list-item]


def test_store_caches_and_retries_failures(tiny_dir: Path, tmp_path: Path) -> None:
    backend = _load(tiny_dir)
    with Store(tmp_path / "run.sqlite") as store:
        first, run1 = perplexities(backend, [*PROMPTS, "Q"], [*RESPONSES, ""], store=store)
        again, run2 = perplexities(backend, [*PROMPTS, "Q"], [*RESPONSES, ""], store=store)
        # same texts as a list with a duplicate: computed once
        dup, run3 = perplexities(backend, [PROMPTS[0]] * 2, [RESPONSES[0]] * 2, store=store)
    assert run1.cached == 0 and run1.computed == 5 and run1.failed == 1
    assert run2.cached == 5 and run2.computed == 0 and run2.failed == 1  # failed is retried
    pd.testing.assert_frame_equal(first, again)
    assert run3.total == 1 and run3.cached == 1
    assert dup["ppl"][0] == dup["ppl"][1] == first["ppl"][0]
    # another revision of the model is another key
    other = LocalBackend.load(tiny_dir, model_id="tiny", revision="r2")
    with Store(tmp_path / "run.sqlite") as store:
        _f, run4 = perplexities(other, PROMPTS, RESPONSES, store=store)
        # so is another precision of the same weights (bf16 moves log-probs)
        bf16 = LocalBackend.load(tiny_dir, model_id="tiny", revision="r", dtype="bfloat16")
        low, run5 = perplexities(bf16, PROMPTS, RESPONSES, store=store)
    assert run4.cached == 0
    assert bf16.revision == "r+bfloat16" and run5.cached == 0 and run5.computed == len(PROMPTS)
    log_low, log_full = np.log(low["ppl"]), np.log(first["ppl"][: len(PROMPTS)])
    assert np.allclose(log_low, log_full, atol=0.1) and not np.allclose(log_low, log_full)


def test_add_perplexities_fills_the_judge_rows(tiny_dir: Path) -> None:
    backend = _load(tiny_dir)
    pairs = pd.DataFrame(
        {
            "item_id": ["1", "2", "1"],
            "prompt_id": ["p1", "p2", "p1"],
            "judge": ["tiny", "tiny", "other"],
            "prompt": PROMPTS[:2] + PROMPTS[:1],
            "response_a": RESPONSES[:2] + RESPONSES[:1],
            "response_b": [RESPONSES[2], None, RESPONSES[2]],
            "ppl_a": [np.nan, np.nan, 7.0],
        }
    )
    out = add_perplexities(pairs, backend)
    ref, _ = perplexities(backend, PROMPTS[:2], RESPONSES[:2])
    np.testing.assert_allclose(out["ppl_a"][:2], ref["ppl"])
    assert out["ppl_a"][2] == 7.0 and np.isnan(out["ppl_b"][2])
    assert np.isnan(out["ppl_b"][1]) and out.attrs["perplexity_failures"] == {"text missing": 1}
    with pytest.raises(ConfigError, match="no rows of judge 'nobody'"):
        add_perplexities(pairs, backend, judge="nobody")
    with pytest.raises(InputError, match="response_b"):
        add_perplexities(pairs.drop(columns="response_b"), backend)


# --- OpenAI-compatible route -------------------------------------------------------------


class _Server:
    """An in-process OpenAI-compatible completions server backed by the tiny model."""

    def __init__(self, folder: Path, *, shift: float = 0.0, vllm: bool = False) -> None:
        self.model = transformers.AutoModelForCausalLM.from_pretrained(folder).eval()
        self.tok = transformers.AutoTokenizer.from_pretrained(folder)
        self.shift = shift
        self.vllm = vllm
        self.requests: list[dict[str, Any]] = []

    def _logprobs(self, ids: list[int]) -> torch.Tensor:
        with torch.no_grad():
            return torch.log_softmax(self.model(torch.tensor([ids])).logits[0].double(), -1)

    def respond(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.requests.append(body)
        if not path.endswith("/completions"):
            return 404, {"error": "not found"}
        enc = self.tok(body["prompt"], add_special_tokens=False, return_offsets_mapping=True)
        ids, offsets = enc["input_ids"], enc["offset_mapping"]
        lp = self._logprobs(ids)
        nxt = int(lp[-1].argmax())
        gen_text = self.tok.decode([nxt])
        gen_lp = float(lp[-1, nxt])
        choice: dict[str, Any] = {"index": 0, "text": gen_text, "finish_reason": "length"}
        if self.vllm and "prompt_logprobs" in body:
            entries: list[Any] = [None]
            for t in range(1, len(ids)):
                v = float(lp[t - 1, ids[t]]) + self.shift
                entries.append({str(ids[t]): {"logprob": v, "rank": 1, "decoded_token": "?"}})
            choice["prompt_logprobs"] = entries
        elif body.get("echo"):
            if self.vllm:
                return 400, {"error": "echo unsupported"}
            text = body["prompt"]
            tokens = [text[a:b] for a, b in offsets] + [gen_text]
            values = [None] + [float(lp[t - 1, ids[t]]) + self.shift for t in range(1, len(ids))]
            choice["logprobs"] = {
                "tokens": tokens,
                "token_logprobs": [*values, gen_lp],
                "text_offset": [a for a, _ in offsets] + [len(text)],
                "top_logprobs": None,
            }
        elif body.get("logprobs"):
            choice["logprobs"] = {
                "tokens": [gen_text],
                "token_logprobs": [gen_lp],
                "text_offset": [len(body["prompt"])],
                "top_logprobs": [{gen_text: gen_lp}],
            }
        return 200, {"choices": [choice]}

    @contextlib.contextmanager
    def running(self) -> Iterator[str]:
        """Serve on a loopback port in a thread; yields the base URL."""
        server = self
        lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with lock:
                    status, answer = server.respond(self.path, body)
                blob = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(blob)))
                self.end_headers()
                self.wfile.write(blob)

            def log_message(self, *args: Any) -> None:
                pass

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        finally:
            httpd.shutdown()
            httpd.server_close()


def _http(url: str, **kw: Any) -> HTTPBackend:
    return HTTPBackend(url, model="tiny", model_id="tiny", concurrency=2, **kw)


@pytest.mark.parametrize("mode", ["echo", "vllm"])
def test_http_prompt_logprobs_equal_local(tiny_dir: Path, mode: str) -> None:
    server = _Server(tiny_dir, vllm=mode == "vllm")
    with server.running() as url:
        remote = _http(url, prompt_logprobs=mode)
        ours, run = perplexities(remote, PROMPTS, RESPONSES)
    local, _ = perplexities(_load(tiny_dir), PROMPTS, RESPONSES)
    assert run.failed == 0
    np.testing.assert_allclose(np.log(ours["ppl"]), np.log(local["ppl"]), rtol=0, atol=1e-5)
    assert (ours["n_tokens"] == local["n_tokens"]).all()


def test_http_server_with_wrong_prompt_logprobs_is_refused(tiny_dir: Path) -> None:
    server = _Server(tiny_dir, shift=-10.0)
    with server.running() as url, pytest.raises(JudgeError, match="prompt log-probs are wrong"):
        perplexities(_http(url, prompt_logprobs="echo"), PROMPTS, RESPONSES)


def test_http_echo_unsupported_fails_rows(tiny_dir: Path) -> None:
    server = _Server(tiny_dir, vllm=True)  # answers 400 to echo
    with server.running() as url:
        remote = _http(url, prompt_logprobs="echo", verify_prompt_logprobs=False)
        frame, run = perplexities(remote, PROMPTS[:2], RESPONSES[:2])
    assert run.failed == 2 and frame["reason"].str.contains("HTTP 400").all()


def test_chat_only_and_unwrapped_servers_are_refused(tiny_dir: Path) -> None:
    server = _Server(tiny_dir)
    with server.running() as url:
        with pytest.raises(ConfigError, match="chat endpoints"):
            _http(url, endpoint="chat", prompt_logprobs="echo")
        with pytest.raises(ConfigError, match="prompt_logprobs"):
            perplexities(_http(url), PROMPTS, RESPONSES)
        with pytest.raises(ConfigError, match="prompt_logprobs"):
            _http(url, prompt_logprobs="guess")
    assert not server.requests  # nothing was sent


# --- SmolLM2 ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def smollm2() -> Any:
    from recuse.errors import MissingDependencyError
    from recuse.judging.models import default_judge

    try:
        return default_judge()
    except MissingDependencyError as exc:  # pragma: no cover - CI installs it
        pytest.skip(str(exc))


@pytest.mark.slow
def test_smollm2_matches_direct_transformers_and_batching(smollm2: Any) -> None:
    prompts = PROMPTS[:4]
    responses = [
        "The better answer is A, because it is correct and concise.",
        "A quick brown fox jumped over a lazy dog, and then it ran into the woods.",
        "2 + 2 = 4.",
        "I would rate both answers as equally helpful.",
    ]
    batched = LocalBackend.load(smollm2.path, model_id=smollm2.model_id, batch_size=8)
    single = LocalBackend.load(smollm2.path, model_id=smollm2.model_id, batch_size=1)
    ours, _ = perplexities(batched, prompts, responses)
    one, _ = perplexities(single, prompts, responses)
    np.testing.assert_allclose(np.log(ours["ppl"]), np.log(one["ppl"]), rtol=0, atol=1e-5)
    model = transformers.AutoModelForCausalLM.from_pretrained(smollm2.path).eval()
    tok = transformers.AutoTokenizer.from_pretrained(smollm2.path)
    for i, (p, r) in enumerate(zip(prompts, responses, strict=True)):
        assert math.log(ours["ppl"][i]) == pytest.approx(direct_log_ppl(model, tok, p, r), abs=1e-5)
    # an instruct model finds a fluent answer far less perplexing than shuffled words
    words = responses[1].split()
    shuffled = " ".join(words[::-1])
    fl, _ = perplexities(batched, [prompts[1]] * 2, [responses[1], shuffled])
    assert fl["ppl"][0] < fl["ppl"][1] / 2


# --- a judge's perplexities in its store, from the command line ---------------------------


def _judge_pairs(n: int) -> pd.DataFrame:
    from judging.helpers import fake_pairs

    pairs = pd.DataFrame(fake_pairs(n))
    pairs["response_b"] = [f"{r} — {RESPONSES[k % len(RESPONSES)]}" for k, r in enumerate(
        pairs["response_b"])]  # fmt: skip
    return pairs


def _ppl_rows(store: Path) -> list[tuple[str, float, float]]:
    import sqlite3

    with contextlib.closing(sqlite3.connect(store)) as conn:
        return sorted(conn.execute("SELECT key, sum_logprob, created_at FROM perplexities"))


def test_cli_perplexity_into_the_store_resumes_and_exports(
    tiny_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from recuse.cli import main

    pairs = _judge_pairs(6)
    src = tmp_path / "pairs.csv"
    pairs.to_csv(src, index=False)
    store = tmp_path / "judged.db"
    base = ["judge", "--model", str(tiny_dir), "--data", str(src), "--out", str(store)]
    base += ["--judge-id", "tiny", "--no-progress"]
    table = tmp_path / "out.csv"

    # judged without --perplexity: the export has no perplexity columns
    assert main(base) == 0
    assert main(["judge", "export", str(store), "--out", str(table)]) == 0
    assert "ppl_a" not in pd.read_csv(table).columns
    capsys.readouterr()

    # --perplexity on the same store: judgments resumed, 12 responses scored
    assert main([*base, "--perplexity"]) == 0
    out = capsys.readouterr().out
    assert "12 judgments: 12 already stored" in out
    assert "12 perplexities: 0 already stored, 12 computed, 0 failed" in out
    stored = _ppl_rows(store)
    assert len(stored) == 12

    # a rerun recomputes nothing: same rows, same timestamps
    assert main([*base, "--perplexity"]) == 0
    assert "12 perplexities: 12 already stored, 0 computed, 0 failed" in capsys.readouterr().out
    assert _ppl_rows(store) == stored

    # another judge in the same store, without perplexities
    other = [a if a != "tiny" else "other" for a in base]
    assert main(other) == 0
    assert main(["judge", "export", str(store), "--out", str(table)]) == 0
    assert "6 rows with perplexities" in capsys.readouterr().out
    exported = pd.read_csv(table)
    mine = exported[exported["judge"] == "tiny"].sort_values("item_id")
    assert exported.loc[exported["judge"] == "other", ["ppl_a", "ppl_b"]].isna().all().all()

    # the numbers are judging.perplexity's own on the same texts (in the order the store's
    # items are scored, so the batches and hence the floats are the same)
    backend = LocalBackend.load(tiny_dir, model_id="tiny", batch_size=16)
    _assert_direct(mine, pairs, backend)


def _assert_direct(exported: pd.DataFrame, pairs: pd.DataFrame, backend: Any) -> None:
    ref = pairs.set_index("item_id").sort_index()
    prompts = [p for p in ref["prompt"] for _ in range(2)]
    texts = [t for a, b in zip(ref["response_a"], ref["response_b"], strict=True) for t in (a, b)]
    direct, _ = perplexities(backend, prompts, texts)
    mine = exported.set_index("item_id").loc[ref.index]
    assert mine["ppl_a"].tolist() == direct["ppl"][0::2].tolist()
    assert mine["ppl_b"].tolist() == direct["ppl"][1::2].tolist()


def test_cli_perplexity_feeds_the_audit(
    tiny_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from recuse.cli import main

    src = tmp_path / "pairs.csv"
    _judge_pairs(24).to_csv(src, index=False)
    store = tmp_path / "judged.db"
    folder = tmp_path / "my-model"  # the judge id is the folder's name, not in the roster
    folder.symlink_to(tiny_dir, target_is_directory=True)
    args = ["judge", "--model", str(folder), "--data", str(src), "--out", str(store)]
    assert main([*args, "--no-progress", "--perplexity"]) == 0
    table = tmp_path / "out.csv"
    assert main(["judge", "export", str(store), "--out", str(table)]) == 0
    report = tmp_path / "report"
    capsys.readouterr()
    audit = ["audit", str(table), "--out", str(report), "--n-boot", "200"]  # no flag needed
    assert main(audit) == 0
    err = capsys.readouterr().err
    assert err.count("recuse: note:") == 1 and "'my-model'" in err
    d = json.loads((report / "report.json").read_text("utf-8"))
    assert d["judges"] == ["my-model"] or "my-model" in str(d["judges"])
    reasons = [s["reason"] for s in d["skipped"] if s["analysis"].startswith("Familiarity")]
    assert not [r for r in reasons if "no perplexities" in r]
    assert "familiarity" in [s["id"] for s in d["sections"]]
    curve = pd.DataFrame(d["tables"]["perplexity-curve-out-csv"]["rows"])
    assert set(curve["rater"]) == {"judge", "human"} and curve["n"].sum() == 2 * 24


def test_cli_perplexity_over_http_echo_equals_local(
    tiny_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from recuse.cli import main

    pairs = _judge_pairs(3)
    src = tmp_path / "pairs.csv"
    pairs.to_csv(src, index=False)
    store = tmp_path / "s.db"
    server = _Server(tiny_dir)
    with server.running() as url:
        args = ["judge", "--model", "tiny", "--base-url", url, "--data", str(src)]
        args += ["--out", str(store), "--no-progress", "--perplexity"]
        assert main(args) == 0
    assert "6 perplexities: 0 already stored, 6 computed, 0 failed" in capsys.readouterr().out
    with Store(store) as s:
        exported = s.export_pairs().sort_values("item_id")
    local = _load(tiny_dir)
    for side in ("a", "b"):
        ref, _ = perplexities(
            local, exported["prompt"].tolist(), exported[f"response_{side}"].tolist()
        )
        np.testing.assert_allclose(
            np.log(exported[f"ppl_{side}"]), np.log(ref["ppl"]), rtol=0, atol=1e-5
        )


def test_cli_perplexity_over_a_chat_endpoint_is_refused_before_judging(
    tiny_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from recuse.cli import main

    src = tmp_path / "pairs.csv"
    _judge_pairs(2).to_csv(src, index=False)
    store = tmp_path / "s.db"
    server = _Server(tiny_dir)
    capsys.readouterr()  # the model's loading messages
    with server.running() as url:
        args = ["judge", "--model", "tiny", "--base-url", url, "--endpoint", "chat"]
        args += ["--data", str(src), "--out", str(store), "--perplexity", "--no-progress"]
        assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert "chat endpoints" in err and "completions" in err and len(err.splitlines()) == 1
    assert not server.requests and not store.exists()


def test_judge_perplexities_and_attach_from_python(tiny_dir: Path, tmp_path: Path) -> None:
    from recuse.judging import Runner
    from recuse.judging.perplexity import attach_stored_perplexities, judge_perplexities

    backend = _load(tiny_dir)
    pairs = _judge_pairs(3)
    with Store(tmp_path / "s.db") as store:
        Runner(backend, store, progress=False).pairwise(pairs)
        with pytest.raises(ConfigError, match="no pairwise judgments of judge 'nobody'"):
            judge_perplexities(store, backend, judge="nobody")
        with pytest.raises(ConfigError, match="prompt_logprobs"):
            judge_perplexities(store, _http("http://127.0.0.1:9/v1"))
        plain = store.export_pairs()
        assert "ppl_a" not in plain.columns  # nothing recorded yet
        run = judge_perplexities(store, backend)
        assert (run.total, run.computed, run.failed) == (6, 6, 0)
        exported = store.export_pairs()
        # rows of a judge the store has no perplexities for come back unchanged
        foreign = plain.assign(judge="someone else")
        assert attach_stored_perplexities(store, foreign) is foreign
    _assert_direct(exported, pairs, backend)
    # add_perplexities (side by side, other batches) agrees to float rounding
    direct = add_perplexities(plain, backend)
    np.testing.assert_allclose(exported["ppl_a"], direct["ppl_a"], rtol=1e-5)
    np.testing.assert_allclose(exported["ppl_b"], direct["ppl_b"], rtol=1e-5)
