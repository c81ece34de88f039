"""Self-preference: the headline is the calibrated estimate where the data allow it,
EO (Def. 4.1) and DP stay as the papers' definitions; on a simulated file of three
author-judges without a self term nothing is flagged, a planted one is."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analyses.conftest import BOOT, Planted
from recuse.analyses.self_preference import (
    ANALYSIS,
    CALIBRATED,
    DP,
    EO,
    spelling_hint_words,
)
from recuse.data.inputs import Input
from recuse.driver import AuditOptions, run_audit
from recuse.metrics.competence import calibrated_self_preference
from recuse.metrics.self_preference import self_preference
from recuse.report import AuditReport, Source
from recuse.roster import Entry, Roster
from recuse.simulate.self_preference import AuthorJudge, simulate_self_preference


def test_findings_are_the_estimators_named_by_their_units(planted: Planted) -> None:
    found = {(f.judge, f.bias.key): f for f in planted.report.findings}
    eo = found[("gpt-4", EO.key)]
    ref = self_preference(planted.pairs, judge="gpt-4", kind="eo", **BOOT)  # type: ignore[arg-type]
    assert eo.estimate == pytest.approx(ref.estimate)
    c = ref.components
    own, other = c["recall_human_prefers_s"], c["recall_human_prefers_other"]
    assert eo.estimate == pytest.approx(own - other)  # "recall ... own, minus ... other"
    # gpt-4 has a calibrated estimate: that is its headline, EO stays in the section,
    # unflagged although its interval excludes 0 (not adjusted for competence)
    assert eo.section == ANALYSIS.id and not eo.headline and not eo.significant
    assert eo.ci_low > 0 and eo.materiality == ""
    cal = found[("gpt-4", CALIBRATED.key)]
    ref_cal = calibrated_self_preference(planted.pairs, judge="gpt-4", families=planted.roster,
                                         **BOOT)  # type: ignore[arg-type]  # fmt: skip
    assert cal.estimate == pytest.approx(ref_cal.estimate) and cal.headline and cal.significant
    c = ref_cal.components
    assert cal.estimate == pytest.approx(c["own_pick_rate"] - c["predicted_own_pick_rate"])
    assert cal.detail.startswith("picks its own")
    dp = found[("gpt-4", DP.key)]
    ref_dp = self_preference(planted.pairs, judge="gpt-4", kind="dp", **BOOT)  # type: ignore[arg-type]
    assert dp.estimate == pytest.approx(ref_dp.estimate) and not dp.headline
    c = ref_dp.components
    assert dp.estimate == pytest.approx(c["judge_prefers_s"] - c["human_prefers_s"])
    assert dp.detail == f"judge {c['judge_prefers_s']:.2f} vs humans {c['human_prefers_s']:.2f}"
    assert "P(judge picks its own answer) − P(human prefers it)" in dp.bias.unit


def test_needs_judge_verdicts(planted: Planted) -> None:
    human_only = planted.pairs.assign(judge=None)
    assert "no judge verdicts" in (ANALYSIS.needs(human_only, Roster.builtin()) or "")
    assert ANALYSIS.needs(planted.pairs, Roster.builtin()) is None


def _three_authors(tau: float) -> AuditReport:
    """Three judges that are also authors (m0 strong: the reference prefers its answer
    84% of the time), none with a self term unless ``tau`` is planted in m0."""
    strengths = {"m0": 1.2, "m1": 0.4, "m2": 0.0, "m3": -0.5, "m4": -1.0}
    cast = {
        "m0": AuthorJudge(3.0, 0.5, tau),
        "m1": AuthorJudge(1.0, 0.5),
        "m2": AuthorJudge(0.5, -0.3),
    }
    sim = simulate_self_preference(cast, strengths, n_prompts=200, seed=11)
    assert sim.reference_own_rate("m0") == pytest.approx(0.84, abs=0.005)
    roster = Roster.builtin()
    for m in strengths:
        roster.add(Entry(m, m))
    source = Source("sim", "pairs", len(sim.pairs), judges=tuple(cast))
    options = AuditOptions(n_boot=400, robustness=(), only=(ANALYSIS.id,))
    return run_audit([Input("sim", "pairs", sim.pairs, source)], options=options,
                     roster=roster)  # fmt: skip


def test_three_authors_without_a_self_term_are_not_flagged() -> None:
    report = _three_authors(0.0)
    by = {(f.judge, f.bias.key): f for f in report.findings}
    # EO (the paper's definition) still reads the strong author m0 high, its interval
    # above 0, but it is labelled unadjusted and not flagged ...
    eo = by[("m0", EO.key)]
    assert eo.ci_low > 0 and eo.estimate > 0.1 and not eo.significant
    # ... but the summary leads with the calibrated estimate, and flags no one
    for row in report.summary():
        assert [f.bias.key for f in row.findings] == [CALIBRATED.key]
        assert not row.flagged
    for j in ("m0", "m1", "m2"):
        assert abs(by[(j, CALIBRATED.key)].estimate) < 0.03
    (section,) = [s for s in report.sections if s.id == ANALYSIS.id]
    assert "calibrated" in section.figures[0].id  # the section leads with it too


def test_three_authors_with_a_planted_self_term_flag_it() -> None:
    report = _three_authors(0.3)
    flagged = {(r.judge, f.bias.key) for r in report.summary() for f in r.flagged}
    assert flagged == {("m0", CALIBRATED.key)}


def test_one_judge_without_other_models_keeps_eo_as_headline() -> None:
    strengths = {"m0": 1.0, "m1": 0.0}
    sim = simulate_self_preference({"m0": AuthorJudge(2.0, 0.0, 0.3)}, strengths, n_prompts=60)
    roster = Roster.builtin()
    for m in strengths:
        roster.add(Entry(m, m))
    source = Source("two", "pairs", len(sim.pairs), judges=("m0",))
    options = AuditOptions(n_boot=200, robustness=(), only=(ANALYSIS.id,))
    report = run_audit([Input("two", "pairs", sim.pairs, source)], options=options,
                       roster=roster)  # fmt: skip
    (row,) = report.summary()
    assert [f.bias.key for f in row.findings] == [EO.key]
    assert not any(k.bias is not None and k.bias.key == CALIBRATED.key for k in report.skipped)
    notes = [n for s in report.sections for n in s.notes]
    assert any("m0: no calibrated estimate" in n and "pairs without its own answer" in n
               for n in notes)  # fmt: skip


def test_findings_recover_planted_self_preference() -> None:
    """Planted truth (simulate_pairs): the judge agrees with the human 0.7 of the time,
    ± self_preference/2 when its own answer faces another model's and the human prefers
    its own / the other. Hence EO = self_preference, DP = self_preference/2, and the
    calibrated estimate self_preference/2 too (the labels do not depend on the models,
    so every strength is 0: the module docstring of recuse.simulate.pairs). gpt-4 is
    planted at +0.3, claude-v1 at −0.2. Over two seeds (1,800 pairs each) the mean
    finding is within 0.06 of EO's truth and 0.035 of DP's and the calibrated one
    (about 3 standard errors of the mean); a sign error, or DP's number given as EO's,
    would miss by 0.1 or more."""
    from analyses.conftest import audit_only
    from recuse.simulate import PlantedBias, simulate_pairs

    plants = {"gpt-4": PlantedBias(self_preference=0.3),
              "claude-v1": PlantedBias(self_preference=-0.2)}  # fmt: skip
    truth = {EO.key: "self_preference_eo", DP.key: "self_preference_dp",
             CALIBRATED.key: "self_preference_calibrated"}  # fmt: skip
    tolerance = {EO.key: 0.06, DP.key: 0.035, CALIBRATED.key: 0.035}
    got: dict[tuple[str, str], list[float]] = {}
    for seed in range(2):
        sim = simulate_pairs(judges=plants, models=("gpt-4", "gpt-3.5-turbo", "claude-v1",
                             "claude-2"), n_prompts=600, seed=seed)  # fmt: skip
        report = audit_only(ANALYSIS.id, sim.pairs, Roster.builtin())
        for f in report.findings:
            got.setdefault((f.judge, f.bias.key), []).append(f.estimate)
    assert set(got) == {(j, k) for j in plants for k in truth}
    for (judge, key), estimates in got.items():
        value = sim.true_value(truth[key], judge)
        assert sum(estimates) / 2 == pytest.approx(value, abs=tolerance[key]), (judge, key)


@pytest.mark.parametrize(
    ("judge", "own", "hint"),
    [
        ("smollm2-135m-instruct", "SmolLM2-135M", True),  # the user's shorter spelling
        ("my-judge", "my_judge", True),  # a new judge, its answers spelt otherwise
        ("my-judge", "SmolLM2-135M", False),  # nothing alike
        ("gpt-4", "gpt-4o", False),  # both in the roster: two models, as it says
        ("openai/gpt-4", "gpt-4", True),  # a provider's prefix on the judge's name
        ("gpt-4", "openai/gpt-4", True),  # ... or on its answers'
        ("openai/gpt-4", "gpt-4o", False),  # behind the prefix another model
        # another number is another model, whether the shorter name ends inside the
        # longer's number or the letters alone are alike (both unknown to the roster)
        ("qwen2-7b", "qwen2-72b", False),
        ("model-1", "model-10", False),
        ("my-judge-v1", "my-judge-v2", False),
        ("my-judge-v2", "my-judge-v2-final", True),  # the same number, a longer name
    ],
)
def test_a_generator_spelt_like_the_judge_is_named_with_the_fix(
    judge: str, own: str, hint: bool
) -> None:
    """A judge run as `smollm2-135m-instruct` over answers its user recorded as
    `SmolLM2-135M` had no self-preference, and the reason only listed the generators:
    where one of the two names is unknown to the roster and they are spelt alike, the
    reason names the generator and how to give both one name."""
    strengths = {"m0": 1.0, "m1": 0.0, "m2": -0.5}
    sim = simulate_self_preference({"m0": AuthorJudge(2.0, 0.0)}, strengths, n_prompts=40)
    names = {"m0": own, "m1": "claude-v1", "m2": "vicuna-13b"}
    pairs = sim.pairs.assign(
        judge=judge,
        model_a=sim.pairs["model_a"].map(names),
        model_b=sim.pairs["model_b"].map(names),
    )
    roster = Roster.builtin()
    roster.keep([n for n in (judge, own) if n not in roster], where="test")
    source = Source("mine", "pairs", len(pairs), judges=(judge,))
    options = AuditOptions(n_boot=100, robustness=(), only=(ANALYSIS.id,))
    report = run_audit([Input("mine", "pairs", pairs, source)], options=options,
                       roster=roster)  # fmt: skip
    (why,) = [k for k in report.skipped if k.judge == judge and k.headline]
    assert "own answer" in why.reason
    said = f"if {own!r} is this judge's model under another name, write one name for both"
    assert (said in why.reason) is hint


@pytest.mark.parametrize(
    ("judge", "own", "hint"),
    [
        ("gpt-4", "gpt-4-0613", True),  # the undated name over a snapshot's answers
        ("gpt-4-0613", "gpt-4-0314", True),  # another snapshot of its line
        ("gpt-4", "gpt-4o", False),  # another line: another model, said as it is
    ],
)
def test_a_judge_over_answers_of_its_line_is_told_of_self_scope_line(
    judge: str, own: str, hint: bool
) -> None:
    """Judged as `gpt-4` (the API's name, which served gpt-4-0613) over answers recorded
    as `gpt-4-0613`, the judge's self-preference read 'not estimated — no pairs holding
    the judge's own answer', with nothing saying its line's answers are read as its
    family and --self-scope line would count them. The reason now names them and it."""
    strengths = {"m0": 1.0, "m1": 0.0, "m2": -0.5}
    sim = simulate_self_preference({"m0": AuthorJudge(2.0, 0.0)}, strengths, n_prompts=40)
    names = {"m0": own, "m1": "claude-v1", "m2": "vicuna-13b"}
    pairs = sim.pairs.assign(
        judge=judge,
        model_a=sim.pairs["model_a"].map(names),
        model_b=sim.pairs["model_b"].map(names),
    )
    source = Source("mine", "pairs", len(pairs), judges=(judge,))
    options = AuditOptions(n_boot=100, robustness=(), only=(ANALYSIS.id,))
    report = run_audit([Input("mine", "pairs", pairs, source)], options=options,
                       roster=Roster.builtin())  # fmt: skip
    (why,) = [k for k in report.skipped if k.judge == judge and k.headline]
    assert "own answer" in why.reason
    said = f"{own!r} of its model line wrote answers here, read as its family"
    assert (said in why.reason) is hint
    assert ('self_scope="line" counts them as its own' in why.reason) is hint
    # a snapshot judge is not another snapshot: no 'if the judge is one of them'
    assert ("if the judge is one of them" in why.reason) is (hint and judge == "gpt-4")
    if hint:  # with --self-scope line they are its own, and it is estimated
        wide = AuditOptions(n_boot=100, robustness=(), only=(ANALYSIS.id,), self_scope="line")
        report = run_audit([Input("mine", "pairs", pairs, source)], options=wide,
                           roster=Roster.builtin())  # fmt: skip
        assert [f for f in report.findings if f.judge == judge and f.bias.key == CALIBRATED.key]


def test_a_judge_whose_pairs_have_no_known_generator_is_told_so() -> None:
    """Falcon on LLMBar judged only sets that record no generator: its self-preference
    read "not estimated — no pairs where the human prefers the judge's own response",
    as if its answers had all lost. A second judge (m9) here judges the same pairs with
    model_a / model_b blanked: its reason names the missing generators and its count."""
    strengths = {"m0": 1.0, "m1": 0.0, "m2": -0.5}
    sim = simulate_self_preference({"m0": AuthorJudge(2.0, 0.0)}, strengths, n_prompts=60)
    blind = sim.pairs.assign(judge="m9", model_a=None, model_b=None)
    pairs = pd.concat([sim.pairs, blind], ignore_index=True)
    roster = Roster.builtin()
    for m in [*strengths, "m9"]:
        roster.add(Entry(m, m))
    source = Source("blind", "pairs", len(pairs), judges=("m0", "m9"))
    options = AuditOptions(n_boot=200, robustness=(), only=(ANALYSIS.id,))
    report = run_audit([Input("blind", "pairs", pairs, source)], options=options,
                       roster=roster)  # fmt: skip
    (why,) = [k for k in report.skipped if k.judge == "m9" and k.headline]
    assert why.reason == (
        f"the generators of the answers are unknown in all {len(blind):,} of its pairs "
        "(model_a / model_b missing), so none can be told to be its own or its family's"
    )
    # a judge with known generators keeps its estimate
    assert any(f.judge == "m0" and f.bias.key == CALIBRATED.key for f in report.findings)


def test_a_judge_whose_pairs_never_hold_its_own_answer_is_told_so(shared_data: Path) -> None:
    """JudgeBench's pairs are two answers of one model (GPT-4o's or Claude-3.5-Sonnet's),
    none by a judge: the summary read 'no pairs where the correctness label favours the
    judge's own response', as if its answers had all lost. It says no pair holds its own
    (or its family's) answer beside another model's, and whose answers it judged."""
    from dataclasses import replace

    from recuse.data.inputs import load_input

    jb = load_input("judgebench", data_dir=shared_data)
    judge = "claude-3-haiku-20240307"
    rows = jb.frame[jb.frame["judge"] == judge]
    # the data by hand: every pair is one model against itself, never the judge
    assert (rows["model_a"] == rows["model_b"]).all() and judge not in set(rows["model_a"])
    (model,) = set(rows["model_a"])
    report = run_audit(
        [replace(jb, frame=rows)],
        options=AuditOptions(n_boot=100, only=("self-preference", "family-preference")),
    )
    said = {k.bias.key: k.reason for k in report.skipped if k.headline and k.bias is not None}
    assert said["self_preference_calibrated"] == (
        f"none of its {len(rows)} pairs holds its own answer beside another model's "
        f"(the answers are by {model})"
    )
    assert said["family_preference_calibrated"] == (
        f"none of its {len(rows)} pairs holds an answer of its family (not its own) beside "
        f"one from outside the family (the answers are by {model})"
    )


def test_the_section_table_says_what_the_calibrated_n_counts(planted: Planted) -> None:
    """The self-preference table (tables/*.csv) gave the calibrated estimate's n, its own
    pairs, beside n_clusters, the prompts of all its pairs, with nothing saying why the
    prompts can outnumber the pairs: ``n_of`` names it (EO's n counts all its rows:
    empty), equal to the own pairs counted by hand; a section whose every n counts all
    its rows (position) has no such column."""
    tables = {t.name: t.frame for s in planted.report.sections for t in s.tables}
    table = next(f for name, f in tables.items() if name.startswith("self-preference"))
    rows = table.set_index(["judge", "metric"])
    cal = rows.loc[("gpt-4", "self_preference_calibrated")]
    assert cal["n_of"] == "pairs holding the judge's own answer"
    own = planted.pairs[(planted.pairs["judge"] == "gpt-4")
                        & ((planted.pairs["model_a"] == "gpt-4")
                           | (planted.pairs["model_b"] == "gpt-4"))]  # fmt: skip
    assert cal["n"] == len(own) and cal["n_clusters"] > own["prompt_id"].nunique()
    assert pd.isna(rows.loc[("gpt-4", "self_preference_eo"), "n_of"])
    position = next(f for name, f in tables.items() if name.startswith("position"))
    assert "n_of" not in position.columns


def test_the_dp_words_say_it_is_not_the_papers_eq_4(shared_data: Path) -> None:
    """Wataoka's Eq. 4 is P(Y'=1|S=1) − P(Y'=1|S=0): for a judge with one own answer per
    pair on a side at random, 2 · P(it picks its own) − 1, no human term. recuse's DP
    subtracts the humans' rate instead, and its words called it 'the paper's Eq. 4 as a
    difference': on llmbar-mtbench GPT-4's DP reads +0.02 where the paper's Eq. 4 of the
    same picks is +0.73 (its own-pick rate 0.86), a reader of the paper's Table 2 would
    compare the two. Counted by hand from the table; the words say which is which."""
    from recuse.data import load

    pairs = load("llmbar-mtbench", data_dir=shared_data)
    mine = pairs[pairs["judge"] == "gpt-4"]
    own = mine[(mine["model_a"] == "gpt-4") ^ (mine["model_b"] == "gpt-4")]
    own = own[own["p_a"].notna() & own["human"].notna()]
    picks = np.where(own["model_a"] == "gpt-4", own["p_a"], 1 - own["p_a"])
    humans = np.where(own["model_a"] == "gpt-4", own["human"], 1 - own["human"])
    result = self_preference(pairs, judge="gpt-4", kind="dp")
    assert result.estimate == pytest.approx(picks.mean() - humans.mean())
    assert result.components["judge_prefers_s"] == pytest.approx(picks.mean())
    eq4 = 2 * picks.mean() - 1
    assert eq4 == pytest.approx(0.7255, abs=1e-4) and abs(result.estimate) < 0.05
    assert "not the paper's Eq. 4 itself" in DP.unit
    assert "2 · P(judge picks its own answer) − 1" in DP.unit
    assert "judge_prefers_s" in DP.unit


def test_the_examples_table_says_what_each_column_is(planted: Planted) -> None:
    """Each row of the examples table, worked out from the planted pairs: the judge's
    share of the win to its own answer (its orders' p averaged) is over 0.5, the human's
    under 0.5, and the rows are each judge's first such pairs in the input's order. The
    table had no column words: its "judge P(own better)" read as a probability the judge
    stated."""
    (table,) = [t for s in planted.report.sections for t in s.tables
                if t.name == "examples-sim-pairs"]  # fmt: skip
    f = table.frame
    assert len(f) and set(table.columns) == set(f.columns)
    assert "orders it judged averaged" in table.columns["judge P(own better)"]
    assert "first in the input's order" in table.columns["judge"]
    p = planted.pairs
    for judge, rows in f.groupby("judge", sort=False):
        mine = p[(p["judge"] == judge) & ((p["model_a"] == judge) ^ (p["model_b"] == judge))]
        own_a = (mine["model_a"] == judge).to_numpy()
        judged = mine[["p_a_first", "p_a_second"]].astype(float).mean(axis=1).to_numpy()
        share = np.where(own_a, judged, 1 - judged)
        human = np.where(own_a, mine["human"], 1 - mine["human"].astype(float))
        hits = mine.assign(share=share)[(share > 0.5) & (human < 0.5)].head(3)
        assert rows["item_id"].tolist() == hits["item_id"].tolist()
        assert rows["judge P(own better)"].tolist() == pytest.approx(hits["share"].tolist())


@pytest.mark.parametrize("ties", ["drop", "split"])
def test_the_confusion_matrix_reads_the_pairs_as_eo_does(
    shared_data: Path, ties: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """LLMBar's MT-Bench set with a quarter of its prompts' labels made ties: under
    --human-ties split the figure's caption read gpt-3.5-turbo's recall other 0.50 (its
    ties left out, its picks thresholded) beside EO's own term 0.44 and an estimate of
    their difference; its recalls are now EO's, worked out here by hand from the table:
    v the judge's share of the win for its own answer (its two orders averaged), h the
    humans' (a tie ½); recall own Σh·v/Σh, recall other Σ(1−h)(1−v)/Σ(1−h), ties left
    out under drop."""
    import html
    import json
    import re

    from recuse.cli import main
    from recuse.data.inputs import load_input

    frame = load_input("llmbar-mtbench", table="pairs", data_dir=shared_data).frame
    tied = sorted(frame["prompt_id"].unique())[::4]
    frame.loc[frame["prompt_id"].isin(tied), "human"] = 0.5
    path = tmp_path / "tied.csv"
    frame.to_csv(path, index=False)
    args = ["--only", "self-preference", "--n-boot", "100", "--human-ties", ties]
    assert main(["audit", str(path), *args, "-o", str(tmp_path / "r")]) == 0
    page = html.unescape((tmp_path / "r" / "report.html").read_text())
    figure = r'<figure id="cm-tied-csv-gpt-3-5-turbo">.*?<figcaption>(.*?)</figcaption>'
    (caption,) = re.findall(figure, page, re.S)
    rows = frame[(frame["judge"] == "gpt-3.5-turbo") & frame["human"].notna()]
    own_a = (rows["model_a"] == "gpt-3.5-turbo").to_numpy()
    own_b = (rows["model_b"] == "gpt-3.5-turbo").to_numpy()
    p_a = rows[["p_a_first", "p_a_second"]].mean(axis=1).to_numpy()
    keep = own_a ^ own_b
    v = np.where(own_a, p_a, 1 - p_a)[keep]
    h = np.where(own_a, rows["human"], 1 - rows["human"])[keep]
    if ties == "drop":
        v, h = v[h != 0.5], h[h != 0.5]
    recall_own = float((h * v).sum() / h.sum())
    recall_other = float(((1 - h) * (1 - v)).sum() / (1 - h).sum())
    said = f"Recall own {recall_own:.2f}, other {recall_other:.2f} (equal opportunity"
    assert said in caption
    assert said == ("Recall own 0.68, other 0.50 (equal opportunity" if ties == "drop"
                    else "Recall own 0.68, other 0.44 (equal opportunity")  # fmt: skip
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    (eo,) = [f for s in report["sections"] for f in s["findings"]
             if f["judge"] == "gpt-3.5-turbo" and f["bias"] == EO.key]  # fmt: skip
    assert eo["estimate"] == pytest.approx(recall_own - recall_other, abs=1e-12)
    left = int(keep.sum()) - len(h)
    assert f"; {left} pairs without a usable label or verdict" in caption
    assert left == (17 if ties == "drop" else 0)


def test_several_generators_spelt_like_the_judge_are_all_counted() -> None:
    """A judge `model` over 200 generators `model-0` … `model-199` (all unknown to the
    roster, each beginning with the judge's letters) was told "if 'model-0' is this
    judge's model under another name", one of 200 picked by sorting: the hint now says
    one of them, names the first three and counts the rest (200 - 3 = 197)."""
    models = [f"model-{i}" for i in range(200)]
    roster = Roster.builtin()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        roster.keep(["model", *models, "model-7-final"])
    words = spelling_hint_words("model", set(models), roster)
    assert words.startswith(
        "; if one of 'model-0', 'model-1', 'model-10' (and 197 more) is this judge's model"
    )
    # one alike keeps the plain words
    assert spelling_hint_words("model-7", {"model-7-final", "other"}, roster).startswith(
        "; if 'model-7-final' is this judge's model under another name"
    )
