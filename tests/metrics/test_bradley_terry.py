"""Bradley–Terry leaderboards: closed forms, an independent fit, planted recovery and coverage."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from recuse.errors import EstimationError
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.bradley_terry import (
    bradley_terry,
    leaderboard,
    markdown_counts,
    no_finite_strengths,
    system_names,
)
from recuse.simulate.bradley_terry import simulate_bt


def test_two_systems_strength_gap_is_the_logit_of_the_win_rate() -> None:
    # a beats b in 70% of 50 comparisons: the MLE of s_a - s_b is logit(0.7)
    y = np.r_[np.ones(35), np.zeros(15)]
    a, b = pd.Series(["x"] * 50), pd.Series(["y"] * 50)
    fit = bradley_terry(y, a, b, pd.Series(range(50)), boot=Resampling(n_boot=200))
    gap = dict(zip(fit.systems, fit.strengths, strict=True))
    assert gap["x"] - gap["y"] == pytest.approx(math.log(0.7 / 0.3), abs=1e-8)
    assert gap["x"] + gap["y"] == pytest.approx(0, abs=1e-12)  # centred
    assert list(fit.ranks) == [1, 2]


def test_fit_equals_an_independent_logistic_regression() -> None:
    pairs, truth = simulate_bt(n_prompts=60, seed=3)
    lb = leaderboard(pairs, families={m: m for m in truth.strengths}, boot=Resampling(n_boot=200))
    # the same model by scikit-learn: design of +1/-1 system columns plus the covariates,
    # each row split into (y=1, weight p) and (y=0, weight 1-p)
    rows = pd.concat(
        [
            pairs.assign(_y=pairs["p_a_first"], _first=1.0),
            pairs.assign(_y=pairs["p_a_second"], _first=-1.0),
        ],
        ignore_index=True,
    )
    systems = sorted(truth.strengths)
    x = np.zeros((len(rows), len(systems)))
    for i, s in enumerate(systems):
        x[:, i] = (rows["model_a"] == s).astype(float) - (rows["model_b"] == s).astype(float)
    d = (rows["len_a"] - rows["len_b"]).to_numpy(float)
    own = (rows["model_a"] == rows["judge"]).astype(float) - (
        rows["model_b"] == rows["judge"]
    ).astype(float)
    design = np.column_stack([x[:, 1:], np.tanh(d / d.std()), rows["_first"], own])
    y = rows["_y"].to_numpy(float)
    sk = LogisticRegression(C=np.inf, fit_intercept=False, tol=1e-10, max_iter=10_000)
    sk.fit(np.vstack([design, design]), np.r_[np.ones(len(y)), np.zeros(len(y))],
           sample_weight=np.r_[y, 1 - y])  # fmt: skip
    s = np.r_[0.0, sk.coef_[0][: len(systems) - 1]]
    s -= s.mean()
    assert lb.adjusted.systems == tuple(systems)
    np.testing.assert_allclose(lb.adjusted.strengths, s, atol=1e-4)
    assert lb.adjusted.covariates == ("length", "first", "own")
    np.testing.assert_allclose(lb.adjusted.coefficients, sk.coef_[0][len(systems) - 1 :], atol=1e-4)


def test_planted_strengths_and_biases_are_recovered_with_near_nominal_coverage() -> None:
    covered: list[list[bool]] = []
    strength_cover: list[float] = []
    estimates: list[list[float]] = []
    for seed in range(60):
        pairs, truth = simulate_bt(n_prompts=120, seed=seed)
        adj = leaderboard(
            pairs, families={m: m for m in truth.strengths}, boot=Resampling(n_boot=300, seed=seed)
        ).adjusted
        planted = {"length": truth.length, "first": truth.first, "own": truth.own}
        assert adj.covariates == ("length", "first", "own")
        bounds = zip(adj.covariates, adj.coefficients_low, adj.coefficients_high, strict=True)
        covered.append([lo <= planted[c] <= hi for c, lo, hi in bounds])
        estimates.append(list(adj.coefficients))
        strength_cover.append(np.mean([
            lo <= truth.strengths[s] <= hi
            for s, lo, hi in zip(adj.systems, adj.strengths_low, adj.strengths_high, strict=True)
        ]))  # fmt: skip
    # 90% intervals; 60 replications: a binomial SE of about 4 points per covariate
    rates = np.mean(covered, axis=0)
    assert np.all(rates >= 0.78), rates
    assert np.mean(strength_cover) >= 0.82, np.mean(strength_cover)
    np.testing.assert_allclose(np.mean(estimates, axis=0), [0.6, 0.3, 0.5], atol=0.06)


def test_a_verbose_weak_system_is_flattered_raw_and_put_back_when_adjusted() -> None:
    # the weakest system writes 500 more words; the judge rewards length (β = 1.5)
    pairs, truth = simulate_bt(
        n_prompts=300, length=1.5, own=0.0, first=0.0, extra_words=(0, 0, 0, 0, 500), seed=1
    )
    weakest = "model-4"
    lb = leaderboard(pairs, families={m: m for m in truth.strengths}, boot=Resampling(n_boot=200))
    raw = dict(zip(lb.raw.systems, lb.raw.strengths, strict=True))
    adj = dict(zip(lb.adjusted.systems, lb.adjusted.strengths, strict=True))
    assert raw[weakest] - truth.strengths[weakest] > 0.5  # flattered by its length
    assert abs(adj[weakest] - truth.strengths[weakest]) < 0.25
    assert lb.raw.ranks[lb.raw.systems.index(weakest)] < 5  # raw: not last
    assert lb.adjusted.ranks[lb.adjusted.systems.index(weakest)] == 5
    assert lb.tau_raw_adjusted < 1


def test_not_connected_systems_are_refused_with_the_groups_named() -> None:
    y = np.r_[1.0, 0.0, 1.0, 0.0]
    a, b = pd.Series(["p", "p", "r", "r"]), pd.Series(["q", "q", "s", "s"])
    with pytest.raises(EstimationError, match="not all compared"):
        bradley_terry(y, a, b, pd.Series(range(4)), boot=Resampling(n_boot=100))


def test_own_answer_effect_is_dropped_when_only_its_own_judge_rates_it() -> None:
    pairs, truth = simulate_bt(judges=(0,), n_prompts=60, seed=2)
    lb = leaderboard(pairs, families={m: m for m in truth.strengths}, boot=Resampling(n_boot=100))
    assert "own" not in lb.adjusted.covariates
    assert "not identifiable" in lb.adjusted.dropped["own"]


def test_markdown_counts_and_variant_systems() -> None:
    assert markdown_counts("## A\n1. x\n2) y\n* z\n__b__ and **c**") == (1, 3, 2)
    assert markdown_counts(None) == (0, 0, 0)
    frame = pd.DataFrame(
        {"model_a": ["base", "base"], "model_b": ["m", "m"], "category": ["verbose", "writing"]}
    )
    a, b = system_names(frame)
    assert list(b) == ["m (verbose)", "m"]
    assert list(a) == ["base", "base"]


def test_a_covariate_present_in_a_handful_of_pairs_is_not_estimated() -> None:
    """One answer of 60 prompts' pairs has a bold span: the fit used to give "rewards
    bold text" a coefficient learnt from that one pair (+14.72 log-odds, "material",
    on real data). It is now left out with the count; headers present in every
    other pair (planted, no effect) are still estimated."""
    pairs, truth = simulate_bt(n_prompts=60, seed=3)
    text_a = ["plain answer"] * len(pairs)
    text_a[0] = "a **bold** claim"
    heads = ["# Head\nbody" if i % 2 else "body" for i in range(len(pairs))]
    pairs = pairs.assign(response_a=text_a, response_b=heads)
    lb = leaderboard(pairs, families={m: m for m in truth.strengths}, boot=Resampling(n_boot=100))
    assert "bold" not in lb.adjusted.covariates
    assert "present in only 2 of" in lb.adjusted.dropped["bold"]  # one pair, both orders
    assert "headers" in lb.adjusted.covariates


def test_markdown_in_code_is_not_counted() -> None:
    code = (
        'Run it:\n```python\n# not a header\n- not a list\nif __name__ == "__main__":\n'
        "    main()\n```\nCall `__init__` or ``x = **kw``, then **really bold**."
    )
    assert markdown_counts(code) == (0, 0, 1)
    assert markdown_counts("~~~\n**x**\n~~~\n## real") == (1, 0, 0)
    # an unclosed fence runs to the end of the answer, as Markdown renders it
    assert markdown_counts("text\n```\n**x**") == (0, 0, 0)


def test_each_distinct_answer_is_counted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The markdown covariates count each distinct text once (AlpacaEval's baseline
    answers an instruction for every system: counting every row took 2.3 of the 3.4 s
    of its leaderboard), and give each row the counts of its own texts: the headers,
    lists and bold columns equal log(1 + counts of a) − log(1 + counts of b) worked out
    row by row, a missing text counting 0."""
    import recuse.metrics.bradley_terry as bt

    pairs, truth = simulate_bt(n_prompts=40, seed=5)
    texts = ["# H\n- a\n- b", "**x** and __y__", "plain", "1. one\n2. two\n## T **z**"]
    pairs = pairs.assign(
        response_a=[texts[i % 2] for i in range(len(pairs))],
        response_b=[None if i % 7 == 0 else texts[i % 4] for i in range(len(pairs))],
    )
    rows = bt._verdict_rows(pairs.assign(_pair=np.arange(len(pairs))))
    a, b = bt.system_names(rows)
    seen: list[object] = []
    counts = bt.markdown_counts

    def counted(text: object) -> tuple[int, int, int]:
        seen.append(text)
        return counts(text)

    monkeypatch.setattr(bt, "markdown_counts", counted)
    got = bt._covariates(rows, a, b, {m: m for m in truth.strengths})
    assert len(seen) == len(texts) and set(seen) == set(texts)  # each once, None not at all
    each_a = np.array([counts(t) for t in rows["response_a"]], float)
    each_b = np.array([counts(t) for t in rows["response_b"]], float)
    np.testing.assert_array_equal(
        got[["headers", "lists", "bold"]].to_numpy(), np.log1p(each_a) - np.log1p(each_b)
    )


