"""The simulator: valid tables, the knobs do what they say, planted values are recovered."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recuse.errors import ConfigError
from recuse.metrics import METRICS, pairwise_bias
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.competence import CALIBRATED_RUNGS
from recuse.simulate.pairs import DEFAULT_JUDGES, PlantedBias, simulate_pairs
from recuse.tables import validate_pairs


def test_table_is_valid_and_complete() -> None:
    sim = simulate_pairs(n_prompts=30, pairs_per_prompt=4, seed=1)
    t = sim.pairs
    assert len(t) == 30 * 4 * len(DEFAULT_JUDGES)
    pd.testing.assert_frame_equal(validate_pairs(t), t)
    assert t["prompt_id"].nunique() == 30 and t["item_id"].nunique() == 120
    assert (t.groupby("item_id")["judge"].nunique() == len(DEFAULT_JUDGES)).all()
    # per item the generators, lengths and the human label are the same on every judge's row
    per_item = t.groupby("item_id")[["model_a", "model_b", "human", "len_a", "len_b"]].nunique()
    assert (per_item == 1).all().all()
    assert (t["model_a"] != t["model_b"]).all()  # same_source_rate = 0
    assert set(t["human"].unique()) <= {0.0, 0.5, 1.0}
    assert ((t["p_a"] - (t["p_a_first"] + t["p_a_second"]) / 2).abs() < 1e-12).all()
    assert set(sim.families) >= set(t["model_a"]) | set(t["judge"])


def test_seeded() -> None:
    a = simulate_pairs(n_prompts=20, seed=3).pairs
    b = simulate_pairs(n_prompts=20, seed=3).pairs
    c = simulate_pairs(n_prompts=20, seed=4).pairs
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)


def test_knobs() -> None:
    sim = simulate_pairs(
        n_prompts=2000, pairs_per_prompt=2, same_source_rate=0.25, single_order_rate=0.2,
        unparsed_rate=0.1, human_tie_rate=0.2, human_length_preference=0.2, texts=True, seed=5,
    )  # fmt: skip
    t = sim.pairs
    items = t.drop_duplicates("item_id")
    assert (items["model_a"] == items["model_b"]).mean() == pytest.approx(0.25, abs=0.02)
    assert (items["human"] == 0.5).mean() == pytest.approx(0.2, abs=0.02)
    decided = items[(items["human"] != 0.5) & (items["len_a"] != items["len_b"])]
    longer_wins = (decided["human"] > 0.5) == (decided["len_a"] > decided["len_b"])
    assert longer_wins.mean() == pytest.approx(0.7, abs=0.02)
    assert (t["status_second"] == "missing").mean() == pytest.approx(0.2, abs=0.01)
    assert (t["status_first"] == "unparsed").mean() == pytest.approx(0.1, abs=0.01)
    assert t.loc[t["status_second"] != "ok", "p_a_second"].isna().all()
    assert t.loc[t["status_first"] == "ok", "p_a_first"].notna().all()
    words = t["response_a"].str.split().str.len()
    assert (words == t["len_a"]).all()
    assert set(np.unique(t["p_a_first"].dropna())) <= {0.0, 1.0}  # verdict-only judge


def test_probability_verdicts() -> None:
    t = simulate_pairs(n_prompts=50, verdicts="prob", seed=2).pairs
    p = t["p_a_first"].dropna()
    assert ((p > 0) & (p < 1)).mean() > 0.8  # soft except the position-driven rows


def test_truth_table() -> None:
    sim = simulate_pairs(n_prompts=5, seed=0)
    truth = sim.truth()
    # the calibrated headline's parts have no closed-form planted value each (their sum,
    # the headline, does): tests/metrics/test_calibrated_headline.py
    assert set(truth["metric"]) == set(METRICS) - set(CALIBRATED_RUNGS)
    b = DEFAULT_JUDGES["gpt-4"]
    assert sim.true_value("flip_rate", "gpt-4") == pytest.approx(2 * abs(b.position))
    assert sim.true_value("first_position_rate", "claude-v1") == pytest.approx(0.45)
    assert sim.true_value("verbosity_deviation", "gpt-4") == abs(b.verbosity)


@pytest.mark.parametrize("verdicts", ["pick", "prob"])
def test_planted_values_are_recovered_on_a_large_sample(verdicts: str) -> None:
    judges = {
        "gpt-4": PlantedBias(self_preference=0.3, family_preference=-0.2, verbosity=0.1,
                             position=0.1, accuracy=0.65),
        "claude-v1": PlantedBias(self_preference=0.0, family_preference=0.2, verbosity=-0.15,
                                 position=-0.15, accuracy=0.6),
    }  # fmt: skip
    sim = simulate_pairs(
        judges=judges, n_prompts=5000, pairs_per_prompt=2, verdicts=verdicts,  # type: ignore[arg-type]
        single_order_rate=0.1, seed=11,
    )  # fmt: skip
    res = pairwise_bias(sim.pairs, sim.families, boot=Resampling(n_boot=200), curves=False)
    assert not res.skipped
    for r in res.results:
        assert r.judge is not None
        if r.metric in CALIBRATED_RUNGS:
            continue
        truth = sim.true_value(r.metric, r.judge)
        se = (r.ci_high - r.ci_low) / (2 * 1.645)
        assert abs(r.estimate - truth) < 4 * se + 1e-9, (r.judge, r.metric, r.estimate, truth)


def test_custom_models_and_families() -> None:
    sim = simulate_pairs(
        judges={"m1": PlantedBias(self_preference=0.2)},
        models=["m1", "m2", "m3"],
        families={"m1": "f", "m2": "f", "m3": "g"},
        n_prompts=10,
        seed=0,
    )
    assert set(sim.pairs["model_a"]) <= {"m1", "m2", "m3"}
    assert sim.families == {"m1": "f", "m2": "f", "m3": "g"}


def test_bad_settings() -> None:
    with pytest.raises(ConfigError, match="agreement probabilities"):
        simulate_pairs(judges={"gpt-4": PlantedBias(self_preference=0.9, accuracy=0.8)})
    with pytest.raises(ConfigError, match="not in the built-in roster"):
        simulate_pairs(models=["gpt-4", "my-model"])
    with pytest.raises(ConfigError, match="position"):
        simulate_pairs(judges={"gpt-4": PlantedBias(position=0.6)})
    with pytest.raises(ConfigError, match="human_tie_rate"):
        simulate_pairs(human_tie_rate=1.5)
    with pytest.raises(ConfigError, match="two distinct models"):
        simulate_pairs(models=["gpt-4"])


def test_the_unvalidated_table_is_the_validated_one_before_validation() -> None:
    """``validated=False`` (simulate_familiarity reshapes the table and validates its
    own) is the same draw, not yet validated: validating it gives the default's table."""
    raw = simulate_pairs(seed=4, n_prompts=20, texts=True, validated=False).pairs
    assert not raw.equals(validate_pairs(raw))  # the ids are still pandas' str, not text
    pd.testing.assert_frame_equal(
        validate_pairs(raw), simulate_pairs(seed=4, n_prompts=20, texts=True).pairs
    )


