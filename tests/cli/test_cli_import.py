"""`recuse validate` / `recuse audit` on files of other tools (FastChat, Arena-Hard, Inspect)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from recuse.cli import main

FIXTURES = Path(__file__).parents[1] / "data" / "importers"
ARENA = "pairs table (imported from arena-hard)"


@pytest.mark.parametrize(
    ("name", "kind", "rows"),
    [
        ("gpt-4_pair.jsonl", "pairs table (imported from fastchat-pair)", 6),
        ("arena-hard-v0.1_claude-3-haiku-20240307.jsonl", ARENA, 5),
        ("arena-hard-v2.0_qwq-32b.jsonl", ARENA, 4),
        ("capitals.eval", "ratings table (imported from inspect)", 8),
        ("capitals.json", "ratings table (imported from inspect)", 8),
    ],
)
def test_validate_recognises_the_format(
    name: str, kind: str, rows: int, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["validate", str(FIXTURES / name)])
    out, err = capsys.readouterr()
    assert code == 0, err
    squeezed = "".join(out.split())  # rich wraps the title to the table's width
    assert "".join(f"a valid {kind}".split()) in squeezed
    assert re.search(rf"│ rows +│ +{rows} │", out), out
    if name.startswith("capitals"):
        assert "note: Self-grading in" in out and "model_graded_qa" in out


def test_explicit_format_is_checked(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(FIXTURES / "gpt-4_pair.jsonl")
    code = main(["validate", path, "--format", "arena-hard"])
    err = capsys.readouterr().err
    assert code == 2 and "line 1 (data row 1), column 'games': the line lacks key(s) games" in err
    code = main(["validate", path, "--format", "excel"])
    assert code == 2 and "excel" in capsys.readouterr().err
    code = main(["validate", path, "--map", "a=item_id"])
    assert code == 2 and "(--map) does not apply to a fastchat-pair file" in capsys.readouterr().err


def test_audit_reads_imported_files_and_reports_self_grading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    files = [str(FIXTURES / "capitals.eval"), str(FIXTURES / "gpt-4_pair.jsonl")]
    code = main(["audit", *files, "--n-boot", "100", "--out", str(out)])
    printed, err = capsys.readouterr()
    assert code == 0, err
    assert "note: Self-grading in capitals.eval: scorer model_graded_qa" in printed
    report = json.loads((out / "report.json").read_text("utf-8"))
    sources = {s["name"]: s for s in report["provenance"]["sources"]}
    assert sources["capitals.eval"]["format"] == "inspect"
    assert sources["gpt-4_pair.jsonl"]["format"] == "fastchat-pair"
    assert sources["capitals.eval"]["table"] == "ratings"
    assert any(n.startswith("Self-grading in capitals.eval") for n in report["notes"])
    html = (out / "report.html").read_text("utf-8")
    assert "Self-grading in capitals.eval" in html
    assert "imported from inspect" in html and "imported from fastchat-pair" in html


def test_verbose_says_why_nothing_could_be_estimated_from_an_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The Inspect log graded by the evaluated model alone: the terminal read "No bias
    could be estimated from these inputs (reasons in the report)" and --verbose, which
    the legend names for the reasons, added nothing, since the reasons (the regression
    not identified, a ratings table for the pairs analyses) concern no judge."""
    out = tmp_path / "report"
    log = str(FIXTURES / "capitals.eval")
    args = ["audit", log, "--reference-scorer", "includes", "--out", str(out), "--verbose"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "No bias could be estimated from these inputs (reasons: --verbose and" in printed
    report = json.loads((out / "report.json").read_text("utf-8"))
    (fit,) = [s for s in report["skipped"] if s["analysis"].startswith("Favoritism")]
    assert "not identified" in fit["reason"]
    shown = [ln for ln in printed.splitlines() if ln.startswith("○ ")]
    assert f"○ Favoritism regression (ratings) (capitals.eval): not made — {fit['reason']}" in shown
    pairs_only = [s for s in report["skipped"] if s is not fit]
    assert len(pairs_only) == 12 and {s["reason"] for s in pairs_only} == {
        "needs a pairs table (pairwise verdicts); this is ratings"
    }
    assert "○ 12 analyses (capitals.eval): not made — needs a pairs table (pairwise " in (
        "\n".join(shown)
    )


def test_counts_of_one_are_said_in_the_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """FastChat's win/tie/loss line read "1 wins, 1 ties, 0 losses" and a folder of one
    file "1 fastchat-pair files read as one table", "1 of its files hold ... on them"."""
    folder = tmp_path / "model_judgment"
    folder.mkdir()
    for name, source in (
        ("gpt-4_pair.jsonl", FIXTURES / "gpt-4_pair.jsonl"),
        ("gpt-4_single.jsonl", FIXTURES / "upstream/fastchat/gpt-4_single.jsonl"),
    ):
        (folder / name).write_text(source.read_text("utf-8"), "utf-8")
    assert main(["audit", str(folder), "--n-boot", "100", "--out", str(tmp_path / "r")]) == 0
    printed = capsys.readouterr().out
    assert "judge gpt-4: gpt-4: 1 win, 1 tie, 0 losses; win rate 50.0%" in printed
    assert "judge gpt-4: vicuna-13b: 0 wins, 2 ties, 1 loss; win rate 0.0%" in printed
    assert "model_judgment: 1 fastchat-pair file read as one table (gpt-4_pair.jsonl)" in printed
    assert "1 of its files holds no independent reference score, so the favoritism " in printed
    assert "regression cannot be fitted on it; name one" in printed


def _leaderboard(report: dict[str, object]) -> dict[str, object]:
    sections = report["sections"]
    assert isinstance(sections, list)
    return next(s for s in sections if s["id"] == "leaderboard")


def test_arena_hard_v2_file_is_audited_end_to_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It crashed with KeyError: 'len_a': one evaluated model (a) against two
    baselines (b) was taken for a fixed baseline a, and the file has no lengths."""
    out = tmp_path / "report"
    path = str(FIXTURES / "arena-hard-v2.0_qwq-32b.jsonl")
    code = main(["audit", path, "--n-boot", "100", "--out", str(out)])  # no roster flag
    err = capsys.readouterr().err
    assert code == 0, err
    assert err.count("recuse: note:") == 1 and "4 model names are not in the roster" in err
    report = json.loads((out / "report.json").read_text("utf-8"))
    # 3 systems (qwq-32b, o3-mini, gemini-2.0-flash) in 4 prompts, where gemini won both
    # of its games: its Bradley–Terry strength has no finite estimate, so no leaderboard
    # (it read a ranking before), with the reason
    reasons = [
        k["reason"] for k in report["skipped"] if k["analysis"] == "Bias-adjusted leaderboard"
    ]
    assert any(
        "the 3 systems fall into 2 groups, and a group of gemini-2.0-flash-001 never lost" in r
        for r in reasons
    ), reasons
    # v2.0 compares each category with its own baseline: no fixed baseline, no LC table
    assert not [t for t in report["tables"] if str(t).startswith("lc-win-rate")]


def _multi_judge_fastchat(tmp_path: Path) -> Path:
    """The FastChat fixture plus a second judge (claude-v1) that compared gpt-4 with
    every other model: gpt-4 is a fixed first system of that judge."""
    records = [json.loads(line) for line in (FIXTURES / "gpt-4_pair.jsonl").open()]
    lines = [json.dumps(r) for r in records]
    for r in records:
        other = "alpaca-13b" if r["model_2"] == "gpt-4" else r["model_2"]
        lines.append(json.dumps({**r, "judge": ["claude-v1", r["judge"][1]],
                                 "model_1": "gpt-4", "model_2": other}))  # fmt: skip
    path = tmp_path / "multi_pair.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def _multi_judge_arena(tmp_path: Path) -> Path:
    """The real v0.1 records as judged by two judges for three models (one baseline)."""
    records = [json.loads(line) for line in (FIXTURES / "arena-hard-v0.1_gpt-4-0613.jsonl").open()]
    lines = [
        json.dumps({**r, "uid": f"q{k}", "judge": judge, "model": model})
        for judge in ("gpt-4-1106-preview", "claude-3-opus-20240229")
        for model in ("gpt-4-0613", "claude-3-haiku-20240307", "llama-2-70b-chat")
        for k, r in enumerate(records)
    ]
    path = tmp_path / "multi_arena.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


@pytest.mark.parametrize(
    ("make", "judge", "baseline"),
    [
        (_multi_judge_fastchat, "claude-v1", "gpt-4"),
        (_multi_judge_arena, "claude-3-opus-20240229", "gpt-4-0314"),
    ],
)
def test_multi_judge_files_without_lengths_write_a_report(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    make: Callable[[Path], Path],
    judge: str,
    baseline: str,
) -> None:
    out = tmp_path / "report"
    code = main(["audit", str(make(tmp_path)), "--n-boot", "100", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    notes = " ".join(_leaderboard(json.loads((out / "report.json").read_text("utf-8")))["notes"])
    assert (
        f"{judge}: length-controlled win rate against the fixed baseline {baseline} not "
        "computed: no answer lengths"
    ) in notes


def test_validate_counts_two_snapshots_as_two_models(capsys: pytest.CaptureFixture[str]) -> None:
    """The real v0.1 file: gpt-4-0613 against gpt-4-0314 (it said "models: 1")."""
    code = main(["validate", str(FIXTURES / "arena-hard-v0.1_gpt-4-0613.jsonl")])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert re.search(r"│ models +│ +2 │", out), out