def _ford(y: np.ndarray, a: list[str], b: list[str]) -> bool:
    """Ford's condition by its definition, over every split of the systems in two: each
    side beat (or tied) the other at least once. True: finite strengths exist."""
    import itertools

    names = sorted({*a, *b})
    for r in range(1, len(names)):
        for group in itertools.combinations(names, r):
            g = set(group)
            out = any((ai in g) != (bi in g) and ((ai in g and yi > 0) or (bi in g and yi < 1))
                      for yi, ai, bi in zip(y, a, b, strict=True))  # fmt: skip
            into = any((ai in g) != (bi in g) and ((ai in g and yi < 1) or (bi in g and yi > 0))
                       for yi, ai, bi in zip(y, a, b, strict=True))  # fmt: skip
            if not (out and into):
                return False
    return True


def test_no_finite_strengths_is_fords_condition() -> None:
    rng = np.random.default_rng(5)
    seen = {True: 0, False: 0}
    for _ in range(300):
        n = int(rng.integers(2, 9))
        a = [f"s{int(i)}" for i in rng.integers(0, 5, n)]
        b = [f"s{int(i)}" for i in rng.integers(0, 5, n)]
        keep = [i for i in range(n) if a[i] != b[i]]
        if not keep:
            continue
        a, b = [a[i] for i in keep], [b[i] for i in keep]
        y = rng.choice([0.0, 0.5, 1.0, 0.8], len(a))
        finite = _ford(y, a, b)
        seen[finite] += 1
        assert (no_finite_strengths(y, pd.Series(a), pd.Series(b)) is None) == finite, (y, a, b)
    assert min(seen.values()) > 20  # both outcomes were checked


