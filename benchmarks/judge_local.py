"""Local direct-mode judging speed with SmolLM2: our pipeline vs a bare batched forward
pass and vs a naive generate-then-parse baseline, on the same MT-Bench prompts.

    python benchmarks/judge_local.py [--pairs 64] [--naive 4] [--batch-size 16] [--threads N]
        [--shortest] [--no-full-logits]

* ours: ``Runner.pairwise`` in direct mode over every pair in both orders (render,
  tokenise, length buckets, forward, logits at the verdict position only, Eq. 3,
  SQLite commits), float32.
* bare forward, last-position logits: the same token sequences cut into the same
  batches (the backend's own length buckets: batch size and token budget), the
  same dtype, one ``model.base_model`` call per batch and the LM head on the last
  real position of each row; nothing else. The fair baseline for our overhead.
* bare forward, full logits: the same batches through a plain ``model(...)`` call,
  which also computes logits at every position (what a naive batched pass does);
  computing them only where needed is our optimisation, printed separately.
* naive: greedy generation of an explanation (up to 256 new tokens) one prompt at a
  time, then parsing ``[[A]]``/``[[B]]``. Timed on the first ``--naive`` prompts
  only and extrapolated to all prompts (said in the output).

Tokens per second count prompt tokens (the same total for every pipeline). On a
shared CPU, ``--threads 1`` is often faster than more threads (measured here: 175
vs 116 tokens/s with 2 threads at load average 3.6, and 56 tokens/s with 2 threads at
load 7, where naive generation took 347 s for one prompt) and leaves cores to others.

``--shortest`` takes the ``--pairs`` pairs with the fewest prompt tokens among the
first 80 MT-Bench questions instead of the first ones (``make bench-quick``: 3 pairs,
1,566 tokens, against 12,068 for the first 8): the same pipelines on less work, with our
fixed cost per prompt a larger share of it, so no easier for ours.
``--no-full-logits`` skips the full-logits pass (printed, not a target). ``--repeat N``
times ours and the two bare passes in N interleaved rounds and keeps the best of each
(one round of 1,566 tokens at load 4 read ours 0.89 of the bare pass, and the unmasked
bare pass 0.69 of the masked one, which does more work: load, not code). ``--naive 0``
skips the naive baseline and its target: its cost is the length of the explanation the
model writes, which a few short prompts do not show (on the 3 shortest pairs its first
explanation ended after 2.5 s, 2.5x ours, where the first pairs' full 256 tokens read
15-26x), so ``make bench-quick`` leaves it to ``make bench``.

Where torch runs on one thread every pass is timed in CPU seconds of this process
(docs/benchmarks.md: by the wall clock, rounds at load 2 differed 1.5x); with more
torch threads, in wall seconds.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from _targets import Targets

from recuse.judging import PairwiseProtocol, Runner, Store
from recuse.judging.backends.base import Generation
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
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch's default)")
    ap.add_argument(
        "--shortest", action="store_true",
        help="the pairs with the fewest prompt tokens among the first 80, not the first ones",
    )  # fmt: skip
    ap.add_argument(
        "--no-full-logits", action="store_true", help="skip the full-logits pass (no target)"
    )
    ap.add_argument(
        "--repeat", type=int, default=1, help="rounds of ours and the bare passes; best kept"
    )
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    m = default_judge()
    backend = LocalBackend.load(
        m.path, model_id=m.model_id, revision=m.revision, batch_size=args.batch_size
    )
    proto = PairwiseProtocol(mode="direct")
    if args.shortest:
        every = mt_bench_pairs(80)
        size = {
            p.item_id: sum(len(backend.encode(proto.prompt(p, o))) for o in ("first", "second"))
            for p in every
        }
        pairs = sorted(every, key=lambda p: (size[p.item_id], p.item_id))[: args.pairs]
        print(f"the {len(pairs)} pairs with the fewest prompt tokens of the first 80")
    else:
        pairs = mt_bench_pairs(args.pairs)
    prompts = [proto.prompt(p, o) for p in pairs for o in ("first", "second")]
    seqs = sorted((backend.encode(p) for p in prompts), key=len)
    tokens = sum(len(s) for s in seqs)
    print(f"{len(prompts)} prompts, {tokens} tokens, torch threads {torch.get_num_threads()}")

    # warm-up (allocator, kernels; once per process: every id's text and the verdict
    # tokens, as judge_pipeline's warm-up, not a cost of each run)
    backend.next_token_logprobs_sync(prompts[:2], select=proto.reads.selector())
    batches = [[seqs[i] for i in b] for b in backend._buckets([len(x) for x in seqs])]
    sizes = sorted({len(b) for b in batches})
    print(f"{len(batches)} batches (sizes {sizes}), dtype {next(backend.model.parameters()).dtype}")

    # the clock: CPU seconds of this process where torch runs on one thread (the forward
    # passes and ours' own work then run on this process's threads, and the time another
    # process holds the CPU is not counted: by the wall clock, rounds at load 2 differed
    # 1.5x and read ours at 0.75-0.77 of the bare pass with the code unchanged); the wall
    # clock where torch runs more threads, whose spin-waits CPU seconds would count
    clock = time.process_time if torch.get_num_threads() == 1 else time.perf_counter
    unit = "CPU s" if clock is time.process_time else "s"

    def bare(full_logits: bool, masked: bool = True) -> float:
        t0 = clock()
        with torch.inference_mode():
            for batch in batches:
                width = max(len(x) for x in batch)
                ids = torch.full((len(batch), width), backend.pad_id)
                mask = torch.zeros((len(batch), width), dtype=torch.long)
                for r, x in enumerate(batch):
                    ids[r, : len(x)] = torch.tensor(x)
                    mask[r, : len(x)] = 1
                kw = {"attention_mask": mask} if masked else {}
                if full_logits:
                    backend.model(input_ids=ids, **kw)
                else:
                    hidden = backend.model.base_model(input_ids=ids, **kw).last_hidden_state
                    last = torch.tensor([len(x) - 1 for x in batch])
                    backend.model.get_output_embeddings()(hidden[torch.arange(len(batch)), last])
        return clock() - t0

    def run_ours() -> tuple[float, Any]:
        with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "bench.db") as store:
            t0 = clock()
            summary = Runner(backend, store, progress=False).pairwise(pairs, proto)
            return clock() - t0, summary

    # rounds of the three, interleaved so load changes hit each alike; the best of each
    lasts, unmasked, ourses = [], [], []
    for _ in range(max(1, args.repeat)):
        lasts.append(bare(full_logits=False))
        unmasked.append(bare(full_logits=False, masked=False))  # as ours runs (see _hidden)
        seconds, summary = run_ours()
        ourses.append(seconds)
    bare_last, bare_unmasked, ours = min(lasts), min(unmasked), min(ourses)
    if args.repeat > 1:
        print(
            f"{args.repeat} rounds, the best of each kept: ours "
            + ", ".join(f"{t:.2f}" for t in ourses) + f" {unit}; bare (last-pos) "
            + ", ".join(f"{t:.2f}" for t in lasts) + f" {unit}; bare (no mask) "
            + ", ".join(f"{t:.2f}" for t in unmasked) + f" {unit}"
        )  # fmt: skip
    if summary.ok + summary.unparsed != len(prompts):
        raise SystemExit(f"FAILED: {len(prompts)} prompts but {summary.line()}")
    bare_full = float("nan") if args.no_full_logits else bare(full_logits=True)
    print(f"timed in {'CPU seconds of this process' if unit == 'CPU s' else 'wall seconds'} "
          f"(torch threads {torch.get_num_threads()})")  # fmt: skip

    explain = PairwiseProtocol(mode="explain")
    naive_prompts = [explain.prompt(p, "first") for p in pairs[: args.naive]]
    t0 = clock()
    parsed = 0
    for p in naive_prompts:
        (g,) = backend.generate_sync([p], max_new_tokens=256)
        parsed += isinstance(g, Generation) and parse_verdict(g.text) is not None
    naive_per_prompt = (clock() - t0) / max(1, len(naive_prompts))

    naive_all = naive_per_prompt * len(prompts) if naive_prompts else float("nan")
    print(f"ours                          : {tokens / ours:8.1f} tok/s ({ours:.1f} {unit})")
    print(f"  {summary.line()}")
    print(
        f"bare forward, last-pos logits : {tokens / bare_last:8.1f} tok/s ({bare_last:.1f} {unit})"
    )
    if args.no_full_logits:
        print("bare forward, full logits     : skipped (--no-full-logits)")
    else:
        print(
            f"bare forward, full logits     : {tokens / bare_full:8.1f} tok/s "
            f"({bare_full:.1f} {unit})"
        )
    print(
        f"bare forward, no mask         : {tokens / bare_unmasked:8.1f} tok/s "
        f"({bare_unmasked:.1f} {unit}; right padding, as ours runs)"
    )
    if naive_prompts:
        print(
            f"naive generate-then-parse     : {naive_per_prompt:.2f} {unit}/prompt, timed on the "
            f"first {len(naive_prompts)} prompts only ({parsed} parsed); extrapolated to all "
            f"{len(prompts)}: {naive_all:.1f} {unit}"
        )
    else:
        print("naive generate-then-parse     : skipped (--naive 0), and its target")
    print(f"ratio ours / bare (last-pos logits), tokens per second: {bare_last / ours:.2f}")
    if not args.no_full_logits:
        print(f"ratio ours / bare (full logits), tokens per second: {bare_full / ours:.2f}")
    print(f"ratio ours / bare (no mask), tokens per second: {bare_unmasked / ours:.2f}")
    if naive_prompts:
        print(f"speed-up over naive (extrapolated): {naive_all / ours:.1f}x")
    targets = Targets()
    targets.at_least("ours / bare forward (last-pos logits)", bare_last / ours, 0.90, scaled=True)
    targets.at_least("ours / bare forward (no mask)", bare_unmasked / ours, 0.90, scaled=True)
    if naive_prompts:
        targets.at_least(
            "speed-up over naive generate-then-parse", naive_all / ours, 10.0, "x", scaled=True
        )
    targets.finish()


if __name__ == "__main__":
    main()
