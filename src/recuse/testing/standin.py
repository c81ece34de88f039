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
only (an unparsed judgment, not a failure). ``toolong`` is vLLM's HTTP 400 for a
prompt longer than the model's context (a permanent failure, the same on every
retry). ``deep`` is a 200 whose JSON nests lists 100,000 deep (valid, but deeper
than Python's parser goes); ``surrogate`` a right answer whose text and a top-k token
name hold a lone UTF-16 surrogate, escaped as JSON allows (``"\\ud800"``), which no
UTF-8 text can hold. The server is a small asyncio HTTP/1.1
loop run in a daemon thread.

vLLM's exact verdict log-probs: with ``token_ids`` set, the stand-in serves vLLM's
``/tokenize`` (the longest :data:`STANDIN_VOCAB` text first, else one id per
character; with ``dummy_prefix`` a space is put before the text first, as a
SentencePiece tokenizer of Llama 2 or Mistral does, so ``A`` alone is `` A``) and
treats the ``logprob_token_ids`` request field as vLLM with PR #43463 does
(``"honoured"``: validated, then the answer's ``top_logprobs`` hold the sampled
token and every requested id), as vLLM before it does (``"ignored"``: top-k as
usual, though its per-request ``return_tokens_as_token_ids`` is honoured), as a
server that knows neither field does (``"unknown"``), or as vLLM answers ids its
vocabulary does not hold (``"refused"``: HTTP 400 naming the field).
``server_token_ids`` is vLLM's ``--return-tokens-as-token-ids`` (tokens named
``token_id:N`` unless a request says otherwise). Chat answers have vLLM's shape in
every mode: ``content[i] = {token, logprob, bytes, top_logprobs}``, the entry's
``bytes`` those of the token's text even when it is named by id. ``planted`` replaces the hashed
distribution with given log-probs, cut to the top-k the request asks for.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import math
import random
import ssl
import threading
import urllib.parse
from collections.abc import Callable, Mapping
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
    "toolong",
    "deep",
    "surrogate",
)
TOKEN_ID_MODES = ("honoured", "ignored", "unknown", "refused")
#: the modes that are vLLM (they know return_tokens_as_token_ids)
_VLLM_MODES = ("honoured", "ignored", "refused")
#: the stand-in tokenizer's single-token texts and their ids
STANDIN_VOCAB = {t: i for i, t in enumerate(["A", "B", "C", " A", " B", " C", "The", "I"], 1)}
#: the stand-in model's vocabulary size: ids 1000 + code point for other characters,
#: from 2,000,000 for other texts the stand-in generates or plants
STANDIN_VOCAB_SIZE = 3_000_000
#: the log-prob the stand-in gives a token id outside its distribution (p ~ 0)
ABSENT_LOGPROB = -1e4
#: vLLM's most ids in one logprob_token_ids, and its floor on a reported log-prob
_MAX_IDS = 128
_FLOOR = -9999.0
#: the log-prob a broken server sends for every token, per fault
_BAD_LOGPROB = {"nan": math.nan, "inf": math.inf, "huge": 1e308}


def standin_token_id(text: str) -> int:
    """The stand-in tokenizer's id for a token text."""
    if text in STANDIN_VOCAB:
        return STANDIN_VOCAB[text]
    if len(text) == 1:
        return 1000 + ord(text)
    return 2_000_000 + int.from_bytes(hashlib.sha256(text.encode()).digest()[:4]) % 1_000_000


def standin_tokens(text: str) -> list[int]:
    """The stand-in tokenizer's ids of ``text``: at each place the longest
    :data:`STANDIN_VOCAB` text that starts there, else one character."""
    longest = sorted(STANDIN_VOCAB, key=len, reverse=True)
    ids: list[int] = []
    i = 0
    while i < len(text):
        piece = next((t for t in longest if text.startswith(t, i)), text[i])
        ids.append(STANDIN_VOCAB[piece] if piece in STANDIN_VOCAB else 1000 + ord(piece))
        i += len(piece)
    return ids


