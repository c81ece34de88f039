"""Familiarity: the finding is human slope − judge slope, with the audit's min_n."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from analyses.conftest import BOOT, Planted
from recuse.analyses.base import NUMBER_COLUMNS
from recuse.analyses.familiarity import ANALYSIS, FAMILIARITY
from recuse.errors import EstimationError
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.familiarity import familiarity_bias
from recuse.report import AuditReport
from recuse.roster import Roster

#: the planted pairs of an author-judge (m1, its familiarity planted) and their audit
AuthorAudit = tuple[pd.DataFrame, AuditReport]


@pytest.fixture(scope="module")
def author_audit() -> AuthorAudit:
    """The familiarity section's audit of a judge that is also an author (m1: judge
    slope −2, its own answers 0.5 nats less perplexing), 100 prompts, seed 2; read only
    by the tests, so made once for the module."""
    from recuse.data.inputs import Input
    from recuse.driver import AuditOptions, run_audit
    from recuse.report import Source
    from recuse.roster import Entry
    from recuse.simulate.familiarity import PlantedFamiliarity, simulate_familiarity

    t = simulate_familiarity(
        {"m1": PlantedFamiliarity(judge_slope=-2.0, own_gap=-0.5)}, n_prompts=100, seed=2
    ).pairs
    roster = Roster.builtin()
    for m in sorted(set(t["model_a"]) | set(t["model_b"])):
        roster.add(Entry(m, m))
    report = run_audit(
        [Input("fam", "pairs", t, Source("fam", "pairs", len(t), judges=("m1",)))],
        options=AuditOptions(n_boot=200, robustness=(), only=(ANALYSIS.id,)),
        roster=roster,
    )
    return t, report


def test_finding_is_the_slope_difference_its_unit_names(planted: Planted) -> None:
    (f,) = [f for f in planted.report.findings if f.bias is FAMILIARITY]
    ref = familiarity_bias(planted.familiar, judge="fam-judge", **BOOT)  # type: ignore[arg-type]
    assert f.estimate == pytest.approx(ref.estimate)
    assert f.estimate == pytest.approx(
        ref.components["human_slope"] - ref.components["judge_slope"]
    )
    assert "slope" in FAMILIARITY.unit and f.direction == "positive"


def test_needs_perplexities(planted: Planted) -> None:
    assert "ppl_a" in (ANALYSIS.needs(planted.pairs, Roster.builtin()) or "")
    assert ANALYSIS.needs(planted.familiar, Roster.builtin()) is None


def test_min_n_reaches_the_estimator(planted: Planted) -> None:
    few = planted.familiar[planted.familiar["prompt_id"].isin(
        planted.familiar["prompt_id"].unique()[:5])]  # fmt: skip
    # 15 pairs: refused at the old fixed default of 20, estimated at the audit's min_n 10
    assert len(few) == 15
    with pytest.raises(EstimationError):
        familiarity_bias(few, judge="fam-judge", boot=Resampling(n_boot=200), min_n=20)
    r = familiarity_bias(few, judge="fam-judge", boot=Resampling(n_boot=200), min_n=10)
    # min_n=10 lets the 15 pairs through: the estimate uses every one of them
    assert r.n == 15 and r.ci_low <= r.estimate <= r.ci_high


def test_mediation_table_for_an_author_judge(author_audit: AuthorAudit) -> None:
    """A judge that is also an author gets the mediation table: the metric's numbers."""
    from recuse.metrics.familiarity_mediation import familiarity_mediation

    t, report = author_audit
    (table,) = [x for s in report.sections for x in s.tables if x.name == "mediation-fam"]
    ref = familiarity_mediation(t, judge="m1", boot=Resampling(n_boot=200))
    assert list(table.frame["part"]) == [r.metric for r in ref]
    assert list(table.frame["estimate"]) == pytest.approx([r.estimate for r in ref])


