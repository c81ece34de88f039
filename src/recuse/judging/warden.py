"""Stops the processes of a local Ray cluster when the run that started it ends, however
it ends (a ``kill -9`` included). Run as a script, not imported by recuse::

    python warden.py PID [PID ...]

with its stdin a pipe from the run: the PIDs are the processes Ray started for the
cluster (GCS, raylet, dashboard, monitors). Ray ties those to the run through the
kernel (they die with it), but the agents the raylet starts (dashboard agent,
runtime-env agent) outlived a killed run. While the run lives, the warden notes every
descendant of those processes twice a second; when its stdin closes (the run ended:
the kernel closes the pipe of a killed process too), it stops each one still running
(the same process: its start time is checked, so a reused pid is left alone),
politely first, then with SIGKILL. It needs ``psutil`` (a dependency of Ray).
"""

from __future__ import annotations

import os
import sys
import threading

import psutil

POLL_SECONDS = 0.5
GRACE_SECONDS = 3.0


def _note(roots: list[int], seen: dict[int, float]) -> None:
    """Add ``roots`` and their descendants to ``seen`` (pid -> start time)."""
    for pid in roots:
        try:
            proc = psutil.Process(pid)
            family = [proc, *proc.children(recursive=True)]
        except psutil.Error:
            continue
        for p in family:
            try:
                seen.setdefault(p.pid, p.create_time())
            except psutil.Error:
                continue


def _stop(seen: dict[int, float]) -> None:
    """Terminate, then kill, every process of ``seen`` that is still the same one."""
    alive = []
    for pid, started in seen.items():
        try:
            p = psutil.Process(pid)
            if p.create_time() == started and pid != os.getpid():
                alive.append(p)
        except psutil.Error:
            continue
    for p in alive:
        try:
            p.terminate()
        except psutil.Error:
            continue
    _, left = psutil.wait_procs(alive, timeout=GRACE_SECONDS)
    for p in left:
        try:
            p.kill()
        except psutil.Error:
            continue


def main(argv: list[str]) -> int:
    roots = [int(a) for a in argv[1:]]
    ended = threading.Event()

    def wait_for_eof() -> None:
        sys.stdin.buffer.read()
        ended.set()

    threading.Thread(target=wait_for_eof, daemon=True).start()
    seen: dict[int, float] = {}
    while True:
        _note(roots, seen)
        if ended.wait(POLL_SECONDS):
            break
    _stop(seen)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
