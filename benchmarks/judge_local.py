"""Local direct-mode judging speed with SmolLM2: our pipeline vs a bare forward pass and
vs a naive explain-then-parse baseline, on the same MT-Bench prompts.

    python benchmarks/judge_local.py [--pairs 64] [--naive 4] [--batch-size 16]

Pipeline = Runner.pairwise in direct mode (render, tokenise, bucket, forward, Eq. 3,
SQLite commits) over every pair in both orders. Bare = the same token sequences,
length-sorted into the same batch size, one plain ``model(...)`` call per batch and
nothing else. Naive = greedy generation of an explanation (up to 256 new tokens) one
prompt at a time, then parsing "[[A]]"/"[[B]]"; timed on ``--naive`` prompts and
reported per prompt (extrapolated to all prompts).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import torch

from recuse.judging import PairwiseProtocol, Runner, Store
from recuse.judging.backends.local import LocalBackend
from recuse.judging.models import default_judge
from recuse.judging.protocols import Pair, parse_verdict

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mt_bench"


def mt_bench_pairs(
    n: int, model_a: str = "gpt-3.5-turbo", model_b: str = "vicuna-13b-v1.2"
) -> list[Pair]:
    answers = {}
    for m in (model_a, model_b):
        with open(DATA / "model_answer" / f"{m}.jsonl", encoding="utf-8") as f:
            answers[m] = {r["question_id"]: r["choices"][0]["turns"][0] for r in map(json.loads, f)}
    with open(DATA / "question.jsonl", encoding="utf-8") as f:
        qs = [json.loads(line) for line in f]
    return [
        Pair(
            str(q["question_id"]),
            q["turns"][0],
            answers[model_a][q["question_id"]],
            answers[model_b][q["question_id"]],
        )
        for q in qs[:n]
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=64)
    ap.add_argument("--naive", type=int, default=4)
    ap.add_argument("--batch-size", type=int, default=16)
    args = ap.parse_args()

    m = default_judge()
    backend = LocalBackend.load(
        m.path, model_id=m.model_id, revision=m.revision, batch_size=args.batch_size
    )
    pairs = mt_bench_pairs(args.pairs)
    proto = PairwiseProtocol(mode="direct")
    prompts = [proto.prompt(p, o) for p in pairs for o in ("first", "second")]
    seqs = sorted((backend.encode(p) for p in prompts), key=len)
    tokens = sum(len(s) for s in seqs)
    print(f"{len(prompts)} prompts, {tokens} tokens, torch threads {torch.get_num_threads()}")

    # warm-up (allocator, kernels)
    backend.next_token_logprobs_sync(prompts[:2])

    t0 = time.perf_counter()
    with torch.inference_mode():
        for i in range(0, len(seqs), args.batch_size):
            batch = seqs[i : i + args.batch_size]
            width = len(batch[-1])
            ids = torch.full((len(batch), width), backend.pad_id)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for r, s in enumerate(batch):
                ids[r, : len(s)] = torch.tensor(s)
                mask[r, : len(s)] = 1
            backend.model(input_ids=ids, attention_mask=mask)
    bare = time.perf_counter() - t0

    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "bench.db") as store:
        t0 = time.perf_counter()
        summary = Runner(backend, store, progress=False).pairwise(pairs, proto)
        ours = time.perf_counter() - t0
    assert summary.ok + summary.unparsed == len(prompts), summary

    explain = PairwiseProtocol(mode="explain")
    naive_prompts = [explain.prompt(p, "first") for p in pairs[: args.naive]]
    t0 = time.perf_counter()
    parsed = 0
    for p in naive_prompts:
        (g,) = backend.generate_sync([p], max_new_tokens=256)
        parsed += not isinstance(g, Exception) and parse_verdict(getattr(g, "text", "")) is not None
    naive_per_prompt = (time.perf_counter() - t0) / len(naive_prompts)

    print(f"bare forward : {tokens / bare:8.1f} tok/s ({bare:.1f} s)")
    print(f"our pipeline : {tokens / ours:8.1f} tok/s ({ours:.1f} s) — {summary.line()}")
    print(
        f"naive explain: {naive_per_prompt:.2f} s/prompt on {len(naive_prompts)} prompts "
        f"({parsed} parsed); extrapolated {naive_per_prompt * len(prompts):.1f} s for all"
    )
    print(f"ratio pipeline/bare tokens per second: {bare / ours:.2f} (target >= 0.80)")
    print(f"speed-up over naive: {naive_per_prompt * len(prompts) / ours:.1f}x (target >= 10x)")


if __name__ == "__main__":
    main()
