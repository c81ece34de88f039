"""fetch: the manifest matches the reference copies; downloads from a local stand-in server.

The stand-in is ``http.server`` on 127.0.0.1 serving copies of real files at their
upstream URL paths (``/<owner>/<repo>/<commit>/<path>``); ``base_url`` points fetch
at it. The real upstream is never contacted.
"""

from __future__ import annotations

import hashlib
import shutil
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import unquote, urlsplit

import pytest

from recuse.cli import main
from recuse.data import registry
from recuse.data.fetch import (
    FetchReport,
    SourceFile,
    fetch,
    fetch_file,
    files_for,
    folders_for,
    is_present,
    sources,
)
from recuse.errors import DatasetNotFoundError, FetchError


class Handler(SimpleHTTPRequestHandler):
    """Serves the mirror folder; ``faults`` maps a URL path to a misbehaviour."""

    faults: ClassVar[dict[str, str]] = {}
    requests: ClassVar[list[str]] = []

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        type(self).requests.append(unquote(path))
        fault = self.faults.get(unquote(path))
        if fault is None:
            super().do_GET()
            return
        if fault == "404":
            self.send_error(404, "Not Found")
            return
        if fault == "loop":  # redirects to itself for ever
            self.send_response(302)
            self.send_header("Location", self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if fault == "bad-encoding":  # claims gzip, sends plain bytes
            self.send_response(200)
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", "11")
            self.end_headers()
            self.wfile.write(b"not gzipped")
            return
        body = Path(self.translate_path(self.path)).read_bytes()
        if fault == "corrupt":  # same length, one byte changed
            body = body[:10] + bytes([body[10] ^ 0xFF]) + body[11:]
        elif fault == "short":  # a complete but short response
            body = body[: len(body) // 2]
        elif fault == "cut":  # promises the full length, closes half-way
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.close_connection = True
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, shared_data: Path
) -> Iterator[tuple[str, Path]]:
    """A server with hh_rlhf, play_favorites and one judgebench file at upstream paths."""
    root = tmp_path_factory.mktemp("mirror")
    wanted = files_for("hh-rlhf") + files_for("play-favorites")
    wanted += [f for f in sources().folders["judgebench"] if f.path.startswith("data/")][:1]
    for f in wanted:
        target = root / unquote(urlsplit(f.url).path).lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shared_data / f.folder / f.path, target)

    def handler(*args: Any, **kwargs: Any) -> Handler:
        return Handler(*args, directory=str(root), **kwargs)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", root
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.fixture
def mirror(server: tuple[str, Path]) -> tuple[str, Path]:
    """The stand-in server with no faults and an empty request log."""
    Handler.faults = {}
    Handler.requests = []
    return server


def _path(f: SourceFile) -> str:
    return unquote(urlsplit(f.url).path)


def test_manifest_matches_the_reference_copies(shared_data: Path) -> None:
    src = sources()
    for folder, files in src.folders.items():
        on_disk = {
            p.relative_to(shared_data / folder).as_posix()
            for p in (shared_data / folder).rglob("*")
            if p.is_file()
        }
        assert {f.path for f in files} == on_disk, folder
        for f in files:
            path = shared_data / folder / f.path
            assert path.stat().st_size == f.size, f.path
            if f.sha256 is not None:
                assert hashlib.sha256(path.read_bytes()).hexdigest() == f.sha256, f.path
    counts = {k: len(v) for k, v in src.folders.items()}
    assert counts == {
        "play_favorites": 4,
        "llmbar": 98,
        "mt_bench": 10,
        "mt_bench_human": 2,
        "hh_rlhf": 2,
        "alpaca_eval": 38,
        "judgebench": 10,
    }


def test_every_registered_dataset_is_fetchable() -> None:
    for name, ds in registry.datasets().items():
        folders = folders_for(name)
        assert folders[0] == ds.folder, name


def test_upstream_urls_are_pinned_and_quoted() -> None:
    src = sources()
    hh = {f.path: f.url for f in src.folders["hh_rlhf"]}
    assert hh["harmless-base_test.jsonl.gz"] == (
        "https://raw.githubusercontent.com/anthropics/hh-rlhf/"
        "354e5c3cb8960630860dd5774a6ac2a58313bf4d/harmless-base/test.jsonl.gz"
    )
    pf = {f.path: f.url for f in src.folders["play_favorites"]}
    assert pf["Logical correctness.csv"].endswith("/data/Logical%20correctness.csv")
    jb = [f.url for f in src.folders["judgebench"] if "judge_model=o1-mini" in f.path]
    assert jb and "dataset%3Djudgebench%2Cresponse_model%3Dgpt-4o" in jb[0]
    mt = {f.path: f.url for f in src.folders["mt_bench"]}
    assert (
        "/geronimi73/FastChat/bafc296fe972c698c761c67dd3c8ff2569ea3f93/"
        in mt["model_answer/gpt-4.jsonl"]
    )
    assert mt["judge_prompts.jsonl"].endswith(
        "/lm-sys/FastChat/0e6d3e4beaab66f4d3f93db72541a4abab8af28d/"
        "fastchat/llm_judge/data/judge_prompts.jsonl"
    )
    assert len(src.folders["alpaca_eval"]) == 38