def test_a_leaderboard_without_finite_strengths_is_not_estimated() -> None:
    """8 pairs among 8 systems: the fit stopped at strengths of ±30 log-odds with
    intervals ±2 wide, a ranking the data cannot give. It is not estimated now, with
    the reason; the audit lists it among the estimates not made."""
    import recuse
    from recuse.simulate import PlantedBias, simulate_pairs

    df = simulate_pairs(judges={"gpt-4": PlantedBias(verbosity=0.3)}, n_prompts=4,
                        pairs_per_prompt=2, seed=1).pairs  # fmt: skip
    with pytest.raises(EstimationError, match="Bradley–Terry strengths have no finite"):
        leaderboard(df, families={}, boot=Resampling(n_boot=200))
    skipped = recuse.audit(df, only=["leaderboard"], n_boot=200).skipped
    assert skipped["reason"].str.contains("no finite estimate").any()


def _fitted_pairs_by_pandas(pairs: pd.DataFrame) -> tuple[int, int, int, int]:
    """(pairs fitted, with no verdict, a system against itself, model unknown) among the
    judged pairs, counted straight from the table: a pair enters when some verdict is
    given (either order or ``p_a``) and its two systems differ."""
    judged = pairs[pairs["judge"].notna()]
    known = judged["model_a"].notna() & judged["model_b"].notna()
    j = judged[known]
    verdict = j[["p_a_first", "p_a_second", "p_a"]].notna().any(axis=1)
    b = j["model_b"].astype(str)
    if "category" in j.columns:  # AlpacaEval's length-prompted variants are systems
        variant = j["category"].isin(["concise", "verbose"])
        b = b.where(~variant, b + " (" + j["category"].astype(str) + ")")
    same = j["model_a"].astype(str) == b
    return (
        int((verdict & ~same).sum()),
        int((~verdict).sum()),
        int((verdict & same).sum()),
        int((~known).sum()),
    )


