"""Resamples whose human labels give the strengths no finite estimate (Ford's condition
broken in the resample, not in the full sample): the bootstrap counts them
(``MetricResult.n_boot_unfit``) and keeps them. ``benchmarks/ford_resamples.py
--by-share`` found the interval's coverage the same whatever their share, so no
warning is given (docs/self-preference.md).

The planted table: four models in every prompt, all six pairs labelled. In the
"order" prompts the human prefers m0 > m1 > m2 > m3, in the "upset" prompts the
reverse. With both kinds every model beat and lost to every other, so the full sample
meets the condition; a resample that draws no upset prompt (or only upset prompts)
breaks it. So the count is known without the graph code: the resamples whose draw
count of the upset prompts is 0 or all of them."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from recuse.metrics.bootstrap import Resampling, resample_counts
from recuse.metrics.competence import calibrated_self_preference
from recuse.metrics.familiarity_mediation import familiarity_mediation

MODELS = ("m0", "m1", "m2", "m3")
CAL = "self_preference_calibrated"


def _planted(n_prompts: int, upsets: int, seed: int = 0) -> pd.DataFrame:
    """Judge m0 over ``n_prompts`` prompts of all six pairs of MODELS; the last
    ``upsets`` prompts reverse the human order. Its verdicts follow the label 80% of
    the time (each order drawn on its own), so its competence has a finite fit."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(n_prompts):
        upset = p >= n_prompts - upsets
        for a, b in combinations(MODELS, 2):
            if rng.random() < 0.5:
                a, b = b, a
            human = float((MODELS.index(a) < MODELS.index(b)) != upset)
            first, second = (float(human if rng.random() < 0.8 else 1.0 - human) for _ in range(2))
            rows.append(
                {"item_id": f"p{p}-{a}-{b}", "prompt_id": f"p{p:02d}", "model_a": a,
                 "model_b": b, "human": human, "judge": "m0", "p_a_first": first,
                 "p_a_second": second, "p_a": (first + second) / 2}
            )  # fmt: skip
    return pd.DataFrame(rows)


def _expected_unfit(t: pd.DataFrame, upsets: int, boot: Resampling) -> int:
    """The resamples that draw none of the upset prompts, or nothing else: the same
    draws as the bootstrap's (prompts sorted, one generator from the seed)."""
    prompts = np.sort(t["prompt_id"].unique())
    counts = resample_counts(len(prompts), boot.n_boot, np.random.default_rng(boot.seed))
    drawn = counts[:, len(prompts) - upsets :].sum(axis=1)
    return int(((drawn == 0) | (drawn == len(prompts))).sum())


def test_the_count_is_the_resamples_that_break_the_condition() -> None:
    """One upset prompt in 20: about (19/20)^20 = 36% of the resamples draw none of it;
    four: about 1%. The count equals the one read off the draws, is in the result's
    JSON, and the replicates are kept (none dropped)."""
    boot = Resampling(n_boot=400, seed=3)
    for upsets, low, high in ((1, 0.25, 0.45), (4, 0.0, 0.05)):
        t = _planted(20, upsets=upsets)
        r = calibrated_self_preference(t, judge="m0", boot=boot, stratum=None, label=False)
        want = _expected_unfit(t, upsets, boot)
        assert low < want / boot.n_boot < high  # the planted share, as designed
        assert r.n_boot_dropped == 0
        assert r.n_boot_unfit == want
        assert r.to_dict()["n_boot_unfit"] == want
        assert not [w for w in r.warnings if "finite" in w]


def test_held_strengths_and_one_step_count_none() -> None:
    """Strengths given are not refitted, and the one-step bootstrap takes one step from
    the full-sample fit: neither has resamples without a finite fit."""
    boot = Resampling(n_boot=200, seed=3)
    t = _planted(20, upsets=1)
    fixed = {"m0": 1.5, "m1": 0.5, "m2": -0.5, "m3": -1.5}
    for kw in ({"strengths": fixed}, {"one_step": True}):
        r = calibrated_self_preference(t, judge="m0", boot=boot, stratum=None, label=False, **kw)
        assert r.n_boot_unfit == 0, kw


def test_the_mediation_counts_them_where_it_rests_on_the_refit() -> None:
    """The mediation's direct part and share rest on the calibrated estimate, refitted in
    every resample: the same count as the calibrated estimate on the same rows and
    resamples. The indirect part reads the full-sample prediction only: none."""
    boot = Resampling(n_boot=300, seed=4)
    t = _planted(20, upsets=1)
    rng = np.random.default_rng(1)
    t = t.assign(ppl_a=np.exp(rng.normal(2, 0.3, len(t))), ppl_b=np.exp(rng.normal(2, 0.3, len(t))))
    r = calibrated_self_preference(t, judge="m0", boot=boot, stratum=None, label=False)
    parts = {
        m.metric: m
        for m in familiarity_mediation(t, judge="m0", boot=boot, stratum=None, label=False)
    }
    assert r.n_boot_unfit == _expected_unfit(t, 1, boot) > 0
    assert parts["familiarity_direct"].n_boot_unfit == r.n_boot_unfit
    assert parts["familiarity_share"].n_boot_unfit == r.n_boot_unfit
    assert parts["familiarity_indirect"].n_boot_unfit == 0
