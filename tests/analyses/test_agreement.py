"""Agreement: the findings are the metric functions' numbers, labelled as quality
scores (never flagged, not counted as biases in the summary)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from analyses.conftest import BOOT, Planted
from recuse.analyses.agreement import ACCURACY, ALPHA, ANALYSIS, KAPPA
from recuse.analyses.base import NUMBER_COLUMNS
from recuse.metrics.agreement import accuracy, cohen_kappa, krippendorff_alpha
from recuse.report.export import table_file, write_tables


def test_findings_are_accuracy_kappa_and_alpha(planted: Planted) -> None:
    by = {(f.judge, f.bias.key): f for f in planted.report.findings if f.section == ANALYSIS.id}
    for judge in ("gpt-4", "claude-v1"):
        acc = accuracy(planted.pairs, judge=judge, **BOOT)  # type: ignore[arg-type]
        kap = cohen_kappa(planted.pairs, judge=judge, **BOOT)  # type: ignore[arg-type]
        assert by[(judge, ACCURACY.key)].estimate == pytest.approx(acc.estimate)
        assert by[(judge, ACCURACY.key)].n == acc.n
        assert by[(judge, KAPPA.key)].estimate == pytest.approx(kap.estimate)
    alpha = krippendorff_alpha(planted.pairs, **BOOT)  # type: ignore[arg-type]
    assert by[("all 2 judges", ALPHA.key)].estimate == pytest.approx(alpha.estimate)
    # gpt-4 has only self-preference planted, whose terms average out: accuracy 0.65
    f = by[("gpt-4", ACCURACY.key)]
    assert f.ci_low <= 0.65 <= f.ci_high


def test_kappa_and_alpha_read_without_a_sign_in_the_result_as_in_the_finding(
    planted: Planted,
) -> None:
    """Kappa and alpha are quality scores whose 0 is chance, no bias difference: their
    findings print unsigned ('0.43 [0.35, 0.51]'), and their results, whose JSON said
    ``signed: true``, now say the same (``score``); they keep their p-values, as a
    kappa can lie below chance."""
    by = {(f.judge, f.bias.key): f for f in planted.report.findings if f.section == ANALYSIS.id}
    results = [cohen_kappa(planted.pairs, judge=j, **BOOT) for j in ("gpt-4", "claude-v1")]  # type: ignore[arg-type]
    results.append(krippendorff_alpha(planted.pairs, **BOOT))  # type: ignore[arg-type]
    findings = [by[("gpt-4", KAPPA.key)], by[("claude-v1", KAPPA.key)]]
    findings.append(by[("all 2 judges", ALPHA.key)])
    for r, f in zip(results, findings, strict=True):
        assert r.null == 0 and r.estimate > 0 and r.score
        assert not r.signed and r.to_dict()["signed"] is False
        assert not f.signed and not f.text.startswith("+") and f.text.startswith(f.parts[0])
        assert 0 < r.p_value <= 1 and f.p_value == pytest.approx(r.p_value)


def test_words_say_quality_score_and_nothing_is_flagged(planted: Planted) -> None:
    for b in ANALYSIS.biases:
        assert b.kind == "quality" and not b.flags and "not a bias" in b.unit
    assert ACCURACY.null == 0.5 and "0.5 = chance" in ACCURACY.unit
    assert "counts half" in ACCURACY.unit and "linear weights" in KAPPA.unit
    assert "ordinal" in ALPHA.unit and "b < tie < a" in ALPHA.unit
    found = [f for f in planted.report.findings if f.section == ANALYSIS.id]
    assert found and all(f.ci_low > f.null for f in found)  # far above chance ...
    assert not any(f.significant for f in found)  # ... and still not a flagged bias
    for row in planted.report.summary():
        assert ACCURACY.key not in {f.bias.key for f in row.flagged}
    cells = [r.cells.get(ACCURACY.key) for r in planted.report.matrix().rows]
    assert any(c is not None and c.estimates for c in cells)
    assert not any(c is not None and c.hit for c in cells)


def test_findings_recover_planted_accuracy_kappa_and_alpha() -> None:
    """Planted truth (simulate_pairs, no human ties, no position bias, no prompt effect):
    a judge of accuracy p gives the same pick in both orders and agrees with the human
    with probability p, independently of the other judge; both labels are a or b with
    probability 1/2. Hence accuracy = p, Cohen's κ = (p − 1/2) / (1 − 1/2) = 2p − 1 (with
    two categories the linear weights are the unweighted ones), and Krippendorff's α
    between two judges = 1 − P(disagree) / (1/2) = 1 − 2 [p₁(1 − p₂) + p₂(1 − p₁)]. With
    p = 0.8 (gpt-4) and 0.7 (claude-v1): accuracy 0.8, 0.7; κ 0.6, 0.4; α 0.24. The mean
    finding over five seeds (each 450 pairs) is within about three standard errors of the
    mean: 0.03 for accuracy, 0.06 for κ, 0.045 for α; 1 − p or a κ of the wrong sign
    would miss by far more."""
    from analyses.conftest import audit_only
    from recuse.roster import Roster
    from recuse.simulate import PlantedBias, simulate_pairs

    p = {"gpt-4": 0.8, "claude-v1": 0.7}
    plants = {j: PlantedBias(accuracy=v) for j, v in p.items()}
    truth = {(j, ACCURACY.key): v for j, v in p.items()}
    truth |= {(j, KAPPA.key): 2 * v - 1 for j, v in p.items()}
    p1, p2 = p.values()
    truth[("all 2 judges", ALPHA.key)] = 1 - 2 * (p1 * (1 - p2) + p2 * (1 - p1))
    tolerance = {ACCURACY.key: 0.03, KAPPA.key: 0.06, ALPHA.key: 0.045}
    got: dict[tuple[str, str], list[float]] = {k: [] for k in truth}
    for seed in range(5):
        sim = simulate_pairs(judges=plants, n_prompts=150, human_tie_rate=0.0,
                             prompt_effect=0.0, seed=seed)  # fmt: skip
        report = audit_only(ANALYSIS.id, sim.pairs, Roster.builtin())
        for f in report.findings:
            got[(f.judge, f.bias.key)].append(f.estimate)
    for (judge, key), value in truth.items():
        estimates = got[(judge, key)]
        assert len(estimates) == 5, (judge, key)
        mean = sum(estimates) / 5
        assert mean == pytest.approx(value, abs=tolerance[key]), (judge, key, estimates)


def test_estimates_tables_write_warnings_as_text_like_the_others(planted: Planted) -> None:
    """The agreement table showed ``[]`` and ``False`` in its warnings and
    fixed-by-construction columns, which the other estimates tables write as text ("" for
    none) or leave out; it (and every estimates table) now reads like the others."""
    tables = {t.name: t.frame for t in planted.report.tables}
    agreement = tables[f"{ANALYSIS.id}-sim-pairs"]
    assert set(agreement["metric"]) >= {"agreement_accuracy", "agreement_kappa"}
    for frame in tables.values():
        assert "fixed_by_construction" not in frame.columns
        if "warnings" in frame.columns:
            assert all(isinstance(w, str) for w in frame["warnings"]), list(frame["warnings"])
        for column in frame.columns:
            assert not any(isinstance(v, list | dict | tuple) for v in frame[column]), column
    # the same columns as a pairwise section's table, less its components and method
    position = tables["position-sim-pairs"]
    assert list(agreement.columns) == [c for c in position.columns if c != "components"]


def test_every_estimates_table_says_what_its_numbers_are(planted: Planted, tmp_path: Path) -> None:
    """The verbosity and position tables (tables/*.csv) left out ``signed``: the flip
    rate's row read "null 0" as a difference's does, with nothing saying it is a rate.
    Every estimates table now carries the same columns about what a number is
    (NUMBER_COLUMNS), each row the result's own, read back from the CSV files."""
    write_tables(planted.report, tmp_path)
    tables = {
        t.name: pd.read_csv(tmp_path / table_file(t.name), keep_default_na=False)
        for t in planted.report.tables
        if {"metric", "estimate", "n_boot"} <= set(t.frame.columns)
    }
    names = {n.split("-sim")[0] for n in tables}
    assert {"position", "verbosity", "agreement", "self-preference", "family-preference"} <= names
    for name, frame in tables.items():
        assert set(NUMBER_COLUMNS) <= set(frame.columns), name
    # and the table says what each column is (report.json's columns, under it on the
    # page): n_of, null_bound, n_boot_unfit had no word where a reader of the CSV looks
    from recuse.metrics.result import COLUMNS

    checked = [t for t in planted.report.tables if t.name in tables]
    assert len(checked) == len(tables)
    for t in checked:
        extra = {"ece_plugin", "chance_ece"}  # the calibration table adds, not a result field
        assert set(t.frame.columns) - extra == set(t.columns), t.name
        assert all(t.columns[c] == COLUMNS[c] for c in t.columns), t.name
    assert "floor or ceiling" in COLUMNS["null_bound"] and "n counts" in COLUMNS["n_of"]

    def row(table: str, metric: str, judge: str) -> dict[str, str]:
        frame = tables[table].astype(str)
        hit = frame[(frame["metric"] == metric) & (frame["judge"] == judge)]
        assert len(hit) == 1, (table, metric, judge)
        return {k: hit.iloc[0][k] for k in (*NUMBER_COLUMNS, "p_value") if k != "definition"}

    def definition(table: str, metric: str) -> str:
        said = set(tables[table].loc[tables[table]["metric"] == metric, "definition"])
        assert len(said) == 1, (table, metric, said)
        return said.pop()

    j = "claude-v1"
    # (null, null_bound, signed, absolute_value, p_value empty): a rate at its floor, a
    # share at its ceiling, a rate around 0.5, a signed difference and its absolute value
    assert row("position-sim-pairs", "flip_rate", j) == {
        "null": "0.0", "null_bound": "floor", "signed": "False",
        "absolute_value": "False", "p_value": "",
    }  # fmt: skip
    assert row("position-sim-pairs", "position_consistency", j) == {
        "null": "1.0", "null_bound": "ceiling", "signed": "False",
        "absolute_value": "False", "p_value": "",
    }  # fmt: skip
    first = row("position-sim-pairs", "first_position_rate", j)
    assert (first["null"], first["null_bound"], first["signed"]) == ("0.5", "", "False")
    assert first["p_value"] != ""
    verbosity = tables["verbosity-sim-pairs"]  # Eq. 5 is there where it differs from Eq. 6
    (folded,) = set(verbosity.loc[verbosity["metric"] == "verbosity_deviation", "judge"])
    eq6 = row("verbosity-sim-pairs", "verbosity_bias", folded)
    eq5 = row("verbosity-sim-pairs", "verbosity_deviation", folded)
    assert (eq6["signed"], eq6["absolute_value"]) == ("True", "False")
    assert (eq5["signed"], eq5["absolute_value"]) == ("False", "True")
    kappa = row("agreement-sim-pairs", "agreement_kappa", j)
    assert (kappa["null"], kappa["signed"]) == ("0.0", "False")  # a score, unsigned
    # each row says what its metric is: the two kappas (0.425 and 0.298 for gpt-3.5-turbo
    # on llmbar-mtbench) and the flip rate beside the consistency were told apart by
    # their names only
    linear = definition("agreement-sim-pairs", "agreement_kappa")
    plain = definition("agreement-sim-pairs", "agreement_kappa_unweighted")
    assert "kappa (linear weights)" in linear and "kappa (unweighted)" in plain
    flips = definition("position-sim-pairs", "flip_rate")
    assert flips.startswith("flip rate: share of pairs whose winner reverses")
    assert definition("verbosity-sim-pairs", "verbosity_longer_gap").startswith(
        "prefer-longer gap: P(judge picks the longer response) minus P(human picks it)"
    )


def test_the_agreement_words_hold_for_a_verdict_of_one_order(shared_data: Path) -> None:
    """The agreement's unit said the judge's verdict was 'both orders combined': on
    llmbar-mtbench palm-2's agreement rests on 193 pairs, 1 of them judged in one order
    (its position rests on 192), and with --orders first every verdict is one order's
    (the agreement moves: gpt-4 0.81 -> 0.80). The words now say the orders it judged."""
    from recuse.driver import AuditOptions, load_input, run_audit
    from recuse.roster import Roster

    roster = Roster.builtin()
    inp = load_input("llmbar-mtbench", data_dir=shared_data, roster=roster)
    f = inp.frame
    palm = f[(f["judge"] == "palm-2") & f["p_a"].notna()]
    one = palm["p_a_first"].isna() ^ palm["p_a_second"].isna()
    assert (len(palm), int(one.sum())) == (193, 1)
    found = {}
    for orders in ("both", "first"):
        options = AuditOptions(n_boot=100, only=("agreement",), orders=orders)
        report = run_audit([inp], options=options, roster=roster)
        (found[orders],) = [
            x for x in report.findings if x.bias.key == ACCURACY.key and x.judge == "gpt-4"
        ]
    assert found["both"].estimate == 0.81 and found["first"].estimate == 0.795
    for x in found.values():
        assert "both orders" not in x.bias.unit
        assert "the orders it judged combined" in x.bias.unit
