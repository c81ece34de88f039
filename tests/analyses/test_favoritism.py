"""Favoritism: the findings are the regression's γ_j and λ_F; degenerate data is skipped."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from scipy import stats

from analyses.conftest import Planted
from recuse.analyses.favoritism import ANALYSIS, FAMILY_BIAS, SELF_BIAS
from recuse.regression import fit_favoritism
from recuse.roster import Roster


def test_findings_are_the_regression_coefficients(planted: Planted) -> None:
    res = fit_favoritism(planted.ratings, planted.roster, level=0.9)  # cluster by prompt
    assert res.se_type.startswith("cluster-robust by prompt (CR1), Student t on ")
    sb = res.self_bias().set_index("judge")
    found = {f.judge: f for f in planted.report.findings if f.bias is SELF_BIAS}
    assert set(found) == set(sb.index)
    for judge, f in found.items():
        assert (f.estimate, f.ci_low, f.ci_high) == pytest.approx(
            tuple(sb.loc[judge, ["estimate", "lower", "upper"]])
        )
        # the report's standard error is the t interval's half-width over z (below)
        half = sb.loc[judge, "upper"] - sb.loc[judge, "estimate"]
        assert f.std_error == pytest.approx(half / stats.norm.ppf(0.95))
        assert f.p_value == pytest.approx(sb.loc[judge, "p"])
        assert "cluster-robust by prompt" in f.method
    assert found["j0"].significant and found["j0"].estimate > 0  # planted +0.15
    fb = {f.detail for f in planted.report.findings if f.bias is FAMILY_BIAS}
    assert fb and all(d.startswith("λ pooled over") for d in fb)


def test_detectable_and_the_gates_projection_read_the_t_interval_at_few_prompts() -> None:
    """At 6 prompts γ's cluster-robust interval is est ± t_5(0.95) · se (2.015 · se). The
    report's "±X detectable" and `recuse gate`'s projection read z · std_error as that
    interval's half-width: the finding carried the regression's se, so they described an
    interval 1.23 times narrower than the one shown (detectable 2.49 · se, not 3.05 · se;
    the projection 1.5 times too few ratings)."""
    from analyses.conftest import audit_only
    from recuse.report.gate import Threshold, evaluate, in_memory
    from recuse.roster import Entry
    from recuse.simulate import simulate_ratings

    sim = simulate_ratings(n_prompts=6, dimensions=("d1", "d2"), seed=4)
    roster = Roster.builtin()
    for judge, family in sim.families.items():
        roster.add(Entry(judge, family))
    report = audit_only(ANALYSIS.id, sim.ratings, roster, table="ratings", figure_format="svg")
    res = fit_favoritism(sim.ratings, sim.families)
    se = float(res.self_bias().set_index("judge").loc["j0", "se"])
    t, z, z80 = stats.t.ppf(0.95, 5), stats.norm.ppf(0.95), stats.norm.ppf(0.8)
    (f,) = [f for f in report.findings if f.bias is SELF_BIAS and f.judge == "j0"]
    assert f.ci_high - f.estimate == pytest.approx(t * se)  # the interval shown
    assert f.detectable == pytest.approx((z + z80) * se * t / z)  # = (2.015 + 1.031) · se
    assert "times t/z" in f.method
    (g,) = [g for g in in_memory(report).findings
            if g["bias"] == SELF_BIAS.key and g["judge"] == "j0"]  # fmt: skip
    # inside the interval: inconclusive; 2.3, not 2: n · 2² is a whole number, whose
    # ceiling the last bit of either side's arithmetic moves by one
    bound = float(abs(f.estimate) + t * se / 2.3)
    line = evaluate(g, Threshold(SELF_BIAS.key, bound), counts="ratings")
    assert line.outcome == "inconclusive"
    assert line.n_needed == math.ceil(f.n * (t * se / (bound - abs(f.estimate))) ** 2)


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
    assert any(w.startswith("self-bias γ_j of judge j0") for w in f["coefficient"])
    # the numbers are the fit's, unrounded: the table is written as tables/NAME.csv and
    # into report.json, both "exact, for scripts" (docs/statistics.md); the HTML rounds
    # them for a reader (3 decimals; a p under 0.001 in scientific notation). They used
    # to be rounded to 4 places here, with p a text ("< 0.001") a script cannot compare.
    assert f["estimate"].tolist() == tidy["estimate"].astype(float).tolist()
    assert f["90% low"].tolist() == tidy["lower"].astype(float).tolist()
    assert f["90% high"].tolist() == tidy["upper"].astype(float).tolist()
    assert f["p"].tolist() == tidy["p"].astype(float).tolist()
    assert all(isinstance(p, float) and 0 <= p <= 1 for p in f["p"])


def test_the_coefficient_table_shows_each_terms_df_where_one_is_not_the_fits() -> None:
    """Model j0's answers on 5 of 40 prompts: γ_j0 reads Student's t on 4 df, every other
    term on 39, and the table's words named only the rule (its interval columns: "Student
    t on 39 df (a term whose ratings lie on fewer prompts: on those less one)"). A df
    column now gives each row's (the fit's df column, which the fit checks against
    scipy), with words; the balanced planted table has none (above)."""
    from analyses.conftest import audit_only
    from recuse.roster import Entry
    from recuse.simulate import simulate_ratings

    sim = simulate_ratings(n_prompts=40, dimensions=("a", "b"), seed=1)
    r = sim.ratings
    few = r[(r["model"] != "j0") | r["prompt_id"].isin(["p1", "p5", "p9", "p20", "p33"])]
    roster = Roster.builtin()
    for judge, family in sim.families.items():
        roster.add(Entry(judge, family))
    report = audit_only(ANALYSIS.id, few, roster, table="ratings", figure_format="svg")
    (table,) = [t for s in report.sections for t in s.tables if t.name.startswith("favoritism")]
    df = table.frame.set_index("coefficient")["df"]
    assert df["self-bias γ_j of judge j0 (own model's answers)"] == 4
    assert df["self-bias γ_j of judge j1 (own model's answers)"] == 39
    assert (df.drop("self-bias γ_j of judge j0 (own model's answers)") == 39).all()
    assert table.columns["df"].startswith("the degrees of freedom of the Student t that reads")
    assert "prompts holding its ratings less one" in table.columns["df"]


def test_the_correction_says_which_terms_rest_on_few_prompts() -> None:
    """Model j0's answers on 3 of 40 prompts: γ_j0's finding carries the few-prompts
    warning, and the correction's note, which subtracts it, said nothing of it. The note
    now ends with that warning (once), and the finding keeps it."""
    from analyses.conftest import audit_only
    from recuse.roster import Entry
    from recuse.simulate import simulate_ratings

    sim = simulate_ratings(n_prompts=40, dimensions=("a", "b"), seed=1)
    r = sim.ratings
    few = r[(r["model"] != "j0") | r["prompt_id"].isin(["p1", "p5", "p9"])]
    roster = Roster.builtin()
    for judge, family in sim.families.items():
        roster.add(Entry(judge, family))
    report = audit_only(ANALYSIS.id, few, roster, table="ratings", figure_format="svg")
    (f,) = [f for f in report.findings if f.bias is SELF_BIAS and f.judge == "j0"]
    (warning,) = [w for w in f.warnings if "lie on only 3 prompts" in w]
    (note,) = [n for s in report.sections for n in s.notes if "debiasing subtracts" in n]
    assert note.endswith(f"; subtracted, resting on few prompts — {warning}.")
    assert note.count("few prompts") == 1


def test_findings_recover_planted_self_and_family_biases() -> None:
    """Planted truth (simulate_ratings, Eq. 1 with one dimension): every judge's self-bias
    γ_j and each family's λ_F are planted, of both signs. The audit divides ratings and
    references by their largest value ("max" normalisation), which multiplies every
    coefficient but the slope by 1/top: the findings times ``top`` (worked out here
    from the table) estimate the planted values. Over two seeds the mean is within
    0.03 of each γ_j and 0.02 of each λ_F (about 3 standard errors of the mean); a sign
    error, or γ and λ swapped, would miss by more than 0.1."""
    from analyses.conftest import audit_only
    from recuse.roster import Entry
    from recuse.simulate import simulate_ratings

    gamma = {"j0": 0.12, "j1": -0.08, "j2": 0.05, "j3": 0.0, "j4": -0.1}
    lam = {"A": 0.06, "B": -0.05}  # j4 alone in C: no family term
    got: dict[tuple[str, str], list[float]] = {}
    for seed in range(2):
        sim = simulate_ratings(n_prompts=90, dimensions=("d1",), self_bias=gamma,
                               family_bias=lam, seed=seed)  # fmt: skip
        roster = Roster.builtin()
        for judge, family in sim.families.items():
            roster.add(Entry(judge, family))
        report = audit_only(ANALYSIS.id, sim.ratings, roster, table="ratings")
        top = max(sim.ratings["rating"].max(), sim.ratings["reference"].max())
        for f in report.findings:
            if f.bias is SELF_BIAS:
                got.setdefault((f.judge, "self"), []).append(f.estimate * top)
            elif f.bias is FAMILY_BIAS:  # one finding per judge, λ of its family
                got.setdefault((sim.families[f.judge], "family"), []).append(f.estimate * top)
    assert set(got) == {*((j, "self") for j in gamma), *((f, "family") for f in lam)}
    for judge, value in gamma.items():
        mean = sum(got[(judge, "self")]) / 2
        assert mean == pytest.approx(value, abs=0.03), (judge, got[(judge, "self")])
    for family, value in lam.items():
        mean = sum(got[(family, "family")]) / len(got[(family, "family")])
        assert mean == pytest.approx(value, abs=0.02), (family, got[(family, "family")])


def test_n_is_defined_and_the_own_ratings_are_counted_beside_it(planted: Planted) -> None:
    """A self-bias's n is every rating of the judge in the fit (its scale comes from the
    other models' answers), not its own model's ratings, which identify γ_j: the unit
    says what n is and the detail counts the own ones, by pandas here. (A reader beside
    self-preference's n = own pairs used to read n=7,013 on Play Favorites as 7,013
    ratings of its own answers; they are 777.)"""
    r = planted.ratings
    r = r[r["rating"].notna() & r["reference"].notna()]
    for f in planted.report.findings:
        if f.bias is SELF_BIAS:
            mine = r[r["judge"] == f.judge]
            assert f.n == len(mine)
            own = int((mine["model"] == f.judge).sum())
            assert 0 < own < f.n
            assert f"{own:,} of its own model's answers" in f.detail
    assert "n = every rating of the judge in the fit" in SELF_BIAS.unit
    assert "n = every rating of the family's judges in the fit" in FAMILY_BIAS.unit


def test_the_robustness_count_says_interval_excludes_0_not_flagged() -> None:
    """On play-favorites the note read 'self-bias γ_j flagged (interval excludes 0) in how
    many of the fitted variants — claude-3-sonnet-20240229: 22 of 24' while the summary
    read its γ 'negligible', unflagged. The count is of intervals excluding 0 (checked
    here against the robustness table), and the note no longer calls it a flag."""
    from analyses.conftest import _input
    from recuse.driver import AuditOptions, run_audit
    from recuse.roster import Entry
    from recuse.simulate import simulate_ratings

    sim = simulate_ratings(n_prompts=40, dimensions=("d1",), seed=0)
    roster = Roster.builtin()
    for judge, family in sim.families.items():
        roster.add(Entry(judge, family))
    options = AuditOptions(n_boot=200, only=(ANALYSIS.id,), robustness=("length",))
    report = run_audit([_input("sim", "ratings", sim.ratings)], options=options, roster=roster)
    (note,) = [n for s in report.sections for n in s.notes if "self-bias γ_j:" in n]
    assert "flagged" not in note and "its interval excludes 0 (each interval alone" in note
    (table,) = [t for s in report.sections for t in s.tables if t.name.startswith("robustness")]
    rows = table.frame[(table.frame["kind"] == "self") & table.frame["lower"].notna()]
    assert rows["variant"].nunique() >= 2  # the main fit and the length check
    for label, group in rows.groupby("label"):
        excludes = int(((group["lower"] > 0) | (group["upper"] < 0)).sum())
        assert f"{label}: {excludes} of {len(group)}" in note
    # its CSV's significant is that count's, not the findings' adjusted one: the table
    # says so with its columns (report.json, under the table), since the CSV cannot
    from recuse.regression.robustness import COMPARISON_COLUMNS

    assert table.columns == COMPARISON_COLUMNS and set(table.columns) == set(table.frame)
    assert "each interval alone: not the audit's flag" in table.columns["significant"]


def test_the_heat_maps_colour_bar_says_its_quantity_and_unit(planted: Planted) -> None:
    """The judge × model heat map's colour bar had no label: its numbers (a score minus
    its row's mean, in row ranges) read as scores. The bar now says what the object
    computing them says they are (``ScoreMatrix.ROW_NORMALIZED``), and those numbers
    are that, by hand, for every row of the figure (the reference's too)."""
    import html
    import re

    import numpy as np

    from analyses.conftest import audit_only
    from recuse.regression.explore import ScoreMatrix, score_matrix

    report = audit_only(
        ANALYSIS.id, planted.ratings, planted.roster, table="ratings", figure_format="svg"
    )
    (section,) = [s for s in report.sections if s.id == ANALYSIS.id]
    (heat,) = [g for g in section.figures if g.id.startswith("heat-")]
    texts = [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", heat.data)]
    assert ScoreMatrix.ROW_NORMALIZED in texts
    sm = score_matrix(planted.ratings, planted.roster)
    colour = sm.normalize_rows(sm.with_reference).to_numpy(float)
    by_hand = [(r - np.mean(r)) / (np.max(r) - np.min(r)) for r in sm.with_reference.to_numpy()]
    assert np.allclose(colour, by_hand) and sm.with_reference.index[-1] == "human (reference)"


def test_the_heat_maps_alt_text_counts_the_judges_not_the_reference_row(
    planted: Planted,
) -> None:
    """Its alt text read "Mean score, judge × model — play-favorites: 10 judges × 9
    models" for 9 judges and the human reference row under them; it counts the judges
    of the data and names the last row."""
    from analyses.conftest import audit_only

    report = audit_only(ANALYSIS.id, planted.ratings, planted.roster, table="ratings")
    (section,) = [s for s in report.sections if s.id == ANALYSIS.id]
    (heat,) = [g for g in section.figures if g.id.startswith("heat-")]
    judges = planted.ratings["judge"].nunique()
    models = planted.ratings["model"].nunique()
    assert f": {judges} judges × {models} models, and a last row: human (reference)" in heat.alt


def test_no_correction_is_shown_when_no_term_has_a_standard_error() -> None:
    """Both judges' γ fit their one own rating exactly (no standard error: reported not
    estimated), the third judge never rates itself. The correction subtracted nothing,
    yet the audit showed 'Correction: mean score per model with self- and family-bias
    removed' (after = before) and 'debiasing subtracts γ̂_j …; it does not change the
    ranking'. Nothing estimated is nothing to correct, as with no term at all."""

    from regression.conftest import exact_selves

    report = _audit_ratings(exact_selves())
    assert not [t for t in report.tables if t.name.startswith("debiased")]
    notes = [n for s in report.sections for n in s.notes]
    assert not any("debiasing subtracts" in n for n in notes), notes
    assert any(
        "debiasing: no self- or family-bias term was estimated" in k.reason for k in report.skipped
    )


def test_the_coefficient_and_score_tables_say_their_unit(planted: Planted) -> None:
    """The coefficients' CSV held an estimate column in no unit (a slope's beside a γ's),
    the score matrix's a mean of no stated scale whose reference row, drawn in the heat
    map, is the debiased table's reference column: each now says so (their columns),
    the score matrix's means checked by hand."""
    from analyses.conftest import audit_only

    report = audit_only(ANALYSIS.id, planted.ratings, planted.roster, table="ratings")
    (coef,) = [t for t in report.tables if t.name.startswith("favoritism-")]
    (matrix,) = [t for t in report.tables if t.name.startswith("score-matrix-")]
    assert set(coef.columns) == set(coef.frame.columns)
    assert set(matrix.columns) == set(matrix.frame.columns)
    assert "Wald interval" in coef.columns["90% low"] and "per unit" in coef.columns["estimate"]
    r = planted.ratings.dropna(subset=["rating"])
    one = matrix.frame.iloc[0]
    mine = r[(r["judge"] == one["judge"]) & (r["model"] == one["model"])]
    assert int(one["n"]) == len(mine) and "max-normalised" in matrix.columns["mean"]


def test_the_section_says_its_standard_errors_are_not_the_papers(shared_data) -> None:  # type: ignore[no-untyped-def]
    """Play Favorites computed White's robust standard errors (HC0); the audit's default
    is cluster-robust by prompt, and its section said only 'robust standard errors', so
    its intervals were read as the paper's. On play-favorites the two differ: gpt-4o's
    γ reads ±0.0082 (cluster) against ±0.0100 (HC0, as statsmodels gives it from the
    same design). The words now say which is the default and how to get the paper's."""
    import numpy as np
    import statsmodels.api as sm
    from scipy.stats import norm

    from recuse.data import load

    roster = Roster.builtin()
    ratings = load("play-favorites", data_dir=shared_data, roster=roster)
    half = {}
    for se in ("cluster", "HC0"):
        gamma = fit_favoritism(ratings, roster, se=se).self_bias().set_index("judge")
        half[se] = float(gamma.loc["gpt-4o", "upper"] - gamma.loc["gpt-4o", "estimate"])
    # HC0 by statsmodels on the same design: judge intercepts and slopes, self and
    # family terms, the second dimension's shift; scores over each dimension's top score
    r = ratings.copy()
    top = r.groupby("dimension")[["rating", "reference"]].transform("max").max(axis=1)
    y, ref = r["rating"] / top, r["reference"] / top
    fam = r["judge"].map(roster.family)
    cols = {}
    for j in sorted(r["judge"].unique()):
        cols[f"a {j}"] = (r["judge"] == j).astype(float)
        cols[f"b {j}"] = (r["judge"] == j) * ref
        cols[f"g {j}"] = ((r["judge"] == j) & (r["model"] == j)).astype(float)
    for f in sorted(fam.unique()):
        cols[f"l {f}"] = ((fam == f) & (r["model"].map(roster.family) == f)
                          & (r["judge"] != r["model"])).astype(float)  # fmt: skip
    cols["d"] = (r["dimension"] == sorted(r["dimension"].unique())[1]).astype(float)
    fit = sm.OLS(y.to_numpy(), pd.DataFrame(cols)).fit(cov_type="HC0")
    assert half["HC0"] == pytest.approx(norm.ppf(0.95) * fit.bse["g gpt-4o"], rel=1e-6)
    assert half["HC0"] > 1.15 * half["cluster"]  # not the same intervals
    assert np.isfinite(half["cluster"])
    assert "cluster-robust by prompt unless --se names another" in ANALYSIS.intro
    assert "the paper's were White's, --se HC0" in ANALYSIS.intro


def test_the_coefficient_table_names_the_baseline_dimension(planted: Planted) -> None:
    """Eq. 1 fitted independently (statsmodels' formula OLS on the ratings and references
    divided by each dimension's largest value, d1 the treatment baseline): the table's
    dimension row is d2's shift against d1 and says so, and a judge's intercept is its
    score at reference 0 in d1. The row read "dimension effect δ_d: d2" — no baseline (a
    reader could not tell +0.03 from d1's −0.03 against d2) and δ, Eq. 1's judge effect."""
    import statsmodels.formula.api as smf

    from recuse.simulate.ratings import DEFAULT_FAMILIES

    (table,) = [t for s in planted.report.sections for t in s.tables
                if t.name == "favoritism-sim-ratings"]  # fmt: skip
    words = table.frame.set_index("coefficient")["estimate"]
    r = planted.ratings.dropna(subset=["rating", "reference"]).copy()
    top = r.groupby("dimension")[["rating", "reference"]].transform("max").max(axis=1)
    r["y"], r["ref"] = r["rating"] / top, r["reference"] / top
    fam = r["judge"].map(DEFAULT_FAMILIES.get)
    r["own"] = (r["judge"] == r["model"]).astype(float)
    r["kin"] = ((fam == r["model"].map(DEFAULT_FAMILIES.get)) & (r["own"] == 0)).astype(float)
    terms = []
    for j in sorted(r["judge"].unique()):
        r[f"s_{j}"] = r["own"] * (r["judge"] == j)
        terms.append(f"s_{j}")
    for f in sorted(fam.unique()):
        if (r["kin"] * (fam == f)).sum() > 0:
            r[f"f_{f}"] = r["kin"] * (fam == f)
            terms.append(f"f_{f}")
    fit = smf.ols(
        "y ~ 0 + C(judge) + C(judge):ref + C(dimension, Treatment('d1')) + " + " + ".join(terms),
        data=r,
    ).fit()
    shift = "dimension effect η_d of d2 (its shift against d1, whose η is 0)"
    assert words[shift] == pytest.approx(fit.params["C(dimension, Treatment('d1'))[T.d2]"])
    intercept = "intercept α + δ_j of judge j0 (its score at reference 0 in d1)"
    assert words[intercept] == pytest.approx(fit.params["C(judge)[j0]"])


def test_the_pages_coefficient_table_reads_as_recuse_favoritism_and_says_why_it_differs(
    shared_data,  # type: ignore[no-untyped-def]
    tmp_path,
    capsys,
) -> None:
    """On play-favorites the page's coefficient table wrote each column at its own
    precision, the γ unsigned (``0.006`` beside the findings' ``+0.006``), and
    llama-3.1-8b-instruct's γ −0.113 [−0.134, −0.092] beside the findings' −0.11
    [−0.13, −0.09] with no word of why; ``recuse favoritism`` writes one precision for
    the table and says so under it. The page now does both: every row at three decimals
    (each γ and λ under 0.1, so three; hand-written here from report.json's numbers
    with format()), a bias term signed, and the note naming that row both ways."""
    import html
    import json
    import re

    from recuse.cli import main

    out = tmp_path / "r"
    args = ["audit", "play-favorites", "--only", "favoritism", "--robustness", "none"]
    assert main([*args, "--n-boot", "100", "--data-dir", str(shared_data), "-o", str(out)]) == 0
    page = html.unescape((out / "report.html").read_text())
    report = json.loads((out / "report.json").read_text())
    rows = report["tables"]["favoritism-play-favorites"]["rows"]
    (body,) = re.findall(r'data-table="favoritism-play-favorites">(.*?)</table>', page, re.S)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", r) for r in re.findall(r"<tr>(.*?)</tr>", body)]
    cells = [c for c in cells if c]
    assert len(cells) == len(rows) == 32  # 9 judges: α, β, γ each; 4 families; 1 dimension

    def three(x: float, sign: bool) -> str:
        return format(x + 0.0, "+.3f" if sign else ".3f").replace("-", "\u2212")

    for row, cell in zip(rows, cells, strict=True):
        bias = row["coefficient"].startswith(("self-bias", "family bias", "dimension"))
        assert cell[1:4] == [three(row["estimate"], bias), three(row["90% low"], False),
                             three(row["90% high"], False)], row["coefficient"]  # fmt: skip
    (llama,) = [
        f
        for s in report["sections"]
        for f in s["findings"]
        if f["judge"] == "llama-3.1-8b-instruct" and f["bias"] == "self_bias"
    ]
    # the finding: two decimals (its largest number, 0.134, is 0.1 or more)
    there = (f"{llama['estimate']:+.2f} [{llama['ci_low']:.2f}, {llama['ci_high']:.2f}]"
             .replace("-", "\u2212"))  # fmt: skip
    assert there == "\u22120.11 [\u22120.13, \u22120.09]"
    (note,) = re.findall(r'data-table-note="favoritism-play-favorites">(.*?)</p>', page)
    assert note == (
        "Numbers to the table's one precision, the finest any row needs (recuse audit's "
        "summary writes each finding to its own interval's: γ_j of judge "
        f"llama-3.1-8b-instruct \u22120.113 [\u22120.134, \u22120.092] reads {there} there)."
    )


def test_the_pages_coefficient_cells_on_an_extreme_scale_say_their_unit() -> None:
    """Scores of 1e49: the page writes the table in units of 10⁴⁹, as ``recuse
    favoritism`` does, and says so under it (the CSV keeps the numbers); an intercept is
    a level, unsigned, a γ signed; a number that is not finite is an empty cell."""
    from recuse.analyses.favoritism import coefficient_texts

    tidy = pd.DataFrame({
        "kind": ["judge", "self"], "label": ["a", "a"],
        "estimate": [3.1e49, -4.94e47], "se": [1e48, 1e46],
        "lower": [2.9e49, -5.1e47], "upper": [3.3e49, float("nan")],
    })  # fmt: skip
    texts, note = coefficient_texts(tidy, 0.9)
    # in units of 10⁴⁹ (the largest, 3.3e49): 3.1 and −0.0494; three decimals, the γ
    # row's (every number of it under 0.1), for the table
    assert texts == {"estimate": ["3.100", "\u22120.049"], "90% low": ["2.900", "\u22120.051"],
                     "90% high": ["3.300", ""]}  # fmt: skip
    assert note == (
        "Estimate, low and high in units of 10⁴⁹ (the CSV and report.json keep the fit's numbers)."
    )
    from recuse.report.model import Table

    with pytest.raises(ValueError, match="texts of 'estimate' need one per row"):
        Table("t", "T", tidy, texts={"estimate": ["1"]})


def test_the_correction_tables_change_carries_its_sign_both_ways(planted: Planted) -> None:
    """The correction table's ``change`` (after − before) read "−0.00818" beside a bare
    "0.00541" on the page: a difference whose no-change value is 0 now carries its sign
    either way, each text the column's number at one precision."""
    from recuse.numbers import MINUS

    (table,) = [t for t in planted.report.tables if t.name.startswith("debiased")]
    change = table.frame["change"].astype(float)
    texts = table.texts["change"]
    assert (change > 0).any() and (change < 0).any()  # both signs in the planted table
    assert all(t[0] in ("+", MINUS) for t in texts)
    decimals = {len(t.split(".")[1]) for t in texts}
    assert len(decimals) == 1
    shown = [float(t.replace(MINUS, "-")) for t in texts]
    assert shown == pytest.approx(change.tolist(), abs=0.51 * 10 ** -decimals.pop())


def test_a_gamma_on_three_of_forty_prompts_is_read_from_three() -> None:
    """Model j0's answers on 3 of 40 prompts: γ_j0 rests on those 3 (its t on 2 df), so
    its finding counts 3 prompts, carries the few-prompts warning and rules nothing out
    (never "negligible"); the finding counted the fit's 40, so the warning never fired
    and the interval from 3 prompts read as well-founded. Another judge's γ counts 40."""
    from analyses.conftest import audit_only
    from recuse.roster import Entry
    from recuse.simulate import simulate_ratings

    sim = simulate_ratings(n_prompts=40, dimensions=("a", "b"), seed=1)
    r = sim.ratings
    few = r["prompt_id"].isin(["p1", "p9", "p33"])
    ratings = r[(r["model"] != "j0") | few]
    roster = Roster.builtin()
    for judge, family in sim.families.items():
        roster.add(Entry(judge, family))
    report = audit_only(ANALYSIS.id, ratings, roster, table="ratings", figure_format="svg")
    found = {f.judge: f for f in report.findings if f.bias is SELF_BIAS}
    df = fit_favoritism(ratings, sim.families).self_bias().set_index("judge")["df"]
    assert (found["j0"].clusters, df["j0"]) == (3, 2)
    assert (found["j1"].clusters, df["j1"]) == (40, 39)
    assert not found["j0"].informative and found["j1"].informative
    assert found["j0"].materiality != "negligible"
    (warned,) = [w for w in found["j0"].warnings if w.startswith("γ_j of j0:")]
    assert "lie on only 3 prompts" in warned
    assert not any(w.startswith("γ_j of") for w in found["j1"].warnings)
    assert "on 3 prompts" in found["j0"].detail and "this term's t on 2 df" in found["j0"].method
    from recuse.report.gate import Threshold, evaluate, in_memory

    (g,) = [g for g in in_memory(report).findings
            if g["bias"] == SELF_BIAS.key and g["judge"] == "j0"]  # fmt: skip
    line = evaluate(g, Threshold(SELF_BIAS.key, 0.5), counts="ratings")
    assert line.outcome == "inconclusive"
    assert "from 3 prompts, under the 5 a clustered interval needs" in line.text