def _standin_text(token_id: int) -> str:
    """The text of an id, where the stand-in knows one (else a placeholder)."""
    names = {i: t for t, i in STANDIN_VOCAB.items()}
    if token_id in names:
        return names[token_id]
    if 1000 <= token_id < 1000 + 0x110000:
        return chr(token_id - 1000)
    return f"<unk{token_id}>"


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
    #: vLLM's --return-tokens-as-token-ids: tokens named token_id:N by default
    server_token_ids: bool = False
    #: next-token log-probs for every prompt instead of the hashed ones
    planted: Mapping[str, float] | None = None
    tokenize_calls: int = 0
    #: /tokenize puts a space before the text, as SentencePiece's dummy prefix does
    dummy_prefix: bool = False
    #: served over TLS with this context (base_url https://) when given
    tls: ssl.SSLContext | None = None
    #: every request's target (as its request line gives it: a path, or a whole URL
    #: when sent to a proxy) and headers (names in lower case), in arrival order
    seen: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    #: the served model each completion names (its JSON "model" field, as vLLM and
    #: OpenAI give it): a name, or the name for the completion's number (1 the first,
    #: counted with :attr:`requests`); None, or a function's None: no "model" field
    served_as: str | Callable[[int], str | None] | None = None

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
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://{self.host}:{self.port}/v1"

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
            asyncio.start_server(self._handle, self.host, self.port, backlog=1024, ssl=self.tls)
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
                self.seen.append((path, headers))
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
        except (
            asyncio.IncompleteReadError,
            ConnectionError,
            asyncio.CancelledError,
            ssl.SSLError,
        ):
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
        if fault == "toolong":  # vLLM's shape: an error object with the message
            message = (
                "This model's maximum context length is 2048 tokens. However, you requested "
                "4097 tokens (4096 in the messages, 1 in the completion)."
            )
            body = {"object": "error", "message": message, "type": "BadRequestError", "code": 400}
            return 400, {}, json.dumps(body).encode()
        if fault == "401":
            return 401, {}, b'{"error": "bad key"}'
        if fault == "deep":
            return 200, {}, b'{"choices": [' + b"[" * 100_000 + b"]" * 100_000 + b"]}"
        auth = headers.get("authorization", "")
        if fault == "leak":
            return 500, {}, _leak(auth).encode()
        try:
            req = json.loads(raw)
        except json.JSONDecodeError:
            return 400, {}, b'{"error": "bad json"}'
        self.bodies.append(req)
        refusal = self._check_token_ids(path, req)
        if refusal is not None:
            return 400, {}, json.dumps(refusal).encode()
        answer = self._completion(
            path,
            req,
            fault == "nologprobs",
            _BAD_LOGPROB.get(fault or ""),
            no_verdict=fault == "noverdict",
        )
        if fault == "leaktext":
            _set_text(answer["choices"][0], f"Your key is {auth.removeprefix('Bearer ')} [[A]]")
        if fault == "surrogate":
            _lone_surrogates(answer["choices"][0])
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
        _set_text(choice, "".join(tokens), chat=chat)
        if not req.get("logprobs") or drop_logprobs:
            pass
        elif self.token_ids == "honoured" and req.get("logprob_token_ids"):
            whole = dict(self.planted) if self.planted is not None else standin_distribution(text)
            if bad is not None:
                whole = dict.fromkeys(whole, bad)
            ids = [int(i) for i in req["logprob_token_ids"]]
            choice["logprobs"] = _exact_logprobs(chat, tokens, whole, ids, self._as_ids(req))
        else:
            name = _namer(self._as_ids(req))
            if chat:  # vLLM's (and OpenAI's) shape: bytes of the text, or of the name
                choice["logprobs"] = {
                    "content": [
                        {
                            "token": name(t),
                            "logprob": d.get(t, -5.0),
                            "bytes": list(t.encode()),
                            "top_logprobs": [
                                {"token": name(k), "logprob": v, "bytes": list(name(k).encode())}
                                for k, v in d.items()
                            ],
                        }
                        for t, d in zip(tokens, top, strict=True)
                    ]
                }
            else:
                named = [{name(k): v for k, v in d.items()} for d in top]
                choice["logprobs"] = {"tokens": [name(t) for t in tokens], "top_logprobs": named}
        usage = {"prompt_tokens": len(text.split()), "completion_tokens": len(tokens)}
        kind = "chat.completion" if chat else "text_completion"
        answer = {"id": "standin", "object": kind, "choices": [choice], "usage": usage}
        served = self.served_as(self.requests) if callable(self.served_as) else self.served_as
        if served is not None:
            answer["model"] = served
        return answer

    def _as_ids(self, req: dict[str, Any]) -> bool:
        """Are tokens named ``token_id:N`` in this answer? (vLLM: the request's
        ``return_tokens_as_token_ids``, else the server's flag; others: never)"""
        if self.token_ids not in _VLLM_MODES:
            return False
        asked = req.get("return_tokens_as_token_ids")
        return self.server_token_ids if asked is None else bool(asked)

    def _check_token_ids(self, path: str, req: dict[str, Any]) -> dict[str, Any] | None:
        """vLLM's HTTP 400 body for a ``logprob_token_ids`` it refuses, else None.

        Facts from vllm-project/vllm: the request models' ``check_logprobs`` validator
        (vllm/entrypoints/openai/{chat_completion,completion}/protocol.py @ 002032ee2b18)
        refuses an empty list, beam search, and a request without ``logprobs`` (chat:
        not true; completions: unset); ``SamplingParams._validate_logprobs``
        (vllm/sampling_params.py @ 00388f6573cc) refuses more than 128 ids and ids
        outside ``[0, vocab size)``. Either way the answer is HTTP 400 with the body
        ``{"error": {"message", "type", "param": "logprob_token_ids", "code": 400}}``.
        """
        ids = req.get("logprob_token_ids")
        if self.token_ids not in ("honoured", "refused") or ids is None:
            return None
        chat = path.endswith("/chat/completions")
        why = None
        if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
            why = "Input should be a valid list of integers"
        elif not ids:
            why = "`logprob_token_ids` must not be an empty list."
        elif (not req.get("logprobs")) if chat else req.get("logprobs") is None:
            must = "set to true" if chat else "set"
            why = f"when using `logprob_token_ids`, `logprobs` must be {must}."
        elif len(ids) > _MAX_IDS:
            why = (
                f"Requested logprob_token_ids of length {len(ids)}, which is greater "
                f"than max allowed: {_MAX_IDS}"
            )
        else:
            size = STANDIN_VOCAB_SIZE if self.token_ids == "honoured" else 1
            out = [i for i in ids if not 0 <= i < size]
            if out:
                why = (
                    f"token_id(s) {out} in logprob_token_ids contain out-of-vocab token "
                    f"ids. Vocabulary size: {size}"
                )
        if why is None:
            return None
        error = {"message": why, "type": "BadRequestError", "param": "logprob_token_ids"}
        return {"error": {**error, "code": 400}}

    def _tokenize(self, raw: bytes) -> tuple[int, dict[str, str], bytes]:
        """vLLM's ``/tokenize`` for a ``prompt`` body (vllm/entrypoints/serve/tokenize/
        protocol.py @ 030ea52effcb): ``add_special_tokens`` defaults to true (the
        stand-in's BOS is id 0); the answer is ``{count, max_model_len, tokens,
        token_strs}``."""
        if self.token_ids is None:
            return 404, {}, b'{"detail": "Not Found"}'
        self.tokenize_calls += 1
        req = json.loads(raw)
        text = str(req.get("prompt", ""))
        ids = standin_tokens(" " + text if self.dummy_prefix else text)
        if req.get("add_special_tokens", True):
            ids = [0, *ids]
        answer = {"count": len(ids), "max_model_len": 4096, "tokens": ids, "token_strs": None}
        return 200, {}, json.dumps(answer).encode()


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


