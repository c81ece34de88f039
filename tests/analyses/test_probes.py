"""Probes: findings are the placebo-controlled effects, words tied to each edit."""

from __future__ import annotations

import pandas as pd
import pytest

from analyses.conftest import BOOT, PROBE_PLANTS, Planted
from recuse.analyses.probes import ANALYSIS, PROBE_BIASES
from recuse.metrics.probes import DESCRIPTIONS, VERBOSITY, probe_effects
from recuse.probes.rewrite import REWRITES


def test_findings_are_the_probe_effects(planted: Planted) -> None:
    found = {f.bias.key: f for f in planted.report.findings if f.section == ANALYSIS.id}
    results, _ = probe_effects(planted.probes, **BOOT)  # type: ignore[arg-type]
    assert set(found) == {f"probe_{k}" for k in [*PROBE_PLANTS, *REWRITES, VERBOSITY]}
    for r in results:
        name = r.metric.removeprefix("probe_")
        f = found[r.metric]
        assert (f.estimate, f.ci_low, f.ci_high) == pytest.approx((r.estimate, r.ci_low, r.ci_high))
        assert DESCRIPTIONS[name] in f.bias.unit and f.bias is PROBE_BIASES[name]
        assert f.headline and f.judge == "planted-judge"
    assert found["probe_authority"].direction == "positive"  # planted +0.12
    assert found["probe_distraction"].direction == "negative"  # planted −0.06
    assert found["probe_padding"].direction == "none"  # planted 0 (it reads past the edit)
    assert found["probe_verbosity"].direction == "positive"  # longer rewrite, planted length


def test_the_edited_texts_are_in_the_report(planted: Planted) -> None:
    section = next(s for s in planted.report.sections if s.id == ANALYSIS.id)
    (texts,) = [t for t in section.tables if t.name == "probe-texts-sim-probes"]
    assert set(texts.frame["probe"]) == {"original", "placebo", *PROBE_PLANTS, *REWRITES}
    assert any("Journal of Applied Reasoning" in str(v) for v in texts.frame["response_a"]) or any(
        "Journal of Applied Reasoning" in str(v) for v in texts.frame["response_b"]
    )


def test_unknown_probes_are_named_and_a_recognition_only_table_is_not_probed(
    planted: Planted,
) -> None:
    from analyses.conftest import OPTIONS, _input
    from recuse.driver import run_audit
    from recuse.roster import Roster

    t = planted.probes
    custom = t[t["probe"] == "authority"].assign(probe="flattery")
    custom["item_id"] = custom["item_id"].str.replace("authority", "flattery")
    huge = t[t["probe"] == "authority"].assign(probe="x" * 10_000)  # named, cut
    huge["item_id"] = huge["item_id"].str.replace("authority", "huge")
    report = run_audit(
        [_input("custom", "pairs", pd.concat([t, custom, huge], ignore_index=True))],
        options=OPTIONS, roster=Roster([]),
    )  # fmt: skip
    section = next(s for s in report.sections if s.id == ANALYSIS.id)
    (note,) = [n for n in section.notes if "does not know" in n]
    assert "'flattery'" in note and "(10,000 characters)" in note and len(note) < 400
    (texts,) = [t for t in section.tables if t.name.startswith("probe-texts")]
    assert set(texts.frame["probe"]) <= {"original", "placebo", *PROBE_PLANTS, *REWRITES}
    only = t[t["probe"].isin(["original", "self-recognition"])]
    report = run_audit([_input("recog", "pairs", only)], options=OPTIONS, roster=Roster([]))
    (why,) = [k for k in report.skipped if k.analysis == ANALYSIS.title]
    assert "no edited versions" in why.reason


