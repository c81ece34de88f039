"""The calibrated self-preference's values matrix held sparse (CSR): the same entries as
the dense ``rows × k`` matrix the exact bootstrap used to read (600,000 × 739 doubles,
3.5 GB at 600,000 rows), and the same report, number by number, as that dense matrix
gives through :func:`~recuse.metrics.bootstrap.cluster_bootstrap`'s dense path."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import sparse

import recuse.metrics.bootstrap as bs
import recuse.metrics.competence as comp
from recuse.cli import main
from recuse.metrics.competence import calibrated_parts
from recuse.metrics.self_preference import favored_side
from recuse.metrics.verdicts import judge_codes
from recuse.simulate.pairs import SimVerdicts, simulate_pairs


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")


def _report(path: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code = main(["metrics", "pairs", str(path), "--n-boot", "200", "--out", str(out)])
    _, err = capsys.readouterr()
    assert code == 0, err
    data: dict[str, Any] = json.loads(out.read_text())
    return data


def _numbers(obj: Any, at: str = "") -> list[tuple[str, Any]]:
    """Every leaf of a JSON document with its path."""
    if isinstance(obj, dict):
        return [x for k in sorted(obj) for x in _numbers(obj[k], f"{at}/{k}")]
    if isinstance(obj, list):
        return [x for i, v in enumerate(obj) for x in _numbers(v, f"{at}/{i}")]
    return [(at, obj)]


def _dense_values(
    n: int, k: int, orders: Any, labels: Any, indicators: dict[int, np.ndarray]
) -> np.ndarray:
    """The values matrix as it was built before it was held sparse: a dense ``(n, k)``
    array, the orders' terms added in place (``np.add.at``), the labels' and indicators'
    assigned."""
    ri, pat, w, wy = orders
    lab_rows, lab_col, human, n_l = labels
    p = (k - 3 - 2 * n_l) // 2
    dense = np.zeros((n, k))
    np.add.at(dense, (ri, pat), w)
    np.add.at(dense, (ri, p + pat), wy)
    dense[lab_rows, lab_col] = 1.0
    dense[lab_rows, lab_col + n_l] = human
    for col, rows in indicators.items():
        dense[:, col] = np.where(rows, 1.0, 0.0)
    return dense


@pytest.mark.parametrize(("verdicts", "tol"), [("pick", 0.0), ("prob", 1e-12)])
def test_report_from_sparse_values_equals_the_dense_ones(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    verdicts: SimVerdicts,
    tol: float,
) -> None:
    """`recuse metrics pairs` on a planted table (300 prompts, two judges), before (the
    values matrix dense, built as until now by :func:`_dense_values`: the bootstrap's
    dense path) and after (sparse), compared leaf by leaf: equal with pick verdicts
    (whole and half numbers, summed exactly in any order), within 1e-12 with probability
    verdicts (their terms are summed in double precision, in another order than the
    dense product's). (The calibrated intervals are percentile ones: no jackknife runs
    on these sums; the blocked jackknife of sparse sums is checked in
    ``tests/metrics/test_bootstrap.py``.)"""
    path = tmp_path / "pairs.csv"
    sim = simulate_pairs(n_prompts=300, pairs_per_prompt=3, seed=7, verdicts=verdicts)
    sim.pairs.to_csv(path, index=False)
    after = _report(path, tmp_path / "after.json", capsys)
    monkeypatch.setattr(comp, "_values_matrix", _dense_values)
    before = _report(path, tmp_path / "before.json", capsys)
    names = {r["metric"] for r in after["results"]}
    assert {"self_preference_calibrated", "family_preference_calibrated"} <= names
    left, right = _numbers(before), _numbers(after)
    assert [k for k, _ in left] == [k for k, _ in right]
    compared = 0
    for (key, a), (_, b) in zip(left, right, strict=True):
        if key.endswith("/out") or key.endswith("/path"):
            continue
        if isinstance(a, float) and isinstance(b, float):
            assert (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tol, key
            compared += 1
        else:
            assert a == b or "json" in str(a), key
    assert compared > 100


def test_sparse_values_hold_the_dense_entries() -> None:
    """Each row's entries, rebuilt here one judged order at a time from the table (the
    pattern weight 1/orders and its pick, the labelled pair's count and human value, the
    three indicators), are those of the sparse matrix; a row holds at most 8 of the k
    (4 for its two orders, 2 for its label, 2 indicators: own and other exclude each other)."""
    sim = simulate_pairs(n_prompts=40, pairs_per_prompt=3, seed=3)
    pairs = sim.pairs
    codes, labels = judge_codes(pairs, None)
    side = favored_side(pairs, relation="self")
    values, group, problems, _, model = calibrated_parts(pairs, codes, labels, side=side)
    assert not problems and model.one_step is None
    assert sparse.issparse(values) and values.shape == (len(pairs), model.k)
    csr = sparse.csr_array(values)
    per_row = np.diff(csr.indptr)
    assert per_row.max() <= 8 and (csr.data != 0).all()
    dense = csr.toarray()
    assert not (dense[:, model.col_own] * dense[:, model.col_other]).any()
    # the indicator columns: own answer, without it (usable rows of a fitted judge)
    used = group >= 0
    assert np.array_equal(dense[used, model.col_own], (side[used] != 0).astype(float))
    assert np.array_equal(dense[used, model.col_other], (side[used] == 0).astype(float))
    # each usable row's pattern weights add up to 1 (its judged orders weigh 1 in all)
    p = len(model.ia)
    assert np.allclose(dense[used, :p].sum(axis=1), 1.0)
    # its picks: the weight times P(a) of each order, summed = the row's mean P(a) ...
    # of a pick verdict, 0 or 1 each (all entries whole or half numbers)
    assert np.array_equal(2 * csr.data, np.round(2 * csr.data))
    picks = dense[used, p : 2 * p].sum(axis=1)
    first, second = pairs["p_a_first"].to_numpy(float), pairs["p_a_second"].to_numpy(float)
    both = np.isfinite(first) & np.isfinite(second)
    mean = np.where(both, (first + second) / 2, np.where(np.isfinite(first), first, second))
    assert np.allclose(picks, mean[used])


def test_sparse_statistics_of_one_values_matrix_are_resampled_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Sparse statistics sharing one values matrix (the calibrated estimate, its family
    form and its rungs) put its resampled columns in once, with the estimates and
    replicates each statistic gets from its own copy."""
    rng = np.random.default_rng(4)
    n = 400
    cl = rng.integers(0, 80, n)
    group = (np.arange(n) % 2).astype(np.intp)
    x = (rng.random(n) < 0.5).astype(float)
    y = (rng.random(n) < 0.6).astype(float)
    dense = np.column_stack([x * y, x, (1 - x) * y, 1 - x])
    values = sparse.csr_array(dense)
    labels = ("g0", "g1")
    boot = bs.Resampling(level=0.9, n_boot=200, seed=5)

    def stats(shared: bool) -> list[bs.GroupedStatistic]:
        def v() -> Any:
            return values if shared else values.copy()

        return [
            bs.GroupedStatistic("a", v(), group, labels, bs.difference_of_ratios),
            bs.GroupedStatistic("b", v(), group, labels, bs.ratio, boot_k=2),
            bs.GroupedStatistic("c", v(), group, labels, bs.difference_of_ratios),
        ]

    widths = []
    real = bs._replicate_sums

    def seen(big: Any, wide: Any, *args: Any, **kw: Any) -> Any:
        widths.append(0 if wide is None else wide.shape[1])
        return real(big, wide, *args, **kw)

    monkeypatch.setattr(bs, "_replicate_sums", seen)
    one = bs.cluster_bootstrap(stats(shared=True), cl, boot=boot, min_n=1)
    apart = bs.cluster_bootstrap(stats(shared=False), cl, boot=boot, min_n=1)
    as_dense = [
        bs.GroupedStatistic(s.name, dense, group, labels, s.combine, boot_k=s.boot_k)
        for s in stats(shared=True)
    ]
    dense_out = bs.cluster_bootstrap(as_dense, cl, boot=boot, min_n=1)
    # shared: a and c once (2 groups x 4 columns), b its 2 of 4; apart: each its own
    assert widths[:2] == [2 * 4 + 2 * 2, 2 * 4 + 2 * 2 + 2 * 4]
    for mine, theirs, plain in zip(one, apart, dense_out, strict=True):
        for e, f, d in zip(mine, theirs, plain, strict=True):
            assert (e.estimate, e.ci_low, e.ci_high) == (f.estimate, f.ci_low, f.ci_high)
            assert (e.estimate, e.ci_low, e.ci_high) == (d.estimate, d.ci_low, d.ci_high)
            assert np.array_equal(e.replicates, f.replicates)
            assert np.array_equal(e.replicates, d.replicates)
