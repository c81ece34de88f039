"""The revision of a local model folder: a fingerprint of the files that make its outputs.

A folder's name says nothing about its weights: a new fine-tune saved into
``runs/final`` has the name of the old one, and ``runs/a/final`` and
``runs/b/final`` share a name. Cache keys hash the judge's model id and revision,
so the revision of a local folder is a content hash of its config, weight and
tokenizer files (:data:`MODEL_FILES`): changed weights give new keys, and nothing
judged by other weights is ever served.

Hashing gigabytes on every run would cost seconds to minutes, so each file's
SHA-256 is remembered in a small JSON cache by resolved path, size, inode,
modification and change time (:func:`cached_sha256`); a file rewritten in place has
a new change time and is hashed again. The cache is only ever a shortcut: a
missing, unreadable or unwritable cache file means hashing again, never an error;
a cache path that is not a regular file (``RECUSE_HASH_CACHE=/dev/null``) is not
used.

Hashing a large folder the first time shows its progress (bytes hashed of the files not
yet cached) on stderr, so a first run is not silent for minutes.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from recuse.errors import ConfigError
from recuse.files import file_sha256

__all__ = [
    "MODEL_FILES",
    "cached_sha256",
    "check_unchanged",
    "folder_fingerprint",
    "hash_cache_path",
]

#: files whose bytes change what a local model outputs (config, weights, tokenizer,
#: chat template); anything else in the folder (optimizer states, logs, README) is not
#: hashed
MODEL_FILES = (
    "config.json",
    "generation_config.json",
    "*.safetensors",
    "*.safetensors.index.json",
    "pytorch_model*.bin",
    "pytorch_model*.bin.index.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "*.model",  # sentencepiece: tokenizer.model, spiece.model, sentencepiece.bpe.model ...
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.json",
    "vocab.txt",
    "merges.txt",
    "chat_template.jinja",
    "chat_template.json",
)

#: length of the fingerprint (hex digits of a SHA-256)
FINGERPRINT_LENGTH = 16

_CACHE_ENV = "RECUSE_HASH_CACHE"


def hash_cache_path() -> Path:
    """``$RECUSE_HASH_CACHE``, else ``file-hashes.json`` in the model cache folder."""
    env = os.environ.get(_CACHE_ENV)
    if env:
        return Path(env).expanduser()
    from recuse.judging.models import cache_dir

    return cache_dir() / "file-hashes.json"


def _stamp(path: Path) -> str:
    st = path.stat()
    return f"{st.st_size}:{st.st_ino}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def _usable(cache: Path) -> bool:
    """A cache path that is a regular file or not there yet. Anything else (``/dev/null``
    to switch the cache off, a FIFO, a folder) is neither read (a FIFO would block) nor
    replaced (as root, the atomic rename replaced ``/dev/null`` by a JSON file)."""
    try:
        return cache.is_file() or not os.path.lexists(cache)
    except OSError:
        return False


def _read_cache(cache: Path) -> dict[str, list[str]]:
    if not _usable(cache):
        return {}
    try:
        data = json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        k: v
        for k, v in data.items()
        if isinstance(v, list) and len(v) == 2 and all(isinstance(x, str) for x in v)
    }


def _write_cache(cache: Path, entries: dict[str, list[str]]) -> None:
    """Atomic replace (a temporary sibling renamed); any failure leaves no trace."""
    if not _usable(cache):
        return
    with contextlib.suppress(OSError):
        cache.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=cache.name + ".", dir=cache.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(entries, f, sort_keys=True)
            os.replace(tmp, cache)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def cached_sha256(path: Path, *, cache: Path | None = None) -> str:
    """:func:`recuse.files.file_sha256` of ``path``, from ``cache`` when the file is
    unchanged since.

    Unchanged means the same resolved path, size, inode, modification time and change
    time (``os.stat``); the cache (default :func:`hash_cache_path`) is a JSON object
    ``{path: [stamp, sha256]}``.
    """
    return _hashes([path], cache=cache)[0]


#: files not yet cached of at least this many bytes in all get a progress bar on stderr
SHOW_PROGRESS_BYTES = 256 * 2**20
#: called with (bytes hashed so far, bytes to hash) as a folder's uncached files are read
Progress = Callable[[int, int], None]


@contextlib.contextmanager
def _bar(total: int) -> Iterator[Progress]:
    """A progress bar on stderr for hashing ``total`` bytes."""
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, TimeRemainingColumn, TransferSpeedColumn
    from rich.progress import Progress as Bar

    with Bar(
        "[bold]hashing the model files (first time; cached after)",
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=Console(file=sys.stderr),
        transient=False,
    ) as bar:
        task = bar.add_task("hash", total=total)
        yield lambda done, _total: bar.update(task, completed=done)


def _hashes(
    paths: list[Path], *, cache: Path | None, progress: Progress | None = None
) -> list[str]:
    cache = cache if cache is not None else hash_cache_path()
    entries = _read_cache(cache)
    todo: dict[Path, tuple[str, str]] = {}  # uncached: resolved name, stamp
    known: dict[Path, str] = {}
    for path in paths:
        try:
            name, stamp = str(path.resolve()), _stamp(path)
        except OSError as exc:
            raise _unreadable(path, exc) from None
        hit = entries.get(name)
        if hit is not None and hit[0] == stamp:
            known[path] = hit[1]
        else:
            todo[path] = (name, stamp)
    total = 0
    for path in todo:
        with contextlib.suppress(OSError):
            total += path.stat().st_size
    with contextlib.ExitStack() as stack:
        if progress is None and total >= SHOW_PROGRESS_BYTES:
            progress = stack.enter_context(_bar(total))
        out, changed, done = [], False, [0]

        def read(n: int) -> None:  # bytes hashed so far, for the progress bar
            done[0] += n
            if progress is not None:
                progress(done[0], total)

        for path in paths:
            if path in known:
                out.append(known[path])
                continue
            name, stamp = todo[path]
            try:
                digest = file_sha256(path, on_read=read)
            except OSError as exc:
                raise _unreadable(path, exc) from None
            with contextlib.suppress(OSError):  # (removed since: not cached, no error here)
                if _stamp(path) == stamp:  # not written to while it was read
                    entries[name] = [stamp, digest]
                    changed = True
            out.append(digest)
    if changed:
        _write_cache(cache, entries)
    return out


def _unreadable(path: Path, exc: OSError) -> ConfigError:
    """A weight file the user may not read: one line, no trace."""
    return ConfigError(
        f"{path}: cannot read this model file to fingerprint the weights "
        f"({exc.strerror or exc}) — make it readable, or copy the model folder"
    )


def model_files(folder: Path) -> list[Path]:
    """The files of ``folder`` (top level) that :data:`MODEL_FILES` names, sorted."""
    found = [
        p
        for p in sorted(folder.iterdir())
        if p.is_file() and any(fnmatch.fnmatch(p.name, pat) for pat in MODEL_FILES)
    ]
    return found


def folder_fingerprint(
    folder: str | Path, *, cache: Path | None = None, progress: Progress | None = None
) -> str:
    """The revision of a saved model folder: ``"sha256:"`` and the first 16 hex digits of
    SHA-256 over each model file's name and content hash (:func:`model_files`).

    Equal for equal files wherever the folder lies; different as soon as any weight,
    config or tokenizer file differs. ``progress`` is called with (bytes hashed, bytes
    to hash) as files not yet cached are read; None: a bar on stderr when those files
    hold :data:`SHOW_PROGRESS_BYTES` or more.
    """
    root = Path(folder)
    try:
        files = model_files(root) if root.is_dir() else []
    except OSError as exc:  # a folder the user may not list: one line, no trace
        raise ConfigError(
            f"{root}: cannot list this model folder to fingerprint the weights "
            f"({exc.strerror or exc}) — make it readable, or copy the model folder"
        ) from None
    if not any(p.name == "config.json" for p in files):
        raise ConfigError(
            f"{root} is not a model folder (no config.json) — give a folder saved with "
            "save_pretrained"
        )
    total = hashlib.sha256()
    for p, digest in zip(files, _hashes(files, cache=cache, progress=progress), strict=True):
        total.update(f"{p.name}\0{digest}\n".encode())
    return "sha256:" + total.hexdigest()[:FINGERPRINT_LENGTH]


def check_unchanged(folder: str | Path, fingerprint: str, *, cache: Path | None = None) -> None:
    """Refuse a model loaded from ``folder`` whose files are no longer those fingerprinted
    as ``fingerprint`` (the revision its results are keyed by): weights saved into the
    folder between the fingerprint and the load (a training job writing a checkpoint)
    would be judged under the old weights' keys. Called after loading; unchanged files
    are not hashed again (:func:`cached_sha256`'s cache)."""
    now = folder_fingerprint(folder, cache=cache)
    if now != fingerprint:
        raise ConfigError(
            f"{folder}: the model files changed while the run loaded them (fingerprint "
            f"{fingerprint} at the start, {now} now) — run again once the folder is "
            "written (its new weights get their own keys)"
        )
