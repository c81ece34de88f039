"""The embedded judge's model cache: a half-made folder or a file where the converted
model goes (RECUSE_MODEL_CACHE), without the 135M conversion: transformers' GGUF
reading is replaced by a stand-in that saves a known set of files."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from recuse.cli import main
from recuse.errors import ConfigError, ReaderNote
from recuse.judging import models

#: what the stand-in conversion saves (a real one: config.json, model.safetensors, …)
SAVED = {"config.json": '{"model_type": "llama"}', "model.safetensors": "weights"}
REVISION = "0123456789abcdef0123"  # the stand-in GGUF's sha256 stamp (16 of it name the folder)


class _Saves:
    """A loaded model or tokenizer whose ``save_pretrained`` writes ``files``."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files
        self.config = type("Config", (), {})()
        self.hf_quantizer: object = None

    def save_pretrained(self, folder: Path) -> None:
        for name, text in self.files.items():
            (Path(folder) / name).write_text(text)


@pytest.fixture
def conversions(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[Path]:
    """transformers' loaders replaced (each call recorded), the package's GGUF a small
    file with its sha256 stamp, and RECUSE_MODEL_CACHE under ``tmp_path``."""
    transformers = pytest.importorskip("transformers")
    calls: list[Path] = []

    def model(folder: Path, *, gguf_file: str) -> _Saves:
        calls.append(Path(folder) / gguf_file)
        return _Saves(SAVED)

    def tokenizer(folder: Path, *, gguf_file: str) -> _Saves:
        return _Saves({"tokenizer.json": "{}"})

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", model)
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", tokenizer)
    gguf = tmp_path / "pkg" / "SmolLM2.gguf"
    gguf.parent.mkdir()
    gguf.write_bytes(b"GGUF")
    gguf.with_suffix(".sha256").write_text(REVISION)
    monkeypatch.setattr(models, "smollm2_gguf", lambda: gguf)
    monkeypatch.setenv(models.CACHE_ENV, str(tmp_path / "cache"))
    return calls


def _place(tmp_path: Path) -> Path:
    return tmp_path / "cache" / models.DEFAULT_JUDGE / REVISION[:16]


def test_a_half_made_model_folder_is_replaced_by_the_converted_model(
    conversions: list[Path], tmp_path: Path
) -> None:
    """Before: a model folder holding files but no config.json (a conversion killed
    while it wrote in place) made the finished conversion's rename fail, "Directory not
    empty", in a traceback, on every later run. Now the conversion takes its place: the
    folder holds exactly the stand-in's files, the stale ones are gone and nothing is
    left beside it."""
    out = _place(tmp_path)
    (out / "sub").mkdir(parents=True)
    (out / "model.safetensors").write_text("half")
    (out / "sub" / "stale.bin").write_text("x")
    with pytest.warns(ReaderNote, match="holds an unfinished conversion .no config.json, no "
                      "tokenizer.json"):  # fmt: skip
        model = models.default_judge()
    assert model.path == out and model.revision == REVISION[:16]
    assert len(conversions) == 1
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "model.safetensors",
                                                     "tokenizer.json"]  # fmt: skip
    assert (out / "model.safetensors").read_text() == "weights"
    assert [p.name for p in out.parent.iterdir()] == [out.name]
    models.default_judge()  # a model in place now: not converted again
    assert len(conversions) == 1


def test_a_converted_model_already_in_place_is_kept(
    conversions: list[Path], tmp_path: Path
) -> None:
    """Another process that finished first: its model stays, this conversion is dropped."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    (tmp / "config.json").write_text("mine")
    out = tmp_path / "out"
    out.mkdir()
    for name in (*SAVED, "tokenizer.json"):
        (out / name).write_text("theirs")
    models._put_in_place(tmp, out)
    assert (out / "config.json").read_text() == "theirs"


@pytest.mark.parametrize("what", ["file", "link"])
def test_a_file_where_the_model_goes_is_one_line_exit_2_before_converting(
    what: str,
    conversions: list[Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A file (or a link to nothing) where the model folder goes: refused with the path
    and the fix before the conversion (20-100 s for the real judge) starts; it ended in
    a traceback after it. The file is left as it was."""
    out = _place(tmp_path)
    out.parent.mkdir(parents=True)
    if what == "file":
        out.write_text("keep me")
    else:
        out.symlink_to(tmp_path / "nowhere")
    with pytest.raises(ConfigError, match="is a file or link, not the converted model"):
        models.default_judge()
    data = tmp_path / "pairs.csv"
    data.write_text("item_id,prompt,response_a,response_b\n1,q,a,b\n")
    store = tmp_path / "s.db"
    args = ["judge", "--data", str(data), "--out", str(store), "--no-progress"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert f"rm {out}" in err and models.CACHE_ENV in err, err
    assert conversions == [] and not store.exists()
    assert out.is_symlink() if what == "link" else out.read_text() == "keep me"


def test_a_model_folder_with_config_but_no_weights_is_converted_again(
    conversions: list[Path], tmp_path: Path
) -> None:
    """An older recuse converted in place: killed after save_pretrained wrote
    config.json (first) and before the weights, it left a folder that passed for a
    finished model (config.json was the whole test), never converted again, failing to
    load on every run. Now a folder without weights or tokenizer.json is no finished
    model: a note says what it lacks, and the conversion replaces it whole."""
    out = _place(tmp_path)
    out.mkdir(parents=True)
    (out / "config.json").write_text('{"model_type": "llama"}')
    with pytest.warns(ReaderNote) as notes:
        models.default_judge()
    assert len(conversions) == 1
    said = " ".join(str(n.message) for n in notes)
    assert (
        f"model cache {out} holds an unfinished conversion (no weights (model.safetensors" in said
    )
    assert "no tokenizer.json" in said and "converting the model again" in said
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "model.safetensors",
                                                     "tokenizer.json"]  # fmt: skip
    assert [p.name for p in out.parent.iterdir()] == [out.name]


