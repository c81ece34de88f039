"""Hostile input to `recuse certify` and `recuse certify apply`: a clear error (exit 2)
and nothing written, never a traceback or a file that looks valid."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from recuse.cli import main
from recuse.simulate.selective import simulate_selective


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(args)
    cap = capsys.readouterr()
    return code, cap.out + cap.err


def _pairs(tmp_path: Path) -> Path:
    path = tmp_path / "pairs.csv"
    simulate_selective(200, seed=3).pairs.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("price", ["inf", "1e400", "-inf", "1e308"])
def test_an_infinite_price_is_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], price: str
) -> None:
    """Before: `--cost gpt-4=inf` certified, then the JSON writer raised ValueError; and
    so did a finite price whose cascade cost overflowed (1e308 per stage: $inf)."""
    src, out = _pairs(tmp_path), tmp_path / "full.json"
    code, text = _run(["certify", str(src), "--cascade", "gpt-4", "--cost", f"gpt-4={price}",
                       "--out", str(out), "--json"], capsys)  # fmt: skip
    assert code == 2, text
    assert "--cost" in text and "Traceback" not in text
    assert not out.exists()


def _thresholds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, dict]:
    src, thr = _pairs(tmp_path), tmp_path / "thr.json"
    code, text = _run(["certify", str(src), "--agreement", "0.8", "--thresholds", str(thr)],
                      capsys)  # fmt: skip
    assert code == 0, text
    return src, json.loads(thr.read_text("utf-8"))


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda j: j["judges"][0]["thresholds"].update(other=7), "confidence in [0.5, 1]"),
        (lambda j: j["judges"][0]["thresholds"].update(other=True), "confidence in [0.5, 1]"),
        (lambda j: j["judges"][0]["thresholds"].update(other=math.nan), "confidence in [0.5, 1]"),
        (lambda j: j["judges"][0]["thresholds"].update(other=0.2), "confidence in [0.5, 1]"),
        (lambda j: j.update(cascade="yes"), "'cascade' must be true or false"),
        (lambda j: j.update(strata="no"), "'strata' must be true or false"),
        (lambda j: j["judges"].append(j["judges"][0]), "listed twice"),
        # each of these was read: a key the items' strata never look up sent every item
        # to a person (exit 0; an empty map is a judge with nothing certified), a map of
        # texts or lists stopped with numpy's TypeError or ValueError, a map past 1 gave
        # confidences above 1, a newer format was "no 'recuse_thresholds': 1", true was
        # format 1, and the guarantee's target and δ were never checked
        (lambda j: j.update(strata=False), "but 'strata' is false: its thresholds are for all"),
        (lambda j: j["judges"][0]["thresholds"].update(all=0.6),
         "thresholds has own, family, other, all, but 'strata' is true: its thresholds are "
         "for own/family/other"),
        (lambda j: j["judges"][0].update(recalibration={"x": [0, 1], "y": [0, 1]}),
         "judges[0] has confidence 'probability' with a recalibration map"),
        (lambda j: j["judges"][0].update(confidence="recalibrated probability"),
         "judges[0] has confidence 'recalibrated probability' without a recalibration map"),
        *[(lambda j, x=x, y=y: j["judges"][0].update(
            confidence="recalibrated probability", recalibration={"x": x, "y": y}),
           "recalibration must have lists x and y of one length, non-decreasing numbers in "
           "[0, 1]") for x, y in (([0, 1], [0, 5]), (["a"], ["b"]), ([[1]], [[2]]),
                                  ([1, 0], [0, 1]), ([0, 1], [0.2]))],
        (lambda j: j.update(recuse_thresholds=4),
         "format 4, this recuse reads 1, 2 or 3 (written by a newer recuse: upgrade to read it)"),
        (lambda j: j.update(recuse_thresholds=1.5), "format 1.5, this recuse reads 1, 2 or 3"),
        # between two formats it reads: no newer recuse wrote it, no upgrade reads it
        (lambda j: j.update(recuse_thresholds=1.5), "or 3 — give the --thresholds file"),
        (lambda j: j.update(recuse_thresholds=True), "no 'recuse_thresholds': 3"),
        (lambda j: j.update(delta=0.5), "'delta' must be a number in (0, 0.5), not 0.5"),
        (lambda j: j.update(delta=math.inf), "'delta' must be a number in (0, 0.5), not inf"),
        (lambda j: j.pop("target"), "'target' must be a number in [0.5, 1), not None"),
        (lambda j: j["judges"][0].update(judge=""), "judges[0] has no judge name"),
        (lambda j: j.update(reading={"swapped_frame": "sideways"}),
         "'reading' must map swapped_frame to original or presented"),
        (lambda j: j.update(reading={"frame": "original"}), "'reading' must map"),
        # a list stopped with TypeError (unhashable); an empty column name was read, and
        # the error blamed a --confidence '' the user never gave
        (lambda j: j.update(reference=["human"]), "'reference' must be human, correctness"),
        (lambda j: j.update(reading={"confidence": " "}), "confidence to null or a column name"),
        (lambda j: j.update(human_ties="yes"), "'human_ties' must be exclude or count, not 'yes'"),
        (lambda j: j.update(cascade=[list(range(10_000))]),
         "'cascade' must be true or false, not [[0, 1, 2"),
        # the certified coverage and share apply prints its kept shares beside
        (lambda j: j["judges"][0]["coverage"].update(other=7),
         "judges[0].coverage must map the strata of its thresholds (own, family, other) to "
         "null or a share in [0, 1], not {"),
        (lambda j: j["judges"][0]["coverage"].update(all=0.5), "judges[0].coverage must map"),
        (lambda j: j["judges"][0].update(thresholds={}),
         "judges[0].coverage must map the strata of its thresholds (none) to null"),
        (lambda j: j["judges"][0].update(coverage=[0.5]), "judges[0].coverage must map"),
        (lambda j: j["judges"][0]["coverage"].update(own=math.nan), "judges[0].coverage must"),
        (lambda j: j["judges"][0].update(share=-0.1),
         "judges[0].share must be null or a share in [0, 1], not -0.1"),
        (lambda j: j["judges"][0].update(share="half"), "judges[0].share must be null or a"),
    ],
)  # fmt: skip
def test_a_damaged_thresholds_file_is_refused_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Any, words: str
) -> None:
    """Before: a threshold of 7, true or NaN sent every item to a person (or kept by
    true = 1) and 'cascade': "yes" ran a cascade, each with exit 0 and a decisions file."""
    src, spec = _thresholds(tmp_path, capsys)
    edit(spec)
    damaged, out = tmp_path / "damaged.json", tmp_path / "decisions.csv"
    damaged.write_text(json.dumps(spec), "utf-8")  # NaN is written as NaN, as json reads it
    code, text = _run(["certify", "apply", str(damaged), str(src), "--out", str(out)], capsys)
    assert code == 2, text
    assert words in text and "not a certified thresholds file" in text
    assert not out.exists()


@pytest.mark.parametrize(
    "edit",
    [
        lambda j: j.update(target=0.99),
        lambda j: j.update(delta=0.0001),
        lambda j: j["judges"][0]["thresholds"].update(other=0.5),
        lambda j: j.update(sha256="0" * 64),
        lambda j: (j.update(target=0.99), j.pop("sha256")),  # its checksum taken out too
    ],
)
def test_a_thresholds_file_edited_in_range_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Any
) -> None:
    """A target of 0.99 (0.8 certified), a δ of 0.0001 or a threshold lowered to 0.5 is
    in range, so the file was read: exit 0, decisions written and "agreement ≥ 99%" printed
    beside 87% observed, a guarantee the certification never gave. The file records the
    sha256 of its values: an edit is refused (exit 2, nothing written), and the file as
    written, with its keys in another order and other spacing, still applies."""
    src, spec = _thresholds(tmp_path, capsys)
    out = tmp_path / "decisions.csv"
    same = tmp_path / "same.json"
    same.write_text(json.dumps(dict(reversed(spec.items())), indent=1), "utf-8")
    code, text = _run(["certify", "apply", str(same), str(src), "--out", str(out)], capsys)
    assert code == 0 and out.exists(), text
    out.unlink()
    edit(spec)
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(spec), "utf-8")
    code, text = _run(["certify", "apply", str(edited), str(src), "--out", str(out)], capsys)
    assert code == 2, text
    assert ("its values were changed after `recuse certify` wrote them" in text
            or "records the sha256 of its values, and this file has none" in text)  # fmt: skip
    assert not out.exists()


def test_applying_to_a_table_of_another_judge_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: thresholds certified for gpt-4 applied to a table of claude-v1's verdicts
    sent all items 'to a person' with exit 0, as if gpt-4 had judged them unsure."""
    src, _ = _thresholds(tmp_path, capsys)
    thr = tmp_path / "thr.json"
    other = tmp_path / "other.csv"
    table = pd.read_csv(src).drop(columns="human")
    table.assign(judge="claude-v1").to_csv(other, index=False)
    out = tmp_path / "decisions.csv"
    code, text = _run(["certify", "apply", str(thr), str(other), "--out", str(out)], capsys)
    assert code == 2, text
    assert "no verdicts of gpt-4" in text and "claude-v1" in text
    assert not out.exists()


