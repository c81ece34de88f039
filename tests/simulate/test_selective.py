"""The planted generator of selective judging: its exact agreement matches a sample."""

from recuse.mitigation.selective import confidence_of
from recuse.simulate.selective import simulate_selective


def test_true_agreement_matches_a_large_sample() -> None:
    sim = simulate_selective(200_000, seed=3)
    conf = confidence_of(sim.pairs["p_a"].to_numpy(float))
    agree = (sim.pairs["p_a"] > 0.5).to_numpy() == (sim.pairs["human"] > 0.5).to_numpy()
    for lam in (0.5, 0.8, 0.95):
        for stratum in ("own", "family", "other"):
            kept = (sim.stratum == stratum) & (conf >= lam)
            # the planted q, and the realised agreement, both match the quadrature
            assert abs(sim.q[kept].mean() - sim.true_agreement(lam, stratum)) < 0.003
            assert abs(agree[kept].mean() - sim.true_agreement(lam, stratum)) < 0.01
        pooled = conf >= lam
        assert abs(sim.q[pooled].mean() - sim.true_agreement(lam)) < 0.003


def test_own_items_hold_the_judges_answer() -> None:
    sim = simulate_selective(500, seed=0)
    own = sim.stratum == "own"
    has_judge = (sim.pairs["model_a"] == "gpt-4") | (sim.pairs["model_b"] == "gpt-4")
    assert (has_judge.to_numpy() == own).all()
    assert (sim.pairs["model_a"] != sim.pairs["model_b"]).all()
