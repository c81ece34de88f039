"""The vectorised cluster bootstrap against a plain loop, and its refusals."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import sparse
from scipy.stats import norm

import recuse.metrics.bootstrap as bs
from recuse.errors import ConfigError
from recuse.metrics.bootstrap import (
    GroupedStatistic,
    Resampling,
    check_options,
    cluster_bootstrap,
    difference_of_ratios,
    ratio,
    resample_counts,
)
from recuse.metrics.estimate import the_fix


def _data(seed: int = 0, n: int = 300, clusters: int = 40) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    cl = np.array([f"p{c:03d}" for c in rng.integers(0, clusters, size=n)])
    y = rng.random(n)
    return cl, y


def test_resample_counts_are_multinomial_rows() -> None:
    w = resample_counts(7, 5000, np.random.default_rng(3))
    assert w.shape == (5000, 7)
    assert (w.sum(axis=1) == 7).all()
    assert w.min() >= 0
    # every cluster is drawn once per resample on average (SE 0.013), variance 7 * 1/7 * 6/7
    assert w.mean(axis=0) == pytest.approx(np.ones(7), abs=0.06)
    assert w.var(axis=0) == pytest.approx(np.full(7, 6 / 7), abs=0.1)
    again = resample_counts(7, 5000, np.random.default_rng(3))
    assert (w == again).all()


def test_matches_a_plain_loop_over_the_same_resamples() -> None:
    """W @ C per resample == re-weighting the rows of each resample one by one."""
    cl, y = _data()
    group = (np.arange(len(y)) % 3).astype(np.intp)  # three groups
    group[::17] = -1  # some rows not used
    x = (y > 0.4).astype(float)
    values = np.column_stack([x * y, y, (1 - x) * y, 1 - x])
    stat = GroupedStatistic("d", values, group, ("g0", "g1", "g2"), difference_of_ratios)
    n_boot, level, seed = 300, 0.8, 11
    est = cluster_bootstrap(
        [stat],
        cl,
        boot=Resampling(level=level, n_boot=n_boot, seed=seed),
        min_n=1,
        interval="percentile",
    )[0]
    bca = cluster_bootstrap(
        [stat], cl, boot=Resampling(level=level, n_boot=n_boot, seed=seed), min_n=1
    )[0]

    # independent computation: same draw, explicit per-resample weighted sums
    uniq = np.unique(cl)  # sorted, as the bootstrap sorts cluster labels
    code = np.searchsorted(uniq, cl)
    w = resample_counts(len(uniq), n_boot, np.random.default_rng(seed))
    for g in range(3):
        rows = group == g
        reps = []
        for b in range(n_boot):
            rw = w[b, code[rows]]
            s = (values[rows] * rw[:, None]).sum(axis=0)
            reps.append(s[0] / s[1] - s[2] / s[3])
        lo, hi = np.quantile(reps, [0.1, 0.9])
        tot = values[rows].sum(axis=0)
        assert est[g].estimate == pytest.approx(tot[0] / tot[1] - tot[2] / tot[3], abs=1e-12)
        assert est[g].ci_low == pytest.approx(lo, abs=1e-12)
        assert est[g].ci_high == pytest.approx(hi, abs=1e-12)
        assert est[g].n == rows.sum()
        assert est[g].n_clusters == len(np.unique(cl[rows]))
        assert est[g].std_error == pytest.approx(np.std(reps, ddof=1), abs=1e-12)
        # BCa by hand: jackknife dropping each prompt's rows, z0 from the replicates
        theta = tot[0] / tot[1] - tot[2] / tot[3]
        jack = []
        for c in uniq:
            keep = rows & (cl != c)
            s = values[keep].sum(axis=0)
            jack.append(s[0] / s[1] - s[2] / s[3])
        d = np.mean(jack) - np.asarray(jack)
        a = (d**3).sum() / (6 * (d**2).sum() ** 1.5)
        z0 = norm.ppf(np.mean(np.asarray(reps) < theta))  # continuous data: no ties
        ends = [
            np.quantile(reps, norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z))))
            for z in norm.ppf([0.1, 0.9])
        ]
        assert (bca[g].ci_low, bca[g].ci_high) == pytest.approx(ends, abs=1e-12)
        assert bca[g].accel == pytest.approx(a, abs=1e-12)


def test_a_statistic_may_name_its_own_interval() -> None:
    """A statistic that names ``percentile`` gets the percentile interval (z0 = a = 0)
    inside a BCa call, from the same resamples as the others; the method text says so."""
    from recuse.metrics.estimate import MetricSpec, run_specs

    cl, y = _data(seed=2)
    group = np.zeros(len(y), dtype=np.intp)
    x = (y > 0.3).astype(float)
    values = np.column_stack([x * y, y])
    own = GroupedStatistic("r", values, group, ("g",), ratio, interval="percentile")
    plain = GroupedStatistic("r", values, group, ("g",), ratio)
    mixed = cluster_bootstrap(
        [plain, own], cl, boot=Resampling(level=0.9, n_boot=200, seed=5), min_n=1
    )
    pct = cluster_bootstrap(
        [plain], cl, boot=Resampling(level=0.9, n_boot=200, seed=5), min_n=1, interval="percentile"
    )[0][0]
    assert mixed[1][0].replicates == pytest.approx(mixed[0][0].replicates, abs=0)
    assert (mixed[1][0].ci_low, mixed[1][0].ci_high) == (pct.ci_low, pct.ci_high)
    assert mixed[1][0].accel == 0.0 and mixed[1][0].z0 == 0.0
    assert (mixed[0][0].ci_low, mixed[0][0].ci_high) != (pct.ci_low, pct.ci_high)
    results, _ = run_specs(
        [MetricSpec("a", plain, "m"), MetricSpec("b", own, "m")],
        pd.Series(cl),
        boot=Resampling(level=0.9, n_boot=200, seed=5),
        min_n=1,
    )
    assert "BCa" in results[0].method and "percentile interval" in results[1].method
    with pytest.raises(ConfigError, match="interval must be one of"):
        bad = GroupedStatistic("r", values, group, ("g",), ratio, interval="normal")  # type: ignore[arg-type]
        cluster_bootstrap([bad], cl, boot=Resampling(level=0.9, n_boot=20, seed=5), min_n=1)


def test_chunked_draws_do_not_change_the_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    import recuse.metrics.bootstrap as bs

    cl, y = _data(1)
    stat = GroupedStatistic(
        "r", np.column_stack([y, np.ones_like(y)]), np.zeros(len(y), np.intp), ("g",), ratio
    )
    whole = cluster_bootstrap([stat], cl, boot=Resampling(level=0.9, n_boot=200, seed=5), min_n=1)[
        0
    ][0]
    monkeypatch.setattr(bs, "_CHUNK_ENTRIES", 40 * 7)  # 7 resamples per chunk
    chunked = cluster_bootstrap(
        [stat], cl, boot=Resampling(level=0.9, n_boot=200, seed=5), min_n=1
    )[0][0]
    assert (whole.ci_low, whole.ci_high) == (chunked.ci_low, chunked.ci_high)


def test_row_order_does_not_matter() -> None:
    cl, y = _data(2)
    vals = np.column_stack([y, np.ones_like(y)])
    g = np.zeros(len(y), np.intp)
    a = cluster_bootstrap(
        [GroupedStatistic("r", vals, g, ("g",), ratio)],
        cl,
        boot=Resampling(level=0.9, n_boot=100, seed=1),
        min_n=1,
    )[0][0]
    perm = np.random.default_rng(0).permutation(len(y))
    b = cluster_bootstrap(
        [GroupedStatistic("r", vals[perm], g, ("g",), ratio)],
        cl[perm],
        boot=Resampling(level=0.9, n_boot=100, seed=1),
        min_n=1,
    )[0][0]
    assert a.estimate == pytest.approx(b.estimate, abs=1e-12)
    assert (a.ci_low, a.ci_high) == pytest.approx((b.ci_low, b.ci_high), abs=1e-12)


def test_clustered_interval_is_wider_when_rows_of_a_prompt_move_together() -> None:
    """Rows of a prompt share one outcome: resampling prompts must see ~n_prompts, not n_rows."""
    rng = np.random.default_rng(4)
    prompts = np.repeat(np.arange(40), 10)
    y = np.repeat(rng.random(40) < 0.5, 10).astype(float)
    vals = np.column_stack([y, np.ones_like(y)])
    g = np.zeros(len(y), np.intp)
    stat = GroupedStatistic("r", vals, g, ("g",), ratio)
    clustered = cluster_bootstrap(
        [stat], prompts.astype(str), boot=Resampling(level=0.9, n_boot=1000, seed=0), min_n=1
    )[0][0]
    rows = cluster_bootstrap(
        [stat], np.arange(400).astype(str), boot=Resampling(level=0.9, n_boot=1000, seed=0), min_n=1
    )[0][0]
    width_c = clustered.ci_high - clustered.ci_low
    width_r = rows.ci_high - rows.ci_low
    # binomial SE with 40 vs 400 independent units: ratio sqrt(10) ~ 3.2
    assert 2.5 < width_c / width_r < 4.0


def test_replicates_with_an_empty_group_are_dropped_and_counted() -> None:
    # group 0 lives in 2 of 10 prompts: some resamples draw neither
    cl = np.array([f"p{i}" for i in range(10)] * 3)
    g = np.where(np.isin(np.arange(30) % 10, [0, 1]), 0, 1).astype(np.intp)
    y = np.arange(30, dtype=float) % 2
    vals = np.column_stack([y, np.ones(30)])
    stat = GroupedStatistic("r", vals, g, ("small", "big"), ratio, ((1, "pairs"),))
    n_boot = 2000
    est = cluster_bootstrap(
        [stat], cl, boot=Resampling(level=0.9, n_boot=n_boot, seed=9), min_n=1, max_dropped=0.5
    )
    w = resample_counts(10, n_boot, np.random.default_rng(9))  # labels p0..p9 sort as is
    expected = int(((w[:, 0] + w[:, 1]) == 0).sum())
    assert expected > 0
    assert est[0][0].n_dropped == expected
    assert est[0][0].problem is None
    assert est[0][1].n_dropped == 0
    # the same data refused at the default 10 % limit (expected ~ 0.8^10 = 11 %)
    strict = cluster_bootstrap(
        [stat], cl, boot=Resampling(level=0.9, n_boot=n_boot, seed=9), min_n=1
    )[0][0]
    assert expected / n_boot > 0.1
    assert strict.problem is not None and "too few prompts" in strict.problem
    assert np.isnan(strict.estimate)


def test_too_small_groups_get_a_reason_not_a_number() -> None:
    cl = np.array(["p1", "p2", "p3", "p1"])
    vals = np.array(
        [[1.0, 1.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0], [1.0, 1.0, 0.0, 0.0]]
    )
    g = np.zeros(4, np.intp)
    stat = GroupedStatistic(
        "eo",
        vals,
        g,
        ("j",),
        difference_of_ratios,
        ((1, "pairs of kind one"), (3, "pairs of kind two")),
    )
    est = cluster_bootstrap([stat], cl, boot=Resampling(level=0.9, n_boot=50, seed=0), min_n=2)[0][
        0
    ]
    assert est.problem == "only 1 pair of kind two (need at least 2)"
    assert np.isnan(est.estimate) and np.isnan(est.ci_low)
    one = cluster_bootstrap(
        [stat], np.array(["p"] * 4), boot=Resampling(level=0.9, n_boot=50, seed=0), min_n=1
    )[0][0]
    assert one.problem is not None and "one prompt" in one.problem
    empty = GroupedStatistic(
        "eo",
        vals,
        np.full(4, -1, np.intp),
        ("j",),
        difference_of_ratios,
        ((1, "pairs of kind one"),),
    )
    none = cluster_bootstrap([empty], cl, boot=Resampling(level=0.9, n_boot=50, seed=0), min_n=1)[
        0
    ][0]
    assert none.problem == "no pairs of kind one"


def test_a_group_with_none_of_a_kind_says_none_not_only_0() -> None:
    """Before: "only 0 pairs of kind two (need at least 1)" — a group with pairs but none
    of a kind it needs now reads "no pairs of kind two" (no minimum to reach: lowering
    min_n would not help), and the library's error says to add data, not to lower min_n."""
    cl = np.array(["p1", "p2", "p3", "p1"])
    vals = np.array([[1.0, 1.0, 0.0, 0.0]] * 4)  # every row of kind one, none of kind two
    stat = GroupedStatistic("eo", vals, np.zeros(4, np.intp), ("j",), difference_of_ratios,
                            ((1, "pairs of kind one"), (3, "pairs of kind two")))  # fmt: skip
    for min_n in (1, 3):
        est = cluster_bootstrap([stat], cl, boot=Resampling(n_boot=50), min_n=min_n)[0][0]
        assert est.problem == "no pairs of kind two" and np.isnan(est.estimate)
    assert the_fix("no pairs of kind two") == "add data"
    fewer = the_fix("only 1 pair of kind two (need at least 2)")
    assert fewer == "add data, or lower min_n if you accept a rougher estimate"


