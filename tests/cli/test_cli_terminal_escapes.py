"""Text read from files or models reaches the terminal with the characters a terminal
acts on (ESC sequences, other controls, bidirectional overrides) written as escapes
(`recuse.cli.console.shown`), in every command; the files the commands write keep the
text as read, and JSON printed on stdout still parses to it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from recuse.cli import main
from recuse.files import path_text
from recuse.simulate.pairs import PlantedBias, simulate_pairs
from recuse.simulate.ratings import simulate_ratings
from recuse.simulate.selective import simulate_selective

EVIL = "judge\x1b[2J\u202eevil"  # clears the screen, then reverses what follows
ESCAPED = "judge\\x1b[2J\\u202eevil"


def _run(capsys: pytest.CaptureFixture[str], *args: object, out: bool = False) -> tuple[int, str]:
    """Exit code and what the terminal got (stdout alone with ``out``: its JSON)."""
    code = main([str(a) for a in args])
    cap = capsys.readouterr()
    return code, cap.out if out else cap.out + cap.err


def _escaped(text: str) -> None:
    """The terminal got the escapes and none of the characters."""
    assert ESCAPED in text, text[-2000:]
    for raw in ("\x1b", "\u202e"):
        assert raw not in text


@pytest.fixture(scope="module")
def pairs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A pairs file whose judge is named EVIL."""
    sim = simulate_pairs(judges={"gpt-4": PlantedBias(position=0.2)}, n_prompts=30, seed=3)
    path = tmp_path_factory.mktemp("evil") / "pairs.csv"
    sim.pairs.assign(judge=EVIL).to_csv(path, index=False)
    return path


def test_metrics_pairs(pairs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "m.json"
    code, text = _run(capsys, "metrics", "pairs", pairs, "--n-boot", "100", "-o", out)
    assert code == 0, text
    _escaped(text)
    written = json.loads(out.read_text(encoding="utf-8"))
    assert {r["judge"] for r in written["results"]} == {EVIL}


def test_certify_terminal_json_and_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "sel.csv"
    frame = simulate_selective(300, seed=5).pairs
    (first,) = sorted(set(frame["judge"]))[:1]
    frame.loc[frame["judge"] == first, "judge"] = EVIL
    frame.to_csv(path, index=False)
    code, text = _run(capsys, "certify", path)
    assert code == 0, text
    _escaped(text)
    out = tmp_path / "c.json"
    code, text = _run(capsys, "certify", path, "--json", "--out", out, out=True)
    assert code == 0, text
    assert "\x1b" not in text and "\u202e" not in text
    printed = json.loads(text)  # still JSON: the escapes are JSON's own
    assert EVIL in {j["judge"] for j in printed["judges"]}
    assert printed == json.loads(out.read_text(encoding="utf-8"))
    assert "\u202e" in out.read_text(encoding="utf-8")  # the file keeps the name as read


def test_validate_terminal_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file's own name, printed as the table's title, and its notes."""
    sim = simulate_pairs(judges={"gpt-4": PlantedBias()}, n_prompts=10, seed=1)
    path = tmp_path / f"{EVIL}.csv"
    sim.pairs.to_csv(path, index=False)
    code, text = _run(capsys, "validate", path)
    assert code == 0, text
    _escaped(text)
    code, text = _run(capsys, "validate", path, "--json", out=True)
    assert code == 0, text
    assert "\x1b" not in text and "\u202e" not in text
    assert json.loads(text)["file"] == str(path)


def test_gate_terminal_and_json(
    pairs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r"
    code, text = _run(capsys, "audit", pairs, "--out", out, "--n-boot", "200",
                      "--only", "position", "--robustness", "none")  # fmt: skip
    assert code == 0, text
    code, text = _run(capsys, "gate", out / "report.json", "--max", "position=0.5")
    assert code == 0, text
    _escaped(text)
    code, text = _run(capsys, "gate", out / "report.json", "--max", "position=0.5", "--json",
                      out=True)  # fmt: skip
    assert "\x1b" not in text and "\u202e" not in text
    (line,) = json.loads(text)["lines"]
    assert line["judge"] == EVIL and EVIL in line["text"]


def test_favoritism(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sim = simulate_ratings(seed=1, n_prompts=30)
    judge = sorted(sim.families)[0]
    families = {(EVIL if j == judge else j): f for j, f in sim.families.items()}
    roster = tmp_path / "roster.toml"
    roster.write_text(
        "".join(
            f"[[model]]\nid = {json.dumps(j)}\nfamily = {json.dumps(f)}\n\n"
            for j, f in families.items()
        ),
        encoding="utf-8",
    )
    ratings = sim.ratings.replace({"judge": {judge: EVIL}, "model": {judge: EVIL}})
    ratings.to_csv(tmp_path / "ratings.csv", index=False)
    out = tmp_path / "fav"
    code, text = _run(capsys, "--roster", roster, "favoritism", tmp_path / "ratings.csv",
                      "--out", out)  # fmt: skip
    assert code == 0, text
    _escaped(text)
    coefficients = pd.read_csv(out / "coefficients.csv", keep_default_na=False)
    assert EVIL in set(coefficients.astype(str).stack())


def test_errors_and_reader_notes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file's name in an error (plan --like, a missing file) and in a reader's note
    (a model name the roster lacks)."""
    code, text = _run(capsys, "plan", "--like", tmp_path / f"{EVIL}.csv", "--quiet")
    assert code == 2
    _escaped(text)
    code, text = _run(capsys, "metrics", "pairs", tmp_path / f"{EVIL}.csv")
    assert code == 2
    _escaped(text)
    code, text = _run(capsys, "validate", tmp_path / f"{EVIL}.csv", "--json", out=True)
    assert code == 2
    assert "\x1b" not in text and "\u202e" not in text
    assert EVIL in json.loads(text)["error"]  # the error object on stdout, still JSON


def test_data_list_and_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / EVIL
    folder.mkdir()
    code, text = _run(capsys, "data", "list", "--data-dir", folder)
    assert code == 0, text
    _escaped(text)
    code, text = _run(capsys, "data", "summary", "--data-dir", folder)
    assert code == 2
    _escaped(text)


def _texts(path: Path, n: int) -> Path:
    pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in range(n)],
            "prompt_id": [f"q{k}" for k in range(n)],
            "prompt": [f"Question {k}?" for k in range(n)],
            "response_a": [f"Answer one to {k}." for k in range(n)],
            "response_b": [f"Answer two to {k}, longer." for k in range(n)],
        }
    ).to_csv(path, index=False)
    return path


