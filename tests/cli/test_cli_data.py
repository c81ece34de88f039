"""`recuse data list | show | fetch | summary`: output and exit codes."""

from __future__ import annotations

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
from recuse.data.fetch import files_for


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
