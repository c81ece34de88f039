"""Model-written rewrites (Saito §4): the request, the stored and resumed generations,
the probe rows they make, and a planted length preference recovered through the runner."""

from __future__ import annotations

import math
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recuse.errors import ConfigError
from recuse.judging.backends.base import Generation
from recuse.judging.runner import Runner
from recuse.judging.store import Store
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.probes import probe_effects
from recuse.probes import build_probe_table
from recuse.probes.rewrite import REWRITES, RunnerRewriter, rewrite_prompt
from recuse.probes.run import judge_probes
from recuse.testing.planted_judge import PlantedJudge


def _pairs(n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in range(n)],
            "prompt_id": [f"q{k // 2}" for k in range(n)],
            "prompt": [f"Question {k}: how do I do task {k}?" for k in range(n)],
            "response_a": [
                f"First do step {k}. Then check step {k + 1}. Finally rest {k % 5} minutes."
                for k in range(n)
            ],
            "response_b": [f"Task {k} is done by trying hard and then more." for k in range(n)],
        }
    )


def test_the_request_names_the_style_and_quotes_the_answer() -> None:
    concise = rewrite_prompt("Q?", "An answer.", "concise").messages[1].content
    verbose = rewrite_prompt("Q?", "An answer.", "verbose").messages[1].content
    assert "as short as possible" in concise and "twice as long" in verbose
    assert concise.endswith("The answer to rewrite:\nAn answer.") and "Q?" in concise
    with pytest.raises(KeyError, match="unknown rewrite style"):
        rewrite_prompt("Q?", "A.", "funny")


class _Counting(PlantedJudge):
    """Counts the prompts it generates for; cuts one rewrite at the token limit."""

    def __init__(self) -> None:
        super().__init__({})
        self.generated = 0

    async def generate(self, prompts, *, max_new_tokens, stop=(), top_k=0):  # type: ignore[no-untyped-def,override]
        self.generated += len(prompts)
        out = await super().generate(prompts, max_new_tokens=max_new_tokens)
        return [
            Generation(g.text, finish_reason="length")
            if isinstance(g, Generation) and "step 7." in g.text
            else g
            for g in out
        ]


def test_rewrites_are_stored_resumed_and_unusable_ones_left_out(tmp_path: Path) -> None:
    pairs = _pairs(12)
    pairs.loc[3, ["response_a", "response_b"]] = "[no rewrite] here. Both."
    with Store(tmp_path / "s.db") as store:
        writer = _Counting()
        rewrite = RunnerRewriter(Runner(writer, store, progress=False), max_new_tokens=64)
        table = build_probe_table(pairs, probes=["concise", "verbose"], seed=0, rewriter=rewrite)
        assert writer.generated == 24
        again = RunnerRewriter(Runner(writer, store, progress=False), max_new_tokens=64)
        same = build_probe_table(pairs, probes=["concise", "verbose"], seed=0, rewriter=again)
        assert writer.generated == 24  # all 24 from the store, the unusable ones included
        assert [s.cached for s in again.summaries] == [12, 12]
        pd.testing.assert_frame_equal(table, same)
    # the empty rewrites of pair 3 and the verbose rewrite cut at the limit are left out
    lost = table.attrs["unusable_rewrites"]
    assert lost["concise"] >= 1 and lost["verbose"] >= 1
    assert "i3#concise" not in set(table["item_id"]) and "i3#verbose" not in set(table["item_id"])
    base = pairs.set_index("item_id")
    for r in table[table["probe"].isin(list(REWRITES))].itertuples():
        side, other = (
            ("response_a", "response_b") if r.treated == "a" else ("response_b", "response_a")
        )
        source = base.loc[r.base_item, side]
        assert getattr(r, other) == base.loc[r.base_item, other]  # never edited
        text = getattr(r, side)
        if r.probe == "concise":
            assert text == source.split(". ")[0].rstrip(".") + "."
        else:
            assert text == f"{source} To put it another way: {source}"


def test_rewrite_probes_need_a_rewriter() -> None:
    with pytest.raises(ConfigError, match="need a model to write the rewrites"):
        build_probe_table(_pairs(4), probes=["verbose"])


def test_a_planted_length_preference_is_recovered(tmp_path: Path) -> None:
    pairs = _pairs(300)
    judge = PlantedJudge({}, length=0.1)
    with Store(tmp_path / "s.db") as store:
        rewrite = RunnerRewriter(Runner(judge, store, progress=False))
        table = build_probe_table(pairs, probes=["concise", "verbose"], seed=2, rewriter=rewrite)
        judge_probes(Runner(judge, store, progress=False), table)
        exported = store.export_pairs()
    results, skipped = probe_effects(exported, boot=Resampling(n_boot=400))
    assert not skipped
    got = {r.metric: r for r in results}
    assert set(got) == {"probe_concise", "probe_verbose", "probe_verbosity"}

    def words(probe: str) -> np.ndarray:
        rows = table[table["probe"] == probe].set_index("base_item").sort_index()
        text = rows["response_a"].where(rows["treated"] == "a", rows["response_b"])
        return text.map(lambda t: math.log(len(t.split()))).to_numpy()

    truth = 0.1 * float(np.mean(words("verbose") - words("concise")))
    r = got["probe_verbosity"]
    assert truth > 0.1  # the verbose rewrite is much longer
    assert r.estimate == pytest.approx(truth, abs=0.015)
    assert r.ci_low - 0.005 <= truth <= r.ci_high + 0.005
    assert r.components["words_verbose"] > 2 * r.components["words_concise"]


def _worker(store: Path, n: int, sleep: float) -> subprocess.Popen[str]:
    worker = Path(__file__).with_name("kill_worker.py")
    return subprocess.Popen(
        [sys.executable, str(worker), str(store), str(n), str(sleep)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def test_a_probe_run_with_rewrites_killed_at_random_points_resumes_to_the_same_store(
    tmp_path: Path,
) -> None:
    n = 10  # 20 rewrites and 100 judgments, in batches of 2
    reference = tmp_path / "reference.db"
    assert _worker(reference, n, 0.0).wait(timeout=120) == 0
    rng = random.Random(7)
    killed, kills = tmp_path / "killed.db", 0
    for _ in range(30):
        proc = _worker(killed, n, 0.05)
        assert proc.stdout is not None
        proc.stdout.readline()
        time.sleep(rng.uniform(0.1, 1.5))
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            kills += 1
        elif proc.returncode == 0:
            break
        else:
            raise AssertionError(proc.stderr.read() if proc.stderr else "worker failed")
    else:
        assert _worker(killed, n, 0.05).wait(timeout=120) == 0
    assert kills >= 2
    with Store(reference) as a, Store(killed) as b:
        ea = a.export_pairs().sort_values("item_id").reset_index(drop=True)
        eb = b.export_pairs().sort_values("item_id").reset_index(drop=True)
        cols = [
            "item_id",
            "probe",
            "treated",
            "response_a",
            "response_b",
            "p_a_first",
            "p_a_second",
        ]
        assert set(ea["probe"]) == {"original", "placebo", "concise", "verbose", "authority"}
        pd.testing.assert_frame_equal(ea[cols], eb[cols])
