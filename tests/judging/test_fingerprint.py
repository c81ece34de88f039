"""Cache keys that know the weights: a local folder's revision is its files' fingerprint."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from judging.helpers import (
    FakeBackend,
    build_tiny_model,
    claiming_while_another_claims,
    fake_pairs,
    read_mt_bench_pairs,
)
from recuse.cli import main
from recuse.errors import ConfigError
from recuse.judging import Runner, Store, fingerprint
from recuse.judging.fingerprint import cached_sha256, folder_fingerprint, model_files

pytest.importorskip("torch")


def _pairs_file(tmp_path: Path, shared_data: Path) -> Path:
    src = tmp_path / "pairs.csv"
    pd.DataFrame(read_mt_bench_pairs(shared_data, "gpt-4", "alpaca-13b", 3)).to_csv(
        src, index=False
    )
    return src


def _export(store: Path, tmp_path: Path, name: str) -> pd.DataFrame:
    out = tmp_path / name
    assert main(["judge", "export", str(store), "--out", str(out)]) == 0
    return pd.read_csv(out)


def test_fingerprint_is_the_hash_of_the_files_not_the_folder(tmp_path: Path) -> None:
    a = build_tiny_model(tmp_path / "a" / "final", seed=1)
    b = tmp_path / "elsewhere" / "copy"
    shutil.copytree(a, b)
    fp = folder_fingerprint(a, cache=tmp_path / "c.json")
    assert fp == folder_fingerprint(b, cache=tmp_path / "c.json")  # same bytes, same key
    # worked out by hand from the definition: names and sha256 of the model files
    total = hashlib.sha256()
    for p in model_files(a):
        total.update(f"{p.name}\0{hashlib.sha256(p.read_bytes()).hexdigest()}\n".encode())
    assert fp == "sha256:" + total.hexdigest()[:16]
    assert {p.name for p in model_files(a)} >= {"config.json", "model.safetensors"}
    other = build_tiny_model(tmp_path / "b" / "final", seed=2)
    assert folder_fingerprint(other, cache=tmp_path / "c.json") != fp


def test_unchanged_files_are_not_hashed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = build_tiny_model(tmp_path / "m")
    cache = tmp_path / "hashes.json"
    calls: list[Any] = []
    real = fingerprint.file_sha256  # the one file hasher (recuse.files)

    def counting(path: Path, **kw: Any) -> str:
        calls.append(str(path))
        return real(path, **kw)

    monkeypatch.setattr(fingerprint, "file_sha256", counting)
    first = folder_fingerprint(folder, cache=cache)
    n = len(calls)
    assert n == len(model_files(folder)) and cache.is_file()
    assert folder_fingerprint(folder, cache=cache) == first
    assert len(calls) == n  # every hash came from the cache
    # a rewritten file is hashed again, even where its size stays the same
    weights = folder / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    assert folder_fingerprint(folder, cache=cache) != first
    assert calls[n:] == [str(weights)]
    # a damaged cache is only a missed shortcut
    cache.write_text("{not json")
    assert cached_sha256(weights, cache=cache) == hashlib.sha256(bytes(data)).hexdigest()


def test_a_folder_without_config_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no config\.json"):
        folder_fingerprint(tmp_path)


def test_new_weights_saved_into_the_same_folder_are_judged_again(
    tmp_path: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _pairs_file(tmp_path, shared_data)
    folder = build_tiny_model(tmp_path / "runs" / "final", seed=1)
    store = tmp_path / "judged.db"
    args = ["judge", "--model", str(folder), "--data", str(src), "--out", str(store)]
    assert main([*args, "--no-progress"]) == 0
    assert "6 judgments: 0 already stored, 6 ok" in capsys.readouterr().out
    old = _export(store, tmp_path, "old.csv")

    build_tiny_model(folder, seed=2)  # a new fine-tune saved over the old one
    # the same judge id would merge two models' verdicts: refused, one line, the fix
    assert main([*args, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "--judge-id" in err and "'final'" in err and len(err.strip().splitlines()) == 1
    assert main([*args, "--no-progress", "--judge-id", "final-v2"]) == 0
    assert "6 judgments: 0 already stored, 6 ok" in capsys.readouterr().out  # nothing served

    fresh = tmp_path / "fresh.db"
    assert main([*args[:-1], str(fresh), "--no-progress", "--judge-id", "final-v2"]) == 0
    capsys.readouterr()
    new = _export(store, tmp_path, "new.csv")
    want = _export(fresh, tmp_path, "fresh.csv")
    np.testing.assert_allclose(_values(new, "final-v2"), _values(want, "final-v2"), atol=1e-6)
    np.testing.assert_array_equal(_values(new, "final"), _values(old, "final"))
    assert np.abs(_values(new, "final") - _values(new, "final-v2")).max() > 1e-3


def _values(table: pd.DataFrame, judge: str) -> np.ndarray:
    rows = table[table["judge"] == judge].sort_values("item_id")
    assert len(rows) == 3
    return rows[["p_a_first", "p_a_second"]].to_numpy(dtype=float)


def test_two_folders_of_one_name_are_never_merged(
    tmp_path: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _pairs_file(tmp_path, shared_data)
    a = build_tiny_model(tmp_path / "runs" / "a" / "final", seed=1)
    b = build_tiny_model(tmp_path / "runs" / "b" / "final", seed=2)
    store = tmp_path / "judged.db"
    common = ["--data", str(src), "--out", str(store), "--no-progress"]
    assert main(["judge", "--model", str(a), *common]) == 0
    capsys.readouterr()
    assert main(["judge", "--model", str(b), *common]) == 2
    assert "--judge-id" in capsys.readouterr().err
    assert main(["judge", "--model", str(b), *common, "--judge-id", "b-final"]) == 0
    assert "0 already stored, 6 ok" in capsys.readouterr().out
    table = _export(store, tmp_path, "both.csv")
    assert sorted(table["judge"].unique()) == ["b-final", "final"]
    with sqlite3.connect(store) as conn:
        models = dict(conn.execute("SELECT judge, revision FROM judge_models").fetchall())
    # the fingerprint, with "+bfloat16" where a GPU picked that precision
    assert models["final"].split("+")[0] == folder_fingerprint(a)
    assert models["b-final"].split("+")[0] == folder_fingerprint(b)


def test_a_store_written_before_keeps_working_and_is_never_served_to_other_weights(
    tmp_path: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a store of the old format: rows keyed with the empty revision, no judge_models
    from recuse.judging.backends.local import LocalBackend

    src = _pairs_file(tmp_path, shared_data)
    folder = build_tiny_model(tmp_path / "runs" / "final", seed=1)
    store = tmp_path / "old.db"
    old = LocalBackend.load(folder, model_id="final", revision="")
    with Store(store) as s:
        Runner(old, s, progress=False).pairwise(pd.read_csv(src))
    with sqlite3.connect(store) as conn:
        conn.execute("DROP TABLE judge_models")
    common = ["--model", str(folder), "--data", str(src), "--out", str(store), "--no-progress"]
    assert main(["judge", *common]) == 2  # nothing says which weights made the old rows
    assert "before recuse recorded" in capsys.readouterr().err
    assert main(["judge", *common, "--judge-id", "final-new"]) == 0
    assert "0 already stored, 6 ok" in capsys.readouterr().out
    assert len(_export(store, tmp_path, "t.csv")) == 6  # the old rows still export


def test_a_store_written_before_resumes_where_the_keys_prove_the_same_model(
    tmp_path: Path,
) -> None:
    pairs = pd.DataFrame(fake_pairs(3))
    store = tmp_path / "old.db"
    with Store(store) as s:
        Runner(FakeBackend(), s, progress=False).pairwise(pairs.iloc[:2])
    with sqlite3.connect(store) as conn:
        conn.execute("DELETE FROM judge_models")
    with Store(store) as s:
        summary = Runner(FakeBackend(), s, progress=False).pairwise(pairs)
        assert summary.cached == 4 and summary.ok == 2
        assert s.judge_models() == {"fake-judge": ("fake-judge", "r1")}
        other = FakeBackend()
        other.revision = "r2"
        with pytest.raises(ConfigError, match="judge id 'fake-judge' already holds"):
            Runner(other, s, progress=False).pairwise(pairs)


def test_a_cache_path_that_is_not_a_regular_file_is_left_alone(tmp_path: Path) -> None:
    """``RECUSE_HASH_CACHE=/dev/null`` (the usual way to switch a cache off): the atomic
    rename replaced the device node by a JSON file (as root, /dev/null itself); a FIFO
    blocked the read forever. Neither is read nor written now; hashes are computed."""
    import os
    import stat
    import threading

    folder = build_tiny_model(tmp_path / "m")
    expected = folder_fingerprint(folder, cache=tmp_path / "ok.json")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[str] = []
    worker = threading.Thread(
        target=lambda: got.append(folder_fingerprint(folder, cache=fifo)), daemon=True
    )
    worker.start()
    worker.join(20)
    if worker.is_alive():  # release the blocked reader before failing
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        worker.join(5)
    assert got == [expected]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    null = tmp_path / "null"
    try:
        os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a copy of /dev/null
    except (PermissionError, OSError):
        return  # needs root (CAP_MKNOD)
    assert folder_fingerprint(folder, cache=null) == expected
    assert stat.S_ISCHR(os.stat(null).st_mode)  # still a device, not a JSON file


def _judge_exit(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str]:
    """`recuse judge --model FOLDER` over two pairs into tmp_path/s.db: exit code, stderr."""
    data = tmp_path / "pairs.csv"
    pd.DataFrame(fake_pairs(2)).to_csv(data, index=False)
    code = main(["judge", "--model", str(folder), "--data", str(data), "--out",
                 str(tmp_path / "s.db"), "--no-progress"])  # fmt: skip
    return code, capsys.readouterr().err


def test_an_unreadable_model_file_is_a_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A weight file the user may not read (a shared folder, a file left 0600 by
    another user) ended the run in a PermissionError traceback."""
    folder = build_tiny_model(tmp_path / "m")
    real = Path.open

    def refuse(self: Path, *args: Any, **kw: Any) -> Any:
        if self.name == "model.safetensors":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *args, **kw)

    monkeypatch.setattr(Path, "open", refuse)
    with pytest.raises(ConfigError, match=r"model\.safetensors: cannot read .*Permission denied"):
        folder_fingerprint(folder, cache=tmp_path / "c.json")
    code, err = _judge_exit(folder, tmp_path, capsys)
    assert code == 2 and "cannot read this model file" in err and "Traceback" not in err


