"""Bradley–Terry strengths with no finite estimate (Ford's condition), refused where they
are fitted: the leaderboard's fit, the human labels' strengths behind the calibrated
self-preference (exact and one-step), and the batched check on label sums that each
resample of the competence model makes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recuse.errors import EstimationError
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.bradley_terry import bradley_terry, no_finite_strengths
from recuse.metrics.competence import (
    _strongly_connected,
    calibrated_self_preference,
    label_strengths,
)
from recuse.simulate.self_preference import AuthorJudge, simulate_self_preference


def test_bradley_terry_refuses_strengths_with_no_finite_estimate() -> None:
    """a beat b twice, b and c split: a never lost, so the likelihood rises without end
    as s_a grows (statsmodels stopped at s_a − s_b ≈ 21 before). Refused in the fit
    itself, naming the group that never lost and the one that never beat it; a loss of
    weight 0 does not count, one of weight 1 makes the fit finite."""
    a, b = pd.Series(["a", "a", "b", "b"]), pd.Series(["b", "b", "c", "c"])
    y = np.array([1.0, 1.0, 1.0, 0.0])
    clusters = pd.Series(range(4))
    boot = Resampling(n_boot=50)
    with pytest.raises(EstimationError) as err:
        bradley_terry(y, a, b, clusters, boot=boot)
    assert str(err.value).startswith(
        "the 3 systems fall into 2 groups, and a group of a never lost to the others "
        "(and a group of b, c never beat the others), so Bradley–Terry strengths have no "
        "finite estimate"
    )
    covariates = pd.DataFrame({"first": [1.0, -1.0, 1.0, -1.0]})
    with pytest.raises(EstimationError, match="a group of a never lost"):
        bradley_terry(y, a, b, clusters, covariates=covariates, boot=boot)
    # b beats a once: with weight 0 it is not there, with weight 1 the fit is finite
    a2, b2 = (
        pd.concat([a, pd.Series(["b"])], ignore_index=True),
        pd.concat([b, pd.Series(["a"])], ignore_index=True),
    )
    y2, c2 = np.r_[y, 1.0], pd.Series(range(5))
    with pytest.raises(EstimationError, match="a group of a never lost"):
        bradley_terry(y2, a2, b2, c2, weights=np.r_[np.ones(4), 0.0], boot=boot)
    fit = bradley_terry(y2, a2, b2, c2, boot=boot)
    s = dict(zip(fit.systems, fit.strengths, strict=True))
    # the MLE by hand: a–b 2 of 3, b–c 1 of 2 (a tree: each edge's log-odds exactly)
    assert s["a"] - s["b"] == pytest.approx(np.log(2.0), abs=1e-6)
    assert s["b"] - s["c"] == pytest.approx(0.0, abs=1e-6)


def _unbeaten_m0(seed: int = 3) -> pd.DataFrame:
    """Three authors judge all pairs of four models; the human labels give m0 every pair
    it is in (the other labels as simulated), so m0's strength has no finite estimate."""
    cast = {"m0": AuthorJudge(2.0, 0.3, 0.2), "m1": AuthorJudge(1.5), "m2": AuthorJudge(1.0)}
    strengths = {"m0": 1.0, "m1": 0.5, "m2": 0.0, "m3": -0.5}
    t = simulate_self_preference(cast, strengths, n_prompts=40, seed=seed).pairs
    human = np.where(t["model_a"] == "m0", 1.0, np.where(t["model_b"] == "m0", 0.0, t["human"]))
    return t.assign(human=human)


CAL = "self_preference_calibrated"
WHY = "the human labels: the 4 systems fall into 2 groups, and a group of m0 never lost"


def test_calibrated_self_preference_is_refused_where_a_model_never_lost() -> None:
    """m0 never lost in the labels: before, the label strengths stopped where the fit's
    steps ran out (m0 at +18.5 log-odds, the others near −6) and every judge got a
    calibrated number from them: m0 (a planted self term of 0.2) −0.21 [−0.29, −0.14],
    its own pairs predicted as sure wins (0.99999); m1 (none planted) +0.16 [0.09,
    0.25]. Now no judge gets one, with the reason, in the exact and the one-step
    bootstrap alike; the EO gap, which reads the labels pair by pair, stays."""
    from recuse.metrics import pairwise_bias

    t = _unbeaten_m0()
    with pytest.raises(EstimationError, match=WHY):
        label_strengths(t)
    for one_step in (False, True):
        with pytest.raises(EstimationError, match=WHY):
            calibrated_self_preference(t, judge="m0", boot=Resampling(n_boot=50), one_step=one_step)
    s = pairwise_bias(t, metrics=[CAL, "self_preference_eo"], boot=Resampling(n_boot=50))
    skipped = {(x.judge, x.metric): x.reason for x in s.skipped}
    for judge in ("m0", "m1", "m2"):
        assert WHY in skipped[(judge, CAL)], skipped
    assert {r.metric for r in s.results} == {"self_preference_eo"}


