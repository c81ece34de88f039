"""A judge with a slot lapse (it takes the answer in one slot on a share of its orders,
whatever the pair): the competence model gains the lapse where the likelihood calls for
it, so its self-preference reads the planted value, where the position term alone (a
shift in log-odds) read it low; judges without one get the same number as before."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, special

import recuse.metrics.competence as competence
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.competence import (
    LAPSE_LR,
    LAPSE_MIN,
    calibrated_parts,
    calibrated_self_preference,
    lapse_test,
)
from recuse.metrics.self_preference import favored_side
from recuse.metrics.verdicts import judge_codes
from recuse.simulate.self_preference import (
    OTHER_STRENGTHS,
    AuthorJudge,
    simulate_self_preference,
    simulate_slot_lapse_judge,
    theta_for_own_rate,
)

BOOT = Resampling(n_boot=40)


def _estimates(monkeypatch: pytest.MonkeyPatch, modelled: bool, **kw: object) -> list[float]:
    """The calibrated estimate of ``m0`` on tables 0–5, with the lapse test on or off."""
    monkeypatch.setattr(competence, "LAPSE_LR", LAPSE_LR if modelled else float("inf"))
    out = []
    for seed in range(6):
        sim = simulate_slot_lapse_judge(seed=seed, **kw)  # type: ignore[arg-type]
        point = Resampling(n_boot=10)  # (the estimate does not depend on the resamples)
        out.append(calibrated_self_preference(sim.pairs, judge="m0", boot=point).estimate)
    return out


@pytest.mark.parametrize("probabilities", [False, True])
def test_no_self_term_reads_zero_with_the_lapse_and_low_without(
    monkeypatch: pytest.MonkeyPatch, probabilities: bool
) -> None:
    """Half its orders lapsed to the first slot, its answers preferred 95% of the time, no
    self term: about 0 with the lapse modelled; the position term alone read −0.03 (0/1
    picks) and −0.04 (probability verdicts) on these tables."""
    new = _estimates(monkeypatch, True, probabilities=probabilities)
    old = _estimates(monkeypatch, False, probabilities=probabilities)
    assert abs(np.mean(new)) < 0.01
    assert np.mean(old) < -0.025


def test_a_planted_self_term_is_recovered_beside_the_lapse(monkeypatch: pytest.MonkeyPatch) -> None:
    sim = simulate_slot_lapse_judge(tau=0.3, seed=0)
    truth = sim.truth  # (1 − 0.5) · 0.3 · (1 − E[P0_own]): the same for every table
    plain = simulate_self_preference(
        {"m0": AuthorJudge(2.0, 0.0, 0.3)}, {"m0": theta_for_own_rate(0.95, OTHER_STRENGTHS),
                                            **OTHER_STRENGTHS}, n_prompts=2,
    )  # fmt: skip
    assert truth == pytest.approx(0.5 * plain.true_value("m0"), rel=1e-12)
    assert 0.005 < truth < 0.03
    est = _estimates(monkeypatch, True, tau=0.3)
    assert np.mean(est) == pytest.approx(truth, abs=0.006)


@pytest.mark.parametrize("slot", [1, -1])
def test_the_result_names_the_lapse_and_its_share(slot: int) -> None:
    sim = simulate_slot_lapse_judge(slot=slot, seed=2)
    res = calibrated_self_preference(sim.pairs, judge="m0", boot=BOOT)
    assert res.components["slot_lapse"] == pytest.approx(0.5, abs=0.06)
    assert res.components["slot_lapse_slot"] == slot
    assert "here m0: a slot lapse" in res.method
    assert "P(picks a) = λ·[a in that slot] + (1 − λ)" in res.method
    assert not res.warnings


def _model_and_totals(pairs):  # type: ignore[no-untyped-def]
    codes, labels = judge_codes(pairs, None)
    side = favored_side(pairs, relation="self")
    values, group, _, _, model = calibrated_parts(pairs, codes, labels, side=side)
    return model, values[group == 0].sum(axis=0)


def test_the_lapse_fit_is_the_maximum_likelihood_scipy_finds() -> None:
    """The EM-then-Fisher-scoring fit against L-BFGS-B on the same likelihood."""
    sim = simulate_slot_lapse_judge(lapse=0.3, seed=4)
    model, t = _model_and_totals(sim.pairs)
    n, y, _ = model.placed(t)
    _, g = model.fit(t)
    x = model.design(g)
    in_slot = model.first == 1
    fitted = competence._lapse_fit(x, n, y, in_slot, np.ones(len(n), dtype=bool))

    def nll(phi: np.ndarray) -> float:
        p = phi[-1] * in_slot + (1 - phi[-1]) * special.expit(x @ phi[:-1])
        p = np.clip(p, 1e-12, 1 - 1e-12)
        return -float(np.sum(y * np.log(p) + (n - y) * np.log(1 - p)))

    bounds = [(None, None)] * x.shape[1] + [(0.0, 0.99)]
    start = np.r_[np.zeros(x.shape[1]), 0.1]
    best = optimize.minimize(nll, start, method="L-BFGS-B", bounds=bounds,
                             options={"ftol": 1e-14, "gtol": 1e-10, "maxiter": 5000})  # fmt: skip
    assert nll(fitted) <= best.fun + 1e-6
    assert fitted[-1] == pytest.approx(best.x[-1], abs=2e-3)
    assert fitted[:-1] == pytest.approx(best.x[:-1], abs=1e-2)


@pytest.mark.parametrize(("competence_", "position"), [(0.3, 1.5), (3.0, 0.5), (20.0, 1.5)])
def test_a_position_term_in_log_odds_gains_no_lapse(
    monkeypatch: pytest.MonkeyPatch, competence_: float, position: float
) -> None:
    """Judges whose slot preference is the model's (a log-odds shift): no lapse, and the
    estimate is the one without the test, to the last digit."""
    strengths = {"m0": theta_for_own_rate(0.86, OTHER_STRENGTHS), **OTHER_STRENGTHS}
    for seed in range(3):
        sim = simulate_self_preference(
            {"m0": AuthorJudge(competence_, position)}, strengths, n_prompts=80, seed=seed
        )
        model, t = _model_and_totals(sim.pairs)
        test = lapse_test(model, t)
        assert not test.lapsed
        assert test.lr < LAPSE_LR or test.share < LAPSE_MIN
        res = calibrated_self_preference(sim.pairs, judge="m0", boot=BOOT)
        monkeypatch.setattr(competence, "LAPSE_LR", float("inf"))
        before = calibrated_self_preference(sim.pairs, judge="m0", boot=BOOT)
        monkeypatch.undo()
        assert (res.estimate, res.ci_low, res.ci_high) == (
            before.estimate, before.ci_low, before.ci_high,
        )  # fmt: skip
        assert "slot_lapse" not in res.components


def test_one_step_resamples_warn_of_the_lapse_they_do_not_model() -> None:
    sim = simulate_slot_lapse_judge(seed=1)
    res = calibrated_self_preference(sim.pairs, judge="m0", boot=BOOT, one_step=True)
    assert "slot_lapse" not in res.components
    (words,) = [w for w in res.warnings if w.startswith("slot lapse not modelled")]
    assert "takes the answer shown first whatever the pair" in words
    model, t = _model_and_totals(sim.pairs)
    share = lapse_test(model, t).share
    assert f"on about {round(100 * share)}% of its orders" in words


def test_bad_settings_of_the_simulation_are_refused() -> None:
    from recuse.errors import ConfigError

    with pytest.raises(ConfigError, match="lapse must be in"):
        simulate_slot_lapse_judge(lapse=1.0)
    with pytest.raises(ConfigError, match="slot must be 1"):
        simulate_slot_lapse_judge(slot=0)


def test_a_judge_without_the_lapse_reads_as_before_beside_one_with_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Three judges in one table with categories, m0 lapsed, m1 and m2 not: their every
    calibrated number (the estimate, its family preference and its rungs, each with its
    interval, components and warnings) is the one without the lapse test, to rounding
    (the lapse splits the patterns they share with m0, so their sums run over longer
    arrays: m1's rung "human prefers other" read -0.018802925500885016 against
    -0.01880292550088498), as beside a judge whose competence is conditioned on the
    label."""
    from recuse.metrics import pairwise_bias
    from recuse.metrics.competence import CALIBRATED_RUNGS

    strengths = {"m0": theta_for_own_rate(0.95, OTHER_STRENGTHS), **OTHER_STRENGTHS}
    judges = {"m1": AuthorJudge(3.0, 0.4, 0.2), "m2": AuthorJudge(1.0, 0.2, 0.0)}
    other = simulate_self_preference(judges, strengths, n_prompts=200, seed=5).pairs
    pairs = pd.concat([simulate_slot_lapse_judge(seed=0, tau=0.3).pairs, other])
    ids = sorted(pairs["prompt_id"].unique())
    drawn = np.random.default_rng(0).choice(["a", "b", "c"], len(ids))
    pairs["category"] = pairs["prompt_id"].map(dict(zip(ids, drawn, strict=True)))
    families = {"m0": "f", "m1": "f", "m2": "g", "m3": "h", "m4": "i"}
    names = ["self_preference_calibrated", "family_preference_calibrated", *CALIBRATED_RUNGS]

    def numbers(lr: float) -> dict[tuple[str, str], tuple[object, ...]]:
        monkeypatch.setattr(competence, "LAPSE_LR", lr)
        res = pairwise_bias(pairs, families, judges=["m0", "m1", "m2"], metrics=names,
                            boot=Resampling(n_boot=100, seed=0))  # fmt: skip
        return {
            (r.judge, r.metric): (
                r.estimate,
                r.ci_low,
                r.ci_high,
                sorted(r.components.items()),
                r.warnings,
            )
            for r in res.results
        }

    with_test, without = numbers(LAPSE_LR), numbers(float("inf"))
    others = {k: v for k, v in with_test.items() if k[0] != "m0"}
    assert len(others) >= 2 * len(names) - 1  # (m2 has no family pairs)
    assert others.keys() == {k for k in without if k[0] != "m0"}
    for key, (*ends, parts, warned) in others.items():
        *was_ends, was_parts, was_warned = without[key]
        assert ends == pytest.approx(was_ends, rel=1e-12, abs=1e-15), key
        assert dict(parts) == pytest.approx(dict(was_parts), rel=1e-12, abs=1e-15), key  # type: ignore[arg-type]
        assert warned == was_warned, key
    # (m0 gained the lapse: its estimate moved)
    assert "slot_lapse" in dict(with_test["m0", names[0]][3])  # type: ignore[arg-type]
    assert with_test["m0", names[0]][0] != without["m0", names[0]][0]


