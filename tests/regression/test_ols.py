"""The sparse OLS against statsmodels' OLS on the same (dense) design."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from recuse.errors import EstimationError
from recuse.regression.favoritism import design_matrix, length_feature, prepare
from recuse.regression.ols import fit_ols
from recuse.simulate.ratings import simulate_ratings


def _statsmodels(X: np.ndarray, y: np.ndarray, se: str, groups: np.ndarray) -> object:
    model = sm.OLS(y, X, hasconst=True)
    if se == "cluster":
        return model.fit(cov_type="cluster", cov_kwds={"groups": groups})
    return model.fit(cov_type=se)


@pytest.mark.parametrize("se", ["HC0", "HC1", "HC3", "cluster"])
@pytest.mark.parametrize("variant", ["judge", "global", "length"])
def test_sparse_ols_equals_statsmodels(se: str, variant: str) -> None:
    sim = simulate_ratings(seed=21, n_prompts=60, dimensions=("d1", "d2", "d3"), unparsed=0.03)
    p = prepare(sim.ratings, sim.families)
    frame = p.frame
    extra = {"length": length_feature(frame).to_numpy()} if variant == "length" else None
    intercept = "global" if variant == "global" else "judge"
    X, _, _ = design_matrix(frame, intercept=intercept, extra_by_judge=extra)  # type: ignore[arg-type]
    y = frame["y"].to_numpy()
    groups = pd.factorize(frame["prompt_id"])[0]
    ours = fit_ols(X, y, se=se, groups=groups)  # type: ignore[arg-type]
    ref = _statsmodels(X.toarray(), y, se, groups)
    np.testing.assert_allclose(ours.params, ref.params, rtol=0, atol=1e-11)  # type: ignore[attr-defined]
    np.testing.assert_allclose(ours.cov, ref.cov_params(), rtol=1e-9, atol=1e-16)  # type: ignore[attr-defined]
    np.testing.assert_allclose(ours.bse, ref.bse, rtol=1e-9)  # type: ignore[attr-defined]
    assert ours.rsquared == pytest.approx(ref.rsquared, abs=1e-12)  # type: ignore[attr-defined]


def test_real_play_favorites_equals_statsmodels(shared_data) -> None:  # type: ignore[no-untyped-def]
    from recuse.data import load
    from recuse.roster import Roster

    p = prepare(load("play-favorites", data_dir=shared_data), Roster.load())
    X, _, _ = design_matrix(p.frame)
    y = p.frame["y"].to_numpy()
    ours = fit_ols(X, y, se="HC0")
    ref = sm.OLS(y, X.toarray(), hasconst=True).fit(cov_type="HC0")
    np.testing.assert_allclose(ours.params, ref.params, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.bse, ref.bse, rtol=1e-10)


def _table(rows: list[tuple[str, str, str, float, float]]) -> pd.DataFrame:
    t = pd.DataFrame(rows, columns=["prompt_id", "model", "judge", "rating", "reference"])
    t["dimension"] = "d"
    return t


def test_rank_deficiency_names_the_cause() -> None:
    fams = {"a": "F", "b": "G", "c": "G"}
    # judge b rates a and b, but every reference is the same
    flat = _table([(f"p{i}", m, "b", float(i % 3), 2.0) for i in range(6) for m in ("a", "b")])
    with pytest.raises(EstimationError, match="reference does not vary among judge b"):
        design_matrix(prepare(flat, fams).frame)
    # one judge rating only itself, with a global intercept: the self term is the constant
    own = _table([(f"p{i}", "a", "a", float(i % 3), float(i % 4)) for i in range(8)])
    with pytest.raises(EstimationError, match="judge a rates only its own completions"):
        design_matrix(prepare(own, fams).frame, intercept="global")
    # fewer ratings than coefficients
    few = _table([("p1", "a", "b", 1.0, 2.0), ("p2", "b", "b", 2.0, 1.0)])
    with pytest.raises(EstimationError, match="2 ratings for 3 coefficients"):
        design_matrix(prepare(few, fams).frame)
    with pytest.raises(EstimationError, match="no ratings left"):
        design_matrix(prepare(own, fams).frame.iloc[:0])


def test_rank_deficient_design_is_an_estimation_error_not_a_linalg_error() -> None:
    """fit_ols called on a rank-deficient or empty-column design (no check_identified in
    front) raises EstimationError, never numpy's LinAlgError / ValueError."""
    import scipy.sparse as sp

    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 4))
    X[:, 0] = 1
    X[:, 3] = X[:, 1] + X[:, 2]
    y = rng.normal(size=50)
    for se in ("HC0", "HC3", "cluster"):
        with pytest.raises(EstimationError, match="not of full rank"):
            fit_ols(sp.csr_array(X), y, se=se, groups=rng.integers(0, 5, 50))  # type: ignore[arg-type]
    X[:, 3] = 0.0
    with pytest.raises(EstimationError, match="not of full rank"):
        fit_ols(sp.csr_array(X), y, se="HC0")


def test_non_finite_outcome_and_constant_outcome() -> None:
    import scipy.sparse as sp

    rng = np.random.default_rng(4)
    X = sp.csr_array(np.column_stack([np.ones(30), rng.normal(size=30)]))
    y = rng.normal(size=30)
    y[2] = np.nan
    with pytest.raises(EstimationError, match="not finite"):
        fit_ols(X, y, se="HC0")
    flat = fit_ols(X, np.ones(30), se="HC0")  # statsmodels: R² undefined, no ZeroDivisionError
    assert np.allclose(flat.params, [1.0, 0.0])
    assert np.isnan(flat.rsquared)


def test_an_exact_fit_has_zero_errors_and_no_rounding_coefficients() -> None:
    """y explained exactly by the design: the residuals left are rounding, so the
    errors are 0 and a coefficient at rounding level is 0. Before, a coefficient of
    1e-17 with a standard error of 1e-18 came out 'significant'."""
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    n = 60
    X = np.column_stack([np.ones(n), rng.integers(0, 2, n), rng.normal(size=n)])
    y = 0.3 + 0.0 * X[:, 1] + 0.7 * X[:, 2]  # the middle coefficient is exactly 0
    for se in ("HC0", "HC1", "cluster"):
        fit = fit_ols(sp.csr_array(X), y, se=se, groups=np.arange(n) // 3)  # type: ignore[arg-type]
        assert fit.params[1] == 0.0
        np.testing.assert_allclose(fit.params[[0, 2]], [0.3, 0.7], rtol=1e-12)
        assert (fit.bse == 0).all()