def test_n_is_the_pairs_fitted_and_the_rest_are_counted_by_why() -> None:
    """A hand table: 6 judged pairs of 3 systems, of which 1 has no verdict, 1 compares
    a system with itself, 1 has an unknown model; 1 is judged in both orders (2 rows,
    1 pair) and 1 is a human label only (no judge). So 3 pairs are fitted, on 4 rows."""
    nan = np.nan
    t = pd.DataFrame({
        "item_id": list("abcdefg"),
        "prompt_id": ["p1", "p2", "p3", "p4", "p5", "p6", "p7"],
        "judge": ["j", "j", "j", "j", "j", "j", None],
        "model_a": ["x", "y", "z", "x", "x", None, "x"],
        "model_b": ["y", "z", "x", "y", "x", "y", "y"],
        "p_a_first": [1.0, 1.0, nan, nan, 1.0, 1.0, nan],
        "p_a_second": [0.0, nan, nan, nan, nan, 0.0, nan],
        "p_a": [0.5, 1.0, 1.0, nan, 1.0, 0.5, nan],
        "human": [nan, nan, nan, nan, nan, nan, 0.5],  # a tie: finite strengths
    })  # fmt: skip
    lb = leaderboard(t, families={"x": "x", "y": "y", "z": "z"}, boot=Resampling(n_boot=20))
    want = _fitted_pairs_by_pandas(t)
    assert want == (3, 1, 1, 1)
    for fit in (lb.raw, lb.adjusted):
        assert fit.n_pairs == 3 and fit.n_rows == 4
        assert sorted(fit.left_out.values()) == [1, 1, 1]
        assert fit.left_out_words() == (
            "3 pairs left out (1 with no verdict; 1 comparing a system with itself; "
            "1 with the model behind an answer unknown)"
        )
    assert lb.human is not None and lb.human.n_pairs == 1
    # every pair fitted: nothing to say
    full = t[t["p_a"].notna() & (t["model_a"] != t["model_b"]) & t["model_a"].notna()]
    assert leaderboard(full, families={"x": "x", "y": "y", "z": "z"},
                       boot=Resampling(n_boot=20)).adjusted.left_out_words() == ""  # fmt: skip


@pytest.mark.parametrize(
    ("name", "fitted", "left_out"),
    [
        ("llmbar-mtbench", 761, (7, 0, 32)),
        pytest.param("alpaca-eval", 22_523, (10, 805, 0), marks=pytest.mark.slow),
    ],
)
def test_n_on_real_data_is_the_pairs_fitted(
    shared_data: Path, name: str, fitted: int, left_out: tuple[int, int, int]
) -> None:
    """The recheck's counts: LLMBar's MT-Bench set fits 761 of its 768 judged pairs of
    known models (7 have no verdict); AlpacaEval 22,523 of 23,338 (10 without a verdict,
    805 of a model against its own reference)."""
    import recuse.data
    from recuse.roster import Roster

    pairs = recuse.data.load(name, data_dir=shared_data)
    roster = Roster.builtin()
    ids = pd.concat([pairs["model_a"], pairs["model_b"], pairs["judge"]]).dropna().astype(str)
    families = {m: roster.family(m) for m in ids.unique() if m in roster}
    if name == "alpaca-eval":  # covariates need not be real here: the count is the test
        pairs = pairs.drop(columns=[c for c in ("response_a", "response_b") if c in pairs])
    lb = leaderboard(pairs, families=families, boot=Resampling(n_boot=10))
    want = _fitted_pairs_by_pandas(pairs)
    assert want == (fitted, *left_out)
    for fit in (lb.raw, lb.adjusted):
        assert fit.n_pairs == fitted
        assert tuple(fit.left_out.values()) == left_out