def test_the_finding_recovers_a_planted_familiarity_bias() -> None:
    """Planted truth (simulate_familiarity): the human's preference has log-odds slope
    −0.5 per nat of log-perplexity difference, the judge's −1.5, so the population
    familiarity bias (human slope − judge slope) is exactly 1.0. Over two seeds (1,800
    pairs each) the audit's mean finding is within 0.25 of it (about 3 standard errors
    of the mean); the slopes' difference taken the other way (−1.0), or either slope
    alone (−0.5, −1.5), would fail."""
    from analyses.conftest import audit_only
    from recuse.roster import Entry
    from recuse.simulate import PlantedFamiliarity, simulate_familiarity

    got = []
    for seed in range(2):
        sim = simulate_familiarity({"fam-judge": PlantedFamiliarity(judge_slope=-1.5)},
                                   human_slope=-0.5, n_prompts=600, seed=seed)  # fmt: skip
        assert sim.true_value("fam-judge") == pytest.approx(1.0)
        roster = Roster.builtin()
        for name in {*sim.pairs["model_a"], *sim.pairs["model_b"], "fam-judge"}:
            roster.add(Entry(str(name), str(name)))
        (f,) = [f for f in audit_only(ANALYSIS.id, sim.pairs, roster).findings
                if f.bias is FAMILIARITY]  # fmt: skip
        assert f.n == len(sim.pairs)
        got.append(f.estimate)
    assert sum(got) / 2 == pytest.approx(1.0, abs=0.25), got


def test_a_model_line_is_the_judge_itself_in_figures_4_and_5() -> None:
    """``self_scope="line"``: a judge's earlier snapshot is the judge itself in the
    familiarity figures and mediation as in the self-preference headline (the Figure 5 gap
    compared ids and was skipped: "no response of the judge's own model")."""
    from recuse.data.inputs import Input
    from recuse.driver import AuditOptions, run_audit
    from recuse.metrics.familiarity import own_perplexity_gap
    from recuse.report import Source
    from recuse.roster import Entry, Roster
    from recuse.simulate.familiarity import PlantedFamiliarity, simulate_familiarity

    t = simulate_familiarity(
        {"m1": PlantedFamiliarity(judge_slope=-2.0, own_gap=-0.5)}, n_prompts=100, seed=2
    ).pairs
    # the judge is snapshot m1-0613; the answers are by its earlier snapshot m1-0314
    t = t.assign(judge="m1-0613", model_a=t["model_a"].replace("m1", "m1-0314"),
                 model_b=t["model_b"].replace("m1", "m1-0314"))  # fmt: skip
    roster = Roster.builtin()
    roster.add(Entry("m1", "m1"))
    for snap in ("m1-0613", "m1-0314"):
        roster.add(Entry(snap, "m1", line="m1"))
    for m in sorted((set(t["model_a"]) | set(t["model_b"])) - {"m1-0314"}):
        roster.add(Entry(m, m))
    source = Source("fam", "pairs", len(t), judges=("m1-0613",))
    tables = {}
    for scope in ("snapshot", "line"):
        options = AuditOptions(n_boot=200, robustness=(), only=(ANALYSIS.id,), self_scope=scope)
        report = run_audit([Input("fam", "pairs", t, source)], options=options, roster=roster)
        tables[scope] = {x.name: x for s in report.sections for x in s.tables}
    assert "own-perplexity-gap-fam" not in tables["snapshot"]
    gap = tables["line"]["own-perplexity-gap-fam"].frame
    (ref,), _ = own_perplexity_gap(t, boot=Resampling(n_boot=200),
                                   selves={"m1-0613": "m1", "m1-0314": "m1"})  # fmt: skip
    assert gap["estimate"].tolist() == pytest.approx([ref.estimate])
    assert ref.estimate < 0  # the planted own_gap
    # its warnings as text, as every estimates table writes them (it read [] and False)
    assert gap["warnings"].tolist() == ["; ".join(ref.warnings)]
    assert not {"fixed_by_construction", "components"} & set(gap.columns)
    # what its number is, as every estimates table says: a signed difference around 0
    assert set(NUMBER_COLUMNS) <= set(gap.columns)
    assert gap["signed"].tolist() == [True] and gap["null"].tolist() == [0.0]
    assert not gap["absolute_value"].any() and gap["null_bound"].isna().all()
    assert "mediation-fam" in tables["line"] and "mediation-fam" not in tables["snapshot"]


def test_the_unit_says_the_slopes_are_per_token_of_the_judges_tokenizer() -> None:
    """The slopes are per nat of per-token log-perplexity, which a judge's tokenizer sets
    (1.3 times the tokens: d divided by about 1.3, the slopes multiplied by it); the unit
    said 'log-odds per nat' alone, beside judges ranked across tokenizers."""
    from recuse.analyses.familiarity import FAMILIARITY

    assert "per-token log-perplexity" in FAMILIARITY.unit
    assert "judges with other tokenizers are on other scales" in FAMILIARITY.unit


