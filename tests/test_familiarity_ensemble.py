"""The familiarity-weighted ensemble: weights by hand, and less self-preference on planted data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recuse.errors import ConfigError, InputError
from recuse.familiarity_ensemble import (
    compare_self_preference,
    familiarity_weighted_ensemble,
    familiarity_weights,
)
from recuse.simulate_familiarity import PlantedFamiliarity, simulate_familiarity
from recuse.tables import validate_pairs


def _two_judges() -> pd.DataFrame:
    # judge j finds item x familiar (low ppl), k finds both items alike
    return validate_pairs(
        pd.DataFrame(
            {
                "item_id": ["x", "y", "x", "y"],
                "prompt_id": ["p", "q", "p", "q"],
                "model_a": "m",
                "model_b": "n",
                "human": [1, 0, 1, 0],
                "judge": ["j", "j", "k", "k"],
                "p_a_first": [1.0, 0.0, 0.0, 1.0],
                "p_a_second": [1.0, np.nan, 0.0, 0.5],
                "p_a": np.nan,
                "ppl_a": [np.e**1, np.e**3, np.e**2, np.e**2],
                "ppl_b": [np.e**4, np.e**4, np.e**4, np.e**4],
            }
        )
    )


def test_weights_by_hand() -> None:
    t = _two_judges()
    w = familiarity_weights(t, tau=1.0)
    # j: f = min log ppl = 1 (x), 3 (y); z = -1/sqrt(2), +1/sqrt(2). k: f = 2, 2 -> z = 0
    zx = -1 / np.sqrt(2)
    assert w.loc["x", "j"] == pytest.approx(np.exp(zx) / (np.exp(zx) + 1))
    assert w.loc["y", "j"] == pytest.approx(np.exp(-zx) / (np.exp(-zx) + 1))
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    plain = familiarity_weights(t, tau=0.0)
    np.testing.assert_allclose(plain.to_numpy(), 0.5)


def test_ensemble_verdicts_by_hand() -> None:
    t = _two_judges()
    e = familiarity_weighted_ensemble(t, tau=1.0, name="ens").set_index("item_id")
    w = familiarity_weights(t, tau=1.0)
    assert e.loc["x", "p_a_first"] == pytest.approx(w.loc["x", "j"] * 1.0)
    # y, second order: only k judged it -> its verdict alone
    assert e.loc["y", "p_a_second"] == pytest.approx(0.5)
    assert e.loc["y", "p_a_first"] == pytest.approx(w.loc["y", "k"])
    assert (e["judge"] == "ens").all() and e["human"].tolist() == [1.0, 0.0]
    plain = familiarity_weighted_ensemble(t, tau=0.0).set_index("item_id")
    assert plain.loc["x", "p_a"] == pytest.approx(0.5)


def test_member_without_perplexity_is_left_out() -> None:
    t = _two_judges()
    t.loc[0, "ppl_a"] = np.nan  # j on x
    e = familiarity_weighted_ensemble(t, tau=1.0).set_index("item_id")
    assert e.attrs["left_out"] == 1
    assert e.loc["x", "p_a_first"] == pytest.approx(0.0)  # k's verdict only


def test_bad_options() -> None:
    t = _two_judges()
    with pytest.raises(ConfigError, match="tau"):
        familiarity_weights(t, tau=-1)
    with pytest.raises(ConfigError, match="two judges"):
        familiarity_weights(t, judges=["j"])
    with pytest.raises(InputError, match="ppl_a"):
        familiarity_weights(t.drop(columns=["ppl_a"]))


def test_weighted_ensemble_reduces_planted_self_preference() -> None:
    """Self-preference that arises only through perplexity: the weighted ensemble has less."""
    judges = {
        m: PlantedFamiliarity(judge_slope=-2.0, own_gap=-0.6, agreement=0.6, noise_sd=0.2)
        for m in ("m1", "m2", "m3")
    }
    sim = simulate_familiarity(judges, n_prompts=300, verdicts="prob", seed=1)
    table, skipped = compare_self_preference(sim.pairs, tau=2.0, n_boot=300)
    assert not skipped
    est = table.pivot(index="member", columns="evaluator", values="estimate")
    assert (est["single"] > 0.3).all()
    assert (est["plain"] < est["single"]).all()
    assert (est["weighted"] < est["plain"]).all()
    assert set(table["metric"]) == {"self_preference_eo"}
