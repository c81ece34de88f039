"""Favoritism: the findings are the regression's γ_j and λ_F; degenerate data is skipped."""

from __future__ import annotations

import pytest

from analyses.conftest import Planted
from recuse.analyses.favoritism import ANALYSIS, FAMILY_BIAS, SELF_BIAS
from recuse.regression import fit_favoritism


def test_findings_are_the_regression_coefficients(planted: Planted) -> None:
    res = fit_favoritism(planted.ratings, planted.roster, se="HC0", level=0.9)
    sb = res.self_bias().set_index("judge")
    found = {f.judge: f for f in planted.report.findings if f.bias is SELF_BIAS}
    assert set(found) == set(sb.index)
    for judge, f in found.items():
        assert (f.estimate, f.ci_low, f.ci_high) == pytest.approx(
            tuple(sb.loc[judge, ["estimate", "lower", "upper"]])
        )
    assert found["j0"].significant and found["j0"].estimate > 0  # planted +0.15
    fb = {f.detail for f in planted.report.findings if f.bias is FAMILY_BIAS}
    assert fb and all(d.startswith("λ pooled over") for d in fb)


def test_needs_a_judge_that_rated_its_own_model(planted: Planted) -> None:
    others = planted.ratings[~planted.ratings["model"].isin(planted.ratings["judge"])]
    assert "self-bias is not identified" in (ANALYSIS.needs(others) or "")
    no_ref = planted.ratings.assign(reference=float("nan"))
    assert "no reference scores" in (ANALYSIS.needs(no_ref) or "")
