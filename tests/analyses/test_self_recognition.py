"""Self-recognition in the audit: findings are the metric, the relation table and note are
there, and the other analyses read only a probe table's original pairs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analyses.conftest import BOOT, OPTIONS, _input
from recuse.analyses.self_recognition import ANALYSIS, SELF_RECOGNITION
from recuse.driver import run_audit
from recuse.judging.runner import Runner
from recuse.judging.store import Store
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.recognition import self_recognition
from recuse.metrics.self_preference import self_preference
from recuse.probes import build_recognition_table
from recuse.probes.run import judge_probes
from recuse.roster import Entry, Roster
from recuse.testing.planted_judge import PlantedJudge

PLANTS = {"j1": (0.3, 0.1), "j2": (0.05, 0.0)}


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for j in PLANTS:
        for k in range(60):
            a_own = k % 2 == 0
            own, other = f"Answer {k} ({j} style).", f"Another answer to {k}."
            rows.append(
                {"item_id": f"{j}-{k}", "prompt_id": f"q{k}", "prompt": f"Question {k}?",
                 "response_a": own if a_own else other, "response_b": other if a_own else own,
                 "model_a": j if a_own else "m-other", "model_b": "m-other" if a_own else j,
                 "human": "a" if rng.random() < 0.5 else "b"}
            )  # fmt: skip
    pairs = pd.DataFrame(rows)
    folder = tmp_path_factory.mktemp("recognition")
    with Store(folder / "s.db") as store:
        for j, (rec, pref) in PLANTS.items():
            judge = PlantedJudge({}, model_id=j, signature=f"({j} style)", recognition=rec,
                                 self_preference=pref)  # fmt: skip
            judge_probes(
                Runner(judge, store, judge=j, progress=False),
                build_recognition_table(pairs, judge=j),
            )
        return store.export_pairs()


def test_findings_relation_and_original_pairs_only(exported: pd.DataFrame) -> None:
    roster = Roster([Entry(m, m) for m in ("j1", "j2", "m-other")])
    report = run_audit([_input("recog", "pairs", exported)], options=OPTIONS, roster=roster)
    found = {f.judge: f for f in report.findings if f.section == ANALYSIS.id}
    results, _ = self_recognition(exported, **BOOT)  # type: ignore[arg-type]
    assert set(found) == set(PLANTS)
    for r in results:
        f = found[str(r.judge)]
        assert (f.estimate, f.ci_low, f.ci_high) == pytest.approx((r.estimate, r.ci_low, r.ci_high))
        assert f.bias is SELF_RECOGNITION and not f.significant  # a capability: never flagged
    assert found["j1"].estimate == pytest.approx(0.8, abs=0.02)
    section = next(s for s in report.sections if s.id == ANALYSIS.id)
    (table,) = section.tables
    assert list(table.frame["judge"]) == ["j1", "j2"]
    assert "eo" in table.title  # labels exist, so the EO rung is what it sits beside
    assert any("needs at least 3" in n for n in section.notes)
    # self-preference saw the 60 original pairs per judge, not the recognition rows too
    eo = {f.judge: f for f in report.findings if f.bias.key == "self_preference_eo"}
    original = exported[exported["probe"] == "original"]
    for j in PLANTS:
        r = self_preference(original, judge=j, boot=Resampling(n_boot=50))
        assert eo[j].n == r.n == 60 and eo[j].estimate == pytest.approx(r.estimate)


def test_findings_recover_the_planted_recognition_rates(exported: pd.DataFrame) -> None:
    """Planted truth (PlantedJudge): asked which answer it wrote, the judge gives its own
    P = 0.5 + recognition + noise (noise uniform in ±0.03, fixed per prompt), so its
    self-recognition accuracy is 0.5 + recognition up to the noise's mean: 0.8 for j1,
    0.55 for j2. Each finding is within 0.02 of that (the noise's mean over 60 prompts
    has a standard deviation of 0.002); a sign error (0.2, 0.45) would miss by 0.1 or
    more, and j1's and j2's numbers swapped by 0.25."""
    from analyses.conftest import audit_only

    roster = Roster([Entry(m, m) for m in ("j1", "j2", "m-other")])
    report = audit_only(ANALYSIS.id, exported, roster)
    found = {f.judge: f for f in report.findings if f.bias is SELF_RECOGNITION}
    assert set(found) == set(PLANTS)
    for judge, (recognition, _) in PLANTS.items():
        f, truth = found[judge], 0.5 + recognition
        assert f.estimate == pytest.approx(truth, abs=0.02), judge
        assert f.n == 60


def test_a_negative_correlation_and_a_small_p_read_as_every_number(
    exported: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The note wrote ρ and r ``{:.2f}`` and their p ``{:.2g}``: a ρ of −0.9 read
    ``-0.90`` (an ASCII hyphen beside the report's U+2212) and a p of 2.1e-05 read
    ``2.1e-05`` where every other p reads ``< 0.001``. Two judges give no correlation,
    so the correlation is planted (−0.9, p 2.1e-05; 0.25, p 0.5): the note reads
    −0.90 (p < 0.001) and 0.25 (p = 0.500)."""
    import recuse.analyses.self_recognition as module

    real = module.recognition_vs_preference

    def planted(*args: object, **kwargs: object) -> tuple[pd.DataFrame, dict[str, object]]:
        table, corr = real(*args, **kwargs)  # type: ignore[arg-type]
        return table, {**corr, "spearman": -0.9, "spearman_p": 2.1e-05, "pearson": 0.25,
                       "pearson_p": 0.5}  # fmt: skip

    monkeypatch.setattr(module, "recognition_vs_preference", planted)
    roster = Roster([Entry(m, m) for m in ("j1", "j2", "m-other")])
    report = run_audit([_input("recog", "pairs", exported)], options=OPTIONS, roster=roster)
    section = next(s for s in report.sections if s.id == ANALYSIS.id)
    (note,) = [n for n in section.notes if "Spearman" in n]
    assert "Spearman ρ = \u22120.90 (p < 0.001), Pearson r = 0.25 (p = 0.500)" in note, note


