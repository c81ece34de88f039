"""Every command that reads JudgeBench names its labels as correctness labels, not human
ones (recuse.reference), in the terminal and in the JSON it prints or writes; a
human-labelled set keeps "human"; a file whose rows mix both kinds says "reference
label" and counts the rows of each kind."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from recuse.cli import main
from recuse.data.inputs import file_reference, load_input

HUMAN = re.compile(r"\bhumans?\b", re.IGNORECASE)  # a word: not `human_ties`, a metric's id
JUDGES = ("o1-mini-2024-09-12", "internlm2-20b-reward")  # the certified two at 0.55


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    cap = capsys.readouterr()
    return code, cap.out + cap.err


def _said_human(text: str) -> list[str]:
    """The lines that say human(s) as a word."""
    return [line for line in text.splitlines() if HUMAN.search(line)]


def _strings(value: object, *, keys: bool = True) -> list[str]:
    """Every string of a JSON value, keys included unless ``keys`` is False."""
    if isinstance(value, dict):
        return [
            s
            for k, v in value.items()
            for s in ((str(k),) if keys else ()) + tuple(_strings(v, keys=keys))
        ]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v, keys=keys)]
    return [value] if isinstance(value, str) else []


def test_certify_terminal_and_json_name_correctness_labels(
    shared_data: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`certify --json` said "agreement with humans" in every guarantee (its strings are
    made by the certificates, which now know the labels' kind)."""
    args = ("certify", "judgebench", "--data-dir", str(shared_data), "--agreement", "0.55",
            "--cascade", ",".join(JUDGES))  # fmt: skip
    code, text = _run(capsys, *args)
    assert code == 0, text
    assert _said_human(text) == []
    assert "guarantee: agreement with the correctness labels ≥ 55%" in text
    code, text = _run(capsys, *args, "--json", "--out", str(tmp_path / "c.json"))
    assert code == 0, text
    printed = json.loads(text)
    assert printed == json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    assert [s for s in _strings(printed) if HUMAN.search(s)] == []
    guarantees = [j["guarantee"] for j in printed["judges"] if j["certified"]]
    assert guarantees and all("agreement with the correctness labels ≥ 55%" in g
                              for g in guarantees)  # fmt: skip
    assert printed["cascade"]["guarantee"].startswith("agreement with the correctness labels")
    assert printed["reference"] == "correctness labels"
    assert printed["settings"]["reference"] == "correctness"


def test_certify_keeps_human_words_for_human_labels(
    shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = _run(capsys, "certify", "llmbar-mtbench", "--data-dir", str(shared_data),
                      "--json", "--cascade", "gpt-3.5-turbo,gpt-4")  # fmt: skip
    assert code == 0, text
    printed = json.loads(text)
    assert printed["reference"] == "human labels"
    assert printed["cascade"]["guarantee"].startswith("agreement with humans ≥ 85%")


def test_metrics_pairs_names_correctness_labels(
    shared_data: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`metrics pairs judgebench` said "the human prefers" in its methods, count names
    and skip reasons; now its words follow the labels, and its ids stay as they are."""
    out = tmp_path / "m.json"
    code, text = _run(capsys, "metrics", "pairs", "judgebench", "--data-dir", str(shared_data),
                      "--n-boot", "100", "-j", JUDGES[0], "-o", str(out))  # fmt: skip
    assert code == 0, text
    assert _said_human(text) == []
    # its judges never judged their own answers: said as such (the label's words are
    # checked in the methods and counts below)
    assert "no pairs holding the judge's own answer" in text
    written = json.loads(out.read_text(encoding="utf-8"))
    assert [s for s in _strings(written) if HUMAN.search(s)] == []
    (gap,) = [r for r in written["results"] if r["metric"] == "verbosity_bias"]
    assert "recall when the correctness label favours the longer response" in gap["method"]
    assert set(gap["counts"]) == {
        "pairs where the correctness label favours the longer response",
        "pairs where the correctness label favours the shorter response",
    }
    assert set(gap["components"]) == {"recall_human_prefers_longer", "recall_human_prefers_shorter"}


def test_metrics_pairs_keeps_human_words_for_human_labels(
    shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = _run(capsys, "metrics", "pairs", "llmbar-mtbench", "--data-dir",
                      str(shared_data), "--n-boot", "100", "-j", "gpt-4")  # fmt: skip
    assert code == 0, text
    assert "the human prefers" in text


def test_audit_of_judgebench_says_correctness(
    shared_data: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The audit's terminal, and its report.json but for the note that the label is not
    a human judgment (the rewording itself: tests/report/test_reference_words.py)."""
    code, text = _run(capsys, "audit", "judgebench", "--data-dir", str(shared_data),
                      "--n-boot", "100", "--robustness", "none", "-j", JUDGES[0],
                      "-o", str(tmp_path / "r"))  # fmt: skip
    assert code == 0, text
    assert _said_human(text) == []
    report = json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))
    # the words, not the ids (a table's file name, human-verbosity-curve-judgebench; the
    # options' keys)
    (said,) = [s for s in _strings(report, keys=False) if " " in s and HUMAN.search(s)]
    assert said.startswith("In judgebench the reference label is objective correctness")
    assert "not a human judgment" in said