#: a conversion killed (SIGKILL) after making its folder beside the cache, in a process
#: of its own: the folder is made, and locked, as recuse makes it (_conversion_folder);
#: with "stale", killed as it replaced a half-made cache, moved aside first
KILLED = """
import os, signal, sys
from pathlib import Path
from typing import Any
from recuse.judging import models
out = Path(sys.argv[1])
tmp, _ = models._conversion_folder(out)
(tmp / "model.safetensors").write_text("half")
if sys.argv[2] == "stale":
    out.rename(tmp.with_name(tmp.name + ".stale"))
print(tmp.name, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def _killed(out: Path, how: str) -> str:
    """Run :data:`KILLED` for ``out``: the name of the conversion folder it left."""
    import recuse

    env = {**os.environ, "PYTHONPATH": str(Path(recuse.__file__).resolve().parents[1])}
    proc = subprocess.run([sys.executable, "-c", KILLED, str(out), how], capture_output=True,
                          text=True, env=env, timeout=120)  # fmt: skip
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    return proc.stdout.strip()


@pytest.mark.skipif(sys.platform == "win32", reason="flock: POSIX")
def test_what_killed_conversions_left_is_removed_and_a_running_ones_kept(
    conversions: list[Path], tmp_path: Path
) -> None:
    """A conversion killed while it wrote left its temporary folder beside the cache,
    and one killed while replacing a half-made cache left that folder moved aside
    (.stale), for good (270 MB each for the real judge). Now the next run removes both
    (their processes gone, nothing holds their folder's lock), and keeps what is not
    provably a killed conversion's: a conversion running now (its folder locked, here
    by this process, with a half-made cache it moved aside), another revision's
    folder, a file of a leftover's name, a folder whose name only starts alike."""
    out = _place(tmp_path)
    out.mkdir(parents=True)
    (out / "config.json").write_text("half-made")
    stale = _killed(out, "stale")  # the half-made cache moved aside, then killed
    assert not out.exists() and (out.parent / (stale + ".stale")).is_dir()
    killed = _killed(out, "plain")
    running, lock = models._conversion_folder(out)  # a conversion under way
    assert lock is not None
    (out.parent / (running.name + ".stale")).mkdir()
    kept = {running.name, running.name + ".stale", "fedcba9876543210.abcd1234",
            out.name + ".abcd12345", out.name + ".file0000"}  # fmt: skip
    (out.parent / "fedcba9876543210.abcd1234").mkdir()
    (out.parent / (out.name + ".abcd12345")).mkdir()
    (out.parent / (out.name + ".file0000")).write_text("a file")
    try:
        models.default_judge()
        assert sorted(p.name for p in out.parent.iterdir()) == sorted({out.name, *kept})
        assert stale not in kept and killed not in kept
        assert len(conversions) == 1 and models._holds_model(out)
    finally:
        os.close(lock)
    # the running conversion ended (killed): the next run removes its folders too
    models.default_judge()
    assert len(conversions) == 1  # the model in place: not converted again
    assert sorted(p.name for p in out.parent.iterdir()) == sorted(
        {out.name, "fedcba9876543210.abcd1234", out.name + ".abcd12345", out.name + ".file0000"}
    )