def test_left_out_base_pairs_are_noted_and_recognition_only_judges_not_probed(
    planted: Planted,
) -> None:
    from analyses.conftest import OPTIONS, _input
    from recuse.driver import run_audit
    from recuse.roster import Roster

    t = planted.probes
    bases = sorted(t["base_item"].unique())
    # the placebo of all but 10 base pairs never judged: estimates on 10 of them, said
    few = t[(t["probe"] != "placebo") | t["base_item"].isin(bases[:10])]
    # a second judge asked only "which did you write?": no probe skips for it
    other = t[t["probe"] == "self-recognition"].assign(judge="other-judge")
    report = run_audit(
        [_input("few", "pairs", pd.concat([few, other], ignore_index=True))],
        options=OPTIONS, roster=Roster([]),
    )  # fmt: skip
    section = next(s for s in report.sections if s.id == ANALYSIS.id)
    # out of the probed base pairs: the self-recognition pairs' originals are not probed
    mine = t[t["judge"] == "planted-judge"]
    total = mine.loc[~mine["probe"].isin(["original", "self-recognition"]), "base_item"].nunique()
    assert total < mine["base_item"].nunique()  # the table has recognition-only pairs
    (note,) = [n for n in section.notes if "base pairs had every version judged" in n]
    assert f"planted-judge: 10 of {total} base pairs" in note
    assert "Fake citation" in note and "left out" in note
    assert not [k for k in report.skipped if k.analysis == ANALYSIS.title]
    assert all(f.judge == "planted-judge" for f in section.findings)


def test_a_table_of_unknown_edits_says_which_versions_it_holds(planted: Planted) -> None:
    from analyses.conftest import OPTIONS, _input
    from recuse.driver import run_audit
    from recuse.roster import Roster

    t = planted.probes
    odd = t[t["probe"].isin(["original", "placebo", "authority"])].copy()
    odd.loc[odd["probe"] == "authority", "probe"] = "flattery"
    report = run_audit([_input("odd", "pairs", odd)], options=OPTIONS, roster=Roster([]))
    (why,) = [k for k in report.skipped if k.analysis == ANALYSIS.title]
    assert "its versions: 'flattery', 'original', 'placebo'" in why.reason
    assert "known edits: padding" in why.reason
    odd.loc[odd["probe"] == "flattery", "probe"] = "x" * 10_000
    report = run_audit([_input("odd", "pairs", odd)], options=OPTIONS, roster=Roster([]))
    (why,) = [k for k in report.skipped if k.analysis == ANALYSIS.title]
    assert "(10,000 characters)" in why.reason and len(why.reason) < 400


def test_every_table_column_is_defined_in_the_section() -> None:
    from recuse.metrics.probes import COMPONENTS

    for column, words in COMPONENTS.items():
        assert f"{column}: {words}" in ANALYSIS.intro


def test_a_skip_names_the_version_the_judge_lacks_or_has_no_verdict_in(
    planted: Planted,
) -> None:
    """Without a placebo, or with every padding verdict unparsed, the reason says so
    (not only "no base pairs judged in ... versions")."""
    t = planted.probes
    t = t[t["probe"].isin(["original", "placebo", "padding", "authority"])].copy()
    other = t[t["probe"] != "placebo"].assign(judge="no-placebo-judge")
    padding = t["probe"] == "padding"
    t.loc[padding, ["p_a", "p_a_first", "p_a_second"]] = float("nan")
    results, skipped = probe_effects(pd.concat([t, other]), **BOOT)  # type: ignore[arg-type]
    why = {(s.judge, s.metric): s.reason for s in skipped}
    n = int(padding.sum())
    assert why["planted-judge", "probe_padding"].endswith(
        f"(no verdict in its {n} padding row(s): unparsed or failed)"
    )
    assert why["no-placebo-judge", "probe_authority"].endswith("(no placebo rows)")
    assert [(r.judge, r.metric) for r in results] == [("planted-judge", "probe_authority")]