def _two_judges() -> pd.DataFrame:
    """m0 lapsed on half its orders (slot 1), m1 without a lapse, on the same models."""
    strengths = {"m0": theta_for_own_rate(0.95, OTHER_STRENGTHS), **OTHER_STRENGTHS}
    other = simulate_self_preference({"m1": AuthorJudge(3.0, 0.4, 0.2)}, strengths,
                                     n_prompts=200, seed=5).pairs  # fmt: skip
    return pd.concat([simulate_slot_lapse_judge(seed=0).pairs, other], ignore_index=True)


def test_an_exact_refit_asked_for_models_the_lapse_at_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``one_step=False`` on a table whose size times its judges is past
    :data:`MAX_PATTERNS` but whose chosen judges' patterns are not (100 patterns and 20
    labelled model pairs, two judges; 112 patterns with m0's lapse, which splits those it
    shares with m1): at a limit of 132 the exact refit was made, but without m0's lapse
    and without a warning (the gate read the one-step fit, which has none); now m0 reads
    what it reads under the default limit. The limit counts the fit made, lapse split
    included (the refit's memory and time grow with it): at 131 no estimate, and the
    reason names the split and lapse=False (it counted 120 without the split, and gave
    the estimate, for a while)."""
    from recuse.metrics.competence import calibrated_specs
    from recuse.metrics.estimate import clusters_of, run_specs

    pairs = _two_judges()
    codes, labels = judge_codes(pairs, None)
    plain = calibrated_parts(pairs, codes, labels, one_step=False)[4]
    lapsed = calibrated_parts(pairs, codes, labels, one_step=False,
                              lapse_term=np.array([1, 0], np.int8))[4]  # fmt: skip
    limit = len(lapsed.ia) + len(lapsed.la)
    assert 2 * plain.table_size > limit > len(plain.ia) + len(plain.la)

    def m0(most: int) -> tuple[float, str, tuple[str, ...]] | str:
        monkeypatch.setattr(competence, "MAX_PATTERNS", most)
        specs, problems = calibrated_specs(pairs, codes, labels, one_step=False)
        if problems:
            return problems["m0"]
        results, _ = run_specs(specs[:1], clusters_of(pairs), boot=BOOT, min_n=5)
        (res,) = [r for r in results if r.judge == "m0"]
        return res.estimate, res.method, res.warnings

    default = m0(competence.MAX_PATTERNS)
    assert isinstance(default, tuple) and "here m0: a slot lapse" in default[1]
    at_limit = m0(limit)
    assert isinstance(at_limit, tuple) and at_limit[:2] == default[:2]
    past = m0(limit - 1)
    assert past == (
        "112 covariate patterns and 20 labelled model pairs (100 patterns without the "
        "splits of the slot lapse; set lapse=False to fit without them): more than the 131 "
        "the competence model's exact bootstrap handles"
    )
    # with the label term on both judges too: both splits counted, both named
    both = calibrated_parts(pairs, codes, labels, one_step=False, label_term=np.ones(2, bool),
                            lapse_term=np.array([1, 0], np.int8))[4]  # fmt: skip
    monkeypatch.setattr(competence, "MAX_PATTERNS", len(both.ia) + len(both.la) - 1)
    _, problems = calibrated_specs(pairs, codes, labels, one_step=False, label=True)
    assert problems["m0"].startswith(
        f"{len(both.ia)} covariate patterns and 20 labelled model pairs (100 patterns without "
        "the splits of the label term and slot lapse; set label=False and lapse=False"
    )
    assert len(both.ia) > 112


def test_lapse_false_keeps_the_position_term_alone_and_says_so() -> None:
    """Forced off on the lapsed judge: the estimate is the position term's alone (the
    test's threshold out of reach gives the same number), low as without the lapse
    model; the method says so and a warning names the lapse."""
    sim = simulate_slot_lapse_judge(seed=2)
    off = calibrated_self_preference(sim.pairs, judge="m0", boot=BOOT, lapse=False)
    on = calibrated_self_preference(sim.pairs, judge="m0", boot=BOOT)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(competence, "LAPSE_LR", float("inf"))
        unmodelled = calibrated_self_preference(sim.pairs, judge="m0", boot=BOOT)
    assert (off.estimate, off.ci_low, off.ci_high) == (
        unmodelled.estimate, unmodelled.ci_low, unmodelled.ci_high,
    )  # fmt: skip
    assert off.estimate < on.estimate - 0.02
    assert "slot_lapse" not in off.components
    assert "slot lapse not modelled (lapse=False)" in off.method
    assert "slot lapse not modelled (lapse=False)" not in on.method
    (words,) = [w for w in off.warnings if w.startswith("slot lapse not modelled")]
    assert "lapse=False keeps it out of the model" in words
    # the default models it on exact refits only: not in one-step resamples
    assert "lapse=None, models it where the resamples are refitted exactly" in words
    assert not [w for w in unmodelled.warnings if w.startswith("slot lapse")]


def test_lapse_true_is_refused_with_what_it_takes() -> None:
    from recuse.errors import ConfigError

    sim = simulate_slot_lapse_judge(seed=2)
    with pytest.raises(ConfigError, match=r"lapse must be None .* or False"):
        calibrated_self_preference(sim.pairs, judge="m0", boot=BOOT, lapse=True)  # type: ignore[arg-type]