def test_a_conversion_that_saves_no_finished_model_is_said_not_redone_each_run(
    conversions: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A transformers that saved the tokenizer under other names (no tokenizer.json)
    would leave a model that is never counted finished, converted again on every run:
    the run that converts it says so instead, one ConfigError naming what is missing."""
    monkeypatch.setattr(_Saves, "save_pretrained", _save_without_tokenizer_json)
    with pytest.raises(ConfigError, match=r"saved no tokenizer\.json: this transformers"):
        models.default_judge()
    assert len(conversions) == 1


def _save_without_tokenizer_json(self: _Saves, folder: Path) -> None:
    for name, text in self.files.items():
        if name != "tokenizer.json":
            (Path(folder) / name).write_text(text)
    (Path(folder) / "vocab.json").write_text("{}")


def _sharded(folder: Path, shards: list[str], saved: list[str]) -> None:
    """A sharded model's files in ``folder``: config.json, tokenizer.json, the index
    naming ``shards`` (two tensors each) and those of them in ``saved``."""
    import json

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text('{"model_type": "llama"}')
    (folder / "tokenizer.json").write_text("{}")
    weight_map = {f"layer{k}.{t}": shard for k, shard in enumerate(shards) for t in "ab"}
    index = {"metadata": {"total_size": 8}, "weight_map": weight_map}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    for shard in saved:
        (folder / shard).write_text("weights")


def test_a_sharded_model_is_finished_only_with_every_shard_its_index_names(
    conversions: list[Path], tmp_path: Path
) -> None:
    """save_pretrained writes a larger model as shards and an index naming them: a
    folder with config.json, tokenizer.json and the index but not every shard (one
    removed, a copy stopped part-way) passed for a finished model — the index was
    taken for the weights — never converted again, failing to load on every run. Now
    a sharded model is finished only with each shard its index names (a shard named
    twice in the index counted once); one without is said (which shard) and converted
    again; an index that cannot be read names no shard. A folder with every shard is
    kept, not converted."""
    two = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    whole = tmp_path / "whole"
    _sharded(whole, two, two)
    assert models._holds_model(whole) and models._missing(whole) == []
    half = tmp_path / "half"
    _sharded(half, two, two[:1])
    assert models._missing(half) == [
        "model-00002-of-00002.safetensors (a shard model.safetensors.index.json names)"
    ]
    many = tmp_path / "many"
    _sharded(many, [f"model-0000{k}-of-00005.safetensors" for k in range(1, 6)], [])
    assert models._missing(many) == [
        "model-00001-of-00005.safetensors and 4 more shards model.safetensors.index.json names"
    ]
    unread = tmp_path / "unread"
    _sharded(unread, two, two)
    (unread / "model.safetensors.index.json").write_text("{")
    assert models._missing(unread) == [
        "weights (model.safetensors.index.json readable, and the shards it names)"
    ]
    odd = tmp_path / "odd"  # names no file can have: lacking, not a traceback
    _sharded(odd, ["a\x00b.safetensors", "x" * 300 + ".safetensors"], [])
    assert models._missing(odd) == [
        "a\x00b.safetensors (a shard model.safetensors.index.json names)",
        "x" * 300 + ".safetensors (a shard model.safetensors.index.json names)",
    ]
    out = _place(tmp_path)
    _sharded(out, two, two[:1])  # the killed conversion's folder, in the cache
    with pytest.warns(ReaderNote, match=r"unfinished conversion \(no model-00002-of-00002"):
        models.default_judge()
    assert len(conversions) == 1
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "model.safetensors",
                                                     "tokenizer.json"]  # fmt: skip
    _sharded(out, two, two)  # a finished sharded model in place: kept as it is
    (out / "model.safetensors").unlink()
    models.default_judge()
    assert len(conversions) == 1


@pytest.mark.skipif(sys.platform == "win32", reason="flock: POSIX")
def test_leftovers_that_cannot_be_removed_are_not_said_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """clear_leftovers returned every leftover it tried to remove, removed or not: in a
    read-only cache (run by hand on a read-only bind mount: both were returned, both
    stayed) it named as removed two folders still there. Here the removal fails as it
    does there (rmtree with ignore_errors that removes nothing) for one of two: only
    the other is returned, and the one that stayed is still there."""
    out = tmp_path / "cache with spaces" / models.DEFAULT_JUDGE / REVISION[:16]
    stays = out.parent / (out.name + ".abcd1234")
    goes = out.parent / (out.name + ".zzzz9999.stale")
    for folder in (stays, goes):
        folder.mkdir(parents=True)
        (folder / "model.safetensors").write_text("half")
    real = models.shutil.rmtree

    def read_only(path: Path, ignore_errors: bool = False) -> None:
        if Path(path) != stays:
            real(path, ignore_errors=ignore_errors)

    monkeypatch.setattr(models.shutil, "rmtree", read_only)
    assert models.clear_leftovers(out) == [goes]
    assert sorted(p.name for p in out.parent.iterdir()) == [stays.name]


@pytest.mark.skipif(sys.platform == "win32", reason="flock: POSIX")
@pytest.mark.parametrize("code", ["ENOLCK", "EOPNOTSUPP", "EBADF"])
def test_a_cache_without_locks_removes_nothing_and_still_converts(
    conversions: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: str
) -> None:
    """A file system where flock fails (NFS without its lock service: ENOLCK; one that
    has none: EOPNOTSUPP; Linux's NFS flock on a folder opened for reading: EBADF)
    cannot tell a killed conversion's folder from a running one's: clear_leftovers
    removes nothing (a running conversion's folder, here one with a half-made
    .stale beside it, stays), and the model is still converted and put in place."""
    import errno
    import fcntl

    def flock(fd: int, op: int) -> None:
        number = getattr(errno, code)
        raise OSError(number, os.strerror(number))

    monkeypatch.setattr(fcntl, "flock", flock)
    out = _place(tmp_path)
    running = out.parent / (out.name + ".abcd1234")
    (running.parent / (running.name + ".stale")).mkdir(parents=True)
    running.mkdir()
    assert models.clear_leftovers(out) == []
    models.default_judge()
    assert len(conversions) == 1 and models._holds_model(out)
    names = sorted(p.name for p in out.parent.iterdir())
    assert names == sorted([out.name, running.name, running.name + ".stale"])


def test_an_unlistable_half_made_folder_is_said_and_converted_not_a_traceback(
    conversions: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model folder with search but no read permission (chmod 0300, as a user other
    than root; simulated here by listing it failing as it does then): the note for an
    unfinished conversion listed it to see whether it held files and ended `recuse
    judge` in a PermissionError traceback. Now it is said and converted again."""
    out = _place(tmp_path)
    out.mkdir(parents=True)
    (out / "config.json").write_text('{"model_type": "llama"}')
    real = Path.iterdir

    def unlistable(self: Path) -> Any:
        if self == out:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    with monkeypatch.context() as patched:
        patched.setattr(Path, "iterdir", unlistable)
        with pytest.warns(ReaderNote, match="holds an unfinished conversion"):
            models.default_judge()
    assert len(conversions) == 1 and models._holds_model(out)


def _mode_0000(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every path inside ``folder`` fails to stat, and ``folder`` to list or open, as
    under a folder of mode 0000 for a user other than root."""
    real_stat, real_iterdir, real_open = Path.stat, Path.iterdir, os.open

    def stat(self: Path, *args: Any, **kwargs: Any) -> Any:
        if folder in self.parents:
            raise PermissionError(13, "Permission denied", str(self))
        return real_stat(self, *args, **kwargs)

    def iterdir(self: Path) -> Any:
        if self == folder or folder in self.parents:
            raise PermissionError(13, "Permission denied", str(self))
        return real_iterdir(self)

    def refusing(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if Path(str(path)) == folder or folder in Path(str(path)).parents:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(Path, "stat", stat)
    monkeypatch.setattr(Path, "iterdir", iterdir)
    monkeypatch.setattr(os, "open", refusing)


def test_a_cache_folder_of_mode_0000_is_one_line_exit_2_not_a_traceback(
    conversions: list[Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """RECUSE_MODEL_CACHE a folder of mode 0000 (simulated: root reads any folder):
    looking in it for the converted model ended `recuse judge` in a PermissionError
    traceback. Now one line names the folder, what could not be read, the variable
    and the fix; exit 2, nothing converted."""
    cache = tmp_path / "cache"
    (cache / models.DEFAULT_JUDGE).mkdir(parents=True)
    data = tmp_path / "pairs.csv"
    data.write_text("item_id,prompt,response_a,response_b\n1,q,a,b\n")
    store = tmp_path / "s.db"
    with monkeypatch.context() as patched:
        _mode_0000(cache, patched)
        with pytest.raises(ConfigError) as raised:
            models.default_judge()
        args = ["judge", "--data", str(data), "--out", str(store), "--no-progress"]
        assert main(args) == 2
    said = str(raised.value)
    assert said.startswith(
        f"cannot look in the embedded judge's model cache {cache} "
        f"(${models.CACHE_ENV} = {str(cache)!r}): {cache / models.DEFAULT_JUDGE}: "
        "Permission denied — "
    ), said
    assert f"chmod -R u+rwX {cache}" in said and models.CACHE_ENV in said.split(" — ")[1]
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err and str(cache) in err, err
    assert conversions == [] and not store.exists()


@pytest.mark.skipif(
    sys.platform == "win32" or os.geteuid() == 0, reason="mode 0000: POSIX; root reads any folder"
)
def test_a_real_cache_folder_of_mode_0000_is_a_clear_error(
    conversions: list[Path], tmp_path: Path
) -> None:
    """The same with a real folder of mode 0000."""
    cache = tmp_path / "cache"
    (cache / models.DEFAULT_JUDGE).mkdir(parents=True)
    cache.chmod(0)
    try:
        with pytest.raises(ConfigError, match="cannot look in the embedded judge's model cache"):
            models.default_judge()
    finally:
        cache.chmod(0o700)
    assert conversions == []
