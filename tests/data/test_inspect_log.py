"""Inspect AI logs (.eval zip with Zstandard or deflate members, .json) -> ratings.

capitals.eval / capitals.json were written by inspect-ai 0.3.285 itself (offline, mock
models; tests/data/importers/make_inspect_log.py): four samples answered by
mockllm/model, graded by model_graded_qa with mockllm/model as grader (self-grading,
partial credit; grades C, I, P and one reply without a grade) and by model_graded_fact
with mockllm/grader (C, I, C, I), plus the deterministic scorer includes.
"""

from __future__ import annotations

import json
import math
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from recuse.data.importers import References, read_import, sniff
from recuse.data.inspect_log import grade_value, read_inspect_log
from recuse.errors import InputError
from recuse.roster import Entry, Roster

HERE = Path(__file__).parent / "importers"
EVAL = HERE / "capitals.eval"
JSON = HERE / "capitals.json"
UPSTREAM = HERE / "upstream" / "inspect"


def roster() -> Roster:
    r = Roster.builtin()
    r.add(Entry("mockllm/model", "mock"))
    r.add(Entry("mockllm/grader", "mock-grader"))
    return r


@pytest.fixture(scope="module")
def ratings() -> pd.DataFrame:
    return read_inspect_log(EVAL, roster=roster())


def _by(frame: pd.DataFrame, scorer: str) -> pd.DataFrame:
    return frame[frame["dimension"] == scorer].set_index("prompt_id").sort_index()


def test_grades_by_hand(ratings: pd.DataFrame) -> None:
    qa, fact = _by(ratings, "model_graded_qa"), _by(ratings, "model_graded_fact")
    np.testing.assert_equal(qa["rating"].to_numpy(), [1.0, 0.0, 0.5, np.nan])  # C, I, P, none
    assert list(qa["status"]) == ["ok", "ok", "ok", "unparsed"]
    np.testing.assert_equal(fact["rating"].to_numpy(), [1.0, 0.0, 1.0, 0.0])
    assert set(qa["judge"]) == {"mockllm/model"} and set(fact["judge"]) == {"mockllm/grader"}
    assert set(ratings["model"]) == {"mockllm/model"} and set(ratings["task"]) == {"capitals"}
    assert ratings["reference"].isna().all() and (ratings["epochs"] == 1).all()
    assert "includes" not in set(ratings["dimension"])


def test_self_grading_is_flagged(ratings: pd.DataFrame) -> None:
    assert _by(ratings, "model_graded_qa")["self_graded"].all()
    assert not _by(ratings, "model_graded_fact")["self_graded"].any()
    notes = ratings.attrs["notes"]
    assert any(
        n.startswith("Self-grading in capitals.eval: scorer model_graded_qa is graded by "
                     "mockllm/model, which is the evaluated model") for n in notes
    )  # fmt: skip
    assert not any("model_graded_fact" in n for n in notes)
    assert any("includes have no grader model" in n for n in notes)
    assert any("no independent reference score" in n for n in notes)


def test_agrees_with_inspects_own_reductions(ratings: pd.DataFrame) -> None:
    """Inspect stores each scorer's per-sample value after its value_to_float in the
    log's reductions; the ratings are those numbers."""
    log = json.loads(JSON.read_text())
    for reduction in log["reductions"]:
        if reduction["scorer"] == "includes":
            continue
        got = _by(ratings, reduction["scorer"])["rating"]
        for sample in reduction["samples"]:
            np.testing.assert_equal(got[str(sample["sample_id"])], sample["value"])


def test_eval_and_json_logs_give_the_same_table(ratings: pd.DataFrame) -> None:
    other = read_inspect_log(JSON, roster=roster())
    pd.testing.assert_frame_equal(ratings, other)


def test_deflate_eval_log_reads_the_same(ratings: pd.DataFrame, tmp_path: Path) -> None:
    """Older Inspect releases wrote deflate members; same content, same table."""
    path = tmp_path / "capitals.eval"
    with zipfile.ZipFile(EVAL) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, _zstd_member(EVAL, info))
    pd.testing.assert_frame_equal(read_inspect_log(path, roster=roster()), ratings)


def _zstd_member(path: Path, info: zipfile.ZipInfo) -> bytes:
    from recuse.data.inspect_log import _member

    with zipfile.ZipFile(path) as zf:
        return _member(zf, info, path)


