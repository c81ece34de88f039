"""The bootstrap's and the calibrated estimate's fast paths against the plain computations
they replace (each check is one the fast path fails if it drifts: planted copies,
zeros of either sign, permuted columns, split draws, wide codes)."""

from __future__ import annotations

import numpy as np
import pytest

from recuse.metrics import bootstrap as bs
from recuse.metrics.competence import _unique_columns


def _by_bytes(big: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct columns by each column's bytes (the plain way)."""
    first: dict[bytes, int] = {}
    distinct: list[int] = []
    inverse = np.empty(big.shape[1], dtype=np.intp)
    for j in range(big.shape[1]):
        key = np.ascontiguousarray(big[:, j]).tobytes()
        if key not in first:
            first[key] = len(distinct)
            distinct.append(j)
        inverse[j] = first[key]
    return np.asarray(distinct, dtype=np.intp), inverse


def test_distinct_columns_agree_with_their_bytes() -> None:
    """Columns equal but for the sign of two zeros share the integer hash (the sign bit
    times an odd number, twice, wraps to 0) and must still stay apart; reversed copies
    and NaN columns too; random small tables of whole numbers with many copies."""
    rng = np.random.default_rng(0)
    z = np.zeros((6, 1))
    z2 = z.copy()
    z2[[1, 4]] = -0.0
    x = rng.random((6, 1))
    nan = np.full((6, 1), np.nan)
    tables = [np.hstack([z, z2, z, x, x[::-1], x, z2, nan, nan])]
    for _ in range(300):
        m = rng.integers(0, 3, size=(int(rng.integers(1, 8)), int(rng.integers(1, 12))))
        m = m.astype(float)
        m[rng.random(m.shape) < 0.1] = -0.0
        tables.append(m)
    for big in tables:
        got, want = bs._distinct_columns(big), _by_bytes(big)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    assert bs._distinct_columns(tables[0])[0].tolist() == [0, 1, 3, 4, 7]


def test_draws_split_into_pieces_are_the_draws_made_at_once() -> None:
    """The counts filled a few resamples at a time equal those of one draw of every
    resample (bincount of the row-offset indices), for any piece size."""
    n_c, n_boot = 37, 23
    rng = np.random.default_rng(4)
    idx = rng.integers(0, n_c, size=(n_boot, n_c))
    idx += (np.arange(n_boot) * n_c)[:, None]
    want = np.bincount(idx.ravel(), minlength=n_boot * n_c).reshape(n_boot, n_c)
    for entries in (1, 40, 100, 10_000):
        old = bs._DRAW_ENTRIES
        bs._DRAW_ENTRIES = entries
        try:
            got = bs._counts(n_c, n_boot, np.random.default_rng(4))
        finally:
            bs._DRAW_ENTRIES = old
        np.testing.assert_array_equal(got, want)
        assert got.sum(axis=1).tolist() == [n_c] * n_boot


def test_halves_and_bound_per_block_match_the_whole() -> None:
    """Whole-or-half columns and the absolute sums, a block of rows at a time, equal the
    whole-array answer (one non-half entry, a NaN or an infinity in any block)."""
    rng = np.random.default_rng(1)
    for _ in range(200):
        x = rng.integers(-5, 5, size=(int(rng.integers(1, 700)), int(rng.integers(1, 6))))
        x = x / rng.choice([1.0, 2.0, 4.0])
        x.flat[int(rng.integers(0, x.size))] = rng.choice([np.nan, np.inf, 0.25, 2.5, 1e6])
        halves, bound = bs._halves(x, block=int(rng.integers(1, 300)))
        twice = 2.0 * x
        np.testing.assert_array_equal(halves, np.all(twice == np.round(twice), axis=0))
        np.testing.assert_allclose(bound[halves], np.abs(x).sum(axis=0)[halves], rtol=0)


@pytest.mark.parametrize("wide", [False, True])
def test_unique_columns_equal_numpy_unique_rows(wide: bool) -> None:
    """Distinct rows in lexicographic order and each row's index, as ``np.unique(...,
    axis=0)``, by the table of codes (narrow) and by sorting the codes (wide spans)."""
    rng = np.random.default_rng(2)
    hi = 10**6 if wide else 3
    cols = [rng.integers(-2, hi, size=500), rng.integers(0, 2, size=500).astype(np.int8),
            rng.integers(-1, 2, size=500)]  # fmt: skip
    rows, inverse = _unique_columns(cols)
    want, want_inv = np.unique(np.column_stack(cols), axis=0, return_inverse=True)
    np.testing.assert_array_equal(rows, want)
    np.testing.assert_array_equal(inverse, want_inv.reshape(-1))
    np.testing.assert_array_equal(rows[inverse], np.column_stack(cols))
