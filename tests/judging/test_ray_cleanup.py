"""A local Ray cluster recuse started does not outlive a killed run: after a ``kill -9``
of a driver that started one (``--ray local``), the dashboard agent and runtime-env
agent the raylet starts were left running. Skipped where Ray is not installed."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.xdist_group("ray"),
    pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed"),
]
SRC = Path(__file__).resolve().parents[2] / "src"

DRIVER = """
import sys, time
import psutil
from recuse.judging.distributed import RayExecutor

pool = RayExecutor(None, address="local")
pool.connect()
warden = psutil.Process(pool._warden.pid)
deadline = time.monotonic() + 60
names = set()
while time.monotonic() < deadline and not {"ray::DashboardAgent", "ray::RuntimeEnvAgent"} <= names:
    time.sleep(0.2)
    kids = [p for p in psutil.Process().children(recursive=True) if p.pid != warden.pid]
    # a Ray process's title is its first argument, padded with blanks: the whole
    # command line never equalled the name (every run waited out the deadline)
    names = {" ".join(p.cmdline()).strip() for p in kids if p.is_running()}
# the warden has noted them: its main thread notes every descendant, then waits for
# the next poll, and each wait is a voluntary context switch of that thread. Three
# more than now: a whole note ran after the agents were there (a fixed 1 s sleep
# raced its 0.5 s poll on a loaded machine)
waits = warden.num_ctx_switches().voluntary
settle = time.monotonic() + 60
while warden.num_ctx_switches().voluntary < waits + 3 and time.monotonic() < settle:
    time.sleep(0.05)
print(" ".join(str(p.pid) for p in kids), flush=True)
time.sleep(600)
"""


def test_a_killed_driver_leaves_no_process_of_the_cluster_it_started() -> None:
    import psutil

    env = {**os.environ, "PYTHONPATH": str(SRC), "RAY_USAGE_STATS_ENABLED": "0"}
    proc = subprocess.Popen(
        [sys.executable, "-c", DRIVER],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    ray_procs: list[psutil.Process] = []
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.strip(), "the driver started no cluster"
        ray_procs = [psutil.Process(int(pid)) for pid in line.split()]
        agents = [p for p in ray_procs if p.cmdline()[:1] == ["ray::DashboardAgent"]]
        assert agents  # what outlived the killed run before
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(p.is_running() for p in ray_procs):
            time.sleep(0.2)
        left = [" ".join(p.cmdline())[:60] for p in ray_procs if p.is_running()]
        assert not left
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for p in ray_procs:  # what the test's driver started, by pid
            if p.is_running():
                p.kill()