def test_the_intervals_do_not_depend_on_the_order_of_the_rows() -> None:
    """The bootstrap drew prompts in the order they first appear, so the same table
    sorted another way (a sort_values, a shuffle, a Parquet round trip of a concat)
    gave other intervals from the same seed (the audit of simulate_pairs(n_prompts=30,
    seed=1): bt_own [-0.99, -0.10], shuffled [-0.96, -0.16]). Prompts are sorted as
    cluster_bootstrap sorts them; only the order of floating-point sums is left."""
    pairs, truth = simulate_bt(n_prompts=60, seed=3)
    families = {m: m for m in truth.strengths}
    boot = Resampling(n_boot=200)
    table = leaderboard(pairs, families=families, boot=boot).table()
    shuffled = pairs.sample(frac=1, random_state=1)
    again = leaderboard(shuffled, families=families, boot=boot).table()
    pd.testing.assert_frame_equal(again, table, rtol=1e-9)


@pytest.mark.parametrize(("n_prompts", "per_prompt"), [(80, 3), (12, 10)])
def test_the_covariate_intervals_are_statsmodels_cluster_robust_wald_intervals(
    n_prompts: int, per_prompt: int
) -> None:
    """The one-step bootstrap's replicates are θ̂ + H⁻¹ Σ_c (n*_c − 1) u_c: their
    covariance is the cluster-robust sandwich H⁻¹ (Σ_c u_c u_cᵀ) H⁻¹ (the scores sum
    to 0 at the fit), so at 4,000 resamples each covariate's 90% interval, its
    percentile ends expanded for the ``G`` prompts, is statsmodels' GLM (binomial, each
    order a row) with prompt-clustered standard errors (no small-sample factor) as
    θ̂ ± z se, ``z = √(G/(G−1)) · t_{G−1}(0.95)`` (1.675 at 80 prompts, 1.876 at 12):
    its width to 5% (Monte-Carlo error about 2%), each end to 10% of the half-width
    (the sum over the prompts is a little skewed). The plain percentile ends (z = 1.645)
    miss at 12 prompts (12% narrower); there they held the planted strengths of
    :func:`simulate_bt` at 20 prompts in 0.857 of 400 tables, the expanded 0.884
    (``benchmarks/metric_coverage.py``, section ``leaderboard``). A wrong level (95%:
    +19%) or information matrix (weights ½ in H but not in the scores: ×2) would miss;
    on these data clustering by pair rather than prompt moves the SEs by 3% at most, so
    the clusters are not what this pins. On llmbar-mtbench the audit's five covariates
    at 5,000 resamples agree with the same Wald intervals as closely (widths within 3%)."""
    import statsmodels.api as sm
    from scipy import stats

    pairs, truth = simulate_bt(
        n_prompts=n_prompts, pairs_per_prompt=per_prompt, prompt_sd=0.6, seed=4
    )
    fit = leaderboard(
        pairs, families={m: m for m in truth.strengths}, boot=Resampling(n_boot=4000, seed=1)
    ).adjusted
    rows = pd.concat(
        [
            pairs.assign(_y=pairs["p_a_first"], _first=1.0),
            pairs.assign(_y=pairs["p_a_second"], _first=-1.0),
        ],
        ignore_index=True,
    )
    systems = sorted(truth.strengths)
    x = pd.DataFrame({
        s: (rows["model_a"] == s).astype(float) - (rows["model_b"] == s).astype(float)
        for s in systems[1:]
    })  # fmt: skip
    d = (rows["len_a"] - rows["len_b"]).to_numpy(float)
    x["length"] = np.tanh(d / d.std())
    x["first"] = rows["_first"]
    x["own"] = (rows["model_a"] == rows["judge"]).astype(float) - (
        rows["model_b"] == rows["judge"]
    ).astype(float)
    glm = sm.GLM(rows["_y"], x, family=sm.families.Binomial())  # weights ½ or 1: same SEs
    groups = pd.factorize(rows["prompt_id"])[0]
    ref = glm.fit(cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False})
    assert fit.covariates == ("length", "first", "own")
    assert fit.n_clusters == n_prompts
    z = math.sqrt(n_prompts / (n_prompts - 1)) * stats.t.ppf(0.95, n_prompts - 1)
    for c, est, lo, hi in zip(
        fit.covariates, fit.coefficients, fit.coefficients_low, fit.coefficients_high, strict=True
    ):
        half = z * ref.bse[c]
        assert est == pytest.approx(ref.params[c], abs=1e-6), c
        assert hi - lo == pytest.approx(2 * half, rel=0.05), c
        assert (lo, hi) == pytest.approx((est - half, est + half), abs=0.1 * half), c