def test_a_judge_naming_the_first_answer_in_both_orders_reads_chance_with_ties_said(
    exported: pd.DataFrame,
) -> None:
    """A judge that always answers "A" (the answer shown first) ties on every pair once
    its orders are averaged: 0.5, chance, by hand; the detail read "picks its own answer
    in 50% of pairs" though it named its own answer in none without a tie."""
    rec = (exported["probe"] == "self-recognition").to_numpy()
    always_a = exported.assign(
        p_a_first=np.where(rec, 1.0, exported["p_a_first"]),  # "A": a, shown first
        p_a_second=np.where(rec, 0.0, exported["p_a_second"]),  # "A": b, shown first
        p_a=np.where(rec, (1.0 + 0.0) / 2, exported["p_a"]),
    )
    assert rec.sum() == 120
    roster = Roster([Entry(m, m) for m in ("j1", "j2", "m-other")])
    report = run_audit([_input("recog", "pairs", always_a)], options=OPTIONS, roster=roster)
    for f in [f for f in report.findings if f.section == ANALYSIS.id]:
        assert f.estimate == pytest.approx(0.5)
        assert f.detail == (
            "names its own answer as the one it wrote in 50% of pairs (a tie between its "
            "two orders counts half)"
        )


def test_the_table_beside_self_preference_says_its_intervals_level(
    exported: pd.DataFrame,
) -> None:
    """The table's CSV held recognition_ci_low and preference_ci_high with no level."""
    from recuse.driver import AuditOptions

    roster = Roster([Entry(m, m) for m in ("j1", "j2", "m-other")])
    options = AuditOptions(level=0.95, n_boot=200, seed=0, min_n=10, only=(ANALYSIS.id,))
    report = run_audit([_input("recog", "pairs", exported)], options=options, roster=roster)
    section = next(s for s in report.sections if s.id == ANALYSIS.id)
    (table,) = [t for t in section.tables if t.name == "self-recognition-recog"]
    assert len(table.frame) == 2 and (table.frame["level"] == 0.95).all()
    assert set(table.frame.columns) - set(table.columns) == set()
    # which interval the preference's ends are: its rung's, Wilson's for own_win_rate
    # (metrics.ladder.share_rungs), BCa for eo; the words said only "its interval"
    from recuse.metrics.bootstrap import Resampling
    from recuse.metrics.ladder import self_preference_ladder

    rungs, _ = self_preference_ladder(exported, boot=Resampling(n_boot=200, seed=0))
    methods = {r.metric: r.method for r in rungs}
    words = table.columns["preference_ci_low"]
    for metric in set(table.frame["preference_metric"]):
        kind = "Wilson score interval" if "Wilson" in methods[metric] else "BCa interval"
        assert f"for {metric} the {kind}" in words, (metric, words)