def test_reference_scorer(ratings: pd.DataFrame) -> None:
    with_ref = read_inspect_log(EVAL, roster=roster(), reference_scorer="includes")
    np.testing.assert_equal(_by(with_ref, "model_graded_qa")["reference"].to_numpy(), [1, 0, 1, 0])
    assert not any("no independent reference" in n for n in with_ref.attrs["notes"])
    with pytest.raises(InputError, match="reference scorer 'exact' is not in the log"):
        read_inspect_log(EVAL, roster=roster(), reference_scorer="exact")


def test_grade_values_follow_value_to_float() -> None:
    assert [grade_value(v) for v in ("C", "P", "I", "N", "yes", "False", "0.25", 2, True)] == [
        1.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.25, 2.0, 1.0,
    ]  # fmt: skip
    unscored = grade_value(None)
    assert unscored is not None and math.isnan(unscored)
    assert grade_value("maybe") is None and grade_value({"a": 1}) is None


def _log(samples: list[dict[str, Any]], **eval_fields: Any) -> dict[str, Any]:
    spec = {"task": "t", "model": "openai/gpt-4o", "scorers": [{"name": "model_graded_qa"}]}
    return {"version": 2, "status": "success", "eval": {**spec, **eval_fields}, "samples": samples}


def _score(value: Any, grader: str | None = None) -> dict[str, Any]:
    meta = {"grading": [{"role": "user"}, {"role": "assistant", "model": grader}]}
    return {"value": value, "metadata": meta} if grader else {"value": value}


def _write(tmp_path: Path, log: dict[str, Any]) -> Path:
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))
    return path


def test_epochs_are_averaged_and_default_grader_is_the_model(tmp_path: Path) -> None:
    samples = [
        {"id": 1, "epoch": 1, "scores": {"model_graded_qa": _score("C")}},
        {"id": 1, "epoch": 2, "scores": {"model_graded_qa": _score("I")}},
        {"id": 1, "epoch": 3, "scores": {"model_graded_qa": _score(float("nan"))}},
        {"id": 2, "epoch": 1, "scores": {"model_graded_qa": _score("P")}},
        {"id": 2, "epoch": 2, "scores": None, "error": {"message": "boom"}},
        {"id": 3, "epoch": 1, "scores": None, "error": {"message": "boom"}},
    ]
    path = _write(tmp_path, _log(samples))
    assert sniff(path) == "inspect"
    out = read_inspect_log(path, roster=Roster.builtin())
    np.testing.assert_equal(out["rating"].to_numpy(), [0.5, 0.5, np.nan])  # (1+0)/2, .5
    assert list(out["epochs"]) == [3, 2, 1] and list(out["status"]) == ["ok", "ok", "failed"]
    assert set(out["model"]) == {"gpt-4o"} and set(out["judge"]) == {"gpt-4o"}  # prefix off
    assert out["self_graded"].all()
    assert any("no grader named: Inspect grades with the evaluated model" in n
               for n in out.attrs["notes"])  # fmt: skip


def test_grader_from_option_role_and_grading(tmp_path: Path) -> None:
    samples = [{"id": "a", "scores": {"model_graded_qa": _score("C"), "custom": _score(3, "x")}}]
    scorers = [{"name": "model_graded_qa", "options": {"model": "anthropic/claude-2"}},
               {"name": "custom"}]  # fmt: skip
    imported = read_import(
        _write(tmp_path, _log(samples, scorers=scorers)), "inspect", roster=Roster.builtin(),
        unknown_models="keep",
    )  # fmt: skip
    out = imported.frame.set_index("dimension")
    assert out.loc["model_graded_qa", "judge"] == "claude-2"
    assert out.loc["custom", "judge"] == "x" and out.loc["custom", "rating"] == 3.0
    assert not out["self_graded"].any() and imported.table == "ratings"
    # the grading conversation names the evaluated model and no grader was asked for:
    # Inspect's silent default, said in the note
    silent = [{"id": "a", "scores": {"model_graded_qa": _score("C", "gpt-4o-2024-05-13")}}]
    out = read_inspect_log(_write(tmp_path, _log(silent)), roster=Roster.builtin())
    # the grader's dated snapshot is its own model, in the family of the evaluated
    # (undated) gpt-4o line: still self-grading by family
    assert out.loc[0, "judge"] == "gpt-4o-2024-05-13" and out.loc[0, "self_graded"]
    assert any(
        "graded by gpt-4o-2024-05-13, which is in the family of gpt-4o (no grader named" in n
        for n in out.attrs["notes"]
    )
    roles = {"grader": {"model": "openai/gpt-4o"}}
    out = read_inspect_log(
        _write(tmp_path, _log([{"id": "a", "scores": {"model_graded_qa": _score("I")}}],
                              model_roles=roles)), roster=Roster.builtin(),
    )  # fmt: skip
    assert out.loc[0, "judge"] == "gpt-4o" and out.loc[0, "self_graded"]


