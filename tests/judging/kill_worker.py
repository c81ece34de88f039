"""Subprocess for the SIGKILL test: judge fake pairs into a store, slowly."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judging.helpers import FakeBackend, fake_pairs, mirrored_pairs
from recuse.judging import Runner, Store

if __name__ == "__main__":
    store_path, n, sleep = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    kind = sys.argv[4] if len(sys.argv) > 4 else "plain"
    pairs = pd.DataFrame((fake_pairs if kind == "plain" else mirrored_pairs)(n))
    with Store(store_path) as store:
        print("ready", flush=True)  # the parent times its kill from here
        runner = Runner(FakeBackend(sleep=sleep), store, progress=False)
        if kind == "mirrored-staged":  # even items first, as `--limit` then a full run
            runner.pairwise(pairs.iloc[::2])
        runner.pairwise(pairs)