def test_weights_saved_while_the_run_loads_them_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The folder is fingerprinted when the run starts and loaded at the first judgment
    to compute: a fine-tune saved into it in between (a training job writing its
    checkpoint) was judged and stored under the old weights' keys, so its verdicts were
    served later to the old weights and the new weights' keys found nothing."""
    import transformers

    from recuse.judging.backends.local import LocalBackend

    folder = build_tiny_model(tmp_path / "runs" / "final", seed=1)
    before = folder_fingerprint(folder)
    real = transformers.AutoModelForCausalLM.from_pretrained

    seeds = iter(range(2, 10))

    def saved_meanwhile(*args: Any, **kw: Any) -> Any:
        build_tiny_model(folder, seed=next(seeds))  # written just before they are read
        return real(*args, **kw)

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", saved_meanwhile)
    data = tmp_path / "pairs.csv"
    pd.DataFrame(fake_pairs(2)).to_csv(data, index=False)
    store = tmp_path / "s.db"
    code = main(["judge", "--model", str(folder), "--data", str(data), "--out", str(store),
                 "--no-progress"])  # fmt: skip
    err = capsys.readouterr().err  # (and the saving's own progress bar)
    line = next((x for x in err.splitlines() if x.startswith("recuse: error:")), "")
    assert code == 2 and "changed while" in line and "Traceback" not in err
    assert before in line and folder_fingerprint(folder) in line
    with Store(store) as s:
        assert s.judgments().empty  # nothing stored under the old weights' keys
    # the library's own fingerprint (revision=None) is checked the same way
    with pytest.raises(ConfigError, match="changed while"):
        LocalBackend.load(folder, model_id="final")
    monkeypatch.undo()  # the folder is written: the run the message asks for goes through
    assert main(["judge", "--model", str(folder), "--data", str(data), "--out", str(store),
                 "--no-progress"]) == 0  # fmt: skip
    assert "4 judgments: 0 already stored, 4 ok" in capsys.readouterr().out


