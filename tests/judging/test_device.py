"""Device and precision of a local judge: the choice (mocked availability), the CPU path
for real, the pipelined backend against the serial one, and (where a CUDA GPU is
present) the GPU path."""

from __future__ import annotations

import asyncio
import types
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from judging.helpers import read_mt_bench_pairs
from recuse.cli import main
from recuse.errors import ConfigError
from recuse.judging import device as device_mod
from recuse.judging.device import (
    GPU_TOKEN_BUDGET_MAX,
    gpu_token_budget,
    resolve_device,
    resolve_dtype,
)
from recuse.judging.fingerprint import folder_fingerprint
from recuse.judging.protocols import (
    Message,
    Pair,
    PairwiseProtocol,
    Prompt,
    is_verdict_token,
)

torch = pytest.importorskip("torch")

from recuse.judging.backends import local  # noqa: E402
from recuse.judging.backends.local import LocalBackend  # noqa: E402

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def _fake_torch(*, gpus: int = 0, mps: bool = False, capability: int = 9) -> Any:
    return types.SimpleNamespace(
        __version__="2.x",
        cuda=types.SimpleNamespace(
            is_available=lambda: gpus > 0,
            device_count=lambda: gpus,
            get_device_capability=lambda d=None: (capability, 0),
        ),
        backends=types.SimpleNamespace(mps=types.SimpleNamespace(is_available=lambda: mps)),
    )


@pytest.mark.parametrize(
    ("gpus", "mps", "spec", "want"),
    [
        (0, False, "auto", "cpu"),
        (1, False, "auto", "cuda:0"),
        (2, True, "auto", "cuda:0"),  # CUDA before MPS
        (0, True, "auto", "mps"),
        (2, False, "cuda", "cuda:0"),
        (2, False, "cuda:1", "cuda:1"),
        (2, False, "CPU", "cpu"),
        (0, True, "mps", "mps"),
    ],
)
def test_device_choice(
    monkeypatch: pytest.MonkeyPatch, gpus: int, mps: bool, spec: str, want: str
) -> None:
    monkeypatch.setattr(device_mod, "_torch", lambda: _fake_torch(gpus=gpus, mps=mps))
    assert resolve_device(spec) == want


@pytest.mark.parametrize(
    ("gpus", "mps", "spec", "words"),
    [
        (0, False, "cuda", "sees no CUDA GPU"),
        (2, False, "cuda:2", "numbered 0 to 1"),
        (0, False, "mps", "no Apple GPU"),
        (1, False, "tpu", "must be auto, cpu"),
        (1, False, "cuda:x", "must be auto, cpu"),
    ],
)
def test_a_device_torch_cannot_use_is_refused(
    monkeypatch: pytest.MonkeyPatch, gpus: int, mps: bool, spec: str, words: str
) -> None:
    monkeypatch.setattr(device_mod, "_torch", lambda: _fake_torch(gpus=gpus, mps=mps))
    with pytest.raises(ConfigError, match=words):
        resolve_device(spec)


@pytest.mark.parametrize(
    ("capability", "where", "spec", "want"),
    [
        (9, "cuda:0", "auto", "bfloat16"),  # H100 / H200
        (8, "cuda:1", "auto", "bfloat16"),  # A100
        (7, "cuda:0", "auto", "float32"),  # V100: no native bfloat16
        (9, "cpu", "auto", "float32"),
        (9, "mps", "auto", "float32"),
        (9, "cpu", "bfloat16", "bfloat16"),  # asked for: taken as given
        (9, "cuda:0", "float32", "float32"),
    ],
)
def test_dtype_choice(
    monkeypatch: pytest.MonkeyPatch, capability: int, where: str, spec: str, want: str
) -> None:
    monkeypatch.setattr(device_mod, "_torch", lambda: _fake_torch(gpus=2, capability=capability))
    assert resolve_dtype(spec, where) == want


