"""Each finding states how its p-value was computed (``Finding.p_method``) and the
smallest its method can give (``p_floor``): a bootstrap p-value is at least 2/(B+1)
over the B kept resamples; a regression's Wald test has no such floor."""

from __future__ import annotations

import pytest

from analyses.conftest import Planted
from recuse.analyses.base import from_result
from recuse.analyses.favoritism import ANALYSIS as FAVORITISM
from recuse.analyses.self_preference import ANALYSIS as SELF_PREFERENCE
from recuse.metrics.result import MetricResult
from recuse.report.model import P_METHODS


def test_every_p_value_says_its_method(planted: Planted) -> None:
    """In the planted audit (200 resamples): the favoritism regression's findings are
    Wald tests without a floor; every other finding with a p-value is a bootstrap one,
    its floor 2/(B+1) for B between 180 and 200 kept resamples (at most a tenth
    dropped), never above its p-value; a finding without a p-value states no method."""
    seen = set()
    for f in planted.report.findings:
        d = f.to_dict()
        assert d["p_method"] == f.p_method and d["p_floor"] == f.p_floor
        assert f.p_method in P_METHODS
        if f.p_value is None:
            assert (f.p_method, f.p_floor) == ("", None), f
            continue
        if f.section == FAVORITISM.id:
            assert (f.p_method, f.p_floor) == ("wald", None), f
        else:
            assert f.p_method == "bootstrap", f
            assert f.p_floor is not None and 2 / 201 <= f.p_floor <= 2 / 181, f
            assert f.p_value >= f.p_floor * (1 - 1e-12), f
        seen.add(f.p_method)
    assert seen == {"wald", "bootstrap"}


def test_the_bootstrap_floor_counts_the_kept_resamples() -> None:
    """200 resamples of which 5 were dropped: the floor is 2/196."""
    bias = next(b for b in SELF_PREFERENCE.biases if b.key == "self_preference_eo")
    r = MetricResult(
        metric="self_preference_eo", estimate=0.1, ci_low=0.0, ci_high=0.2, level=0.9, n=40,
        n_clusters=20, method="m", judge="j", n_boot=200, n_boot_dropped=5, p_value=0.3,
    )  # fmt: skip
    f = from_result(SELF_PREFERENCE, bias, r, dataset="d")
    assert f.p_method == "bootstrap"  # type: ignore[union-attr]
    assert f.p_floor == pytest.approx(2 / 196)  # type: ignore[union-attr]
