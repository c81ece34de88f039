"""The HTTP backend's connections at their edges, against stand-ins: an HTTPS judge
reached through an HTTP proxy (a CONNECT tunnel), a proxy given as host:port, the
proxy's password kept out of what is stored, IPv6 and path-prefixed base URLs, answers
whose body cannot be decoded, and runs that end early (an error, Ctrl-C): their
connections closed, and the same backend able to run again without redoing what was
stored. Then NO_PROXY's networks in CIDR form, answers in an encoding no installed
decoder reads, and a keep-alive connection the server closes as a request arrives."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import gc
import importlib.util
import os
import selectors
import signal
import socket
import socketserver
import ssl
import struct
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpcore
import httpx
import httpx._decoders
import pandas as pd
import pytest

from judging import test_http_transport as transport
from judging.helpers import fake_pairs
from recuse.errors import ConfigError, JudgeError
from recuse.judging import RetryPolicy, Runner, Store
from recuse.judging.backends.base import Failure, TransientError
from recuse.judging.backends.http import (
    HTTPBackend,
    _connection_error,
    _env_proxy,
    _httpx_decodes,
)
from recuse.judging.protocols import Message, Prompt
from recuse.testing.standin import StandIn

ONCE, _judge = transport.ONCE, transport._judge
# the fixtures of test_http_transport: the environment without proxy variables, and a
# self-signed certificate for 127.0.0.1 with its key
no_proxy_env, certificate = transport.no_proxy_env, transport.certificate

# --- an HTTP proxy that only tunnels (CONNECT), as in front of an HTTPS judge ---------


def _read_head(conn: socket.socket) -> bytes | None:
    """What a client sent up to and past the end of its request's head (None: it hung
    up before the end)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    return data


class _Tunnel(socketserver.BaseRequestHandler):
    server: _ConnectProxy

    def handle(self) -> None:
        data = _read_head(self.request)
        if data is None:
            return
        head, rest = data.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, v in (h.split(":", 1) for h in lines[1:])}
        self.server.seen.append((lines[0], headers))
        method, target, _ = lines[0].split(" ")
        if method != "CONNECT" or headers.get("proxy-authorization") != self.server.login:
            self.request.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\n\r\n")
            return
        host, port = target.rsplit(":", 1)
        with socket.create_connection((host.strip("[]"), int(port))) as upstream:
            self.request.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            upstream.sendall(rest)
            with selectors.DefaultSelector() as pipes:
                pipes.register(self.request, selectors.EVENT_READ, upstream)
                pipes.register(upstream, selectors.EVENT_READ, self.request)
                while True:
                    for key, _ in pipes.select():
                        chunk = key.fileobj.recv(65536)  # type: ignore[union-attr]
                        if not chunk:
                            return
                        key.data.sendall(chunk)


class _ConnectProxy(socketserver.ThreadingTCPServer):
    daemon_threads = True

    def __init__(self, login: str) -> None:
        super().__init__(("127.0.0.1", 0), _Tunnel)
        self.login = login
        self.seen: list[tuple[str, dict[str, str]]] = []


@pytest.fixture
def connect_proxy() -> Iterator[_ConnectProxy]:
    login = "Basic " + base64.b64encode(b"agent:tunnel-pass-123").decode()
    proxy = _ConnectProxy(login)
    thread = threading.Thread(target=proxy.serve_forever, daemon=True)
    thread.start()
    yield proxy
    proxy.shutdown()
    proxy.server_close()


def test_an_https_judge_behind_an_http_proxy_is_reached_through_a_connect_tunnel(
    tmp_path: Path,
    no_proxy_env: pytest.MonkeyPatch,
    certificate: tuple[Path, Path],
    connect_proxy: _ConnectProxy,
) -> None:
    cert, key = certificate
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    at = f"127.0.0.1:{connect_proxy.server_address[1]}"
    no_proxy_env.setenv("SSL_CERT_FILE", str(cert))
    with StandIn(tls=tls) as server:
        no_proxy_env.setenv("HTTPS_PROXY", f"http://agent:tunnel-pass-123@{at}")
        rows = _judge(HTTPBackend(server.base_url, model="m"), tmp_path / "a", retry=ONCE)
        judged = list(server.seen)
        no_proxy_env.setenv("HTTPS_PROXY", f"http://agent:wrong-pass-456@{at}")
        refused = _judge(HTTPBackend(server.base_url, model="m"), tmp_path / "b", retry=ONCE)
    assert set(rows["status"]) == {"ok"} and len(rows) == 4
    tunnels = [(line, h) for line, h in connect_proxy.seen if "tunnel-pass" in _login(h)]
    assert tunnels and all(
        line == f"CONNECT 127.0.0.1:{server.port} HTTP/1.1" for line, _ in tunnels
    )
    # through the tunnel the judge sees origin-form requests, and never the proxy's login
    assert sorted(t for t, _ in judged) == ["/tokenize"] + ["/v1/completions"] * 4
    assert all("proxy-authorization" not in h for _, h in judged)
    assert all(h["host"] == f"127.0.0.1:{server.port}" for _, h in judged)
    # the proxy refusing the tunnel (407): failed rows saying so, its password not shown
    assert set(refused["status"]) == {"failed"}
    assert refused["reason"].str.contains("connection error: ProxyError").all()
    assert refused["reason"].str.contains(f"through the proxy http://{at} ", regex=False).all()
    assert not refused["reason"].str.contains("wrong-pass").any()


def _login(headers: dict[str, str]) -> str:
    value = headers.get("proxy-authorization", "Basic ")
    return base64.b64decode(value.removeprefix("Basic ")).decode()