def _claim_while_another_claims(path: Path, revision: str) -> Store:
    """``claim_judge(j, m, revision)`` on ``path`` while another run claims ``j`` for
    ``m`` at ``r1`` between its look-up and its insert; the claiming store."""
    return claiming_while_another_claims(
        path, "judge_models",
        lambda other: other.claim_judge("j", model_id="m", revision="r1", keys=[]),
        lambda mine: mine.claim_judge("j", model_id="m", revision=revision, keys=[]),
    )  # fmt: skip


def test_two_runs_claiming_one_judge_id_at_once(tmp_path: Path) -> None:
    """Two processes on one store both found the judge id unclaimed and both inserted
    it: the second ended in "cannot use the store (UNIQUE constraint failed ...)" even
    for the same weights. Now the same model goes on, and other weights are refused with
    the --judge-id fix, whichever process claims first."""
    with _claim_while_another_claims(tmp_path / "s.db", "r1") as store:
        assert store.judge_models() == {"j": ("m", "r1")}
    with pytest.raises(ConfigError, match=r"judge id 'j' already holds .*--judge-id"):
        _claim_while_another_claims(tmp_path / "s.db", "r2")
    with Store(tmp_path / "s.db") as store:
        assert store.judge_models() == {"j": ("m", "r1")}


