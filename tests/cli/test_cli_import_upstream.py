"""`recuse validate` / `recuse audit` on real files of other tools as they are: no
--format, no column map (tests/data/importers/upstream/SOURCES.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from recuse.cli import main

UP = Path(__file__).parents[1] / "data" / "importers" / "upstream"
AE1 = UP / "alpaca_eval/results/alpaca-7b/alpaca_eval_gpt4/annotations.json"
AE2 = UP / "alpaca_eval/results/claude/weighted_alpaca_eval_gpt4_turbo/annotations.json"
SINGLE = UP / "fastchat/gpt-4_single.jsonl"
INSPECT_OLD = UP / "inspect/2024-11-05T13-31-45-05-00_input-task_8zXjbRzCWrL9GXiXo2vus9.json"
INSPECT_NEW = UP / "inspect/2025-05-12T20-28-26-04-00_security-guide.json"
CAPITALS = UP.parent / "capitals.eval"
# names the roster lacks (e.g. gemini-1.5-flash-002) are read as their own models with a
# note: no flag is needed any more
UNKNOWN: list[str] = []


def _supported(out: str) -> dict[str, str]:
    """analysis -> yes/no from validate's "Analyses this file supports" table."""
    rows = re.findall(r"│ ([a-z-]+) +│ (yes|no) +│", out)
    return dict(rows)