# ------------------------------------------------------------------ files of rows


def _frame(shared_data: Path, name: str, judges: tuple[str, ...]) -> pd.DataFrame:
    frame = load_input(name, data_dir=shared_data).frame
    return frame[frame["judge"].isin(judges)]


@pytest.fixture(scope="module")
def files(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """JudgeBench's rows as a file (its source column names judgebench), and those rows
    with LLMBar's MT-Bench set's (source llmbar) in one file."""
    folder = tmp_path_factory.mktemp("reference")
    jb = _frame(shared_data, "judgebench", JUDGES)
    ll = _frame(shared_data, "llmbar-mtbench", ("gpt-4", "gpt-3.5-turbo"))
    paths = {"judgebench": folder / "jb.csv", "mixed": folder / "mixed.csv"}
    jb.to_csv(paths["judgebench"], index=False)
    pd.concat([jb, ll]).to_csv(paths["mixed"], index=False)
    return paths


def test_a_file_of_judgebench_rows_is_worded_for_correctness(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    source = load_input(files["judgebench"]).source
    assert (source.reference, source.notes) == ("correctness", ())
    assert source.label == "objective correctness (which response is right)"
    code, text = _run(capsys, "certify", str(files["judgebench"]), "--agreement", "0.55")
    assert code == 0, text
    assert _said_human(text) == []
    assert "agreement with the correctness labels ≥ 55%" in text


def test_a_file_mixing_kinds_says_reference_label_and_counts_each_kind(
    shared_data: Path, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """The rows of each kind counted another way: each dataset read on its own."""
    n_jb = int(_frame(shared_data, "judgebench", JUDGES)["human"].notna().sum())
    n_ll = int(_frame(shared_data, "llmbar-mtbench", ("gpt-4", "gpt-3.5-turbo"))["human"]
               .notna().sum())  # fmt: skip
    source = load_input(files["mixed"]).source
    assert source.reference == "mixed" and source.label == ""
    (note,) = source.notes
    assert note == (
        f"the file's {n_jb + n_ll:,} labelled rows mix kinds of reference label: "
        f"{n_jb:,} of correctness labels (source: judgebench), {n_ll:,} of human labels "
        "(source: llmbar). Its findings and reasons say 'reference label' for all of them; "
        "to have each kind named, give its rows as a file of their own."
    )
    assert source.to_dict()["reference"] == (
        "reference labels of mixed kinds (human and correctness)"
    )
    for args in (
        ("certify", str(files["mixed"]), "--agreement", "0.55"),
        ("metrics", "pairs", str(files["mixed"]), "--n-boot", "100"),
    ):
        code, text = _run(capsys, *args)
        assert code == 0, text
        assert _said_human(text) == [f"note: {note}"], args  # the note alone says it
    code, text = _run(capsys, "certify", str(files["mixed"]), "--agreement", "0.55", "--json")
    printed = json.loads(text)
    assert printed["notes"] == [note]
    assert [s for s in _strings(printed) if HUMAN.search(s)] == [printed["reference"], note]
    assert "agreement with the reference labels ≥ 55%" in printed["judges"][0]["guarantee"]


def test_an_audit_of_a_mixed_file_says_reference_label(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The findings, their methods and the skips say "reference label"; the note counts
    the rows; report.json (checked against its schema) names the labels so."""
    out = tmp_path / "r"
    code, text = _run(capsys, "audit", str(files["mixed"]), "--n-boot", "100",
                      "--robustness", "none", "--only", "agreement,verbosity,self-preference",
                      "-o", str(out))  # fmt: skip
    assert code == 0, text
    (note,) = load_input(files["mixed"]).source.notes
    assert _said_human(text) == [f"note: {note}"]
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    (source,) = report["provenance"]["sources"]
    assert source["reference"] == "reference labels of mixed kinds (human and correctness)"
    findings = [f for s in report["sections"] for f in s["findings"]]
    assert findings
    for f in findings:
        assert not HUMAN.search(f["unit"] + f["verdict"] + f["method"]), f["bias"]
    accuracy = [f for f in findings if f["bias"] == "agreement_accuracy"]
    assert accuracy and all(f["method"].startswith("accuracy against the reference label")
                            for f in accuracy)  # fmt: skip
    assert note in report["notes"]
    # nothing else says it: the tables' sentences (warnings, a rung's definition, a
    # curve's note) are worded as the findings are; ids (column names, file names) stay
    prose = {s for s in _strings(report, keys=False) if " " in s and HUMAN.search(s)}
    assert prose == {note, source["reference"]}


def test_file_reference_by_hand() -> None:
    """Rows name their dataset in `source`; a row naming none, or an unknown one, is
    human-labelled as any file's; unlabelled rows carry no kind."""
    frame = pd.DataFrame({
        "source": ["judgebench", "JudgeBench ", None, "my-set", "judgebench", "llmbar"],
        "human": [1.0, 0.0, 1.0, 0.5, None, 1.0],
    })  # fmt: skip
    kind, label, (note,) = file_reference(frame, "pairs")
    assert (kind, label) == ("mixed", "")
    assert note.startswith(
        "the file's 5 labelled rows mix kinds of reference label: 2 of correctness labels "
        "(source: JudgeBench, judgebench), 3 of human labels (source: llmbar, my-set; none "
        "named)."
    )
    assert file_reference(frame.iloc[[0, 1, 4]], "pairs")[:2] == (
        "correctness",
        "objective correctness (which response is right)",
    )
    assert file_reference(frame.iloc[[2, 3, 4, 5]], "pairs") == ("human", "", ())
    assert file_reference(frame.drop(columns="source"), "pairs") == ("human", "", ())


def test_a_source_that_nearly_names_a_correctness_dataset_is_said(tmp_path: Path) -> None:
    """A typo ('judge_bench') made JudgeBench's rows human-labelled with nothing said;
    a source near a dataset whose labels are not human gets a note (a source far from
    any, as a user's own 'my-set', none)."""
    frame = pd.DataFrame({
        "source": ["judge_bench", "judge_bench", "my-set", "JudgeBnech"],
        "human": [1.0, 0.0, 1.0, 0.5],
    })  # fmt: skip
    kind, _, notes = file_reference(frame.iloc[:3], "pairs")
    assert kind == "human" and notes == (
        "source 'judge_bench' (2 labelled rows) names no dataset recuse knows, so its labels "
        "are read as human ones; if it means 'judgebench' (correctness labels), write it so",
    )
    assert file_reference(frame.iloc[[2]], "pairs") == ("human", "", ())
    _, _, notes = file_reference(frame, "pairs")
    assert [n.split(" (")[0] for n in notes] == ["source 'judge_bench'", "source 'JudgeBnech'"]
    assert "1 labelled row)" in notes[1]


@pytest.mark.parametrize("name", ["recuse.reference", "recuse.terminal", "recuse.bootstrap_rules"])
def test_doctests(name: str) -> None:
    """reword's examples (the mixed kind's too), shown/json_shown, check_interval_level."""
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_validate_names_the_files_labels(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """validate's counts and the reasons an analysis is not supported, terminal and JSON:
    a file of JudgeBench rows has correctness labels, a mixed one reference labels."""
    for name, label in (("judgebench", "correctness label"), ("mixed", "reference label")):
        frame = load_input(files[name]).frame
        code, text = _run(capsys, "validate", str(files[name]))
        assert code == 0, text
        said = _said_human(text)
        assert said == ([] if name == "judgebench" else [f"note: {n}" for n in
                        load_input(files[name]).source.notes])  # fmt: skip
        code, text = _run(capsys, "validate", str(files[name]), "--json")
        counts = json.loads(text)["counts"]
        assert counts[f"rows with a {label}"] == int(frame["human"].notna().sum())
        assert counts[f"{label}: a better"] == int((frame["human"] > 0.5).sum())
        why = [a["why_not"] for a in json.loads(text)["analyses"]]
        assert not any(HUMAN.search(w) for w in why), why
