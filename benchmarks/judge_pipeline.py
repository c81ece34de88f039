"""Our GPU pipeline's host side against an emulated device, on a CPU: how much of a
fast device's time the host's work (rendering, tokenizing, padding, reading the
numbers, Eq. 3, the store) leaves idle, measured without a GPU.

    python benchmarks/judge_pipeline.py                  # 1,200 MT-Bench pairs
    python benchmarks/judge_pipeline.py --rate 94000     # a 1.7B model's speed on an H200

The backend is the local one configured as on a GPU (pipelined waves, 1,024 prompts
per call, ``--calls`` of them in flight, the token budget ``--budget``), with the
embedded judge's tokenizer and MT-Bench pairs in both orders. Only the device is
emulated: a forward pass returns at once after the host work of launching one (a
forward pass of a tiny model with ``--layers`` layers on this CPU, holding the GIL as
launching does), and its numbers are ready ``padded tokens / --rate`` seconds after
the emulated device is free, as with a real device's queue; one pass runs at a time.

It prints our wall time against the baseline, the emulated device running the bare
pass's length buckets (all prompts sorted by tokens, cut under the same budget) back
to back: ``padded tokens / rate`` of those buckets, which no host can beat. Their
ratio is the share of the device's speed our host side can use on this machine,
and the device's idle gaps say where the rest goes. The default rate is the
135M shape's bare pass on an H200 when its passes still read the mask (329k prompt
tokens/s at 65,536 tokens; 647k since, which two shared CPU cores cannot tokenize
for: ``--rate 650000`` shows it). The emulated device costs each pass its tokens
only, so it does not show what a real one charges a part-filled pass (see
``docs/benchmarks.md``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _targets import Targets
from _threads import ThreadTimes
from judge_gpu import DATA, bare_buckets, build_model, load_tokenizer, mt_bench_pairs

from recuse.judging import PairwiseProtocol, Runner, Store
from recuse.judging.backends.local import LocalBackend


class EmulatedDevice(LocalBackend):
    """The local backend with its forward pass replaced by an emulated device's queue."""

    def __init__(self, *args: Any, rate: float, launcher: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rate = rate
        self.launcher = launcher
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.free_at = 0.0  # when the emulated device finishes what is queued
        self.passes: list[tuple[float, float, int]] = []  # (start, idle before, padded)

    def _hidden(self, ids: torch.Tensor) -> torch.Tensor:
        launched = time.perf_counter()
        self.launcher.model(input_ids=self._tiny, use_cache=False)  # the host's launch work
        done_launching = time.perf_counter()
        with self.lock:
            start = max(launched, self.free_at)
            idle = max(0.0, launched - self.free_at) if self.passes else 0.0
            self.free_at = max(start + ids.numel() / self.rate, done_launching)
            self.passes.append((start, idle, int(ids.numel())))
        hidden = int(self.model.config.hidden_size)
        return torch.zeros(1, 1, hidden).expand(int(ids.shape[0]), int(ids.shape[1]), hidden)

    def _to_host(self, *tensors: torch.Tensor) -> Callable[[], list[np.ndarray]]:
        ready_at = self.free_at
        arrays = [t.numpy() for t in tensors]

        def wait() -> list[np.ndarray]:
            left = ready_at - time.perf_counter()
            if left > 0:
                time.sleep(left)
            return arrays

        return wait

    @property
    def _tiny(self) -> torch.Tensor:
        return torch.zeros(1, 4, dtype=torch.long)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=1200, help="MT-Bench pairs (0 = all 1,200)")
    ap.add_argument("--rate", type=float, default=329e3, help="device prompt tokens/s")
    ap.add_argument("--budget", type=int, default=65536, help="padded tokens per pass")
    ap.add_argument("--calls", type=int, default=0, help="calls in flight (0 = the default)")
    ap.add_argument("--layers", type=int, default=30, help="layers launched per pass")
    ap.add_argument("--tokenizer", type=Path, default=None)
    ap.add_argument("--data", type=Path, default=DATA)
    args = ap.parse_args()

    from transformers import LlamaConfig, LlamaForCausalLM

    tok = load_tokenizer(args.tokenizer)
    pairs = mt_bench_pairs(args.data, args.pairs)
    model = build_model("tiny", tok, "cpu", torch.float32)
    tiny = dict(vocab_size=64, hidden_size=64, intermediate_size=128, num_attention_heads=4,
                num_key_value_heads=2)  # fmt: skip
    launcher = LlamaForCausalLM(LlamaConfig(num_hidden_layers=args.layers, **tiny)).eval()
    dev = EmulatedDevice(model, tok, model_id="emulated", revision="bench", batch_size=1024,
                         max_batch_tokens=args.budget, pipeline=True, rate=args.rate,
                         launcher=launcher)  # fmt: skip
    if args.calls:
        dev.concurrency = args.calls
    proto = PairwiseProtocol(mode="direct")
    prompts = [proto.prompt(p, o) for p in pairs for o in ("first", "second")]
    seqs = dev.encode_many(prompts)
    tokens = sum(len(s) for s in seqs)
    bare = [len(b) * max(len(s) for s in b) for b in bare_buckets(dev, seqs, args.budget)]
    # once per process: every id's text, the verdict tokens (as judge_gpu's warm-up)
    dev.next_token_logprobs_sync(prompts[:8], select=proto.reads.selector())
    dev.reset()
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "bench.db") as store:
        times = ThreadTimes()
        times.start()
        t0 = time.perf_counter()
        summary = Runner(dev, store, progress=False).pairwise(pairs, proto)
        wall = time.perf_counter() - t0
        times.stop()
    assert summary.ok + summary.unparsed == len(prompts), summary.line()
    ideal = sum(bare) / args.rate
    busy = sum(n for _, _, n in dev.passes) / args.rate
    idle = sum(i for _, i, _ in dev.passes)
    first = dev.passes[0][0] - t0
    last = wall - (dev.free_at - t0)
    print(
        f"{len(prompts)} prompts, {tokens:,} tokens; emulated device at {args.rate:,.0f} "
        f"tokens/s, budget {args.budget}, {dev.concurrency} call(s) of 1,024 in flight, "
        f"{args.layers} layers launched per pass"
    )
    print(f"ours: {wall:.2f} s; baseline (bare buckets on the device): {ideal:.2f} s")
    print(
        f"  device busy {busy:.2f} s in {len(dev.passes)} passes (bare: {len(bare)}), padded "
        f"{sum(n for *_, n in dev.passes) / tokens:.3f} of real (bare: {sum(bare) / tokens:.3f})"
    )
    print(
        f"  device idle: {first:.2f} s before the first pass, {idle:.2f} s between passes, "
        f"{last:.2f} s after the last"
    )
    gaps = sorted(((i, s - t0) for s, i, _ in dev.passes if i > 0.005), reverse=True)[:5]
    print("  longest gaps: " + ", ".join(f"{i:.3f} s at {at:.2f} s" for i, at in gaps))
    print(f"  {times.line()}")
    print(f"ratio baseline / ours: {ideal / wall:.2f}")
    targets = Targets()
    targets.at_least("bare buckets / ours (emulated device)", ideal / wall, 0.90, scaled=True)
    targets.finish()


if __name__ == "__main__":
    main()
