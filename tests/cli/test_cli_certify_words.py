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


def test_the_lines_under_the_table_write_the_target_and_bound_as_percentages(
    shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GPT-4 on LLMBar's MT-Bench set at a target 0.855 under the title "≥ 85.5%": its own
    # answers' 43 most confident items agree 39 times, a Clopper–Pearson bound of 0.7872
    # at δ/3 (scipy, below); the reason read "lower bound 0.787 ... < 0.855; ... could
    # certify agreement ≥ 0.78", the judge's line "nothing certified at agreement ≥ 0.855"
    from scipy.stats import beta

    bound = float(beta.ppf(0.1 / 3, 39, 5))
    assert 0.787 < bound < 0.788
    args = ["certify", "run", "llmbar-mtbench", "--agreement", "0.855", "-j", "gpt-4",
            "--data-dir", str(shared_data)]  # fmt: skip
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Certified at agreement ≥ 85.5% (--agreement 0.855), δ = 0.1"
    (own_row,) = [ln for ln in lines if "│ gpt-4" in ln and " own " in ln]
    assert " 78.7% │ 0.0333 " in own_row
    assert "  gpt-4: nothing certified at agreement ≥ 85.5% (δ = 0.1); every item goes on" in lines
    assert (
        "  own: never confident enough: its most confident 43 items (c ≥ 1) agree 39/43, "
        "lower bound 78.7% at δ' = 0.0333 (δ = 0.1 shared by 3 strata) < 85.5%; these "
        "labels could certify agreement ≥ 78% at most"
    ) in lines


def test_certify_apply_writes_its_target_as_a_percentage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the guarantee read "agreement with humans ≥ 0.855" above "beside the guarantee's 85.5%"
    from recuse.simulate.selective import simulate_selective

    src, thr = tmp_path / "pairs.csv", tmp_path / "thr.json"
    simulate_selective(400, seed=5).pairs.to_csv(src, index=False)
    assert main(["certify", str(src), "--agreement", "0.855", "--thresholds", str(thr)]) == 0
    capsys.readouterr()
    assert main(["certify", "apply", str(thr), str(src), "--out", str(tmp_path / "d.csv")]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "guarantee (thr.json): agreement with humans ≥ 85.5% on the items a certified" in text
    assert "beside the guarantee's 85.5%)" in text
    assert "0.855" not in text


def test_a_bound_that_meets_a_target_of_more_decimals_reads_at_or_above_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 40 items all agreeing, every verdict order-consistent: the Clopper–Pearson bound is
    # 0.00197^(1/40) = 0.855779 (scipy below), certified at --agreement 0.8555; its cell
    # read "85.5%" under "Certified at agreement ≥ 85.55%", below the target it meets
    from scipy.stats import beta

    assert 0.85577 < float(beta.ppf(0.00197, 40, 1)) < 0.85578
    rows = ["item_id,prompt_id,judge,model_a,model_b,human,p_a_first,p_a_second"]
    rows += [f"i{k},q{k},gpt-4,x,y,{k % 2},{k % 2},{k % 2}" for k in range(40)]
    data = tmp_path / "agree.csv"
    data.write_text("\n".join(rows) + "\n")
    assert main(["certify", "run", str(data), "--agreement", "0.8555", "--delta", "0.00197"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Certified at agreement ≥ 85.55% (--agreement 0.8555), δ = 0.00197"
    (row,) = [ln for ln in lines if "│ gpt-4" in ln]
    assert " 85.57% │ 0.00197 " in row, row


def test_a_stratum_that_certifies_no_target_names_the_lowest_as_a_percentage(
    shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GPT-3.5's family stratum on LLMBar's MT-Bench set agrees 21/42: no target from the
    # lowest tried, 0.50, passes; beside "lower bound 35.0% ... < 85.5%" it read "these
    # labels certify no target from 0.50", a share among percentages
    args = ["certify", "run", "llmbar-mtbench", "--agreement", "0.855", "-j", "gpt-3.5-turbo",
            "--data-dir", str(shared_data)]  # fmt: skip
    assert main(args) == 0
    (line,) = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("  family:")]
    assert line.endswith("< 85.5%; these labels certify no target from 50%"), line
