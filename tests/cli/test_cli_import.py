"""`recuse validate` / `recuse audit` on files of other tools (FastChat, Arena-Hard, Inspect)."""

from __future__ import annotations

import json
import re
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
    code = main(["validate", str(FIXTURES / name), "--allow-unknown-models"])
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
    assert code == 2 and "row 1, column 'games': line 1 lacks key(s) games" in err
    code = main(["validate", path, "--format", "excel"])
    assert code == 2 and "excel" in capsys.readouterr().err
    code = main(["validate", path, "--map", "a=item_id"])
    assert code == 2 and "--map does not apply to a fastchat-pair file" in capsys.readouterr().err


def test_audit_reads_imported_files_and_reports_self_grading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    files = [str(FIXTURES / "capitals.eval"), str(FIXTURES / "gpt-4_pair.jsonl")]
    code = main(["audit", *files, "--allow-unknown-models", "--n-boot", "100", "--out", str(out)])
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
