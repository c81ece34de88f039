"""What the HTTP backend's connections keep of httpx's behaviour, against stand-ins:
the headers sent, proxies from the environment (credentials, NO_PROXY, refusals),
TLS verification with a CA from the environment, content decoding, redirects left
unfollowed, and cancellation of a request in flight."""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import shutil
import ssl
import subprocess
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from judging.helpers import fake_pairs
from recuse.errors import ConfigError, JudgeError
from recuse.judging import RetryPolicy, Runner, Store
from recuse.judging.backends.base import TransientError
from recuse.judging.backends.http import HTTPBackend
from recuse.judging.protocols import Message, Prompt
from recuse.testing.standin import StandIn

ONCE = RetryPolicy(max_attempts=1)
PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


@pytest.fixture
def no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """The environment without any proxy variable (the machine's own left out)."""
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    return monkeypatch


def _judge(backend: HTTPBackend, tmp_path: Path, n: int = 2, **kw: Any) -> pd.DataFrame:
    tmp_path.mkdir(parents=True, exist_ok=True)
    with Store(tmp_path / "s.db") as store:
        Runner(backend, store, progress=False, **kw).pairwise(pd.DataFrame(fake_pairs(n)))
        return store.judgments()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_headers_sent_are_httpx_requests_own(
    tmp_path: Path, no_proxy_env: pytest.MonkeyPatch
) -> None:
    no_proxy_env.setenv("RECUSE_TEST_KEY", "sk-abc")
    with StandIn() as server:
        backend = HTTPBackend(server.base_url, model="m", api_key_env="RECUSE_TEST_KEY")
        rows = _judge(backend, tmp_path)
        seen = list(server.seen)
    assert set(rows["status"]) == {"ok"}
    # four judgments, and the probe of vLLM's /tokenize (at the server's root)
    assert sorted(t for t, _ in seen) == ["/tokenize"] + ["/v1/completions"] * 4
    for _, headers in seen:
        # what httpx.Request writes (Host with the port, Content-Length), and ours
        assert list(headers) == ["host", "content-type", "authorization", "content-length"]
        assert headers["host"] == f"127.0.0.1:{server.port}"
        assert headers["content-type"] == "application/json"
        assert headers["authorization"] == "Bearer sk-abc"
    lengths = sorted(int(h["content-length"]) for t, h in seen if t != "/tokenize")
    assert lengths == sorted(len(json.dumps(b, ensure_ascii=False).encode()) for b in server.bodies)


def test_a_proxy_from_the_environment_carries_every_request_with_its_credentials(
    tmp_path: Path, no_proxy_env: pytest.MonkeyPatch
) -> None:
    # the stand-in answers the absolute-form requests a client sends to an HTTP proxy,
    # so the judge's host need not exist: only the proxy can have answered
    with StandIn() as proxy:
        no_proxy_env.setenv("HTTP_PROXY", f"http://agent:pa%20ss@127.0.0.1:{proxy.port}")
        backend = HTTPBackend("http://judge.invalid:8000/v1", model="m")
        rows = _judge(backend, tmp_path)
        seen = list(proxy.seen)
    assert set(rows["status"]) == {"ok"} and len(rows) == 4
    judge = "http://judge.invalid:8000"
    assert sorted(t for t, _ in seen) == [f"{judge}/tokenize"] + [f"{judge}/v1/completions"] * 4
    login = base64.b64encode(b"agent:pa ss").decode()
    for _, headers in seen:
        assert headers["host"] == "judge.invalid:8000"
        assert headers["proxy-authorization"] == f"Basic {login}"


def test_no_proxy_sends_a_host_around_the_proxy(
    tmp_path: Path, no_proxy_env: pytest.MonkeyPatch
) -> None:
    dead = f"http://127.0.0.1:{_free_port()}"  # nothing listens there
    with StandIn() as server:
        no_proxy_env.setenv("HTTP_PROXY", dead)
        through = _judge(HTTPBackend(server.base_url, model="m"), tmp_path / "a", retry=ONCE)
        no_proxy_env.setenv("NO_PROXY", "127.0.0.1")
        around = _judge(HTTPBackend(server.base_url, model="m"), tmp_path / "b", retry=ONCE)
    # through the dead proxy every request fails to connect; around it all are judged
    assert set(through["status"]) == {"failed"}
    assert through["reason"].str.contains("connection error: ConnectError").all()
    assert set(around["status"]) == {"ok"}


def test_a_proxy_that_cannot_be_used_is_refused_when_the_backend_is_made(
    no_proxy_env: pytest.MonkeyPatch,
) -> None:
    no_proxy_env.setenv("HTTP_PROXY", "ftp://agent:hunter2@proxy.example:21")
    with pytest.raises(ConfigError, match="HTTP_PROXY or ALL_PROXY") as err:
        HTTPBackend("http://judge.example/v1", model="m")
    assert "hunter2" not in str(err.value)  # the proxy's password is not shown
    assert "proxy.example:21" in str(err.value) and "NO_PROXY" in str(err.value)
    no_proxy_env.setenv("NO_PROXY", "judge.example")  # exempt: no proxy, no refusal
    HTTPBackend("http://judge.example/v1", model="m")


