"""recuse.audit(data, **options) -> Report: paths, DataFrames, options as the CLI's."""

from __future__ import annotations

import gzip
import inspect
import json
import os
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pandas as pd
import pytest

import recuse
from recuse.api import FINDING_COLUMNS
from recuse.errors import ConfigError, InputError, ReaderNote
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.position import first_position_rate
from recuse.report.export import schema
from recuse.simulate import PlantedBias, simulate_pairs

PYTHON_API = Path(__file__).parents[1] / "docs" / "python-api.md"


@pytest.fixture(scope="module")
def planted() -> pd.DataFrame:
    judges = {"gpt-4": PlantedBias(position=0.15), "claude-v1": PlantedBias(position=0.0)}
    return simulate_pairs(judges=judges, n_prompts=150, seed=3).pairs


def test_a_path_and_a_dataframe_give_the_same_findings(
    planted: pd.DataFrame, tmp_path: Path
) -> None:
    path = tmp_path / "pairs.csv"
    planted.to_csv(path, index=False)
    by_path = recuse.audit(str(path), only="position", n_boot=300)
    by_frame = recuse.audit(planted, only=["position"], n_boot=300)
    a, b = by_path.findings, by_frame.findings
    assert list(a.columns) == list(FINDING_COLUMNS)
    cols = ["judge", "bias", "estimate", "ci_low", "ci_high", "n"]
    pd.testing.assert_frame_equal(a[cols], b[cols])
    assert set(b["dataset"]) == {"dataframe"} and set(a["dataset"]) == {"pairs.csv"}
    # the readings' reasons are columns too, each the finding's own
    found = by_path.result.findings
    assert a["fixed_by_construction"].tolist() == [f.fixed for f in found]
    assert a["adjustment_note"].tolist() == [f.adjustment_note for f in found]
    # which rule made each interval, as report.json says it (the notebook's table lacked
    # it): the same value per finding, and the one its method's words name
    written = [f.to_dict() for f in found]
    assert a["interval_rule"].tolist() == [d["interval_rule"] for d in written]
    heaviest = [None if pd.isna(h) else h for h in a["heaviest_prompt"]]
    assert heaviest == [d["heaviest_prompt"] for d in written]
    worded = {"expanded": "expanded for the prompts' number", "widened": "widened by Student",
              "exact_bound": "exact bound (not a bootstrap)"}  # fmt: skip
    for rule, method in zip(a["interval_rule"], a["method"], strict=True):
        assert worded[rule] in method
    # the estimate is the metric function's, worked out without the audit
    row = b[(b.judge == "gpt-4") & (b.bias == "position")].iloc[0]
    direct = first_position_rate(planted, judge="gpt-4", boot=Resampling(n_boot=300))
    assert row.estimate == pytest.approx(direct.estimate)
    # a short unit beside the number, the definition in full in its own column
    assert row["null"] == 0.5 and row.unit == "share of win to first"
    assert "shown first" in row.definition and len(row.definition) > 3 * len(row.unit)


def _by_judge(report: recuse.Report) -> dict[str, dict[str, Any]]:
    rows = report.findings[report.findings["bias"] == "position"].to_dict("records")
    return {str(r["judge"]): {str(k): v for k, v in r.items()} for r in rows}


