"""Exploration: score matrix, tie-corrected Spearman, Krippendorff's alpha."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from recuse.errors import EstimationError, InputError
from recuse.regression.explore import agreement, score_matrix, spearman_by_dimension
from recuse.simulate.ratings import simulate_ratings


def test_score_matrix_means_and_self_cells() -> None:
    sim = simulate_ratings(seed=1, n_prompts=10)
    sm = score_matrix(sim.ratings, sim.families, normalize="none")
    r = sim.ratings
    want = r[(r["judge"] == "j1") & (r["model"] == "j3")]["rating"].mean()
    assert sm.means.loc["j1", "j3"] == pytest.approx(want)
    assert sm.self_cells.loc["j2", "j2"] and not sm.self_cells.loc["j2", "j3"]
    assert sm.diagonal()["j4"] == pytest.approx(sm.means.loc["j4", "j4"])
    rn = sm.row_normalized
    assert np.allclose(rn.mean(axis=1), 0)
    assert np.allclose(rn.max(axis=1) - rn.min(axis=1), 1)
    assert sm.n.loc["j0", "j0"] == 20  # 10 prompts x 2 dimensions


def test_spearman_is_pearson_of_average_ranks() -> None:
    t = pd.DataFrame(
        {
            "dimension": "d",
            "judge": "j",
            "rating": [1, 2, 2, 3, 3, 3, 1],
            "reference": [1.0, 1.0, 2.5, 2.5, 3.0, 2.0, 1.5],
        }
    )
    out = spearman_by_dimension(t)
    ranks_x = stats.rankdata(t["rating"])  # average ranks for ties
    ranks_y = stats.rankdata(t["reference"])
    want = np.corrcoef(ranks_x, ranks_y)[0, 1]
    assert out["rho"].iloc[0] == pytest.approx(want)
    assert out["n"].iloc[0] == 7


# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", 4 coders x 12 units
KRIPP = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def _long() -> pd.DataFrame:
    rows = [
        (f"u{u}", f"c{c}", v)
        for c, coder in enumerate(KRIPP)
        for u, v in enumerate(coder)
        if v is not None
    ]
    return pd.DataFrame(rows, columns=["item", "rater", "value"])


@pytest.mark.parametrize(
    ("level", "alpha"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_krippendorff_alpha_matches_the_published_example(level: str, alpha: float) -> None:
    res = agreement(_long(), level=level)  # type: ignore[arg-type]
    assert res.alpha == pytest.approx(alpha, abs=5e-4)
    # unit 12 has a single value and is left out; 11 units, of which all-equal:
    # u0,u2,u3,u4,u6,u8,u9,u10 -> 8 of 11
    assert res.n_items == 11
    assert res.observed == pytest.approx(8 / 11)


def test_agreement_errors() -> None:
    with pytest.raises(InputError):
        agreement(_long().rename(columns={"value": "v"}))
    one = pd.DataFrame({"item": ["a", "b"], "rater": ["x", "x"], "value": [1, 2]})
    with pytest.raises(EstimationError):
        agreement(one)


def test_a_column_named_twice_is_an_error_naming_it() -> None:
    """A table holding a column twice (``concat(axis=1)``) stopped spearman_by_dimension
    with "The truth value of a Series is ambiguous" and agreement with a pivot error;
    now the header's error, naming the column."""
    ratings = simulate_ratings(seed=1, n_prompts=10).ratings
    with pytest.raises(InputError, match="2 columns named 'rating'") as err:
        spearman_by_dimension(pd.concat([ratings, ratings[["rating"]]], axis=1))
    assert err.value.column == "rating"
    long = _long()
    with pytest.raises(InputError, match="2 columns named 'value'") as err:
        agreement(pd.concat([long, long[["value"]]], axis=1))
    assert err.value.column == "value"


def _continuous(units: int, seed: int) -> pd.DataFrame:
    """Three raters' continuous ratings of ``units`` items (a unit's true score plus
    noise), one in ten missing: every value distinct."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=units)
    rows = [
        (f"u{u}", f"r{r}", truth[u] + rng.normal(scale=0.5))
        for u in range(units)
        for r in range(3)
        if rng.random() > 0.1
    ]
    return pd.DataFrame(rows, columns=["item", "rater", "value"])


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_from_sums_equals_the_krippendorff_package(
    level: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ratings with too many distinct values for the package's coincidence arrays get α
    from sums over the units; forced here on data the package can take, both agree,
    on continuous ratings and on the published example."""
    import krippendorff

    from recuse.regression import explore

    for frame in (_continuous(60, seed=1), _long()):
        wide = frame.pivot_table(index="rater", columns="item", values="value", aggfunc="first")
        wide = wide.loc[:, wide.notna().sum() >= 2].to_numpy(float)
        package = krippendorff.alpha(reliability_data=wide, level_of_measurement=level)
        monkeypatch.setattr(explore, "_PACKAGE_BYTES", -1)
        assert agreement(frame, level=level).alpha == pytest.approx(package, abs=1e-12)  # type: ignore[arg-type]
        monkeypatch.undo()


def test_continuous_ratings_with_thousands_of_values_get_alpha_without_the_package() -> None:
    """2,000 items' continuous ratings (about 5,400 distinct values) asked the package
    for 2,000 × 5,400² coincidence cells (over 400 GiB): the process was killed. The
    interval α from sums equals the definition's pairwise sums, worked out here."""
    frame = _continuous(2000, seed=2)
    got = agreement(frame, level="interval")
    groups = [g.to_numpy() for _, g in frame.groupby("item")["value"] if len(g) >= 2]
    every = np.concatenate(groups)
    within = sum(((g[:, None] - g[None, :]) ** 2).sum() / (len(g) - 1) for g in groups)
    n = every.size
    across = sum(((every[i : i + 500, None] - every) ** 2).sum() for i in range(0, n, 500))
    assert got.alpha == pytest.approx(1 - (n - 1) * within / across, abs=1e-10)
    assert got.n_items == len(groups)
    with pytest.raises(EstimationError, match="ratio level"):
        agreement(frame, level="ratio")
