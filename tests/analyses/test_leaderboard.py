"""Bias-adjusted leaderboard: findings are the fit's coefficients, words tied to them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from analyses.conftest import OPTIONS, Planted, red_pixels
from recuse.analyses.leaderboard import ANALYSIS, COVARIATE_BIASES
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.bradley_terry import COVARIATES, leaderboard


def test_findings_are_the_adjusted_fit_coefficients(planted: Planted) -> None:
    found = {
        f.bias.key: f
        for f in planted.report.findings
        if f.section == ANALYSIS.id and f.dataset == "sim-pairs"
    }
    ids = {*planted.pairs["model_a"], *planted.pairs["model_b"], *planted.pairs["judge"].dropna()}
    families = {m: planted.roster.family(m) for m in ids}
    lb = leaderboard(planted.pairs, families=families, boot=OPTIONS.resampling)
    adj = lb.adjusted
    assert set(found) == {COVARIATE_BIASES[c].key for c in adj.covariates}
    for name, est, lo, hi in zip(
        adj.covariates, adj.coefficients, adj.coefficients_low, adj.coefficients_high, strict=True
    ):
        f = found[COVARIATE_BIASES[name].key]
        assert (f.estimate, f.ci_low, f.ci_high) == pytest.approx((est, lo, hi))
        assert COVARIATES[name] in f.bias.unit  # the words come with the estimator
        assert f.n == adj.n_pairs  # the judged pairs the fit is made from
        assert not f.headline and f.null == 0
    # planted: gpt-4 prefers its own answers (self_preference 0.3), claude-v1 does not;
    # pooled over the two judges the own-answer effect is positive
    assert found["bt_own"].estimate > 0
    # no markdown in the simulated texts: those covariates are skipped with the reason
    skipped = {k.bias.key: k.reason for k in planted.report.skipped if k.bias}
    assert "no variation" in skipped["bt_headers"]


def test_section_has_the_leaderboard_tables(planted: Planted) -> None:
    section = next(s for s in planted.report.sections if s.id == ANALYSIS.id)
    names = [t.name for t in section.tables]
    assert "leaderboard-sim-pairs" in names and "leaderboard-covariates-sim-pairs" in names
    board = next(t for t in section.tables if t.name == "leaderboard-sim-pairs").frame
    assert sorted(board["adjusted rank"]) == list(range(1, len(board) + 1))
    assert any("Kendall" in n and "sim-pairs" in n for n in section.notes)
    assert any("judged pairs fitted" in n for n in section.notes if "sim-pairs" in n)
    # a strength off 0 is a model better or worse than the mean, no bias: the figure drew
    # such strengths red, the colour of a bias's interval off no bias
    (fig,) = [g for g in section.figures if g.id == "leaderboard-sim-pairs"]
    assert not (board["raw strength_low"] <= 0).all()  # some interval excludes 0
    assert red_pixels(fig) == 0 and "not a bias" in fig.caption


def test_the_leaderboards_columns_say_whose_strength_at_what_level(planted: Planted) -> None:
    """Its CSV's ``raw strength_low`` and ``human rank_high`` said neither their level nor
    whose verdicts a strength is fitted to: gpt-4's human strength 1.63 beside its raw
    1.18 on llmbar-mtbench read as one scale. Every column now has its words (the
    table's ``columns``), and they say what the numbers are: the strengths centred, by
    hand, and the rank interval the bounds of the resamples' ranks."""
    section = next(s for s in planted.report.sections if s.id == ANALYSIS.id)
    table = next(t for t in section.tables if t.name == "leaderboard-sim-pairs")
    board, said = table.frame, table.columns
    assert set(said) == set(board.columns)
    for fit in ("raw", "adjusted"):
        assert board[f"{fit} strength"].mean() == pytest.approx(0, abs=1e-9)
        assert "centred (mean 0 over the systems)" in said[f"{fit} strength"]
        assert (board[f"{fit} rank_low"] <= board[f"{fit} rank_high"]).all()
    assert "90% percentile interval" in said["raw strength_low"]
    assert "human labels" in said.get("human strength", "human labels")
    assert "the judges' verdicts as they are" in said["raw strength"]


def test_covariate_findings_recover_planted_bradley_terry_effects() -> None:
    """Planted truth (simulate_bt, no prompt effect): every judge picks a with probability
    σ(s_a − s_b + 0.6·tanh(Δlen/sd) ± 0.3 (a shown first / second) + 0.5·(own_a − own_b)),
    exactly the adjusted model's form. On 5,400 judged pairs the length, first-position
    and own-answer findings are within 0.09, 0.045 and 0.1 of 0.6, 0.3 and 0.5 (about 3
    standard errors; over 40 seeds of 2,700 pairs the means were 0.603, 0.295, 0.509); a sign
    error, or the first and own terms swapped, would miss by 0.2 or more."""
    from analyses.conftest import audit_only
    from recuse.roster import Entry, Roster
    from recuse.simulate.bradley_terry import simulate_bt

    tolerance = {"length": 0.09, "first": 0.045, "own": 0.1}
    pairs, truth = simulate_bt(n_prompts=600, prompt_sd=0.0, seed=0)
    roster = Roster.builtin()
    for m in truth.strengths:
        roster.add(Entry(m, m))  # each its own family: no family term
    report = audit_only(ANALYSIS.id, pairs, roster)
    by_key = {f.bias.key: f for f in report.findings if f.section == ANALYSIS.id}
    planted = {"length": truth.length, "first": truth.first, "own": truth.own}
    assert planted == {"length": 0.6, "first": 0.3, "own": 0.5}
    for c, value in planted.items():
        f = by_key[COVARIATE_BIASES[c].key]
        assert f.estimate == pytest.approx(value, abs=tolerance[c]), (c, f.estimate)


def test_alpaca_eval_fits_the_length_controlled_rate_once_per_judge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The AlpacaEval headline and the section's length-controlled table come from one
    fit of the judge's rows (it was fitted twice), and show the same numbers."""
    from pathlib import Path

    import recuse.analyses.leaderboard as lb_module
    from recuse.driver import AuditOptions, audit

    calls: list[str] = []
    fit = lb_module.length_controlled_win_rates

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(str(kwargs["judge"]))
        return fit(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(lb_module, "length_controlled_win_rates", counted)
    path = (
        Path(__file__).parents[1]
        / "data/importers/upstream/alpaca_eval/results/claude/weighted_alpaca_eval_gpt4_turbo"
        / "annotations.json"
    )
    report = audit([path], options=AuditOptions(n_boot=100, only=("leaderboard",)))
    assert len(calls) == 1
    tables = {t.name.split("--")[0]: t.frame for s in report.sections for t in s.tables}
    lc = [f for name, f in tables.items() if name.startswith("lc-win-rate")]
    board = [f for name, f in tables.items() if name.startswith("alpaca-eval-leaderboard")]
    assert len(lc) == len(board) == 1
    assert lc[0]["lc_win_rate"].tolist() == board[0]["lc_win_rate"].tolist()


def test_alpaca_eval_headline_names_the_joint_fit_and_the_glm() -> None:
    """Several systems against one baseline, length tracking difficulty: the headline's
    length-controlled rate is the joint fit, with AlpacaEval's per-system GLM beside it,
    the numbers of the section's table, and the caveat says how far apart they are."""
    from recuse.analyses.base import AuditOptions
    from recuse.data.inputs import Input, Source
    from recuse.driver import run_audit
    from recuse.metrics.length_controlled import GLM_CONFOUNDED, length_controlled_win_rates
    from recuse.roster import Roster
    from recuse.simulate.length_controlled import JUDGE, simulate_length_controlled

    sim = simulate_length_controlled(rho=0.6, systems=3, n_instructions=300, seed=4,
                                     longer=1.0, length_effect=1.0)  # fmt: skip
    frame = sim.pairs.assign(
        source="alpaca-eval", human=np.nan, item_id=sim.pairs["prompt_id"] + sim.pairs["model_b"],
        p_a_first=sim.pairs["p_a"], p_a_second=np.nan,
    )  # fmt: skip
    inp = Input("sim-ae", "pairs", frame, Source("sim-ae", "pairs", len(frame), judges=(JUDGE,)))
    options = AuditOptions(level=0.9, n_boot=100, only=("leaderboard",))
    report = run_audit([inp], options=options, roster=Roster.builtin())
    want = length_controlled_win_rates(frame, judge=JUDGE, boot=Resampling(n_boot=100))
    heads = [h for h in report.headlines if "AlpacaEval, annotator" in h]
    marked = [r for r in want.itertuples() if r.caveat]
    assert marked  # length planted to track difficulty: the case under test
    # a line per system, why the two rates differ once, and the caveats' shared part once
    assert len(heads) == 3 + 2
    for r in want.itertuples():
        (line,) = [h for h in heads if f": {r.system} against" in h]
        lc = (r.lc_win_rate, r.lc_win_rate_low, r.lc_win_rate_high)
        assert "length-controlled {:.2f}% [{:.2f}%, {:.2f}%]".format(*lc) in line
        win = (r.win_rate, r.win_rate_low, r.win_rate_high)
        assert "win rate {:.2f}% [{:.2f}%, {:.2f}%]".format(*win) in line
        assert f"(joint fit; AlpacaEval's per-system GLM {r.lc_win_rate_glm:.2f}%)" in line
        if r.caveat:  # its own part of the table's caveat, marked for the shared part
            assert f"Caveat †: {r.caveat.split('; ')[0]}." in line
            assert GLM_CONFOUNDED not in line
    (shared,) = [h for h in heads if ": † for " in h]
    assert f"† for {len(marked)} of 3 systems" in shared
    assert f"{GLM_CONFOUNDED}." in shared
    assert all(GLM_CONFOUNDED in r.caveat for r in marked)  # the table's rows keep it whole
    # the two rates of a row beside each other differ (claude-2: 70.02% and 78.09% on
    # AlpacaEval, no caveat): the largest gap and its system, by hand, with why
    gaps = (want["lc_win_rate"] - want["lc_win_rate_glm"]).abs()
    far = want.loc[gaps.idxmax()]
    (why,) = [h for h in heads if "differ by up to" in h]
    assert (
        f"the joint fit and AlpacaEval's per-system GLM differ by up to {gaps.max():.2f} points "
        f"({far['system']}: {far['lc_win_rate']:.2f}% and {far['lc_win_rate_glm']:.2f}%)"
    ) in why
    assert "credits to length what moves with that difficulty" in why


def test_alpaca_eval_headline_names_the_glm_where_it_is_the_rate() -> None:
    """Systems sharing fewer than MIN_SHARED instructions: the headline's rate is the
    GLM's, and the line says so and why (it said nothing, while the joint fit's line
    names the joint fit), with the numbers of length_controlled_win_rates."""
    from recuse.analyses.base import AuditOptions
    from recuse.data.inputs import Input, Source
    from recuse.driver import run_audit
    from recuse.metrics.length_controlled import GLM, length_controlled_win_rates
    from recuse.roster import Roster
    from recuse.simulate.length_controlled import JUDGE, simulate_length_controlled

    sim = simulate_length_controlled(rho=0.0, systems=2, n_instructions=120, seed=4)
    pairs = sim.pairs.assign(  # the second system answers other instructions
        prompt_id=np.where(sim.pairs["model_b"] == sim.pairs["model_b"].iloc[0],
                           sim.pairs["prompt_id"], "other-" + sim.pairs["prompt_id"])
    )  # fmt: skip
    frame = pairs.assign(
        source="alpaca-eval", human=np.nan, item_id=pairs["prompt_id"] + pairs["model_b"],
        p_a_first=pairs["p_a"], p_a_second=np.nan,
    )  # fmt: skip
    inp = Input("sim-ae", "pairs", frame, Source("sim-ae", "pairs", len(frame), judges=(JUDGE,)))
    options = AuditOptions(level=0.9, n_boot=100, only=("leaderboard",))
    report = run_audit([inp], options=options, roster=Roster.builtin())
    want = length_controlled_win_rates(frame, judge=JUDGE, boot=Resampling(n_boot=100))
    assert (want["lc_method"] == GLM).all()
    heads = [h for h in report.headlines if "AlpacaEval, annotator" in h]
    assert len(heads) == 2
    for r in want.itertuples():
        (line,) = [h for h in heads if f": {r.system} against" in h]
        lc = (r.lc_win_rate, r.lc_win_rate_low, r.lc_win_rate_high)
        assert "length-controlled {:.2f}% [{:.2f}%, {:.2f}%]".format(*lc) in line
        win = (r.win_rate, r.win_rate_low, r.win_rate_high)
        assert "win rate {:.2f}% [{:.2f}%, {:.2f}%]".format(*win) in line
        # no other system answered its instructions: the GLM has no difficulty term,
        # and the line says so (a file read alone gave claude-2.1 32.41%, beside the
        # other systems' files 22.41%, with no word why)
        assert not r.glm_difficulty and r.difficulty_coefficient == 0.0
        assert (
            "(AlpacaEval's per-system GLM, without an instruction-difficulty term: no other "
            "system answered these instructions here, and beside other systems' annotations "
            "of them it can read otherwise; the joint fit needs 20 instructions"
        ) in line
        assert "joint fit;" not in line


def test_a_win_rate_inside_0_to_100_never_reads_an_end() -> None:
    """AlpacaEval's two decimals of percentage points, and the interval's ends as
    percentages too (they read ``97.70% [96.83, 98.45]``); a rate of 99.998 would read
    ``100.00%``, a system that won every comparison, which it did not."""
    from recuse.analyses.leaderboard import _points, _points_interval

    assert _points_interval(97.7, 96.834, 98.449) == "97.70% [96.83%, 98.45%]"
    assert _points(99.998) == "99.998%" and _points(0.002) == "0.002%"
    assert _points(100.0) == "100.00%" and _points(0.0) == "0.00%"
    # a negative zero read "-0.00%" (an ASCII hyphen, and a sign 0 has not); a subnormal
    # rate underflowed to a share of 0 and read "0.0%", a rate above 0 written as 0
    assert _points(-0.0) == "0.00%" and _points(5e-324) == "< 0.0001%"
    assert _points_interval(0.0, -0.0, 1e-300) == "0.00% [0.00%, < 0.0001%]"


def test_a_negative_kendall_tau_reads_with_the_minus_sign(
    planted: Planted, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The taus of the note were written ``{:.2f}``: a τ of −0.31 (an adjusted order that
    reverses the raw one) read ``-0.31``, an ASCII hyphen beside the U+2212 of every
    number of the report. The fit's τ is replaced by −0.3125 (planted data give a positive
    one): the note reads −0.31."""
    import dataclasses

    import recuse.analyses.leaderboard as module
    from analyses.conftest import audit_only

    real = module.leaderboard
    monkeypatch.setattr(
        module,
        "leaderboard",
        lambda *a, **k: dataclasses.replace(real(*a, **k), tau_raw_adjusted=-0.3125),
    )
    report = audit_only(ANALYSIS.id, planted.pairs, planted.roster)
    section = next(s for s in report.sections if s.id == ANALYSIS.id)
    (note,) = [n for n in section.notes if "Kendall" in n]
    assert "rank interval): raw vs adjusted \u22120.31" in note and "-0.3" not in note, note


def test_human_labels_that_give_no_leaderboard_are_said(planted: Planted) -> None:
    """Human labels in which one system never loses have no finite Bradley–Terry
    strengths: the human strengths and the τ against the humans were left out of the
    table and the note with nothing said (labels that give a leaderboard read no such
    note)."""
    from analyses.conftest import audit_only

    pairs = planted.pairs
    top = sorted(set(pairs["model_a"].dropna()) | set(pairs["model_b"].dropna()))[0]
    human = pairs["human"].where(pairs["model_a"] != top, 1.0).where(pairs["model_b"] != top, 0.0)
    said = "the human labels give no leaderboard of their own"
    for labels, expected in ((pairs["human"], False), (human, True)):
        report = audit_only(ANALYSIS.id, pairs.assign(human=labels), planted.roster)
        section = next(s for s in report.sections if s.id == ANALYSIS.id)
        notes = [n for n in section.notes if said in n]
        table = next(t for t in section.tables if t.name == "leaderboard-planted")
        assert bool(notes) == expected, section.notes
        assert any(c.startswith("human ") for c in table.frame.columns) != expected
        tau = next(n for n in section.notes if "Kendall" in n)
        assert ("vs humans" in tau) != expected
    assert f"a group of {top} never lost to the others" in notes[0], notes


def test_the_covariates_table_says_its_intervals_level(planted: Planted) -> None:
    """The covariates table's CSV held ci_low and ci_high with no level."""
    section = next(s for s in planted.report.sections if s.id == ANALYSIS.id)
    (table,) = [t for t in section.tables if t.name == "leaderboard-covariates-sim-pairs"]
    assert len(table.frame) and (table.frame["level"] == OPTIONS.level).all()
    # its words in report.json, as the probe and self-recognition tables have theirs:
    # the page and the JSON showed a level of 0.9 and log-odds with no words
    words = table.to_dict()["columns"]
    assert set(words) == set(table.frame.columns)
    assert words["ci_low"].startswith(f"the low end of its {OPTIONS.level:.0%} percentile")
    lb = leaderboard(planted.pairs, families={}, boot=Resampling(n_boot=200, level=0.95))
    assert (lb.adjusted.coefficient_table()["level"] == 0.95).all()


def test_a_leaderboard_of_one_judge_says_why_its_self_terms_are_not_identified(
    shared_data: Path,
) -> None:
    """``recuse audit llmbar-mtbench --judge gpt-4`` fits the leaderboard to gpt-4's
    verdicts (the judges chosen), where the whole audit pools all four: its own-answer
    and family covariates, 'pooled over judges', read 'not identifiable here (collinear
    with the strengths or another covariate)' with nothing saying why one judge makes
    them so — its own answers are all gpt-4's (the own covariate is gpt-4's strength
    column), its family's other answers gpt-3.5-turbo's. The whole audit estimates
    both."""
    from recuse.driver import AuditOptions, load_input, run_audit
    from recuse.roster import Roster

    roster = Roster.builtin()
    inp = load_input("llmbar-mtbench", data_dir=shared_data, roster=roster)
    common = {"n_boot": 100, "only": ("leaderboard",), "robustness": ()}

    def own_and_family(judges: tuple[str, ...]) -> tuple[dict[str, str], set[str]]:
        report = run_audit([inp], options=AuditOptions(judges=judges, **common), roster=roster)
        said = {s.bias.key: s.reason for s in report.skipped if s.bias is not None}
        found = {f.bias.key for f in report.findings}
        return said, found

    said, _ = own_and_family(("gpt-4",))
    _, found = own_and_family(())
    assert {"bt_own", "bt_family"} <= found
    assert said["bt_own"].endswith(
        "not identifiable here (collinear with the strengths or another covariate); pooled "
        "over one judge, gpt-4, whose own answers are all its model's: the covariate is "
        "that model's strength (the audit without --judge pools every judge's verdicts)"
    )
    assert "gpt-4, whose family's answers are its family's other models'" in said["bt_family"]


def test_the_pooled_length_and_position_terms_say_they_are_not_a_judges_headline(
    shared_data: Path,
) -> None:
    """On llmbar-mtbench the leaderboard's length term, one coefficient for the four
    judges against the strengths their own verdicts give the systems, reads 'rewards
    longer answers' (its interval above 0), beside four verbosity headlines that detect
    no difference from the humans; its first-position term reads 'rewards the answer
    shown first' beside gpt-4's negligible position headline. The own and family terms
    said they were no judge's headline; these said nothing, so two answers to 'does this
    judge prefer longer answers' disagreed with no word why."""
    from recuse.driver import AuditOptions, load_input, run_audit
    from recuse.roster import Roster

    roster = Roster.builtin()
    inp = load_input("llmbar-mtbench", data_dir=shared_data, roster=roster)
    options = AuditOptions(n_boot=300, only=("leaderboard", "verbosity", "position"))
    report = run_audit([inp], options=options, roster=roster)
    by = {(f.bias.key, f.judge): f for f in report.findings}
    length = by[("bt_length", "gpt-3.5-turbo, gpt-4, llama-2-70b-chat, palm-2")]
    assert length.ci_low > 0 and length.estimate > 0.3
    verbosity = [f for (key, _), f in by.items() if key == "verbosity_longer_gap"]
    assert len(verbosity) == 4 and not any(f.significant for f in verbosity)
    assert "not any judge's verbosity headline" in length.bias.unit
    assert "than the humans" in length.bias.unit
    first = by[("bt_first", "gpt-3.5-turbo, gpt-4, llama-2-70b-chat, palm-2")]
    assert first.ci_low > 0 and by[("position", "gpt-4")].materiality == "negligible"
    assert "not any judge's position headline" in first.bias.unit
    # the words go where the estimate is read: the section's words and report.json
    from recuse.report.export import to_dict

    section = next(s for s in to_dict(report)["sections"] if s["id"] == ANALYSIS.id)
    units = {b["bias"]: b["unit"] for b in section["biases"]}
    assert units["bt_length"] == length.bias.unit and units["bt_first"] == first.bias.unit


def test_the_alpaca_eval_tables_define_their_columns_and_name_their_fit() -> None:
    """The two AlpacaEval tables (the leaderboard and the length-controlled one) held 19
    columns with no word: win rates in %, log-odds coefficients, intervals of three kinds
    at a level not given; and the second's title said 'AlpacaEval 2 GLM' above an
    lc_win_rate that is the joint fit. Planted: a judge that favours the longer answer
    (the simulation's φ = −1 on tanh(−z), z how much longer the system's answer is), so
    the length coefficient, on δ = the baseline's length − the system's, reads negative,
    as its words say it should (AlpacaEval's GPT-4 judges read −0.2 to −4)."""
    from recuse.analyses.base import AuditOptions
    from recuse.data.inputs import Input, Source
    from recuse.driver import run_audit
    from recuse.metrics.length_controlled import JOINT
    from recuse.metrics.length_controlled import columns as lc_columns
    from recuse.roster import Roster
    from recuse.simulate.length_controlled import JUDGE, simulate_length_controlled

    sim = simulate_length_controlled(rho=0.0, systems=3, n_instructions=300, seed=4,
                                     longer=1.0, length_effect=-1.0)  # fmt: skip
    frame = sim.pairs.assign(
        source="alpaca-eval", human=np.nan, item_id=sim.pairs["prompt_id"] + sim.pairs["model_b"],
        p_a_first=sim.pairs["p_a"], p_a_second=np.nan,
    )  # fmt: skip
    longer = frame["len_b"] > frame["len_a"]  # b: the system; a: the baseline
    wins = 1 - frame["p_a"]
    assert wins[longer].mean() > wins[~longer].mean() + 0.1  # it favours the longer answer
    inp = Input("sim-ae", "pairs", frame, Source("sim-ae", "pairs", len(frame), judges=(JUDGE,)))
    options = AuditOptions(level=0.8, n_boot=100, only=("leaderboard",))
    report = run_audit([inp], options=options, roster=Roster.builtin())
    tables = [t for s in report.sections for t in s.tables
              if t.name.startswith(("lc-win-rate", "alpaca-eval-leaderboard"))]  # fmt: skip
    assert len(tables) == 2
    for table in tables:
        words = table.to_dict()["columns"]
        assert set(words) == set(table.frame.columns), table.name
        assert words == lc_columns(0.8)
        assert "80% percentile interval" in words["win_rate_low"]
        assert "in %" in words["win_rate"] and "in %" in words["lc_win_rate"]
        assert (table.frame["length_coefficient"] < 0).all()
        assert "negative: the judge favours the longer answer" in words["length_coefficient"]
        assert (table.frame["lc_method"] == JOINT).all()
        assert "GLM)" not in table.title


def test_the_kendall_tau_note_says_why_it_has_no_interval(planted: Planted) -> None:
    """Kendall's τ between the raw, adjusted and human orderings is printed with no
    interval and said nothing of it, where every other number of the section has one:
    it now says it is of the fitted strengths and where the ranks' uncertainty is."""
    section = next(s for s in planted.report.sections if s.id == ANALYSIS.id)
    (note,) = [n for n in section.notes if n.startswith("sim-pairs: Kendall's τ")]
    assert "with no interval: how far each rank could move is the table's rank interval" in note
    board = next(t for t in section.tables if t.name == "leaderboard-sim-pairs")
    assert {"raw rank_low", "raw rank_high"} <= set(board.frame.columns)


def test_a_covariates_extrapolated_ends_are_its_findings_record(
    shared_data: Path, tmp_path: Path
) -> None:
    """At 99.9% from LLMBar MT-Bench's 73 prompts the adjusted fit's coefficient ends
    ask 2,000 resamples for Student's tail Φ(−√(73/72) · t_72(0.9995)) = 2.76e-4, past
    their 0.0025: the covariates table's words said those ends were extrapolated, while
    the bias findings (bt_length, bt_first, …) carried no warning and an ``extrapolated``
    of null — built outside the shared bootstrap. Each now has its ends' record (which
    ends tail_end extrapolated), the warning it says and the method's words; a strength's
    column words speak of the strengths' ends only. The warning names the interval's
    rule: a percentile interval's ends, not bias-corrected (it said they were)."""
    import json
    import math

    from scipy.stats import norm, t

    from recuse.cli import main

    out = tmp_path / "r"
    args = ["audit", "llmbar-mtbench", "--only", "leaderboard", "--level", "0.999"]
    assert main([*args, "--data-dir", str(shared_data), "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    (section,) = [s for s in report["sections"] if s["id"] == ANALYSIS.id]
    tail = norm.cdf(-math.sqrt(73 / 72) * t.ppf(0.9995, 72))
    assert tail == pytest.approx(2.7556e-4, rel=1e-3)
    sides = []
    for f in section["findings"]:
        x = f["extrapolated"]
        assert x is not None, f["bias"]
        assert x["tail"] == pytest.approx(tail, rel=1e-9)
        assert (x["resamples"], x["clusters"], x["level"]) == (2000, 73, 0.999)
        assert x["n_boot_to_read"] == math.ceil(5 / x["tail"])
        side = (
            "ends" if x["low_end"] and x["high_end"] else "low end" if x["low_end"] else "high end"
        )
        sides.append(side)
        (w,) = f["warnings"]
        assert w.startswith(f"the 99.9% interval's {side} ")
        # a percentile interval: no bias correction moved its ends, and the warning
        # (beyond_warning, written for the BCa ends) said "bias-corrected" of them
        assert x["bias_corrected"] is False
        assert "(Student's t for 73 prompts asks them for a tail of 2.8e-04;" in w
        assert "bias-corrected" not in w and "BCa" not in w
        assert f["method"].endswith(
            f"its {side} past the resamples' reach extrapolated along a normal tail"
        )
    assert len(sides) == 5 and {"ends", "low end"} <= set(sides)
    words = report["tables"]["leaderboard-covariates-llmbar-mtbench"]["columns"]["ci_low"]
    assert "extrapolated along a normal tail" in words
