"""`recuse audit`: files written, one-line errors with exit 2 and nothing written."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from recuse.cli import main
from recuse.metrics.bootstrap import Resampling
from recuse.simulate.pairs import PlantedBias, simulate_pairs


@pytest.fixture(scope="module")
def pairs_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sim = simulate_pairs(
        judges={"gpt-4": PlantedBias(self_preference=0.3, accuracy=0.65)},
        models=("gpt-4", "claude-v1", "vicuna-13b"),
        n_prompts=300,
        pairs_per_prompt=2,
        seed=5,
    )
    path = tmp_path_factory.mktemp("cli") / "my pairs.csv"
    sim.pairs.to_csv(path, index=False)
    return path


def test_audit_writes_html_json_and_csv(
    pairs_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    args = ["audit", str(pairs_csv), "--out", str(out), "--n-boot", "200", "--level", "0.9"]
    code = main([*args, "--verbose"])
    assert code == 0
    printed = capsys.readouterr().out
    # the compact table first: the planted self-preference is flagged, with its unit
    # ("material" once the calibrated estimate declares a threshold: +0.13 is beyond 0.05)
    assert printed.startswith("| judge ")
    (row,) = [r for r in printed.splitlines() if r.startswith("| gpt-4 ")]
    assert "| Self-preference (own-pick rate − predicted · no bias = 0) " in row
    assert row.rstrip(" |").endswith(("▲ flagged", "▲ material"))
    # --verbose: then every finding's sentence
    assert "gpt-4:" in printed and "picks its own answers more often than its" in printed
    # each flagged line says its unit and no-bias value, as the report's column headers do
    flagged = [line for line in printed.splitlines() if line.startswith("  - ")]
    assert flagged and all(" · no bias = " in line or " · chance = " in line for line in flagged)
    d = json.loads((out / "report.json").read_text("utf-8"))
    assert d["level"] == 0.9 and d["provenance"]["options"]["bootstrap resamples (n_boot)"] == 200
    assert d["provenance"]["sources"][0]["name"] == "my pairs.csv"
    # the summary's self-preference is the calibrated estimate; EO stays in its section
    top = [f for r in d["summary"] for f in r["findings"] if f["bias"].startswith("self_pref")]
    assert [f["bias"] for f in top] == ["self_preference_calibrated"]
    assert top[0]["significant"] and top[0]["ci_low"] > 0
    eo = [f for s in d["sections"] for f in s["findings"] if f["bias"] == "self_preference_eo"]
    # EO, not adjusted for competence, is shown for what it is: never a flag
    assert eo and eo[0]["ci_low"] > 0 and not eo[0]["headline"] and not eo[0]["flagged"]
    assert (out / "report.html").read_text("utf-8").startswith("<!DOCTYPE html>")
    csvs = {p.name for p in (out / "tables").glob("*.csv")}
    assert "self-preference-my-pairs-csv.csv" in csvs


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no-such-dataset"], "unknown dataset"),
        (["MALFORMED"], "missing required column"),
        (["PAIRS", "--judge", "nobody"], "judges present"),
        (["PAIRS", "--level", "2"], "--level"),
        (["PAIRS", "--only", "nonsense"], "unknown analysis 'nonsense'"),
        (["PAIRS", "--seed", "-1"], "--seed"),
        # 100 resamples cannot place the ends of a 99.9% interval (each tail holds 0.05)
        (["PAIRS", "--level", "0.999"], "at least 2000 bootstrap resamples"),  # --n-boot 200
        (
            ["PAIRS", "--only", "probes"],
            "--only probes: no chosen analysis applies to the data — Probes (no",
        ),
    ],
)
def test_errors_are_one_line_and_write_nothing(
    pairs_csv: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    out = tmp_path / "report"
    malformed = Path(__file__).parents[1] / "malformed" / "pairs_missing_column.csv"
    swap = {"PAIRS": str(pairs_csv), "MALFORMED": str(malformed)}
    args = [swap.get(a, a) for a in args]
    code = main(["audit", *args, "--out", str(out), "--n-boot", "200"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.startswith("recuse: error:") and message in err and "\n" not in err
    assert not out.exists()


@pytest.mark.parametrize("option", ["--table", "--figures", "--se"])
def test_choices_come_from_the_library_and_are_usage_errors(
    pairs_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str
) -> None:
    out = tmp_path / "report"
    code = main(["audit", str(pairs_csv), option, "nonsense", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and option in err and "nonsense" in err
    assert not out.exists()


def test_only_and_skip_choose_the_analyses(
    pairs_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    out = tmp_path / "report"
    code = main(["audit", str(pairs_csv), "--only", "position,verbosity", "--skip", "verbosity",
                 "--out", str(out), "--n-boot", "200"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    report = json.loads((out / "report.json").read_text("utf-8"))
    assert [s["id"] for s in report["sections"]] == ["position"]
    assert {k["analysis"] for k in report["skipped"]} <= {"Position"}
    assert report["provenance"]["options"]["analyses"] == "position, verbosity"


def test_analyses_lists_the_registry(capsys: pytest.CaptureFixture[str]) -> None:
    from recuse.analyses import REGISTRY

    assert main(["analyses"]) == 0
    text = capsys.readouterr().out
    for a in REGISTRY:
        assert f"{a.id} — {a.title}" in text and a.requires in text
        for b in a.biases:
            assert f"{b.key}: {b.unit}; {b.null_text}" in text
    assert "calibration_brier: " in text and "perfect = 0" in text  # not "no bias = 0"
    assert main(["analyses", "--json"]) == 0
    got = {a["id"]: a for a in json.loads(capsys.readouterr().out)}
    assert list(got) == [a.id for a in REGISTRY]
    pos = got["position"]["biases"][0]
    assert (pos["bias"], pos["null"], pos["material"]) == ("position", 0.5, 0.05)


def test_analyses_lists_the_values_each_bias_can_take(capsys: pytest.CaptureFixture[str]) -> None:
    """Each bias's line says its span (the text of the Bias that the gate checks a bound
    against), and --json gives it as numbers, an unbounded end as null."""
    from recuse.analyses import REGISTRY

    biases = {b.key: b for a in REGISTRY for b in a.biases}
    assert main(["analyses"]) == 0
    said = dict(
        re.findall(
            r"^  (\S+): .*; takes values in ([\[(][^;\n]*[\])])", capsys.readouterr().out, re.M
        )
    )
    assert said == {key: b.span_text for key, b in biases.items()}
    # by hand: a share, an agreement coefficient, Krippendorff's alpha, a regression slope
    assert (said["position"], said["agreement_kappa"]) == ("[0, 1]", "[\u22121, 1]")
    assert (said["agreement_alpha"], said["self_bias"]) == (
        "(\u2212\u221e, 1]",
        "(\u2212\u221e, \u221e)",
    )
    assert main(["analyses", "--json"]) == 0
    spans = {b["bias"]: b["span"] for a in json.loads(capsys.readouterr().out) for b in a["biases"]}
    assert spans.keys() == biases.keys()
    for key, span in spans.items():
        low, high = biases[key].span
        assert span["text"] == biases[key].span_text
        assert (span["low"] if span["low"] is not None else -math.inf) == low, key
        assert (span["high"] if span["high"] is not None else math.inf) == high, key
    assert spans["position"] == {"low": 0.0, "high": 1.0, "text": "[0, 1]"}
    assert (spans["agreement_alpha"]["low"], spans["self_bias"]["high"]) == (None, None)


def test_audit_of_a_file_with_perplexities_writes_the_familiarity_curves(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import pandas as pd

    from recuse.driver import load_input
    from recuse.metrics.familiarity import own_perplexity_gap, perplexity_curve
    from recuse.simulate.familiarity import PlantedFamiliarity, simulate_familiarity

    sim = simulate_familiarity(
        {"m1": PlantedFamiliarity(judge_slope=-1.5, own_gap=-0.4)},
        human_slope=-0.5,
        n_prompts=120,
        seed=4,
    )
    path = tmp_path / "ppl.csv"
    sim.pairs.to_csv(path, index=False)
    out = tmp_path / "report"
    args = ["audit", str(path), "--out", str(out), "--n-boot", "200", "--allow-unknown-models"]
    assert main(args) == 0
    assert "\n| m1 " in capsys.readouterr().out
    tables = {p.stem for p in (out / "tables").glob("*.csv")}
    assert {
        "perplexity-curve-ppl-csv", "perplexity-curve-by-self-ppl-csv",
        "own-perplexity-gap-ppl-csv", "log-perplexity-by-model-ppl-csv",
    } <= tables  # fmt: skip
    frame = load_input(path, unknown_models="keep").frame
    boot = {"boot": Resampling(level=0.9, n_boot=200, seed=0), "min_n": 10}
    from recuse.metrics.verbosity import for_files

    direct = perplexity_curve(frame, judge="m1", **boot)
    written = pd.read_csv(out / "tables" / "perplexity-curve-ppl-csv.csv")
    numbers = ["bin_low", "bin_high", "n", "n_clusters", "mean", "sd", "ci_low", "ci_high"]
    # the open bins' edges (-inf, inf in the frame) are written empty, as their words say
    assert written["bin_low"].isna().any() and written["bin_high"].isna().any()
    files = for_files(direct)
    pd.testing.assert_frame_equal(written[numbers], files[numbers], check_dtype=False)
    d = json.loads((out / "report.json").read_text("utf-8"))
    (gap,), _ = own_perplexity_gap(frame, judge="m1", **boot)
    (row,) = d["tables"]["own-perplexity-gap-ppl-csv"]["rows"]
    assert row["estimate"] == gap.estimate and row["ci_high"] == gap.ci_high < 0
    section = next(s for s in d["sections"] if s["id"] == "familiarity")
    assert "ppl-by-model-ppl-csv-m1" in [f["id"] for f in section["figures"]]


def test_the_judge_line_counts_quality_scores_apart_from_biases(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--verbose's "gpt-4: 0 of 5 estimated biases flagged" counted its agreement with
    the humans, a quality score never flagged, as a bias: on llmbar-mtbench with
    self-preference, position and agreement, each judge's line counts its biases and
    names its quality score beside them."""
    only = "self-preference,position,agreement"
    args = ["audit", "llmbar-mtbench", "--only", only, "--verbose", "--n-boot", "200"]
    assert main([*args, "--data-dir", str(shared_data), "--out", str(tmp_path / "r")]) == 0
    lines = capsys.readouterr().out.splitlines()
    said = {x.split(":", 1)[0]: x for x in lines if re.match(r"^[\w.-]+: \d+ of \d+ ", x)}
    # gpt-4: self-preference and position are biases; agreement a score
    assert said["gpt-4"] == (
        "gpt-4: 0 of 2 estimated biases flagged, beside 1 quality score (never flagged)"
    )
    assert said["gpt-3.5-turbo"].startswith("gpt-3.5-turbo: 1 of 2 estimated biases flagged,")
    assert said["palm-2"] == (
        "palm-2: 1 of 1 estimated biases flagged, beside 1 quality score (never flagged); "
        "1 not estimated (reasons in the report)"
    )


