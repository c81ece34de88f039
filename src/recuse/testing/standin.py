"""A loopback stand-in for an OpenAI-compatible server, with fault injection.

For tests and benchmarks of the HTTP path without a model: it answers
``/v1/completions`` and ``/v1/chat/completions`` after ``latency`` seconds with
log-probs derived from a hash of the request (so answers are reproducible), and,
drawn from a seeded generator per request, injects faults: 429 with Retry-After,
500 (whose body echoes the request headers, to test that keys are scrubbed),
hangs longer than any client timeout, malformed JSON, answers without log-probs,
and the answers of a broken server: log-probs that are ``NaN``, ``+Infinity`` or
``1e308``, a choice that is not an object (``{"choices": ["A"]}``), 401, and
``leak`` (a 500 whose body repeats the Authorization header in other encodings:
JSON-escaped slashes, URL-encoded, base64, wrapped over lines) and ``leaktext``
(a 200 whose completion text quotes it). ``noverdict`` is a well-formed answer of a
judge that gives no verdict: a text without a label and log-probs on filler tokens
only (an unparsed judgment, not a failure). The server is a small asyncio HTTP/1.1
loop run in a daemon thread.

vLLM's exact verdict log-probs: with ``token_ids`` set, the stand-in serves vLLM's
``/tokenize`` (over :data:`STANDIN_VOCAB`; other text one id per character) and
treats the ``logprob_token_ids`` request field as ``"honoured"`` (the answer holds
the log-probs of exactly those ids), ``"ignored"`` (top-k as usual) or
``"refused"`` (HTTP 400 naming the field). ``planted`` replaces the hashed
distribution with given log-probs, cut to the top-k the request asks for.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import math
import random
import threading
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

FAULTS = (
    "429",
    "500",
    "timeout",
    "malformed",
    "nologprobs",
    "nan",
    "inf",
    "huge",
    "badchoice",
    "401",
    "leak",
    "leaktext",
    "noverdict",
)
TOKEN_ID_MODES = ("honoured", "ignored", "refused")
#: the stand-in tokenizer's single-token texts and their ids
STANDIN_VOCAB = {t: i for i, t in enumerate(["A", "B", "C", " A", " B", " C", "The", "I"], 1)}
#: the log-prob the stand-in gives a token id outside its distribution (p ~ 0)
ABSENT_LOGPROB = -1e4
#: the log-prob a broken server sends for every token, per fault
_BAD_LOGPROB = {"nan": math.nan, "inf": math.inf, "huge": 1e308}


def standin_distribution(text: str) -> dict[str, float]:
    """The stand-in's next-token log-probs for a prompt text (A, B, C and filler)."""
    h = hashlib.sha256(text.encode("utf-8")).digest()
    raw = {"A": h[0] + 1.0, "B": h[1] + 1.0, "C": h[2] + 1.0, "The": 300.0}
    total = sum(raw.values())
    return {k: math.log(v / total) for k, v in raw.items()}