def test_the_familiarity_tables_say_what_each_column_is(author_audit: AuthorAudit) -> None:
    """The five tables of the section (Figures 3, 4 and 5, the gap, the mediation) had no
    column words. Each now has them, and the numbers are what they say, worked out with
    pandas on the planted pairs: a curve row's mean is the judge's mean P(a) over the pairs
    whose d = log ppl_a − log ppl_b falls in [bin_low, bin_high); a by-model row's mean is
    the mean log-perplexity of the model's distinct responses; the two mediation parts add
    up to the calibrated self-preference."""
    import numpy as np
    import pandas as pd

    t, report = author_audit
    tables = {x.name: x for s in report.sections for x in s.tables}
    names = ("perplexity-curve", "perplexity-curve-by-self", "own-perplexity-gap",
             "log-perplexity-by-model", "mediation")  # fmt: skip
    for name in names:
        table = tables[f"{name}-fam"]
        assert set(map(str, table.frame.columns)) <= set(table.columns), name
    assert "nats per token" in tables["perplexity-curve-fam"].columns["bin_low"]
    d = np.log(t["ppl_a"].astype(float)) - np.log(t["ppl_b"].astype(float))
    curve = tables["perplexity-curve-fam"].frame
    judge = curve[(curve["rater"] == "judge") & np.isfinite(curve["bin_low"])]
    judge = judge[np.isfinite(judge["bin_high"])]
    assert len(judge) >= 4
    for _, row in judge.iterrows():
        inside = (d >= row["bin_low"]) & (d < row["bin_high"]) & t["human"].notna()
        assert row["n"] == inside.sum()
        assert row["mean"] == pytest.approx(t.loc[inside, "p_a"].astype(float).mean())
    responses = pd.concat([
        pd.DataFrame({"p": t["prompt_id"], "m": t["model_a"], "l": np.log(t["ppl_a"])}),
        pd.DataFrame({"p": t["prompt_id"], "m": t["model_b"], "l": np.log(t["ppl_b"])}),
    ]).drop_duplicates()  # fmt: skip
    by_model = tables["log-perplexity-by-model-fam"].frame.set_index("model")
    means = responses.groupby("m")["l"].mean()
    assert np.allclose(by_model["mean"], means.reindex(by_model.index))
    part = tables["mediation-fam"].frame.set_index("part")
    whole = part["calibrated self-preference"].iloc[0]
    indirect, direct = part.loc["familiarity_indirect", "estimate"], part.loc[
        "familiarity_direct", "estimate"]  # fmt: skip
    assert indirect + direct == pytest.approx(whole)
    assert part.loc["familiarity_share", "estimate"] == pytest.approx(indirect / whole)
    assert "a ratio" in tables["mediation-fam"].columns["estimate"]


def test_the_perplexity_curves_open_bins_read_empty_in_csv_and_json(
    author_audit: AuthorAudit, tmp_path: Path
) -> None:
    """The perplexity curves' open bins (d below the first edge, from the last edge up)
    read -inf / inf in the CSV and null in report.json: two values for one edge. Both
    now write them empty (null), as the columns' words say; the other bins' edges are
    the numbers perplexity_bins gives."""
    import json

    import numpy as np
    import pandas as pd

    from recuse.report.export import to_dict, write_tables

    _, report = author_audit
    tables = to_dict(report)["tables"]
    for name in ("perplexity-curve-fam", "perplexity-curve-by-self-fam"):
        words = tables[name]["columns"]
        assert words["bin_low"].endswith("empty (null in JSON) for the first bin: no lower "
                                         "edge, the first bin is open — every pair below "
                                         "bin_high")  # fmt: skip
        assert words["bin_high"].endswith("empty (null in JSON) for the last bin: no upper "
                                          "edge, the last bin is open — every pair from "
                                          "bin_low up")  # fmt: skip
        rows = tables[name]["rows"]
        assert any(r["bin_low"] is None for r in rows) and any(r["bin_high"] is None for r in rows)
        json.dumps(rows, allow_nan=False)  # no infinity left to write
    written = {p.stem: p for p in write_tables(report, tmp_path)}
    for name in ("perplexity-curve-fam", "perplexity-curve-by-self-fam"):
        text = written[name].read_text()
        assert "inf" not in text
        csv = pd.read_csv(written[name])
        low, high = csv["bin_low"].to_numpy(float), csv["bin_high"].to_numpy(float)
        assert np.isnan(low).any() and np.isnan(high).any()
        # an empty low edge is the first bin's: its high edge is the least of them all
        assert (high[np.isnan(low)] == np.nanmin(high)).all()
        assert (low[np.isnan(high)] == np.nanmax(low)).all()
