"""HTTP judging throughput against a loopback stand-in with 50 ms latency.

    python benchmarks/judge_http.py [--requests 640] [--concurrency 32] [--repeat 3]

The stand-in runs in its own process (its own event loop and interpreter), so it
does not compete with the client's event loop. Three clients send direct-mode
judgments (completions endpoint, one request per judgment) with ``--concurrency``
in flight:

* ours: ``Runner.pairwise`` with ``HTTPBackend`` into a SQLite store (prompt
  rendering, content keys, store lookups, retries, Eq. 3, batched commits);
* bare: the same request bodies sent over the same keep-alive lanes
  (``httpx.AsyncHTTPTransport``, one connection each) and the JSON parsed, nothing
  else: the most this HTTP stack can do on this machine now;
* sequential: ours with concurrency 1.

The ideal is concurrency / latency requests per second. Printed: each rate, the
ratio to the ideal, ours to bare, ours to sequential, CPU milliseconds per request of
the client and the stand-in, and the load average (the machine is shared: other
processes' load lowers every rate). Targets (exit status 1 when one is missed): ours
at least 0.80 of the ideal and 0.90 of the bare loop.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from _targets import Targets

from recuse.judging import PairwiseProtocol, Runner, Store
from recuse.judging.backends.http import HTTPBackend, render_chatml
from recuse.judging.protocols import Pair

SERVER = """
import sys, time
from recuse.testing.standin import StandIn
s = StandIn(latency=float(sys.argv[1]), port=int(sys.argv[2])).start()
print("ready", flush=True)
sys.stdin.read()
s.stop()
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pairs(n: int, tag: str) -> list[Pair]:
    return [Pair(f"{tag}{k}", f"Question {k}?", f"answer a {k}", f"answer b {k}") for k in range(n)]


def ours(url: str, n_pairs: int, concurrency: int, tag: str) -> float:
    backend = HTTPBackend(url, model="standin", concurrency=concurrency)
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "b.db") as store:
        t0 = time.perf_counter()
        s = Runner(backend, store, progress=False).pairwise(pairs(n_pairs, tag))
        dt = time.perf_counter() - t0
    if s.ok != 2 * n_pairs:
        raise SystemExit(f"FAILED: {2 * n_pairs} judgments expected, {s.ok} ok: {s}")
    return 2 * n_pairs / dt


def bare(url: str, n_pairs: int, concurrency: int, tag: str) -> float:
    proto = PairwiseProtocol()
    bodies = [
        json.dumps(
            {
                "model": "standin",
                "max_tokens": 1,
                "temperature": 0,
                "prompt": render_chatml(proto.prompt(p, o)),
                "logprobs": 20,
            }
        ).encode()
        for p in pairs(n_pairs, tag)
        for o in ("first", "second")
    ]
    timeout = {"timeout": {"connect": 60.0, "read": 60.0, "write": 60.0, "pool": 60.0}}

    async def go() -> float:
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        tls = ssl.create_default_context()  # once, as HTTPBackend does
        lanes: asyncio.Queue[httpx.AsyncHTTPTransport] = asyncio.Queue()
        for _ in range(concurrency):
            lanes.put_nowait(httpx.AsyncHTTPTransport(limits=limits, verify=tls))

        async def one(body: bytes) -> None:
            lane = await lanes.get()
            try:
                req = httpx.Request(
                    "POST",
                    url + "/completions",
                    headers={"Content-Type": "application/json"},
                    content=body,
                    extensions=timeout,
                )
                resp = await lane.handle_async_request(req)
                await resp.aread()
                json.loads(resp.content)
            finally:
                lanes.put_nowait(lane)

        t0 = time.perf_counter()
        await asyncio.gather(*(one(b) for b in bodies))
        dt = time.perf_counter() - t0
        while not lanes.empty():
            await lanes.get_nowait().aclose()
        return len(bodies) / dt

    return asyncio.run(go())


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=640)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--repeat", type=int, default=3, help="runs per client; the best is kept")
    args = ap.parse_args()
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(args.latency), str(port)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    n = args.requests // 2
    rates: dict[str, list[float]] = {"ours": [], "bare": []}
    cpu: dict[str, list[float]] = {"ours": [], "bare": [], "server": []}
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        url = f"http://127.0.0.1:{port}/v1"
        ours(url, 16, args.concurrency, "warm")
        bare(url, 16, args.concurrency, "warm")
        for k in range(args.repeat):  # interleaved, so load changes hit both alike
            for name, fn in (("ours", ours), ("bare", bare)):
                c0, s0 = time.process_time(), cpu_seconds(proc.pid)
                rates[name].append(fn(url, n, args.concurrency, f"{name}{k}-"))
                cpu[name].append((time.process_time() - c0) / (2 * n) * 1e3)
                cpu["server"].append((cpu_seconds(proc.pid) - s0) / (2 * n) * 1e3)
        seq = ours(url, 20, 1, "s")
    finally:
        if proc.stdin:
            proc.stdin.close()
        proc.wait(10)
    ideal = args.concurrency / args.latency
    best, top = max(rates["ours"]), max(rates["bare"])
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print(f"ideal ({args.concurrency} in flight / {args.latency * 1e3:g} ms): {ideal:.0f} req/s")
    print(
        f"ours     : {best:6.1f} req/s (runs {', '.join(f'{r:.0f}' for r in rates['ours'])}); "
        f"client CPU {min(cpu['ours']):.2f} ms/request"
    )
    print(
        f"bare HTTP: {top:6.1f} req/s (runs {', '.join(f'{r:.0f}' for r in rates['bare'])}); "
        f"client CPU {min(cpu['bare']):.2f} ms/request"
    )
    print(f"stand-in : server CPU {min(cpu['server']):.2f} ms/request (own process)")
    print(f"sequential (ours, concurrency 1): {seq:6.1f} req/s")
    print(f"ratio to ideal: ours {best / ideal:.2f}, bare {top / ideal:.2f}")
    print(f"ratio ours / bare HTTP: {best / top:.2f}")
    print(f"ratio to sequential client: {best / seq:.1f}x")
    targets = Targets()
    targets.at_least("ours / ideal rate", best / ideal, 0.80)
    targets.at_least("ours / bare httpx loop", best / top, 0.90)
    targets.finish()


if __name__ == "__main__":
    main()