@pytest.mark.parametrize(
    ("path", "fmt", "rows", "yes", "no"),
    [
        (AE1, "alpaca-eval", 30, {"leaderboard"}, {"self-preference", "verbosity", "position"}),
        (AE2, "alpaca-eval", 12, {"leaderboard"}, {"self-preference", "verbosity", "position"}),
        (SINGLE, "fastchat-single", 16, set(), {"favoritism"}),
        (INSPECT_OLD, "inspect", 1, set(), {"favoritism"}),
        (INSPECT_NEW, "inspect", 3, set(), {"favoritism"}),
    ],
)
def test_validate_real_files_says_what_it_would_estimate(
    path: Path, fmt: str, rows: int, yes: set[str], no: set[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["validate", str(path), *UNKNOWN])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert f"(imported from {fmt})" in "".join(out.split()).replace(
        "(importedfrom", "(imported from "
    )
    assert re.search(rf"│ rows +│ +{rows} │", out), out
    supported = _supported(out)
    assert {a for a in yes | no} <= set(supported), supported
    assert all(supported[a] == "yes" for a in yes) and all(supported[a] == "no" for a in no)


def test_audit_real_alpaca_eval_files_gives_the_hand_win_rates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """AlpacaEval 1 (30 annotations, 6 model wins and one draw: 6.5 / 30) and 2 (mean of
    preference - 1), audited together as they are."""
    out = tmp_path / "r"
    code = main(["audit", str(AE1), str(AE2), "--n-boot", "100", "--out", str(out)])
    printed, err = capsys.readouterr()
    assert code == 0, err
    assert "position bias is not estimated from this file" in printed
    prefs = [r["preference"] for r in json.loads(AE2.read_text("utf-8"))]
    want = {"gpt-4": 100 * 6.5 / 30, "gpt-4-1106-preview": 100 * (sum(prefs) - 12) / 12}
    report = json.loads((out / "report.json").read_text("utf-8"))
    tables = {k: t for k, t in report["tables"].items() if k.startswith("lc-win-rate")}
    got = {name.rsplit("json-", 1)[1]: t["rows"][0]["win_rate"] for name, t in tables.items()}
    assert got == pytest.approx(want)


def test_audit_real_single_and_inspect_files_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r"
    files = [str(SINGLE), str(INSPECT_OLD), str(INSPECT_NEW)]
    code = main(["audit", *files, *UNKNOWN, "--n-boot", "100", "--out", str(out)])
    printed, err = capsys.readouterr()
    assert code == 0, err
    assert "--reference-judge NAME" in printed and "--reference-scorer NAME" in printed


def test_reference_scorer_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    """--reference-scorer fills the reference (was: library-only, so the CLI could never
    give an Inspect log a reference)."""
    code = main(["validate", str(CAPITALS), *UNKNOWN])
    assert code == 0 and re.search(r"│ rows with a reference +│ +0 │", capsys.readouterr().out)
    code = main(["validate", str(CAPITALS), *UNKNOWN, "--reference-scorer", "includes"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert re.search(r"│ rows with a reference +│ +8 │", out), out
    code = main(["validate", str(CAPITALS), *UNKNOWN, "--reference-scorer", "nope"])
    err = capsys.readouterr().err
    assert code == 2 and "reference scorer 'nope' is not in the log" in err
    assert len(err.strip().splitlines()) == 1
    code = main(["validate", str(AE1), "--reference-scorer", "includes"])
    err = capsys.readouterr().err
    assert code == 2 and "names a scorer of an Inspect log" in err


def test_reference_judge_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The real gpt-4 single grades with records written here in FastChat's format
    (gpt-4 grading its own model, claude-v1 grading both): --reference-judge claude-v1
    makes favoritism supported, and the audit reports gpt-4's self-bias."""
    real = [json.loads(x) for x in SINGLE.read_text("utf-8").splitlines()]
    extra = []
    for i, r in enumerate(real):
        extra.append(dict(r, model="gpt-4", score=10 - i % 3))
        for model in ("gemini-1.5-flash", "gpt-4"):
            extra.append(dict(r, model=model, judge=["claude-v1", r["judge"][1]], score=3 + i % 7))
    path = tmp_path / "all_single.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [*real, *extra]), "utf-8")
    code = main(["validate", str(path), *UNKNOWN])
    assert code == 0 and _supported(capsys.readouterr().out)["favoritism"] == "no"
    code = main(["validate", str(path), *UNKNOWN, "--reference-judge", "claude-v1"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert _supported(out)["favoritism"] == "yes"
    assert re.search(r"│ rows with a reference +│ +32 │", out), out
    report_dir = tmp_path / "r"
    args = ["audit", str(path), *UNKNOWN, "--reference-judge", "claude-v1", "--n-boot", "100"]
    code = main([*args, "--robustness", "none", "--out", str(report_dir)])
    err = capsys.readouterr().err
    assert code == 0, err
    report = json.loads((report_dir / "report.json").read_text("utf-8"))
    found = [
        f
        for s in report["sections"]
        for f in s.get("findings", [])
        if f["bias"] == "self_bias" and f["judge"] == "gpt-4"
    ]
    assert len(found) == 1 and found[0]["estimate"] is not None
    # docs/your-data.md: `recuse audit data/mt_bench/model_judgment --reference-judge
    # claude-v1`, a folder holding pair judgments beside the single grades as FastChat
    # writes it; the whole folder was refused ("--reference-judge applies to ratings; a
    # fastchat-pair file gives a pairs table"): the reference is the ratings input's
    folder = tmp_path / "model_judgment"
    folder.mkdir()
    (folder / "gpt-4_single.jsonl").write_text(path.read_text("utf-8"), "utf-8")
    pair = UP.parent / "gpt-4_pair.jsonl"
    (folder / "gpt-4_pair.jsonl").write_text(pair.read_text("utf-8"), "utf-8")
    both_dir = tmp_path / "r2"
    args = ["audit", str(folder), "--reference-judge", "claude-v1", "--n-boot", "100"]
    code = main([*args, "--robustness", "none", "--out", str(both_dir)])
    err = capsys.readouterr().err
    assert code == 0, err
    both = json.loads((both_dir / "report.json").read_text("utf-8"))
    assert [s["table"] for s in both["provenance"]["sources"]] == ["pairs", "ratings"]
    same = [
        f
        for s in both["sections"]
        for f in s.get("findings", [])
        if f["bias"] == "self_bias" and f["judge"] == "gpt-4"
    ]
    assert [f["estimate"] for f in same] == [found[0]["estimate"]]


def _capitals_logs(folder: Path) -> Path:
    """Two logs of one task: capitals.json (Inspect 0.3.285, evaluated model
    mockllm/model) and a copy changed here to evaluate mockllm/grader, whose grader
    (model_graded_fact, mockllm/grader) then grades its own answers, all graded C; the
    self-graded model_graded_qa scorer is dropped from both so that one grader rates
    both models in one dimension."""
    folder.mkdir()
    log = json.loads((UP.parent / "capitals.json").read_text("utf-8"))
    log["eval"]["scorers"] = [s for s in log["eval"]["scorers"] if s["name"] != "model_graded_qa"]
    scores = log["results"]["scores"]
    log["results"]["scores"] = [s for s in scores if s["name"] != "model_graded_qa"]
    for sample in log["samples"]:
        sample["scores"].pop("model_graded_qa")
    (folder / "a.json").write_text(json.dumps(log), "utf-8")
    log["eval"]["model"] = "mockllm/grader"
    for sample in log["samples"]:
        sample["scores"]["model_graded_fact"]["value"] = "C"
    (folder / "b.json").write_text(json.dumps(log), "utf-8")
    (folder / "notes.txt").write_text("not a log", "utf-8")
    return folder


def test_a_folder_of_inspect_logs_audits_as_one_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A log folder with --reference-scorer: the grader's self-bias γ equals the OLS
    coefficient of its own answers in rating ~ 1 + reference + own (numpy lstsq)."""
    import numpy as np

    from recuse.data.importers import References
    from recuse.data.inputs import load_input

    folder = _capitals_logs(tmp_path / "logs")
    refs = References(scorer="includes")
    frame = load_input(folder, unknown_models="keep", references=refs).frame
    assert len(frame) == 8 and set(frame["judge"]) == {"mockllm/grader"}
    x = np.column_stack(
        [np.ones(8), frame["reference"], (frame["model"] == "mockllm/grader").astype(float)]
    )
    gamma = np.linalg.lstsq(x, frame["rating"].to_numpy(float), rcond=None)[0][2]
    assert gamma == pytest.approx(0.5)  # 4 C against C, I, C, I at equal references
    out = tmp_path / "r"
    args = ["audit", str(folder), *UNKNOWN, "--reference-scorer", "includes"]
    code = main([*args, "--n-boot", "100", "--robustness", "none", "--out", str(out)])
    printed, err = capsys.readouterr()
    assert code == 0, err
    assert "logs: 2 inspect files read as one table (a.json, b.json)" in printed
    report = json.loads((out / "report.json").read_text("utf-8"))
    found = [
        f for s in report["sections"] for f in s.get("findings", []) if f["bias"] == "self_bias"
    ]
    assert [f["judge"] for f in found] == ["mockllm/grader"]
    assert found[0]["estimate"] == pytest.approx(gamma, abs=1e-9)


def test_folder_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _capitals_logs(tmp_path / "logs")
    (folder / "c.json").write_bytes((folder / "a.json").read_bytes())  # a copy of one run
    code = main(["validate", str(folder), *UNKNOWN])
    err = capsys.readouterr().err
    assert code == 2 and "is in a.json and in c.json" in err, err
    (folder / "c.json").unlink()
    (folder / "annotations.json").write_bytes(AE1.read_bytes())
    code = main(["validate", str(folder), *UNKNOWN])
    err = capsys.readouterr().err
    assert code == 2 and "holds files of several tools" in err, err
    code = main(["validate", str(folder), *UNKNOWN, "--format", "alpaca-eval"])
    assert code == 0, capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    code = main(["audit", str(empty)])
    err = capsys.readouterr().err
    assert code == 2 and "holds no file recuse recognises" in err, err