def test_gpu_token_budget_by_hand() -> None:
    # per token: 2 * 1024 * (8 + 2 * 4096 / 1024) + 4 * 32000 / 8 + 2 * 1024 * 16 / 16
    #          = 32768 + 16000 + 2048 = 50816 bytes; half of 2 GiB / 50816 = 21131
    budget = gpu_token_budget(
        free_bytes=2 << 30, hidden_size=1024, num_layers=16, vocab_size=32000,
        intermediate_size=4096,
    )  # fmt: skip
    assert budget == 21131 // 1024 * 1024 == 20480
    assert gpu_token_budget(free_bytes=1 << 20, hidden_size=4096, num_layers=32,
                            vocab_size=128256) == 4096  # fmt: skip
    assert gpu_token_budget(free_bytes=1 << 40, hidden_size=576, num_layers=30,
                            vocab_size=49152) == 65536  # fmt: skip
    # a small model gets the same cap: its bare pass ran no faster at 131,072
    small = dict(hidden_size=576, num_layers=30, vocab_size=49152, intermediate_size=1536)
    assert gpu_token_budget(free_bytes=1 << 40, **small) == GPU_TOKEN_BUDGET_MAX == 65536
    # per token 2 * 576 * (8 + 2 * 1536 / 576) + 4 * 49152 / 8 + 2 * 576 * 30 / 16
    # = 15360 + 24576 + 2160 = 42096 bytes: half of 2 GiB holds 25,506 -> 24,576
    assert gpu_token_budget(free_bytes=2 << 30, **small) == 24576


def test_cpu_load_reports_device_dtype_and_keeps_dtype_in_the_revision(
    tiny_model_dir: Path,
) -> None:
    fp = folder_fingerprint(tiny_model_dir)
    b = LocalBackend.load(tiny_model_dir, model_id="tiny", device="cpu")
    assert (b.device, b.dtype, b.hardware) == ("cpu", "float32", "cpu float32")
    assert b.revision == fp and b.max_batch_tokens == 2048 and b.batch_size == 16
    assert b.concurrency == 1 and not b.pipeline
    half = LocalBackend.load(tiny_model_dir, model_id="tiny", device="cpu", dtype="bfloat16")
    assert half.revision == fp + "+bfloat16" and half.hardware == "cpu bfloat16"


PAIRS = [
    Pair("p1", "What is two plus two?", "It is four.", "Five, surely."),
    Pair("p2", "Name a fox.", "The quick brown fox jumps over the lazy dog " * 6, "Fox."),
    Pair("p3", "Which is better?", "A", "B is better than A because it is careful and fair."),
    Pair("p4", "Say hi.", "hi " * 20, "Hello there, friend."),
]


def _prompts() -> list[Prompt]:
    proto = PairwiseProtocol(mode="direct")
    return [proto.prompt(p, o) for p in PAIRS for o in ("first", "second")]


def _compare(a: LocalBackend, b: LocalBackend, *, atol: float = 1e-5) -> None:
    prompts = _prompts()
    da = asyncio.run(a.next_token_logprobs(prompts, top_k=7, select=is_verdict_token))
    db = asyncio.run(b.next_token_logprobs(prompts, top_k=7, select=is_verdict_token))
    for x, y in zip(da, db, strict=True):
        assert isinstance(x, dict) and isinstance(y, dict) and x.keys() == y.keys()
        np.testing.assert_allclose([x[k] for k in x], [y[k] for k in x], atol=atol)
    texts = [p.response_a for p in PAIRS] * 2
    ca = asyncio.run(a.continuation_logprobs(prompts, texts))
    cb = asyncio.run(b.continuation_logprobs(prompts, texts))
    for x, y in zip(ca, cb, strict=True):
        assert isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and len(x) == len(y) > 0
        np.testing.assert_allclose(x, y, atol=atol)


def test_pipelined_backend_gives_the_serial_numbers(tiny_model_dir: Path) -> None:
    serial = LocalBackend.load(tiny_model_dir, model_id="t", device="cpu", pipeline=False)
    lengths = [len(serial.encode(p)) for p in _prompts()]
    budget = 2 * max(lengths)  # two prompts per forward pass: several passes in flight
    piped = LocalBackend(serial.model, serial.tokenizer, model_id="t", pipeline=True,
                         max_batch_tokens=budget)  # fmt: skip
    serial.max_batch_tokens = budget
    assert len(piped._buckets(lengths)) >= 4
    sizes = [piped._size(p) for p in _prompts()]
    assert len(piped._waves(sizes)) >= 2 and len(serial._waves(sizes)) == 1
    _compare(piped, serial)
    # and both against one prompt per pass (no padding at all)
    one = LocalBackend(serial.model, serial.tokenizer, model_id="t", batch_size=1)
    _compare(piped, one)