def test_a_proxy_given_as_host_and_port_is_an_http_proxy(
    tmp_path: Path, no_proxy_env: pytest.MonkeyPatch
) -> None:
    # HTTP_PROXY=host:port (no scheme) is what curl and httpx's own client read as
    # http://host:port; it used to stop the backend
    with StandIn() as proxy:
        no_proxy_env.setenv("HTTP_PROXY", f"127.0.0.1:{proxy.port}")
        rows = _judge(HTTPBackend("http://judge.invalid:8000/v1", model="m"), tmp_path)
        targets = sorted(t for t, _ in proxy.seen)
    assert set(rows["status"]) == {"ok"}
    judge = "http://judge.invalid:8000"
    assert targets == [f"{judge}/tokenize"] + [f"{judge}/v1/completions"] * 4


def test_the_proxy_password_is_masked_in_what_a_server_sends_back(
    tmp_path: Path, no_proxy_env: pytest.MonkeyPatch
) -> None:
    # the stand-in's 500 echoes the request's headers, Proxy-Authorization among them
    password = "hunter2-proxy-secret"
    with StandIn(faults={"500": 1.0}) as proxy:
        no_proxy_env.setenv("HTTP_PROXY", f"http://agent:{password}@127.0.0.1:{proxy.port}")
        backend = HTTPBackend("http://judge.invalid:8000/v1", model="m", verdict_token_ids=False)
        rows = _judge(backend, tmp_path, retry=ONCE)
    assert set(rows["status"]) == {"failed"}
    assert rows["reason"].str.contains("HTTP 500").all()
    assert rows["reason"].str.contains("proxy-authorization").all()  # the echo is there
    login = base64.b64encode(f"agent:{password}".encode()).decode()
    for form in (password, login, login[8:20]):
        assert not rows["reason"].str.contains(form, regex=False).any()


# --- base URLs ------------------------------------------------------------------------


def _ipv6() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _ipv6(), reason="no IPv6 loopback")
def test_an_ipv6_literal_base_url_with_a_path_prefix_and_a_trailing_slash(
    tmp_path: Path, no_proxy_env: pytest.MonkeyPatch
) -> None:
    with StandIn(host="::1") as server:
        base = f"http://[::1]:{server.port}/openai/v1/"
        rows = _judge(HTTPBackend(base, model="m", verdict_token_ids=False), tmp_path)
        seen = list(server.seen)
    assert set(rows["status"]) == {"ok"}
    assert [t for t, _ in seen] == ["/openai/v1/completions"] * 4
    assert {h["host"] for _, h in seen} == {f"[::1]:{server.port}"}  # bracketed, as httpx


def test_an_ipv6_judge_behind_an_http_proxy_is_named_in_brackets(
    tmp_path: Path, no_proxy_env: pytest.MonkeyPatch
) -> None:
    """RFC 7230 §5.3.2: the absolute-form target sent to a proxy writes an IPv6 literal
    in brackets. httpcore 1.0.9 wrote it bare (``POST http://::1:8000/v1/completions``):
    the proxy reads another host, or refuses. Nothing listens at the judge; the proxy
    records what it was asked and answers as the judge."""
    with StandIn() as proxy:
        no_proxy_env.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
        backend = HTTPBackend("http://[::1]:8000/v1", model="m", verdict_token_ids=False)
        rows = _judge(backend, tmp_path / "a")
        forwarded = list(proxy.seen)
    assert set(rows["status"]) == {"ok"}
    assert [t for t, _ in forwarded] == ["http://[::1]:8000/v1/completions"] * 4
    assert {h["host"] for _, h in forwarded} == {"[::1]:8000"}


@pytest.mark.parametrize(
    ("proxy", "named"),
    [
        ("http://agent:pass-456@proxy.example:3128", "http://proxy.example:3128"),
        ("https://p.example", "https://p.example"),
        # the proxy at an IPv6 address is named in brackets too (not http://fd00::9:3128)
        ("http://agent:pass-456@[fd00::9]:3128", "http://[fd00::9]:3128"),
    ],
)
def test_an_https_judge_at_an_ipv6_literal_behind_an_http_proxy_is_refused_with_the_fix(
    no_proxy_env: pytest.MonkeyPatch, proxy: str, named: str
) -> None:
    """httpcore 1.0.9 asks the proxy for ``CONNECT 2001:db8::1:443`` (RFC 7230 §5.3.3
    wants ``[2001:db8::1]:443``), and a bracketed host would have its TLS check the
    judge's certificate against "[2001:db8::1]": refused before any request, naming the
    ways around it and not the proxy's password. NO_PROXY, a host name and a SOCKS proxy
    are accepted."""
    no_proxy_env.setenv("HTTPS_PROXY", proxy)
    with pytest.raises(ConfigError, match=r"IPv6 address .* NO_PROXY") as refused:
        HTTPBackend("https://[2001:db8::1]/v1", model="m")
    assert "pass-456" not in str(refused.value)
    assert f"through the proxy at {named} (" in str(refused.value)
    HTTPBackend("https://judge.example/v1", model="m")
    HTTPBackend("http://[2001:db8::1]/v1", model="m")  # bracketed by us (above)
    no_proxy_env.setenv("NO_PROXY", "2001:db8::/32")
    HTTPBackend("https://[2001:db8::1]/v1", model="m")
    no_proxy_env.delenv("NO_PROXY")
    no_proxy_env.setenv("HTTPS_PROXY", "socks5://127.0.0.1:1080")
    if importlib.util.find_spec("socksio") is not None:
        HTTPBackend("https://[2001:db8::1]/v1", model="m")


# --- answers whose body cannot be decoded ---------------------------------------------