@pytest.mark.parametrize(
    ("log", "message"),
    [
        (
            _log([{"id": "q1", "scores": {"model_graded_qa": _score("Q")}}]),
            "row 1, column 'scores.model_graded_qa.value': sample q1, scorer model_graded_qa: "
            "grade 'Q' is not a number",
        ),
        (_log([]), "the log holds no samples"),
        (_log([{"id": "q1", "scores": {"match": {"value": "C"}}}], scorers=[]), "no model-graded"),
        ({"version": 2, "status": "success", "samples": []}, "without an eval object"),
        (_log([{"id": None, "scores": {}}]), "row 1, column 'id': sample 1 has no usable id"),
    ],
)
def test_bad_logs(tmp_path: Path, log: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as err:
        read_inspect_log(_write(tmp_path, log), roster=Roster.builtin())
    assert message in str(err.value)


def test_damaged_zips(tmp_path: Path) -> None:
    other = tmp_path / "other.eval"
    with zipfile.ZipFile(other, "w") as zf:
        zf.writestr("readme.txt", "hello")
    with pytest.raises(InputError, match=r"not an Inspect AI log \(a zip without header\.json"):
        read_inspect_log(other)
    cut = tmp_path / "cut.eval"
    cut.write_bytes(EVAL.read_bytes()[:5000])
    with pytest.raises(InputError, match=r"not an Inspect AI log \(not a readable zip"):
        read_inspect_log(cut)
    flipped = bytearray(EVAL.read_bytes())
    with zipfile.ZipFile(EVAL) as zf:
        info = zf.getinfo("header.json")
    start = info.header_offset + 30 + len(info.filename) + 40  # inside the zstd frame
    flipped[start : start + 8] = b"\x00" * 8
    damaged = tmp_path / "damaged.eval"
    damaged.write_bytes(bytes(flipped))
    with pytest.raises(InputError, match=r"member header\.json"):
        read_inspect_log(damaged)


def test_size_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECUSE_MAX_INPUT_BYTES", "50000")
    with pytest.raises(InputError, match="decompresses to more than 50,000 bytes"):
        read_inspect_log(EVAL, roster=roster())


def test_sniffing(tmp_path: Path) -> None:
    assert sniff(EVAL) == "inspect" and sniff(JSON) == "inspect"
    renamed = tmp_path / "log.zip"
    renamed.write_bytes(EVAL.read_bytes())
    assert sniff(renamed) == "inspect"  # a zip holding header.json
    other = tmp_path / "sheet.xlsx"
    with zipfile.ZipFile(other, "w") as zf:
        zf.writestr("xl/workbook.xml", "<workbook/>")
    assert sniff(other) is None  # left to the table readers
    plain = tmp_path / "pairs.json"
    plain.write_text('[{"item_id": 1}]')
    assert sniff(plain) is None


def _answered(sid: str, value: Any, grader: str | None, output: str | None) -> dict[str, Any]:
    sample: dict[str, Any] = {"id": sid, "scores": {"model_graded_qa": _score(value, grader)}}
    if output is not None:
        sample["output"] = {"model": output, "choices": []}
    return sample


@pytest.mark.parametrize(
    ("asked", "output", "grader", "model", "judge"),
    [
        # the undated name and the snapshot it resolved to are one model: self
        ("openai/gpt-4o-mini", "gpt-4o-mini-2024-07-18", "gpt-4o-mini-2024-07-18",
         "gpt-4o-mini-2024-07-18", "gpt-4o-mini-2024-07-18"),
        # a name the roster lacks: the dated answer starts with the undated name
        ("acme/zeta-1", "zeta-1-20250101", "zeta-1-20250101", "zeta-1-20250101",
         "zeta-1-20250101"),
        # two different dated snapshots stay two models (family by default)
        ("openai/gpt-4-0314", "gpt-4-0314", "gpt-4-0613", "gpt-4-0314", "gpt-4-0613"),
        ("openai/gpt-4", "gpt-4-0613", "gpt-4-0314", "gpt-4-0613", "gpt-4-0314"),
        # an output from another line is not read as the evaluated model
        ("openai/gpt-4o", "gpt-4o-mini-2024-07-18", None, "gpt-4o", "gpt-4o"),
    ],
)  # fmt: skip
def test_the_evaluated_model_is_the_snapshot_that_answered(
    tmp_path: Path, asked: str, output: str, grader: str | None, model: str, judge: str
) -> None:
    log = _log([_answered("a", "C", grader, output)], model=asked)
    out = read_inspect_log(_write(tmp_path, log), roster=Roster.builtin())
    assert (out.loc[0, "model"], out.loc[0, "judge"]) == (model, judge)


def test_an_undated_model_grading_itself_is_its_own_judge_in_the_favoritism_section(
    tmp_path: Path,
) -> None:
    """openai/gpt-4o-mini evaluated, graded by itself (reply from the dated snapshot),
    a reference scorer beside it: the favoritism section sees a judge rating its own
    outputs (it said "no judge rated its own model's outputs" when the two names were
    two models)."""
    from recuse.driver import AuditOptions, audit

    samples = []
    for i in range(12):
        grade = "C" if i % 3 else "I"
        sample = _answered(f"s{i}", grade, "gpt-4o-mini-2024-07-18", "gpt-4o-mini-2024-07-18")
        sample["scores"]["match"] = {"value": "C" if i % 2 else "I"}
        samples.append(sample)
    scorers = [{"name": "model_graded_qa"}, {"name": "match"}]
    path = _write(tmp_path, _log(samples, model="openai/gpt-4o-mini", scorers=scorers))
    frame = read_import(path, "inspect", references=References(scorer="match")).frame
    assert (frame["judge"] == frame["model"]).all()
    report = audit(
        [path], options=AuditOptions(n_boot=100, only=("favoritism",), robustness=()),
        references=References(scorer="match"),
    )  # fmt: skip
    reasons = [s.reason for s in report.skipped]
    assert not any("no judge rated its own" in r for r in reasons), reasons


def test_grades_off_the_scorers_scale_are_missing_not_ratings(tmp_path: Path) -> None:
    samples = [
        {"id": "a", "scores": {"model_graded_qa": _score(1e30), "custom": _score(1e30, "x")}},
        {"id": "b", "scores": {"model_graded_qa": _score(-2), "custom": _score(7, "x")}},
        {"id": "c", "scores": {"model_graded_qa": _score("C"), "custom": _score(3, "x")}},
    ]
    scorers = [{"name": "model_graded_qa"}, {"name": "custom"}]
    out = read_inspect_log(
        _write(tmp_path, _log(samples, scorers=scorers)), roster=Roster.builtin()
    )
    qa = _by(out, "model_graded_qa")
    # C/P/I grades are on 0-1 (value_to_float): 1e30 and -2 are no grades
    np.testing.assert_equal(qa["rating"].to_numpy(), [np.nan, np.nan, 1.0])
    assert list(qa["status"]) == ["unparsed", "unparsed", "ok"]
    assert any(
        "scorer model_graded_qa grades on a 0–1 scale" in n and "2 grades outside it" in n
        for n in out.attrs["notes"]
    )
    # a custom numeric scorer with no letter grade has no known scale: read as written
    np.testing.assert_equal(_by(out, "custom")["rating"].to_numpy(), [1e30, 7.0, 3.0])
    # a custom scorer that writes letters is on the 0-1 scale too
    mixed = [
        {"id": "a", "scores": {"custom": _score("C", "x")}},
        {"id": "b", "scores": {"custom": _score(1e30, "x")}},
    ]
    out = read_inspect_log(
        _write(tmp_path, _log(mixed, scorers=[{"name": "custom"}])), roster=Roster.builtin()
    )
    np.testing.assert_equal(_by(out, "custom")["rating"].to_numpy(), [1.0, np.nan])


def test_a_log_folder_reads_the_model_graded_logs_and_lists_the_others(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "capitals.json").write_bytes(JSON.read_bytes())
    plain = _log([{"id": "q1", "scores": {"match": {"value": "C"}}}], scorers=[{"name": "match"}])
    (folder / "plain.json").write_text(json.dumps(plain))
    imported = read_import(folder, "inspect", roster=roster())
    alone = read_inspect_log(JSON, roster=roster())
    assert len(imported.frame) == len(alone) == 8  # the model-graded log, all of it
    skipped = [n for n in imported.notes if "plain.json skipped" in n]
    assert len(skipped) == 1 and "no model-graded scores (its scorers: match" in skipped[0]
    # a folder of logs none of which is model-graded: one error naming them
    (folder / "capitals.json").unlink()
    with pytest.raises(InputError, match="none of the 1 Inspect logs has a model-graded scorer"):
        read_import(folder, "inspect", roster=roster())


def test_a_log_of_an_eval_that_did_not_finish_is_said(tmp_path: Path) -> None:
    """Inspect's own log of security_guide (16 samples; 3 logged) written as an eval
    cancelled after 2 of them and as one that ended in an error: each read as a valid
    ratings table of its samples, with no word that the eval had stopped. A note says so,
    with the samples logged and those its dataset holds; the finished log gets none."""
    src = UPSTREAM / "2025-05-12T20-28-26-04-00_security-guide.json"
    log = json.loads(src.read_text())
    said = "the eval's status"
    assert not [n for n in read_inspect_log(src).attrs["notes"] if said in n]
    for status, kept in (("cancelled", 2), ("error", 3)):
        path = tmp_path / f"{status}.json"
        path.write_text(json.dumps({**log, "status": status, "samples": log["samples"][:kept]}))
        table = read_inspect_log(path)
        assert len(table) == kept  # read as before: the samples it holds
        (note,) = [n for n in table.attrs["notes"] if said in n]
        assert note.startswith(f"{status}.json: the eval's status is '{status}', not success: "
                               f"its {kept} sample(s) of the 16 its dataset holds")  # fmt: skip


def test_an_unfinished_log_of_several_epochs_counts_samples_not_gradings(tmp_path: Path) -> None:
    """security_guide's log (16 samples) run for 2 epochs and cancelled with its 3 samples
    logged in both: the note said 'its 6 sample(s) of the 16 its dataset holds', more
    samples than it had, counting each epoch's grading as a sample. It counts the 3
    samples now, and the 6 gradings of the 32 planned."""
    src = UPSTREAM / "2025-05-12T20-28-26-04-00_security-guide.json"
    log = json.loads(src.read_text())
    second = [{**smp, "epoch": 2} for smp in log["samples"]]
    config = {**log["eval"].get("config", {}), "epochs": 2}
    path = tmp_path / "cancelled.json"
    ev = {**log["eval"], "config": config}
    cancelled = {**log, "status": "cancelled", "eval": ev, "samples": log["samples"] + second}
    path.write_text(json.dumps(cancelled))
    (note,) = [n for n in read_inspect_log(path).attrs["notes"] if "the eval's status" in n]
    assert "its 3 sample(s) of the 16 its dataset holds, in 6 of 32 gradings (2 epochs)" in note


def test_a_log_from_before_july_2024_with_one_score_per_sample_is_refused_by_name(
    tmp_path: Path,
) -> None:
    """Inspect before July 2024 wrote each sample's one ``score`` (current Inspect moves
    it into ``scores`` on reading). No such log could be found published; this one is the
    real 0.3.43 log with its sample's ``scores`` written back as that older ``score``.
    It was refused as 'no sample has a score', which it has."""
    real = UPSTREAM / "2024-11-05T13-31-45-05-00_input-task_8zXjbRzCWrL9GXiXo2vus9.json"
    log = json.loads(real.read_text(encoding="utf-8"))
    for sample in log["samples"]:
        sample["score"] = sample.pop("scores")["model_graded_fact"]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(log), encoding="utf-8")
    with pytest.raises(InputError, match="sample 1 holds 'score'") as caught:
        read_inspect_log(path)
    assert "inspect log convert" in str(caught.value)
    assert "no sample has a score" not in str(caught.value)
