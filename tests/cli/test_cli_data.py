"""`recuse data list | show | fetch | summary`: output and exit codes."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import numpy as np
import pandas as pd
import pytest

from recuse.cli import main
from recuse.cli.data import summarize
from recuse.data import registry
from recuse.data.fetch import files_for
from recuse.metrics.bootstrap import Resampling


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _linked(tmp_path: Path, shared_data: Path, *folders: str) -> Path:
    root = tmp_path / "data"
    root.mkdir()
    for folder in folders:
        (root / folder).symlink_to(shared_data / folder, target_is_directory=True)
    return root


def test_list(capsys: pytest.CaptureFixture[str], shared_data: Path, tmp_path: Path) -> None:
    code, out, _ = run(capsys, "data", "list", "--data-dir", str(shared_data))
    assert code == 0
    for name in ("play-favorites", "alpaca-eval", "hh-rlhf", "llmbar", "judgebench"):
        assert name in out
    assert out.count(" yes ") == 7
    partial_dir = tmp_path / "partial"
    (partial_dir / "hh_rlhf").mkdir(parents=True)
    shutil.copyfile(shared_data / "hh_rlhf" / "LICENSE", partial_dir / "hh_rlhf" / "LICENSE")
    code, out, _ = run(capsys, "data", "list", "--data-dir", str(partial_dir))
    assert code == 0
    assert "partial (1/2 files)" in out and " no " in out


def test_show(capsys: pytest.CaptureFixture[str], shared_data: Path, tmp_path: Path) -> None:
    code, out, _ = run(capsys, "data", "show", "hh-rlhf", "--data-dir", str(shared_data))
    assert code == 0
    assert "2,312 rows" in out
    assert "hh_rlhf/harmless-base_test.jsonl.gz" in out and "742,801" in out
    assert "hh-rlhf/harmless-base/test/1" in out  # first row printed
    code, out, _ = run(capsys, "data", "show", "hh-rlhf", "--data-dir", str(tmp_path))
    assert code == 0 and "recuse data fetch hh-rlhf" in out


def test_unknown_dataset_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "data", "show", "nope")
    assert code == 2
    assert err.count("\n") == 1 and "unknown dataset 'nope'" in err
    code, _, err = run(capsys, "data", "fetch", "nope")
    assert code == 2 and err.count("\n") == 1 and "no upstream sources for 'nope'" in err


def test_summary(capsys: pytest.CaptureFixture[str], shared_data: Path, tmp_path: Path) -> None:
    root = _linked(tmp_path, shared_data, "hh_rlhf", "play_favorites")
    code, out, err = run(capsys, "data", "summary", "--data-dir", str(root))
    assert code == 0, err
    lines = {line.split("│")[1].strip(): line for line in out.splitlines() if "│" in line}
    assert set(lines) == {"hh-rlhf", "play-favorites"}
    hh = [c.strip() for c in lines["hh-rlhf"].split("│")[1:-1]]
    assert hh[:9] == [
        "hh-rlhf",
        "pairs",
        "2,312",
        "2,312",
        "2,310",
        "0",
        "0",
        "2,312",
        "a 1,138 / b 1,174 / tie 0",
    ]
    pf = [c.strip() for c in lines["play-favorites"].split("│")[1:-1]]
    # rows, completions (prompt x model), prompts, models, judges, reference rows
    assert pf[2:8] == ["63,222", "5,312", "596", "9", "9", "63,222"]
    assert "2 dimensions (faithfulness, logical correctness)" in pf[8]


def test_summary_says_what_it_counts(
    capsys: pytest.CaptureFixture[str], shared_data: Path, tmp_path: Path
) -> None:
    """llmbar-mtbench read "labels a 404 / b 396" beside 200 items and "unparsed 15" where
    `recuse validate` says 7 judged rows without a verdict, with no word on what either
    counted: labels count rows (4 judges per item), unparsed counts shown orders."""
    root = _linked(tmp_path, shared_data, "llmbar", "mt_bench")
    code, out, err = run(capsys, "data", "summary", "--data-dir", str(root))
    assert code == 0, err
    flat = " ".join(out.split())
    assert "labels (rows)" in flat and "unparsed (per order)" in flat
    assert "an item judged by 4 judges counts 4 times" in flat
    assert "a row with both orders unparsed counts 2" in flat
    row = next(line for line in out.splitlines() if "│ llmbar-mtbench" in line)
    cells = [c.strip() for c in row.split("│")[1:-1]]
    # 800 rows = 200 items x 4 judges; the orders counted one by one, not the rows
    table = registry.load("llmbar-mtbench", data_dir=root)
    orders = int(table[["status_first", "status_second"]].isin(["unparsed", "failed"]).sum().sum())
    rows = int((table["judge"].notna() & table["p_a"].isna()).sum())
    assert cells[2:4] == ["800", "200"] and cells[-1] == str(orders) and (orders, rows) == (15, 7)


def test_summary_errors(
    capsys: pytest.CaptureFixture[str], shared_data: Path, tmp_path: Path
) -> None:
    code, _, err = run(capsys, "data", "summary", "--data-dir", str(tmp_path))
    assert code == 2 and "no dataset folders" in err and err.count("\n") == 1
    root = _linked(tmp_path, shared_data, "hh_rlhf")
    (root / "alpaca_eval").mkdir()  # present but empty: cannot be read
    code, out, err = run(capsys, "data", "summary", "--data-dir", str(root))
    assert code == 2
    assert "hh-rlhf" in out and "error:" in out
    assert err.count("\n") == 1 and "1 dataset(s) could not be read; first: alpaca-eval" in err


def test_summarize_counts_by_hand() -> None:
    pairs = pd.DataFrame(
        {
            "item_id": ["1", "1", "2", "3"],
            "prompt_id": ["p", "p", "p", "q"],
            "model_a": ["x", "x", "y", None],
            "model_b": ["y", "y", "z", None],
            "human": [1.0, 1.0, 0.5, np.nan],
            "judge": ["j", "k", "j", "j"],
            "p_a": [np.nan, 1.0, np.nan, 0.5],
            "status_first": ["unparsed", "ok", "ok", "missing"],
            "status_second": ["failed", "unparsed", "ok", "missing"],
        }
    )
    # row 3 is judged, has no verdict and no unparsed status -> counted once;
    # row 1: two unparsed orders, row 2: one
    s = summarize(pairs, "pairs")
    assert (s["items"], s["prompts"], s["models"], s["judges"]) == (3, 2, 3, 2)
    assert s["labels"] == "a 2 / b 0 / tie 1" and s["labelled"] == 3
    assert s["unparsed"] == 2 + 1 + 1


@pytest.fixture
def stand_in(tmp_path: Path, shared_data: Path) -> Iterator[str]:
    root = tmp_path / "mirror"
    for f in files_for("hh-rlhf"):
        target = root / unquote(urlsplit(f.url).path).lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shared_data / f.folder / f.path, target)

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_fetch(
    capsys: pytest.CaptureFixture[str], stand_in: str, tmp_path: Path, shared_data: Path
) -> None:
    dest = tmp_path / "cache"
    code, out, err = run(
        capsys, "data", "fetch", "hh-rlhf", "--dest", str(dest), "--base-url", stand_in
    )
    assert code == 0, err
    assert "2 file(s) downloaded (0.7 MB), 0 already present" in out
    data = (dest / "hh_rlhf" / "harmless-base_test.jsonl.gz").read_bytes()
    assert data == (shared_data / "hh_rlhf" / "harmless-base_test.jsonl.gz").read_bytes()
    code, out, _ = run(
        capsys, "data", "fetch", "hh-rlhf", "--dest", str(dest), "--base-url", stand_in
    )
    assert code == 0 and "0 file(s) downloaded (0.0 MB), 2 already present" in out
    code, _, err = run(
        capsys, "data", "fetch", "hh-rlhf", "--dest", str(dest), "--base-url", "ftp://x"
    )
    assert code == 2 and "--base-url must start with http" in err


# --- issue #15: files as users write them -------------------------------------------

REPO = Path(__file__).parents[2]
PEER = REPO / "examples" / "data" / "peer_verdicts.csv"
PEER_MAP = "id=item_id,human_winner=human,judge_model=judge,judge_winner=p_a_first"


def _readme_command(start: str) -> list[str]:
    """The command line of docs/your-data.md that starts with ``start``, split as a shell
    would."""
    import shlex

    text = (REPO / "docs" / "your-data.md").read_text("utf-8")
    line = next(line for line in text.splitlines() if line.startswith(start))
    args = shlex.split(line)
    assert args[0] == "recuse"
    return args[1:]


def test_readme_peer_file_audit_gives_the_hand_computed_estimate(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    args = _readme_command("recuse audit examples/data/peer_verdicts.csv")
    assert not any(a.startswith(("--swapped-frame", "--confidence")) for a in args)
    (tmp_path / "examples").symlink_to(REPO / "examples", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "\n| gpt-4o " in out and "note:" not in err
    report = json.loads((tmp_path / "peer-report" / "report.json").read_text("utf-8"))
    eo = [f for s in report["sections"] for f in s["findings"]
          if f["bias"] == "self_preference_eo"]  # fmt: skip
    # Definition 4.1 by hand from the raw file: the judge's P(own better), averaged over
    # both orders (the swapped one written as seen: A = b), among pairs with gpt-4o
    raw = pd.read_csv(PEER, dtype=str)
    side = {"A": 1.0, "B": 0.0, "tie": 0.5}
    p_a = (raw["judge_winner"].map(side) + 1 - raw["judge_winner_swapped"].map(side)) / 2
    human = raw["human_winner"].map({**side, "neither": 0.5})
    own_a, own_b = raw["model_a"] == "gpt-4o", raw["model_b"] == "gpt-4o"
    keep = (own_a ^ own_b) & (human != 0.5)
    v = np.where(own_a, p_a, 1 - p_a)[keep]
    h = np.where(own_a, human, 1 - human)[keep]
    expected = (h * v).sum() / h.sum() - ((1 - h) * (1 - v)).sum() / (1 - h).sum()
    assert eo and eo[0]["estimate"] == pytest.approx(expected, abs=1e-12)
    assert eo[0]["n"] == int(keep.sum())


def test_validate_lists_supported_analyses_and_unread_columns(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["validate", str(PEER), "--map", PEER_MAP, "--values", "human_winner:neither=0.5"]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    lines = {line.split()[1]: line for line in out.splitlines() if line.startswith("│ ")}
    assert "yes" in lines["self-preference"] and "yes" in lines["verbosity"]
    assert "no" in lines["familiarity"] and "no perplexities" in lines["familiarity"]
    assert "favoritism" not in lines  # a ratings analysis
    assert "'judge_winner_swapped'" in lines and "'judge_confidence'" in lines
    # only the human columns mapped: a note names the judge columns it did not read
    half = ["validate", str(PEER), "--map", "id=item_id,human_winner=human"]
    code, out, err = run(capsys, *half, "--values", "human_winner:neither=0.5")
    assert code == 0
    assert err.startswith("recuse: note: ") and "'judge_model', 'judge_winner'," in err
    assert "human labels only" in err and "no judge verdicts" in out
    # --json: the same facts as one JSON object
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    got = json.loads(out)
    support = {a["analysis"]: a for a in got["analyses"]}
    assert support["self-preference"]["supported"] and not support["familiarity"]["supported"]
    assert "no perplexities" in support["familiarity"]["why_not"]
    assert {c["column"] for c in got["unread_columns"]} >= {"judge_winner_swapped"}
    assert got["table"] == "pairs" and got["counts"]["rows"] > 0


def test_value_options_on_metrics_give_what_the_library_gives(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import json

    from recuse.data.plain_tables import read_table
    from recuse.metrics.self_preference import self_preference

    common = ["metrics", "pairs", str(PEER), "-m", "self_preference_eo", "--n-boot", "50"]
    common += ["--map", PEER_MAP + ",judge_winner_swapped=p_a_second"]
    common += ["--values", "human_winner:neither=0.5", "--confidence", "judge_confidence"]
    results = []
    for i, extra in enumerate(
        (["--swapped-frame", "presented"], ["--values", "judge_winner_swapped:A=0,B=1,tie=.5"])
    ):
        out = tmp_path / f"m{i}.json"
        code, _, err = run(capsys, *common, *extra, "--out", str(out))
        assert code == 0, err
        results.append(json.loads(out.read_text("utf-8"))["results"])
    assert results[0] == results[1]
    table = read_table(
        PEER,
        table="pairs",
        mapping=dict(
            p.split("=") for p in (PEER_MAP + ",judge_winner_swapped=p_a_second").split(",")
        ),
        values={"human_winner": {"neither": 0.5}},
        swapped_frame="presented",
        confidence="judge_confidence",
    )
    direct = self_preference(table, judge="gpt-4o", kind="eo", boot=Resampling(n_boot=50))
    assert results[0][0]["estimate"] == pytest.approx(direct.estimate, abs=1e-12)


def _unknown_models_file(tmp_path: Path) -> tuple[Path, Path]:
    data = tmp_path / "house.csv"
    pd.DataFrame(
        {
            "item_id": [str(i) for i in range(12)],
            "prompt_id": [f"p{i % 6}" for i in range(12)],
            "model_a": ["house-a", "gpt-4"] * 6,
            "model_b": ["gpt-4", "house-b"] * 6,
            "human": ["a", "b", "tie"] * 4,
            "judge": ["house-judge"] * 12,
            "p_a_first": ["A", "B", "A", "tie"] * 3,
        }
    ).to_csv(data, index=False)
    roster = tmp_path / "roster.toml"
    roster.write_text(
        "".join(
            f'[[model]]\nid = "{m}"\nfamily = "house"\n'
            for m in ("house-a", "house-b", "house-judge")
        ),
        "utf-8",
    )
    return data, roster


def test_unknown_models_are_read_as_their_own_with_one_note_roster_anywhere(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data, roster = _unknown_models_file(tmp_path)
    code, out, err = run(capsys, "validate", str(data))
    assert code == 0 and "rows with a human label" in out, err
    notes = [line for line in err.splitlines() if line.startswith("recuse: note:")]
    assert len(notes) == 1, err  # one note for every unknown name of every column
    assert (
        "3 model names are not in the roster, each read as its own model and family: "
        "'house-a', 'house-b', 'house-judge'" in notes[0]
    )
    assert "--roster FILE" in notes[0] and "--allow-unknown-models" not in err
    for args in (
        ["--roster", str(roster), "validate", str(data)],
        ["validate", str(data), "--roster", str(roster)],
        ["validate", f"--roster={roster}", str(data)],
    ):
        code, out, err = run(capsys, *args)
        assert code == 0 and "rows with a human label" in out, (args, err)
        assert "not in the roster" not in err  # the roster file names them
    # the old flags still parse and change nothing (hidden)
    code, out, err = run(capsys, "validate", str(data), "--allow-unknown-models")
    assert code == 0 and err.count("recuse: note:") == 1
    for flag in ("--allow-unknown-models", "--keep-unknown-models", ""):
        out_dir = tmp_path / (flag.strip("-") or "none")
        args = ["audit", str(data), "--out", str(out_dir), "--n-boot", "100", "--only", "position"]
        code, out, err = run(capsys, *args, *([flag] if flag else []))
        assert code == 0 and err.count("not in the roster") == 1, (flag, err)
    code, out, _ = run(capsys, "audit", "--help")
    assert "--allow-unknown-models" not in out and "--keep-unknown-models" not in out
    code, out, err = run(
        capsys,
        "metrics",
        "pairs",
        str(data),
        "--roster",
        str(roster),
        "-m",
        "family_preference_dp",
        "--n-boot",
        "20",
    )
    assert code == 0 and "family_preference_dp" in out, err  # the roster's house family
    code, out, err = run(
        capsys, "metrics", "pairs", str(data), "-m", "family_preference_dp", "--n-boot", "20"
    )
    # without the roster every model is its own family: nothing to estimate (exit 2, the
    # reasons), and the note says why
    assert code == 2 and "not in the roster" in err, err
    assert "no metric could be estimated" in err


def test_judge_reads_a_peer_file_with_the_same_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from recuse.cli.judge import read_to_judge
    from recuse.options import Settings

    mapping = dict(p.split("=") for p in PEER_MAP.split(","))
    read = Settings(mapping=mapping, values={"human_winner": {"neither": 0.5}})
    table = read_to_judge(str(PEER), "pairwise", read).head(7)
    raw = pd.read_csv(PEER, dtype=str).head(7)
    assert table["item_id"].tolist() == raw["id"].tolist()
    assert table["response_a"].tolist() == raw["response_a"].tolist()
    code, out, _ = run(capsys, "judge", "--help")
    assert code == 0
    for option in ("--map", "--values", "--swapped-frame", "--confidence"):
        assert option in out


def test_validate_json_on_a_bad_file_says_invalid(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`validate --json` on a bad file prints {"valid": false, "exit_code": 2, "error":
    ...} (exit 2, the one-line error still on stderr); before, nothing on stdout."""
    bad = tmp_path / "pairs.csv"
    bad.write_text("item_id,prompt_id,human\n1,p,maybe\n")
    code, out, err = run(capsys, "validate", str(bad), "--json")
    assert code == 2
    got = json.loads(out)
    assert got["valid"] is False and got["exit_code"] == 2
    assert "row 1" in got["error"] and "'human'" in got["error"]
    assert err.strip() == f"recuse: error: {got['error']}"


def test_data_show_of_a_file_points_to_validate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`recuse data show my.csv` said 'unknown dataset ... (or give a path to a CSV /
    JSONL / Parquet file)': it had been given one, which `data show` does not read."""
    path = tmp_path / "my.csv"
    path.write_text("item_id,prompt_id\n1,p\n", encoding="utf-8")
    code, out, err = run(capsys, "data", "show", str(path))
    assert code == 2 and out == ""
    assert f"{path} is a file, not a dataset name" in err
    assert f"recuse validate {path}" in err
    assert "or give a path" not in err
    code, _, err = run(capsys, "data", "show", "no-such-data")
    assert code == 2 and "unknown dataset 'no-such-data'" in err
