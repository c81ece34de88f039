"""Subprocess for the SIGKILL test of a probe run with model rewrites: slowly."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence

import pandas as pd

from recuse.judging import Runner, Store
from recuse.judging.backends.base import Failure, Generation
from recuse.judging.protocols import Prompt
from recuse.probes import build_probe_table
from recuse.probes.rewrite import RunnerRewriter
from recuse.probes.run import judge_probes
from recuse.testing.planted_judge import PlantedJudge


class Slow(PlantedJudge):
    def __init__(self, sleep: float) -> None:
        super().__init__({"authority": 0.1}, batch_size=2, length=0.1)
        self.sleep = sleep

    async def generate(
        self, prompts: Sequence[Prompt], *, max_new_tokens: int, stop: Sequence[str] = (),
        top_k: int = 0, select: object = None,
    ) -> list[Generation | Failure]:  # fmt: skip
        await asyncio.sleep(self.sleep)
        return await super().generate(prompts, max_new_tokens=max_new_tokens)

    async def next_token_logprobs(self, prompts, *, top_k=20, select=None):  # type: ignore[no-untyped-def,override]
        await asyncio.sleep(self.sleep)
        return await super().next_token_logprobs(prompts, top_k=top_k, select=select)


def pairs(n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in range(n)],
            "prompt_id": [f"q{k}" for k in range(n)],
            "prompt": [f"Question {k}?" for k in range(n)],
            "response_a": [f"First, do {k}. Then stop." for k in range(n)],
            "response_b": [f"Just try {k} again and again." for k in range(n)],
        }
    )


if __name__ == "__main__":
    store_path, n, sleep = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    with Store(store_path) as store:
        print("ready", flush=True)
        judge = Slow(sleep)
        rewrite = RunnerRewriter(Runner(judge, store, progress=False))
        table = build_probe_table(
            pairs(n), probes=["concise", "verbose", "authority"], seed=0, rewriter=rewrite
        )
        judge_probes(Runner(judge, store, progress=False), table)
