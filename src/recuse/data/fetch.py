"""Download the public datasets from their upstream repositories, pinned and verified.

``sources.toml`` (package data) lists, per dataset folder, every upstream file: the
local path, the URL at a pinned commit, the size in bytes and (for all but one file)
its SHA-256. :func:`fetch` downloads the folders a dataset needs into the data
directory (default :func:`recuse.data.registry.default_data_dir`):

- each file streams to a temporary file next to its target and is renamed into place
  only after its size and hash match, so a failed download never leaves a file that
  looks complete;
- files already present with the right size and hash are skipped, so a second fetch
  downloads nothing and an interrupted one resumes with the files still missing;
- transient failures (connection errors, timeouts, HTTP 429 / 5xx, truncated,
  corrupted or undecodable bodies) are retried ``retries`` times with exponential back-off; anything
  else raises :class:`~recuse.errors.FetchError` naming the file, URL and reason.

``base_url`` replaces ``https://raw.githubusercontent.com`` (a mirror, or a local
server in tests): the URL path is kept.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

import httpx

from recuse.data import registry
from recuse.errors import DatasetNotFoundError, FetchError
from recuse.files import file_sha256

__all__ = [
    "FetchProgress",
    "FetchReport",
    "SourceFile",
    "fetch",
    "fetch_file",
    "files_for",
    "folders_for",
    "is_present",
    "sources",
]

CHUNK = 1 << 16
TRANSIENT_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class SourceFile:
    """One upstream file of a dataset folder."""

    folder: str
    path: str  # relative to the folder, with "/" separators
    url: str
    size: int
    sha256: str | None = None

    def target(self, dest: Path) -> Path:
        return dest / self.folder / Path(*self.path.split("/"))


@dataclass(frozen=True)
class Sources:
    datasets: dict[str, tuple[str, ...]]  # dataset name -> folders
    folders: dict[str, tuple[SourceFile, ...]]
    about: dict[str, str] = field(default_factory=dict)


_SOURCES: Sources | None = None


def sources() -> Sources:
    """The parsed ``sources.toml`` (read once)."""
    global _SOURCES
    if _SOURCES is None:
        text = resources.files("recuse.data").joinpath("sources.toml").read_text("utf-8")
        data = tomllib.loads(text)
        folders = {
            name: tuple(
                SourceFile(name, f["path"], f["url"], int(f["size"]), f.get("sha256"))
                for f in spec["files"]
            )
            for name, spec in data["folders"].items()
        }
        _SOURCES = Sources(
            datasets={k: tuple(v) for k, v in data["datasets"].items()},
            folders=folders,
            about={name: spec.get("about", "") for name, spec in data["folders"].items()},
        )
    return _SOURCES


def folders_for(name: str) -> tuple[str, ...]:
    """Folders that dataset ``name`` needs; a folder name stands for itself."""
    src = sources()
    if name in src.datasets:
        return src.datasets[name]
    if name in src.folders:
        return (name,)
    known = registry.datasets()
    if name in known and known[name].folder in src.folders:
        return (known[name].folder,)
    names = sorted(set(src.datasets) | set(known))
    folders = sorted(set(src.folders) - set(names))
    close = registry.near_miss(name, [*folders, *names])  # a dataset over a folder alike
    raise DatasetNotFoundError(
        f"no upstream sources for {name!r} — "
        + (f"did you mean {close!r}? " if close else "")
        + f"give a dataset ({', '.join(names)}) or one of its data folders "
        f"({', '.join(folders)}); `recuse data list` describes them"
    )


def files_for(name: str) -> list[SourceFile]:
    """Every upstream file dataset (or folder) ``name`` needs."""
    src = sources()
    return [f for folder in folders_for(name) for f in src.folders[folder]]


def is_present(file: SourceFile, dest: Path) -> bool:
    """Whether ``file`` is already in ``dest`` with the right size (and hash)."""
    target = file.target(dest)
    try:
        if target.stat().st_size != file.size:
            return False
    except OSError:
        return False
    return file.sha256 is None or file_sha256(target) == file.sha256


class FetchProgress(Protocol):
    """What :func:`fetch` reports while it works (the CLI draws progress bars)."""

    def start(self, file: SourceFile) -> None: ...
    def advance(self, file: SourceFile, nbytes: int) -> None: ...
    def restart(self, file: SourceFile) -> None: ...
    def finish(self, file: SourceFile, *, skipped: bool) -> None: ...


@dataclass(frozen=True)
class FetchReport:
    """Which files were downloaded and which were already there."""

    dest: Path
    downloaded: tuple[SourceFile, ...]
    skipped: tuple[SourceFile, ...]

    @property
    def bytes_downloaded(self) -> int:
        return sum(f.size for f in self.downloaded)


class _Transient(Exception):
    """A failure worth another try."""


def _url(file: SourceFile, base_url: str | None) -> str:
    if not base_url:
        return file.url
    return base_url.rstrip("/") + urlsplit(file.url).path


def _download_once(
    client: httpx.Client,
    file: SourceFile,
    url: str,
    target: Path,
    progress: FetchProgress | None,
) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        size = 0
        head = b""
        with os.fdopen(fd, "wb") as out:
            try:
                with client.stream("GET", url) as response:
                    if response.status_code in TRANSIENT_STATUS:
                        raise _Transient(f"HTTP {response.status_code}")
                    if response.status_code != 200:
                        raise FetchError(
                            f"{file.folder}/{file.path}: HTTP {response.status_code} from {url} — "
                            "the upstream file may have moved; check the URL in sources.toml "
                            "or pass --base-url for a mirror"
                        )
                    for chunk in response.iter_bytes(CHUNK):
                        if len(head) < 64:
                            head += chunk[:64]
                        out.write(chunk)
                        digest.update(chunk)
                        size += len(chunk)
                        if size > file.size:
                            raise _Transient(f"more than the expected {file.size:,} bytes")
                        if progress is not None:
                            progress.advance(file, len(chunk))
            except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
                raise FetchError(f"{file.folder}/{file.path}: bad URL {url!r} ({exc})") from None
            except httpx.TooManyRedirects:
                raise FetchError(
                    f"{file.folder}/{file.path}: too many redirects from {url} (a redirect "
                    "loop?) — check the URL in sources.toml or pass --base-url for a mirror"
                ) from None
            except (httpx.TransportError, httpx.DecodingError) as exc:
                raise _Transient(f"{type(exc).__name__}: {exc}") from None
            except httpx.HTTPError as exc:
                raise FetchError(
                    f"{file.folder}/{file.path}: download from {url} failed "
                    f"({type(exc).__name__}: {exc})"
                ) from None
        if size != file.size:
            lfs = (
                " (looks like a Git LFS pointer)"
                if head.startswith(b"version https://git-lfs")
                else ""
            )
            raise _Transient(f"got {size:,} bytes, expected {file.size:,}{lfs}")
        if file.sha256 is not None and digest.hexdigest() != file.sha256:
            raise _Transient("SHA-256 does not match sources.toml (corrupted download)")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _download(
    client: httpx.Client,
    file: SourceFile,
    url: str,
    target: Path,
    *,
    retries: int,
    backoff: float,
    progress: FetchProgress | None,
) -> None:
    try:
        _attempts(client, file, url, target, retries=retries, backoff=backoff, progress=progress)
    except FetchError:
        _prune(target, file)
        raise


def _prune(target: Path, file: SourceFile) -> None:
    """Remove the folders between the data folder and ``target`` that a failed download
    left empty (a dataset's folder, made for its first file): "nothing was written" then
    holds, on disk too. A folder holding anything is kept (rmdir refuses it)."""
    folder = target.parent
    for _ in range(len(Path(file.folder, file.path).parts) - 1):
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def _attempts(
    client: httpx.Client,
    file: SourceFile,
    url: str,
    target: Path,
    *,
    retries: int,
    backoff: float,
    progress: FetchProgress | None,
) -> None:
    for attempt in range(retries + 1):
        try:
            _download_once(client, file, url, target, progress)
            return
        except _Transient as exc:
            if attempt == retries:
                raise FetchError(
                    f"{file.folder}/{file.path}: download from {url} failed after "
                    f"{retries + 1} attempt(s): {exc} — nothing was written; run the fetch "
                    "again later, or pass --base-url for a mirror"
                ) from None
            if progress is not None:
                progress.restart(file)
            time.sleep(backoff * 2**attempt)


def _client() -> httpx.Client:
    return httpx.Client(follow_redirects=True, timeout=httpx.Timeout(60.0, connect=15.0))


def _check_base_url(base_url: str | None) -> None:
    if base_url is not None and urlsplit(base_url).scheme not in ("http", "https"):
        raise FetchError(f"--base-url must start with http:// or https://, got {base_url!r}")


def fetch_file(
    file: SourceFile,
    dest: str | Path,
    *,
    base_url: str | None = None,
    client: httpx.Client | None = None,
    retries: int = 3,
    backoff: float = 0.5,
    progress: FetchProgress | None = None,
) -> bool:
    """Make sure ``file`` is in ``dest``; returns True if it had to be downloaded."""
    _check_base_url(base_url)
    root = Path(dest).expanduser()
    if progress is not None:
        progress.start(file)
    if is_present(file, root):
        if progress is not None:
            progress.finish(file, skipped=True)
        return False
    http = client or _client()
    try:
        _download(
            http,
            file,
            _url(file, base_url),
            file.target(root),
            retries=retries,
            backoff=backoff,
            progress=progress,
        )
    except OSError as exc:
        raise FetchError(
            f"{file.folder}/{file.path}: cannot write into {root}: {exc.strerror or exc}"
        ) from None
    finally:
        if client is None:
            http.close()
    if progress is not None:
        progress.finish(file, skipped=False)
    return True


def _set_or_change(env: str) -> str:
    """How the fix words the variable ``env``: "change" where it is set, else "set"."""
    return "change" if os.environ.get(env) else "set"


def fetch(
    name: str | Iterable[str],
    dest: str | Path | None = None,
    *,
    base_url: str | None = None,
    client: httpx.Client | None = None,
    retries: int = 3,
    backoff: float = 0.5,
    progress: FetchProgress | None = None,
) -> FetchReport:
    """Download dataset(s) ``name`` (or folder names) into ``dest``; skip what is there.

    ``dest`` defaults to :func:`recuse.data.registry.default_data_dir`. ``client`` is an
    ``httpx.Client`` to use (default: a new one following redirects, 60 s read timeout).
    Returns which files were downloaded and which skipped; raises
    :class:`~recuse.errors.FetchError` when a file cannot be had (files fetched before
    it stay; run again to resume).
    """
    _check_base_url(base_url)
    names = [name] if isinstance(name, str) else list(name)
    files: dict[tuple[str, str], SourceFile] = {}
    for n in names:
        for f in files_for(n):
            files.setdefault((f.folder, f.path), f)
    root = Path(dest).expanduser() if dest is not None else registry.default_data_dir()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        env = registry.DATA_DIR_ENV
        where = "--dest" + ("" if dest is not None else f", or {_set_or_change(env)} {env}")
        raise FetchError(
            f"cannot create the data folder {root}: {exc.strerror or exc} — give a folder "
            f"you can write with {where}"
        ) from None
    http = client or _client()
    downloaded: list[SourceFile] = []
    skipped: list[SourceFile] = []
    try:
        for f in files.values():
            got = fetch_file(
                f,
                root,
                base_url=base_url,
                client=http,
                retries=retries,
                backoff=backoff,
                progress=progress,
            )
            (downloaded if got else skipped).append(f)
    finally:
        if client is None:
            http.close()
    return FetchReport(root, tuple(downloaded), tuple(skipped))
