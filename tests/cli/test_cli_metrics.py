"""`recuse metrics pairs`: table output, JSON / CSV files, and one-line errors with exit 2."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from recuse.cli import main
from recuse.simulate.pairs import simulate_pairs


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def pairs_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sim") / "pairs.csv"
    simulate_pairs(n_prompts=60, pairs_per_prompt=3, seed=1).pairs.to_csv(path, index=False)
    return path


REPO = Path(__file__).parents[2]
FAST = ("--n-boot", "100", "--min-n", "5")


def test_table_and_json(
    capsys: pytest.CaptureFixture[str], pairs_csv: Path, tmp_path: Path
) -> None:
    out = tmp_path / "bias.json"
    code, text, err = run(capsys, "metrics", "pairs", str(pairs_csv), *FAST, "--out", str(out))
    assert code == 0, err
    assert "self_preference_eo" in text and "gpt-4" in text and "claude-v1" in text
    assert f"wrote {out}" in text
    data = json.loads(out.read_text())
    assert data["settings"]["n_boot"] == 100 and data["settings"]["level"] == 0.9
    metrics = {(r["judge"], r["metric"]) for r in data["results"]}
    assert ("gpt-4", "flip_rate") in metrics
    assert set(data["curves"]) >= {"human_alignment_curve", "human_verbosity_curve"}
    first = data["results"][0]
    assert first["ci_low"] <= first["estimate"] <= first["ci_high"]


def test_csv_and_options(
    capsys: pytest.CaptureFixture[str], pairs_csv: Path, tmp_path: Path
) -> None:
    out = tmp_path / "bias.csv"
    code, text, err = run(
        capsys, "metrics", "pairs", str(pairs_csv), *FAST, "-j", "gpt-4", "-m", "flip_rate",
        "-m", "verbosity_bias", "--level", "0.8", "--verdict", "pick", "-o", str(out),
    )  # fmt: skip
    assert code == 0, err
    frame = pd.read_csv(out)
    assert frame["metric"].tolist() == ["verbosity_bias", "flip_rate"]
    assert (frame["judge"] == "gpt-4").all() and (frame["level"] == 0.8).all()
    assert (frame["n_boot"] == 100).all()
    # the spreadsheet copy written beside it is named, not left to be found
    copy = tmp_path / "for-spreadsheets" / "bias.csv"
    assert copy.is_file() and f"{copy} (for spreadsheets" in " ".join(text.split())


def test_out_naming_the_input_file_is_refused(
    capsys: pytest.CaptureFixture[str], pairs_csv: Path, tmp_path: Path
) -> None:
    """`recuse metrics pairs pairs.csv --out pairs.csv` replaced the data with the
    results (exit 0); now exit 2 before any work, the file untouched."""
    src = tmp_path / "mine.csv"
    src.write_bytes(pairs_csv.read_bytes())
    code, _, err = run(capsys, "metrics", "pairs", str(src), *FAST, "--out",
                       str(tmp_path / "." / "mine.csv"))  # fmt: skip
    assert code == 2 and "is the input" in err
    assert src.read_bytes() == pairs_csv.read_bytes()


@pytest.mark.parametrize("command", [["metrics", "pairs"], ["certify"]])
def test_out_naming_a_file_of_the_named_dataset_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: list[str]
) -> None:
    """`recuse metrics pairs llmbar --out DATA_DIR/llmbar/…/dataset.json` replaced the
    dataset's file with the results (exit 0): the check knew the input by its name
    only. Refused before any work now, the file untouched."""
    from recuse.data import registry

    held = tmp_path / "data" / registry.get("llmbar").folder / "Natural" / "dataset.json"
    held.parent.mkdir(parents=True)
    held.write_text("[]", encoding="utf-8")
    code, _, err = run(capsys, *command, "llmbar", "--data-dir", str(tmp_path / "data"),
                       "--out", str(held))  # fmt: skip
    assert code == 2 and "is a file in the input folder" in err, err
    assert held.read_text(encoding="utf-8") == "[]"


def test_dataset_name_and_judge_alias(
    capsys: pytest.CaptureFixture[str], shared_data: Path
) -> None:
    code, text, err = run(
        capsys, "metrics", "pairs", "llmbar-mtbench", "--data-dir", str(shared_data),
        "-j", "ChatGPT", "-m", "self_preference_eo", "--n-boot", "200",
    )  # fmt: skip
    assert code == 0, err
    assert "gpt-3.5-turbo" in text and "+0.21 " in text


#: GPT-4's calibrated self-preference beside its EO on LLMBar MT-Bench (--data-dir added)
GPT4_CALIBRATED_AND_EO = (
    "metrics", "pairs", "llmbar-mtbench", "-j", "gpt-4", "-m", "self_preference_calibrated",
    "-m", "self_preference_eo", "--n-boot", "100",
)  # fmt: skip


def test_the_calibrated_intervals_say_how_they_were_resampled(
    capsys: pytest.CaptureFixture[str], shared_data: Path
) -> None:
    """The terminal table said nothing of the calibrated interval's resampling (one
    Newton step or an exact refit per resample), which moves the interval slightly; only
    the method of --out did. A line under the table says it, and that the table's size
    decides (LLMBar MT-Bench's 4 judges: one step, whichever judges are chosen)."""
    code, text, err = run(capsys, *GPT4_CALIBRATED_AND_EO, "--data-dir", str(shared_data))
    assert code == 0, err
    line = next(t for t in text.splitlines() if t.startswith("self_preference_calibrated "))
    assert line.startswith("self_preference_calibrated intervals: one Newton step")
    assert "the whole table's size decides, --judge or not" in line
    assert not any(t.startswith("self_preference_eo intervals") for t in text.splitlines())


def test_a_part_fixed_by_construction_shows_no_interval_or_n_in_the_table(
    capsys: pytest.CaptureFixture[str], shared_data: Path
) -> None:
    """GPT-4's tie part on LLMBar MT-Bench (no human tie: none of its own pairs is on it)
    is 0 by construction. The table read "+0.000 [0.000, 0.000]" with n 51 from 73
    prompts, a measurement of its own pairs, where print(result), the JSON and the
    audit say it has no interval and no n; a measured part keeps its numbers."""
    code, text, err = run(
        capsys, "metrics", "pairs", "llmbar-mtbench", "--data-dir", str(shared_data),
        "-j", "gpt-4", "-m", "calibrated_rung_human_neither",
        "-m", "calibrated_rung_human_prefers_own", "--n-boot", "100",
    )  # fmt: skip
    assert code == 0, err
    words = " ".join(text.replace("│", " ").split())
    assert "0 by construction none: not a measurement !1 0 none none" in words, text
    assert "[0.000, 0.000]" not in words and "+0.000" not in words, text
    assert "[−0.0" in words and " 51 73 " in words, text  # the measured part's


def test_a_part_fixed_by_construction_has_no_n_in_the_json_or_csv(
    capsys: pytest.CaptureFixture[str], shared_data: Path, tmp_path: Path
) -> None:
    """GPT-4's tie part on LLMBar MT-Bench is fixed by construction: report.json writes
    its n and clusters null, but ``--out x.json`` wrote n 51 and n_clusters 73 (its own
    pairs and all its prompts, a measured part's numbers) and the CSV the same, and the
    table's line "… n: the pairs holding the judge's own answer" was said of it where
    its n cell reads none. Null (empty in the CSV) now; the measured part keeps 51 and
    73."""
    head = ["metrics", "pairs", "llmbar-mtbench", "--data-dir", str(shared_data), "-j",
            "gpt-4", "-m", "calibrated_rung_human_neither", "-m",
            "calibrated_rung_human_prefers_own", "--n-boot", "100"]  # fmt: skip
    code, text, err = run(capsys, *head, "--out", str(tmp_path / "m.json"))
    assert code == 0, err
    got = json.loads((tmp_path / "m.json").read_text("utf-8"))["results"]
    by = {r["metric"]: r for r in got}
    fixed, measured = by["calibrated_rung_human_neither"], by["calibrated_rung_human_prefers_own"]
    assert fixed["fixed_by_construction"] is True
    assert (fixed["n"], fixed["n_clusters"], fixed["n_of"]) == (None, None, None)
    assert (measured["n"], measured["n_clusters"]) == (51, 73)
    assert not any(t.startswith("calibrated_rung_human_neither n:") for t in text.splitlines())
    assert any(t.startswith("calibrated_rung_human_prefers_own n:") for t in text.splitlines())
    code, _, err = run(capsys, *head, "--out", str(tmp_path / "m.csv"))
    assert code == 0, err
    frame = pd.read_csv(tmp_path / "m.csv", dtype=str, keep_default_na=False)
    cells = frame.set_index("metric")[["n", "n_clusters"]]
    assert list(cells.loc["calibrated_rung_human_neither"]) == ["", ""]
    assert list(cells.loc["calibrated_rung_human_prefers_own"]) == ["51", "73"]


def test_the_calibrated_n_and_its_prompts_are_said(
    capsys: pytest.CaptureFixture[str], shared_data: Path
) -> None:
    """GPT-4's calibrated self-preference read n 51 from 73 prompts (its own pairs; the
    prompts of all its pairs, which the interval resamples) beside EO's 51 from 37, with
    nothing saying why the prompts outnumber the pairs."""
    code, text, err = run(capsys, *GPT4_CALIBRATED_AND_EO, "--data-dir", str(shared_data))
    assert code == 0, err
    row = next(t for t in text.splitlines() if "self_preference_calibrated │" in t)
    assert row.replace("│", " ").split()[-2:] == ["51", "73"]
    words = " ".join(text.split())
    assert (
        "self_preference_calibrated n: the pairs holding the judge's own answer; prompts:"
        " those of all the judge's pairs, which its interval resamples"
    ) in words
    assert "self_preference_eo n:" not in words


def test_the_calibrated_n_is_said_in_the_json_and_csv_too(
    capsys: pytest.CaptureFixture[str], shared_data: Path, tmp_path: Path
) -> None:
    """The line under the table said what the calibrated n counts; the JSON and CSV
    written with -o gave n 51 beside n_clusters 73 with nothing saying why. Each
    result carries ``n_of`` (null / empty where n counts all the judge's rows), the
    count it names equal to n in ``counts``."""
    for name in ("m.json", "m.csv"):
        code, _, err = run(
            capsys, "metrics", "pairs", "llmbar-mtbench", "--data-dir", str(shared_data),
            "-j", "gpt-4", "-m", "self_preference_calibrated", "-m", "self_preference_eo",
            "--n-boot", "100", "-o", str(tmp_path / name),
        )  # fmt: skip
        assert code == 0, err
    results = {r["metric"]: r for r in json.loads((tmp_path / "m.json").read_text())["results"]}
    cal, eo = results["self_preference_calibrated"], results["self_preference_eo"]
    assert cal["n_of"] == "pairs holding the judge's own answer" and eo["n_of"] is None
    assert (cal["n"], cal["n_clusters"], cal["counts"][cal["n_of"]]) == (51, 73, 51)
    frame = pd.read_csv(tmp_path / "m.csv").set_index("metric")
    assert frame.loc["self_preference_calibrated", "n_of"] == cal["n_of"]
    assert pd.isna(frame.loc["self_preference_eo", "n_of"])


def test_a_negative_number_is_written_as_the_audit_writes_it(
    capsys: pytest.CaptureFixture[str], shared_data: Path
) -> None:
    """The metrics table wrote GPT-4's calibrated estimate as -0.036 (ASCII hyphen)
    where the audit's table writes −0.04 (U+2212): the same sign, one way."""
    code, text, err = run(
        capsys, "metrics", "pairs", "llmbar-mtbench", "--data-dir", str(shared_data),
        "-j", "gpt-4", "-m", "self_preference_calibrated", "--n-boot", "100",
    )  # fmt: skip
    assert code == 0, err
    row = next(t for t in text.splitlines() if t.startswith("│ gpt-4"))
    assert "\u2212" in row and "-" not in row.replace("gpt-4", "")


def test_judge_outside_the_roster_in_another_case(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`-j` reads a judge name as `recuse audit -j` does: a judge the roster lacks is
    found in another case (the same numbers as its exact name)."""
    frame = simulate_pairs(n_prompts=40, pairs_per_prompt=3, seed=2).pairs
    frame = frame[frame["judge"] == "gpt-4"].assign(judge="MyJudge-7B")
    path = tmp_path / "mine.csv"
    frame.to_csv(path, index=False)
    shown = []
    for name in ("MyJudge-7B", "myjudge-7b"):
        out = tmp_path / f"{name}.json"
        code, _, err = run(capsys, "metrics", "pairs", str(path), *FAST, "-j", name,
                           "-m", "flip_rate", "-o", str(out))  # fmt: skip
        assert code == 0, err
        shown.append([(r["judge"], r["estimate"]) for r in json.loads(out.read_text())["results"]])
    assert shown[0] == shown[1] and shown[0][0][0] == "MyJudge-7B"


@pytest.mark.parametrize(
    ("option", "value"),
    [("--verdict", "soft"), ("--unit", "lines"), ("--human-ties", "x"), ("--judge-ties", "x")],
)
def test_choices_come_from_the_library_literals(
    capsys: pytest.CaptureFixture[str], pairs_csv: Path, tmp_path: Path, option: str, value: str
) -> None:
    out = tmp_path / "bias.json"
    code, _, err = run(capsys, "metrics", "pairs", str(pairs_csv), option, value, "-o", str(out))
    assert code == 2 and option in err and value in err  # a usage error naming the choices
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--level", "90"), "--level = 90.0: must be in [0.5, 1), e.g. 0.9"),
        (("--level", "0.3"), "--level = 0.3: must be in [0.5, 1), e.g. 0.9"),
        (("--level", "nan"), "--level = nan: must be in [0.5, 1)"),
        (("-m", "halo"), "--metric 'halo' is unknown"),
        (("-j", "palm-2"), "judge 'palm-2' is not in the data"),
        (("--n-boot", "3"), "--n-boot = 3: must be an integer of at least 10, e.g. 2000"),
        (
            ("--n-boot", "100000000"),
            "--n-boot = 100000000: must be at most 1,000,000: the bootstrap would need about "
            "3 GiB of memory",
        ),
        (("--min-n", "0"), "--min-n = 0: must be a positive integer, e.g. 5"),
        (("--seed", "-1"), "--seed = -1: must be 0 or more"),
    ],
)
def test_bad_options_write_nothing(
    capsys: pytest.CaptureFixture[str],
    pairs_csv: Path,
    tmp_path: Path,
    args: tuple[str, ...],
    message: str,
) -> None:
    out = tmp_path / "bias.json"
    code, _, err = run(capsys, "metrics", "pairs", str(pairs_csv), *args, "-o", str(out))
    assert code == 2
    assert err.startswith("recuse: error:") and message in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()
    assert not list(tmp_path.iterdir())


def test_bad_inputs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "metrics", "pairs", "no-such-dataset")
    assert code == 2 and "unknown dataset 'no-such-dataset'" in err
    code, _, err = run(capsys, "metrics", "pairs", str(tmp_path / "missing.csv"))
    assert code == 2 and "missing.csv" in err
    broken = tmp_path / "broken.csv"
    broken.write_text("prompt_id,human\n1,a\n")
    code, _, err = run(capsys, "metrics", "pairs", str(broken))
    assert code == 2 and "broken.csv" in err and "missing required column" in err
    broken.write_text("item_id,prompt_id\n1,1\n")  # no labels, no verdicts
    code, _, err = run(capsys, "metrics", "pairs", str(broken))
    assert code == 2 and "no judge verdicts (no row names a judge)" in err
    code, _, err = run(capsys, "metrics", "pairs", str(broken), "-o", str(tmp_path / "x.txt"))
    assert code == 2 and "must end in .json or .csv" in err
    code, _, err = run(capsys, "metrics", "pairs", str(broken), "-o", "/no/such/dir/x.json")
    assert code == 2 and "does not exist" in err


def test_csv_carries_p_values_and_warnings_like_the_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The CSV holds what the JSON and the terminal show next to each number: on the
    committed JudgeBench pairs, SmolLM2-135M's calibrated estimate is marked
    'extrapolated competence' (its method: a percentile interval)."""
    pairs = Path(__file__).resolve().parents[2] / "examples/output/familiarity_judgebench_pairs.csv"
    args = ("metrics", "pairs", str(pairs), "--n-boot", "100", "-m", "self_preference_calibrated")
    files = {ext: tmp_path / f"bias.{ext}" for ext in ("csv", "json")}
    for path in files.values():
        code, _, err = run(capsys, *args, "-o", str(path))
        assert code == 0, err
    frame = pd.read_csv(files["csv"], keep_default_na=False)
    rows = {r["judge"]: r for r in json.loads(files["json"].read_text())["results"]}
    assert (
        set(frame["judge"])
        == set(rows)
        == {
            "smollm2-135m-instruct",
            "qwen2.5-coder-0.5b-instruct",
        }
    )
    for r in frame.to_dict("records"):
        want = rows[r["judge"]]
        assert r["p_value"] == pytest.approx(want["p_value"], abs=1e-12)
        assert r["std_error"] == pytest.approx(want["std_error"], abs=1e-12)
        assert r["warnings"] == "; ".join(want["warnings"])
        assert "percentile interval" in r["method"]
    smol = frame[frame["judge"] == "smollm2-135m-instruct"]["warnings"].item()
    assert smol.startswith("extrapolated competence: its own pairs are 1.03–1.17 apart")


def test_every_number_says_its_no_bias_value(
    capsys: pytest.CaptureFixture[str], pairs_csv: Path, tmp_path: Path
) -> None:
    """The table and the JSON give each metric's no-bias value (0.5 for the first-position
    rate, 1 for position consistency, 0 for the differences) and rates are printed
    unsigned; before, the table showed '+0.510' for a rate whose no-bias value is 0.5 and
    no null anywhere (position consistency's p-value was against 0)."""
    out = tmp_path / "bias.json"
    code, text, err = run(
        capsys, "metrics", "pairs", str(pairs_csv), *FAST, "-j", "gpt-4", "-m", "flip_rate",
        "-m", "first_position_rate", "-m", "position_consistency", "-m", "self_preference_eo",
        "--out", str(out),
    )  # fmt: skip
    assert code == 0, err
    rows = {line.split("│")[2].strip(): line.split("│") for line in text.splitlines()
            if line.startswith("│ gpt-4")}  # fmt: skip
    header = next(line for line in text.splitlines() if "metric" in line and "estimate" in line)
    assert "no bias" in header
    nulls = {m: cells[5].strip() for m, cells in rows.items()}
    assert nulls == {"self_preference_eo": "0", "flip_rate": "0",
                     "first_position_rate": "0.5", "position_consistency": "1"}  # fmt: skip
    assert not rows["first_position_rate"][3].strip().startswith("+")
    assert rows["self_preference_eo"][3].strip()[0] in "+\u2212"  # the minus as the audit writes it
    got = {r["metric"]: r["null"] for r in json.loads(out.read_text())["results"]}
    assert got == {"self_preference_eo": 0.0, "flip_rate": 0.0,
                   "first_position_rate": 0.5, "position_consistency": 1.0}  # fmt: skip
    # and the CSV, beside the p-value it is the null of
    csv = tmp_path / "bias.csv"
    assert run(capsys, "metrics", "pairs", str(pairs_csv), *FAST, "-j", "gpt-4",
               "-m", "first_position_rate", "-o", str(csv))[0] == 0  # fmt: skip
    frame = pd.read_csv(csv)
    assert frame["null"].tolist() == [0.5]
    assert list(frame.columns).index("null") == list(frame.columns).index("p_value") + 1


def test_other_tools_files_are_read_as_audit_reads_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A FastChat pair file (README: recognised from the file) gives the position
    metrics of its judge; before, metrics read it as a plain table and said 'column
    judge: ... flatten the file'."""
    fastchat = Path(__file__).resolve().parents[1] / "data/importers/gpt-4_pair.jsonl"
    code, text, err = run(capsys, "metrics", "pairs", str(fastchat), "--n-boot", "100",
                          "--min-n", "1", "-m", "first_position_rate")  # fmt: skip
    assert code == 0, err
    assert "first_position_rate" in text and "gpt-4" in text
    # a column mapping does not apply to a tool's fixed columns
    code, _, err = run(capsys, "metrics", "pairs", str(fastchat), "--map", "a=b")
    assert code == 2 and "does not apply to a fastchat-pair file" in err


def test_a_level_its_resamples_cannot_resolve_is_refused(
    capsys: pytest.CaptureFixture[str], pairs_csv: Path
) -> None:
    """A 99.9% interval from 100 resamples was the range of the resamples, printed as a
    99.9% interval; now the level needs 2/(1 - level) resamples (2000 here)."""
    code, _, err = run(capsys, "metrics", "pairs", str(pairs_csv), "--level", "0.999",
                       "--n-boot", "100")  # fmt: skip
    assert code == 2 and "--level 0.999 needs at least 2000 bootstrap resamples" in err
    code, _, err = run(capsys, "metrics", "pairs", str(pairs_csv), "-j", "gpt-4", "-m",
                       "flip_rate", "--level", "0.99", "--n-boot", "200")  # fmt: skip
    assert code == 0, err


def test_the_resampling_line_reads_the_result_s_refit_not_its_method_text() -> None:
    """Before: the line under the table was found by searching each result's ``method``
    for the calibrated estimate's words (``resampling_of``), so a method worded
    otherwise (reworded for a reference, or edited) lost the line, and any method
    quoting the words gained one. It reads ``MetricResult.refit``, set where the
    resampling is chosen; the words printed are the same."""
    from io import StringIO

    from rich.console import Console

    from recuse.cli.metrics import _print_results
    from recuse.metrics.result import MetricResult
    from recuse.metrics.summary import PairwiseBias

    def result(metric: str, method: str, **kw: object) -> MetricResult:
        return MetricResult(metric=metric, estimate=0.1, ci_low=0.0, ci_high=0.2, level=0.9,
                            n=40, n_clusters=20, method=method, judge="j", n_boot=100,
                            **kw)  # type: ignore[arg-type]  # fmt: skip

    quoted = "… the interval refits the strengths and κ, β, τ exactly in every resample"
    results = (
        result("self_preference_calibrated", "worded otherwise", refit="one-step"),
        result("family_preference_calibrated", "worded otherwise", refit="exact"),
        result("self_preference_eo", quoted),  # quotes the words, refits nothing
    )
    out = StringIO()
    _print_results(Console(file=out, width=250), PairwiseBias(results, ()), title="t")
    lines = [t for t in out.getvalue().splitlines() if " intervals: " in t]
    tail = (" (the whole table's size decides, --judge or not, as in recuse audit; a file "
            "of fewer judges may be resampled the other way: a slightly other "
            "interval)")  # fmt: skip
    assert lines == [
        "self_preference_calibrated intervals: one Newton step from the full-sample fit in "
        "every resample" + tail,
        "family_preference_calibrated intervals: refitted exactly in every resample" + tail,
    ]


def test_every_metric_in_the_table_is_defined_under_it(
    capsys: pytest.CaptureFixture[str], pairs_csv: Path
) -> None:
    """The table named each number by its key alone (`verbosity_bias` and
    `verbosity_deviation` read +0.205 side by side on llmbar-mtbench, with nothing saying
    how they differ); each metric is now defined once under the table, in the words of
    its method (the text the JSON and CSV carry), up to the interval's description."""
    code, text, err = run(capsys, "metrics", "pairs", str(pairs_csv), *FAST, "-j", "gpt-4")
    assert code == 0, err
    metrics = {line.split("│")[2].strip() for line in text.splitlines()
               if line.startswith("│ gpt-4")}  # fmt: skip
    assert {"verbosity_bias", "verbosity_deviation", "first_position_rate"} <= metrics
    defined = {
        line.split(": ", 1)[0]: line.split(": ", 1)[1]
        for line in text.splitlines()
        if line.split(": ", 1)[0] in metrics
    }
    assert set(defined) == metrics
    assert defined["verbosity_deviation"].startswith("verbosity bias (|.|, Eq. 5): recall")
    assert defined["first_position_rate"] == (
        "first-position preference rate: mean of (p_a_first + 1 - p_a_second) / 2, 0.5 = none"
    )
    # the interval's method stays in the JSON and CSV; only Eq. 5's definition speaks of
    # an interval, to say what it is (the absolute values over Eq. 6's)
    assert not any("interval" in d or "resamples" in d
                   for m, d in defined.items() if m != "verbosity_deviation")  # fmt: skip
    # the position rates' intervals are no plain BCa: a line under the table says what
    # they are (estimate.moved_span / unseen_span), as each result's method does
    (line,) = [x for x in text.splitlines() if x.startswith("first_position_rate intervals: ")]
    assert "widened where few pairs change with the order (Student's t" in line
    assert "exact bound (not a bootstrap)" in line
    deviation = defined["verbosity_deviation"]
    assert "its interval the absolute values over Eq. 6's, its p-value Eq. 6's" in deviation
    assert "BCa" not in deviation and "resamples" not in deviation
    # a number shown beside another's headline says which is the headline, and, not
    # adjusted for the judge's competence, what that does (EO +0.48 beside calibrated
    # −0.04 on llmbar-mtbench, with nothing saying why they differ)
    unadjusted = (" — not adjusted for the judge's competence: high for a strong judge with "
                  "no bias, low for a weak one; the audit's headline is ")  # fmt: skip
    assert defined["self_preference_eo"].endswith(unadjusted + "self_preference_calibrated")
    assert defined["self_preference_dp"].endswith(unadjusted + "self_preference_calibrated")
    assert defined["verbosity_bias"].endswith(
        "shorter — the audit's headline is verbosity_longer_gap"
    )
    headlines = ["self_preference_calibrated", "verbosity_longer_gap", "first_position_rate"]
    assert not any("headline" in defined[m] for m in [*headlines, "verbosity_deviation"])


def test_a_number_beside_a_headline_says_so_when_the_headline_is_not_asked_for(
    capsys: pytest.CaptureFixture[str], pairs_csv: Path
) -> None:
    """``-m self_preference_eo -m verbosity_bias`` alone printed each with "no bias 0" and
    its definition only: the caveat (not adjusted for competence; which metric is the
    audit's headline) came only where the headline was asked for too, so the EO of a
    strong judge read as its self-preference. Each metric's line now carries it always."""
    code, text, err = run(capsys, "metrics", "pairs", str(pairs_csv), *FAST,
                          "-m", "self_preference_eo", "-m", "verbosity_bias")  # fmt: skip
    assert code == 0, err
    lines = text.splitlines()
    (eo,) = [x for x in lines if x.startswith("self_preference_eo: ")]
    (eq6,) = [x for x in lines if x.startswith("verbosity_bias: ")]
    assert eo.endswith(
        "not adjusted for the judge's competence: high for a strong judge with no bias, low "
        "for a weak one; the audit's headline is self_preference_calibrated"
    )
    assert eq6.endswith("— the audit's headline is verbosity_longer_gap")
    assert not any(x.startswith("self_preference_calibrated") for x in lines)


def _folded(low: float, high: float) -> tuple[float, float]:
    """The absolute values |θ| takes over [low, high], worked out by cases."""
    if low <= 0 <= high:
        return 0.0, max(-low, high)
    return min(abs(low), abs(high)), max(abs(low), abs(high))


def test_the_statistics_page_quotes_the_absolute_value_as_metrics_prints_it(
    capsys: pytest.CaptureFixture[str], shared_data: Path
) -> None:
    """docs/statistics.md quoted Eq. 5 as '0.18 [0.06, 0.31]', which no run printed any
    more (ChatGPT on llmbar-mtbench reads 0.18 [0.06, 0.30] at the default 2,000
    resamples, seed 0, its BCa interval expanded for its prompts): the page now names the
    command, and this runs it."""
    page = " ".join((REPO / "docs" / "statistics.md").read_text("utf-8").split())
    quoted = re.search(r"\(`recuse (metrics pairs [^`]+)`: ([\d.]+) (\[[^\]]+\])\)", page)
    assert quoted, "docs/statistics.md's verbosity_deviation example is gone"
    args, estimate, interval = shlex.split(quoted.group(1)), quoted.group(2), quoted.group(3)
    code, text, err = run(capsys, *args, "--data-dir", str(shared_data))
    assert code == 0, err
    (row,) = [line for line in text.splitlines() if "│ verbosity_deviation" in line]
    cells = [cell.strip() for cell in row.split("│")]
    assert (cells[3], cells[4]) == (estimate, interval)


def test_an_absolute_value_prints_without_a_sign(
    capsys: pytest.CaptureFixture[str], pairs_csv: Path, tmp_path: Path
) -> None:
    """verbosity_deviation (Eq. 5, |Eq. 6|) printed '+0.182 [+0.062, +0.307]' as the
    signed verbosity_bias row beside it did, the '+' saying it was a signed difference,
    and so did the flip rate, a share. The sign comes from the result now: Eq. 6 says
    it is signed, Eq. 5 that it is an absolute value, the flip rate neither; the table's
    rows read that way, and the JSON and CSV carry the same two fields."""
    from recuse import numbers

    out = tmp_path / "bias.json"
    metrics = ("-m", "verbosity_bias", "-m", "verbosity_deviation", "-m", "flip_rate")
    code, text, err = run(
        capsys, "metrics", "pairs", str(pairs_csv), *FAST, *metrics, "--out", str(out)
    )
    assert code == 0, err
    results = json.loads(out.read_text())["results"]
    kinds = {r["metric"]: (r["signed"], r["absolute_value"]) for r in results}
    assert kinds == {"verbosity_bias": (True, False), "verbosity_deviation": (False, True),
                     "flip_rate": (False, False)}  # fmt: skip
    by = {(r["judge"], r["metric"]): r for r in results}
    rows = {(cells[1].strip(), cells[2].strip()): cells for cells in
            (line.split("│") for line in text.splitlines() if line.startswith("│ "))}  # fmt: skip
    judges = sorted({j for j, _ in by})
    assert judges and all((j, "verbosity_deviation") in rows for j in judges)
    for judge in judges:
        signed, dev = by[judge, "verbosity_bias"], by[judge, "verbosity_deviation"]
        assert dev["estimate"] == pytest.approx(abs(signed["estimate"]), abs=1e-12)
        low, high = _folded(signed["ci_low"], signed["ci_high"])
        assert (dev["ci_low"], dev["ci_high"]) == pytest.approx((low, high), abs=1e-12)
        assert dev["p_value"] == pytest.approx(signed["p_value"], rel=1e-12)
        s_row, d_row = rows[judge, "verbosity_bias"], rows[judge, "verbosity_deviation"]
        (s_est, s_int), (d_est, d_int) = (s_row[3].strip(), s_row[4]), (d_row[3].strip(), d_row[4])
        assert s_est[0] in "+\u2212" and s_est[1:] == d_est  # the same digits, one signed
        digits = numbers.estimate_digits(dev["estimate"], dev["ci_low"], dev["ci_high"])
        assert d_est == numbers.decimal(abs(signed["estimate"]), digits)
        assert "+" not in d_int and "\u2212" not in d_int and "[" in d_int
        # the interval as the audit writes it: '−' on a negative end, no '+'
        digits = numbers.estimate_digits(signed["estimate"], signed["ci_low"], signed["ci_high"])
        ends = (
            numbers.decimal(signed["ci_low"], digits),
            numbers.decimal(signed["ci_high"], digits),
        )
        assert s_int.split("!")[0].strip() == f"[{ends[0]}, {ends[1]}]" and "+" not in s_int
        assert not rows[judge, "flip_rate"][3].strip().startswith("+")
        assert "+" not in rows[judge, "flip_rate"][4]
    # the p-value's words where the definition is shown
    line = next(t for t in text.splitlines() if t.startswith("verbosity_deviation:"))
    assert "in absolute value" in line and "its p-value Eq. 6's" in line
    csv = tmp_path / "bias.csv"
    assert run(capsys, "metrics", "pairs", str(pairs_csv), *FAST, *metrics, "-o", str(csv))[0] == 0
    frame = pd.read_csv(csv).set_index(["judge", "metric"])
    for (judge, metric), r in by.items():
        assert bool(frame.loc[(judge, metric), "signed"]) is r["signed"]
        assert bool(frame.loc[(judge, metric), "absolute_value"]) is r["absolute_value"]


def test_the_table_writes_each_estimate_as_print_result_and_the_audit_do(
    capsys: pytest.CaptureFixture[str], pairs_csv: Path, tmp_path: Path
) -> None:
    """The table printed '+0.182 [+0.062, +0.307]' where the audit writes the same
    estimate '+0.18 [0.06, 0.31]' (the sign on the estimate only, '−' on a negative
    end), and then '+0.182 [0.062, 0.307]' beside print(result)'s '+0.18 [0.06, 0.31]':
    one number, two sets of digits, with nothing said about why. Each row now reads
    digit for digit what print() of the same result (rebuilt from --out's JSON) and the
    audit's estimate_parts write, and the line under the table says the rule."""
    from recuse.metrics.result import MetricResult
    from recuse.numbers import estimate_parts

    out = tmp_path / "bias.json"
    code, text, err = run(capsys, "metrics", "pairs", str(pairs_csv), *FAST,
                          "-m", "self_preference_eo", "-m", "verbosity_bias",
                          "-m", "position_consistency", "--out", str(out))  # fmt: skip
    assert code == 0, err
    rows = {(cells[1].strip(), cells[2].strip()): cells for cells in
            (line.split("│") for line in text.splitlines() if line.startswith("│ "))}  # fmt: skip
    results = json.loads(out.read_text())["results"]
    assert len(results) >= 6
    for r in results:
        est, interval = (c.split("!")[0].strip() for c in rows[r["judge"], r["metric"]][3:5])
        m = MetricResult(
            r["metric"], r["estimate"], r["ci_low"], r["ci_high"], r["level"], r["n"],
            r["n_clusters"], r["method"], judge=r["judge"], null=r["null"],
            absolute=r["absolute_value"], bound=r["null_bound"],
        )  # fmt: skip
        if m.signed != r["signed"]:  # a quality score (kappa), which the JSON does not name
            m = replace(m, score=True)
        printed = str(m).splitlines()[0]
        assert f": {est} {interval} (" in printed, (printed, est, interval)
        want = estimate_parts(r["estimate"], r["ci_low"], r["ci_high"], signed=r["signed"])
        assert (est, interval) == want
    # two decimals where a number reaches 0.1 (the old table's three read otherwise)
    assert any(len(c[3].strip().split(".")[1]) == 2 for c in rows.values())
    assert any(r["ci_low"] < 0 < r["ci_high"] for r in results)  # a '−' end and a bare one
    assert not any("[+" in c or ", +" in c for cells in rows.values() for c in cells[4:5])
    legend = next(t for t in text.splitlines() if t.startswith("estimate [interval]:"))
    assert "print(result)" in legend and "two decimals" in legend


def test_metrics_pairs_and_the_audit_give_one_interval_on_a_table_with_human_only_rows(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Rows with a human label and no judge (LLMBar has 315) gave the same estimates two
    intervals from one seed: the audit resampled the prompts of the judged rows only,
    recuse metrics pairs those of the whole table (llmbar, verbosity_bias of
    gpt-3.5-turbo: [0.217, 0.307] vs [0.208, 0.297] at 200 resamples). Both now
    resample the whole table's prompts, and the humans' verbosity curve counts every
    labelled item in both."""
    sim = simulate_pairs(n_prompts=40, pairs_per_prompt=3, seed=2).pairs
    human_only = sim.head(30).assign(
        judge=None, p_a=None, p_a_first=None, p_a_second=None,
        **{c: None for c in ("status_first", "status_second") if c in sim.columns},
        item_id=[f"h{k}" for k in range(30)], prompt_id=[f"hq{k // 3}" for k in range(30)],
    )  # fmt: skip
    path = tmp_path / "pairs.csv"
    pd.concat([sim, human_only], ignore_index=True).to_csv(path, index=False)
    code, _, err = run(capsys, "metrics", "pairs", str(path), "--n-boot", "200",
                       "-o", str(tmp_path / "m.json"))  # fmt: skip
    assert code == 0, err
    code, _, err = run(capsys, "audit", str(path), "--n-boot", "200", "--only", "verbosity",
                       "--out", str(tmp_path / "a"))  # fmt: skip
    assert code == 0, err
    data = json.loads((tmp_path / "m.json").read_text())
    ours = pd.DataFrame([r for r in data["results"] if r["metric"] == "verbosity_bias"])
    audit = pd.read_csv(tmp_path / "a" / "tables" / "verbosity-pairs-csv.csv")
    audit = audit[audit["metric"] == "verbosity_bias"]
    both = ours.merge(audit, on="judge", suffixes=("", "_audit"))
    assert len(both) == len(ours) > 0
    for col in ("estimate", "ci_low", "ci_high", "n", "n_clusters"):
        assert both[col].tolist() == pytest.approx(both[f"{col}_audit"].tolist()), col
    curve = pd.read_csv(tmp_path / "a" / "tables" / "human-verbosity-curve-pairs-csv.csv")
    theirs = pd.DataFrame(data["curves"]["human_verbosity_curve"])
    assert curve["n"].sum() == theirs["n"].sum() > 0


def test_nothing_estimable_is_an_error_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Verdicts with no human label, one order each: no metric of the table can be made.
    It exited 0 with an empty table and wrote a CSV of its header alone, which reads as
    a result; now exit 2, the reasons printed, nothing written."""
    frame = simulate_pairs(n_prompts=30, seed=1).pairs
    frame = frame.assign(human=float("nan"), p_a_second=float("nan"), p_a=frame["p_a_first"])
    frame = frame.drop(columns=["len_a", "len_b", "status_first", "status_second"])
    src, out = tmp_path / "p.csv", tmp_path / "m.csv"
    frame.to_csv(src, index=False)
    code, stdout, stderr = run(capsys, "metrics", "pairs", str(src), "-o", str(out))
    assert code == 2, stdout + stderr
    assert "Not estimated" in stdout and "no human labels" in stdout
    assert "no metric could be estimated (the reasons are above); nothing written" in stderr
    assert not out.exists()


def test_a_labels_only_table_is_refused_with_where_its_baseline_is(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``recuse metrics pairs hh-rlhf`` refused in the words of any table without
    verdicts ("run a judge first"), while ``recuse audit hh-rlhf`` prints the humans'
    preference for the longer answer (0.44 [0.42, 0.46]). With human labels and lengths
    the refusal now names that number's door; without lengths there is none to name,
    and the old words stand. Both exit 2, no traceback."""
    rows = [{"item_id": f"i{k}", "prompt_id": f"p{k}", "len_a": 10 + k, "len_b": 40 - k,
             "human": float(k % 3 == 0)} for k in range(30)]  # fmt: skip
    frame = pd.DataFrame(rows)
    with_lengths, without = tmp_path / "lengths.csv", tmp_path / "bare.csv"
    frame.to_csv(with_lengths, index=False)
    frame.drop(columns=["len_a", "len_b"]).to_csv(without, index=False)
    code, _, err = run(capsys, "metrics", "pairs", str(with_lengths))
    said = " ".join(err.split())
    assert code == 2 and "Traceback" not in err
    assert "no judge verdicts" in said and "run a judge first" in said and "(--map)" in said
    assert (
        "the audit gives the humans' preference for the longer answer (a baseline of "
        f"the labels, no judge's bias): `recuse audit {with_lengths}`" in said
    )
    code, _, err = run(capsys, "metrics", "pairs", str(without))
    assert code == 2 and "no judge verdicts" in err and "longer answer" not in err


def test_the_json_curves_carry_the_audits_titles_and_column_words(
    capsys: pytest.CaptureFixture[str], shared_data: Path, tmp_path: Path
) -> None:
    """``--out x.json`` wrote the verbosity curves' numbers with no words, where the
    audit's tables of the same curves carry a title (what ``mean`` is the mean of, which
    interval) and each column's words. On JudgeBench (correctness labels, reworded)
    the JSON's ``curve_words`` are now the audit's report.json words, one for one, and
    the open last bin's ``bin_high`` is null in both, said in its column's words."""
    data = ("--data-dir", str(shared_data), "--n-boot", "200")
    out = tmp_path / "m.json"
    code, _, err = run(capsys, "metrics", "pairs", "judgebench", *data, "-m", "verbosity_bias",
                       "-o", str(out))  # fmt: skip
    assert code == 0, err
    code, _, err = run(capsys, "audit", "judgebench", *data, "--only", "verbosity",
                       "--out", str(tmp_path / "a"))  # fmt: skip
    assert code == 0, err
    ours = json.loads(out.read_text())
    tables = json.loads((tmp_path / "a" / "report.json").read_text())["tables"]
    names = {
        "human_alignment_curve": "alignment-curve-judgebench",
        "human_verbosity_curve": "human-verbosity-curve-judgebench",
        "judge_verbosity_curve": "judge-verbosity-curve-judgebench",
    }
    assert set(ours["curve_words"]) == set(ours["curves"]) == set(names)
    tops = 0
    for curve, table in names.items():
        words = ours["curve_words"][curve]
        assert words == {"title": tables[table]["title"], "columns": tables[table]["columns"]}
        assert list(words["columns"]) == list(ours["curves"][curve][0])
        rows = ours["curves"][curve]
        assert all((r["bin_high"] is None) == (r["bin_low"] == 2.0) for r in rows)  # open bin
        tops += sum(r["bin_low"] == 2.0 for r in rows)
    assert tops
    said = ours["curve_words"]["human_verbosity_curve"]
    assert "correctness label" in said["title"] and "human" not in said["title"]
    assert said["columns"]["bin_high"].endswith("no upper edge, the last bin is open — every "
                                                "pair from bin_low up")  # fmt: skip


def test_metrics_pairs_takes_orders_human_ties_and_self_scope_from_recuse_toml(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``[audit] orders``, ``human-ties`` and ``self-scope`` have the audit's choices and
    meaning here: they are this command's where its line does not give them (they were
    read by recuse audit only, so the audit and ``metrics pairs`` of one table gave two
    numbers for one bias), and a value on the line wins, the default's value too."""
    simulate_pairs(seed=1).pairs.to_csv(tmp_path / "pairs.csv", index=False)
    (tmp_path / "recuse.toml").write_text(
        '[audit]\norders = "first"\nhuman-ties = "split"\nself-scope = "line"\n', "utf-8"
    )
    monkeypatch.chdir(tmp_path)

    def run(name: str, *args: str, config: bool = True) -> dict[str, object]:
        head = [] if config else ["--no-config"]
        argv = [*head, "metrics", "pairs", "pairs.csv", "--n-boot", "50", "--out", name, *args]
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 0, err
        payload: dict[str, object] = json.loads((tmp_path / name).read_text("utf-8"))
        payload.pop("curve_words", None)  # its titles name the option as it was set
        sources[name] = payload.pop("setting_sources")  # type: ignore[assignment]
        for skip in payload["skipped"]:  # type: ignore[attr-defined]
            # the same skips, their reason naming the option as it was set
            skip["reason"] = skip["reason"].replace(
                '[audit] orders = "first" in recuse.toml line 2', "X"
            )
            skip["reason"] = skip["reason"].replace("--orders first", "X")
        return payload

    sources: dict[str, dict[str, str]] = {}
    chosen = ["--orders", "first", "--human-ties", "split", "--self-scope", "line"]
    defaults = ["--orders", "both", "--human-ties", "drop", "--self-scope", "snapshot"]
    from_file = run("file.json")
    assert from_file == run("flags.json", *chosen, config=False)
    assert from_file["settings"]["orders"] == "first"  # type: ignore[index]
    assert from_file["settings"]["human_ties"] == "split"  # type: ignore[index]
    assert from_file["settings"]["self_scope"] == "line"  # type: ignore[index]
    given = run("given.json", *defaults)  # the line's defaults win over the file
    assert given == run("none.json", config=False)
    assert given["results"] != from_file["results"]  # the options move the numbers
    said = [sources[n]["orders"] for n in ("file.json", "flags.json", "given.json", "none.json")]
    assert said == ["config:recuse.toml", "cli", "cli", "default"]


def test_a_note_is_marked_on_its_row_and_said_after_the_warnings(
    capsys: pytest.CaptureFixture[str], shared_data: Path, tmp_path: Path
) -> None:
    """JudgeBench's claude-3-haiku: 13 pairs judged in one order only, too few for the
    one-slot warning (tests/metrics/test_real_from_raw_files.py counts them from the
    upstream file). Its verbosity rows carry a ``*1`` mark, the note is said once after
    the numbered warnings, and --out's CSV has it in its own column."""
    out = tmp_path / "v.csv"
    code, text, _ = run(
        capsys, "metrics", "pairs", "judgebench", "--data-dir", str(shared_data),
        "-j", "claude-3-haiku-20240307", "-m", "verbosity_longer_gap", "-m", "verbosity_bias",
        "--n-boot", "200", "--out", str(out),
    )  # fmt: skip
    assert code == 0
    flat = " ".join(text.split())
    assert flat.count("*1") == 3  # two rows and the note
    assert "*1 note: 13 of the judge's 265 pairs were judged in one order only" in flat
    frame = pd.read_csv(out)
    assert frame["notes"].str.startswith("13 of the judge's 265 pairs").all()
    assert not frame["warnings"].astype(str).str.contains("that order alone").any()
