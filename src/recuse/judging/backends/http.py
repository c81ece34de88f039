"""A judge behind OpenAI-compatible HTTP servers (vLLM, SGLang, TGI, llama.cpp, APIs).

One request per prompt; the runner keeps ``concurrency`` of them in flight, spread
round-robin over several base URLs. Two endpoints:

* ``completions`` (``/v1/completions``): we render the chat prompt ourselves
  (ChatML or plain) and append the assistant prefix, so ``direct`` mode reads the
  verdict distribution from ``logprobs`` of one generated token.
* ``chat`` (``/v1/chat/completions``): the server applies the chat template; the
  verdict distribution is read from ``top_logprobs`` of the token after ``[[`` in
  the generated text, or the verdict is parsed from the text when the server gives
  no log-probs.

On both, where the server honours vLLM's ``logprob_token_ids`` the verdict tokens'
own log-probs replace the top-k (:meth:`HTTPBackend._exact`; what the server did is
remembered for the run), and an answer naming its tokens ``token_id:N`` (vLLM's
``--return-tokens-as-token-ids``) is asked again for their text
(:meth:`HTTPBackend._post_texts`).

Continuation log-probs (perplexity) need the log-probs of *prompt* tokens, which
only the completions endpoint gives, in one of two ways chosen by the
``prompt_logprobs`` option: ``"echo"`` (``echo=true`` with ``logprobs``; the
response's tokens located by ``text_offset``) or ``"vllm"`` (vLLM's
``prompt_logprobs``; the prompt head is sent alone to count its tokens). Without
the option the backend refuses them (``continuation_refusal``). Because some
servers return wrong prompt log-probs (llama-cpp-python's ``echo`` gave -9 to -12
per token), the first request is checked against the server's own next-token
log-prob and a disagreement refuses the server (``verify_prompt_logprobs``).

Rate limits (429), server errors (5xx), timeouts, connection errors, malformed JSON
and responses without the log-probs asked for are :class:`TransientError` (the
runner retries them, honouring Retry-After). Other 4xx answers are per-prompt
failures; 401/403 stop the run, and so does an answer in a Content-Encoding no
installed decoder reads (``br`` without brotli: named, with the fix; it read as
malformed JSON). A 200 whose choice is not an object is malformed too; log-probs
that are not finite or above 0 become a ``failed`` row in the runner (never a
score).

Secrets (:mod:`recuse.judging.secrets`): the API key is read from its environment
variable when the backend is made (refused there if unset or not fit for a
header), sent only in the Authorization header; a ``user:password@`` in a base URL
is sent as HTTP Basic auth (when no key is given) and never shown. Every text a
server sends back (error bodies, generated text) passes one scrubber that removes
each secret in any encoding before it is stored or printed.
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import functools
import hashlib
import ipaddress
import itertools
import json
import re
import socket
import ssl
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import httpcore
import httpx
import numpy as np

from recuse.choices import Endpoint as Endpoint
from recuse.choices import PromptLogprobMode as PromptLogprobMode
from recuse.errors import ConfigError, JudgeError
from recuse.judging.backends.base import (
    Backend,
    Failure,
    Generation,
    TokenFilter,
    TopK,
    TransientError,
)
from recuse.judging.protocols import Prompt
from recuse.judging.secrets import Scrubber, api_key, split_credentials
from recuse.numbers import count
from recuse.verdict_parsing import token_logprobs as token_logprobs

ChatFormat = Literal["chatml", "plain"]
PROMPT_LOGPROB_MODES: tuple[str, ...] = ("echo", "vllm")
#: an answer's generated tokens and their top-k distributions (:func:`token_logprobs`)
Parsed = tuple[list[str], list[dict[str, float]]]
#: the most ids vLLM takes in one logprob_token_ids (vllm/sampling_params.py,
#: MAX_LOGPROB_TOKEN_IDS, vllm-project/vllm @ 00388f6573cc); more is an HTTP 400
MAX_LOGPROB_TOKEN_IDS = 128
#: the vLLM request fields the exact verdict log-probs use; a 400 naming one is a refusal
_VLLM_FIELDS = ("logprob_token_ids", "return_tokens_as_token_ids")
#: the largest answer body read (decoded or not); a larger one is a failed call, not
#: read on into memory (a few MB is the largest a judge, a rewrite or a prompt's echoed
#: log-probs send: a server or proxy that sends more is broken)
MAX_ANSWER_BYTES = 128 * 1024 * 1024
#: seconds a connection is kept idle for the next request: under the 5 s after which
#: uvicorn (and llama.cpp's server) close one, so we never send as the server closes
KEEPALIVE_EXPIRY = 4.0


#: who writes the prompt text the model reads, by endpoint (chat) or by the format
#: recuse writes for /v1/completions (:attr:`~recuse.judging.backends.base.Backend.rendering`)
RENDERINGS = {
    "chatml": "recuse's ChatML over /v1/completions",
    "plain": "recuse's plain text over /v1/completions",
    "chat": "the server's chat template (/v1/chat/completions)",
}


def render_chatml(prompt: Prompt) -> str:
    """ChatML text with the assistant turn opened and the prefix appended."""
    parts = [f"<|im_start|>{m.role}\n{m.content}<|im_end|>\n" for m in prompt.messages]
    return "".join(parts) + "<|im_start|>assistant\n" + prompt.prefix


def render_plain(prompt: Prompt) -> str:
    return "\n\n".join(m.content for m in prompt.messages) + "\n\n" + prompt.prefix


def retry_after_seconds(value: str | None) -> float | None:
    """Retry-After as seconds: a number, or an HTTP date (RFC 9110)."""
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


#: the characters of a served model name an answer gives that are kept (a dated
#: snapshot's is 20-odd; a server answering a megabyte of name is not recorded whole)
MAX_SERVED_NAME = 200


def served_name(name: str, scrub: Callable[[str], str]) -> str:
    """The name an answer's ``"model"`` field gave, as recorded: ``scrub``-bed (the
    backend's secrets masked); one over :data:`MAX_SERVED_NAME` characters, which no
    model's name is, as its length and a digest (``<a name of 10,000,000 characters,
    sha256 0f3c…>``): distinct long names stay distinct, and the scrubber, a regular
    expression over the whole text, is not run over a megabyte with every answer
    (0.6 s each for 10 MB, holding the event loop: 30 times its JSON's parse).

    >>> served_name("gpt-4o-2024-08-06", str), served_name("x" * 201, str)[:30]
    ('gpt-4o-2024-08-06', '<a name of 201 characters, sha')
    """
    if len(name) <= MAX_SERVED_NAME:
        return scrub(name)
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"<a name of {count(len(name))} characters, sha256 {digest}>"


class HTTPBackend(Backend):
    """OpenAI-compatible server(s).

    ``model`` is the name the server knows the model by; ``model_id`` the judge id
    written to tables (default ``model``); ``revision`` anything that pins the
    weights. ``api_key_env`` names the environment variable holding the key (none
    sent without it; an error when it names an unset variable). ``timeout`` and
    ``concurrency`` never enter cache keys.
    """

    def __init__(
        self,
        base_urls: str | Sequence[str],
        *,
        model: str,
        model_id: str | None = None,
        revision: str = "",
        endpoint: Endpoint = "completions",
        chat_format: ChatFormat = "chatml",
        api_key_env: str | None = None,
        concurrency: int = 8,
        timeout: float = 60.0,
        logprobs: bool = True,
        prompt_logprobs: PromptLogprobMode | None = None,
        verify_prompt_logprobs: bool = True,
        tolerance: float = 0.05,
        verdict_token_ids: bool = True,
    ) -> None:
        self._tokens = (0, 0)  # prompt, completion tokens the server reported
        self._usage_seen = False
        self._served: dict[str, int] = {}  # served model name -> answers naming it
        urls = [base_urls] if isinstance(base_urls, str) else list(base_urls)
        if not urls:
            raise ConfigError("give at least one base URL (e.g. http://127.0.0.1:8000/v1)")
        key = api_key(api_key_env) if api_key_env else None
        secrets: list[str] = [key] if key else []
        self.base_urls: list[str] = []
        self._auth: dict[str, str] = {}  # base URL -> Authorization header value
        for given in urls:
            url, login = split_credentials(given.rstrip("/"))
            if login is not None:
                secrets.append(login[1])
                basic = base64.b64encode(f"{login[0]}:{login[1]}".encode()).decode("ascii")
                self._auth[url] = f"Basic {basic}"
            if key:
                self._auth[url] = f"Bearer {key}"
            if not url.startswith(("http://", "https://")):
                raise ConfigError(f"base URL {url!r} must start with http:// or https://")
            self.base_urls.append(url)
        # the proxy the environment names for each base URL, read (and checked) once;
        # its password is a secret too (a server or proxy may echo the header)
        self._proxies = {url: _env_proxy(url) for url in self.base_urls}
        for url, proxy in self._proxies.items():
            _tunnel_refused(url, proxy)
        secrets += [p.auth[1] for p in self._proxies.values() if p is not None and p.auth]
        self._scrubber = Scrubber(secrets)
        if prompt_logprobs is not None:
            if prompt_logprobs not in PROMPT_LOGPROB_MODES:
                raise ConfigError(
                    f"prompt_logprobs must be 'echo' or 'vllm'; got {prompt_logprobs!r}"
                )
            if endpoint != "completions":
                raise ConfigError(
                    "chat endpoints return log-probs of generated tokens only, not of the "
                    "prompt, so perplexity cannot be computed through them — use the "
                    "server's completions endpoint with prompt_logprobs 'echo' or 'vllm'"
                )
        self.prompt_logprobs = prompt_logprobs
        self.verify_prompt_logprobs = verify_prompt_logprobs
        self.tolerance = tolerance
        self._verified = False
        self.continuation_refusal = (
            None
            if prompt_logprobs
            else "perplexity over an OpenAI-compatible server needs its prompt log-probs: "
            "make the backend with prompt_logprobs='echo' (completions with echo) or "
            "'vllm' (vLLM prompt_logprobs); chat-only endpoints cannot give them"
        )
        self.model = model
        self.model_asked = model
        self.model_id = model_id or model
        self.revision = revision
        self.endpoint = endpoint
        self.chat_format = chat_format
        self.rendering = RENDERINGS["chat" if endpoint == "chat" else chat_format]
        self.api_key_env = api_key_env
        self.batch_size = 1
        self.concurrency = max(1, concurrency)
        self.quiet_collector = True  # many small calls: the event loop is the limit
        self.timeout = timeout
        self.max_answer_bytes = MAX_ANSWER_BYTES
        self.logprobs = logprobs
        # vLLM's logprob_token_ids: False once the server showed it cannot (no
        # /tokenize, or the field ignored or refused), True once it honoured it
        self.verdict_token_ids = verdict_token_ids
        self.exact_ids: bool | None = None if verdict_token_ids else False
        self.exact_note = "" if verdict_token_ids else "turned off"
        #: replies whose verdict was to be read from their log-probs (asked for, on the
        #: chat route): how many came, and how many of them came without any, their
        #: verdict then read from the text (1, 0 or 0.5), as :meth:`logprobs_line` says
        self.verdict_replies = (0, 0)
        # one /tokenize lookup per candidate set, shared by the requests in flight
        self._ids: dict[tuple[str, ...], asyncio.Task[dict[int, str]]] = {}
        # True once an answer named its tokens token_id:N (vLLM started with
        # --return-tokens-as-token-ids): plain requests then ask for token texts
        self._tokens_as_text = False
        self.supports_prefix = endpoint == "completions" and logprobs
        self._urls = itertools.cycle(self.base_urls)
        self._idle: dict[str, list[_Lane]] = {}
        self._open: list[_Lane] = []
        self._loop: asyncio.AbstractEventLoop | None = None  # the one the lanes belong to
        self._tls: ssl.SSLContext | None = None
        self._targets: dict[tuple[str, str, bool], tuple[str, httpcore.URL, bytes]] = {}
        self._auth_raw = {url: value.encode("latin-1") for url, value in self._auth.items()}
        t = float(timeout)
        self._timeouts = {"timeout": {"connect": t, "read": t, "write": t, "pool": t}}

    # --- plumbing ------------------------------------------------------------------

    def scrub(self, text: str) -> str:
        """``text`` from a server with every form of every secret masked."""
        return self._scrubber(text)

    def _reason(self, text: str) -> str:
        """A failure reason: scrubbed, on one line, at most 200 characters."""
        return " ".join(self.scrub(text).split())[:200]

    def _lane(self) -> tuple[str, _Lane]:
        """The next base URL (round-robin) and an idle keep-alive lane to it.

        A lane is httpcore's connection pool (or its proxy through the proxy the
        environment names: HTTP(S)_PROXY, ALL_PROXY, NO_PROXY) holding one
        connection, built as httpx's transport builds it (HTTP/1.1, our TLS context;
        keep-alive 4 s where httpx's is 5 s: :func:`_new_lane`) and used through
        httpcore's public API. Profiled against the 50 ms stand-in
        (benchmarks/judge_http.py): httpcore's shared pool spends time quadratic in
        its size assigning requests to connections (4.5 ms CPU per request with 32
        connections); httpx's client layer (URL merging,
        cookies, auth, redirects: none used here) costs ~0.25 ms per request over
        its transport, and the transport ~0.1 ms over the httpcore pool under it
        (its Request and Response objects, stream wrappers and exception mapping).
        Lanes are made on demand, at most one per request in flight per URL (the
        runner bounds requests in flight), and the most recently used idle lane is
        reused, so connections stay warm.
        """
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            # lanes left from another event loop (used without aclose, or handed back by
            # a request cancelled as that loop closed) cannot serve this one: new ones
            self._loop, self._open, self._idle = loop, [], {}
        url = next(self._urls)
        idle = self._idle.setdefault(url, [])
        if idle:
            return url, idle.pop()
        if self._tls is None:
            self._tls = ssl.create_default_context()  # loading CA certificates is slow: once
        lane = _new_lane(self._proxies[url], self._tls)
        self._open.append(lane)
        return url, lane

    def _target(self, base: str, path: str, root: bool) -> tuple[str, httpcore.URL, bytes]:
        """The URL ``path`` is posted to under ``base`` (under the server's root, a
        trailing ``/v1`` dropped, with ``root``), with a query the base URL carries
        kept after the path (Azure's ``?api-version=``: before, the path went after
        the query); parsed, and its Host header (as httpx writes them: the default
        port left out), once per base URL and path: parsing took 30 µs of the 40 µs
        of making each request (benchmarks/judge_http.py). An http:// URL at an IPv6
        literal sent through an HTTP proxy is given to httpcore with its host in
        brackets, as the proxy must read it (:func:`_core_url`)."""
        key = (base, path, root)
        found = self._targets.get(key)
        if found is None:
            head, _, query = base.partition("?")
            head = head.rstrip("/")
            url = (head.removesuffix("/v1") if root else head) + path
            url += f"?{query}" if query else ""
            parsed = httpx.URL(url)
            forward = parsed.scheme == "http" and _ipv6_proxied(parsed, self._proxies[base])
            target = _core_url(parsed, bracket=forward)
            found = self._targets[key] = (url, target, parsed.netloc)
        return found

    async def aclose(self) -> None:
        lanes, self._open, self._idle = self._open, [], {}
        if self._loop is not asyncio.get_running_loop():
            return  # lanes of an event loop that ended: nothing can close them now
        for lane in lanes:
            await lane.aclose()

    def usage(self) -> tuple[int, int] | None:
        return self._tokens if self._usage_seen else None

    def served(self) -> dict[str, int]:
        return dict(self._served)

    async def _post(self, path: str, body: dict[str, Any], *, root: bool = False) -> dict[str, Any]:
        """POST ``body`` to ``path`` under the next base URL (under the server's root,
        a trailing ``/v1`` dropped, with ``root``: vLLM's ``/tokenize``)."""
        base, lane = self._lane()
        content = json.dumps(body, ensure_ascii=False).encode("utf-8")
        url, target, host = self._target(base, path, root)
        # the headers, in the order httpx's Request writes them: Host, ours, the length
        headers = [(b"Host", host), (b"Content-Type", b"application/json")]
        if base in self._auth_raw:
            headers.append((b"Authorization", self._auth_raw[base]))
        headers.append((b"Content-Length", b"%d" % len(content)))
        request = httpcore.Request(
            b"POST", target, headers=headers, content=content, extensions=self._timeouts
        )
        try:
            # the timeout bounds the whole request: httpcore's bound each connect, read
            # and write alone (a server sending a byte every 0.15 s held a 0.5 s one 14 s)
            async with asyncio.timeout(self.timeout):
                answer = await lane.handle_async_request(request)
                try:
                    raw = await _read_body(answer, self.max_answer_bytes)
                finally:
                    await answer.aclose()
        except (httpcore.TimeoutException, TimeoutError):
            raise TransientError(f"timeout after {self.timeout:g} s") from None
        except _TRANSPORT_ERRORS as exc:
            said = self._reason(_connection_error(exc, self._proxies[base]))
            if _unverified(exc) is not None:  # every request would fail so: stop the run
                raise JudgeError(f"cannot judge with the server at {url}: {said}") from None
            raise TransientError(said) from None
        finally:
            self._idle.setdefault(base, []).append(lane)
        status = answer.status
        if status == 200 and not any(k.lower() == b"content-encoding" for k, _ in answer.headers):
            try:
                data = read_json(raw)  # what httpx's Response.json() does
            except ValueError:
                raise TransientError("malformed JSON in the response") from None
            return self._checked(data, root=root)
        # httpx passes a body in an encoding it has no decoder for through as it came
        # (read as JSON: "malformed JSON"); that is named, with the fix, instead
        cannot = _undecodable(answer.headers)
        if cannot and status < 400:  # every answer will be so: stop the run
            raise JudgeError(self.scrub(f"the server at {url} answered {cannot}"))
        try:  # the rest as httpx reads it: a body decoded by its Content-Encoding
            if cannot:  # the status still means what it says; the body is unread
                resp = httpx.Response(status, headers=answer.headers)
                said = self.scrub(f"(a body {cannot})")
            else:
                resp = _decoded_answer(status, answer.headers, raw, self.max_answer_bytes)
                said = resp.text
        except _DecodedTooLarge as exc:
            # a small compressed body that decodes to gigabytes (a "gzip bomb"): stopped
            # at the bound, as a raw body over it is; the status still means what it says
            if 200 <= status < 300:
                raise TransientError(
                    self._reason(f"the server at {url} answered HTTP {status} with {exc}")
                ) from None
            resp = httpx.Response(status, headers=answer.headers)
            said = f"(a body {exc})"
        except httpx.DecodingError:
            # a body that is not what its encoding says: the status still means what
            # it says (a 429 keeps its Retry-After, a 401 stops the run)
            if 200 <= status < 300:
                raise TransientError(
                    f"HTTP {status}: the body could not be decoded as its Content-Encoding says"
                ) from None
            resp = httpx.Response(status, headers=answer.headers)
            said = "(a body that could not be decoded as its Content-Encoding says)"
        if status == 429 or status >= 500:
            raise TransientError(
                self._reason(f"HTTP {status}: {said}"),
                retry_after=retry_after_seconds(resp.headers.get("retry-after")),
            )
        if status in (401, 403):
            raise JudgeError(
                f"the server at {url} refused the request (HTTP {status}) — check the API key "
                f"in ${self.api_key_env or 'YOUR_KEY_VARIABLE'} (--api-key-env)"
            )
        if status >= 400:
            raise _PromptRejected(
                self._reason(f"HTTP {status}: {said}"), said=self.scrub(said), status=status
            )
        try:
            data = read_json(resp.content)
        except ValueError:
            raise TransientError("malformed JSON in the response") from None
        return self._checked(data, root=root)

    def _checked(self, data: Any, *, root: bool) -> dict[str, Any]:
        """A 2xx answer's JSON, checked: an object (with ``root``), else one with a
        list of choices whose first is an object; its token usage counted."""
        if root:
            if not isinstance(data, dict):
                raise TransientError("the answer is not a JSON object")
            return data
        if not isinstance(data, dict) or not data.get("choices"):
            raise TransientError("response has no choices")
        used = data.get("usage")
        if isinstance(used, dict):
            tin, tout = used.get("prompt_tokens"), used.get("completion_tokens")
            if isinstance(tin, int) and isinstance(tout, int) and tin >= 0 and tout >= 0:
                self._tokens = (self._tokens[0] + tin, self._tokens[1] + tout)
                self._usage_seen = True
        if not isinstance(data["choices"], list) or not isinstance(data["choices"][0], dict):
            raise TransientError("response choices are not a list of objects")
        name = data.get("model")
        if isinstance(name, str) and name.strip():  # an answer that names none is not counted
            name = served_name(name, self.scrub)
            self._served[name] = self._served.get(name, 0) + 1
        return data

    def _body(self, prompt: Prompt, *, max_tokens: int, top_k: int) -> tuple[str, dict[str, Any]]:
        body: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens, "temperature": 0}
        if self.endpoint == "completions":
            render = render_chatml if self.chat_format == "chatml" else render_plain
            body["prompt"] = render(prompt)
            if top_k:
                body["logprobs"] = top_k
            return "/completions", body
        if prompt.prefix:
            raise _PromptRejected("the chat endpoint cannot continue a pre-filled answer")
        body["messages"] = [{"role": m.role, "content": m.content} for m in prompt.messages]
        if top_k:
            body.update(logprobs=True, top_logprobs=top_k)
        return "/chat/completions", body

    # --- primitives ------------------------------------------------------------------

    async def next_token_logprobs(
        self, prompts: Sequence[Prompt], *, top_k: int = 20, select: TokenFilter | None = None
    ) -> list[dict[str, float] | Failure]:
        """The next-token log-probs: of exactly the verdict tokens where the server
        honours vLLM's ``logprob_token_ids`` (``select`` lists their texts, the
        server's ``/tokenize`` gives their ids), else its top-k as :class:`TopK`.
        What the server did with the field is remembered for the rest of the run."""
        out: list[dict[str, float] | Failure] = []
        candidates: tuple[str, ...] = tuple(getattr(select, "candidates", ()))
        needed = tuple(getattr(select, "needed", ()))
        opener = str(getattr(select, "opener", ""))
        for prompt in prompts:
            ids = await self._verdict_ids(candidates, needed, opener) if candidates else {}
            try:
                path, body = self._body(prompt, max_tokens=1, top_k=max(top_k, 1))
                exact = await self._exact(path, body, ids) if ids else None
                if exact is not None:
                    if not exact.dists:
                        raise TransientError("response has no logprobs")
                    out.append(exact.dists[0])
                    continue
                _, (_, dists) = await self._post_texts(path, body)
            except _PromptRejected as exc:
                out.append(Failure(str(exc)))
                continue
            if not dists:
                raise TransientError("response has no logprobs")
            out.append(TopK(dists[0]))
        return out

    async def _exact(self, path: str, body: dict[str, Any], ids: dict[int, str]) -> _Exact | None:
        """The log-probs of exactly the tokens ``ids`` (id -> text) at each generated
        position, from vLLM's ``logprob_token_ids``; None where the server does not
        honour it (then remembered, and the caller asks again without it).

        What vLLM does (vllm-project/vllm, PR #43463; read at
        vllm/entrypoints/openai/{chat_completion,completion}/protocol.py @ 002032ee2b18,
        chat_completion/serving.py @ 006c49d485f9, completion/serving.py @ 030ea52effcb):
        the field needs ``logprobs`` (chat: true; completions: a count), replaces the
        top-k at each generated position (the top-k count is then not used), and the
        answer's usual ``top_logprobs`` (completions: one dict per position; chat:
        ``content[i].top_logprobs``) holds the sampled token plus every requested id,
        each log-prob clamped at -9999. Bad ids (out of the vocabulary, more than 128,
        an empty list) are an HTTP 400 whose message names the field. We also send
        vLLM's per-request ``return_tokens_as_token_ids``, so the answer names tokens
        ``token_id:N`` and is read by id, not by the server's decoding of each token
        (which need not equal the text /tokenize was given); a chat answer still
        gives each generated token's text in ``content[i].bytes`` (the decoded token,
        whatever the name), which is how a reply's verdict position is found. The
        answer counts as honoured only when, at every position, its ids are all the
        requested ones plus at most the sampled token: a server that ignores the
        field answers its natural top-k, which has more ids whenever top-k exceeds
        the requested ids by two or more (and where it does not, those log-probs are
        the exact ones anyway). An answer without log-probs decides nothing.
        """
        if self.exact_ids is False:
            return None
        asked = {**body, "logprob_token_ids": list(ids), "return_tokens_as_token_ids": True}
        try:
            data = await self._post(path, asked)
        except _PromptRejected as exc:
            if not any(name in exc.said for name in _VLLM_FIELDS):
                raise
            self._no_exact(f"the server refused logprob_token_ids ({exc.message()})")
            return None
        choice = data["choices"][0]
        tokens, dists = token_logprobs(choice)
        if not dists:
            return _Exact(choice, (), ())
        steps = [_by_token_id(d) for d in dists]
        sampled = [_token_id(t) for t in tokens]
        if len(steps) == len(sampled) and all(
            got is not None and ids.keys() <= got.keys() <= ids.keys() | {tid}
            for got, tid in zip(steps, sampled, strict=True)
        ):
            self.exact_ids = True
            self.exact_note = "logprob_token_ids honoured"
            exact = [{text: got[i] for i, text in ids.items()} for got in steps if got]
            return _Exact(choice, tuple(_decoded(choice) or ()), tuple(exact))
        if self.exact_ids is None:  # (requests in flight may have concluded it already)
            self._no_exact("the server ignored logprob_token_ids (top-k only)")
        elif self.exact_ids:
            self._no_exact("the server stopped returning every requested verdict id (top-k only)")
        return None

    async def _post_texts(self, path: str, body: dict[str, Any]) -> tuple[dict[str, Any], Parsed]:
        """POST a request whose answer's tokens are read by their text: the answer,
        and its first choice's tokens and top-k (:func:`token_logprobs`, read once).

        A vLLM started with ``--return-tokens-as-token-ids`` names every token
        ``token_id:N`` unless the request says otherwise; such an answer has no text
        to read a verdict from (before, its top-k read as holding neither A nor B).
        The first answer named so is asked again with vLLM's per-request
        ``return_tokens_as_token_ids: false``, and every later request carries it
        (sent only then: other servers need not know the field). A server that still
        names tokens by id cannot be read, and the run stops saying so.
        """
        off = self._tokens_as_text
        data = await self._post(path, {**body, **_TEXT_NAMES} if off else body)
        parsed = token_logprobs(data["choices"][0])
        if not _names_ids(parsed):
            return data, parsed
        if not off:
            self._tokens_as_text = True
            data = await self._post(path, {**body, **_TEXT_NAMES})
            parsed = token_logprobs(data["choices"][0])
            if not _names_ids(parsed):
                return data, parsed
        raise JudgeError(
            "the server names every token token_id:N (vLLM's --return-tokens-as-token-ids) "
            "even when asked for their text (return_tokens_as_token_ids: false), so no "
            "verdict can be read from its log-probs — restart it without "
            "--return-tokens-as-token-ids, or upgrade vLLM"
        )

    def logprobs_line(self, top_k: int) -> str | None:
        """What the run's verdict log-probs were, for the user (None: none were read
        from next-token log-probs this run). Replies that came without log-probs
        (:attr:`verdict_replies`: a server that sends none, or drops them now and then)
        had their verdict read from the text, 1, 0 or 0.5 (the verdict, not a
        probability): said with their count, and alone where no reply had any."""
        n, bare = self.verdict_replies
        if bare:
            said = (
                f"verdict log-probs: none in {bare:,} of {n:,} replies (the server sent "
                "none): their verdicts were read from the reply's text, so their p_a is 1, "
                "0 or 0.5 (the verdict itself, not a probability; mass empty)"
            )
            kind = self._logprobs_kind(top_k) if bare < n else None
            return said if kind is None else f"{said}; the others: {kind}"
        return self._logprobs_kind(top_k)

    def _logprobs_kind(self, top_k: int) -> str | None:
        """:meth:`logprobs_line` for the replies that had log-probs."""
        if self.exact_ids is True:
            return (
                "verdict log-probs: exact, for the verdict tokens themselves (the server "
                "honoured vLLM's logprob_token_ids)"
            )
        if self.exact_ids is False:
            if self.endpoint == "chat":  # the runner reads a whole reply's log-probs
                return (
                    f"verdict log-probs: the server's top {top_k} only ({self.exact_note}); "
                    "a row whose A or B is not among them at the verdict is unparsed "
                    "(verdict token outside top-k), not read from its text"
                )
            return (
                f"verdict log-probs: the server's top {top_k} only ({self.exact_note}); "
                "a row whose A or B is not among them is unparsed"
            )
        return None

    def _no_exact(self, why: str) -> None:
        self.exact_ids = False
        self.exact_note = why

    async def _verdict_ids(
        self,
        candidates: tuple[str, ...],
        needed: tuple[tuple[str, ...], ...] = (),
        opener: str = "",
    ) -> dict[int, str]:
        """``{token id: text}`` of the candidates that are one token each in the
        server's tokenizer (vLLM ``/tokenize``) after ``opener``
        (:meth:`_tokenize_ids`), asked once per run (the requests in flight await one
        lookup); empty where the server has no ``/tokenize`` (then top-k only)."""
        if self.exact_ids is False:
            return {}
        task = self._ids.get((opener, *candidates))
        # asked again where the lookup was cut off: by an earlier run's event loop
        # ending (pending there, or cancelled as that loop closed)
        stale = task is not None and (
            task.cancelled()
            or (not task.done() and task.get_loop() is not asyncio.get_running_loop())
        )
        if task is None or stale:
            task = asyncio.ensure_future(self._tokenize_ids(candidates, needed, opener))
            self._ids[(opener, *candidates)] = task
        return await asyncio.shield(task)

    async def _tokenize_ids(
        self, candidates: tuple[str, ...], needed: tuple[tuple[str, ...], ...], opener: str = ""
    ) -> dict[int, str]:
        """Each candidate's id where it is one token: the one token it adds after
        ``opener`` (``[[A`` less ``[[``), else, where it adds several or merges with the
        opener, its own tokens when they are one. Alone, a SentencePiece tokenizer
        that prefixes a space to every text (Llama 2, Mistral) reads ``A`` as ``▁A``:
        the bare ``A`` that follows ``[[`` was never asked, and Eq. 3 read the
        space-prefixed tokens only."""
        # the first text alone (a server without /tokenize is asked once), then the
        # rest at once, then those to be read alone: three round trips, where one
        # lookup after another took 31 (~3 s to a remote server) before the first judgment
        first = await self._tokenize_text(opener or candidates[0]) if candidates else []
        if first is None:
            return {}
        head = first if opener else []
        rest = candidates if opener else candidates[1:]
        after = await self._tokenized([opener + text for text in rest])
        if after is None:
            return {}
        if not opener:
            after = [first, *after]
        alone = [
            i for i, tokens in enumerate(after)
            if opener and not (len(tokens) == len(head) + 1 and tokens[: len(head)] == head)
        ]  # fmt: skip
        bare = await self._tokenized([candidates[i] for i in alone])  # not one token after it
        if bare is None:
            return {}
        own = dict(zip(alone, bare, strict=True))
        found: dict[int, str] = {}
        for i, text in enumerate(candidates):
            tokens = own.get(i, after[i][len(head) :])  # the one token it adds after the opener
            if len(tokens) == 1 and tokens[0] not in found:
                found[tokens[0]] = text
        if len(found) > MAX_LOGPROB_TOKEN_IDS:
            self._no_exact(f"more than vLLM's {MAX_LOGPROB_TOKEN_IDS} verdict token ids")
            return {}
        if any(not set(group) & set(found.values()) for group in needed):
            # an exact answer would hold no token for that verdict: Eq. 3 would read
            # P = 0 for it, so top-k (where its absence is counted) is used instead
            self._no_exact("a verdict has no single-token text in the server's tokenizer")
            return {}
        return found

    async def _tokenized(self, texts: Sequence[str]) -> list[list[int]] | None:
        """Each of ``texts`` tokenized (:meth:`_tokenize_text`), up to :attr:`concurrency`
        lookups at once (the requests in flight all wait for them); None where one gave
        none."""
        lanes = asyncio.Semaphore(self.concurrency)

        async def one(text: str) -> list[int] | None:
            async with lanes:
                return await self._tokenize_text(text)

        got = await asyncio.gather(*(one(t) for t in texts))
        return None if any(g is None for g in got) else [g for g in got if g is not None]

    async def _tokenize_text(self, text: str) -> list[int] | None:
        """The server's token ids of ``text`` (no special tokens), or None where its
        ``/tokenize`` gave none (said: the run falls back to top-k)."""
        # vLLM's /tokenize (vllm/entrypoints/serve/tokenize/protocol.py @ 030ea52effcb):
        # at the server root, for chat and completion models alike; a "prompt" body
        # is tokenized as text (a "messages" body would get the chat template);
        # add_special_tokens defaults to true (a BOS would make every text two
        # tokens); the answer is {count, max_model_len, tokens, token_strs}
        try:
            data = await self._post(
                "/tokenize",
                {"model": self.model, "prompt": text, "add_special_tokens": False},
                root=True,
            )
        except (_PromptRejected, JudgeError, TransientError) as exc:
            # an optional route: any refusal or fault means top-k, never a stop
            self._no_exact(f"the server's /tokenize did not answer ({exc})")
            return None
        tokens = data.get("tokens")
        if not isinstance(tokens, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in tokens
        ):
            self._no_exact("the server's /tokenize answer has no list of token ids")
            return None
        return tokens

    @property
    def key_params(self) -> dict[str, str]:
        """The chat endpoint (the server renders the prompt with its own chat template,
        and a reply is read whole) or a plain-text completions prompt: another prompt
        as the model reads it than completions' ChatML, so judgments of one are never
        served for another. Completions with ChatML, the default, adds nothing (its
        keys are those stored before the endpoint entered them)."""
        if self.endpoint == "chat":
            return {"endpoint": "chat"}
        return {"chat_format": self.chat_format} if self.chat_format != "chatml" else {}

    @property
    def perplexity_route(self) -> str:
        return f"http-{self.prompt_logprobs}"

    async def continuation_logprobs(
        self, prompts: Sequence[Prompt], continuations: Sequence[str]
    ) -> list[np.ndarray | Failure]:
        """Log-prob of each token of ``continuations[i]`` after ``prompts[i]``, from
        the server's prompt log-probs (see the module doc); the first call verifies
        the server. Problems that may pass are raised for the runner to retry."""
        if self.prompt_logprobs is None:
            return [Failure(str(self.continuation_refusal)) for _ in prompts]
        out: list[np.ndarray | Failure] = []
        for prompt, text in zip(prompts, continuations, strict=True):
            head = self._render(prompt)
            if self.verify_prompt_logprobs and not self._verified:
                await self._verify(head)
                self._verified = True
            if not text:
                out.append(np.zeros(0))
                continue
            try:
                if self.prompt_logprobs == "echo":
                    out.append(await self._echo(head, text))
                else:
                    out.append(await self._vllm(head, text))
            except _PromptRejected as exc:
                out.append(Failure(str(exc)))
        return out

    def _render(self, prompt: Prompt) -> str:
        render = render_chatml if self.chat_format == "chatml" else render_plain
        return render(prompt)

    async def _complete(self, body: dict[str, Any]) -> dict[str, Any]:
        body = {"model": self.model, "temperature": 0, **body}
        return await self._post("/completions", body)

    async def _echo(self, head: str, response: str) -> np.ndarray | Failure:
        text = head + response
        data = await self._complete({"prompt": text, "echo": True, "logprobs": 1, "max_tokens": 1})
        lp = data["choices"][0].get("logprobs")
        if not isinstance(lp, dict):
            raise TransientError("response has no logprobs")
        tokens = lp.get("tokens")
        values = lp.get("token_logprobs")
        offsets = lp.get("text_offset")
        if not (
            isinstance(tokens, list) and isinstance(values, list) and isinstance(offsets, list)
        ):
            return Failure(
                "the server's echo answer has no tokens/token_logprobs/text_offset — "
                "it does not return prompt log-probs"
            )
        if not len(tokens) == len(values) == len(offsets):
            return Failure("the server's echo answer has lists of different lengths")
        offs = _numbers(offsets, int)
        if offs is None:
            return Failure("the server's text offsets are not numbers")
        if len(head) not in offs:
            return Failure("a token spans the end of the prompt and the start of the response")
        first = offs.index(len(head))
        end = first
        while end < len(offs) and offs[end] < len(text):
            end += 1
        if any(b < a for a, b in itertools.pairwise(offs)):
            return Failure("the server's text offsets go backwards")
        span = _numbers(values[first:end], float)
        if span is None:
            return Failure("the server left some prompt log-probs empty or not numbers")
        return np.asarray(span, dtype=np.float64)

    async def _prompt_token_logprobs(self, text: str) -> list[tuple[int, float]] | Failure:
        data = await self._complete({"prompt": text, "prompt_logprobs": 0, "max_tokens": 1})
        entries = data["choices"][0].get("prompt_logprobs")
        if entries is None:
            entries = data.get("prompt_logprobs")
        if not isinstance(entries, list) or not entries:
            return Failure(
                "the server returned no prompt_logprobs — it is not vLLM or does not "
                "support them; use prompt_logprobs='echo' or a local backend"
            )
        out: list[tuple[int, float]] = []
        for e in entries[1:]:  # the first prompt token has no log-prob
            if not isinstance(e, dict) or len(e) != 1:
                return Failure("prompt_logprobs entries must hold exactly the prompt token")
            ((tid, info),) = e.items()
            lp = info.get("logprob") if isinstance(info, dict) else info
            pair = _numbers([tid, lp], float)
            if pair is None:
                return Failure("the server left some prompt log-probs empty or not numbers")
            out.append((int(pair[0]), pair[1]))
        return out

    async def _vllm(self, head: str, response: str) -> np.ndarray | Failure:
        full = await self._prompt_token_logprobs(head + response)
        if isinstance(full, Failure):
            return full
        part = await self._prompt_token_logprobs(head)
        if isinstance(part, Failure):
            return part
        n_head = len(part)
        if [t for t, _ in full[:n_head]] != [t for t, _ in part]:
            return Failure("a token spans the end of the prompt and the start of the response")
        return np.asarray([v for _, v in full[n_head:]], dtype=np.float64)

    async def _verify(self, head: str) -> None:
        """Refuse a server whose prompt log-probs disagree with its own generation.

        The server generates one token greedily after ``head`` with its log-prob;
        the same token appended to ``head`` is then scored as a prompt token. The
        two numbers are the same quantity and must agree within ``tolerance``.
        """
        data = await self._complete({"prompt": head, "logprobs": 1, "max_tokens": 1})
        choice = data["choices"][0]
        token = choice.get("text")
        lp = choice.get("logprobs")
        values = lp.get("token_logprobs") if isinstance(lp, dict) else None
        gen = _numbers(values[:1], float) if isinstance(values, list) and values else None
        if not isinstance(token, str) or not token or not gen or not np.isfinite(gen[0]):
            raise JudgeError(
                "cannot verify the server's prompt log-probs: it returned no log-prob for a "
                f"generated token — {_LOCAL_FIX}"
            )
        try:
            if self.prompt_logprobs == "echo":
                scored = await self._echo(head, token)
            else:
                scored = await self._vllm(head, token)
        except _PromptRejected as exc:
            scored = Failure(str(exc))
        if isinstance(scored, Failure) or len(scored) != 1:
            reason = scored.reason if isinstance(scored, Failure) else "token count differs"
            raise JudgeError(
                f"cannot verify the server's prompt log-probs ({reason}) — {_LOCAL_FIX}"
            )
        if not abs(float(scored[0]) - gen[0]) <= self.tolerance:
            raise JudgeError(
                f"the server's prompt log-prob of a token ({float(scored[0]):.3f}) disagrees "
                f"with the log-prob it gave when generating that token ({gen[0]:.3f}) — its "
                f"prompt log-probs are wrong; {_LOCAL_FIX}"
            )

    async def generate(
        self,
        prompts: Sequence[Prompt],
        *,
        max_new_tokens: int,
        stop: Sequence[str] = (),
        top_k: int = 0,
        select: TokenFilter | None = None,
    ) -> list[Generation | Failure]:
        """Each prompt's reply, with its tokens' top-k log-probs when ``top_k`` asks
        for them; on the chat route, with ``select``, those of exactly the verdict
        tokens at every position where the server honours vLLM's
        ``logprob_token_ids`` (as :meth:`next_token_logprobs`; the same run-wide
        memory of what the server did)."""
        out: list[Generation | Failure] = []
        want = top_k if self.logprobs else 0
        exact_route = bool(want) and self.endpoint == "chat" and select is not None
        candidates: tuple[str, ...] = tuple(getattr(select, "candidates", ()))
        needed = tuple(getattr(select, "needed", ()))
        opener = str(getattr(select, "opener", ""))
        parsed: Parsed
        for prompt in prompts:
            ids = (
                await self._verdict_ids(candidates, needed, opener)
                if exact_route and candidates
                else {}
            )
            try:
                path, body = self._body(prompt, max_tokens=max_new_tokens, top_k=want)
                exact = await self._exact(path, body, ids) if ids else None
                if exact is not None and exact.dists and len(exact.texts) != len(exact.dists):
                    # honoured, but without each token's text the verdict cannot be found
                    self._no_exact("the server's chat answer gives no text (bytes) per token")
                    exact = None
                if exact:
                    data, parsed = {"choices": [exact.choice]}, ([], [])
                else:
                    data, parsed = await self._post_texts(path, body)
            except _PromptRejected as exc:
                out.append(Failure(str(exc)))
                continue
            choice = data["choices"][0]
            text = _text(choice)
            if text is None:
                raise TransientError("response has no text")
            if exact is not None:
                tokens, dists = list(exact.texts), list(exact.dists)
            else:
                tokens, dists = parsed if want else ([], [])
            if want and select is not None:  # the verdict is read from these log-probs
                n, bare = self.verdict_replies
                self.verdict_replies = (n + 1, bare + (not dists))
            if exact is None:
                # the server's top-k only: a verdict absent from it has an unknown
                # log-prob, so the runner counts that row unparsed (never P = 0)
                dists = [TopK(d) for d in dists]
            cut = min((text.find(s) + len(s) for s in stop if s in text), default=-1)
            if cut >= 0:  # server-side stop strings would drop the stop text: cut here
                text = text[:cut]
            out.append(
                Generation(
                    text=self.scrub(text),
                    tokens=tuple(tokens),
                    dists=tuple(dists),
                    finish_reason=choice.get("finish_reason"),
                )
            )
        return out


