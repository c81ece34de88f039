"""The competence model's own words about itself (recuse.metrics.competence)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from recuse.metrics.bootstrap import Resampling
from recuse.metrics.competence import calibrated_self_preference
from recuse.simulate.self_preference import simulate_lapse_judge


def test_a_judge_near_its_ceiling_is_never_said_to_pick_its_own_answer_always() -> None:
    """The ceiling warning wrote the predicted own-pick rate ``{:.0%}``: a judge predicted
    to pick its own answer 99.8% of the time read "100% of the time", a certainty its
    misses deny. It is written as every share is (numbers.share_percent: whole percents,
    more decimals where they would read 0% or 100%): under 100%, as a rate short of
    certainty is."""
    pairs = simulate_lapse_judge(own_rate=0.995, accuracy=0.999, shift=2.0, seed=1,
                                 n_prompts=320).pairs  # fmt: skip
    r = calibrated_self_preference(pairs, judge="m0", boot=Resampling(n_boot=50), label=False)
    (said,) = [w for w in r.warnings if w.startswith("competence near its ceiling")]
    shown = re.search(r"pick its own answer ([0-9.]+)% of the time", said)
    assert shown is not None, said
    assert 99.5 <= float(shown.group(1)) < 100  # under 100%, as the rate is
    assert "100% of the time" not in said


def test_the_newton_fit_s_pseudo_inverse_is_numpy_s_on_full_and_deficient_information() -> None:
    """``_symmetric_pinv`` (an eigendecomposition) against ``np.linalg.pinv`` (an SVD) on
    information matrices ``xᵀ diag(w) x`` of full rank, with a column the data do not
    inform (all 0) and with two equal columns (a direction informed twice): the same
    matrices, batched, so the Newton fit's steps are those pinv gave."""
    from recuse.metrics.competence import _symmetric_pinv

    rng = np.random.default_rng(7)
    x = rng.normal(size=(3, 40, 4))
    x[1, :, 2] = 0.0  # an uninformed direction
    x[2, :, 3] = x[2, :, 1]  # a repeated one
    info = np.swapaxes(x, -1, -2) @ (x * rng.uniform(0.1, 2.0, size=(3, 40, 1)))
    ours, numpy_s = _symmetric_pinv(info), np.linalg.pinv(info)
    assert np.allclose(ours, numpy_s, rtol=1e-9, atol=1e-12)
    assert np.all(ours[1][:, 2] == 0) and np.all(ours[1][2] == 0)  # uninformed stays 0
    assert np.all(_symmetric_pinv(np.zeros((2, 3, 3))) == 0)


def test_a_batch_of_refits_steps_each_fit_until_its_own_step_is_small() -> None:
    """One resample whose judge separates the strengths (its κ drifting toward ∞) took
    every other fit of its chunk through all 30 Newton steps with it. Each fit of a batch
    now stops on its own: the same θ (to 1e-9) as fitting it alone, and the steps of the
    batch's well-posed fits are theirs, not the drifting one's."""
    from recuse.metrics import competence

    rng = np.random.default_rng(0)
    x = np.column_stack([rng.normal(size=40), np.ones(40)])
    n = np.full((3, 40), 2.0)
    y = np.stack([rng.binomial(2, 0.6, 40), rng.binomial(2, 0.4, 40), 2.0 * (x[:, 0] > 0)])
    y = y.astype(float)  # the third: y = n exactly where x > 0, a separation
    alone = [competence._newton(x, n[i], y[i]) for i in range(3)]
    batch = competence._newton(x, n, y)
    assert np.allclose(batch[:2], alone[:2], atol=1e-9, rtol=0)
    assert np.array_equal(np.isfinite(batch[2]), np.isfinite(alone[2]))
    steps: list[int] = []
    step = competence._newton_step

    def counted(xs: np.ndarray, *rest: np.ndarray) -> np.ndarray:
        steps.append(len(xs) if xs.ndim > 2 else len(rest[1]))
        return step(xs, *rest)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(competence, "_newton_step", counted)
        competence._newton(x, n, y)
    assert steps[0] == 3 and steps[-1] == 1  # the drifting fit steps on alone
    assert sum(k == 3 for k in steps) < 10 and len(steps) == competence._NEWTON_STEPS


def test_the_calibrated_estimates_refit_each_resample_once(shared_data: Path) -> None:
    """The calibrated self-preference, its family form and its three rungs refit one
    competence model on the same resamples, and each refitted all of them: a one-order
    LLMBar MT-Bench file spent 27 s of a 30 s audit there. Each chunk of resamples is
    refitted once now (as many batched fits as the first estimate alone asks for), and
    every interval is the one each estimate gives alone."""
    from recuse.data.registry import load
    from recuse.metrics import competence
    from recuse.metrics.summary import pairwise_bias
    from recuse.roster import Roster

    pairs = load("llmbar-mtbench", data_dir=shared_data)
    pairs = pairs.drop(columns=["p_a_second", "status_second", "p_a"], errors="ignore")
    names = ["self_preference_calibrated", "family_preference_calibrated",
             "calibrated_rung_human_neither", "calibrated_rung_human_prefers_own",
             "calibrated_rung_human_prefers_other"]  # fmt: skip
    boot, roster = Resampling(n_boot=300, seed=0), Roster.builtin()
    batches: list[int] = []
    newton = competence._newton

    def counted(x: np.ndarray, n: np.ndarray, y: np.ndarray, **kw: np.ndarray) -> np.ndarray:
        batches.extend([1] if n.ndim > 1 else [])
        return newton(x, n, y, **kw)

    def estimates(metrics: list[str]) -> tuple[dict[tuple[str, str], tuple[float, ...]], int]:
        batches.clear()
        with pytest.MonkeyPatch.context() as m:
            m.setattr(competence, "_newton", counted)
            found = pairwise_bias(pairs, roster, metrics=metrics, boot=boot)
        return {(r.judge, r.metric): (r.estimate, r.ci_low, r.ci_high)
                for r in found.results}, len(batches)  # fmt: skip

    together, refits = estimates(names)
    _, refits_first = estimates(names[:1])
    assert refits == refits_first > 0
    alone = {k: v for name in names for k, v in estimates([name])[0].items()}
    assert together.keys() == alone.keys() and {m for _, m in together} == set(names)
    for k, v in together.items():
        assert np.allclose(v, alone[k], atol=1e-12, equal_nan=True), k