def test_the_reason_reaches_the_audit_report(tmp_path: Path) -> None:
    """The audit says why m1 and m2 have no calibrated headline (equal opportunity in its
    place), in the report's JSON; m0 has no labelled loss, its own skip says so."""
    import recuse

    report = recuse.audit(_unbeaten_m0(), only=["self-preference"], n_boot=100, min_n=5)
    assert not [f for f in report.result.findings if f.bias.key == CAL]
    text = json.loads(report.to_json(tmp_path / "report.json").read_text("utf-8"))
    flat = json.dumps(text, ensure_ascii=False)
    for judge in ("m1", "m2"):
        assert f"{judge}: no calibrated estimate ({WHY}" in flat
    skipped = report.skipped
    m0 = skipped[(skipped["judge"] == "m0") & (skipped["bias"] == CAL)]["reason"]
    assert list(m0) == [f"{CAL}: no pairs where the human prefers the other response"]


def test_the_batched_check_is_fords_condition() -> None:
    """The competence model's check on label sums, many tables at once (as a chunk of
    resamples), against :func:`no_finite_strengths` (itself checked against every
    split of the systems in test_bradley_terry)."""
    rng = np.random.default_rng(11)
    m = 5
    beat, seen, want = [], [], []
    while len(want) < 400:
        n = int(rng.integers(2, 9))
        a, b = rng.integers(0, m, n), rng.integers(0, m, n)
        keep = a != b
        if not keep.any():
            continue
        a, b = a[keep], b[keep]
        y = rng.choice([0.0, 0.5, 1.0, 0.8], len(a))
        g = np.zeros((m, m), dtype=bool)
        g[a[y > 0], b[y > 0]] = True
        g[b[y < 1], a[y < 1]] = True
        s = np.zeros(m, dtype=bool)
        s[a], s[b] = True, True
        why = no_finite_strengths(y, pd.Series(a.astype(str)), pd.Series(b.astype(str)))
        beat.append(g)
        seen.append(s)
        want.append(why is None)
    got = _strongly_connected(np.array(beat), np.array(seen))
    np.testing.assert_array_equal(got, want)
    assert 50 < sum(want) < 350  # both outcomes were checked


def test_the_model_checks_fords_condition_on_resampled_label_sums() -> None:
    """CompetenceModel.finite on resamples' sums (prompts drawn with replacement) against
    no_finite_strengths on the labelled pairs each resample draws: 8 prompts and a
    strong m0, so that some resamples break the condition and some do not."""
    from recuse.metrics.bootstrap import resample_counts
    from recuse.metrics.competence import calibrated_parts
    from recuse.metrics.verdicts import judge_codes

    strengths = {"m0": 2.0, "m1": 0.5, "m2": 0.0, "m3": -0.5}
    t = simulate_self_preference({"m0": AuthorJudge(2.0)}, strengths, n_prompts=8, seed=2).pairs
    codes, labels = judge_codes(t, None)
    values, _, problems, _, model = calibrated_parts(t, codes, labels, one_step=False)
    assert not problems and model.finite(values.sum(axis=0))
    prompt, names = pd.factorize(t["prompt_id"])
    draws = resample_counts(len(names), 300, np.random.default_rng(0))
    got = model.finite(draws[:, prompt] @ values)
    want = []
    for row in draws:
        drawn = t[row[prompt] > 0]
        why = no_finite_strengths(
            drawn["human"].to_numpy(float),
            drawn["model_a"].reset_index(drop=True),
            drawn["model_b"].reset_index(drop=True),
        )
        want.append(why is None)
    np.testing.assert_array_equal(got, want)
    assert 30 < sum(want) < 270  # both outcomes were checked