#: a keep-alive lane: httpcore's pool of one connection, direct or through a proxy
_Lane = httpcore.AsyncConnectionPool | httpcore.AsyncSOCKSProxy
#: what httpx's transport maps to its TransportError (httpx/_transports/default.py),
#: timeouts apart: the errors of a connection, a proxy or the protocol
_TRANSPORT_ERRORS = (
    httpcore.NetworkError,
    httpcore.ProtocolError,
    httpcore.ProxyError,
    httpcore.UnsupportedProtocol,
)


def _connection_error(exc: Exception, proxy: httpx.Proxy | None) -> str:
    """A failed connection's reason: the error's kind; the proxy it went through (one
    the environment names, easily forgotten; shown without its credentials); and what
    the error underneath says where it is one a user can act on: a host name not
    resolved, a connection refused, a TLS certificate not verified (OpenSSL's words:
    self-signed, expired, a hostname it does not name; a private CA is trusted with
    SSL_CERT_FILE). The same words for every request it happens to, so the failures
    counted by reason stay together."""
    said = f"connection error: {type(exc).__name__}"
    if proxy is not None:
        said += f" (through the proxy {proxy.url} the environment names)"
    why = _unverified(exc)
    if why is not None:
        return (
            f"{said} (the server's TLS certificate was not verified: {why}; "
            "a private CA is trusted with SSL_CERT_FILE)"
        )
    for cause in _causes(exc):
        if isinstance(cause, socket.gaierror):
            return f"{said} (the host name could not be resolved)"
        if isinstance(cause, ConnectionRefusedError):
            return f"{said} (refused: nothing listens at that address and port)"
    return said


