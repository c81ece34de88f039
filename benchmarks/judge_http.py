"""HTTP judging throughput against a loopback stand-in with 50 ms latency.

    python benchmarks/judge_http.py [--requests 640] [--concurrency 32]

The stand-in runs in its own process. Our runner (direct mode, completions endpoint,
SQLite store) sends ``--requests`` judgments with ``--concurrency`` in flight; the
ideal is concurrency / latency requests per second. The sequential client is the same
backend with concurrency 1.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from recuse.judging import Runner, Store
from recuse.judging.backends.http import HTTPBackend
from recuse.judging.protocols import Pair

SERVER = """
import sys, time
from recuse.judging.standin import StandIn
s = StandIn(latency=float(sys.argv[1]), port=int(sys.argv[2])).start()
print("ready", flush=True)
sys.stdin.read()
s.stop()
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(url: str, n_pairs: int, concurrency: int, tag: str) -> float:
    pairs = [
        Pair(f"{tag}{k}", f"Question {k}?", f"answer a {k}", f"answer b {k}")
        for k in range(n_pairs)
    ]
    backend = HTTPBackend(url, model="standin", concurrency=concurrency)
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "b.db") as store:
        t0 = time.perf_counter()
        s = Runner(backend, store, progress=False).pairwise(pairs)
        dt = time.perf_counter() - t0
    assert s.ok == 2 * n_pairs, s
    return 2 * n_pairs / dt


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=640)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--latency", type=float, default=0.05)
    args = ap.parse_args()
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(args.latency), str(port)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        url = f"http://127.0.0.1:{port}/v1"
        run(url, 16, args.concurrency, "warm")
        rate = run(url, args.requests // 2, args.concurrency, "c")
        seq = run(url, 20, 1, "s")
    finally:
        if proc.stdin:
            proc.stdin.close()
        proc.wait(10)
    ideal = args.concurrency / args.latency
    print(f"concurrent ({args.concurrency}): {rate:7.1f} req/s; ideal {ideal:.0f} req/s")
    print(f"sequential       : {seq:7.1f} req/s")
    print(f"ratio to ideal: {rate / ideal:.2f} (target >= 0.80)")
    print(f"ratio to sequential client: {rate / seq:.1f}x")


if __name__ == "__main__":
    main()