def test_a_socks_proxy_without_socksio_is_a_clear_error(
    no_proxy_env: pytest.MonkeyPatch,
) -> None:
    try:
        import socksio  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("socksio is installed: a SOCKS proxy is usable")
    no_proxy_env.setenv("ALL_PROXY", "socks5://127.0.0.1:1080")
    with pytest.raises(ConfigError, match=r"socksio.*httpx\[socks\]"):
        HTTPBackend("http://judge.example/v1", model="m")


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (openssl) and its key."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    command = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2"
    command += " -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1"
    subprocess.run(
        [*command.split(), "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True
    )
    return cert, key


def test_tls_is_verified_and_a_ca_from_the_environment_is_trusted(
    tmp_path: Path, no_proxy_env: pytest.MonkeyPatch, certificate: tuple[Path, Path]
) -> None:
    cert, key = certificate
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    with StandIn(tls=tls) as server:
        assert server.base_url.startswith("https://")
        with pytest.raises(JudgeError, match="connection error: ConnectError"):
            _judge(HTTPBackend(server.base_url, model="m"), tmp_path / "a", retry=ONCE)
        assert server.requests == 0  # refused during the handshake: nothing was sent
        no_proxy_env.setenv("SSL_CERT_FILE", str(cert))
        trusted = _judge(HTTPBackend(server.base_url, model="m"), tmp_path / "b", retry=ONCE)
        assert server.requests == 4
    assert set(trusted["status"]) == {"ok"}


class _Gzipped(StandIn):
    """Answers gzip-compressed (Content-Encoding: gzip), a broken body on request."""

    broken: bool = False

    async def _respond(
        self, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        status, extra, payload = await super()._respond(path, headers, raw)
        body = b"\x1f\x8b not gzip" if self.broken else gzip.compress(payload)
        return status, {**extra, "Content-Encoding": "gzip"}, body


def test_an_answer_compressed_by_its_content_encoding_is_decoded(
    tmp_path: Path, no_proxy_env: pytest.MonkeyPatch
) -> None:
    with StandIn() as plain, _Gzipped() as packed:
        want = _judge(HTTPBackend(plain.base_url, model="m"), tmp_path / "a")
        got = _judge(HTTPBackend(packed.base_url, model="m"), tmp_path / "b")
        packed.broken = True
        broken = _judge(HTTPBackend(packed.base_url, model="m"), tmp_path / "c", retry=ONCE)
    assert set(got["status"]) == {"ok"}
    key = ["item_id", "slot"]
    assert got.sort_values(key)["value"].tolist() == want.sort_values(key)["value"].tolist()
    # a body that is not what its encoding says: a failed row with the reason, no crash
    assert set(broken["status"]) == {"failed"}
    assert broken["reason"].str.contains("could not be decoded").all()


class _Moved(StandIn):
    """Answers every request with a redirect to a path of its own."""

    async def _respond(
        self, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        if path == "/elsewhere/v1/completions":
            return await super()._respond(path, headers, raw)
        self.requests += 1
        where = f"http://{self.host}:{self.port}/elsewhere/v1/completions"
        return 307, {"Location": where}, b'{"error": "moved"}'


def test_a_redirect_is_not_followed(tmp_path: Path, no_proxy_env: pytest.MonkeyPatch) -> None:
    # a POST is not re-sent to wherever a server points (httpx's default, too): the
    # answer is read as it came, here one without choices, which is retried
    with _Moved() as server:
        backend = HTTPBackend(server.base_url, model="m", verdict_token_ids=False)
        rows = _judge(backend, tmp_path, retry=ONCE)
        targets = {t for t, _ in server.seen}
    assert targets == {"/v1/completions"}
    assert set(rows["status"]) == {"failed"}
    assert rows["reason"].str.contains("response has no choices").all()


def test_a_request_in_flight_is_cancelled_at_once_and_its_lane_closed(
    no_proxy_env: pytest.MonkeyPatch,
) -> None:
    prompt = Prompt((Message("user", "Which is better?"),), prefix="[[")

    async def go(server: StandIn) -> tuple[float, int]:
        backend = HTTPBackend(server.base_url, model="m", timeout=60)
        task = asyncio.create_task(backend.next_token_logprobs([prompt]))
        while server.requests == 0:  # the request has reached the (hanging) server
            await asyncio.sleep(0.01)
        t0 = time.perf_counter()
        task.cancel()  # what Ctrl-C does to the runner's tasks
        with pytest.raises(asyncio.CancelledError):
            await task
        waited = time.perf_counter() - t0
        await backend.aclose()
        return waited, len(backend._open)

    with StandIn(faults={"timeout": 1.0}, hang=30.0) as server:
        waited, still_open = asyncio.run(go(server))
    assert waited < 10.0  # not the server's 30 s (nor a bound a loaded machine can miss)
    assert still_open == 0


def test_a_timeout_is_transient_and_says_how_long(no_proxy_env: pytest.MonkeyPatch) -> None:
    prompt = Prompt((Message("user", "Which is better?"),), prefix="[[")
    with StandIn(faults={"timeout": 1.0}, hang=30.0) as server:
        backend = HTTPBackend(server.base_url, model="m", timeout=0.2)
        t0 = time.perf_counter()
        with pytest.raises(TransientError, match=r"timeout after 0\.2 s"):
            asyncio.run(backend.next_token_logprobs([prompt]))
        waited = time.perf_counter() - t0
    assert waited < 10.0  # not the server's 30 s (nor a bound a loaded machine can miss)
