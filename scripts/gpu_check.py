"""GPU checks of the local judge, for scripts/gpu-check.sh (see there).

    python3 scripts/gpu_check.py tests    # the CUDA tests (pytest, or a plain runner)
    python3 scripts/gpu_check.py cli      # `recuse judge` on a random model, no flags

Everything runs from the repository tree with PYTHONPATH=src; the tokenizer and the
MT-Bench files come from $ASSETS (default build/gpu-check, written here by
`python benchmarks/judge_gpu.py --save-assets build/gpu-check`).
"""

from __future__ import annotations

import importlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ASSETS = Path(os.environ.get("ASSETS", REPO / "build" / "gpu-check"))
TESTS = [
    "tests/judging/test_device.py",
    "tests/judging/test_fingerprint.py",
    "tests/judging/test_local.py",
    "tests/judging/test_causal.py",
]


def run_tests() -> int:
    os.environ.setdefault("RECUSE_TEST_DATA", str(ASSETS))
    try:
        import jsonschema  # noqa: F401  (tests/conftest.py needs it)
        import pytest
    except ImportError:
        return plain_tests()
    return int(pytest.main(["-q", "-p", "no:cacheprovider", "-x", *TESTS]))


def plain_tests() -> int:
    """No pytest (or not its test dependencies) here: the CUDA tests of test_device.py
    and test_causal.py and the waves test, called with their fixture."""
    sys.path.insert(0, str(REPO / "tests"))
    from judging.helpers import build_tiny_model

    folder = build_tiny_model(Path(tempfile.mkdtemp()) / "tiny")
    failed = 0
    for module_name, name in (
        ("judging.test_device", "test_gpu_is_the_default_and_bfloat16_where_it_computes_in_it"),
        ("judging.test_device", "test_gpu_pipelined_matches_cpu_serial"),
        ("judging.test_device", "test_pipelined_waves_keep_failures_in_place"),
        ("judging.test_causal", "test_on_a_gpu_a_pass_never_waits_for_the_device"),
    ):
        try:
            getattr(importlib.import_module(module_name), name)(folder)
            print(f"PASSED {name}")
        except Exception as exc:  # report every test, then fail
            failed += 1
            print(f"FAILED {name}: {type(exc).__name__}: {exc}")
    return 1 if failed else 0


def run_cli() -> int:
    import pandas as pd
    import torch

    sys.path.insert(0, str(REPO / "benchmarks"))
    from judge_gpu import build_model, load_tokenizer, mt_bench_pairs

    from recuse.cli import main

    work = Path(tempfile.mkdtemp(prefix="gpu-check-"))
    tok = load_tokenizer(ASSETS / "tokenizer")
    model = build_model("135m", tok, "cpu", torch.float32)  # a random SmolLM2-135M shape
    model.save_pretrained(work / "model")
    tok.save_pretrained(work / "model")
    pairs = mt_bench_pairs(ASSETS / "mt_bench", int(os.environ.get("CLI_PAIRS", "200")))
    rows = [{"item_id": p.item_id, "prompt_id": p.item_id.split(":")[0], "prompt": p.prompt,
             "response_a": p.response_a, "response_b": p.response_b,
             "model_a": p.item_id.split(":")[1], "model_b": p.item_id.split(":")[2]}
            for p in pairs]  # fmt: skip
    pd.DataFrame(rows).to_csv(work / "pairs.csv", index=False)
    before = torch.cuda.memory_allocated() if torch.cuda.is_available() else 0
    t0 = time.perf_counter()
    code = main(["judge", "--model", str(work / "model"), "--data", str(work / "pairs.csv"),
                 "--out", str(work / "store.sqlite"), "--no-progress",
                 "--allow-unknown-models"])  # fmt: skip
    seconds = time.perf_counter() - t0
    peak = torch.cuda.max_memory_allocated() if torch.cuda.is_available() else 0
    print(
        f"exit {code}; {2 * len(rows)} judgments in {seconds:.1f} s (load included); "
        f"torch.cuda.max_memory_allocated {peak / 2**20:.0f} MiB (before {before / 2**20:.0f})"
    )
    ok = code == 0 and (peak > 100 * 2**20 or not torch.cuda.is_available())
    print("CLI used the GPU by default" if peak > 100 * 2**20 else "CLI did NOT use the GPU")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    if what not in ("tests", "cli"):
        sys.exit("usage: gpu_check.py tests|cli")
    sys.exit(run_tests() if what == "tests" else run_cli())