@pytest.mark.parametrize(
    ("level", "n_boot", "min_n", "word"),
    [
        (0.0, 100, 1, "level"),
        (1.0, 100, 1, "level"),
        (0.9, 5, 1, "n_boot"),
        (0.9, 100, 0, "min_n"),
    ],
)
def test_bad_options(level: float, n_boot: int, min_n: int, word: str) -> None:
    with pytest.raises(ConfigError, match=word):
        check_options(level=level, n_boot=n_boot, min_n=min_n)


def test_single_precision_path_is_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whole and half numbers (picks, ties, counts) multiply exactly in float32."""
    import recuse.metrics.bootstrap as bs

    rng = np.random.default_rng(8)
    cl = np.array([f"p{c}" for c in rng.integers(0, 300, size=3000)])
    picks = rng.integers(0, 3, size=3000) / 2.0  # 0, 0.5, 1
    probs = rng.random(3000)  # not half numbers: double precision
    vals = np.column_stack([picks, np.ones(3000), probs, np.ones(3000)])
    stat = GroupedStatistic("d", vals, np.zeros(3000, np.intp), ("g",), difference_of_ratios)
    fast = cluster_bootstrap([stat], cl, boot=Resampling(level=0.9, n_boot=500, seed=4), min_n=1)[
        0
    ][0]
    monkeypatch.setattr(bs, "_USE_FLOAT32", False)
    slow = cluster_bootstrap([stat], cl, boot=Resampling(level=0.9, n_boot=500, seed=4), min_n=1)[
        0
    ][0]
    # (the double-precision column may differ in the last bit: other BLAS blocking)
    assert (fast.ci_low, fast.ci_high) == pytest.approx((slow.ci_low, slow.ci_high), abs=1e-14)
    sums = np.column_stack([picks, np.ones(3000)])
    uniq = np.unique(cl)
    code = np.searchsorted(uniq, cl)
    per_cluster = np.zeros((len(uniq), 2))
    np.add.at(per_cluster, code, sums)
    w = resample_counts(len(uniq), 500, np.random.default_rng(4))
    monkeypatch.setattr(bs, "_USE_FLOAT32", True)
    exact, _ = bs._replicate_sums(per_cluster, None, len(uniq), n_boot=500, seed=4)
    assert (exact == w @ per_cluster).all()


def test_one_default_number_of_resamples_everywhere() -> None:
    """metrics and audit used 2,000 and 1,000: one estimate showed two intervals."""
    import inspect

    import typer

    from recuse import options
    from recuse.analyses.base import AuditOptions
    from recuse.cli.metrics import pairs_command
    from recuse.metrics import bootstrap, bradley_terry, probes, recognition, summary

    assert bootstrap.N_BOOT == 2000 and AuditOptions().n_boot == bootstrap.N_BOOT
    assert bootstrap.Resampling().n_boot == AuditOptions().resampling.n_boot == bootstrap.N_BOOT
    default = inspect.signature(pairs_command).parameters["n_boot"].default
    assert isinstance(default, typer.models.OptionInfo) and default.default == bootstrap.N_BOOT
    assert options.default("n_boot") == bootstrap.N_BOOT  # recuse audit's, declared once
    for fn in (summary.pairwise_bias, bradley_terry.bradley_terry, bradley_terry.leaderboard,
               probes.probe_effects, recognition.self_recognition):  # fmt: skip
        assert inspect.signature(fn).parameters["boot"].default.n_boot == bootstrap.N_BOOT, fn


def test_sparse_values_give_the_dense_results() -> None:
    """A wide statistic given as a scipy sparse matrix (each row touching a few of many
    columns) is resampled with the same draws and gives the dense twin's numbers."""
    from scipy import sparse

    rng = np.random.default_rng(3)
    n, k = 2000, 40
    cl = rng.integers(0, 150, size=n)
    group = rng.integers(-1, 3, size=n).astype(np.intp)
    dense = np.zeros((n, k))
    cols = rng.integers(0, k - 2, size=n)
    dense[np.arange(n), cols] = rng.random(n)
    dense[:, -2] = 1.0
    dense[:, -1] = rng.integers(0, 2, size=n)

    def share(s: np.ndarray) -> np.ndarray:  # a ratio over many columns
        return bs._div(s[..., : k - 2].sum(axis=-1), s[..., -2])

    def stat(values: Any, interval: Any) -> GroupedStatistic:
        return GroupedStatistic("w", values, group, ("a", "b", "c"), share,
                                required=((k - 1, "pairs"),), interval=interval)  # fmt: skip

    plain = GroupedStatistic("r", dense[:, -2:], group, ("a", "b", "c"), ratio)
    for how in ("percentile", "bca"):
        want = cluster_bootstrap(
            [plain, stat(dense, how)], cl, boot=Resampling(level=0.9, n_boot=300, seed=5), min_n=1
        )
        got = cluster_bootstrap(
            [plain, stat(sparse.csr_array(dense), how)],
            cl,
            boot=Resampling(level=0.9, n_boot=300, seed=5),
            min_n=1,
        )
        for w_list, g_list in zip(want, got, strict=True):
            for w, g in zip(w_list, g_list, strict=True):
                assert (g.n, g.n_clusters, g.counts) == (w.n, w.n_clusters, w.counts)
                assert g.estimate == pytest.approx(w.estimate, abs=1e-12)
                assert (g.ci_low, g.ci_high) == pytest.approx((w.ci_low, w.ci_high), abs=1e-12)
                assert g.replicates == pytest.approx(w.replicates, abs=1e-12)
                assert g.accel == pytest.approx(w.accel, abs=1e-12)


