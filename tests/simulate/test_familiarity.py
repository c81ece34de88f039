"""The familiarity simulator plants what it says (checked with independent fits)."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm

from recuse.errors import ConfigError
from recuse.simulate.familiarity import PlantedFamiliarity, simulate_familiarity


def test_margins_are_the_planted_logistic_slopes() -> None:
    sim = simulate_familiarity(
        {"j": PlantedFamiliarity(judge_slope=-2.0, intercept=0.3, agreement=0.7)},
        human_slope=-0.5,
        human_intercept=-0.2,
        n_prompts=3000,
        seed=1,
    )
    t = sim.pairs
    d = np.log(t["ppl_a"].to_numpy()) - np.log(t["ppl_b"].to_numpy())
    X = sm.add_constant(d)
    judge = sm.GLM(t["p_a"].to_numpy(), X, family=sm.families.Binomial()).fit()
    human = sm.GLM(t["human"].to_numpy(), X, family=sm.families.Binomial()).fit()
    np.testing.assert_allclose(judge.params, [0.3, -2.0], atol=4 * judge.bse.max())
    np.testing.assert_allclose(human.params, [-0.2, -0.5], atol=4 * human.bse.max())
    # judge and human are correlated (copula), margins untouched
    assert np.corrcoef(t["p_a"], t["human"])[0, 1] > 0.3


def test_prob_verdicts_have_the_planted_mean() -> None:
    sim = simulate_familiarity(
        {"j": PlantedFamiliarity(judge_slope=-1.0)}, verdicts="prob", n_prompts=3000, seed=2
    )
    t = sim.pairs
    assert ((t["p_a"] > 0) & (t["p_a"] < 1)).all()
    d = np.log(t["ppl_a"].to_numpy()) - np.log(t["ppl_b"].to_numpy())
    expected = 1 / (1 + np.exp(d))
    assert abs(t["p_a"].mean() - expected.mean()) < 0.01
    assert (t["p_a_first"] == t["p_a_second"]).all()


def test_each_response_has_one_perplexity_and_own_gap() -> None:
    judges = {"m1": PlantedFamiliarity(own_gap=-0.7), "m2": PlantedFamiliarity(own_gap=0.0)}
    sim = simulate_familiarity(judges, n_prompts=800, seed=3)
    t = sim.pairs
    for j in judges:
        rows = t[t["judge"] == j]
        long = np.concatenate(
            [
                rows[["prompt_id", "model_a", "ppl_a"]].to_numpy(),
                rows[["prompt_id", "model_b", "ppl_b"]].to_numpy(),
            ]
        )
        per_resp: dict[tuple[str, str], set[float]] = {}
        for p, m, v in long:
            per_resp.setdefault((p, m), set()).add(float(v))
        assert all(len(v) == 1 for v in per_resp.values())
        lp = {k: np.log(next(iter(v))) for k, v in per_resp.items()}
        own = np.mean([v for (p, m), v in lp.items() if m == j])
        other = np.mean([v for (p, m), v in lp.items() if m != j])
        assert own - other == pytest.approx(sim.true_gap(j), abs=0.06)


def test_human_label_is_the_share_of_votes() -> None:
    sim = simulate_familiarity({"j": PlantedFamiliarity()}, human_votes=4, n_prompts=50, seed=4)
    assert set(np.round(sim.pairs["human"] * 4, 9)) <= {0.0, 1.0, 2.0, 3.0, 4.0}


def test_same_seed_same_table() -> None:
    a = simulate_familiarity({"j": PlantedFamiliarity()}, n_prompts=20, seed=9)
    b = simulate_familiarity({"j": PlantedFamiliarity()}, n_prompts=20, seed=9)
    assert a.pairs.equals(b.pairs)


def test_bad_settings() -> None:
    with pytest.raises(ConfigError, match="at least one judge"):
        simulate_familiarity({})
    with pytest.raises(ConfigError, match="human_slope must be 0"):
        simulate_familiarity(
            {"a": PlantedFamiliarity(), "b": PlantedFamiliarity()}, human_slope=-1.0
        )
    with pytest.raises(ConfigError, match="agreement"):
        simulate_familiarity({"a": PlantedFamiliarity(agreement=2.0)})