@dataclass
class StandIn:
    """Configuration and counters of one stand-in server."""

    latency: float = 0.0
    faults: Mapping[str, float] = field(default_factory=dict)  # fault -> probability
    seed: int = 0
    retry_after: float = 0.05
    hang: float = 30.0
    host: str = "127.0.0.1"
    port: int = 0
    requests: int = 0
    served: dict[str, int] = field(default_factory=dict)
    auth_headers: list[str] = field(default_factory=list)
    #: every request body answered with a completion, as parsed JSON (what the judge read)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    #: what the server does with vLLM's logprob_token_ids; None: no /tokenize route
    token_ids: str | None = None
    #: next-token log-probs for every prompt instead of the hashed ones
    planted: Mapping[str, float] | None = None
    tokenize_calls: int = 0

    def __post_init__(self) -> None:
        if self.token_ids is not None and self.token_ids not in TOKEN_ID_MODES:
            raise ValueError(f"token_ids must be one of {TOKEN_ID_MODES}; got {self.token_ids!r}")
        unknown = set(self.faults) - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown faults {sorted(unknown)}; known: {FAULTS}")
        self._rng = random.Random(self.seed)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    # --- lifecycle ---------------------------------------------------------------

    def start(self) -> StandIn:
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("stand-in server did not start")
        return self

    def stop(self) -> None:
        if self._loop is not None and self._loop.is_running():
            asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        me = asyncio.current_task()
        others = [t for t in asyncio.all_tasks() if t is not me]
        for t in others:
            t.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    def __enter__(self) -> StandIn:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._server = loop.run_until_complete(
            asyncio.start_server(self._handle, self.host, self.port, backlog=1024)
        )
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.close()

    # --- HTTP ----------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                path = lines[0].split(" ")[1] if len(lines[0].split(" ")) > 1 else "/"
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        k, v = line.split(":", 1)
                        headers[k.strip().lower()] = v.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                status, extra, payload = await self._respond(path, headers, body)
                reason = {
                    200: "OK",
                    401: "Unauthorized",
                    429: "Too Many Requests",
                    500: "Internal Server Error",
                }
                out = [f"HTTP/1.1 {status} {reason.get(status, 'Error')}"]
                out += [f"{k}: {v}" for k, v in extra.items()]
                out += [f"Content-Length: {len(payload)}", "Content-Type: application/json"]
                writer.write(("\r\n".join(out) + "\r\n\r\n").encode() + payload)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def _respond(
        self, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        if path == "/tokenize":  # outside the fault draw and the request count
            return self._tokenize(raw)
        self.requests += 1
        if "authorization" in headers:
            self.auth_headers.append(headers["authorization"])
        fault = None
        draw = self._rng.random()
        for name in FAULTS:
            p = self.faults.get(name, 0.0)
            if draw < p:
                fault = name
                break
            draw -= p
        self.served[fault or "ok"] = self.served.get(fault or "ok", 0) + 1
        if self.latency:
            await asyncio.sleep(self.latency)
        if fault == "429":
            return 429, {"Retry-After": f"{self.retry_after:g}"}, b'{"error": "slow down"}'
        if fault == "500":
            echo = {"error": "boom", "authorization": headers.get("authorization"), **headers}
            return 500, {}, json.dumps(echo).encode()
        if fault == "timeout":
            await asyncio.sleep(self.hang)
        if fault == "malformed":
            return 200, {}, b'{"choices": [{"text": "A", "logprobs": {'
        if fault == "badchoice":
            return 200, {}, b'{"choices": ["A"]}'
        if fault == "401":
            return 401, {}, b'{"error": "bad key"}'
        auth = headers.get("authorization", "")
        if fault == "leak":
            return 500, {}, _leak(auth).encode()
        try:
            req = json.loads(raw)
        except json.JSONDecodeError:
            return 400, {}, b'{"error": "bad json"}'
        self.bodies.append(req)
        if self.token_ids == "refused" and "logprob_token_ids" in req:
            msg = {"error": "extra fields not permitted: logprob_token_ids", "code": 400}
            return 400, {}, json.dumps(msg).encode()
        answer = self._completion(
            path,
            req,
            fault == "nologprobs",
            _BAD_LOGPROB.get(fault or ""),
            no_verdict=fault == "noverdict",
        )
        if fault == "leaktext":
            _set_text(answer["choices"][0], f"Your key is {auth.removeprefix('Bearer ')} [[A]]")
        return 200, {}, json.dumps(answer).encode()  # NaN / Infinity as Python writes them

    def _completion(
        self,
        path: str,
        req: dict[str, Any],
        drop_logprobs: bool,
        bad: float | None = None,
        *,
        no_verdict: bool = False,
    ) -> dict[str, Any]:
        chat = path.endswith("/chat/completions")
        text = json.dumps(req.get("messages")) if chat else str(req.get("prompt", ""))
        dist = dict(self.planted) if self.planted is not None else standin_distribution(text)
        asked = req.get("top_logprobs") if chat else req.get("logprobs")
        if self.planted is not None and isinstance(asked, int) and asked > 0:
            dist = dict(sorted(dist.items(), key=lambda kv: -kv[1])[:asked])
        ids = req.get("logprob_token_ids")
        if self.token_ids == "honoured" and isinstance(ids, list):
            whole = dict(self.planted) if self.planted is not None else standin_distribution(text)
            names = {i: t for t, i in STANDIN_VOCAB.items()}
            dist = {names[i]: whole.get(names[i], ABSENT_LOGPROB) for i in ids if i in names}
        if bad is not None:
            dist = dict.fromkeys(dist, bad)
        verdict = max(("A", "B", "C"), key=lambda k: dist.get(k, -math.inf))
        max_tokens = int(req.get("max_tokens") or 16)
        tokens = [verdict] if max_tokens == 1 else ["Fine", ".", " [[", verdict, "]]"]
        if no_verdict:  # no label in the text, no weight on a label token
            dist = {"The": math.log(0.75), "I": math.log(0.25)}
            tokens = ["The"] if max_tokens == 1 else ["The", " two", " tie", "."]
        top = [dist for _ in tokens]
        choice: dict[str, Any] = {"index": 0, "finish_reason": "stop"}
        if chat:
            choice["message"] = {"role": "assistant", "content": "".join(tokens)}
            if req.get("logprobs") and not drop_logprobs:
                choice["logprobs"] = {
                    "content": [
                        {
                            "token": t,
                            "logprob": d.get(t, -5.0),
                            "top_logprobs": [{"token": k, "logprob": v} for k, v in d.items()],
                        }
                        for t, d in zip(tokens, top, strict=True)
                    ]
                }
        else:
            choice["text"] = "".join(tokens)
            if req.get("logprobs") and not drop_logprobs:
                choice["logprobs"] = {"tokens": tokens, "top_logprobs": top}
        usage = {"prompt_tokens": len(text.split()), "completion_tokens": len(tokens)}
        return {"id": "standin", "object": "text_completion", "choices": [choice], "usage": usage}

    def _tokenize(self, raw: bytes) -> tuple[int, dict[str, str], bytes]:
        if self.token_ids is None:
            return 404, {}, b'{"detail": "Not Found"}'
        self.tokenize_calls += 1
        text = str(json.loads(raw).get("prompt", ""))
        ids = [STANDIN_VOCAB[text]] if text in STANDIN_VOCAB else [1000 + ord(c) for c in text]
        return 200, {}, json.dumps({"tokens": ids, "count": len(ids)}).encode()


def _leak(auth: str) -> str:
    """A 500 body repeating ``auth`` (the Authorization header) in other encodings,
    with slashes JSON-escaped (``\\/``) as some servers write them."""
    key = auth.removeprefix("Bearer ")
    body = {
        "error": "boom",
        "header": auth,
        "url": "https://x.test/?key=" + urllib.parse.quote(key, safe=""),
        "basic": base64.b64encode(f"Authorization: {auth}".encode()).decode(),
        "wrapped": "\n".join(key[i : i + 8] for i in range(0, len(key), 8)),
    }
    return json.dumps(body).replace("/", "\\/")


def _set_text(choice: dict[str, Any], text: str) -> None:
    if "message" in choice:
        choice["message"]["content"] = text
    else:
        choice["text"] = text