def test_distinct_columns_finds_copies_and_keeps_the_rest() -> None:
    """Equal columns (also with NaN in the same places) map to their first copy; columns
    that differ in one entry stay apart."""
    rng = np.random.default_rng(0)
    a = rng.random(50)
    b = a.copy()
    b[7] += 1e-12
    n = np.where(np.arange(50) == 3, np.nan, a)
    big = np.column_stack([a, b, a, np.zeros(50), n, n, np.zeros(50)])
    distinct, inverse = bs._distinct_columns(big)
    assert distinct.tolist() == [0, 1, 3, 4]
    assert inverse.tolist() == [0, 1, 0, 2, 3, 3, 2]
    np.testing.assert_array_equal(big[:, distinct][:, inverse], big)


def test_seconds_name_the_statistic_that_is_slow() -> None:
    """A statistic whose ``combine`` takes 0.3 s per call gets its time in ``seconds``;
    a cheap one next to it gets almost none (a planted cause, found)."""
    import time

    cl, y = _data()
    values = np.column_stack([y, np.ones_like(y)])
    group = np.zeros(len(y), np.intp)

    def slow(s: np.ndarray) -> np.ndarray:
        time.sleep(0.3)
        return ratio(s)

    fast = GroupedStatistic("fast", values, group, ("j",), ratio)
    heavy = GroupedStatistic("heavy", values, group, ("j",), slow)
    seconds: dict[str, float] = {}
    start = time.perf_counter()
    out = cluster_bootstrap(
        [fast, heavy], cl, boot=Resampling(level=0.9, n_boot=50, seed=0), min_n=1, seconds=seconds
    )
    total = time.perf_counter() - start
    assert out[0][0].estimate == out[1][0].estimate
    assert set(seconds) == {"fast", "heavy"}
    # combine runs three times for BCa: the estimate, the replicates, the jackknife
    assert seconds["heavy"] >= 0.9 and seconds["fast"] < 0.2
    assert sum(seconds.values()) <= total