def test_materiality_marks_material_and_negligible_and_the_option_overrides(
    planted: pd.DataFrame,
) -> None:
    f = _by_judge(recuse.audit(planted, only=["position"], n_boot=300))
    # planted 0.15 from 0.5: flagged and beyond the default 0.05
    assert f["gpt-4"]["significant"] and f["gpt-4"]["materiality"] == "material"
    assert f["gpt-4"]["material"] == 0.05
    assert f["gpt-4"]["verdict"].endswith("— material (estimate ≥ 0.05 from no bias)")
    # a threshold between the estimate's and the interval's far end: flagged but small
    est, hi = f["gpt-4"]["estimate"] - 0.5, f["gpt-4"]["ci_high"] - 0.5
    m = (est + hi) / 2
    g = _by_judge(recuse.audit(planted, only=["position"], n_boot=300, material={"position": m}))
    assert g["gpt-4"]["materiality"] == "small" and g["gpt-4"]["significant"]
    assert f"— small (estimate < {m:g} from no bias)" in g["gpt-4"]["verdict"]
    # no bias planted: the whole interval within ±m of 0.5 reads negligible
    lo, up = g["claude-v1"]["ci_low"], g["claude-v1"]["ci_high"]
    assert 0.5 - m < lo and up < 0.5 + m and g["claude-v1"]["materiality"] == "negligible"
    # with the default 0.05 the same interval is negligible only if it fits within ±0.05
    inside = up - 0.5 < 0.05 and 0.5 - lo < 0.05
    assert f["claude-v1"]["materiality"] == ("negligible" if inside else "")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_the_writers_check_their_paths_as_the_cli_does(
    planted: pd.DataFrame, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Report.to_json(pipe)`` replaced a named pipe with a file, ``to_json("-")`` wrote
    a file named ``-``, and ``write(a_file)`` said only "File exists"."""
    from recuse.errors import OutputError

    rep = recuse.audit(planted, only=["position"], n_boot=200)
    monkeypatch.chdir(tmp_path)
    pipe, table = tmp_path / "pipe", tmp_path / "pairs.csv"
    os.mkfifo(pipe)
    table.write_text("x\n")
    for write, path, said in (
        (rep.to_json, pipe, f"Report.to_json {pipe}: is not a regular file (a device, pipe"),
        (rep.to_html, pipe, f"Report.to_html {pipe}: is not a regular file (a device, pipe"),
        (rep.to_json, "-", "Report.to_json -: recuse writes a file here, not standard output"),
        (rep.write, table, f"Report.write {table}: is a file — give a folder"),
        (rep.write, "-", "Report.write -: recuse writes a folder here, not standard output"),
    ):
        with pytest.raises(OutputError) as err:
            write(path)
        assert str(err.value).startswith(said)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pairs.csv", "pipe"]
    assert not pipe.is_file() and table.read_text() == "x\n"


def test_write_creates_the_folders_above_its_folder_as_it_always_did(
    planted: pd.DataFrame, tmp_path: Path
) -> None:
    """``Report.write("reports/2026/run1")`` created the folders above run1 (the
    release before the path checks); the check the CLI's --out makes (its parent must
    exist) refused it: 'folder .../2026 does not exist'. A file on the way, or a
    link to nowhere, is still refused, and nothing is written."""
    from recuse.errors import OutputError

    rep = recuse.audit(planted, only=["position"], n_boot=200)
    folder = tmp_path / "reports" / "2026" / "run1"
    written = rep.write(folder)
    assert (folder / "report.json").is_file() and (folder / "report.html").is_file()
    assert all(path.exists() and folder in path.parents for path in written.values())
    blocker = tmp_path / "blocker"
    blocker.write_text("x\n")
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    for path, said in (
        (blocker / "a" / "b", f"Report.write {blocker / 'a' / 'b'}: {blocker} is a file"),
        (dangling / "a", f"Report.write {dangling / 'a'}: folder {dangling} does not exist"),
    ):
        with pytest.raises(OutputError) as err:
            rep.write(path)
        assert str(err.value).startswith(said), err.value
    assert blocker.read_text() == "x\n" and not (tmp_path / "nowhere").exists()


def test_writers_and_the_schema(planted: pd.DataFrame, tmp_path: Path) -> None:
    rep = recuse.audit(planted, only=["position"], n_boot=200)
    html = rep.to_html(tmp_path / "r.html").read_text("utf-8")
    data = json.loads(rep.to_json(tmp_path / "r.json").read_text("utf-8"))
    assert "<html" in html and data["schema_version"] == 2
    # warnings in tidy tables are text, never a Python list literal
    cells = [r["warnings"] for t in data["tables"].values() for r in t["rows"] if "warnings" in r]
    assert cells and all(isinstance(c, str) and not c.startswith("[") for c in cells)
    jsonschema.validate(data, schema(), cls=jsonschema.Draft202012Validator)
    broken = dict(data, level="high")  # the schema can fail
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema(), cls=jsonschema.Draft202012Validator)


def test_bad_options_are_one_line_errors(planted: pd.DataFrame) -> None:
    with pytest.raises(ConfigError, match="unknown analysis"):
        recuse.audit(planted, only=["nonsense"])
    with pytest.raises(ConfigError, match="--material"):
        recuse.audit(planted, only=["position"], material={"position": -1.0})
    with pytest.raises(ConfigError, match="unknown bias"):
        recuse.audit(planted, only=["position"], n_boot=200, material={"positon": 0.1})
    with pytest.raises(ConfigError, match="DataFrames"):
        recuse.audit([42])  # type: ignore[list-item]
    with pytest.raises(InputError, match="missing"):
        recuse.audit(planted.drop(columns=["judge", "p_a_first", "p_a_second", "p_a"]).rename(
            columns={"model_a": "x"}))  # fmt: skip


def test_certify_takes_one_table_and_says_so(planted: pd.DataFrame) -> None:
    """``recuse.certify([df])`` read the list as a path made of the frame's repr: 'cannot
    look at this path (the path is longer than the system allows)', 1,800 characters."""
    for data in ([planted], (planted,), 5, None):
        with pytest.raises(ConfigError) as err:
            recuse.certify(data)  # type: ignore[arg-type]
        assert str(err.value) == (
            "certify: data must be one dataset name, file path or pandas DataFrame (one "
            f"labelled pairs table); got a {type(data).__name__}"
        )