def test_an_output_that_is_the_input_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: `recuse certify pairs.csv --thresholds pairs.csv` replaced the labelled
    table by the thresholds JSON, and `certify apply thr.json new.csv --out new.csv`
    replaced the table it decided."""
    src, _ = _thresholds(tmp_path, capsys)
    before = src.read_bytes()
    code, text = _run(["certify", str(src), "--thresholds", str(src)], capsys)
    assert code == 2 and "--thresholds" in text and "is the input" in text, text
    thr = tmp_path / "thr.json"
    spec = thr.read_bytes()
    for out in (src, thr):
        code, text = _run(["certify", "apply", str(thr), str(src), "--out", str(out)], capsys)
        assert code == 2 and "is the input" in text, text
    assert src.read_bytes() == before and thr.read_bytes() == spec
    # --out and --thresholds naming one file: the thresholds replaced the full result
    one = tmp_path / "one.json"
    code, text = _run(["certify", str(src), "--out", str(one), "--thresholds",
                       str(tmp_path / "." / "one.json")], capsys)  # fmt: skip
    assert code == 2 and "name one file" in text and not one.exists(), text


@pytest.mark.parametrize("names", [",", " , ,", ""])
def test_a_cascade_or_judge_list_without_names_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], names: str
) -> None:
    """Before: `--cascade ,` certified the judges and silently ran no cascade. An empty
    value is refused as every option's is (`certify SOURCE` runs `certify run`, whose
    options these are: the refusal of empty arguments read `--cascade ""`'s value as an
    empty SOURCE, 'give a file, folder or dataset name')."""
    src = _pairs(tmp_path)
    for option in ("--cascade", "--judge"):
        code, text = _run(["certify", str(src), option, names], capsys)
        assert code == 2, text
        said = (
            f"{option} is given an empty value (an unset shell variable?)"
            if not names
            else f"{option} {names!r} names no judge"
        )
        assert said in text and "Traceback" not in text, text


@pytest.mark.parametrize("names", ["gpt-4,,claude-v1", ",gpt-4", "gpt-4,", "gpt-4, ,claude-v1"])
def test_a_cascade_or_judge_list_with_an_empty_name_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], names: str
) -> None:
    """Before: `--cascade gpt-4,,claude-v1` dropped the empty name and ran on (`,gpt-4`
    certified a cascade of gpt-4 alone) — a typo read as a shorter list."""
    src = _pairs(tmp_path)
    for option in ("--cascade", "--judge"):
        code, text = _run(["certify", str(src), option, names], capsys)
        assert code == 2, text
        assert f"{option} {names!r} has an empty name (a comma too many)" in text
        assert "Traceback" not in text and "Cascade" not in text


def test_a_cascade_that_certifies_nothing_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: "machine verdicts agree with humans  on the calibration items,  held out"
    (blanks) when no stage certified an item; the judges table had blank agreements."""
    src = _pairs(tmp_path)
    code, text = _run(["certify", str(src), "--cascade", "gpt-4", "--agreement", "0.99"], capsys)
    assert code == 0, text
    assert "humans  on" not in text and ",  held out" not in text
    assert "machine verdicts: none certified (no judge kept an item)" in text
    table = [line for line in text.splitlines() if line.startswith("│ gpt-4")]
    assert len(table) == 3 and all(line.count("none certified") == 2 for line in table)
    # no cell of a number column is blank: the bound (no test was run: too few labels)
    # and a stage's price (none given) say so
    cells = [[c.strip() for c in line.split("│")[1:-1]] for line in table]
    assert all(row[6] == "not tested" and "" not in row for row in cells), cells
    stage = next(line for line in text.splitlines() if line.startswith("│     1 │ gpt-4"))
    assert stage.split("│")[-2].strip() == "unknown"
    code, text = _run(["certify", str(src), "--cascade", "gpt-4", "--agreement", "0.8"], capsys)
    assert code == 0 and "machine verdicts agree with humans " in text and "% held out" in text