class _Undecodable(StandIn):
    """Answers with ``status`` and a body that is not what its Content-Encoding says."""

    status: int = 429
    encoding: str = "gzip"

    async def _respond(
        self, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        self.requests += 1
        extra = {"Content-Encoding": self.encoding, "Retry-After": "3"}
        return self.status, extra, b"\x1f\x8b not compressed"


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_an_undecodable_error_body_keeps_what_its_status_says(
    no_proxy_env: pytest.MonkeyPatch, encoding: str
) -> None:
    def post(server: _Undecodable) -> BaseException:
        backend = HTTPBackend(server.base_url, model="m", verdict_token_ids=False)

        async def go() -> None:
            try:
                await backend._post("/completions", {"prompt": "x"})
            finally:
                await backend.aclose()

        with pytest.raises(Exception) as err:
            asyncio.run(go())
        return err.value

    with _Undecodable() as server:
        server.encoding = encoding
        limited = post(server)  # 429: retried after the server's Retry-After
        server.status = 401
        refused = post(server)  # the key refused: the run stops
        server.status = 400
        rejected = post(server)  # this prompt refused: a failed row, not retried
        server.status = 200
        garbled = post(server)
    assert isinstance(limited, TransientError) and limited.retry_after == 3.0
    assert "HTTP 429" in limited.reason and "could not be decoded" in limited.reason
    assert isinstance(refused, JudgeError) and "HTTP 401" in str(refused)
    assert type(rejected).__name__ == "_PromptRejected" and "HTTP 400" in str(rejected)
    assert isinstance(garbled, TransientError) and "could not be decoded" in garbled.reason


def _gzip_of_spaces(json_text: bytes, size: int, *, times: int) -> bytes:
    """``json_text`` followed by spaces up to ``size`` bytes (still the same JSON),
    gzip-compressed ``times`` times over, made a megabyte at a time (never whole)."""
    import zlib

    body = json_text
    for _ in range(times):
        packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # gzip's framing
        parts = [packer.compress(body)]
        left = size - len(body) if _ == 0 else 0
        while left > 0:
            parts.append(packer.compress(b" " * min(left, 2**20)))
            left -= 2**20
        parts.append(packer.flush())
        body = b"".join(parts)
    return body


class _Bomb(StandIn):
    """Answers each completion with its JSON padded to ``size`` bytes of spaces and
    gzip-compressed ``times`` times (``Content-Encoding: gzip`` that many times over),
    with ``status``: a few kilobytes that decode to ``size``."""

    size: int = 64 * 2**20
    times: int = 1
    status: int = 200

    async def _respond(
        self, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        status, extra, payload = await super()._respond(path, headers, raw)
        if path == "/tokenize":
            return status, extra, payload
        body = _gzip_of_spaces(payload, self.size, times=self.times)
        return self.status, {**extra, "Content-Encoding": ", ".join(["gzip"] * self.times)}, body


@pytest.mark.parametrize(("times", "size"), [(1, 64 * 2**20), (2, 512 * 2**20)])
def test_a_gzip_bomb_is_a_failed_call_not_decoded_into_memory(
    no_proxy_env: pytest.MonkeyPatch, times: int, size: int
) -> None:
    """The raw body was bounded (MAX_ANSWER_BYTES), but a gzip body decoded whole in
    memory: 64 KiB of gzip from a hostile server took 64 MiB (and gzip of gzip, a few
    KiB, 512 MiB), past the bound 1,000-fold. Now the decoding stops at the bound (here
    lowered to 1 MiB): a failed call naming the server, the memory the decoding took a
    few MiB (measured by tracemalloc, which counts the decoders' buffers); a 401's
    bomb still stops the run. A body under the bound decodes as before."""
    import gc as collector
    import tracemalloc

    def post(server: _Bomb) -> dict[str, Any]:
        backend = HTTPBackend(server.base_url, model="m", verdict_token_ids=False)
        backend.max_answer_bytes = 2**20

        async def go() -> dict[str, Any]:
            try:
                return await backend._post("/completions", {"prompt": "Which is better?"})
            finally:
                await backend.aclose()

        return asyncio.run(go())

    with _Bomb() as server:
        server.size, server.times = size, times
        collector.collect()
        tracemalloc.start()
        try:
            with pytest.raises(TransientError) as err:
                post(server)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        encoding = ", ".join(["gzip"] * times)
        assert err.value.reason.startswith(f"the server at {server.base_url}/completions ")
        assert f"(Content-Encoding: {encoding}) to over 1,048,576 bytes, not read" in (
            err.value.reason
        )
        assert peak < 16 * 2**20, f"{peak:,} bytes at the peak"
        server.status = 401
        with pytest.raises(JudgeError, match="HTTP 401"):
            post(server)
        server.status, server.size = 200, 2**20 - 1  # one byte under the bound: read
        assert post(server)["choices"]


# --- runs that end early ----------------------------------------------------------------


def _fds(settled: int | None = None) -> int:
    """Open file descriptors of this process; with ``settled``, waited for (up to
    5 s) to come down to it: the stand-in's thread closes its side of each
    connection when it reads the client's close."""
    deadline = time.monotonic() + 5
    while True:
        n = len(os.listdir("/proc/self/fd"))
        if settled is None or n <= settled or time.monotonic() > deadline:
            return n
        time.sleep(0.02)


class _Revoked(StandIn):
    """Answers 401 from the ``after``-th judgment on, until ``after`` is raised."""

    after: int = 10**9

    async def _respond(
        self, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        if path != "/tokenize" and self.requests >= self.after:
            self.requests += 1
            return 401, {}, b'{"error": "key revoked"}'
        return await super()._respond(path, headers, raw)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts /proc/self/fd")
@pytest.mark.filterwarnings("error::ResourceWarning")
@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_a_run_stopped_by_an_error_closes_its_connections_and_the_backend_runs_again(
    tmp_path: Path, no_proxy_env: pytest.MonkeyPatch
) -> None:
    pairs = pd.DataFrame(fake_pairs(100))
    with _Revoked(latency=0.01) as server:
        server.after = 60
        backend = HTTPBackend(server.base_url, model="m", concurrency=64)
        with Store(tmp_path / "s.db") as store:
            store.judgments()  # the store's files open
            before = _fds()
            with pytest.raises(JudgeError, match="HTTP 401"):
                Runner(backend, store, progress=False).pairwise(pairs)
            # every lane closed with the run's event loop: no socket left behind
            assert backend._open == [] and _fds(before) == before
            stored = len(store.judgments())
            # every judgment the server answered is stored: the calls in flight when
            # the 401 came finished (before, one answered first and stopped them
            # unstored: 0 stored under load); the calls not yet sent were not sent
            assert stored == server.after == 60
            assert len(server.bodies) - stored <= backend.concurrency
            server.after, asked = 10**9, len(server.bodies)
            Runner(backend, store, progress=False).pairwise(pairs)  # the key fixed
            # nothing lost, nothing stored asked again
            assert len(server.bodies) - asked == 200 - stored
            assert set(store.judgments()["status"]) == {"ok"} and len(store.judgments()) == 200
            assert backend._open == [] and _fds(before) == before
        del backend
        gc.collect()  # nothing unclosed found (ResourceWarning) either


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts /proc/self/fd")
@pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread()
    or signal.getsignal(signal.SIGINT) is not signal.default_int_handler,
    reason="Ctrl-C is sent to the main thread with Python's own SIGINT handler",
)
def test_ctrl_c_mid_run_then_resume_loses_nothing_and_redoes_nothing(
    tmp_path: Path, no_proxy_env: pytest.MonkeyPatch
) -> None:
    pairs = pd.DataFrame(fake_pairs(100))

    ended = threading.Event()  # the run ended otherwise: no Ctrl-C into pytest then

    def interrupt(server: StandIn) -> None:
        while server.requests < 40 and not ended.wait(0.005):
            pass
        if not ended.is_set():
            os.kill(os.getpid(), signal.SIGINT)

    with StandIn(latency=0.05) as server:
        backend = HTTPBackend(server.base_url, model="m", concurrency=16)
        with Store(tmp_path / "s.db") as store:
            store.judgments()  # the store's files open
            before = _fds()
            sender = threading.Thread(target=interrupt, args=(server,))
            sender.start()
            try:
                with pytest.raises(KeyboardInterrupt):
                    Runner(backend, store, progress=False).pairwise(pairs)
            finally:
                ended.set()
                sender.join()
            assert backend._open == [] and _fds(before) == before
            stored = store.judgments()
            assert 0 < len(stored) < 200 and set(stored["status"]) == {"ok"}
            asked = len(server.bodies)
            Runner(backend, store, progress=False).pairwise(pairs)
            assert len(server.bodies) - asked == 200 - len(stored)
            done = store.judgments()
        # what was stored before Ctrl-C is kept as it was
        key = ["item_id", "slot"]
        kept = done.merge(stored[[*key, "value"]], on=key, suffixes=("", "_before"))
        assert len(kept) == len(stored) and (kept["value"] == kept["value_before"]).all()
        assert len(done) == 200 and set(done["status"]) == {"ok"}


# --- TLS ---------------------------------------------------------------------------------


class _Counted(HTTPBackend):
    """Records the prompts of every call (each attempt is one)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sent: list[tuple[str, ...]] = []

    async def next_token_logprobs(  # type: ignore[override]
        self, prompts: Sequence[Prompt], **options: Any
    ) -> list[dict[str, float] | Failure]:
        self.sent.append(tuple(p.canonical() for p in prompts))
        return await super().next_token_logprobs(prompts, **options)


def test_a_certificate_that_cannot_be_verified_stops_the_run_and_says_why(
    tmp_path: Path,
    no_proxy_env: pytest.MonkeyPatch,
    certificate: tuple[Path, Path],
) -> None:
    """No retry can verify a certificate: the run stops at the first failure (with the
    default retries it once spent 5 attempts, with back-off, on every batch) and says
    why, as a 401 does; nothing is stored as a verdict."""
    cert, key = certificate
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    with StandIn(tls=tls) as server:
        other_name = server.base_url.replace("127.0.0.1", "localhost")
        for base, trust, why in (
            (server.base_url, None, "self-signed certificate"),
            (other_name, cert, "Hostname mismatch"),  # trusted, but named for 127.0.0.1
        ):
            if trust is not None:
                no_proxy_env.setenv("SSL_CERT_FILE", str(trust))
            backend = _Counted(base, model="m")
            with pytest.raises(JudgeError) as caught:
                _judge(backend, tmp_path / why)  # default retries
            # one attempt: no call was sent again (counted, not timed: a loaded
            # machine's slow attempt read as a back-off against a wall-clock bound)
            assert backend.sent and len(set(backend.sent)) == len(backend.sent)
            said = str(caught.value)
            assert said.startswith(f"cannot judge with the server at {base}/completions")
            assert "connection error: ConnectError" in said and why in said
            assert "SSL_CERT_FILE" in said
            with Store(tmp_path / why / "s.db") as store:
                assert store.judgments().empty
        assert server.requests == 0


class _Trickle(socketserver.BaseRequestHandler):
    """Answers 200 with a 2,000-byte body sent a byte every 50 ms (a slow-loris)."""

    def handle(self) -> None:
        if _read_head(self.request) is None:
            return
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2000\r\n\r\n"
        with contextlib.suppress(OSError):  # the client hangs up
            self.request.sendall(head)
            for _ in range(2000):
                time.sleep(0.05)
                self.request.sendall(b" ")


def test_the_timeout_bounds_the_whole_request_not_each_read(
    no_proxy_env: pytest.MonkeyPatch,
) -> None:
    """Each byte comes well within the timeout, so a bound on each read alone (httpcore's)
    held a 0.5 s request open for the body's 100 s; the timeout is the request's."""
    with _serving(_Trickle) as port:
        backend = HTTPBackend(f"http://127.0.0.1:{port}/v1", model="m", timeout=0.5)
        prompt = Prompt((Message("user", "Which is better?"),), prefix="[[")
        t0 = time.perf_counter()
        with pytest.raises(TransientError, match=r"timeout after 0\.5 s"):
            asyncio.run(backend.next_token_logprobs([prompt]))
        # far from the body's 100 s (a bound near the 0.5 s was a loaded machine's race)
        assert time.perf_counter() - t0 < 20.0


@contextlib.contextmanager
def _serving(handler: type[socketserver.BaseRequestHandler]) -> Iterator[int]:
    """A threaded TCP server on a free local port with ``handler``, its port given,
    shut down after."""
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


class _Flood(socketserver.BaseRequestHandler):
    """Answers 200 with an endless body (chunked, 64 KiB a chunk; ``declared``: a
    Content-Length of 10 GB instead, the body as endless) until the client hangs up."""

    declared = False

    def handle(self) -> None:
        if _read_head(self.request) is None:
            return
        size = b"Content-Length: 10000000000" if self.declared else b"Transfer-Encoding: chunked"
        chunk = b"10000\r\n" + b" " * 0x10000 + b"\r\n"
        with contextlib.suppress(OSError):  # the client hangs up
            self.request.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
            self.request.sendall(size + b"\r\n\r\n")
            for _ in range(200_000):  # 12.5 GiB at most
                self.request.sendall(chunk[7:-2] if self.declared else chunk)


@pytest.mark.parametrize("declared", [False, True])
def test_an_endless_answer_is_a_failed_call_not_read_into_memory(
    no_proxy_env: pytest.MonkeyPatch, declared: bool
) -> None:
    """A broken server or proxy's endless (or 10 GB) answer was read whole into memory
    until the timeout: at 1 GB/s a minute's timeout is 60 GB, and 8 such requests in
    flight ended the run for lack of memory. It fails once past the bound instead."""
    handler = type("Flood", (_Flood,), {"declared": declared})
    with _serving(handler) as port:
        backend = HTTPBackend(f"http://127.0.0.1:{port}/v1", model="m", timeout=30)
        assert backend.max_answer_bytes == 128 * 2**20
        backend.max_answer_bytes = 2**20
        prompt = Prompt((Message("user", "Which is better?"),), prefix="[[")
        t0 = time.perf_counter()
        with pytest.raises(TransientError, match=r"an answer over 1,048,576 bytes, not read"):
            asyncio.run(backend.next_token_logprobs([prompt]))
        assert time.perf_counter() - t0 < 20.0  # not the 30 s timeout


def test_a_base_urls_query_stays_after_the_path(
    tmp_path: Path, no_proxy_env: pytest.MonkeyPatch
) -> None:
    """Azure's ``?api-version=`` on the base URL: the path goes before the query (it
    was sent as ``/v1?api-version=…/completions``)."""
    with StandIn() as server:
        base = server.base_url + "/?api-version=2024-02-01"
        rows = _judge(HTTPBackend(base, model="m"), tmp_path)
    assert set(rows["status"]) == {"ok"}
    # the completions, and the token-id lookup under the server's root, both keep it
    assert {target for target, _ in server.seen} == {
        "/v1/completions?api-version=2024-02-01",
        "/tokenize?api-version=2024-02-01",
    }


@pytest.mark.parametrize("entry", ["127.0.0.1:{port}", "127.0.0.1", ".0.0.1"])
def test_no_proxy_names_a_host_with_its_port_too(
    tmp_path: Path, no_proxy_env: pytest.MonkeyPatch, entry: str
) -> None:
    """NO_PROXY's host:port entries (as httpx's own client reads them) were missed: the
    bare host name alone was matched."""
    with socket.socket() as s:  # a proxy nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    with StandIn() as server:
        no_proxy_env.setenv("HTTP_PROXY", f"http://127.0.0.1:{dead}")
        no_proxy_env.setenv("NO_PROXY", entry.format(port=server.port))
        rows = _judge(HTTPBackend(server.base_url, model="m"), tmp_path, retry=ONCE)
    assert set(rows["status"]) == {"ok"}


class _SlowFirstTokenize(StandIn):
    """Its first /tokenize answer takes 10 s (the lookup is in flight for sure)."""

    async def _respond(
        self, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        if path == "/tokenize" and self.tokenize_calls == 0:
            self.tokenize_calls += 1
            await asyncio.sleep(10)
        return await super()._respond(path, headers, raw)


def test_a_token_id_lookup_cut_off_with_an_earlier_event_loop_is_asked_again(
    no_proxy_env: pytest.MonkeyPatch,
) -> None:
    # the lookup is shared by the requests in flight (a shielded task), so a run's end
    # does not wait for it: asyncio.run cancels it as that loop closes. The next run
    # on the same backend asks again instead of inheriting the cancellation
    candidates = ("A", "B")
    with _SlowFirstTokenize(token_ids="honoured") as server:
        backend = HTTPBackend(server.base_url, model="m")

        async def cut_off() -> None:
            asking = asyncio.ensure_future(backend._verdict_ids(candidates))
            while server.tokenize_calls == 0:
                await asyncio.sleep(0.001)
            assert not asking.done()  # the loop ends with the lookup in flight

        asyncio.run(cut_off())
        assert backend._ids[("", *candidates)].cancelled()  # no opener: the texts alone

        async def again() -> dict[int, str]:
            try:
                return await backend._verdict_ids(candidates)
            finally:
                await backend.aclose()

        with _abandoning():
            found = asyncio.run(again())
    assert sorted(found.values()) == ["A", "B"]


def test_the_backend_serves_a_second_event_loop_after_one_ended_without_aclose(
    no_proxy_env: pytest.MonkeyPatch,
) -> None:
    # asyncio.run twice on one backend (a library user's pattern): the first loop's
    # keep-alive connections cannot serve the second (before: "Event loop is closed")
    prompt = Prompt((Message("user", "Which is better?"),), prefix="[[")
    with StandIn() as server:
        backend = HTTPBackend(server.base_url, model="m")
        first = asyncio.run(backend.next_token_logprobs([prompt]))
        with _abandoning():
            second = asyncio.run(backend.next_token_logprobs([prompt]))
            asyncio.run(backend.aclose())
        assert server.requests == 2
    assert first == second


@contextlib.contextmanager
def _abandoning() -> Iterator[None]:
    """Where the lanes left with a closed event loop are dropped (nothing can close
    them there) and collected: their sockets' ResourceWarning is the one a caller
    that skips aclose earns, expected here rather than blamed on a later test."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        yield
        gc.collect()


def test_a_refused_connection_says_so_and_through_which_proxy(
    tmp_path: Path, no_proxy_env: pytest.MonkeyPatch
) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    direct = _judge(
        HTTPBackend(f"http://127.0.0.1:{dead}/v1", model="m"), tmp_path / "a", retry=ONCE
    )
    no_proxy_env.setenv("HTTP_PROXY", f"http://agent:pw-0123456789@127.0.0.1:{dead}")
    proxied = _judge(HTTPBackend("http://judge.invalid/v1", model="m"), tmp_path / "b", retry=ONCE)
    refused = "connection error: ConnectError (refused: nothing listens at that address and port)"
    assert (direct["reason"] == f"gave up after 1 attempts: {refused}").all()
    via = f"(through the proxy http://127.0.0.1:{dead} the environment names)"
    assert proxied["reason"].str.contains(via, regex=False).all()
    assert proxied["reason"].str.contains("(refused:", regex=False).all()
    assert not proxied["reason"].str.contains("pw-0123456789").any()


def test_a_host_name_not_resolved_says_so() -> None:
    # the chain httpcore raises (anyio's connect: socket.getaddrinfo's error), made
    # here: resolving a name that does not exist can hang where DNS is unreachable
    try:
        try:
            raise socket.gaierror(-2, "Name or service not known")
        except socket.gaierror as exc:
            raise httpcore.ConnectError(str(exc)) from exc
    except httpcore.ConnectError as err:
        said = _connection_error(err, None)
    assert said == "connection error: ConnectError (the host name could not be resolved)"


# --- NO_PROXY's networks in CIDR form ---------------------------------------------------

NETWORKS = "10.0.0.0/8, 192.168.1.0/24,::1/128"


@pytest.mark.parametrize(
    ("no_proxy", "url", "around"),
    [
        (NETWORKS, "http://10.2.3.4:8000/v1", True),
        (NETWORKS, "http://192.168.1.77/v1", True),
        (NETWORKS, "http://192.168.2.1/v1", False),  # next to the /24, not in it
        (NETWORKS, "http://11.0.0.1/v1", False),
        (NETWORKS, "http://[::1]:8000/v1", True),
        (NETWORKS, "http://[::2]:8000/v1", False),
        (NETWORKS, "https://judge.example/v1", False),
        # a host name is not resolved: localhost is not matched by 127.0.0.0/8
        ("127.0.0.0/8", "http://localhost:8000/v1", False),
        ("127.0.0.0/8", "http://127.9.8.7:8000/v1", True),
        ("10.1.2.3/8", "http://10.200.0.1/v1", True),  # host bits set: the /8 still
        ("[fd00::]/8", "http://[fd12::5]/v1", True),
        ("::/0", "http://10.0.0.1/v1", False),  # an IPv6 network holds no IPv4 address
        ("0.0.0.0/0", "http://[::1]/v1", False),
        ("10.0.0.0/33,judge", "http://10.0.0.1/v1", False),  # not a network: no match
        ("10.0.0.0/33,judge", "http://judge:8000/v1", True),
        # an address alone matches however either side writes it
        ("2001:db8::1", "https://[2001:db8:0::1]/v1", True),
        ("[2001:db8:0:0::1]", "https://[2001:DB8::1]:8443/v1", True),
        ("2001:db8::1", "https://[2001:db8::2]/v1", False),
        ("::1", "http://127.0.0.1/v1", False),
        # the forms read before stay as they were
        ("judge.example", "https://judge.example/v1", True),
        (".example", "https://a.judge.example/v1", True),
        (".example", "https://judge.example.org/v1", False),
        ("judge:8000", "http://judge:8000/v1", True),
        ("judge:8000", "http://judge:9000/v1", False),
        ("[::1]", "http://[::1]:8000/v1", True),
        ("*", "http://10.0.0.1/v1", True),
    ],
)
def test_no_proxy_reads_networks_in_cidr_form_and_every_earlier_form(
    no_proxy_env: pytest.MonkeyPatch, no_proxy: str, url: str, around: bool
) -> None:
    no_proxy_env.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    no_proxy_env.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    no_proxy_env.setenv("NO_PROXY", no_proxy)
    proxy = _env_proxy(url)
    assert (proxy is None) is around
    if not around:
        assert proxy is not None and proxy.url == "http://127.0.0.1:9"


@pytest.mark.parametrize("lower", [False, True])
def test_a_judge_inside_a_no_proxy_network_is_reached_around_the_proxy(
    tmp_path: Path, no_proxy_env: pytest.MonkeyPatch, lower: bool
) -> None:
    with socket.socket() as s:  # a proxy nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    name = "no_proxy" if lower else "NO_PROXY"
    with StandIn() as server:
        no_proxy_env.setenv("HTTP_PROXY", f"http://127.0.0.1:{dead}")
        no_proxy_env.setenv(name, "10.0.0.0/8,127.0.0.0/8")
        around = _judge(HTTPBackend(server.base_url, model="m"), tmp_path / "a", retry=ONCE)
        no_proxy_env.setenv(name, "10.0.0.0/8,127.0.1.0/24")  # 127.0.0.1 is outside
        via = _judge(HTTPBackend(server.base_url, model="m"), tmp_path / "b", retry=ONCE)
    assert set(around["status"]) == {"ok"}
    assert set(via["status"]) == {"failed"}
    assert via["reason"].str.contains(f"proxy http://127.0.0.1:{dead}", regex=False).all()


@pytest.mark.skipif(not _ipv6(), reason="no IPv6 loopback")
def test_an_ipv6_judge_inside_a_no_proxy_network_is_reached_around_the_proxy(
    tmp_path: Path, no_proxy_env: pytest.MonkeyPatch
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    with StandIn(host="::1") as server:
        no_proxy_env.setenv("HTTP_PROXY", f"http://127.0.0.1:{dead}")
        no_proxy_env.setenv("NO_PROXY", "10.0.0.0/8,::1/128")
        base = f"http://[::1]:{server.port}/v1"
        rows = _judge(HTTPBackend(base, model="m"), tmp_path, retry=ONCE)
    assert set(rows["status"]) == {"ok"}


# --- answers in an encoding nothing here decodes ------------------------------------------


class _Encoded(StandIn):
    """Answers with ``Content-Encoding: encoding``, the body base64 under it (what the
    decoder a test installs for that name reads), ``status`` when set."""

    encoding: str = "br"
    status: int | None = None

    async def _respond(
        self, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        status, extra, payload = await super()._respond(path, headers, raw)
        if self.status is not None:
            status, extra = self.status, {**extra, "Retry-After": "3"}
        return status, {**extra, "Content-Encoding": self.encoding}, base64.b64encode(payload)


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


@pytest.mark.parametrize(
    ("encoding", "fix"),
    [
        pytest.param(
            "br",
            "install the brotli package (pip install brotli)",
            marks=pytest.mark.skipif(
                _has("brotli") or _has("brotlicffi"), reason="brotli is installed"
            ),
        ),
        pytest.param(
            "zstd",
            "install the zstandard package (pip install zstandard)",
            marks=pytest.mark.skipif(_has("zstandard"), reason="zstandard is installed"),
        ),
        ("x-squash", "configure the server to answer uncompressed or in gzip"),
    ],
)
def test_an_answer_in_an_encoding_with_no_decoder_here_says_which_and_how_to_fix_it(
    tmp_path: Path, no_proxy_env: pytest.MonkeyPatch, encoding: str, fix: str
) -> None:
    # no Accept-Encoding is sent, but a server (or a proxy) may compress anyway; httpx
    # passes a body it has no decoder for through as it came: "malformed JSON" before
    with _Encoded() as server:
        server.encoding = encoding
        with pytest.raises(JudgeError) as stopped:
            _judge(HTTPBackend(server.base_url, model="m"), tmp_path)
        server.status = 429
        with pytest.raises(TransientError) as limited:
            asyncio.run(HTTPBackend(server.base_url, model="m")._post("/completions", {}))
    said = str(stopped.value)
    assert f"in Content-Encoding {encoding!r}, which cannot be decoded here" in said
    assert fix in said and "JSON" not in said
    assert server.base_url in said
    # an error status keeps what it says (retried after its Retry-After), the body named
    assert limited.value.retry_after == 3.0
    assert limited.value.reason.startswith(f"HTTP 429: (a body in Content-Encoding {encoding!r}")


class _Base64Decoder:
    """A decoder for the tests' stand-in encoding: the whole body base64 (httpx hands
    a body given at once over in one piece)."""

    def __init__(self) -> None:
        self.seen = b""

    def decode(self, data: bytes) -> bytes:
        self.seen += data
        return b""

    def flush(self) -> bytes:
        try:  # as httpx's own decoders do, a body not so encoded is a DecodingError
            return base64.b64decode(self.seen, validate=True)
        except ValueError as exc:
            raise httpx.DecodingError(str(exc)) from exc


def test_an_encoding_is_decoded_once_httpx_has_a_decoder_for_it(
    tmp_path: Path, no_proxy_env: pytest.MonkeyPatch
) -> None:
    # what httpx can decode is asked at run time, not written down: with a decoder
    # installed for "zstd" (as zstandard installs one) the answers are read
    no_proxy_env.setitem(httpx._decoders.SUPPORTED_DECODERS, "zstd", _Base64Decoder)
    _httpx_decodes.cache_clear()
    try:
        with StandIn() as plain, _Encoded() as packed:
            packed.encoding = "zstd"
            want = _judge(HTTPBackend(plain.base_url, model="m"), tmp_path / "a")
            got = _judge(HTTPBackend(packed.base_url, model="m"), tmp_path / "b")
    finally:
        _httpx_decodes.cache_clear()
    assert set(got["status"]) == {"ok"}
    key = ["item_id", "slot"]
    assert got.sort_values(key)["value"].tolist() == want.sort_values(key)["value"].tolist()


# --- a keep-alive connection the server closes as a request arrives ----------------------


def _read_message(conn: socket.socket) -> bytes | None:
    """One HTTP/1.1 message (a request or an answer) read whole: its head and the body
    its Content-Length gives (None: the peer hung up first)."""
    data = _read_head(conn)
    if data is None:
        return None
    head, body = data.split(b"\r\n\r\n", 1)
    fields = (line.split(b":", 1) for line in head.split(b"\r\n")[1:] if b":" in line)
    length = next((int(v) for k, v in fields if k.strip().lower() == b"content-length"), 0)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        body += chunk
    return head + b"\r\n\r\n" + body


class _ClosingFront(socketserver.BaseRequestHandler):
    """Passes requests to the stand-in behind it, one connection upstream per client
    connection, except one: the first request to come on a connection that already
    served one is not answered and the connection is closed (or reset, with
    ``reset``), as a server does whose keep-alive timer fires with the request in
    flight (uvicorn's, 5 s idle: against uvicorn the client read a reset)."""

    server: _Front

    def handle(self) -> None:
        served = 0
        with socket.create_connection(("127.0.0.1", self.server.upstream)) as up:
            while (request := _read_message(self.request)) is not None:
                self.server.arrived += 1
                if served and not self.server.dropped:
                    self.server.dropped = True
                    if self.server.reset:  # the request's bytes met a closed socket: RST
                        linger = struct.pack("ii", 1, 0)
                        self.request.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
                        self.request.close()  # at once: socketserver's close sends a FIN first
                    return  # closed unanswered (the with-block and socketserver close it)
                up.sendall(request)
                answer = _read_message(up)
                if answer is None:
                    return
                self.request.sendall(answer)
                served += 1


class _Front(socketserver.ThreadingTCPServer):
    daemon_threads = True

    def __init__(self, upstream: int, *, reset: bool) -> None:
        super().__init__(("127.0.0.1", 0), _ClosingFront)
        self.upstream = upstream
        self.reset = reset
        self.arrived = 0
        self.dropped = False


@contextlib.contextmanager
def _front(upstream: int, *, reset: bool) -> Iterator[tuple[_Front, str]]:
    """A :class:`_Front` serving, and the base URL that reaches it."""
    front = _Front(upstream, reset=reset)
    threading.Thread(target=front.serve_forever, daemon=True).start()
    try:
        yield front, f"http://127.0.0.1:{front.server_address[1]}/v1"
    finally:
        front.shutdown()
        front.server_close()


@pytest.mark.parametrize("reset", [False, True])
def test_a_request_on_a_connection_the_server_closed_is_retried_once_and_succeeds(
    tmp_path: Path, no_proxy_env: pytest.MonkeyPatch, reset: bool
) -> None:
    # one request at a time, so the second reuses the first's keep-alive connection:
    # the server closes it unanswered; the request is a transient failure (the server
    # disconnected, or reset the connection), retried once by the runner on a new
    # connection, and answered
    prompt = Prompt((Message("user", "Which is better?"),), prefix="[[")
    with StandIn() as server:
        with _front(server.port, reset=reset) as (front, base):
            backend = HTTPBackend(base, model="m", concurrency=1, verdict_token_ids=False)
            retry = RetryPolicy(max_attempts=3, base_delay=0.01)
            rows = _judge(backend, tmp_path, n=3, retry=retry)
        assert front.dropped
        assert front.arrived == 7 and server.requests == 6  # the dropped one never got there
        with _front(server.port, reset=reset) as (front, base):  # what the runner was told
            backend = HTTPBackend(base, model="m", verdict_token_ids=False)

            async def three() -> tuple[str, bool]:
                await backend.next_token_logprobs([prompt])
                with pytest.raises(TransientError) as dropped:
                    await backend.next_token_logprobs([prompt])
                after = await backend.next_token_logprobs([prompt])
                await backend.aclose()
                return dropped.value.reason, bool(after)

            said, answered = asyncio.run(three())
    assert set(rows["status"]) == {"ok"}
    assert sorted(rows["attempts"]) == [1, 1, 1, 1, 1, 2]  # one request, retried once
    kind = "ReadError" if reset else "RemoteProtocolError"  # a reset, or a plain close
    assert said == f"connection error: {kind}" and answered


def test_a_brotli_bomb_is_stopped_within_megabytes_of_the_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Brotli makes megabytes of a byte (512 MiB of zeros are 841 bytes of it), and its
    decoder was fed 1,024 bytes at a time, as gzip's is: a brotli body was decoded
    whole past the bound (a gigabyte of memory for those 841 bytes). A stand-in brotli
    decoder that makes 64 KiB of each byte (httpx's own needs the brotli package) is
    now fed few enough that the decoding stops within 1 MiB of the bound (1 MiB here):
    64 MiB were decoded before."""
    from httpx import _decoders

    from recuse.judging.backends.http import _decoded_answer, _DecodedTooLarge

    made: list[int] = []

    class Expanding:
        def decode(self, data: bytes) -> bytes:
            made.append(len(data) * 2**16)
            return b"\0" * made[-1]

        def flush(self) -> bytes:
            return b""

    monkeypatch.setitem(_decoders.SUPPORTED_DECODERS, "br", Expanding)
    with pytest.raises(_DecodedTooLarge, match="Content-Encoding: br"):
        _decoded_answer(200, [(b"Content-Encoding", b"br")], b"x" * 4096, 2**20)
    assert sum(made) <= 2 * 2**20, f"{sum(made):,} bytes decoded"


def test_a_real_brotli_bomb_is_a_failed_call() -> None:
    """The same with brotli itself, where it is installed: 512 MiB of zeros, 809 bytes
    of brotli, stop at the bound having decoded a few MiB."""
    brotli = pytest.importorskip("brotli")
    import tracemalloc

    from recuse.judging.backends.http import _decoded_answer, _DecodedTooLarge

    body = brotli.compress(b"\0" * (512 * 2**20), quality=5)
    tracemalloc.start()
    try:
        with pytest.raises(_DecodedTooLarge):
            _decoded_answer(200, [(b"Content-Encoding", b"br")], body, 2**20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20, f"{peak:,} bytes at the peak"
    exact = _decoded_answer(
        200, [(b"Content-Encoding", b"br")], brotli.compress(b"a" * 2**20), 2**20
    )
    assert exact.content == b"a" * 2**20  # a body at the bound is read