def test_judge_its_card_and_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The judge's name as the store holds it, read back by `judge card` and `export`."""
    from recuse.testing.standin import StandIn

    src, store, table = _texts(tmp_path / "p.csv", 4), tmp_path / "s.db", tmp_path / "t.csv"
    with StandIn() as server:
        code, text = _run(capsys, "judge", "--data", src, "--out", store, "--base-url",
                          server.base_url, "--model", "gpt-4o", "--judge-id", EVIL,
                          "--no-progress")  # fmt: skip
    assert code == 0, text
    _escaped(text)
    code, text = _run(capsys, "judge", "card", store)
    assert code == 0, text
    _escaped(text)
    code, text = _run(capsys, "judge", "export", store, "--out", table)
    assert code == 0, text
    _escaped(text)
    assert set(pd.read_csv(table)["judge"]) == {EVIL}


def test_probe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from recuse.testing.standin import StandIn

    src, store = _texts(tmp_path / "p.csv", 4), tmp_path / "s.db"
    with StandIn() as server:
        code, text = _run(capsys, "probe", "--data", src, "--out", store, "--base-url",
                          server.base_url, "--model", "gpt-4o", "--judge-id", EVIL,
                          "--probe", "padding", "--no-progress")  # fmt: skip
    assert code == 0, text
    _escaped(text)


#: a judge whose name would forge lines: a newline and a carriage return in it
FORGED = "x\nPASS: forged\rline"
FORGED_SHOWN = "x\\nPASS: forged\\rline"


def _one_line_each(text: str) -> None:
    """The forged name was printed escaped, on its own line: no line starts with what
    followed the newline, and no carriage return (a terminal's return to the line's
    start, over which the rest is printed) is left."""
    assert FORGED_SHOWN in text, text[-2000:]
    assert "\r" not in text and "\u2028" not in text
    assert not [line for line in text.splitlines() if line.lstrip(" │|").startswith("PASS")]


