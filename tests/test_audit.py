"""The audit on simulated data with planted biases: the summary names exactly those."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from recuse.audit import AuditInput, AuditOptions, load_input, run_audit
from recuse.errors import ConfigError, DatasetNotFoundError, InputError
from recuse.regression.simulate import simulate_ratings
from recuse.report import Report, Source, to_dict
from recuse.roster import Entry, Roster
from recuse.simulate import PlantedBias, simulate_pairs

PLANTED = {
    ("gpt-4", "self_preference_eo"),
    ("claude-v1", "verbosity"),
    ("claude-v1", "position"),
    ("j0", "self_bias"),
}
PAYLOAD = "<script>document.title='PWNED'</script>"


def _inputs() -> tuple[list[AuditInput], Roster, Any]:
    sim = simulate_pairs(
        judges={
            "gpt-4": PlantedBias(self_preference=0.3, accuracy=0.65),
            "claude-v1": PlantedBias(verbosity=0.25, position=0.1, accuracy=0.65),
        },
        models=("gpt-4", "gpt-3.5-turbo", "claude-v1", "vicuna-13b", "palm-2"),
        n_prompts=400,
        pairs_per_prompt=3,
        texts=True,
        unparsed_rate=0.03,
        seed=3,
    )
    pairs = sim.pairs.copy()
    pairs["prompt"] = "Say something."
    pairs.loc[0, "response_a"] = PAYLOAD + " " + str(pairs.loc[0, "response_a"])
    ratings = simulate_ratings(
        n_prompts=80,
        self_bias={"j0": 0.15, "j1": 0.0, "j2": 0.0, "j3": 0.0, "j4": 0.0},
        family_bias={"A": 0.0, "B": 0.0},
        seed=2,
    )
    roster = Roster.builtin()
    for j, f in ratings.families.items():
        roster.add(Entry(j, f))
    inputs = [
        AuditInput("sim-pairs", "pairs", pairs, Source("sim-pairs", "pairs", len(pairs),
                   judges=("claude-v1", "gpt-4"))),
        AuditInput("sim-ratings", "ratings", ratings.ratings,
                   Source("sim-ratings", "ratings", len(ratings.ratings),
                          judges=tuple(ratings.families))),
    ]  # fmt: skip
    return inputs, roster, ratings


@pytest.fixture(scope="module")
def planted() -> tuple[Report, list[AuditInput], Any]:
    inputs, roster, ratings = _inputs()
    options = AuditOptions(level=0.95, n_boot=400, seed=0, robustness=())
    return run_audit(inputs, options=options, roster=roster), inputs, ratings


def test_summary_names_the_planted_biases_and_no_others(planted: Any) -> None:
    report, _, _ = planted
    d = to_dict(report)
    flagged = {(r["judge"], f["bias"]) for r in d["summary"] for f in r["findings"]
               if f["significant"]}  # fmt: skip
    assert flagged == PLANTED
    # absent biases are present as findings with intervals covering 0, not left out
    gpt4 = next(r for r in d["summary"] if r["judge"] == "gpt-4")
    assert {f["bias"] for f in gpt4["findings"]} >= {"verbosity", "position", "family_preference"}


def test_planted_sizes_fall_in_their_intervals(planted: Any) -> None:
    report, _, ratings = planted
    by = {(f.judge, f.bias): f for f in report.findings}
    assert (
        by[("gpt-4", "self_preference_eo")].ci_low
        <= 0.3
        <= by[("gpt-4", "self_preference_eo")].ci_high
    )
    assert by[("claude-v1", "verbosity")].ci_low <= 0.25 <= by[("claude-v1", "verbosity")].ci_high
    assert by[("claude-v1", "position")].ci_low <= 0.6 <= by[("claude-v1", "position")].ci_high
    sb = by[("j0", "self_bias")]
    assert sb.ci_low > 0.05 and sb.n == int((ratings.ratings["judge"] == "j0").sum())


def test_skips_and_exclusions_are_reported_not_zeroed(planted: Any) -> None:
    report, inputs, _ = planted
    d = to_dict(report)
    fam = [k for k in d["skipped"] if k["analysis"] == "Familiarity (perplexity)"]
    assert fam and "ppl_a" in fam[0]["reason"]
    assert not [f for f in report.findings if f.bias == "familiarity"]
    pairs = inputs[0].frame
    for judge in ("gpt-4", "claude-v1"):
        rows = pairs[pairs["judge"] == judge]
        bad = rows["status_first"].eq("unparsed") | rows["status_second"].eq("unparsed")
        expected = {
            "verdict unparsed or failed in every judged order": int(
                (bad & rows["p_a"].isna()).sum()
            ),
            "one order unparsed or failed (the other order's verdict is used)": int(
                (bad & rows["p_a"].notna()).sum()
            ),
            "human tie": int(((rows["human"] == 0.5) & rows["p_a"].notna()).sum()),
        }
        got = {e.reason: e.count for e in report.exclusions if e.judge == judge}
        for reason, count in expected.items():
            assert got.get(reason, 0) == count
        assert expected["one order unparsed or failed (the other order's verdict is used)"] > 0
        assert expected["human tie"] > 0
    # every number of the summary is in the JSON, and the tables are tidy frames
    assert d["tables"]["favoritism-sim-ratings"]["rows"]
    assert d["provenance"]["seed"] == 0 and d["provenance"]["options"]["level"] == 0.95


def test_human_only_and_ratings_inputs_skip_what_they_cannot_support(planted: Any) -> None:
    _, inputs, _ = planted
    human_only = inputs[0].frame.drop_duplicates("item_id").assign(
        judge=None, p_a_first=float("nan"), p_a_second=float("nan"), p_a=float("nan"),
        status_first=None, status_second=None,
    )  # fmt: skip
    inp = AuditInput("humans", "pairs", human_only, Source("humans", "pairs", len(human_only)))
    report = run_audit([inp], options=AuditOptions(n_boot=200))
    assert report.findings == []
    reasons = {k.analysis: k.reason for k in report.skipped}
    assert "no judge verdicts" in reasons["Self-preference"]
    assert "ratings" in reasons["Favoritism regression (ratings)"]


def test_familiarity_runs_when_perplexities_are_present() -> None:
    from recuse.simulate_familiarity import PlantedFamiliarity, simulate_familiarity

    sim = simulate_familiarity(
        {"j": PlantedFamiliarity(judge_slope=-1.5)}, human_slope=-0.5, n_prompts=150, seed=3
    )
    roster = Roster.builtin()
    for name in {*sim.pairs["model_a"], *sim.pairs["model_b"], "j"}:
        roster.add(Entry(str(name), str(name)))
    inp = AuditInput(
        "fam", "pairs", sim.pairs, Source("fam", "pairs", len(sim.pairs), judges=("j",))
    )
    report = run_audit([inp], options=AuditOptions(n_boot=200), roster=roster)
    (f,) = [f for f in report.findings if f.bias == "familiarity"]
    assert f.judge == "j" and f.significant and f.ci_low <= sim.true_value("j") <= f.ci_high
    assert f.verdict.startswith("prefers low-perplexity")


def test_constant_perplexities_are_skipped_not_zeroed(planted: Any) -> None:
    _, inputs, _ = planted
    frame = inputs[0].frame.assign(ppl_a=3.0, ppl_b=4.0)
    inp = replace_frame(inputs[0], frame)
    report = run_audit([inp], options=AuditOptions(n_boot=200), roster=Roster.builtin())
    assert not [f for f in report.findings if f.bias == "familiarity"]
    fam = [k for k in report.skipped if k.analysis == "Familiarity (perplexity)"]
    assert fam and all(k.reason.startswith("familiarity_bias:") for k in fam)


def replace_frame(inp: AuditInput, frame: pd.DataFrame) -> AuditInput:
    from dataclasses import replace

    return replace(inp, frame=frame)


def test_unknown_judge_and_bad_options_are_clear_errors(planted: Any) -> None:
    _, inputs, _ = planted
    with pytest.raises(ConfigError, match="judges present"):
        run_audit(inputs[:1], options=AuditOptions(judges=("nobody",)))
    with pytest.raises(ConfigError, match="level"):
        run_audit(inputs[:1], options=AuditOptions(level=1.5))
    with pytest.raises(InputError, match="nothing to audit"):
        run_audit([])


def test_load_input_errors(tmp_path: Path) -> None:
    with pytest.raises(DatasetNotFoundError, match="known datasets"):
        load_input("no-such-dataset")
    with pytest.raises(InputError, match="missing required column"):
        load_input(Path(__file__).parent / "malformed" / "pairs_missing_column.csv")
    with pytest.raises(InputError, match="not found"):
        load_input(tmp_path / "absent.csv")


def test_ratings_file_is_recognised(tmp_path: Path) -> None:
    sim = simulate_ratings(n_prompts=10, seed=0)
    path = tmp_path / "r.csv"
    sim.ratings.to_csv(path, index=False)
    inp = load_input(path, unknown_models="keep")
    assert inp.table == "ratings" and inp.source.rows == len(sim.ratings)


def test_judge_filter_keeps_one_judge(planted: Any) -> None:
    _, inputs, _ = planted
    report = run_audit(inputs[:1], options=AuditOptions(judges=("gpt-4",), n_boot=200),
                       roster=Roster.builtin())  # fmt: skip
    assert {f.judge for f in report.findings} == {"gpt-4"}