def test_the_label_graph_is_the_one_hot_contraction_it_replaced() -> None:
    """``_label_graph`` sets ``beat`` and ``seen`` by flat index; before 2026-12-01 it
    contracted the sums with a one-hot ``(L, M, M)`` array (``L · M²`` products a
    resample: at 100 models, 160 of the 180 s of a 150,000-pair audit's calibrated
    self-preference). Both, on random sums with two leading axes and none, give the
    same graphs, ties (a sum strictly between 0 and the count) counting for both."""
    from recuse.metrics.competence import CompetenceModel

    rng = np.random.default_rng(11)
    m = 9
    pairs = [(i, j) for i in range(m) for j in range(m) if i != j]
    pick = rng.choice(len(pairs), size=30, replace=False)
    la = np.array([pairs[i][0] for i in pick], dtype=np.intp)
    lb = np.array([pairs[i][1] for i in pick], dtype=np.intp)
    n_p = 4
    model = CompetenceModel(
        ia=np.zeros(n_p, np.intp), ib=np.ones(n_p, np.intp), first=np.ones(n_p),
        own=np.zeros(n_p), la=la, lb=lb, n_models=m,
    )  # fmt: skip
    counts = rng.integers(0, 3, size=(3, 5, len(la))).astype(float)
    sums = np.minimum(counts, rng.integers(0, 3, size=counts.shape)).astype(float)
    s = np.concatenate([rng.random((3, 5, 2 * n_p)), counts, sums, rng.random((3, 5, 3))], -1)

    a_to_b = np.zeros((len(la), m, m))
    a_to_b[np.arange(len(la)), la, lb] = 1.0
    b_to_a = np.swapaxes(a_to_b, 1, 2)
    drawn = counts > 0
    want_beat = (
        np.einsum("...l,lij->...ij", (drawn & (sums > 0)).astype(float), a_to_b)
        + np.einsum("...l,lij->...ij", (drawn & (sums < counts)).astype(float), b_to_a)
    ) > 0
    want_seen = np.einsum("...l,lij->...i", drawn.astype(float), a_to_b + b_to_a) > 0
    beat, seen = model._label_graph(s)
    assert beat.shape == (3, 5, m, m) and seen.shape == (3, 5, m)
    np.testing.assert_array_equal(beat, want_beat)
    np.testing.assert_array_equal(seen, want_seen)
    assert want_beat.any() and not want_beat.all() and not want_seen.all()
    one_beat, one_seen = model._label_graph(s[1, 2])  # no leading axes
    np.testing.assert_array_equal(one_beat, want_beat[1, 2])
    np.testing.assert_array_equal(one_seen, want_seen[1, 2])


def test_the_label_strengths_by_index_sums_are_the_dense_newton_fit() -> None:
    """One fit of the label strengths (``_pair_newton``) takes the dense design's Newton
    steps (``_newton``, as it was fitted before 2026-12-01: ``L · M²`` products a step,
    22 of the 35 s of a 600,000-pair, 200-model audit's calibrated self-preference)
    from index sums: the same strengths to rounding, on counts and fractional sums."""
    from recuse.metrics.competence import _newton, _pair_newton

    rng = np.random.default_rng(5)
    m = 12
    la, lb = (np.asarray(v, np.intp) for v in np.triu_indices(m, 1))
    keep = rng.random(len(la)) < 0.6
    flip = rng.random(len(la)) < 0.5  # a before b and after it in the models' order
    la, lb = np.where(flip, lb, la)[keep], np.where(flip, la, lb)[keep]
    n = rng.integers(2, 6, size=len(la)).astype(float)
    truth = rng.normal(0, 1, m)
    y = rng.binomial(n.astype(int), 1 / (1 + np.exp(-(truth[la] - truth[lb])))) + 0.5 * (
        rng.random(len(la)) < 0.2
    )
    y = np.clip(y, 0.5, n - 0.5)  # each pair won and lost in part: finite strengths
    design = np.zeros((len(la), m))
    design[np.arange(len(la)), la] += 1.0
    design[np.arange(len(la)), lb] -= 1.0
    want = _newton(design, n, y)
    got = _pair_newton(la, lb, m, n, y)
    np.testing.assert_allclose(got, want, atol=1e-12)
    assert 1.0 < np.ptp(want) < 10.0  # finite strengths that differ, not all 0