def _causes(exc: BaseException) -> list[BaseException]:
    """What ``exc`` was raised from, nearest first (at most five deep)."""
    causes: list[BaseException] = []
    cause = exc.__cause__ or exc.__context__
    while cause is not None and len(causes) < 5:
        causes.append(cause)
        cause = cause.__cause__ or cause.__context__
    return causes


def _unverified(exc: BaseException) -> str | None:
    """OpenSSL's reason where ``exc`` is a TLS certificate not verified (self-signed,
    expired, a hostname it does not name), else None. No retry can change it, so the
    run stops rather than spend its attempts on every batch."""
    for cause in _causes(exc):
        if isinstance(cause, ssl.SSLCertVerificationError):
            return str(cause.verify_message).rstrip(".")
    return None


def _env_proxy(url: str) -> httpx.Proxy | None:
    """The proxy the environment sets for ``url`` (None when NO_PROXY bypasses it),
    parsed by httpx as its transport would (credentials in it become
    Proxy-Authorization); a proxy httpx cannot use is a :class:`ConfigError`.

    NO_PROXY's entries (comma-separated) are a host name, a ``.domain`` (its
    subdomains too), ``host:port``, an IPv6 address in brackets, ``*`` (every
    host), or an IP network in CIDR form (``10.0.0.0/8``, ``::1/128``), as curl and
    requests read them: a base URL whose host is an IP address inside such a network
    goes around the proxy. Host names are not resolved for this (``localhost`` is
    not in ``127.0.0.0/8`` here; name it in NO_PROXY), so NO_PROXY needs no DNS."""
    found = urllib.request.getproxies_environment()
    parts = urllib.parse.urlsplit(url)
    # NO_PROXY is matched against the host name, and against host:port with an IPv6
    # host in brackets (entries "judge:8000" and "[::1]", as httpx's client reads
    # them; the bare host name alone missed both)
    host = parts.hostname or ""
    named = f"[{host}]" if ":" in host else host
    named += f":{parts.port}" if parts.port else ""
    if not found or any(urllib.request.proxy_bypass(h) for h in (host, named)):
        return None
    if _in_no_proxy_network(host, found.get("no", "")):
        return None
    given = found.get(parts.scheme) or found.get("all")
    if not given:
        return None
    if "://" not in given:  # host:port alone is an HTTP proxy (curl, httpx's client)
        given = f"http://{given}"
    try:
        proxy = httpx.Proxy(given)
    except (ValueError, httpx.InvalidURL):
        try:  # shown without its credentials (httpx's message would show them)
            shown = repr(split_credentials(given)[0])
        except ValueError:
            shown = "a URL that cannot be parsed"
        raise ConfigError(
            f"the environment's proxy for {url} ({shown}, from {parts.scheme.upper()}_PROXY "
            "or ALL_PROXY) cannot be used — give an http://, https://, socks5:// or "
            "socks5h:// proxy URL, or exempt the host in NO_PROXY"
        ) from None
    if proxy.url.scheme.startswith("socks"):
        try:
            import socksio  # noqa: F401
        except ImportError:
            raise ConfigError(
                f"the environment's proxy for {url} is a SOCKS proxy, which needs the "
                "socksio package: pip install 'httpx[socks]' (or exempt the host in NO_PROXY)"
            ) from None
    return proxy