def test_waves_cut_a_call_in_order_small_first(tiny_model_dir: Path) -> None:
    b = LocalBackend.load(tiny_model_dir, model_id="t", device="cpu", pipeline=True,
                          max_batch_tokens=100)  # fmt: skip
    first = 100  # tokens: one pass, 6 items of 15
    waves = b._waves([15] * 80)
    assert [i for w in waves for i in w] == list(range(80))  # every item once, in order
    # one pass of tokens, then twice the wave before (200, 400 tokens), at most
    # WAVE_PASSES passes (400): each is prepared while the one before runs
    assert local.WAVE_PASSES == 4
    assert [len(w) for w in waves[:-1]] == [first // 15, 2 * first // 15, 4 * first // 15,
                                           4 * first // 15]  # fmt: skip
    assert len(waves[-1]) == 80 - sum(len(w) for w in waves[:-1])
    assert b._waves([10**6, 5, 5]) == [[0], [1, 2]]  # an item over the limit goes alone
    assert b._waves([]) == []


def test_waves_run_about_as_many_passes_as_one_wave(tiny_model_dir: Path) -> None:
    """Every wave but the last holds back its part-filled longest bucket for the next
    one (the first keeps at least one bucket, so the device starts at once): a call's
    passes are those of bucketing it whole (here exactly). Before, the first wave ran
    its leftover bucket alone (MT-Bench, 2,400 prompts at a 65,536-token budget: 32
    passes, 29 now, 27 bare)."""
    import types

    piped = LocalBackend.load(tiny_model_dir, model_id="t", device="cpu", pipeline=True)
    prompts = sorted(_prompts() * 6, key=local._chars)  # the runner sends them by size
    lengths = [len(piped.encode(p)) for p in prompts]
    piped.max_batch_tokens = 3 * max(lengths)  # ~3 prompts per pass, several waves
    waves = piped._waves([piped._size(p) for p in prompts])
    assert len(waves) >= 3 and len(piped._buckets([lengths[i] for i in waves[0]])) >= 2
    shapes: list[tuple[int, ...]] = []
    hidden = piped._hidden

    def counted(self: LocalBackend, ids: Any) -> Any:
        shapes.append(tuple(ids.shape))
        return hidden(ids)

    piped._hidden = types.MethodType(counted, piped)  # type: ignore[method-assign]
    piped.next_token_logprobs_sync(prompts, top_k=5)
    whole = len(piped._buckets(lengths))
    assert sum(r for r, _ in shapes) == len(prompts)
    assert len(shapes) == whole  # 17 before: the first wave's leftover ran alone


def test_pipelined_waves_keep_failures_in_place(tiny_model_dir: Path) -> None:
    """A prompt too long for the model, in a later wave, fails at its own index."""
    piped = LocalBackend.load(tiny_model_dir, model_id="t", device="cpu", pipeline=True)
    serial = LocalBackend(piped.model, piped.tokenizer, model_id="t", pipeline=False)
    prompts = _prompts()
    sizes = [local._chars(p) for p in prompts]
    piped.max_batch_tokens = serial.max_batch_tokens = max(sizes) // 2
    long = Prompt((Message("user", "word " * (piped.max_length + 10)),))
    batch = [*prompts, long, *prompts]
    assert len(piped._waves([piped._size(p) for p in batch])) >= 3
    got = piped.next_token_logprobs_sync(batch, top_k=5, select=is_verdict_token)
    want = serial.next_token_logprobs_sync(batch, top_k=5, select=is_verdict_token)
    bad = len(prompts)
    assert "reads at most" in str(getattr(got[bad], "reason", "")) and got[bad] == want[bad]
    for k, (x, y) in enumerate(zip(got, want, strict=True)):
        if k != bad:
            assert isinstance(x, dict) and isinstance(y, dict) and x.keys() == y.keys()
            np.testing.assert_allclose([x[t] for t in x], [y[t] for t in x], atol=1e-5)


def test_two_calls_in_flight_judge_as_one_at_a_time(
    tiny_model_dir: Path, tmp_path: Path, shared_data: Path
) -> None:
    from recuse.judging import Runner, Store

    pairs = pd.DataFrame(read_mt_bench_pairs(shared_data, "gpt-4", "alpaca-13b", 6))
    serial = LocalBackend.load(tiny_model_dir, model_id="t", device="cpu", batch_size=3)
    piped = LocalBackend(serial.model, serial.tokenizer, model_id="t", batch_size=3,
                         pipeline=True, max_batch_tokens=1500)  # fmt: skip
    assert piped.concurrency == 2  # two calls in flight (the lock keeps one on the device)
    tables = []
    for name, b in (("serial", serial), ("piped", piped)):
        with Store(tmp_path / f"{name}.db") as s:
            summary = Runner(b, s, judge="t", progress=False).pairwise(pairs)
            assert summary.ok + summary.unparsed == 12
            tables.append(s.export_pairs().sort_values("item_id"))
    cols = ["p_a_first", "p_a_second"]
    np.testing.assert_allclose(tables[0][cols].to_numpy(float), tables[1][cols].to_numpy(float),
                               atol=1e-6)  # fmt: skip


def test_cli_says_where_the_judge_runs(
    tiny_model_dir: Path, tmp_path: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "pairs.csv"
    pd.DataFrame(read_mt_bench_pairs(shared_data, "gpt-4", "alpaca-13b", 2)).to_csv(
        src, index=False
    )
    store = tmp_path / "s.db"
    args = ["judge", "--model", str(tiny_model_dir), "--data", str(src), "--out", str(store),
            "--no-progress", "--judge-id", "tiny"]  # fmt: skip
    assert main([*args, "--device", "cpu"]) == 0
    out = capsys.readouterr().out.splitlines()
    fp = folder_fingerprint(tiny_model_dir)
    assert out[0] == (
        f"judge tiny: local model on cpu float32 (revision {fp}), "
        f"read from model folder {tiny_model_dir}"
    )
    card = next(line for line in out if line.startswith("card: "))
    assert "answered judgments/s on cpu float32 (4 answered, ok or unparsed, in " in card
    assert main(["judge", "card", str(store)]) == 0
    assert "on cpu float32" in capsys.readouterr().out
    if not torch.cuda.is_available():
        assert main([*args, "--device", "cuda"]) == 2
        err = capsys.readouterr().err.strip()
        assert "sees no CUDA GPU" in err and len(err.splitlines()) == 1


# --- on a CUDA GPU only ---------------------------------------------------------------


@cuda
def test_gpu_is_the_default_and_bfloat16_where_it_computes_in_it(tiny_model_dir: Path) -> None:
    b = LocalBackend.load(tiny_model_dir, model_id="tiny")
    assert b.device == "cuda:0" and b.pipeline and b.concurrency == 2
    major = torch.cuda.get_device_capability(0)[0]
    assert b.dtype == ("bfloat16" if major >= 8 else "float32")
    free = torch.cuda.mem_get_info(0)[0]
    assert 4096 <= b.max_batch_tokens <= 131072 and b.batch_size == 1024  # a tiny model
    assert free > 0


@cuda
def test_gpu_pipelined_matches_cpu_serial(tiny_model_dir: Path) -> None:
    cpu = LocalBackend.load(tiny_model_dir, model_id="t", device="cpu", dtype="float32")
    gpu = LocalBackend.load(tiny_model_dir, model_id="t", device="cuda", dtype="float32")
    lengths = [len(cpu.encode(p)) for p in _prompts()]
    gpu.max_batch_tokens = cpu.max_batch_tokens = 2 * max(lengths)
    torch.backends.cuda.matmul.allow_tf32 = False
    _compare(gpu, cpu, atol=1e-3)


def test_cli_backend_keeps_two_calls_in_flight_on_a_gpu(tiny_model_dir: Path) -> None:
    """The CLI's backend (loaded on first use) tells the runner how many calls to keep
    in flight before it loads: two on a GPU, as the loaded backend does, one on the CPU."""
    from recuse.judging.setup import judge_backend as _backend

    common: dict[str, Any] = dict(base_urls=[], endpoint="completions", api_key_env=None,
                                  concurrency=8, timeout=1.0, dtype="auto", batch_size=0,
                                  judge_id="t")  # fmt: skip
    gpu, _ = _backend(str(tiny_model_dir), placed=("cuda:0", "bfloat16"), **common)
    cpu, _ = _backend(str(tiny_model_dir), placed=("cpu", "float32"), **common)
    assert (gpu.concurrency, gpu.batch_size) == (2, local.GPU_BATCH_SIZE)
    assert (cpu.concurrency, cpu.batch_size) == (1, local.CPU_BATCH_SIZE)
    loaded = LocalBackend.load(tiny_model_dir, model_id="t", device="cpu")
    assert loaded.concurrency == cpu.concurrency
    piped = LocalBackend(loaded.model, loaded.tokenizer, model_id="t", pipeline=True)
    assert piped.concurrency == 2


def test_a_call_that_starts_behind_another_is_prepared_whole(tiny_model_dir: Path) -> None:
    """Two calls in a pipelined backend at once: the first goes wave by wave (so the
    device starts at once), the second waits until the first has prepared its last
    wave, then is prepared as one wave (its buckets cut over all its prompts) while
    the first still runs; both give the serial numbers. Benchmark: on an emulated
    device at the 135M shape's H200 speed, padding 1.10 -> 1.07 of the real tokens and
    0.86 -> 0.90 of the bare pass (benchmarks/judge_pipeline.py, 2 CPU cores)."""
    import threading
    import time
    import types

    serial = LocalBackend.load(tiny_model_dir, model_id="t", device="cpu", pipeline=False)
    prompts = sorted(_prompts() * 4, key=local._chars)
    lengths = [len(serial.encode(p)) for p in prompts]
    piped = LocalBackend(serial.model, serial.tokenizer, model_id="t", pipeline=True,
                         max_batch_tokens=2 * max(lengths))  # fmt: skip
    assert len(piped._waves([piped._size(p) for p in prompts])) >= 3
    waves: list[int] = []  # waves of each call, in the order the calls entered
    prepared: list[int] = []  # prompts of each wave prepared, in order
    run_waves, pipelined = piped._run_waves_now, piped._pipelined

    def recorded(self: LocalBackend, w: list[list[int]], *args: Any) -> None:
        waves.append(len(w))
        run_waves(w, *args)

    def held(self: LocalBackend, batches: Any, prepare: Any, launch: Any, finish: Any) -> None:
        def step(b: list[int]) -> Any:
            prepared.append(len(b))
            if len(prepared) == 2:  # the first call's second wave: wait for the second call
                deadline = time.monotonic() + 30
                while piped._calls < 2 and time.monotonic() < deadline:
                    time.sleep(0.005)
            return prepare(b)

        pipelined(batches, step, launch, finish)

    piped._run_waves_now = types.MethodType(recorded, piped)  # type: ignore[method-assign]
    piped._pipelined = types.MethodType(held, piped)  # type: ignore[method-assign]
    out: list[Any] = [None, None]

    def call(k: int) -> None:
        out[k] = piped.next_token_logprobs_sync(prompts, top_k=5, select=is_verdict_token)

    threads = [threading.Thread(target=call, args=(k,)) for k in (0, 1)]
    for t in threads:
        t.start()
        time.sleep(0.05)
    for t in threads:
        t.join(timeout=120)
    assert waves[0] >= 3 and waves[1] == 1, waves
    # the first call's waves all prepared before the second call, prepared whole
    assert prepared[waves[0] :] == [len(prompts)] and sum(prepared[: waves[0]]) == len(prompts)
    want = serial.next_token_logprobs_sync(prompts, top_k=5, select=is_verdict_token)
    for got in out:
        for x, y in zip(got, want, strict=True):
            assert isinstance(x, dict) and isinstance(y, dict) and x.keys() == y.keys()
            np.testing.assert_allclose([x[k] for k in x], [y[k] for k in x], atol=1e-5)


def test_two_pipelined_calls_interrupted_then_resumed_equal_a_serial_run(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    """Two calls in flight (pipelined, as on a GPU): Ctrl-C in the middle of a run
    (KeyboardInterrupt in the main thread while a call computes in its worker), then
    the same run again: every judgment once, with the numbers of a serial run."""
    import _thread
    import signal
    import types

    from judging.helpers import fake_pairs
    from recuse.judging import Runner, Store

    pairs = pd.DataFrame(fake_pairs(12))
    serial = LocalBackend.load(tiny_model_dir, model_id="t", device="cpu", batch_size=4)
    with Store(tmp_path / "serial.db") as store:
        Runner(serial, store, progress=False).pairwise(pairs)
        want = store.judgments().sort_values(["item_id", "slot"]).reset_index(drop=True)
    piped = LocalBackend.load(
        tiny_model_dir, model_id="t", device="cpu", batch_size=4, pipeline=True
    )
    assert piped.concurrency == 2
    passes: list[int] = []
    hidden = piped._hidden

    def interrupted(self: LocalBackend, ids: Any) -> Any:
        passes.append(len(ids))
        if len(passes) == 3:
            _thread.interrupt_main()  # Ctrl-C while this call's pass runs
        return hidden(ids)

    piped._hidden = types.MethodType(interrupted, piped)  # type: ignore[method-assign]
    # a shell's background job (a CI script can be one) starts with SIGINT ignored,
    # and then interrupt_main does nothing: Ctrl-C as in a terminal
    default = signal.signal(signal.SIGINT, signal.default_int_handler)
    with Store(tmp_path / "piped.db") as store:
        try:
            with pytest.raises(KeyboardInterrupt):
                Runner(piped, store, progress=False).pairwise(pairs)
        finally:
            signal.signal(signal.SIGINT, default)
        stored = len(store.judgments())
        assert stored < len(want)
        again = Runner(piped, store, progress=False).pairwise(pairs)
        assert again.cached == stored
        got = store.judgments().sort_values(["item_id", "slot"]).reset_index(drop=True)
    assert not got.duplicated(["item_id", "slot"]).any()
    assert piped.model.config._attn_implementation == "sdpa"
    cols = ["item_id", "slot", "status", "value", "mass", "p_tie"]
    pd.testing.assert_frame_equal(got[cols], want[cols], check_exact=False, atol=1e-6, rtol=0)


def test_a_cancelled_call_stops_before_its_next_wave(tiny_model_dir: Path) -> None:
    """Ctrl-C cancels the runner's calls: a pipelined call's thread then stops before
    its next wave (raising, unseen), instead of computing the rest of its prompts while
    the process waits to exit (two calls of 1,024 prompts: ~40 s for a 7B model)."""
    import time
    import types

    b = LocalBackend.load(tiny_model_dir, model_id="t", device="cpu", pipeline=True)
    prompts = sorted(_prompts() * 8, key=local._chars)
    b.max_batch_tokens = 2 * max(len(b.encode(p)) for p in prompts)
    waves = b._waves([b._size(p) for p in prompts])
    assert len(waves) >= 4
    first = len(b._buckets([len(b.encode(prompts[i])) for i in waves[0]]))  # its passes, at most
    passes: list[int] = []
    hidden = b._hidden
    running: dict[str, Any] = {}

    def counted(self: LocalBackend, ids: Any) -> Any:
        passes.append(int(ids.shape[0]))
        if running and len(passes) == 1:  # cancel the call during its first pass
            running["loop"].call_soon_threadsafe(running["task"].cancel)
            deadline = time.monotonic() + 30
            while not self._local.stop.is_set() and time.monotonic() < deadline:
                time.sleep(0.005)
        return hidden(ids)

    b._hidden = types.MethodType(counted, b)  # type: ignore[method-assign]
    asyncio.run(b.next_token_logprobs(prompts, top_k=3))
    whole = len(passes)

    async def cancelled() -> None:
        running["loop"] = asyncio.get_running_loop()
        running["task"] = asyncio.ensure_future(b.next_token_logprobs(prompts, top_k=3))
        with pytest.raises(asyncio.CancelledError):
            await running["task"]

    passes.clear()
    asyncio.run(cancelled())  # returns once the worker thread has ended
    assert 1 <= len(passes) <= first < whole
    # and the backend is usable again: a new call runs every pass
    passes.clear()
    running.clear()
    asyncio.run(b.next_token_logprobs(prompts, top_k=3))
    assert len(passes) == whole


def test_calls_run_on_the_backends_own_threads_across_runs(tiny_model_dir: Path) -> None:
    """A pipelined backend computes on threads of its own that outlive a run's event
    loop (asyncio's default threads are new for every ``asyncio.run``): a thread's
    first CUDA work sets up its cuBLAS handle, paid once per thread, not per run."""
    import threading
    import types

    b = LocalBackend.load(tiny_model_dir, model_id="t", device="cpu", pipeline=True)
    seen: list[tuple[str, int]] = []
    hidden = b._hidden

    def counted(self: LocalBackend, ids: Any) -> Any:
        t = threading.current_thread()
        seen.append((t.name, t.ident or 0))
        return hidden(ids)

    b._hidden = types.MethodType(counted, b)  # type: ignore[method-assign]
    prompts = _prompts()[:2]
    for _ in range(4):
        asyncio.run(b.next_token_logprobs(prompts, top_k=3))
    # asyncio's default threads would be a new one per run: four
    assert len(set(seen)) <= b.concurrency < 4
    assert all(name.startswith("recuse-device") for name, _ in seen)