@pytest.mark.parametrize("bad", [math.nan, -0.5, math.inf])
def test_a_weight_that_is_not_a_count_is_refused_naming_its_row(bad: float) -> None:
    """Four systems, 40 pairs on 10 prompts, one weight NaN (or negative, or infinite):
    statsmodels ended in a ValueError ("The first guess on the deviance function returned
    a nan"), no row named; now an EstimationError names row 3."""
    rng = np.random.default_rng(0)
    n = 40
    a = pd.Series(np.array(list("ABCD"))[np.arange(n) % 4])
    b = pd.Series(np.array(list("BCDA"))[np.arange(n) % 4])
    y = (rng.random(n) < 0.5).astype(float)
    w = np.ones(n)
    w[3] = bad
    with pytest.raises(EstimationError, match="weights: row 3 "):
        bradley_terry(y, a, b, pd.Series(np.arange(n) // 4), weights=w)


def _dense_statsmodels_fit(
    y: np.ndarray, a: pd.Series, b: pd.Series, cov: pd.DataFrame, w: np.ndarray, boot: Resampling
) -> dict[str, object]:
    """The fit as bradley_terry made it before its sparse design (2026-12-01): a dense
    ``n × p`` design, NumPy's ``matrix_rank`` deciding which covariates are identifiable,
    statsmodels' binomial GLM, and the one-step bootstrap from dense scores."""
    import statsmodels.api as sm

    from recuse.metrics.bootstrap import expanded_quantile, resample_counts, tail_end

    systems = sorted(set(a) | set(b))
    x = np.column_stack([(a == s).to_numpy(float) - (b == s).to_numpy(float) for s in systems[1:]])
    kept: list[str] = []
    for name in cov.columns:
        col = cov[name].to_numpy(float)
        if np.count_nonzero(col) < 20:
            continue
        trial = np.column_stack([x, *(cov[c].to_numpy(float) for c in kept), col])
        if np.linalg.matrix_rank(trial) == trial.shape[1]:
            kept.append(name)
    design = np.column_stack([x, *(cov[c].to_numpy(float) for c in kept)])
    fit = sm.GLM(y, design, family=sm.families.Binomial(), freq_weights=w).fit(tol=1e-14)
    theta, p = np.asarray(fit.params), np.asarray(fit.fittedvalues)
    codes, uniques = pd.factorize(pd.Series(np.arange(len(y)) // 3), sort=True)
    u = np.zeros((len(uniques), design.shape[1]))
    np.add.at(u, codes, design * (w * (y - p))[:, None])
    h_inv = np.linalg.pinv((design * (w * p * (1 - p))[:, None]).T @ design)
    counts = resample_counts(len(uniques), boot.n_boot, np.random.default_rng(boot.seed))
    reps = theta + (counts - 1.0) @ u @ h_inv.T
    zs = [expanded_quantile(q, len(uniques)) for q in ((1 - boot.level) / 2, (1 + boot.level) / 2)]
    ends = [
        [tail_end(np.sort(reps[:, j]), z, center=float(theta[j]))[0] for z in zs]
        for j in range(len(systems) - 1, design.shape[1])
    ]
    return {"kept": tuple(kept), "theta": theta, "coefficient_ends": np.array(ends)}


def test_the_sparse_fit_is_the_dense_statsmodels_fit_it_replaced() -> None:
    # 12 systems, fractional verdicts, weights ½ / 1 / 0, a covariate collinear with the
    # strengths (a system's indicator), one too rare and two real ones: the same
    # covariates kept, the same estimates (to 1e-9) and the same bootstrap spread as the
    # dense statsmodels fit of before, whose n × p design made 150,000 pairs of 100
    # systems take 6 minutes (benchmarks/leaderboard_scale.py)
    rng = np.random.default_rng(7)
    n, k = 1800, 12
    ia = rng.integers(0, k, n)
    ib = (ia + rng.integers(1, k, n)) % k
    names = np.array([f"s{i:02d}" for i in range(k)])
    a, b = pd.Series(names[ia]), pd.Series(names[ib])
    length = np.tanh(rng.normal(size=n))
    rare = np.zeros(n)
    rare[:5] = 1.0
    eta = rng.normal(size=k)[ia] - rng.normal(size=k)[ib] + 0.6 * length
    y = np.clip(1 / (1 + np.exp(-eta)) + rng.normal(0, 0.1, n), 0, 1).round(1)
    w = rng.choice([0.5, 1.0, 0.0], size=n, p=[0.6, 0.35, 0.05])
    cov = pd.DataFrame({
        "length": length,
        "collinear": (a == "s03").to_numpy(float) - (b == "s03").to_numpy(float),
        "rare": rare,
        "first": rng.choice([-1.0, 1.0], size=n),
    })  # fmt: skip
    boot = Resampling(n_boot=400, seed=5)
    clusters = pd.Series(np.arange(n) // 3)
    fit = bradley_terry(y, a, b, clusters, covariates=cov, weights=w, boot=boot)
    ref = _dense_statsmodels_fit(y, a, b, cov, w, boot)
    assert fit.covariates == ref["kept"] == ("length", "first")
    assert "collinear" in fit.dropped["collinear"]
    theta = np.asarray(ref["theta"])
    s = np.r_[0.0, theta[: k - 1]]
    np.testing.assert_allclose(fit.strengths, s - s.mean(), atol=1e-9)
    np.testing.assert_allclose(fit.coefficients, theta[k - 1 :], atol=1e-9)
    # the same scores and information, so the same resamples and interval ends
    ends = np.asarray(ref["coefficient_ends"])
    np.testing.assert_allclose(fit.coefficients_low, ends[:, 0], atol=1e-9)
    np.testing.assert_allclose(fit.coefficients_high, ends[:, 1], atol=1e-9)


def _round_robin() -> tuple[pd.Series, pd.Series]:
    """4 systems, every ordered pair 10 times (120 rows)."""
    pairs = [(i, j) for i in "ABCD" for j in "ABCD" if i != j for _ in range(10)]
    return pd.Series([p[0] for p in pairs]), pd.Series([p[1] for p in pairs])


@pytest.mark.parametrize("ties", [False, True])
def test_a_covariate_that_separates_the_verdicts_is_refused_not_a_huge_number(
    ties: bool,
) -> None:
    # y = 1 exactly where the covariate is > 0 (ties: where it is 0, y is either): the
    # likelihood rises without bound along its coefficient. statsmodels' GLM stopped at
    # 843 (its separation warning hidden); the Newton fit of b1e448ef returned 3,633
    # (100.7 with the ties, max_iter's steps) and strengths of ±60, saying nothing
    rng = np.random.default_rng(0)
    a, b = _round_robin()
    x = rng.normal(size=len(a))
    if ties:
        x = np.round(x)
    y = (x > 0).astype(float)
    if ties:
        y[x == 0] = rng.integers(0, 2, int((x == 0).sum()))
    with pytest.raises(EstimationError, match="covariates fitted: length"):
        bradley_terry(y, a, b, pd.Series(range(len(a))), covariates=pd.DataFrame({"length": x}))


def test_a_system_that_wins_all_but_once_and_zero_weights_are_statsmodels_fit() -> None:
    # near-separation that has a finite estimate: system A wins every comparison but
    # one; 30 rows of weight 0 (they count for nothing); the GLM's estimates to 1e-8
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(1)
    a, b = _round_robin()
    y = (rng.random(len(a)) < 0.5).astype(float)
    y[(a == "A").to_numpy()] = 1.0
    y[(b == "A").to_numpy()] = 0.0
    y[0] = 0.0  # A (as a) loses once
    w = np.ones(len(a))
    w[40:70] = 0.0
    fit = bradley_terry(y, a, b, pd.Series(range(len(a))), weights=w)
    x = np.zeros((len(a), 4))
    x[np.arange(len(a)), a.map("ABCD".index)] += 1
    x[np.arange(len(a)), b.map("ABCD".index)] -= 1
    ref = sm.GLM(y, x[:, 1:], family=sm.families.Binomial(), freq_weights=w).fit()
    s = np.r_[0.0, ref.params]
    np.testing.assert_allclose(fit.strengths, s - s.mean(), atol=1e-8)
    assert fit.strengths[0] > 2  # A is far ahead, and finite


def test_a_step_that_worsens_the_likelihood_is_never_taken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a loss that rises away from θ = 0 whatever the step: the fit of b1e448ef halved
    # to t < 1e-6 and took the worse step anyway (and again, 100 times), returning a θ
    # that is no optimum; now it stays and says so, as θ = 0 is not optimal here
    import recuse.metrics.bradley_terry as bt

    rng = np.random.default_rng(2)
    a, b = _round_robin()
    y = (rng.random(len(a)) < 0.8).astype(float)
    real = bt._neg_loglik
    monkeypatch.setattr(
        bt, "_neg_loglik", lambda eta, y, w: real(eta, y, w) + 1e3 * float(np.abs(eta).sum())
    )
    with pytest.raises(EstimationError, match="did not converge"):
        bradley_terry(y, a, b, pd.Series(range(len(a))))


@pytest.mark.parametrize("scale", [1.0, 10.0, 1e6])
def test_a_fit_whose_probabilities_reach_0_or_1_is_refused(scale: float) -> None:
    # 50 comparisons of one pair, y = 1 exactly where the covariate is > 0: at every
    # scale the Newton fit reaches p = 0 or 1 in floating point, its gradient 0, and
    # the fit of b1e448ef stopped there "converged" (coefficients of ~40 and more); now
    # the column's information, ~0 of its value at p = ½, says separated
    from scipy.sparse import csr_matrix

    from recuse.metrics.bradley_terry import _logistic_fit

    rng = np.random.default_rng(3)
    side = np.where(rng.random(50) < 0.5, 1.0, -1.0)
    cov = rng.normal(size=50) * scale
    y = (cov > 0).astype(float)
    with pytest.raises(EstimationError, match="separated"):
        _logistic_fit(csr_matrix(np.column_stack([side, cov])), y, np.ones(50))


def test_which_covariates_are_identifiable_does_not_depend_on_another_ones_scale() -> None:
    # length of scale 1e-5 and headers, independent of it, of scale 1e4: both are kept,
    # as NumPy's matrix_rank on the dense design keeps them; b1e448ef dropped headers
    # (its test: the smallest singular value of all the residuals, ~1e-5, against 1e-9
    # of the largest, ~1e4). A covariate constant within every system (a system's score
    # difference, scale 1e6) and an exact sum of two kept ones are still dropped.
    rng = np.random.default_rng(4)
    a, b = _round_robin()
    n = len(a)
    g = dict(zip("ABCD", rng.normal(size=4), strict=True))
    cov = pd.DataFrame({
        "length": rng.normal(size=n) * 1e-5,
        "headers": rng.normal(size=n) * 1e4,
        "lists": 1e6 * (a.map(g) - b.map(g)).to_numpy(),
    })  # fmt: skip
    cov["bold"] = cov["length"] + cov["headers"]
    y = (rng.random(n) < 0.5).astype(float)
    fit = bradley_terry(y, a, b, pd.Series(range(n)), covariates=cov)
    assert fit.covariates == ("length", "headers")
    assert set(fit.dropped) == {"lists", "bold"}
    x = np.column_stack(
        [(a == s).to_numpy(float) - (b == s).to_numpy(float) for s in "BCD"]
        + [cov["length"], cov["headers"]]
    )
    assert np.linalg.matrix_rank(x) == x.shape[1]  # the dense reference keeps both