def test_a_statistic_no_row_enters_is_not_combined() -> None:
    """A statistic whose rows are all left out (group -1: e.g. an estimator that refused
    the data and kept placeholder columns) gets each group's reason, and its ``combine``
    (which would fail on those columns) is never called; the others are unaffected."""
    cl, y = _data()

    def refuses(s: np.ndarray) -> np.ndarray:
        raise AssertionError("combine called on a statistic no row enters")

    empty = GroupedStatistic(
        "empty", np.zeros((len(y), 2)), np.full(len(y), -1, np.intp), ("a", "b"), refuses,
        required=((1, "pairs holding its own answer"), (7, "columns it no longer has")),
    )  # fmt: skip
    rate = GroupedStatistic(
        "rate", np.column_stack([y, np.ones_like(y)]), np.zeros(len(y), np.intp), ("j",), ratio
    )
    (none_a, none_b), (fine,) = cluster_bootstrap(
        [empty, rate], cl, boot=Resampling(level=0.9, n_boot=100, seed=0), min_n=1
    )
    assert none_a.problem == none_b.problem == "no pairs holding its own answer"
    assert np.isnan(none_a.estimate) and none_a.n == 0
    assert fine.problem is None and fine.estimate == pytest.approx(y.mean())


@pytest.mark.parametrize("z0, accel", [(-0.3, 0.0), (-0.126, -0.007), (0.2, 0.05)])
def test_a_null_beyond_every_replicate_gets_the_floor_whatever_the_bca_correction(
    z0: float, accel: float
) -> None:
    """Every replicate on one side of the null: the null lies outside every interval the
    replicates give, so p is the floor 2/(B+1) — not a value that moves with z0 (gpt-4's
    Eq. 6 on llmbar-mtbench, all 300 replicates above 0 and z0 = −0.126, read 0.016)."""
    b = 300
    reps = np.sort(np.random.default_rng(4).normal(0.2, 0.05, b))
    assert reps.min() > 0 and reps.max() < 1
    est = bs.GroupEstimate(
        0.2, 0.09, 0.31, 195, 73, b, 0, np.zeros(0), z0=z0, accel=accel, replicates=reps
    )
    floor = 2 / (b + 1)
    assert bs.p_value(est, 0.0) == pytest.approx(floor, abs=1e-15)  # all above
    assert bs.p_value(est, 1.0) == pytest.approx(floor, abs=1e-15)  # all below
    # one replicate past the null, midway to the next: the BCa inversion by hand at the
    # level where numpy's quantile (linear, replicates at i / (B − 1)) is the null
    # (0.5 / 299: not kept at 1 / (B + 1), a level the interval does not keep either)
    w = norm.ppf(0.5 / (b - 1)) - z0
    tail = norm.cdf(w / (1 + accel * w) - z0)
    expected = max(floor, 2 * min(tail, 1 - tail))
    assert bs.p_value(est, (reps[0] + reps[1]) / 2) == pytest.approx(expected, abs=1e-12)