def test_certify_and_audit_read_any_path_object(
    planted: pd.DataFrame, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``recuse.certify(PurePosixPath("pairs.csv"))`` certified the file until data that
    was no table was refused by type: a path object other than ``pathlib.Path`` (an
    ``os.PathLike``) was then 'got a PurePosixPath'. It reads as its path does."""
    import pathlib

    class Named(os.PathLike[str]):  # a path library's object
        def __init__(self, name: str) -> None:
            self.name = name

        def __fspath__(self) -> str:
            return self.name

    monkeypatch.chdir(tmp_path)
    planted.to_csv("pairs.csv", index=False)
    want = recuse.certify("pairs.csv", judges="gpt-4").thresholds()
    for data in (pathlib.PurePosixPath("pairs.csv"), Named("pairs.csv")):
        assert recuse.certify(data, judges="gpt-4").thresholds() == want  # type: ignore[arg-type]
    by_name = recuse.audit("pairs.csv", only=["position"], n_boot=200).findings
    for given in (Named("pairs.csv"), [Named("pairs.csv")]):
        got = recuse.audit(given, only=["position"], n_boot=200).findings  # type: ignore[arg-type]
        pd.testing.assert_frame_equal(got, by_name)


def test_an_input_given_twice_is_refused(
    planted: pd.DataFrame, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`recuse audit a.csv a.csv` (a doubled glob, a symlink) audited the rows twice, as
    'a.csv' and 'a.csv (2)': each estimate shown twice and counted twice in the FDR."""
    path = tmp_path / "pairs.csv"
    planted.to_csv(path, index=False)
    (tmp_path / "link.csv").symlink_to(path)
    monkeypatch.chdir(tmp_path)
    for data, said in (
        (["pairs.csv", str(path)], f"{str(path)!r} is given twice (as 'pairs.csv')"),
        (["pairs.csv", "link.csv"], "'link.csv' is given twice (as 'pairs.csv')"),
        (["llmbar-mtbench", "llmbar-mtbench"], "'llmbar-mtbench' is given twice: "),
    ):
        with pytest.raises(ConfigError) as caught:
            recuse.audit(data, only="position", n_boot=200)
        assert str(caught.value).startswith(said)
        assert "give each dataset or file once" in str(caught.value)
    # a copy under another name (a backup caught by a glob) is the same table twice;
    # a file of the same size with other bytes is another input
    (tmp_path / "copy.csv").write_bytes(path.read_bytes())
    with pytest.raises(ConfigError) as caught:
        recuse.audit(["pairs.csv", "copy.csv"], only="position", n_boot=200)
    assert str(caught.value).startswith("'copy.csv' holds the same bytes as 'pairs.csv': ")
    text = path.read_text()
    i = text.index("gpt-4")
    (tmp_path / "other.csv").write_text(text[:i] + "gpt-3" + text[i + 5 :])
    assert (tmp_path / "other.csv").stat().st_size == path.stat().st_size
    with pytest.warns(ReaderNote, match="model 'gpt-3' is not in the roster"):
        both = recuse.audit(["pairs.csv", "other.csv"], only="position", n_boot=200)
    assert both.findings["dataset"].nunique() == 2
    # its gzip copy is read as the same bytes: refused too, whichever comes first
    (tmp_path / "pairs.csv.gz").write_bytes(gzip.compress(path.read_bytes()))
    for data, said in (
        (["pairs.csv", "pairs.csv.gz"], "'pairs.csv.gz' decompressed holds the same bytes as "
         "'pairs.csv': "),
        (["pairs.csv.gz", "pairs.csv"], "'pairs.csv' holds the same bytes as 'pairs.csv.gz' "
         "decompressed: "),
    ):  # fmt: skip
        with pytest.raises(ConfigError) as caught:
            recuse.audit(data, only="position", n_boot=200)
        assert str(caught.value).startswith(said)
    # two empty files hold the same (no) bytes: the first is refused as empty, not as a
    # copy (it has no rows to audit twice)
    (tmp_path / "a.csv").write_bytes(b"")
    (tmp_path / "b.csv").write_bytes(b"")
    with pytest.raises(InputError, match=r"a\.csv: the file is empty"):
        recuse.audit(["a.csv", "b.csv"], only="position", n_boot=200)
    # two DataFrames, even equal ones, are two inputs a caller chose to pass
    twice = recuse.audit([planted, planted], only="position", n_boot=200)
    assert set(twice.findings["dataset"]) == {"dataframe-1", "dataframe-2"}


def test_a_dataframes_errors_and_notes_name_the_dataframe(planted: pd.DataFrame) -> None:
    """A DataFrame is read through a temporary Parquet file; its errors and reader notes
    named that file (/tmp/recuse-frames-…/dataframe.parquet), which the user never made
    and which is gone when they read the message."""
    with pytest.raises(InputError) as err:
        recuse.audit([planted, planted.drop(columns=["item_id"])], only=["position"])
    assert err.value.file == "dataframe-2 (the DataFrame given)"
    assert str(err.value).startswith("dataframe-2 (the DataFrame given): missing required")
    assert "parquet" not in str(err.value) and "recuse-frames" not in str(err.value)
    renamed = planted.drop(columns=["prompt_id"]).replace({"gpt-4": "my-new-judge"})
    with pytest.warns(ReaderNote) as notes:
        recuse.audit(renamed, only=["position"], n_boot=200)
    texts = [str(n.message) for n in notes if issubclass(n.category, ReaderNote)]
    assert any("no prompt_id" in t for t in texts) and any("my-new-judge" in t for t in texts)
    assert all(t.startswith("dataframe (the DataFrame given): ") for t in texts), texts


def test_the_readme_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = PYTHON_API.read_text("utf-8")
    block = re.search(r"<!-- tests/test_api.py runs this block -->\n```python\n(.*?)```", text,
                      flags=re.S)  # fmt: skip
    assert block, "the recuse.audit example of docs/python-api.md is gone"
    monkeypatch.chdir(tmp_path)
    scope: dict[str, object] = {}
    exec(compile(block.group(1), str(PYTHON_API), "exec"), scope)
    report, same = scope["report"], scope["same"]
    assert os.path.getsize("report.html") > 1000 and Path("report.json").is_file()
    cols = ["judge", "bias", "estimate", "ci_low", "ci_high"]
    pd.testing.assert_frame_equal(report.findings[cols], same.findings[cols])  # type: ignore[attr-defined]


def test_recuse_audit_is_the_function_after_the_driver_was_imported(
    planted: pd.DataFrame,
) -> None:
    import recuse.driver

    got = recuse.audit(planted, only=["position"], n_boot=200)
    assert isinstance(got, recuse.Report) and len(got.findings) == 2


def test_every_public_name_has_its_own_docstring() -> None:
    """``help(recuse.PAIRS)`` showed the dataclass's generated signature
    ("Schema(name: 'str', columns: ...)") for want of a docstring."""
    for name in recuse.__all__:
        obj = getattr(recuse, name)
        kind = obj if isinstance(obj, type) or callable(obj) else type(obj)
        doc = (kind.__doc__ or "").strip()
        assert doc and not doc.startswith(f"{kind.__name__}("), name


@pytest.mark.skipif(
    not (Path(os.environ.get("RECUSE_DATA_DIR", "/nonexistent")) / "llmbar").is_dir(),
    reason="needs the shared llmbar data",
)
def test_the_metric_functions_example_runs_and_shows_the_headline(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The page's second block ran nowhere, and showed only the papers' EO (the default
    of ``self_preference``), which reads high for any strong judge: it now leads with the
    audit's headline, exported beside it, at the numbers its comments give."""
    import recuse.metrics

    assert "calibrated_self_preference" in recuse.metrics.__all__
    text = PYTHON_API.read_text("utf-8")
    block = re.search(r"<!-- tests/test_api.py runs this block too -->\n```python\n(.*?)```",
                      text, flags=re.S)  # fmt: skip
    assert block, "the metric functions example of docs/python-api.md is gone"
    scope: dict[str, object] = {}
    exec(compile(block.group(1), str(PYTHON_API), "exec"), scope)
    printed = capsys.readouterr().out
    calibrated = scope["calibrated_self_preference"](  # type: ignore[operator]
        scope["pairs"], judge="gpt-4", families=scope["roster"]
    )
    assert round(calibrated.estimate, 3) == -0.036
    assert (round(calibrated.ci_low, 2), round(calibrated.ci_high, 2)) == (-0.11, 0.06)
    # the comment quotes the line print writes (it quoted the numbers in another format)
    quoted = re.search(r'print writes\n# a result as the audit does: "(.*?)", then', block.group(1),
                       flags=re.S)  # fmt: skip
    assert quoted, "the comment quoting the printed line is gone"
    line = " ".join(part.lstrip("# ") for part in quoted.group(1).splitlines())
    assert printed.splitlines()[0].endswith(line), (printed.splitlines()[0], line)


def test_the_judging_example_runs_as_a_script_and_in_a_running_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The page's judge run from Python, as written but for the server's address: in a
    script, then in an ``async def`` (a notebook cell's running loop) on the same store,
    which judges nothing again. Its words hold: the columns kept for the audit
    (``prompt_id`` too, which it did not name), each pair in both orders."""
    import asyncio

    from recuse.testing.standin import StandIn

    text = PYTHON_API.read_text("utf-8")
    marker = "<!-- tests/test_api.py runs this block against a stand-in server, in an async"
    block = re.search(re.escape(marker) + r" def too -->\n```python\n(.*?)```", text, re.S)
    assert block, "the judging example of docs/python-api.md is gone"
    said = re.search(r"the pairs to judge \(columns(.*?)\)\.", text, flags=re.S)
    assert said, "the judging example's columns are no longer named"
    named = re.findall(r"`(\w+)`", said.group(1))
    pairs = pd.DataFrame(
        {"item_id": ["i1", "i2", "i3"], "prompt_id": ["q1", "q1", "q2"]}
        | {"prompt": ["P1", "P2", "P3"], "response_a": ["a1", "a2", "a3"]}
        | {"response_b": ["b1", "b2", "b3"], "model_a": ["gpt-4"] * 3}
        | {"model_b": ["claude-v1"] * 3, "human": ["a", "b", "tie"]}
    )
    assert sorted(named) == sorted(pairs.columns)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MY_KEY", "sk-test")
    pairs.to_csv("pairs.csv", index=False)
    with StandIn() as server:
        code = block.group(1).replace("http://localhost:8000/v1", server.base_url)
        scope: dict[str, Any] = {}
        exec(compile(code, str(PYTHON_API), "exec"), scope)
        first = capsys.readouterr().out

        async def cell() -> None:
            exec(compile(code, str(PYTHON_API), "exec"), scope)

        asyncio.run(cell())
        again = capsys.readouterr().out
    assert "6 judgments: 0 already stored, 6 ok" in first
    assert "6 judgments: 6 already stored, 0 ok" in again
    judged = scope["judged"].sort_values("item_id", ignore_index=True)
    kept = ["item_id", "prompt_id", "model_a", "model_b"]
    assert judged[kept].astype(str).to_dict("list") == pairs[kept].to_dict("list")
    assert judged["p_a_first"].notna().all() and judged["p_a_second"].notna().all()


def test_a_column_of_text_and_numbers_is_read_as_a_file_holds_it(
    planted: pd.DataFrame, tmp_path: Path
) -> None:
    """A DataFrame column holding both text and numbers (ids 7 and "x7", verdicts "A"
    and 0.5) was refused ("could not be stored as a table"), though validate_pairs and
    the same table as a CSV file read it."""
    mixed = planted.copy()
    ids = pd.Series(pd.factorize(mixed["item_id"])[0], dtype=object)
    mixed["item_id"] = [i if i % 2 else f"x{i}" for i in ids]  # ints and text
    first = mixed["p_a_first"].astype(object)
    mixed["p_a_first"] = first.where(first != 1.0, "A").where(first != 0.0, "b")
    kept = mixed.copy(deep=True)
    path = tmp_path / "mixed.csv"
    mixed.to_csv(path, index=False)
    by_frame = recuse.audit(mixed, only=["position"], n_boot=200).findings
    by_file = recuse.audit(str(path), only=["position"], n_boot=200).findings
    pd.testing.assert_frame_equal(mixed, kept)  # the caller's frame is left as it was
    cols = ["judge", "estimate", "ci_low", "ci_high", "n"]
    pd.testing.assert_frame_equal(by_frame[cols], by_file[cols])
    # the number, worked out by hand from the planted table: (first + 1 - second) / 2
    both = planted.dropna(subset=["p_a_first", "p_a_second"])
    rate = ((both["p_a_first"] + 1 - both["p_a_second"]) / 2).groupby(both["judge"]).mean()
    got = by_frame.set_index("judge")["estimate"]
    assert got["gpt-4"] == pytest.approx(rate["gpt-4"]) and got["claude-v1"] == pytest.approx(
        rate["claude-v1"]
    )
    # a column also holding a bool is left as it is: the error names it
    flagged = planted.assign(p_a_first=planted["p_a_first"].astype(object))
    flagged.loc[0, "p_a_first"], flagged.loc[1, "p_a_first"] = True, "A"
    with pytest.raises(InputError, match="p_a_first") as err:
        recuse.audit(flagged, only=["position"], n_boot=200)
    assert err.value.file == "dataframe (the DataFrame given)"


def test_a_column_named_twice_is_named_not_a_type_problem(planted: pd.DataFrame) -> None:
    """``pd.concat(axis=1)`` repeating a column gave "could not be stored as a table
    (Duplicate column names found: [...]) — give each column one type"."""
    twice = pd.concat([planted, planted[["judge"]]], axis=1)
    with pytest.raises(InputError) as err:
        recuse.audit(twice, only=["position"], n_boot=200)
    assert err.value.file == "dataframe (the DataFrame given)" and err.value.column == "judge"
    assert "2 columns named 'judge'" in str(err.value) and "one type" not in str(err.value)


def test_notes_of_audits_in_threads_are_all_told(planted: pd.DataFrame) -> None:
    """Each audit of a DataFrame caught its reader's notes (to name the DataFrame in
    them) with warnings.catch_warnings, whose state is one per process: audits in four
    threads told none of their four notes ("no prompt_id ...: intervals then treat
    pairs as independent") in most runs."""
    import threading

    no_prompts = planted.drop(columns=["prompt_id"])
    done: list[pd.DataFrame] = []

    def one() -> None:
        done.append(recuse.audit(no_prompts, only=["position"], n_boot=200).findings)

    with warnings.catch_warnings(record=True) as told:
        warnings.simplefilter("always")
        threads = [threading.Thread(target=one) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    notes = [str(w.message) for w in told if issubclass(w.category, ReaderNote)]
    assert len(done) == 4 and all(d.equals(done[0]) for d in done)
    assert len(notes) == 4 and all("no prompt_id" in n for n in notes), notes
    with warnings.catch_warnings(record=True) as after:  # no recorder left in place
        warnings.simplefilter("always")
        warnings.warn("after", UserWarning, stacklevel=1)
    assert [str(w.message) for w in after] == ["after"]


def test_unknown_models_error_refuses_names_the_roster_lacks(
    planted: pd.DataFrame, tmp_path: Path
) -> None:
    """docs/your-data.md says ``unknown_models="error"`` refuses such names in
    ``audit``; recuse.audit answered "unknown option 'unknown_models'"."""
    renamed = planted.replace({"gpt-4": "my-judge-v9", "claude-v1": "other-judge"})
    path = tmp_path / "renamed.csv"
    renamed.to_csv(path, index=False)
    for data, where in ((renamed, "dataframe (the DataFrame given)"), (str(path), str(path))):
        with pytest.raises(InputError) as err:
            recuse.audit(data, only=["position"], n_boot=200, unknown_models="error")
        assert err.value.file == where
        assert "'my-judge-v9'" in str(err.value) and "'other-judge'" in str(err.value)
    with pytest.warns(ReaderNote, match="my-judge-v9"):  # the default keeps them, noted
        kept = recuse.audit(renamed, only=["position"], n_boot=200)
    assert set(kept.findings["judge"]) == {"my-judge-v9", "other-judge"}
    with pytest.raises(ConfigError, match="unknown_models = 'refuse'"):
        recuse.audit(renamed, only=["position"], unknown_models="refuse")  # type: ignore[arg-type]
    assert "unknown_models" in str(inspect.signature(recuse.audit))


def test_certify_reads_costs_as_the_cli_does(planted: pd.DataFrame) -> None:
    """``recuse.certify(costs=)`` took any value: a negative price gave a cheaper
    cascade, NaN a NaN cost (JSON that no reader takes), text a TypeError when the
    result was written; a judge spelt another way ("GPT-4") was left unpriced."""
    cascade = ["claude-v1", "gpt-4"]
    got = recuse.certify(planted, agreement=0.6, cascade=cascade,
                         costs={"Claude-V1": 1.5, "GPT-4": 10})  # fmt: skip
    assert got.cascade is not None
    stages = got.cascade.to_dict()["stages"]
    assert [s["usd_per_1000_judgments"] for s in stages] == [1.5, 10.0]
    # the cascade's cost, worked out from its stages: each item reaching a stage is
    # judged there (in both orders)
    by_hand = sum(s["reached"] * s["judgments_per_item"] * s["usd_per_1000_judgments"]
                  for s in stages)  # fmt: skip
    assert got.cascade.to_dict()["usd_per_1000_items"] == pytest.approx(by_hand)
    for bad in (-5, float("nan"), float("inf"), "cheap", True, 10**400):  # 10**400: no float
        with pytest.raises(ConfigError, match=r"costs: 'gpt-4' = .* is no price .* from 0 to"):
            recuse.certify(planted, cascade=cascade, costs={"gpt-4": bad})  # type: ignore[dict-item]
    # a price under no judge's name (a key the CLI cannot write, JUDGE=USD): refused, not
    # kept as a judge named '', 'None' or '5'
    for nameless in ("", "  ", None, 5):
        with pytest.raises(ConfigError, match=r"^costs: .* names no judge — "):
            recuse.certify(planted, cascade=cascade, costs={nameless: 1.5})  # type: ignore[dict-item]


def test_the_callers_roster_is_left_as_it_was(planted: pd.DataFrame) -> None:
    """``recuse.audit(..., roster=mine)`` added the data's unknown model names to
    ``mine``: the next audit with it said nothing of them, and
    ``unknown_models="error"`` accepted them."""
    renamed = planted.replace({"gpt-4": "my-judge-v9"})
    mine = recuse.Roster.load()
    before = sorted(mine.entries)
    for _ in range(2):  # each call notes the name the roster lacks
        with pytest.warns(ReaderNote, match="'my-judge-v9' is not in the roster"):
            recuse.audit(renamed, only=["position"], n_boot=200, roster=mine)
    with pytest.warns(ReaderNote, match="'my-judge-v9' is not in the roster"):
        recuse.certify(renamed, agreement=0.6, roster=mine)
    assert sorted(mine.entries) == before and "my-judge-v9" not in mine
    with pytest.raises(InputError, match="my-judge-v9"):
        recuse.audit(renamed, only=["position"], roster=mine, unknown_models="error")


def test_a_column_made_the_index_is_read_as_a_column(planted: pd.DataFrame) -> None:
    """``df.set_index("human")`` gave an audit without labels (17 analyses skipped, no
    error), ``set_index("item_id")`` a "missing required column item_id" though the
    DataFrame holds it: to_csv writes a named index as a column, and so is it read."""
    cols = ["judge", "bias", "estimate", "ci_low", "ci_high", "n"]
    plain = recuse.audit(planted, only=["position", "verbosity"], n_boot=200).findings[cols]
    assert "verbosity_recall_gap" in set(plain["bias"])  # a finding that needs the labels
    for index in ("human", ["item_id", "judge"]):
        indexed = planted.set_index(index)
        kept = indexed.copy(deep=True)
        got = recuse.audit(indexed, only=["position", "verbosity"], n_boot=200).findings
        pd.testing.assert_frame_equal(got[cols], plain)
        pd.testing.assert_frame_equal(indexed, kept)
    # an unnamed index (a filter's row numbers) is no column
    shuffled = planted.set_axis(range(len(planted), 0, -1))
    pd.testing.assert_frame_equal(
        recuse.audit(shuffled, only=["position", "verbosity"], n_boot=200).findings[cols], plain
    )


def test_a_price_too_large_to_sum_or_written_minus_zero_is_read_as_a_price(
    planted: pd.DataFrame,
) -> None:
    """``costs={"gpt-4": 1e308, ...}`` passed (a finite number >= 0), and the cascade's
    cost, the sum over its stages, was $inf: ``--json`` ended in "Out of range float
    values are not JSON compliant". ``-0`` was shown as a price of "-0"."""
    cascade = ["claude-v1", "gpt-4"]
    with pytest.raises(ConfigError, match=r"costs: 'claude-v1' = 1e\+308 is no .* to 1e\+09"):
        recuse.certify(planted, agreement=0.6, cascade=cascade,
                       costs={"claude-v1": 1e308, "gpt-4": 1e308})  # fmt: skip
    got = recuse.certify(planted, agreement=0.6, cascade=cascade,
                         costs={"claude-v1": 1e9, "gpt-4": -0.0})  # fmt: skip
    assert got.cascade is not None
    prices = [s["usd_per_1000_judgments"] for s in got.cascade.to_dict()["stages"]]
    assert prices == [1e9, 0.0] and str(prices[1]) == "0.0"
    total = got.cascade.to_dict()["usd_per_1000_items"]
    assert total is not None and 1e9 <= total <= 2e9  # every item reaches claude-v1
    json.dumps(got.to_dict(), allow_nan=False)


def test_a_dataframe_of_pandas_text_columns_is_read_without_a_pandas_warning(
    planted: pd.DataFrame, tmp_path: Path
) -> None:
    """Looking for the text-and-numbers columns among the ``object`` ones
    (``select_dtypes(include="object")``) made pandas 3 warn, for every DataFrame with
    text read by pandas (its ``str`` columns), that ``str`` is selected so only for
    now: a warning on each ``recuse.audit(pd.read_csv(...))``, and an error where the
    caller turned warnings into errors."""
    path = tmp_path / "pairs.csv"
    planted.to_csv(path, index=False)
    read = pd.read_csv(path)  # text columns of pandas' own text type (pandas >= 3: str)
    mixed = read.assign(item_id=[i if i % 2 else f"x{i}" for i in range(len(read))])
    cols = ["judge", "bias", "estimate", "ci_low", "ci_high", "n"]
    by_file = recuse.audit(str(path), only=["position"], n_boot=200).findings[cols]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        warnings.simplefilter("error", FutureWarning)
        for frame in (read, mixed):
            got = recuse.audit(frame, only=["position"], n_boot=200).findings[cols]
            pd.testing.assert_frame_equal(got, by_file)


def test_empty_text_in_a_column_of_numbers_is_missing_as_in_the_csv(
    planted: pd.DataFrame, tmp_path: Path
) -> None:
    """``df.fillna("")`` (a table made ready to show) left lengths of numbers and ""
    that the DataFrame's reader took as text: "expected a number, got '' ... or leave
    the cell empty", where the same table as a CSV file (an empty cell) read them as
    missing."""
    lengths = planted.assign(len_a=planted["len_a"].where(planted.index % 7 != 0))
    shown = lengths.fillna("")
    assert (shown["len_a"] == "").sum() == (lengths.index % 7 == 0).sum() > 0
    path = tmp_path / "shown.csv"
    shown.to_csv(path, index=False)
    cols = ["judge", "bias", "estimate", "ci_low", "ci_high", "n"]
    by_file = recuse.audit(str(path), only=["verbosity"], n_boot=200).findings[cols]
    by_frame = recuse.audit(shown, only=["verbosity"], n_boot=200).findings[cols]
    pd.testing.assert_frame_equal(by_frame, by_file)
    # and as the table with the lengths missing: fewer pairs have both lengths
    missing = recuse.audit(lengths, only=["verbosity"], n_boot=200).findings[cols]
    pd.testing.assert_frame_equal(by_frame, missing)
    assert (
        by_frame["n"].max()
        < recuse.audit(planted, only=["verbosity"], n_boot=200).findings["n"].max()
    )


def test_two_prices_for_one_judge_are_refused_not_one_dropped(planted: pd.DataFrame) -> None:
    """``costs={"gpt-4": 1, "GPT-4": 30}`` names one judge twice: the cascade was priced
    at the last price given (30), the other dropped without a word."""
    cascade = ["claude-v1", "gpt-4"]
    with pytest.raises(ConfigError, match=r"'gpt-4' and 'GPT-4' are both judge 'gpt-4', priced 1 "):
        recuse.certify(planted, agreement=0.6, cascade=cascade,
                       costs={"claude-v1": 1, "gpt-4": 1, "GPT-4": 30})  # fmt: skip
    # the same price twice says one thing: kept
    got = recuse.certify(planted, agreement=0.6, cascade=cascade,
                         costs={"claude-v1": 1, "gpt-4": 30, "GPT-4": 30.0})  # fmt: skip
    assert got.cascade is not None
    assert [s["usd_per_1000_judgments"] for s in got.cascade.to_dict()["stages"]] == [1.0, 30.0]


@pytest.mark.parametrize(
    ("call", "said"),
    [
        (lambda d: recuse.audit(d, level=10**400), r"level \(--level\) = 1000.*: must be in"),
        (lambda d: recuse.audit(d, n_boot=10**400), r"n_boot \(--n-boot\) = 1000.*at most"),
        (lambda d: recuse.certify(d, agreement=10**400), r"agreement must be in \[0\.5, 1\)"),
    ],
    ids=["level", "n_boot", "agreement"],
)
def test_an_int_past_any_float_is_a_setting_error(
    planted: pd.DataFrame, call: Callable[[pd.DataFrame], object], said: str
) -> None:
    """A Python int too large for a float (10**400; a TOML file may hold one) was an
    OverflowError traceback from the check of level, n_boot and agreement."""
    with pytest.raises(ConfigError, match=said):
        call(planted)


def test_a_column_parquet_cannot_hold_is_named_not_a_traceback(planted: pd.DataFrame) -> None:
    """A column of complex numbers (or any type Arrow does not implement) stopped
    ``recuse.audit`` and ``recuse.certify`` with pyarrow's ArrowNotImplementedError."""
    odd = planted.assign(phase=1 + 2j)
    for call in (
        lambda: recuse.audit(odd, only=["position"], n_boot=200),
        lambda: recuse.certify(odd),
    ):
        with pytest.raises(InputError) as err:
            call()
        assert err.value.file == "dataframe (the DataFrame given)"
        assert "could not be stored as a table" in str(err.value) and "phase" in str(err.value)


def test_a_dataframes_attrs_are_no_part_of_the_table(planted: pd.DataFrame) -> None:
    """``DataFrame.attrs`` holding an object JSON cannot write (a fitted model, a
    client) made the audit refuse the frame: "could not be stored as a table (Object
    of type ... is not JSON serializable) — give each column one type". The attrs are
    metadata, not the table: the same findings as the frame without them."""
    tagged = planted.copy()
    tagged.attrs["model"] = object()
    options: dict[str, Any] = {"only": ["position"], "n_boot": 200}
    got = recuse.audit(tagged, **options).findings
    pd.testing.assert_frame_equal(got, recuse.audit(planted, **options).findings)
    assert "model" in tagged.attrs  # the caller's frame is left as it was


def test_integer_model_ids_with_one_missing_are_the_judges_own(planted: pd.DataFrame) -> None:
    """Models and judges as integer ids (a database's keys): one missing generator makes
    pandas hold model_a as floats, and model 1.0 was read as "1.0", not the judge 1's
    own model, so the audit's self-preference silently lost its pairs. The findings
    are those of the same ids written as text."""
    names = sorted({*planted["model_a"], *planted["model_b"], *planted["judge"]})
    code = {n: k + 1 for k, n in enumerate(names)}
    as_ints = planted.assign(**{c: planted[c].map(code) for c in ("model_a", "model_b", "judge")})
    as_ints.loc[as_ints.index[:2], "model_a"] = None
    assert as_ints["model_a"].dtype == "float64"
    as_text = as_ints.assign(
        model_a=as_ints["model_a"].map(lambda v: None if pd.isna(v) else str(int(v))),
        model_b=as_ints["model_b"].astype(str),
        judge=as_ints["judge"].astype(str),
    )
    options: dict[str, Any] = {"only": ["self-preference"], "n_boot": 200}
    got = recuse.audit(as_ints, **options).findings
    want = recuse.audit(as_text, **options).findings
    assert len(want) and want["estimate"].notna().all()
    pd.testing.assert_frame_equal(got, want)


@pytest.mark.parametrize("cascade", [["gpt-4", "gpt-4"], ["gpt-4", "GPT-4"], "gpt-4,gpt4"])
def test_a_cascade_naming_one_judge_twice_says_how_it_was_written(cascade: str | list[str]) -> None:
    """`cascade=["gpt-4", "GPT-4"]` said "--cascade names a judge twice: gpt-4,gpt-4": a flag
    the Python caller never wrote, and names it never wrote either."""
    from recuse.simulate.selective import simulate_selective

    pairs = simulate_selective(200, seed=1).pairs
    written = cascade.split(",") if isinstance(cascade, str) else cascade
    with pytest.raises(ConfigError) as err:
        recuse.certify(pairs, cascade=cascade)
    assert str(err.value) == (
        f"the cascade names judge 'gpt-4' twice ({', '.join(map(repr, written))}): a judge "
        "decides once — give each judge once"
    )


def test_a_dataframe_s_data_row_is_its_position_from_one() -> None:
    """docs/your-data.md: a DataFrame's "data row 2" is ``df.iloc[1]``, whatever its
    index (here 10, 20, 30: ``df.loc[2]`` does not exist)."""
    frame = pd.DataFrame(
        {"item_id": ["a", "b", "c"], "prompt_id": ["p", "q", "r"], "judge": ["gpt-4"] * 3}
        | {"p_a": [1.0, "Q", 0.0]},
        index=[10, 20, 30],
    )
    with pytest.raises(InputError) as err, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        recuse.audit(frame)
    assert err.value.row == 2 and frame.iloc[err.value.row - 1]["p_a"] == "Q"
    assert str(err.value).startswith(
        "dataframe (the DataFrame given), data row 2, column 'p_a': unknown verdict 'Q'"
    )
    assert "`data row 2` is `df.iloc[1]`, whatever its index" in " ".join(
        (Path(__file__).parents[1] / "docs" / "your-data.md").read_text("utf-8").split()
    )


def test_a_labels_only_tables_baseline_is_in_the_reports_script_and_notebook_doors(
    tmp_path: Path,
) -> None:
    """A table of human labels and lengths, no judge (hh-rlhf): the terminal's data line
    and report.json gave the humans' preference for the longer answer (hh-rlhf 0.44
    [0.42, 0.46]), while the script's ``Report`` read "0 findings, 0 flagged" with no
    way to it but ``report.result`` and the notebook's table said only "No bias could
    be estimated". ``Report.baselines`` now holds it as report.json does, and the repr
    and the notebook's HTML say it in the terminal's words. The share is counted here
    by hand: of the planted pairs of unequal length, those whose longer answer the
    human preferred."""
    import numpy as np

    from recuse.report.summary_table import source_lines

    rng = np.random.default_rng(5)
    rows = []
    for p in range(120):
        la, lb = (int(x) for x in rng.integers(5, 80, size=2))
        human = float((rng.random() < 0.7) == (la > lb))
        rows.append({"item_id": f"i{p}", "prompt_id": f"p{p}", "len_a": la, "len_b": lb,
                     "human": human})  # fmt: skip
    frame = pd.DataFrame(rows)
    unequal = frame[frame.len_a != frame.len_b]
    by_hand = float(((unequal.len_a > unequal.len_b) == (unequal.human == 1.0)).mean())
    report = recuse.audit(frame, n_boot=300)
    (row,) = report.baselines.to_dict("records")
    assert row["estimate"] == pytest.approx(by_hand) and row["n"] == len(unequal)
    assert row["null"] == 0.5 and row["ci_low"] < by_hand < row["ci_high"]
    written = report.to_json(tmp_path / "r.json")
    (said,) = [b for s in json.loads(written.read_text("utf-8"))["sections"]
               for b in s.get("baselines", [])]  # fmt: skip
    assert {k: row[k] for k in ("estimate", "ci_low", "ci_high", "n", "title")} == {
        k: said[k] for k in ("estimate", "ci_low", "ci_high", "n", "title")
    }
    (line,) = source_lines(report.result)
    assert row["sentence"] in line and row["sentence"] in repr(report)
    assert row["sentence"].replace("'", "&#x27;") in report._repr_html_()
    assert report.findings.empty


def test_a_fixed_values_null_n_leaves_the_others_whole(shared_data: Path) -> None:
    """GPT-4's tie part on LLMBar MT-Bench is fixed by construction: its n and clusters
    are null (None), as in report.json. With one null in the column, pandas made every
    other finding's n a float (51.0 pairs, 73.0 prompts) in ``report.findings``; the
    counts stay whole numbers, the fixed one's missing."""
    report = recuse.audit("llmbar-mtbench", data_dir=shared_data, n_boot=100, seed=1,
                          only=["self-preference-ladder"])  # fmt: skip
    f = report.findings
    fixed = f[f["fixed_by_construction"]]
    assert len(fixed) >= 1 and fixed["n"].isna().all() and fixed["clusters"].isna().all()
    measured = f[~f["fixed_by_construction"]]
    assert len(measured) >= 1
    for column in ("n", "clusters"):
        assert pd.api.types.is_integer_dtype(f[column]), f[column].dtype
        got = measured[column].tolist()
        assert all(type(v) is int and v > 0 for v in got), got
    own = report.result.findings
    (m,) = [x for x in own if x.judge == "gpt-4" and not x.fixed
            and x.bias.key == "self_preference_part_human_prefers_own"]  # fmt: skip
    row = measured[(measured["judge"] == "gpt-4")
                   & (measured["bias"] == "self_preference_part_human_prefers_own")]  # fmt: skip
    assert row["n"].tolist() == [m.n] and row["clusters"].tolist() == [m.clusters]