def _lone_surrogates(choice: dict[str, Any]) -> None:
    """A lone surrogate before the answer's text, and as a top-k token's name."""
    _set_text(choice, "\ud800 " + _get_text(choice))
    logprobs = choice.get("logprobs") or {}
    for top in logprobs.get("top_logprobs") or []:  # completions: {token: log-prob}
        top["\udc80"] = -9.0
    for entry in logprobs.get("content") or []:  # chat: [{token, logprob, bytes}]
        entry["top_logprobs"].append({"token": "\udc80", "logprob": -9.0, "bytes": None})


def _get_text(choice: dict[str, Any]) -> str:
    return str(choice["message"]["content"] if "message" in choice else choice["text"])


def _set_text(choice: dict[str, Any], text: str, *, chat: bool | None = None) -> None:
    if chat if chat is not None else "message" in choice:
        choice["message"] = {"role": "assistant", **choice.get("message", {}), "content": text}
    else:
        choice["text"] = text


def _namer(as_ids: bool) -> Any:
    """How a token text is named in an answer: itself, or vLLM's ``token_id:N``."""
    if as_ids:
        return lambda t: f"token_id:{standin_token_id(t)}"
    return lambda t: t


def _exact_logprobs(
    chat: bool, tokens: list[str], whole: dict[str, float], ids: list[int], as_ids: bool
) -> dict[str, Any]:
    """The ``logprobs`` of an answer that honoured ``logprob_token_ids``.

    Shape from vllm-project/vllm (facts, no code): at each generated position the
    engine's log-prob dict holds the sampled token first, then the requested ids
    (one entry per distinct id); with the field set the serving layer emits that
    whole dict, not a top-k cut (``return_all`` in chat_completion/serving.py @
    006c49d485f9; ``if logprob_token_ids or ...`` in completion/serving.py @
    030ea52effcb). Each log-prob is clamped at -9999.0; a token is named by its
    decoded text or, with ``return_tokens_as_token_ids``, ``token_id:N``. Chat:
    ``content[i] = {token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}``;
    completions: ``{text_offset, token_logprobs, tokens, top_logprobs: [{name: lp}]}``.
    """

    def name(token_id: int, text: str) -> str:
        return f"token_id:{token_id}" if as_ids else text

    # per position: {id: (text, log-prob)}, the sampled token first
    steps: list[dict[int, tuple[str, float]]] = []
    for t in tokens:
        step = {standin_token_id(t): (t, max(whole.get(t, ABSENT_LOGPROB), _FLOOR))}
        for i in ids:
            text = _standin_text(i)
            step.setdefault(i, (text, max(whole.get(text, ABSENT_LOGPROB), _FLOOR)))
        steps.append(step)
    sampled = [(standin_token_id(t), t) for t in tokens]
    if chat:
        content = []
        for (tid, t), step in zip(sampled, steps, strict=True):
            top = [
                {"token": name(i, k), "logprob": v, "bytes": list(name(i, k).encode())}
                for i, (k, v) in step.items()
            ]
            entry = {"token": name(tid, t), "logprob": step[tid][1], "bytes": list(t.encode())}
            content.append({**entry, "top_logprobs": top})
        return {"content": content}
    names = [name(tid, t) for tid, t in sampled]
    return {
        "text_offset": [sum(len(n) for n in names[:k]) for k in range(len(names))],
        "token_logprobs": [step[tid][1] for (tid, _), step in zip(sampled, steps, strict=True)],
        "tokens": names,
        "top_logprobs": [{name(i, k): v for i, (k, v) in step.items()} for step in steps],
    }