def test_fetch_then_nothing_to_do(
    mirror: tuple[str, Path], tmp_path: Path, shared_data: Path
) -> None:
    base, _ = mirror
    dest = tmp_path / "cache"
    report = fetch("hh-rlhf", dest, base_url=base, backoff=0)
    assert isinstance(report, FetchReport)
    assert {f.path for f in report.downloaded} == {"harmless-base_test.jsonl.gz", "LICENSE"}
    for name in ("harmless-base_test.jsonl.gz", "LICENSE"):
        assert (dest / "hh_rlhf" / name).read_bytes() == (
            shared_data / "hh_rlhf" / name
        ).read_bytes()
    assert report.bytes_downloaded == 742_801 + 1_066
    assert len(registry.load("hh-rlhf", data_dir=dest)) == 2312

    Handler.requests.clear()
    again = fetch("hh-rlhf", dest, base_url=base, backoff=0)
    assert again.downloaded == () and len(again.skipped) == 2
    assert Handler.requests == []


def test_resume_downloads_only_what_is_missing_or_wrong(
    mirror: tuple[str, Path], tmp_path: Path, shared_data: Path
) -> None:
    base, _ = mirror
    dest = tmp_path / "cache"
    (dest / "play_favorites").mkdir(parents=True)
    shutil.copyfile(
        shared_data / "play_favorites" / "prompt_ids.csv",
        dest / "play_favorites" / "prompt_ids.csv",
    )
    (dest / "play_favorites" / "README.md").write_text("stale", encoding="utf-8")
    report = fetch(["play_favorites"], dest, base_url=base, backoff=0)
    assert {f.path for f in report.skipped} == {"prompt_ids.csv"}
    assert {f.path for f in report.downloaded} == {
        "Faithfulness.csv",
        "Logical correctness.csv",
        "README.md",
    }
    assert "prompt_ids.csv" not in " ".join(Handler.requests)
    for f in files_for("play-favorites"):
        assert is_present(f, dest)


def test_names_with_equals_and_commas(mirror: tuple[str, Path], tmp_path: Path) -> None:
    base, _ = mirror
    f = next(f for f in sources().folders["judgebench"] if f.path.startswith("data/"))
    assert fetch_file(f, tmp_path, base_url=base, retries=0, backoff=0)
    assert is_present(f, tmp_path)
    assert (tmp_path / "judgebench" / f.path).is_file()
    assert not fetch_file(f, tmp_path, base_url=base)


@pytest.mark.parametrize("fault", ["corrupt", "short", "cut"])
def test_bad_body_raises_and_leaves_nothing(
    mirror: tuple[str, Path], tmp_path: Path, fault: str
) -> None:
    base, _ = mirror
    gz = next(f for f in files_for("hh-rlhf") if f.path.endswith(".gz"))
    Handler.faults[_path(gz)] = fault
    dest = tmp_path / "cache"
    with pytest.raises(FetchError) as err:
        fetch("hh-rlhf", dest, base_url=base, retries=2, backoff=0)
    message = str(err.value)
    assert "harmless-base_test.jsonl.gz" in message and "3 attempt(s)" in message
    expected = {
        "corrupt": "SHA-256 does not match",
        "short": "got 371,400 bytes, expected 742,801",
        "cut": "RemoteProtocolError",
    }
    assert expected[fault] in message
    assert Handler.requests.count(_path(gz)) == 3
    folder = dest / "hh_rlhf"
    assert not (folder / "harmless-base_test.jsonl.gz").exists()
    assert not [p for p in folder.iterdir() if p.name.endswith(".part")]


def test_404_is_a_clear_error(mirror: tuple[str, Path], tmp_path: Path) -> None:
    base, _ = mirror
    lic = next(f for f in files_for("hh-rlhf") if f.path == "LICENSE")
    Handler.faults[_path(lic)] = "404"
    with pytest.raises(FetchError, match=r"hh_rlhf/LICENSE: HTTP 404 from http://127\.0\.0\.1"):
        fetch("hh-rlhf", tmp_path / "cache", base_url=base, backoff=0)
    assert Handler.requests.count(_path(lic)) == 1  # not retried
    assert not (tmp_path / "cache" / "hh_rlhf" / "LICENSE").exists()


