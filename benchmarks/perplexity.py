"""Perplexity speed with SmolLM2: our pipeline vs a bare batched forward pass and vs
one-at-a-time computation, on the same MT-Bench turn-1 answers.

    python benchmarks/perplexity.py [--answers 200] [--batch-size 16] [--data DIR]
        [--max-chars N]

Ours = ``recuse.judging.perplexity.perplexities`` (chat template, tokenisation, length
bucketing, logits only at response positions, log-softmax, summing) with batches of
``--batch-size`` and the backend's token budget. Bare = the same token sequences in
the backend's own length-sorted batches, one plain ``model(input_ids,
attention_mask)`` call per batch and nothing else (no log-probs). One-at-a-time =
ours with batch size 1. Tokens/second counts every token that goes through the
model (prompt + response). Prints the ratios; the target (exit status 1 when
missed) is ours / bare >= 0.9. Also checks that batched and one-at-a-time
perplexities agree to 1e-5 in log-perplexity.

``--max-chars N`` keeps only answers whose question and answer together have at most N
characters (``make bench-quick``: 8 answers under 600, about a fifth of the tokens of the
first 8, whose questions ask for essays): the same pipelines on less work, with our
fixed cost per answer a larger share of it, so no easier for ours. ``--threads 1``: on
a CPU shared with other work, torch's two threads wait for each other at every
operation (8 answers at load 5-6: 36 tokens/s bare with two threads, 158 with one).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from _targets import Targets

from recuse.data.mt_bench import read_mt_bench_answers
from recuse.judging.backends.local import LocalBackend
from recuse.judging.models import default_judge
from recuse.judging.perplexity import perplexities, response_prompt

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--answers", type=int, default=200)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--chunk", type=int, default=25, help="answers per interleaved round")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch's default)")
    ap.add_argument(
        "--max-chars", type=int, default=0,
        help="only answers whose question + answer have at most N characters (0 = all)",
    )  # fmt: skip
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    answers = read_mt_bench_answers(args.data / "mt_bench")
    answers = answers[(answers["turn"] == 1) & (answers["answer"].str.len() > 0)]
    if args.max_chars:
        chars = answers["question"].str.len() + answers["answer"].str.len()
        answers = answers[chars <= args.max_chars]
    answers = answers.sort_values(["question_id", "model"]).head(args.answers)
    prompts = answers["question"].tolist()
    texts = answers["answer"].tolist()

    judge = default_judge()
    ours = LocalBackend.load(judge.path, model_id=judge.model_id, batch_size=args.batch_size)
    single = LocalBackend.load(judge.path, model_id=judge.model_id, batch_size=1)
    model, tok = ours.model, ours.tokenizer

    seqs = [
        ours.encode(response_prompt(p)) + list(tok(t, add_special_tokens=False)["input_ids"])
        for p, t in zip(prompts, texts, strict=True)
    ]
    n_tokens = sum(len(s) for s in seqs)

    def bare(idx: list[int]) -> None:
        # the backend's own batches (length-sorted, batch size and token budget)
        for bucket in ours._buckets([len(seqs[i]) for i in idx]):
            batch = [seqs[idx[j]] for j in bucket]
            width = max(len(x) for x in batch)
            ids = torch.full((len(batch), width), ours.pad_id, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for r, x in enumerate(batch):
                ids[r, : len(x)] = torch.tensor(x)
                mask[r, : len(x)] = 1
            with torch.inference_mode():
                model(input_ids=ids, attention_mask=mask)

    # warm-up (allocator, kernels) on a few texts
    perplexities(ours, prompts[:4], texts[:4])

    # interleave the three methods chunk by chunk so load changes on a shared machine
    # hit all of them alike; times are summed per method
    t_bare = t_ours = t_one = 0.0
    got_b, got_1 = [], []
    for s in range(0, len(texts), args.chunk):
        idx = list(range(s, min(s + args.chunk, len(texts))))
        p, t = [prompts[i] for i in idx], [texts[i] for i in idx]
        t0 = time.perf_counter()
        bare(idx)
        t1 = time.perf_counter()
        fb, _ = perplexities(ours, p, t, chunk_size=len(t))
        t2 = time.perf_counter()
        f1, _ = perplexities(single, p, t, chunk_size=len(t))
        t3 = time.perf_counter()
        t_bare, t_ours, t_one = t_bare + t1 - t0, t_ours + t2 - t1, t_one + t3 - t2
        got_b.append(fb)
        got_1.append(f1)
    batched, one = pd.concat(got_b, ignore_index=True), pd.concat(got_1, ignore_index=True)

    diff = np.nanmax(np.abs(np.log(batched["ppl"]) - np.log(one["ppl"])))
    rate = {k: n_tokens / v for k, v in (("bare", t_bare), ("ours", t_ours), ("one", t_one))}
    print(
        f"{len(texts)} answers, {n_tokens} tokens (prompt + response), batch {args.batch_size}, "
        f"at most {ours.max_batch_tokens} padded tokens per batch"
    )
    print(f"bare batched forward : {t_bare:7.1f} s  {rate['bare']:7.0f} tok/s")
    print(f"ours (batched)       : {t_ours:7.1f} s  {rate['ours']:7.0f} tok/s")
    print(f"ours, one at a time  : {t_one:7.1f} s  {rate['one']:7.0f} tok/s")
    print(f"ratio ours / bare          = {rate['ours'] / rate['bare']:.2f}")
    print(f"ratio ours / one-at-a-time = {rate['ours'] / rate['one']:.2f}")
    print(f"max |log ppl batched - log ppl one-at-a-time| = {diff:.2e}")
    failed = int((batched["status"] != "ok").sum())
    print(f"failed: {failed}")
    targets = Targets()
    targets.at_least(
        "ours / bare batched forward, tokens per second",
        rate["ours"] / rate["bare"],
        0.90,
        scaled=True,
    )
    targets.at_most("max |log ppl batched - one at a time|", float(diff), 1e-5, scaled=False)
    targets.at_most("answers failed", failed, 0, scaled=False)
    targets.finish()
    if not diff <= 1e-5 or failed:
        raise SystemExit(
            f"FAILED: batched and one-at-a-time log-perplexities differ by {diff:.2e} "
            f"(allowed 1e-5), or {failed} answers failed"
        )


if __name__ == "__main__":
    main()
