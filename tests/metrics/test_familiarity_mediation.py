"""Familiarity mediation of the calibrated self-preference: planted pathways recovered
(perplexity only: all indirect; a self shift only: all direct) and a by-hand check of
the mediator path."""

from __future__ import annotations

import numpy as np
import pytest

from recuse.errors import EstimationError
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.competence import calibrated_self_preference
from recuse.metrics.familiarity_mediation import MEDIATION, familiarity_mediation
from recuse.metrics.self_preference import favored_side
from recuse.simulate.familiarity import PlantedFamiliarity, simulate_familiarity


def _means(planted: PlantedFamiliarity, seeds: int = 8) -> dict[str, float]:
    out: dict[str, list[float]] = {}
    for seed in range(seeds):
        sim = simulate_familiarity({"m1": planted}, n_prompts=300, seed=seed)
        for r in familiarity_mediation(sim.pairs, judge="m1", boot=Resampling(n_boot=50)):
            out.setdefault(r.metric, []).append(r.estimate)
            out.setdefault("total", []).append(r.components["calibrated_self_preference"])
    return {k: float(np.mean(v)) for k, v in out.items()}


def test_perplexity_alone_is_all_indirect() -> None:
    """Own answers 0.5 nats more familiar, a judge pulled toward the familiar answer
    (-2 log-odds per nat), no self shift: what looks like self-preference is familiarity."""
    m = _means(PlantedFamiliarity(judge_slope=-2.0, own_gap=-0.5))
    assert m["total"] > 0.15
    assert m["familiarity_indirect"] == pytest.approx(m["total"], abs=0.02)
    assert abs(m["familiarity_direct"]) <= 0.02


def test_a_self_shift_without_familiarity_is_all_direct() -> None:
    m = _means(PlantedFamiliarity(judge_slope=-2.0, own_gap=0.0, self_shift=0.8))
    assert m["total"] > 0.1
    assert abs(m["familiarity_indirect"]) <= 0.02
    assert m["familiarity_direct"] == pytest.approx(m["total"], abs=0.02)


def test_parts_add_up_and_the_mediator_path_is_the_own_gap() -> None:
    sim = simulate_familiarity(
        {"m1": PlantedFamiliarity(judge_slope=-1.5, own_gap=-0.4, self_shift=0.3)},
        n_prompts=150,
        seed=1,
    )
    t = sim.pairs
    results = familiarity_mediation(t, judge="m1", boot=Resampling(n_boot=200))
    assert [r.metric for r in results] == list(MEDIATION)
    indirect, direct, share = (r.estimate for r in results)
    total = calibrated_self_preference(t, judge="m1", boot=Resampling(n_boot=200)).estimate
    assert indirect + direct == pytest.approx(total, abs=1e-9)
    assert share == pytest.approx(indirect / total, abs=1e-9)
    side = favored_side(t)
    d = np.log(t["ppl_a"].to_numpy()) - np.log(t["ppl_b"].to_numpy())
    gap = np.where(side > 0, d, -d)[side != 0].mean()
    assert results[0].components["own_log_ppl_gap"] == pytest.approx(gap, abs=1e-12)
    slope = results[0].components["perplexity_slope"]
    assert indirect == pytest.approx(gap * slope, abs=1e-12)
    for r in results:
        assert r.ci_low <= r.estimate <= r.ci_high


def test_no_perplexities_is_refused() -> None:
    sim = simulate_familiarity({"m1": PlantedFamiliarity()}, n_prompts=20, seed=0)
    with pytest.raises(EstimationError, match="perplexities"):
        familiarity_mediation(
            sim.pairs.assign(ppl_a=np.nan), judge="m1", boot=Resampling(n_boot=50)
        )


def test_the_share_of_a_self_preference_that_may_be_none_is_flagged() -> None:
    """No bias planted: Δ's interval holds 0, so indirect / Δ is a ratio to what may be
    nothing (over 150 such tables its sd was 0.28 against 0.02 for the indirect part):
    the share says so with Δ's interval, which is the headline's on the same rows."""
    boot = Resampling(n_boot=200, seed=0)
    flat = simulate_familiarity({"m1": PlantedFamiliarity(judge_slope=0.0)}, n_prompts=200)
    share = familiarity_mediation(flat.pairs, judge="m1", boot=boot)[2]
    total = calibrated_self_preference(flat.pairs, judge="m1", boot=boot)
    assert total.ci_low < 0 < total.ci_high
    (caveat,) = [w for w in share.warnings if "share's denominator may be 0" in w]
    assert f"[−{-total.ci_low:.3f}, +{total.ci_high:.3f}]" in caveat
    # familiarity planted: Δ clear of 0, the share ≈ 1 stands without the caveat
    fam = PlantedFamiliarity(judge_slope=-2.0, own_gap=-0.5)
    t = simulate_familiarity({"m1": fam}, n_prompts=200, seed=1).pairs
    share = familiarity_mediation(t, judge="m1", boot=boot)[2]
    assert calibrated_self_preference(t, judge="m1", boot=boot).ci_low > 0
    assert not any("denominator" in w for w in share.warnings)