_A_BLAS_LOADED_WITHIN = """
import ctypes, shutil, sys
from threadpoolctl import threadpool_info
import recuse.metrics.bootstrap as bs

def threads():
    return {i["filepath"]: i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}

before = threads()
copy = sys.argv[1] + "/libscipy_openblas-another.so"
shutil.copy(next(f for f in before if "openblas" in f), copy)
with bs.one_blas_thread():
    inside = set(threads().values())
    ctypes.CDLL(copy)  # another BLAS, as another thread's import loads one meanwhile
    loaded = threads()[copy]
after = threads()
print(before == {f: n for f, n in after.items() if f != copy}, inside, loaded, len(before))
"""


def test_a_blas_library_loaded_within_the_block_leaves_the_others_their_threads(
    tmp_path: Path,
) -> None:
    # a BLAS library loaded while a block is open (not set by the block, on its own
    # threads) is no caller's change to the block's limit: the libraries the block set
    # are put back. Compared whole, the new one made the settings read as the caller's,
    # and numpy's and scipy's BLAS stayed on one thread for good (fails: False ... first).
    # In a fresh interpreter, so that the copy loaded is not left in the tests' process
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2"}
    out = subprocess.run(
        [sys.executable, "-c", _A_BLAS_LOADED_WITHIN, str(tmp_path)],
        capture_output=True, text=True, check=True, env=env,
    ).stdout.split(maxsplit=3)  # fmt: skip
    assert out[0] == "True" and out[1:3] == ["{1}", "2"] and int(out[3]) >= 1, out