def test_an_agreement_probability_just_past_its_range_reads_past_it() -> None:
    """Accuracy 0.95 with prompt-to-prompt variation 0.0504 reaches 1.0004, past the 1 a
    probability can be: three decimals wrote "reach [0.900, 1.000], outside [0.000,
    1.000]". The end past the range takes the decimals that put it past."""
    with pytest.raises(ConfigError) as err:
        simulate_pairs(judges={"gpt-4": PlantedBias(accuracy=0.95)}, prompt_effect=0.0504)
    assert "reach [0.900, 1.0004], outside [0.000, 1.000]" in str(err.value), str(err.value)


def _own_pick_covariance(bias_effect: float) -> float:
    """Covariance of ``y = s (agree - 1/2)`` between two pairs of one prompt that hold the
    judge's answer (a chance-level judge: ``E[y | w] = self_preference/2 + w``), so
    ``Var(w) = bias_effect² / 3`` (the uniform's), 0 without it."""
    sim = simulate_pairs(
        judges={"gpt-4": PlantedBias(self_preference=0.2, accuracy=0.5)}, n_prompts=5000,
        pairs_per_prompt=20, human_tie_rate=0.0, prompt_effect=0.0, bias_effect=bias_effect,
        seed=11,
    )  # fmt: skip
    t = sim.pairs
    own = np.where(t["model_a"] == "gpt-4", 1.0, np.where(t["model_b"] == "gpt-4", -1.0, 0.0))
    y1 = np.where(t["human"] == 1.0, 1.0, -1.0)  # the side the human prefers (+1 = a)
    agree = np.where(y1 > 0, t["p_a"], 1.0 - t["p_a"])
    rows = pd.DataFrame({"prompt": t["prompt_id"], "y": own * y1 * (agree - 0.5)})[own != 0]
    rows["y"] -= rows["y"].mean()
    g = rows.groupby("prompt")["y"].agg(["sum", "count"])
    cross = float((g["sum"] ** 2).sum() - (rows["y"] ** 2).sum())
    return cross / float((g["count"] ** 2 - g["count"]).sum())


def test_bias_effect_makes_a_prompts_biases_shift_together_and_keeps_the_truths() -> None:
    """bias_effect adds Uniform(-e, e) per prompt to each half-bias: pairs of one prompt
    share it (covariance e²/3 = 0.0075 at e = 0.15; over 5,000 prompts it reads 0.0078
    here, 0.0077 ± 0.0010 over seeds 8–15; 0.0014 without), while the population values
    stay those of the module's table."""
    assert _own_pick_covariance(0.15) == pytest.approx(0.15**2 / 3, abs=0.0025)
    assert abs(_own_pick_covariance(0.0)) < 0.0025
    judges = {"gpt-4": PlantedBias(self_preference=0.2, family_preference=0.1, verbosity=0.1,
                                   position=0.05, accuracy=0.5)}  # fmt: skip
    sim = simulate_pairs(judges=judges, n_prompts=4000, bias_effect=0.1, seed=3)
    metrics = ["self_preference_eo", "family_preference_eo", "verbosity_bias", "flip_rate"]
    res = pairwise_bias(sim.pairs, sim.families, metrics=metrics, curves=False,
                        boot=Resampling(n_boot=200))  # fmt: skip
    for r in res.results:
        truth = sim.true_value(r.metric, "gpt-4")
        se = (r.ci_high - r.ci_low) / (2 * 1.645)
        assert abs(r.estimate - truth) < 4 * se, (r.metric, r.estimate, truth)
    with pytest.raises(ConfigError, match="bias_effect"):
        simulate_pairs(bias_effect=0.3)
    with pytest.raises(ConfigError, match="agreement probabilities reach"):
        simulate_pairs(judges=judges, bias_effect=0.2)  # 0.5 ± (0.1 + 0.4) + 0.05