def test_a_name_with_a_newline_keeps_each_line_of_the_audit_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The audit's summary table (each row a line, its columns aligned), its warnings
    and its --verbose sentences, and the progress on stderr; report.json keeps the
    name as read."""
    sim = simulate_pairs(judges={"gpt-4": PlantedBias(position=0.2)}, n_prompts=30, seed=3)
    data = tmp_path / "pairs.csv"
    sim.pairs.assign(judge=FORGED).to_csv(data, index=False)
    out = tmp_path / "r"
    code, text = _run(capsys, "audit", data, "--out", out, "--n-boot", "200", "--only",
                      "position", "--robustness", "none", "--verbose")  # fmt: skip
    assert code == 0, text
    _one_line_each(text)
    table = [line for line in text.splitlines() if line.startswith("|")]
    assert len(table) == 3 and len({len(line) for line in table}) == 1, table  # aligned
    assert table[2].startswith(f"| {FORGED_SHOWN} | ")
    assert f"{FORGED_SHOWN}: 1 of 1 estimated biases flagged" in text  # --verbose
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert {f["judge"] for s in report["sections"] for f in s["findings"]} == {FORGED}


def _selective(folder: Path) -> Path:
    path = folder / "sel.csv"
    simulate_selective(300, seed=5).pairs.assign(judge=FORGED).to_csv(path, index=False)
    return path


def test_a_name_with_a_newline_keeps_certifys_lines_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """certify's table and guarantee lines; the --out file keeps the name as read."""
    path = _selective(tmp_path)
    out = tmp_path / "c.json"
    code, text = _run(capsys, "certify", path, "--out", out)
    assert code == 0, text
    _one_line_each(text)
    assert f"  {FORGED_SHOWN}: agreement with humans ≥ 85%" in text  # the guarantee line
    assert [j["judge"] for j in json.loads(out.read_text(encoding="utf-8"))["judges"]] == [FORGED]


def test_an_error_quoting_a_name_with_a_newline_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An error that lists the judges of the data (and the reader's note naming the
    model the roster lacks) stays one line each."""
    code, text = _run(capsys, "certify", _selective(tmp_path), "--judge", "nosuch")
    assert code == 2
    _one_line_each(text)
    (error,) = [line for line in text.splitlines() if line.startswith("recuse: error:")]
    assert error.endswith(f"judges present: {FORGED_SHOWN}")
    (note,) = {line for line in text.splitlines() if line.startswith("recuse: note:")}
    assert FORGED_SHOWN in note and "not in the roster" in note


def test_an_input_error_keeps_names_that_differ_in_whitespace_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A row's unknown label names the models it compares: "gpt\\n4" is quoted as
    gpt\\n4, not as "gpt 4" (the error's whitespace used to be collapsed), on one line
    of the terminal and in the JSON error object alike."""
    sim = simulate_pairs(judges={"gpt-4": PlantedBias()}, n_prompts=3, seed=1)
    names = ["gpt\n4", "gpt 4", "gpt  4", "gpt\u20284"]
    errors = []
    for name in names:
        frame = sim.pairs.astype({"human": object})
        frame.loc[1, ["human", "model_a"]] = ["maybe", name]
        path = tmp_path / "pairs.csv"
        frame.to_csv(path, index=False)
        code, text = _run(capsys, "validate", path)
        assert code == 2
        assert "\u2028" not in text
        (error,) = [line for line in text.splitlines() if line.startswith("recuse: error:")]
        errors.append(error.removeprefix("recuse: error: "))
        code, text = _run(capsys, "validate", path, "--json", out=True)
        assert code == 2 and json.loads(text)["error"] == errors[-1]
    assert len(set(errors)) == len(names), errors
    shown = ["gpt\\n4", "gpt 4", "gpt  4", "gpt\\u20284"]
    for error, name in zip(errors, shown, strict=True):
        assert f"this row compares '{name}' and " in error, error


def test_json_on_stdout_is_utf8_for_a_file_name_that_is_not(tmp_path: Path) -> None:
    """A file name with bytes that are not UTF-8 (Python reads b"\\xff" as "\\udcff"):
    the JSON `recuse validate --json` prints, its report and its error object alike, is
    UTF-8 (the raw byte was written, which jq refuses) and names the file as report.json
    and the error line on stderr do, `pairs-\\xff.csv` (it read "pairs-\\udcff.csv")."""
    sim = simulate_pairs(judges={"gpt-4": PlantedBias()}, n_prompts=3, seed=1)
    good = Path(os.fsdecode(bytes(tmp_path) + b"/pairs-\xff.csv"))
    bad = Path(os.fsdecode(bytes(tmp_path) + b"/other-\xfe.csv"))
    sim.pairs.to_csv(good, index=False)
    pd.DataFrame({"x": [1]}).to_csv(bad, index=False)  # no pairs columns: an error
    for path, code, key in [(good, 0, "file"), (bad, 2, "error")]:
        run = subprocess.run(
            [sys.executable, "-m", "recuse", "validate", "--json", os.fsencode(path)],
            capture_output=True,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
            timeout=120,
        )
        assert run.returncode == code, run.stderr
        said = json.loads(run.stdout.decode("utf-8"))  # strict: raises on a raw 0xff
        assert path_text(str(path)) in said[key] and str(path) not in said[key]
        assert path_text(str(path)) in run.stderr.decode("utf-8") or code == 0