def test_a_block_finds_the_blas_libraries_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Finding the loaded BLAS libraries reads the process's loaded files (~2 ms); the
    move onto Borrowed found them five times a block (save, change, read back, read at
    the end, put back), which made the interval-coverage benchmark's small bootstraps 4x
    slower (21 -> 83 s). Once per outermost block, as before; threads still put back."""
    from threadpoolctl import ThreadpoolController, threadpool_info

    found = []

    def counted() -> Any:
        found.append(1)
        return ThreadpoolController()

    monkeypatch.setattr(bs, "ThreadpoolController", counted)
    before = [(i["filepath"], i["num_threads"]) for i in threadpool_info()]
    for _ in range(3):
        with bs.one_blas_thread(), bs.one_blas_thread():
            assert all(i["num_threads"] == 1 for i in threadpool_info() if i["user_api"] == "blas")
    assert len(found) == 3
    assert [(i["filepath"], i["num_threads"]) for i in threadpool_info()] == before


def test_statistics_of_one_values_matrix_share_its_cluster_sums(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Statistics built on one values matrix and grouping (the calibrated self-preference,
    its family preference and its rungs: 600,000 x 739 in a 600,000-row table, five
    copies of whose cluster sums and their concatenation held 17.5 GB) are summed once
    and resampled once, with the estimates and replicates each gets from its own copy."""
    cl, y = _data(seed=2)
    group = (np.arange(len(y)) % 2).astype(np.intp)
    x = (y > 0.5).astype(float)
    values = np.column_stack([x * y, y, (1 - x) * y, 1 - x, y * y])
    labels = ("g0", "g1")
    boot = Resampling(level=0.9, n_boot=200, seed=5)

    def stats(shared: bool) -> list[GroupedStatistic]:
        def v() -> np.ndarray:
            return values if shared else values.copy()

        return [
            GroupedStatistic("a", v(), group, labels, difference_of_ratios, boot_k=4),
            GroupedStatistic("b", v(), group, labels, ratio, boot_k=2),
            GroupedStatistic("c", v(), group, labels, difference_of_ratios, boot_k=4),
        ]

    calls = []
    real = bs._cluster_sums

    def counted(*args: Any) -> Any:
        calls.append(args[0].name)
        return real(*args)

    monkeypatch.setattr(bs, "_cluster_sums", counted)
    one = cluster_bootstrap(stats(shared=True), cl, boot=boot, min_n=1)
    assert calls == ["a"]  # summed once for the three
    apart = cluster_bootstrap(stats(shared=False), cl, boot=boot, min_n=1)
    assert len(calls) == 4
    for mine, theirs in zip(one, apart, strict=True):
        for e, f in zip(mine, theirs, strict=True):
            assert (e.estimate, e.ci_low, e.ci_high) == (f.estimate, f.ci_low, f.ci_high)
            assert np.array_equal(e.replicates, f.replicates)
    assert one[0][0].estimate == one[2][0].estimate and one[0][0].estimate != one[1][0].estimate