def test_findings_recover_the_planted_sensitivities(planted: Planted) -> None:
    """Planted truth (PlantedJudge): the judge adds ``sensitivity_k`` to the slot holding
    edit k; its answer quality is fixed with the edit undone and its noise (±0.03 per
    prompt) is what the placebo measures, so each probe's effect (treated share with the
    edit minus with the placebo) is the planted sensitivity: 0.12, 0.0, 0.08, −0.06,
    0.05, 0.0. Each finding is within 0.015 of it (the noise difference's mean over 120
    pairs has a standard deviation of about 0.003); a sign error misses the non-zero
    plants by 0.1 or more."""
    found = {f.bias.key: f for f in planted.report.findings if f.section == ANALYSIS.id}
    for name, sensitivity in PROBE_PLANTS.items():
        f = found[f"probe_{name}"]
        assert f.estimate == pytest.approx(sensitivity, abs=0.015), (name, f.estimate)


def test_each_probe_unit_reads_as_a_sentence_with_its_edit_in_brackets() -> None:
    """The unit read 'share of the win when a closing paragraph that adds length, not
    content, minus the change ...': a noun phrase after 'when', and the description's own
    comma ran into the sentence. The edit is named in brackets, as the metric says it."""
    for name, bias in PROBE_BIASES.items():
        if name == VERBOSITY:
            continue
        assert bias.unit.startswith(
            f"change in the edited answer's share of the win with the edit "
            f"({DESCRIPTIONS[name]}), minus the change a no-op edit"
        ), bias.unit
        assert " when " not in bias.unit


def test_the_effects_table_says_its_intervals_level_and_defines_its_columns(
    planted: Planted,
) -> None:
    """The probe effects table (CSV) held ci_low and ci_high with no level: a 95% report's
    read as the default 90%'s. Each row now says it, and every number column has words."""
    from analyses.conftest import _input
    from recuse.driver import AuditOptions, run_audit

    options = AuditOptions(level=0.95, n_boot=200, seed=0, min_n=10, only=(ANALYSIS.id,))
    report = run_audit([_input("p", "pairs", planted.probes)], options=options,
                       roster=planted.roster)  # fmt: skip
    section = next(s for s in report.sections if s.id == ANALYSIS.id)
    (table,) = [t for t in section.tables if t.name == "probes-p"]
    assert len(table.frame) == 9 and (table.frame["level"] == 0.95).all()
    assert set(table.frame.columns) - set(table.columns) == set()


def test_judge_filter_keeps_a_judges_probe_and_recognition_intervals(planted: Planted) -> None:
    """The probes and self-recognition bootstraps draw one cluster set for all judges; with
    ``--judge`` they drew the chosen judges' prompts only, so a judge that was not probed
    on every prompt read other intervals than in the whole audit. Both read every judge's
    rows now and report the judges chosen."""
    from dataclasses import replace

    from analyses.conftest import OPTIONS, _input
    from recuse.driver import run_audit
    from recuse.roster import Roster

    t = planted.probes
    renamed = {"planted-judge": "second-judge"}
    second = t.assign(judge="second-judge", model_a=t["model_a"].replace(renamed),
                      model_b=t["model_b"].replace(renamed))  # fmt: skip
    second = second[~second["prompt_id"].isin([f"q{k}" for k in range(12)])]
    inp = _input("two", "pairs", pd.concat([t, second], ignore_index=True))
    only = {"only": ("probes", "self-recognition")}

    def found(judges: tuple[str, ...]) -> dict[str, tuple[float, float, float]]:
        report = run_audit([inp], options=replace(OPTIONS, judges=judges, **only),
                           roster=Roster([]))  # fmt: skip
        return {f.bias.key: (f.estimate, f.ci_low, f.ci_high)
                for f in report.findings if f.judge == "second-judge"}  # fmt: skip

    every, one = found(()), found(("second-judge",))
    assert "self_recognition" in every and len(every) > 5
    assert set(one) == set(every)
    for key in every:
        assert one[key] == pytest.approx(every[key], abs=1e-12), key