def test_one_judge_priced_twice_in_cost_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--cost gpt-4=1,GPT-4=30`` (or ``gpt-4=1 --cost gpt-4=30``) priced the judge at
    whichever came last, the other price dropped without a word."""
    src = _pairs(tmp_path)
    both, twice = "'gpt-4' and 'GPT-4' are both judge 'gpt-4', priced", "'gpt-4' is priced twice,"
    for costs, said in ((["gpt-4=1,GPT-4=30"], both),
                        (["gpt-4=1", "--cost", "gpt-4=30"], twice)):  # fmt: skip
        code, text = _run(["certify", str(src), "--cascade", "gpt-4", "--cost", *costs], capsys)
        assert code == 2 and "Traceback" not in text, text
        assert f"--cost: {said} 1 and 30 — give one price per judge" in text, text
    code, text = _run(["certify", str(src), "--cascade", "gpt-4", "--cost", "gpt-4=30,GPT-4=30"],
                      capsys)  # fmt: skip
    assert code == 0, text


@pytest.mark.parametrize(
    ("text", "words"),
    [("[" * 100_000 + "]" * 100_000, "not JSON (JSON nested too deeply for Python to read)"),
     ('{"recuse_thresholds": ' + "1" * 5_000 + "}",
      "not JSON (a JSON integer has more than 4,300 digits"),
     ('{"target": 0.8,', "not JSON (Expecting property name")],
)  # fmt: skip
def test_a_thresholds_file_json_cannot_read_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, words: str
) -> None:
    """A file nested too deeply, or with an integer of 5,000 digits, stopped certify apply
    with RecursionError / ValueError tracebacks."""
    src, _ = _thresholds(tmp_path, capsys)
    bad, out = tmp_path / "bad.json", tmp_path / "decisions.csv"
    bad.write_text(text, "utf-8")
    code, said = _run(["certify", "apply", str(bad), str(src), "--out", str(out)], capsys)
    assert code == 2 and words in said and "bad.json" in said, said
    assert "Traceback" not in said and not out.exists()


def test_a_thresholds_path_that_is_a_folder_is_said_to_be_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder given as the thresholds file read 'thresholds file not found'."""
    src, _ = _thresholds(tmp_path, capsys)
    folder, out = tmp_path / "thresholds", tmp_path / "decisions.csv"
    folder.mkdir()
    code, said = _run(["certify", "apply", str(folder), str(src), "--out", str(out)], capsys)
    assert code == 2 and f"{folder}: a folder, not a file — give a file in it" in said, said
    code, said = _run(["certify", "apply", str(folder / "t.json"), str(src), "--out", str(out)],
                      capsys)  # fmt: skip
    assert code == 2 and "t.json: file not found — write one with `recuse certify" in said
    assert not out.exists()


def test_a_table_without_labels_is_named_by_its_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pairs file without a human column: "column 'human': the table has no human
    labels …", no file named; the file is named now."""
    path = _pairs(tmp_path)
    pd.read_csv(path).drop(columns="human").to_csv(path, index=False)
    code, text = _run(["certify", str(path)], capsys)
    assert code == 2 and "Traceback" not in text
    assert f"recuse: error: {path}, column 'human': the table has no human labels" in text