@pytest.mark.parametrize("boot_k", [100, 90])
def test_only_the_shared_sums_and_their_read_columns_are_held_while_resampling(
    monkeypatch: pytest.MonkeyPatch, boot_k: int
) -> None:
    """Two statistics on one values matrix (2,000 prompts x 2 groups x 100 columns:
    its cluster sums 3.2 MB) hold, when the resampling starts, the sums and the columns
    the statistics read (boot_k < k: a 2.88 MB copy; boot_k = k: the sums themselves),
    counted by tracemalloc. The merged sharing kept a copy of the one part
    (np.concatenate of it alone), the parts' list and, at boot_k < k, 9.3 MB in all."""
    import tracemalloc

    rng = np.random.default_rng(0)
    n, k, n_c = 20_000, 100, 2_000
    values = rng.random((n, k))
    group = (np.arange(n) % 2).astype(np.intp)
    stats = [
        GroupedStatistic(name, values, group, ("a", "b"), ratio, boot_k=boot_k)
        for name in ("s", "t")
    ]
    held: list[int] = []
    real = bs._replicate_sums

    def spy(*args: Any, **kwargs: Any) -> Any:
        held.append(tracemalloc.get_traced_memory()[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(bs, "_replicate_sums", spy)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        boot = Resampling(level=0.9, n_boot=20, seed=1)
        cluster_bootstrap(stats, np.arange(n) % n_c, boot=boot, min_n=1, interval="percentile")
    finally:
        tracemalloc.stop()
    sums, part = n_c * 2 * k * 8, n_c * 2 * boot_k * 8
    expected = sums + (part if boot_k < k else 0)
    assert expected <= held[0] - base < expected + part / 4


@pytest.mark.parametrize("seed", [0, 7])
def test_statistics_sharing_a_values_matrix_get_what_each_gets_alone(seed: int) -> None:
    """Statistics on one values matrix with other prompt subsets (rows left out: group
    -1), another grouping, fewer columns read, a weighted copy of the matrix, a sparse
    copy and a statistic listed again at the end: each gets, in one bootstrap call, the
    estimate, interval and replicates it gets computed alone (the resamples depend on
    the seed and the prompts only): the estimate and n bit for bit, the replicates to
    the last bits. Those come from one matrix product over every statistic's columns,
    and BLAS may add in another order for a wider matrix: OpenBLAS's kernels for
    AVX-512 (its small-matrix path) moved the 14th digit of one interval end."""
    from scipy import sparse

    cl, y = _data(seed=3, n=600, clusters=50)
    rng = np.random.default_rng(4)
    x = (rng.random(len(y)) < 0.5).astype(float)
    values = np.column_stack([x * y, y, (1 - x) * y, 1 - x, y * y])
    weighted = values * rng.random(len(y))[:, None]
    two = (np.arange(len(y)) % 2).astype(np.intp)
    subset = np.where(np.isin(cl, np.unique(cl)[:15]), -1, two).astype(np.intp)
    three = (np.arange(len(y)) % 3).astype(np.intp)

    def stats() -> list[GroupedStatistic]:
        return [
            GroupedStatistic("a", values, two, ("g0", "g1"), difference_of_ratios, boot_k=4),
            GroupedStatistic("b", values, subset, ("g0", "g1"), ratio, boot_k=2),
            GroupedStatistic("c", weighted, two, ("g0", "g1"), difference_of_ratios, boot_k=4),
            GroupedStatistic("d", values, three, ("h0", "h1", "h2"), ratio, boot_k=2),
            GroupedStatistic("e", values, two, ("g0", "g1"), ratio, boot_k=2),
            GroupedStatistic("f", sparse.csr_array(values), two, ("g0", "g1"), ratio, boot_k=2),
            GroupedStatistic("g", values, two, ("g0", "g1"), difference_of_ratios, boot_k=4),
        ]

    boot = Resampling(level=0.9, n_boot=200, seed=seed)
    together = cluster_bootstrap(stats(), cl, boot=boot, min_n=1)
    for stat, joint in zip(stats(), together, strict=True):
        (alone,) = cluster_bootstrap([stat], cl, boot=boot, min_n=1)
        for e, f in zip(joint, alone, strict=True):
            assert (e.estimate, e.n) == (f.estimate, f.n)
            assert (e.ci_low, e.ci_high) == pytest.approx((f.ci_low, f.ci_high), rel=1e-12)
            np.testing.assert_allclose(e.replicates, f.replicates, rtol=1e-12, atol=1e-15)
    assert together[1][0].n < together[4][0].n  # the subset left rows out


def _loo_acceleration(
    dense: np.ndarray, cl: np.ndarray, group: np.ndarray, n_groups: int
) -> np.ndarray:
    """The BCa acceleration of a difference of two ratios, by hand: for each group, the
    statistic recomputed from the rows with each cluster left out in turn (a loop, not
    sums minus a cluster's sums), then ``Σ d³ / (6 (Σ d²)^1.5)``, ``d = mean − θ_(i)``."""
    out = []
    for g in range(n_groups):
        theta = []
        for c in np.unique(cl):
            d = dense[(cl != c) & (group == g)]
            theta.append(d[:, 0].sum() / d[:, 1].sum() - d[:, 2].sum() / d[:, 3].sum())
        dev = np.mean(theta) - np.array(theta)
        out.append((dev**3).sum() / (6.0 * (dev**2).sum() ** 1.5))
    return np.array(out)


@pytest.mark.parametrize(("clusters", "block"), [(23, 5), (4097, None), (4096, None)])
def test_the_jackknife_of_sparse_sums_in_blocks_is_the_whole_ones(
    monkeypatch: pytest.MonkeyPatch, clusters: int, block: int | None
) -> None:
    """A sparse statistic with a BCa interval: its leave-one-prompt-out values are made
    a block of ``_JACK_BLOCK`` prompts at a time (a last block short or, at 4,096, none
    after a full one; prompts shuffled, so no prompt's rows are contiguous), and its
    acceleration is the one a loop over left-out prompts gives (to rounding) and the one
    the dense path, which takes the whole at once, gives (exactly). (The calibrated
    estimates, the only sparse statistics recuse builds, have percentile intervals, so
    no other test runs more than one block.)"""
    if block is not None:
        monkeypatch.setattr(bs, "_JACK_BLOCK", block)
    rng = np.random.default_rng(clusters)
    cl = rng.permutation(np.repeat(np.arange(clusters), 2))
    n = len(cl)
    group = rng.integers(0, 2, n).astype(np.intp)
    x = (rng.random(n) < 0.5).astype(float)
    y = rng.random(n) ** (1 + 3 * (cl % 7 == 0))  # skewed
    dense = np.column_stack([x * y, x, (1 - x) * y, 1 - x])
    boot = Resampling(level=0.9, n_boot=40, seed=1)

    def run(values: Any) -> list[Any]:
        stat = GroupedStatistic("d", values, group, ("g0", "g1"), difference_of_ratios)
        return cluster_bootstrap([stat], cl, boot=boot, min_n=1, interval="bca")[0]

    blocked, whole = run(sparse.csr_array(dense)), run(dense)
    got = np.array([e.accel for e in blocked])
    assert np.array_equal(got, [e.accel for e in whole])
    if clusters < 100:  # the loop: 23 prompts x 2 groups
        np.testing.assert_allclose(got, _loo_acceleration(dense, cl, group, 2), rtol=1e-9)
    assert (got != 0).all()  # (an acceleration of 0 would hide nothing)
