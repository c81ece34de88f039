"""`recuse certify`'s sentences read as English beside their counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from recuse.cli import main


def test_one_item_judged_in_one_order_is_counted_in_the_singular(
    tmp_path: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # LLMBar's MT-Bench set: palm-2 judged one of its 193 items in one order only; the
    # line read "1 item(s) judged in one order only read 0.5"
    args = ["certify", "run", "llmbar-mtbench", "--data-dir", str(shared_data)]
    assert main(args) == 0
    (line,) = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("palm-2:")]
    assert line == (
        "palm-2: confidence = order consistency; 1 item judged in one order only reads 0.5 "
        "(no order consistency seen)"
    )


def test_one_tied_label_is_counted_in_the_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 40 items, one human tie (left out by default): "1 tied human labels left out"
    rows = ["item_id,prompt_id,judge,model_a,model_b,human,p_a_first,p_a_second"]
    rows += [f"i{k},q{k},gpt-4,x,y,{0.5 if k == 0 else k % 2},{k % 2},{k % 2}" for k in range(40)]
    data = tmp_path / "tie.csv"
    data.write_text("\n".join(rows) + "\n")
    assert main(["certify", "run", str(data), "--min-labels", "5"]) == 0
    (line,) = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("gpt-4:")]
    assert line == "gpt-4: confidence = order consistency; 1 tied human label left out"