def test_a_judge_with_nothing_estimable_is_named_plainly(
    pairs_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Four pairs judged by claude-v1 support no bias: the CLI and the page say so
    instead of "0 of 0 biases flagged", and the reasons are in the report."""
    import pandas as pd

    pairs = pd.read_csv(pairs_csv)
    path = tmp_path / "with-tiny.csv"
    pd.concat([pairs, pairs.head(4).assign(judge="claude-v1")]).to_csv(path, index=False)
    out = tmp_path / "report"
    assert main(["audit", str(path), "--out", str(out), "--n-boot", "200", "--verbose"]) == 0
    printed = capsys.readouterr().out
    assert "0 of 0" not in printed
    table = [x for x in printed.splitlines() if x.startswith("| claude-v1 ")]
    assert table and all("| not estimated" in x or "nothing could be" in x for x in table)
    (line,) = [x for x in printed.splitlines() if x.startswith("claude-v1:")]
    d = json.loads((out / "report.json").read_text("utf-8"))
    (row,) = [r for r in d["summary"] if r["judge"] == "claude-v1"]
    assert row["nothing_estimated"] and not row["findings"] and row["not_estimated"]
    n = len(row["not_estimated"])
    assert line == f"claude-v1: nothing could be estimated ({n} reason(s) in the report)"
    assert re.search(r"^gpt-4: \d+ of \d+ estimated biases flagged", printed, re.M)
    (mrow,) = [r for r in d["summary_matrix"]["rows"] if r["judge"] == "claude-v1"]
    reasons = {m["reason"] for c in mrow["cells"].values() for m in c["not_estimated"]}
    assert reasons == {m["reason"] for m in row["not_estimated"]}
    from html import unescape

    page = unescape((out / "report.html").read_text("utf-8"))
    assert "nothing could be estimated \u2014 see reasons" in page and "0 of 0" not in page


def _snapshot_pairs(tmp_path: Path) -> Path:
    """gpt-4-0613 judges gpt-4-0314 (written gpt4_0314) against Claude 3 Opus: by hand,
    recall 9/10 when the human prefers gpt-4-0314 and 5/10 when Claude: EO 0.4."""
    human = [1] * 10 + [0] * 10
    picks = [1] * 9 + [0] + [1] * 5 + [0] * 5
    lines = ["item_id,prompt_id,model_a,model_b,human,judge,p_a_first,p_a_second"]
    lines += [
        f"i{k},p{k},gpt4_0314,claude-3-opus-20240229,{human[k]},gpt-4-0613,{picks[k]},{picks[k]}"
        for k in range(20)
    ]
    path = tmp_path / "snapshots.csv"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


@pytest.mark.parametrize(
    ("scope", "estimated", "not_estimated"),
    [
        (None, "family_preference_eo", "self_preference_eo"),  # another snapshot: family
        ("line", "self_preference_eo", "family_preference_eo"),  # the whole line is self
    ],
)
def test_self_scope_decides_whether_another_snapshot_is_self_or_family(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    scope: str | None,
    estimated: str,
    not_estimated: str,
) -> None:
    out = tmp_path / "report"
    args = ["audit", str(_snapshot_pairs(tmp_path)), "--n-boot", "200", "--out", str(out)]
    args += ["--only", "self-preference,family-preference"]
    args += ["--self-scope", scope] if scope else []
    code = main(args)
    assert code == 0, capsys.readouterr().err
    report = json.loads((out / "report.json").read_text("utf-8"))
    found = {f["bias"]: f for s in report["sections"] for f in s["findings"]}
    assert found[estimated]["estimate"] == pytest.approx(0.4)
    assert found[estimated]["n"] == 20
    assert not_estimated not in found
    assert report["provenance"]["options"]["self (--self-scope / self_scope=)"].startswith(
        "a judge's own answers are those of " + ("every model" if scope else "its exact")
    )


def test_an_unknown_self_scope_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(_snapshot_pairs(tmp_path))
    code = main(["audit", path, "--self-scope", "family", "--out", str(tmp_path / "r")])
    assert code == 2 and "family" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_profile_names_where_the_time_went(
    pairs_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--profile` prints each step, each bootstrap metric with its resamples and each
    analysis with seconds; the per-metric seconds add up to at most the bootstrap's."""
    code = main(["audit", str(pairs_csv), "--out", str(tmp_path / "r"), "--n-boot", "100",
                 "--profile"])  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    lines = printed.split("where the time went", 1)[1].splitlines()
    boot = [ln for ln in lines if "pairwise metrics, bootstrap" in ln]
    metric = re.compile(r"^\s+([\d.]+) s\s+(\w+): 100 resamples \(my pairs\.csv\)$")
    per_metric = {m[2]: float(m[1]) for ln in lines if (m := metric.match(ln))}
    assert len(boot) == 1 and "self_preference_calibrated" in per_metric
    assert "position_consistency" in per_metric
    assert sum(per_metric.values()) <= float(boot[0].split()[0]) + 0.02  # rounding
    assert any(ln.endswith("(self-preference)") for ln in lines), lines
    # an analysis that times no step of its own is still listed with its whole build:
    # the certification (one figure per judge: 5.2 s of a 30-judge audit) was missing
    assert any(ln.endswith("Certification (my pairs.csv)") for ln in lines), lines
    assert any(ln.endswith("(certification)") for ln in lines), lines


def test_one_analysis_not_made_of_a_labels_only_table_is_said_in_the_singular(
    pairs_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--only verbosity` on a table of labels only: one analysis not made (verbosity's
    judge part), and the data line read "(1 analyses not made"."""
    import pandas as pd

    verdicts = ["judge", "p_a", "p_a_first", "p_a_second", "status_first", "status_second"]
    frame = pd.read_csv(pairs_csv).drop(columns=verdicts, errors="ignore")
    labels = tmp_path / "labels.csv"
    frame.drop_duplicates("item_id").to_csv(labels, index=False)
    args = ["audit", str(labels), "--only", "verbosity", "--n-boot", "100"]
    assert main([*args, "--out", str(tmp_path / "r")]) == 0
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert len([s for s in report["skipped"] if s["dataset"] == labels.name]) == 1
    (line,) = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("data: ")]
    assert "judge bias needs verdicts (1 analysis not made; reasons in the report)" in line


def test_one_inputs_estimates_not_made_are_counted_once(
    pairs_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A one-input audit printed its count of estimates not made twice, on its data
    line and again on a line of its own: it is said once, on the input's line, with
    where the reasons are."""
    assert main(["audit", str(pairs_csv), "--out", str(tmp_path / "r"), "--n-boot", "100"]) == 0
    n = len(json.loads((tmp_path / "r" / "report.json").read_text())["skipped"])
    assert n > 1
    said = [ln for ln in capsys.readouterr().out.splitlines() if "analyses not made" in ln]
    assert len(said) == 1 and said[0].startswith("data: my pairs.csv (pairs, ")
    assert said[0].endswith(f"; {n} estimates or analyses not made (reasons in the report)")


def test_every_source_is_named_with_what_was_done_with_it(
    pairs_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A source of human labels only (hh-rlhf beside judged data in `make demo`) left no
    trace in the terminal but a count of estimates not made; alone it read "No bias
    could be estimated". Each source now has a line: its table and rows, whose verdicts
    it holds, and what was done with it."""
    import pandas as pd

    labels = tmp_path / "labels only.csv"
    verdicts = ["judge", "p_a", "p_a_first", "p_a_second", "status_first", "status_second"]
    frame = pd.read_csv(pairs_csv).drop(columns=verdicts, errors="ignore")
    frame = frame.drop_duplicates("item_id")
    frame.to_csv(labels, index=False)
    code = main(["audit", str(pairs_csv), str(labels), "--out", str(tmp_path / "r"),
                 "--n-boot", "100"])  # fmt: skip
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    said = {ln.split(" (")[0]: ln for ln in lines if ln.startswith("data: ")}
    assert set(said) == {"data: my pairs.csv", "data: labels only.csv"}
    rows = len(frame)
    # with the answers' lengths, the labels give the humans' own length preference
    # (the verbosity baseline), no judge's bias
    assert said["data: labels only.csv"].startswith(
        f"data: labels only.csv (pairs, {rows:,} rows): human labels only — humans' "
        "preference for the longer answer: "
    )
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    own = [s for s in report["skipped"] if s["dataset"] == "labels only.csv"]
    assert (
        f"judge bias needs verdicts ({len(own)} analyses not made" in said["data: labels only.csv"]
    )
    # without them, there is nothing to estimate from the labels
    bare = tmp_path / "bare labels.csv"
    gone = ["len_a", "len_b", "response_a", "response_b"]
    frame.drop(columns=gone, errors="ignore").to_csv(bare, index=False)
    assert main(["audit", str(bare), "--out", str(tmp_path / "r3"), "--n-boot", "100"]) == 0
    (line,) = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("data: ")]
    assert line.startswith(
        f"data: bare labels.csv (pairs, {rows:,} rows): human labels only, no judge verdicts"
        " — nothing to estimate from it ("
    )
    assert "analyses need verdicts, ratings, probes or perplexities" in line
    # two inputs: the sum is said apart from their lines, as a sum (a bare "N estimates
    # or analyses not made" after the two lines' own counts read as a third count)
    n_all = len(report["skipped"])
    assert f"{n_all} estimates or analyses not made in all (reasons in the report)" in lines
    judged = said["data: my pairs.csv"]
    # the table's rows with an estimate (less its header and the biases not estimated)
    n_table = sum(ln.startswith("| ") and "not estimated" not in ln for ln in lines) - 1
    assert f"verdicts of 1 judge — {n_table} headline estimates in the table" in judged
    # alone, it is named too (the table gives way to the one sentence)
    assert main(["audit", str(labels), "--out", str(tmp_path / "r2"), "--n-boot", "100"]) == 0
    out = capsys.readouterr().out
    assert "No bias could be estimated" in out and "data: labels only.csv (pairs," in out


def test_a_source_whose_estimates_are_outside_the_table_says_where_they_are(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """AlpacaEval's line read "nothing estimated" right above its leaderboard's own
    rates (`make demo`): a source whose estimates are all outside the summary table
    names the sections that hold them."""
    code = main(["audit", "alpaca-eval", "--only", "leaderboard", "--data-dir", str(shared_data),
                 "--out", str(tmp_path / "r"), "--n-boot", "100"])  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    (line,) = [ln for ln in out.splitlines() if ln.startswith("data: alpaca-eval")]
    assert "nothing estimated" not in line
    assert "no headline estimate in the table; estimates in: Bias-adjusted leaderboard" in line
    assert "AlpacaEval, annotator gpt-4" in out  # the leaderboard's rates, after it
    # nor does the sentence in place of the empty table say nothing was estimated
    assert "No bias could be estimated" not in out
    empty = "No headline bias for the summary table from these inputs; the estimates made"
    assert f"{empty} are in: Bias-adjusted leaderboard" in out


def test_an_empty_summary_table_beside_estimates_says_where_they_are(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--only self-preference-ladder`` read "No bias could be estimated from these
    inputs (reasons: --verbose and the report)" above the data line's "estimates in:
    Self-preference, taken apart", with nothing skipped and --verbose given: the
    sentence now names the sections that hold the estimates, in the terminal and the
    HTML page, and points to reasons only where an analysis was not made: here the
    parts of Llama-2 and PaLM-2, none of whose answers the pairs hold (a skip each, with
    the calibrated headline's reason)."""
    out_dir = tmp_path / "r"
    args = ["audit", "llmbar-mtbench", "--only", "self-preference-ladder", "--verbose"]
    code = main([*args, "--data-dir", str(shared_data), "--out", str(out_dir), "--n-boot", "100"])
    assert code == 0
    out = capsys.readouterr().out
    said = "No headline bias for the summary table from these inputs; the estimates made"
    where = "(reasons: --verbose and the report)"
    assert f"{said} are in: Self-preference, taken apart {where}." in out.splitlines()
    assert "No bias could be estimated" not in out
    skipped = json.loads((out_dir / "report.json").read_text("utf-8"))["skipped"]
    assert {(s["judge"], s["analysis"]) for s in skipped} == {
        ("llama-2-70b-chat", "Self-preference, taken apart"),
        ("palm-2", "Self-preference, taken apart"),
    }
    html = (out_dir / "report.html").read_text("utf-8")
    assert "No bias could be estimated" not in html
    assert "the estimates made are in: Self-preference, taken apart (the skipped" in html


def test_the_summary_table_rows_stay_whole_on_a_narrow_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The summary is a pipe table (Markdown's): a row broken over two lines breaks the
    table. With COLUMNS=40 and a 76-character judge name, each row keeps the header's
    cells on one line and the name whole (nothing in the summary wraps; the audit
    writes no Markdown file, only report.html, report.json and tables/)."""
    from recuse.simulate.selective import simulate_selective

    long = "judge-" + "x" * 70
    pairs = simulate_selective(300, seed=5).pairs.assign(judge=long)
    pairs.to_csv(tmp_path / "p.csv", index=False)
    monkeypatch.setenv("COLUMNS", "40")
    out = tmp_path / "out"
    args = ["audit", str(tmp_path / "p.csv"), "--only", "position", "--n-boot", "100"]
    assert main([*args, "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [ln for ln in lines if ln.startswith("|")]
    assert len(rows) == 3  # header, rule, the judge's row
    assert {len(re.findall(r"(?<!\\)\|", ln)) for ln in rows} == {6}  # 5 cells each
    bias = "Position (share of win to first · no bias = 0.5)"
    assert [c.strip() for c in rows[2].split("|")[1:3]] == [long, bias]
    assert not [p for p in out.rglob("*") if p.suffix.lower() in (".md", ".markdown")]


@pytest.mark.parametrize("name", ["report.json", "tables/position-a-csv.csv"])
def test_an_input_named_like_a_file_the_report_writes_is_refused(
    pairs_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """`--out DIR` with an input at DIR/report.json (pairs as JSON records) or at the
    name of one of its tables (tables/position-a-csv.csv, the position table of an input
    a.csv) replaced the input with the report, exit 0: now exit 2, nothing written."""
    out = tmp_path / "out"
    src = out / name
    src.parent.mkdir(parents=True)
    pairs = pd.read_csv(pairs_csv).head(120)
    if name.endswith(".json"):
        pairs.to_json(src, orient="records")
        data = [str(src)]
    else:  # the table is named after the other input, so known only after the analyses
        pairs.to_csv(tmp_path / "a.csv", index=False)
        pairs.assign(judge="claude-v1").to_csv(src, index=False)
        data = [str(tmp_path / "a.csv"), str(src)]
    before = src.read_bytes()
    code = main(["audit", *data, "--out", str(out), "--only", "position", "--n-boot", "100"])
    err = capsys.readouterr().err
    assert code == 2, err
    line = err.splitlines()[-1]
    assert line == (
        f"recuse: error: --out {out / name}: is the input {src} — writing it would replace "
        "the data read; give --out another folder, or move the input"
    )
    assert "Traceback" not in err and src.read_bytes() == before
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == sorted(
        {name, *(["tables"] if "/" in name else [])}
    )
    code = main(["audit", *data, "--out", str(tmp_path / "elsewhere"), "--only", "position",
                 "--n-boot", "100"])  # fmt: skip
    assert code == 0 and (tmp_path / "elsewhere" / name).is_file()  # the name it would write