def test_a_run_that_judged_nothing_leaves_no_claim_on_its_judge_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The judge id is claimed for the folder's fingerprint before the model loads; a
    load that failed (the weights not yet copied, a checkpoint being written) left the
    claim behind with no judgment, so the run after the fix was refused: "judge id
    'final' already holds judgments of model 'final' at revision ..." (it held none)."""
    folder = build_tiny_model(tmp_path / "runs" / "final", seed=1)
    weights = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").unlink()  # not copied yet
    data = tmp_path / "pairs.csv"
    pd.DataFrame(fake_pairs(2)).to_csv(data, index=False)
    store = tmp_path / "s.db"
    args = ["judge", "--model", str(folder), "--data", str(data), "--out", str(store),
            "--no-progress"]  # fmt: skip
    assert main(args) == 2
    capsys.readouterr()
    with Store(store) as s:
        assert s.judge_models() == {} and s.judgments().empty
    (folder / "model.safetensors").write_bytes(weights)
    assert main(args) == 0
    assert "4 judgments: 0 already stored, 4 ok" in capsys.readouterr().out
    with Store(store) as s:
        assert s.judge_models() == {"final": ("final", folder_fingerprint(folder))}


def test_a_sentencepiece_tokenizer_file_is_part_of_the_fingerprint(tmp_path: Path) -> None:
    """A GPT-SW3-style folder keeps its tokenizer in ``spiece.model`` (no
    tokenizer.json): only ``tokenizer.model`` was hashed, so another tokenizer saved
    into the folder (other token ids, other verdicts) kept the fingerprint and was
    served the old tokenizer's verdicts."""
    spm = pytest.importorskip("sentencepiece")
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel, GPTSw3Tokenizer

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Which answer is better? [[A]] or [[B]]. The quick brown fox.\n" * 20)
    for size in (60, 70):
        spm.SentencePieceTrainer.train(
            input=str(corpus), model_prefix=str(tmp_path / f"sp{size}"), vocab_size=size,
            model_type="bpe", minloglevel=2,
        )  # fmt: skip
    folder = tmp_path / "sw3"
    GPT2LMHeadModel(GPT2Config(vocab_size=80, n_embd=16, n_layer=1, n_head=2)).save_pretrained(
        folder
    )
    GPTSw3Tokenizer(vocab_file=str(tmp_path / "sp60.model")).save_pretrained(folder)
    assert not (folder / "tokenizer.json").exists()
    text = "Which answer is better? [[A]]"
    before = AutoTokenizer.from_pretrained(folder)(text)["input_ids"]
    fp = folder_fingerprint(folder, cache=tmp_path / "c.json")
    shutil.copy(tmp_path / "sp70.model", folder / "spiece.model")  # another tokenizer
    assert AutoTokenizer.from_pretrained(folder)(text)["input_ids"] != before
    assert folder_fingerprint(folder, cache=tmp_path / "c.json") != fp