def _in_no_proxy_network(host: str, no_proxy: str) -> bool:
    """Whether ``host`` (as a URL's hostname gives it: an IPv6 address without its
    brackets) is an IP address inside a network NO_PROXY names in CIDR form
    (``10.0.0.0/8``, ``192.168.1.0/24``, ``::1/128``; host bits set are ignored, as
    curl does), or is an address NO_PROXY names however it is written (``2001:db8::1``
    for ``[2001:db8:0::1]``). A host name is never resolved here, and an entry that is not a
    network (a name, a bad prefix length) is left to the other forms; an IPv4
    network holds no IPv6 address and the other way round."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False  # a host name: not looked up
    for entry in no_proxy.split(","):
        at, slash, bits = entry.strip().partition("/")
        # an address alone is the network of itself, however it is written:
        # "2001:db8::1" holds the judge at [2001:db8:0::1] (the names' comparison misses
        # that spelling); an IPv6 network's address may come in brackets: [::1]/128
        try:
            network = ipaddress.ip_network(at.strip("[]") + slash + bits, strict=False)
        except ValueError:
            continue  # a host name (or host:port, *): left to the names' comparison
        if address.version == network.version and address in network:
            return True
    return False


#: the package that gives httpx the decoder for a Content-Encoding it may lack
#: (httpx's extras httpx[brotli], httpx[zstd]); whether it is there is asked at run time
_DECODER_PACKAGE = {"br": "brotli", "zstd": "zstandard"}


@functools.lru_cache(maxsize=64)  # the values a server sends: bounded
def _httpx_decodes(encoding: str) -> bool:
    """Whether httpx, as installed, decodes a body in Content-Encoding ``encoding``
    (lower case), found by handing it bytes no encoding makes: a decoder it has
    raises DecodingError (or changes them); one it lacks passes them through as
    they came. Asked once per encoding."""
    if encoding == "identity":
        return True
    probe = b"\xff\xfe\xfd\xfc not encoded"
    try:
        got = httpx.Response(200, headers={"Content-Encoding": encoding}, content=probe).content
    except httpx.DecodingError:
        return True
    return got != probe


def _undecodable(headers: Sequence[tuple[bytes, bytes]]) -> str:
    """Where the Content-Encoding of an answer (its raw headers) names an encoding
    httpx cannot decode here (``br`` without brotli, ``zstd`` without zstandard, one
    no package decodes): the words saying which and how to fix it; else ``""``.
    Values are read as httpx reads them: comma-separated, in any case, over every
    Content-Encoding header."""
    named = [
        part.strip().lower()
        for key, value in headers
        if key.lower() == b"content-encoding"
        for part in value.decode("latin-1").split(",")
    ]
    cannot = [e for e in named if e and not _httpx_decodes(e)]
    if not cannot:
        return ""
    first = cannot[0][:40]
    package = _DECODER_PACKAGE.get(first)
    fix = (
        f"install the {package} package (pip install {package}) or configure the server"
        if package
        else "configure the server"
    )
    return (
        f"in Content-Encoding {first!r}, which cannot be decoded here (no decoder for it "
        f"is installed; the request asked for no encoding) — {fix} to answer "
        "uncompressed or in gzip"
    )


def _new_lane(proxy: httpx.Proxy | None, tls: ssl.SSLContext) -> _Lane:
    """One keep-alive connection's pool, direct or through ``proxy``, with the
    settings httpx's AsyncHTTPTransport gives it (httpx/_transports/default.py):
    HTTP/1.1, no connection retries; but keep-alive expiring after
    :data:`KEEPALIVE_EXPIRY` idle, where httpx's 5 s equals the idle time after which
    uvicorn (vLLM's and SGLang's server; ``timeout_keep_alive``) closes a connection.
    Measured against uvicorn 0.54.0 (idle gaps 4.98-5.02 s, 352 tries): a connection
    it had closed was mostly seen closed and replaced, but 5 requests were sent as it
    closed and met a reset (each a retry, after the runner's back-off). Expiring first
    on our side leaves the close to us."""
    pool: dict[str, Any] = {
        "ssl_context": tls,
        "max_connections": 1,
        "max_keepalive_connections": 1,
        "keepalive_expiry": KEEPALIVE_EXPIRY,
    }
    if proxy is None:
        return httpcore.AsyncConnectionPool(**pool)
    at, auth = _core_url(proxy.url), proxy.raw_auth
    if proxy.url.scheme in ("http", "https"):
        return httpcore.AsyncHTTPProxy(
            proxy_url=at,
            proxy_auth=auth,
            proxy_headers=proxy.headers.raw,
            proxy_ssl_context=proxy.ssl_context,
            **pool,
        )
    return httpcore.AsyncSOCKSProxy(proxy_url=at, proxy_auth=auth, **pool)


def _core_url(url: httpx.URL, *, bracket: bool = False) -> httpcore.URL:
    """``url`` as httpcore takes it: its raw scheme, host, port and target (path and
    query), as httpx's transport hands it over; with ``bracket``, an IPv6 literal
    host in brackets. httpcore (1.0.9) sends a request to an HTTP proxy with the URL
    it writes from these parts as the request target, and httpx's raw host has no
    brackets: ``POST http://::1:8000/v1/completions``, which a proxy reads as another
    host or refuses, where RFC 7230 (§5.3.2, and RFC 3986 §3.2.2) asks for
    ``http://[::1]:8000/v1/completions``. The brackets are given only there: the
    host is what a direct connection connects to (and a proxy lane only compares it)."""
    host = b"[" + url.raw_host + b"]" if bracket else url.raw_host
    return httpcore.URL(scheme=url.raw_scheme, host=host, port=url.port, target=url.raw_path)


def _ipv6_proxied(url: httpx.URL, proxy: httpx.Proxy | None) -> bool:
    """Whether ``url``'s host is an IPv6 literal reached through an HTTP(S) proxy, which
    httpcore's request line and CONNECT would name without its brackets
    (:func:`_core_url`, :func:`_tunnel_refused`). A SOCKS proxy takes the address as is."""
    return proxy is not None and proxy.url.scheme in ("http", "https") and b":" in url.raw_host


def _tunnel_refused(url: str, proxy: httpx.Proxy | None) -> None:
    """A :class:`ConfigError` for an https:// judge at an IPv6 literal behind an HTTP(S)
    proxy. httpcore (1.0.9) opens the tunnel with ``CONNECT 2001:db8::1:443`` and
    ``Host: 2001:db8::1:443``, without the brackets RFC 7230 §5.3.3 asks for, which a
    proxy reads as another host or refuses; giving it the host in brackets makes its TLS
    check the judge's certificate against the name ``[2001:db8::1]``, which no
    certificate holds. Refused before any work, with the ways around it (an http://
    judge there is given the brackets: :func:`_core_url`)."""
    parsed = httpx.URL(url)
    if parsed.scheme == "https" and _ipv6_proxied(parsed, proxy):
        assert proxy is not None
        host = f"[{proxy.url.host}]" if ":" in proxy.url.host else proxy.url.host
        at = f"{proxy.url.scheme}://{host}:{proxy.url.port or ''}".rstrip(":")
        raise ConfigError(
            f"the judge at {url} is an IPv6 address reached over https through the proxy "
            f"at {at} (HTTPS_PROXY or ALL_PROXY), and the HTTP library recuse uses names "
            "such an address without its brackets when it asks the proxy for a tunnel — "
            "add the address to NO_PROXY (NO_PROXY='::1', or a network: '2001:db8::/32'), "
            "give the judge by a host name, or use a SOCKS proxy"
        )


def _numbers(values: Sequence[object], kind: type[float] | type[int]) -> list[Any] | None:
    """``values`` converted by ``kind``, or None when one is missing or not a number."""
    if any(v is None or isinstance(v, bool) for v in values):
        return None
    try:
        return [kind(v) for v in values]  # type: ignore[call-overload,arg-type]
    except (TypeError, ValueError, OverflowError):
        return None


#: what to do where a server's prompt log-probs cannot be trusted: they are read for
#: perplexities and for templates whose labels share a first token (whole-label scores)
_LOCAL_FIX = (
    "use a local model (--model FOLDER) for what needs prompt log-probs: --perplexity, "
    "or a judge template whose labels share a first token (scored whole)"
)


class _PromptRejected(Exception):
    """A 4xx answer about this prompt: recorded as failed, not retried."""

    def __init__(self, reason: str, *, said: str = "", status: int | None = None) -> None:
        super().__init__(reason)
        self.said = said  # the whole (scrubbed) body the server sent
        self.status = status

    def message(self) -> str:
        """``HTTP <status>: <message>`` from an OpenAI-style error body (``{"error":
        {"message": ...}}``, as vLLM sends; at most 300 characters of it), else the
        reason."""
        try:
            error = read_json(self.said).get("error")
        except (ValueError, AttributeError):
            return str(self)
        text = error.get("message") if isinstance(error, dict) else None
        if not isinstance(text, str) or self.status is None:
            return str(self)
        return f"HTTP {self.status}: {' '.join(text.split())[:300]}"


#: a JSON escape of a UTF-16 surrogate (``\\ud800``), and a surrogate code point
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def read_json(raw: bytes | str) -> Any:
    """A server's JSON answer as :func:`json.loads` reads it, but that a lone
    surrogate escaped in a string (``"\\ud800"``: valid JSON, yet no UTF-8 text
    holds it, so neither SQLite nor the next request body could take it) reads as
    U+FFFD, in keys too; a pair (``"\\ud83d\\ude00"``) is one character as before.
    ``ValueError`` for a text that is not JSON, not UTF-8, or nested deeper than
    Python's parser goes (its ``RecursionError``)."""
    try:
        data = json.loads(raw)
    except RecursionError:
        raise ValueError("JSON nested deeper than Python parses") from None
    escaped = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if _SURROGATE_ESCAPE.search(escaped) is None:
        return data
    if isinstance(data, str):
        return _SURROGATE.sub("\ufffd", data)
    stack = [data]
    while stack:  # no recursion: the parser's depth again would overflow the stack
        node = stack.pop()
        pairs = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        if isinstance(node, dict):
            node.clear()
        for key, value in pairs:
            if isinstance(value, str):
                value = _SURROGATE.sub("\ufffd", value)
            elif isinstance(value, (dict, list)):
                stack.append(value)
            node[_SURROGATE.sub("\ufffd", key) if isinstance(key, str) else key] = value
    return data


#: compressed bytes handed to a decoder at a time: gzip and deflate make at most about
#: 1,032 bytes of one, so a body that decodes past the bound is stopped about a
#: megabyte past it, never decoded whole into memory (:func:`_decoded_answer`)
DECODE_PIECE = 1024
#: smaller pieces for encodings that make far more of one byte (:data:`DECODE_PIECE`
#: elsewhere): a brotli metablock of 16 MiB takes a few bytes (512 MiB of zeros are 841
#: bytes of brotli, all decoded from one piece of 1,024: a gigabyte of memory), 16
#: bytes of it made at most 16 MiB; zstd's blocks of one repeated byte make 128 KiB of
#: 4 bytes, so 64 bytes at most 2 MiB
DECODE_PIECES = {"br": 16, "zstd": 64}


class _DecodedTooLarge(Exception):
    """A body that decodes to more than the bound (:func:`_decoded_answer`)."""


class _Pieces(httpx.SyncByteStream):
    """Bytes handed on in pieces of at most ``size`` (:data:`DECODE_PIECE`)."""

    def __init__(self, parts: Iterable[bytes], size: int = DECODE_PIECE) -> None:
        self.parts, self.size = parts, size

    def __iter__(self) -> Iterator[bytes]:
        for part in self.parts:
            for start in range(0, len(part), self.size):
                yield part[start : start + self.size]


def _decoded_answer(
    status: int, headers: Sequence[tuple[bytes, bytes]], raw: bytes, most: int
) -> httpx.Response:
    """The answer as httpx reads it, its body decoded by its Content-Encoding(s), but
    a :class:`_DecodedTooLarge` as soon as the decoded body is over ``most`` bytes:
    httpx decoded the whole body at once, so 128 KiB of gzip decoding to 128 MiB (a
    ratio of 1,000, reached by any run of one byte) passed the raw bound and took the
    memory, and a body compressed twice (``gzip, gzip``) a thousand times more. Each
    encoding is undone by httpx's decoder for it (its own response, streamed:
    ``iter_bytes``), fed :data:`DECODE_PIECE` bytes at a time (brotli and zstd fewer:
    :data:`DECODE_PIECES`), the last one's bytes counted; an undecodable body is
    httpx's :class:`httpx.DecodingError`."""
    named = [
        part.strip()
        for key, value in headers
        if key.lower() == b"content-encoding"
        for part in value.decode("latin-1").split(",")
        if part.strip()
    ]
    stream: Iterable[bytes] = [raw]
    for encoding in reversed(named):  # the last applied is undone first
        piece = DECODE_PIECES.get(encoding.lower(), DECODE_PIECE)
        stream = httpx.Response(
            200, headers={"Content-Encoding": encoding}, stream=_Pieces(stream, piece)
        ).iter_bytes()
    parts: list[bytes] = []
    size = 0
    for part in stream:
        size += len(part)
        if size > most:
            said = ", ".join(named)
            raise _DecodedTooLarge(
                f"a body of {len(raw):,} bytes that decodes (Content-Encoding: {said}) to "
                f"over {most:,} bytes, not read"
            )
        parts.append(part)
    kept = [(k, v) for k, v in headers if k.lower() not in (b"content-encoding", b"content-length")]
    return httpx.Response(status, headers=kept, content=b"".join(parts))


async def _read_body(answer: httpcore.Response, most: int) -> bytes:
    """An answer's body, read as it comes; a :class:`TransientError` as soon as it is
    over ``most`` bytes (its Content-Length, or what has come so far), so a broken
    server's endless or gigabyte answer never fills the memory."""
    too_big = TransientError(f"an answer over {most:,} bytes, not read")
    said = [v.strip() for k, v in answer.headers if k.lower() == b"content-length"]
    if said and said[0].isdigit() and int(said[0]) > most:
        raise too_big
    parts: list[bytes] = []
    size = 0
    async for chunk in answer.aiter_stream():
        size += len(chunk)
        if size > most:
            raise too_big
        parts.append(chunk)
    return b"".join(parts)


def _token_id(token: str) -> int | None:
    """N from vLLM's ``token_id:N`` token name, else None."""
    digits = token.removeprefix("token_id:")
    return int(digits) if digits != token and digits.isdigit() else None


def _by_token_id(dist: dict[str, float]) -> dict[int, float] | None:
    """``{id: log-prob}`` from a distribution keyed ``token_id:N``; None when any key
    is not of that form (the server named its tokens by text)."""
    out: dict[int, float] = {}
    for token, lp in dist.items():
        tid = _token_id(token)
        if tid is None:
            return None
        out[tid] = lp
    return out


#: vLLM's per-request switch back to token texts (see HTTPBackend._post_texts)
_TEXT_NAMES = {"return_tokens_as_token_ids": False}


@dataclass(frozen=True)
class _Exact:
    """An answer that honoured ``logprob_token_ids``: the choice, each generated
    token's text (chat: decoded from ``bytes``; empty where the answer has none) and,
    per position, ``{verdict text: log-prob}`` of exactly the requested tokens
    (empty where the answer held no log-probs: nothing was concluded)."""

    choice: dict[str, Any]
    texts: tuple[str, ...]
    dists: tuple[dict[str, float], ...]


def _decoded(choice: dict[str, Any]) -> list[str] | None:
    """Each generated token's text from a chat answer's ``content[i].bytes`` (vLLM
    gives the decoded token there even when the token is named ``token_id:N``;
    bytes of a split character decode to U+FFFD); None where any is missing."""
    lp = choice.get("logprobs")
    content = lp.get("content") if isinstance(lp, dict) else None
    if not isinstance(content, list):
        return None
    out = []
    for entry in content:
        raw = entry.get("bytes") if isinstance(entry, dict) else None
        if not isinstance(raw, list) or not all(
            isinstance(b, int) and not isinstance(b, bool) and 0 <= b < 256 for b in raw
        ):
            return None
        out.append(bytes(raw).decode("utf-8", errors="replace"))
    return out


def _names_ids(parsed: Parsed) -> bool:
    """Does this answer (its :func:`token_logprobs`) name every token (generated and
    top-k) ``token_id:N``?"""
    tokens, dists = parsed
    names = itertools.chain(tokens, *dists)  # read up to the first named by its text
    first = next(names, None)
    if first is None or _token_id(first) is None:
        return False
    return all(_token_id(n) is not None for n in names)


def _text(choice: dict[str, Any]) -> str | None:
    if isinstance(choice.get("text"), str):
        return str(choice["text"])
    message = choice.get("message")
    if isinstance(message, dict) and isinstance(message.get("content"), str):
        return str(message["content"])
    return None
