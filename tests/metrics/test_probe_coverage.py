"""Probe effects against a planted truth: ~90 % of the 90 % intervals cover it.

A stand-in judge, simulated straight into the exported table (the runner path is
tested in ``tests/probes``): per base pair its share of the win for the treated answer
in the original is ``s ~ U(0.1, 0.9)``; the placebo adds noise only; *authority*
makes it side with the treated answer (``s -> max(s, 1 - s)``) with a probability
drawn per prompt from ``U(0.1, 0.5)`` (mean 0.3: a prompt-level cluster effect);
*padding* adds noise only. The true effects, by hand:

    authority = 0.3 * E[(1 - 2s) 1{s < 1/2}] = 0.3 * ((0.5 - 0.25) - (0.1 - 0.01)) / 0.8
              = 0.3 * 0.2 = 0.06
    padding   = 0

Over 600 replications the coverage was 0.89 for both at 60 prompts and 0.86 at 30 (the
cluster bootstrap's intervals run a little narrow with few prompts; the report warns
below 5 prompts).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recuse.metrics.bootstrap import Resampling
from recuse.metrics.probes import probe_effects

TRUTH = {"probe_authority": 0.06, "probe_padding": 0.0}
N_REPS, PROMPTS, PAIRS_PER_PROMPT = 200, 60, 2
NOISE = 0.03
# one worker runs both tests: the replications are a module fixture, which pytest -n 2
# --dist loadgroup made on each worker that got one of the tests
pytestmark = pytest.mark.xdist_group("probe-coverage")


def _replication(rng: np.random.Generator) -> pd.DataFrame:
    rows = []
    for p in range(PROMPTS):
        p_flip = rng.uniform(0.1, 0.5)
        for k in range(PAIRS_PER_PROMPT):
            s = rng.uniform(0.1, 0.9)
            flipped = max(s, 1 - s) if rng.random() < p_flip else s
            shares = {
                "original": s,
                "placebo": s + rng.normal(0, NOISE),
                "authority": flipped + rng.normal(0, NOISE),
                "padding": s + rng.normal(0, NOISE),
            }
            treated = "a" if rng.random() < 0.5 else "b"
            for probe, share in shares.items():
                share = float(np.clip(share, 0.0, 1.0))
                rows.append(
                    {
                        "judge": "stand-in",
                        "prompt_id": f"q{p}",
                        "base_item": f"q{p}-{k}",
                        "item_id": f"q{p}-{k}:{probe}",
                        "probe": probe,
                        "treated": treated,
                        "p_a": share if treated == "a" else 1.0 - share,
                    }
                )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def replications() -> dict[str, list[tuple[float, bool]]]:
    rng = np.random.default_rng(17)
    out: dict[str, list[tuple[float, bool]]] = {m: [] for m in TRUTH}
    for rep in range(N_REPS):
        results, skipped = probe_effects(_replication(rng), boot=Resampling(n_boot=200, seed=rep))
        assert not skipped
        for r in results:
            out[r.metric].append((r.estimate - TRUTH[r.metric], r.covers(TRUTH[r.metric])))
    return out


def test_probe_intervals_cover_the_planted_effects(
    replications: dict[str, list[tuple[float, bool]]],
) -> None:
    for metric, reps in replications.items():
        assert len(reps) == N_REPS
        rate = np.mean([c for _, c in reps])
        assert 0.84 <= rate <= 0.96, (metric, rate)


def test_probe_estimates_are_unbiased(replications: dict[str, list[tuple[float, bool]]]) -> None:
    for metric, reps in replications.items():
        e = np.array([err for err, _ in reps])
        assert abs(e.mean()) < 4 * e.std(ddof=1) / np.sqrt(len(e)) + 0.002, (metric, e.mean())
