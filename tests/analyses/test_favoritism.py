"""Favoritism: the findings are the regression's γ_j and λ_F; degenerate data is skipped."""

from __future__ import annotations

import pytest

from analyses.conftest import Planted
from recuse.analyses.favoritism import ANALYSIS, FAMILY_BIAS, SELF_BIAS
from recuse.regression import fit_favoritism
from recuse.roster import Roster


def test_findings_are_the_regression_coefficients(planted: Planted) -> None:
    res = fit_favoritism(planted.ratings, planted.roster, level=0.9)  # cluster by prompt
    assert res.se_type == "cluster-robust by prompt (CR1)"
    sb = res.self_bias().set_index("judge")
    found = {f.judge: f for f in planted.report.findings if f.bias is SELF_BIAS}
    assert set(found) == set(sb.index)
    for judge, f in found.items():
        assert (f.estimate, f.ci_low, f.ci_high) == pytest.approx(
            tuple(sb.loc[judge, ["estimate", "lower", "upper"]])
        )
        assert (f.std_error, f.p_value) == pytest.approx(tuple(sb.loc[judge, ["se", "p"]]))
        assert "cluster-robust by prompt" in f.method
    assert found["j0"].significant and found["j0"].estimate > 0  # planted +0.15
    fb = {f.detail for f in planted.report.findings if f.bias is FAMILY_BIAS}
    assert fb and all(d.startswith("λ pooled over") for d in fb)


def test_needs_a_judge_that_rated_its_own_model(planted: Planted) -> None:
    others = planted.ratings[~planted.ratings["model"].isin(planted.ratings["judge"])]
    assert "self-bias is not identified" in (ANALYSIS.needs(others, Roster.builtin()) or "")
    no_ref = planted.ratings.assign(reference=float("nan"))
    assert "no reference scores" in (ANALYSIS.needs(no_ref, Roster.builtin()) or "")


def _audit_ratings(frame):  # type: ignore[no-untyped-def]
    from analyses.conftest import OPTIONS, _input
    from recuse.driver import run_audit
    from recuse.roster import Entry, Roster

    roster = Roster.builtin()
    for name in {*frame["judge"], *frame["model"]}:
        roster.add(Entry(str(name), str(name)))  # each its own family
    return run_audit([_input("r", "ratings", frame)], options=OPTIONS, roster=roster)


def test_terms_the_design_leaves_out_are_not_estimated_for_their_judges(planted: Planted) -> None:
    """A judge whose γ (or family λ) the design cannot hold gets a not-estimated entry
    with the bias and the reason, like a pairwise metric (was: only a section note, so
    the summary, matrix and CLI said nothing about that judge's self-bias)."""
    one_model = planted.ratings[planted.ratings["model"] == "j0"]
    report = _audit_ratings(one_model)
    assert not [f for f in report.findings if f.bias is SELF_BIAS]
    rows = {r.judge: r for r in report.summary()}
    assert set(rows) == set(one_model["judge"])
    for judge, row in rows.items():
        reasons = [m.reason for m in row.not_estimated if m.bias is SELF_BIAS]
        assert reasons, judge
        assert "not estimable" in reasons[0]
        fam = [m.reason for m in row.not_estimated if m.bias is FAMILY_BIAS]
        assert fam and "not estimable" in fam[0]
    matrix = report.matrix()
    assert {c.bias.key for c in matrix.columns} >= {"self_bias", "family_bias"}
    # no debiasing note with τ "from nan to nan" when nothing was estimated
    notes = [n for s in report.sections for n in s.notes]
    assert not any("nan" in n for n in notes)


def test_judges_with_a_gamma_keep_their_finding_and_others_are_not_estimated(
    planted: Planted,
) -> None:
    r = planted.ratings
    # j1 never rates its own model: its γ is left out of the design
    frame = r[~((r["judge"] == "j1") & (r["model"] == "j1"))]
    report = _audit_ratings(frame)
    found = {f.judge for f in report.findings if f.bias is SELF_BIAS}
    assert "j1" not in found and "j0" in found
    row = {x.judge: x for x in report.summary()}["j1"]
    assert [m.reason for m in row.not_estimated if m.bias is SELF_BIAS] == [
        "self-bias of j1 not estimable: it never rates its own completions"
    ]


def test_the_coefficient_table_is_in_words_not_a_regression_dump(planted: Planted) -> None:
    res = fit_favoritism(planted.ratings, planted.roster, level=0.9)
    (table,) = [t for s in planted.report.sections for t in s.tables
                if t.name.startswith("favoritism")]  # fmt: skip
    f = table.frame
    assert list(f.columns) == ["coefficient", "estimate", "90% low", "90% high", "p"]
    assert not {"term", "z", "se", "kind"} & set(f.columns)
    tidy = res.tidy()
    assert len(f) == len(tidy)
    assert f["estimate"].tolist() == pytest.approx(tidy["estimate"].round(4).tolist())
    assert any(w.startswith("self-bias γ_j of judge j0") for w in f["coefficient"])
    assert all(p == "< 0.001" or 0 <= float(p) <= 1 for p in f["p"])
