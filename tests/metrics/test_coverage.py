"""Planted biases: recovered on average, and covered by ~90 % of the 90 % intervals.

200 independent replications, each 150 prompts x 2 pairs judged by 2 judges, with
some orders missing or unparsed. The replications are prompt blocks of one
simulation: prompts are independent and identically distributed, so each block is
a replication of its own, and one draw keeps the test fast.
"""

from __future__ import annotations

import numpy as np
import pytest

from recuse.metrics import METRICS, pairwise_bias
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.competence import CALIBRATED_RUNGS
from recuse.simulate.pairs import simulate_pairs

N_REPS = 200
PROMPTS, PAIRS_PER_PROMPT = 150, 2

# the replications (about a minute of one core) are computed once per worker process
# that runs a test of this module: one worker runs them all
pytestmark = pytest.mark.xdist_group("coverage-replications")


@pytest.fixture(scope="module")
def replications() -> tuple[dict[tuple[str, str], list[bool]], dict[tuple[str, str], list[float]]]:
    sim = simulate_pairs(
        n_prompts=N_REPS * PROMPTS,
        pairs_per_prompt=PAIRS_PER_PROMPT,
        single_order_rate=0.1,
        unparsed_rate=0.03,
        seed=2024,
    )
    n_judges = len(sim.planted)
    block = PROMPTS * PAIRS_PER_PROMPT * n_judges
    covered: dict[tuple[str, str], list[bool]] = {}
    errors: dict[tuple[str, str], list[float]] = {}
    # the calibrated estimate's parts by human label have no closed-form planted value
    # each (their sum is tested in test_calibrated_headline.py): not computed (a fifth
    # of the time); the other metrics' estimates and intervals are the same without them
    metrics = [m for m in METRICS if m not in CALIBRATED_RUNGS]
    for rep in range(N_REPS):
        rows = sim.pairs.iloc[rep * block : (rep + 1) * block]
        assert rows["prompt_id"].nunique() == PROMPTS
        res = pairwise_bias(
            rows,
            sim.families,
            metrics=metrics,
            boot=Resampling(n_boot=200, seed=rep),
            min_n=5,
            curves=False,
        )
        assert not res.skipped, res.skipped
        for r in res.results:
            assert r.judge is not None
            truth = sim.true_value(r.metric, r.judge)
            covered.setdefault((r.judge, r.metric), []).append(r.covers(truth))
            errors.setdefault((r.judge, r.metric), []).append(r.estimate - truth)
    return covered, errors


def test_every_metric_and_judge_was_estimated(replications: tuple[dict, dict]) -> None:
    covered, _ = replications
    assert {m for _, m in covered} == set(METRICS) - set(CALIBRATED_RUNGS)
    assert all(len(v) == N_REPS for v in covered.values())


def test_intervals_cover_the_planted_values(replications: tuple[dict, dict]) -> None:
    covered, _ = replications
    rates = {k: float(np.mean(v)) for k, v in covered.items()}
    bad = {k: r for k, r in rates.items() if not 0.82 <= r <= 0.97}
    assert not bad, f"coverage outside [0.82, 0.97]: {bad}"
    assert 0.86 <= np.mean(list(rates.values())) <= 0.94


def test_estimates_recover_the_planted_values(replications: tuple[dict, dict]) -> None:
    _, errors = replications
    for key, errs in errors.items():
        e = np.asarray(errs)
        se = e.std(ddof=1) / np.sqrt(len(e))
        assert abs(e.mean()) < 4 * se + 0.005, (key, e.mean(), se)