def test_redirect_loop_is_one_clear_error(
    mirror: tuple[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, _ = mirror
    lic = next(f for f in files_for("hh-rlhf") if f.path == "LICENSE")
    Handler.faults[_path(lic)] = "loop"
    with pytest.raises(FetchError, match=r"hh_rlhf/LICENSE: too many redirects from http://127"):
        fetch("hh-rlhf", tmp_path / "cache", base_url=base, backoff=0)
    assert 1 < Handler.requests.count(_path(lic)) <= 30  # followed a while, then not retried
    assert not (tmp_path / "cache" / "hh_rlhf" / "LICENSE").exists()
    code = main(["data", "fetch", "hh-rlhf", "--dest", str(tmp_path / "c2"), "--base-url", base])
    out, err = capsys.readouterr()
    assert code == 2 and "Traceback" not in err + out
    assert len(err.strip().splitlines()) == 1 and "too many redirects" in err


def test_body_that_does_not_decode_is_retried_then_clear(
    mirror: tuple[str, Path], tmp_path: Path
) -> None:
    base, _ = mirror
    lic = next(f for f in files_for("hh-rlhf") if f.path == "LICENSE")
    Handler.faults[_path(lic)] = "bad-encoding"
    with pytest.raises(FetchError, match=r"failed after 2 attempt.*DecodingError"):
        fetch("hh-rlhf", tmp_path / "cache", base_url=base, retries=1, backoff=0)
    assert Handler.requests.count(_path(lic)) == 2


def test_unreachable_server_and_bad_names(tmp_path: Path) -> None:
    with pytest.raises(FetchError, match="failed after 2 attempt"):
        fetch("hh-rlhf", tmp_path, base_url="http://127.0.0.1:9", retries=1, backoff=0)
    # "nothing was written": not even the dataset's folder (the data folder stays)
    assert tmp_path.is_dir() and not (tmp_path / "hh_rlhf").exists()
    with pytest.raises(FetchError, match="base-url"):
        fetch("hh-rlhf", tmp_path, base_url="ftp://example.org")
    with pytest.raises(DatasetNotFoundError, match="no upstream sources for 'nope'"):
        fetch("nope", tmp_path)


def test_an_unknown_dataset_to_fetch_names_each_dataset_once_and_a_near_miss() -> None:
    """`recuse data fetch nosuch` listed every name twice over (alpaca-eval and its
    folder alpaca_eval, ...), and a misspelt name got no suggestion."""
    from recuse.data.fetch import folders_for

    with pytest.raises(DatasetNotFoundError) as caught:
        folders_for("mt-bench-humn")
    said = str(caught.value)
    assert "did you mean 'mt-bench-human'?" in said
    datasets = said.split("give a dataset (")[1].split(")")[0].split(", ")
    assert datasets == sorted(registry.datasets())
    folders = said.split("data folders (")[1].split(")")[0].split(", ")
    assert not set(folders) & set(datasets) and "alpaca_eval" in folders
    with pytest.raises(DatasetNotFoundError) as caught:
        folders_for("zzz")
    assert "did you mean" not in str(caught.value)
    # a folder's name with '-' (as datasets are spelt) is told that folder, which fetches
    for typed, meant in (("mt-bench", "mt_bench"), ("Play-Favorite", "play-favorites")):
        with pytest.raises(DatasetNotFoundError) as caught:
            folders_for(typed)
        assert f"did you mean {meant!r}?" in str(caught.value)
        assert folders_for(meant)


def test_a_data_folder_that_cannot_be_made_says_where_to_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """HOME not writable (a CI runner's, a container's): `recuse data fetch` said only
    "cannot create the data folder ~/.cache/recuse/data: Permission denied", no fix."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.delenv("RECUSE_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    monkeypatch.setenv("HOME", str(blocker))
    with pytest.raises(FetchError) as err:
        fetch("hh-rlhf", base_url="http://127.0.0.1:9")
    assert str(err.value) == (
        f"cannot create the data folder {registry.default_data_dir()}: Not a directory — "
        "give a folder you can write with --dest, or set RECUSE_DATA_DIR"
    )
    code = main(["data", "fetch", "hh-rlhf", "--base-url", "http://127.0.0.1:9"])
    assert code == 2
    assert capsys.readouterr().err == f"recuse: error: {err.value}\n"
    monkeypatch.setenv("RECUSE_DATA_DIR", str(blocker / "data"))
    with pytest.raises(FetchError) as err:
        fetch("hh-rlhf", base_url="http://127.0.0.1:9")
    assert str(err.value).endswith("with --dest, or change RECUSE_DATA_DIR")
    with pytest.raises(FetchError) as err:
        fetch("hh-rlhf", blocker / "data", base_url="http://127.0.0.1:9")
    assert str(err.value) == (
        f"cannot create the data folder {blocker / 'data'}: Not a directory — give a "
        "folder you can write with --dest"
    )