def test_a_file_removed_right_after_it_was_hashed_is_no_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stamp taken again after hashing (to cache only what was not written to
    meanwhile) raised FileNotFoundError out of folder_fingerprint where the file was
    removed in between (a checkpoint rotated away): a traceback instead of a hash not
    cached. The removal is caught when the model is loaded (check_unchanged)."""

    folder = build_tiny_model(tmp_path / "m")
    weights = folder / "model.safetensors"
    real = fingerprint._stamp
    seen: list[Path] = []

    def stamp(path: Path) -> str:
        if path == weights and path in seen:  # the second look: gone
            raise FileNotFoundError(2, "No such file or directory", str(path))
        seen.append(path)
        return real(path)

    monkeypatch.setattr(fingerprint, "_stamp", stamp)
    cache = tmp_path / "c.json"
    expected = (
        "sha256:"
        + hashlib.sha256(
            "".join(
                f"{p.name}\0{hashlib.sha256(p.read_bytes()).hexdigest()}\n"
                for p in model_files(folder)
            ).encode()
        ).hexdigest()[:16]
    )
    assert folder_fingerprint(folder, cache=cache) == expected
    assert str(weights.resolve()) not in json.loads(cache.read_text())  # not cached


def test_a_model_folder_that_cannot_be_listed_is_a_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder the user may enter but not list (mode 0711, another user's) ended `recuse
    judge` in a PermissionError traceback from listing it for the fingerprint."""
    folder = build_tiny_model(tmp_path / "m")
    real = Path.iterdir

    def refuse(self: Path) -> Any:
        if self == folder:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "iterdir", refuse)
    with pytest.raises(ConfigError, match=r"cannot list this model folder .*Permission denied"):
        folder_fingerprint(folder, cache=tmp_path / "c.json")
    code, err = _judge_exit(folder, tmp_path, capsys)
    assert code == 2 and "cannot list this model folder" in err and "Traceback" not in err
    assert not (tmp_path / "s.db").exists()


def test_hashing_a_folder_the_first_time_shows_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bytes hashed are reported as each chunk is read, up to the uncached files' total;
    a second run (all cached) reports nothing. With no callback, a large first hash
    draws a bar on stderr."""
    import recuse.judging.fingerprint as fp

    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}", "utf-8")
    weights = np.random.default_rng(0).bytes(2_500_000)  # read 1 MiB at a time (recuse.files)
    (folder / "model.safetensors").write_bytes(weights)
    seen: list[tuple[int, int]] = []
    cache = tmp_path / "hashes.json"
    first = folder_fingerprint(folder, cache=cache, progress=lambda d, t: seen.append((d, t)))
    assert [t for _, t in seen] == [2_500_002] * len(seen)
    assert [d for d, _ in seen] == sorted({d for d, _ in seen})  # strictly forward
    assert seen[-1][0] == 2_500_002 and len(seen) == 1 + 3  # config, then 3 reads
    again: list[tuple[int, int]] = []
    assert folder_fingerprint(folder, cache=cache, progress=lambda d, t: again.append((d, t)))
    assert again == []
    assert first == folder_fingerprint(folder, cache=tmp_path / "other.json")  # same hash
    monkeypatch.setattr(fp, "SHOW_PROGRESS_BYTES", 2_000_000)
    capsys.readouterr()
    folder_fingerprint(folder, cache=tmp_path / "third.json")
    err = capsys.readouterr().err
    assert "hashing the model files (first time" in err and "2.5" in err
