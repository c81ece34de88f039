"""Direct-mode judging at the hardware's limit: our pipeline against a bare forward pass,
on random weights in real model shapes (no download), with the embedded judge's
tokenizer and MT-Bench pairs in both orders.

    python benchmarks/judge_gpu.py                     # 135M, 1.7B and 7B shapes
    python benchmarks/judge_gpu.py --tiny --pairs 16   # a tiny shape, runs on a CPU
    python benchmarks/judge_gpu.py --save-assets build/gpu-check   # tokenizer + data, for
                                                       # a machine without either

Shapes: SmolLM2-135M's config (576 hidden, 30 layers, 9 heads / 3 KV heads, tied
embeddings), a 1.7B Llama shape (SmolLM2-1.7B: 2048 hidden, 24 layers, 8192 MLP) and
a 7B Llama shape (Llama-2-7B: 4096 hidden, 32 layers, 11008 MLP); every vocabulary is
the tokenizer's (49,152 for SmolLM2's), so the 7B shape has 6.6B parameters.

Per shape it prints, in prompt tokens per second (the same total for every line):

* ours: ``Runner.pairwise`` in direct mode over every pair in both orders, exactly as
  ``recuse judge`` runs it (render, batch tokenization, length buckets under the
  device's token budget, forward, log-probs at the verdict position, Eq. 3, SQLite),
  after one untimed run of its own (as the bare pass gets one).
* bare, same budget: the same token sequences in the backend's own length buckets
  (batch size and token budget), padded and copied to the device before the clock
  starts, one ``model.base_model`` call per batch (right-padded, no attention mask,
  as ours) and the LM head at the last position of each row; nothing else. One
  untimed bare pass goes first (allocator, clocks, kernels for these shapes).
* bare, transformers' mask: the same budget, through transformers' own mask
  preparation instead of the backend's mask-free attention (see
  ``recuse.judging.backends.causal``): what its read of a device value mid-pass costs.
* bare, best budget: the same over a sweep of token budgets (``--sweep``), the best.
* on CUDA, from events at each pass's start and read: the device's time in our passes,
  its idle time between them, and the rest of our wall time (before the first pass,
  after the last): where ours loses to the bare pass.
* ratios ours / bare (same budget, best budget) and MFU: achieved FLOP/s over the
  peak, with 2 x N FLOPs per prompt token, N the parameters of the transformer blocks
  (embeddings and the LM head, which runs at one position per prompt, left out;
  attention's own FLOPs not counted). ``--peak-tflops`` is the device's dense bf16
  peak: by default the evaluator card's table by CUDA device name
  (``recuse.judging.device.peak_tflops``: 989 for an H100 SXM or H200); a device
  not in it (or the CPU) prints "peak unknown" and no MFU unless it is given.
* the evaluator card of ours (``recuse.judging.card``), as ``recuse judge`` prints it:
  judgments/s and the model FLOP utilisation from the run the runner recorded.
* with ``--variants "first=64;whole=0,budget=131072"``: ours under other settings of
  the runner's scheduling (first slice, slice cap, holding quantile, whole passes),
  the backend's (token budget, garbage-collector quieting, calls in flight, ``after``:
  whether the next call prepares once this one has queued its last wave, ``raw``:
  token ids from the tokenizer's Rust core, ``split``: a call that starts while
  another runs cut into waves too) and the interpreter's thread switch
  interval, each the best of ``--repeat`` runs, with its passes and device time in
  them; every run prints when its first pass was queued, any full garbage-collector
  pass in it, and each thread's CPU time over it (``_threads.ThreadTimes``). Not
  targets.

Targets (exit 1 when missed): ours / bare at the best budget >= 0.9 for every shape,
and on CUDA >= 85,000 prompt tokens/s for the 1.7B shape.
* the device and dtype the CLI (``recuse judge``) picks with no flag.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import math
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from _targets import Targets
from _threads import ThreadTimes

from recuse.judging import PairwiseProtocol, Runner, Store
from recuse.judging.backends.local import LocalBackend, block_parameters
from recuse.judging.card import cards
from recuse.judging.device import peak_tflops, resolve_device, resolve_dtype
from recuse.judging.protocols import Pair, Prompt

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "mt_bench"

SHAPES: dict[str, dict[str, Any]] = {
    "135m": dict(hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                 num_attention_heads=9, num_key_value_heads=3, tie_word_embeddings=True,
                 rope_theta=100000.0),
    "1.7b": dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=24,
                 num_attention_heads=32, num_key_value_heads=32, tie_word_embeddings=True,
                 rope_theta=130000.0),
    "7b": dict(hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
               num_attention_heads=32, num_key_value_heads=32, tie_word_embeddings=False,
               rope_theta=10000.0),
    "tiny": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True,
                 rope_theta=10000.0),
}  # fmt: skip


def mt_bench_pairs(data: Path, n: int) -> list[Pair]:
    """Turn-1 MT-Bench answers of every two models (15 model pairs x 80 questions)."""
    with open(data / "question.jsonl", encoding="utf-8") as f:
        questions = {q["question_id"]: q["turns"][0] for q in map(json.loads, f)}
    answers: dict[str, dict[int, str]] = {}
    for path in sorted((data / "model_answer").glob("*.jsonl")):
        with open(path, encoding="utf-8") as f:
            answers[path.stem] = {
                r["question_id"]: r["choices"][0]["turns"][0] for r in map(json.loads, f)
            }
    out = []
    for a, b in itertools.combinations(sorted(answers), 2):
        for qid, q in questions.items():
            if qid in answers[a] and qid in answers[b]:
                out.append(Pair(f"{qid}:{a}:{b}", q, answers[a][qid], answers[b][qid]))
    return out[:n] if n else out


def load_tokenizer(folder: Path | None) -> Any:
    from transformers import AutoTokenizer

    if folder is None:
        from recuse.judging.models import default_judge

        folder = default_judge().path
    return AutoTokenizer.from_pretrained(folder, local_files_only=True)


def save_assets(out: Path) -> None:
    """The embedded judge's tokenizer and the MT-Bench files, for a machine without them."""
    tok = load_tokenizer(None)
    tok.save_pretrained(out / "tokenizer")
    if (out / "mt_bench").exists():
        shutil.rmtree(out / "mt_bench")
    shutil.copytree(DATA, out / "mt_bench", ignore=shutil.ignore_patterns("reference_answer"))
    print(f"wrote {out / 'tokenizer'} and {out / 'mt_bench'}")


def build_model(shape: str, tok: Any, device: str, dtype: torch.dtype) -> Any:
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=len(tok),
        max_position_embeddings=8192,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        **SHAPES[shape],
    )
    torch.manual_seed(0)
    with torch.device(device):
        model = LlamaForCausalLM(config).to(dtype)
    return model.eval()


@dataclass
class Bare:
    budget: int
    seconds: float
    batches: int
    padded: int  # tokens with the padding


def bare_buckets(backend: LocalBackend, seqs: list[list[int]], budget: int) -> list[list[int]]:
    """The bare pass's batches: every sequence sorted by length at once, cut under
    ``budget`` padded tokens by the backend's own bucketing (no prompt-count limit)."""
    saved = backend.max_batch_tokens, backend.batch_size
    backend.max_batch_tokens, backend.batch_size = budget, 1 << 20
    try:
        return [[seqs[i] for i in b] for b in backend._buckets([len(s) for s in seqs])]
    finally:
        backend.max_batch_tokens, backend.batch_size = saved


def bare_pass(
    backend: LocalBackend, seqs: list[list[int]], budget: int, *, mask_free: bool = True
) -> Bare:
    """The backend's length buckets at ``budget``, padded and on the device up front;
    timed: one base-model call per batch (the backend's own, :meth:`_hidden`) and the
    LM head at each row's last token. ``mask_free=False``: the base model through
    transformers' own mask preparation (which reads a device value mid-pass)."""
    batches = bare_buckets(backend, seqs, budget)
    ready = []
    for batch in batches:
        ids = backend._pad(batch)
        last = torch.tensor([len(s) - 1 for s in batch])
        ready.append([t.to(backend.device) for t in (torch.from_numpy(ids), last)])
    head = backend.model.get_output_embeddings()
    sync = torch.cuda.synchronize if backend.device.startswith("cuda") else (lambda: None)
    saved_mask_free, backend.mask_free = backend.mask_free, backend.mask_free and mask_free
    with torch.inference_mode():
        ids, last = ready[0]  # warm-up
        backend._hidden(ids)
        sync()
        t0 = time.perf_counter()
        for ids, last in ready:  # no attention mask, as ours (right padding: see _hidden)
            hidden = backend._hidden(ids)
            head(hidden[torch.arange(len(last), device=ids.device), last])
        sync()
    backend.mask_free = saved_mask_free
    padded = sum(len(b) * max(len(x) for x in b) for b in batches)
    return Bare(budget, time.perf_counter() - t0, len(batches), padded)


def _tokenize_seconds(backend: LocalBackend, prompts: list[Prompt]) -> float:
    """Seconds to tokenize ``prompts`` as a run does (none kept from before)."""
    t0 = time.perf_counter()
    backend.encode_many(prompts)
    return time.perf_counter() - t0


def time_ours(
    backend: LocalBackend, pairs: list[Pair], proto: PairwiseProtocol, *, profile: bool
) -> tuple[float, Any, float]:
    """Seconds for ``Runner.pairwise`` over ``pairs`` into a fresh store, its summary,
    and when it started (``time.perf_counter``; with ``profile``, the 25 functions of
    most own time are printed); the evaluator card's line of the run is printed."""
    import cProfile
    import pstats

    prof = cProfile.Profile() if profile else None
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "bench.db") as store:
        if backend.device.startswith("cuda"):
            torch.cuda.synchronize()
        if prof:
            prof.enable()
        times = ThreadTimes()
        times.start()
        t = time.perf_counter()
        summary = Runner(backend, store, progress=False).pairwise(pairs, proto)
        seconds = time.perf_counter() - t
        times.stop()
        if prof:
            prof.disable()
            pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        (card,) = cards(store.runs())
        print(f"  card: {card.line()}")
        print(f"  {times.line()}")
    return seconds, summary, t


@dataclass
class Passes:
    """What the hooks on the backend record of one run of ours: each forward pass's
    (rows, padded length), and on CUDA an event where it starts and one where its
    numbers are read (the device's own time per pass and its idle time between
    passes); when the first pass was queued (``time.perf_counter``)."""

    shapes: list[tuple[int, int]] = field(default_factory=list)
    starts: list[Any] = field(default_factory=list)
    ends: list[Any] = field(default_factory=list)
    first_at: float = math.nan

    def busy(self) -> float:
        """Seconds the device spent in the passes (0 without CUDA events)."""
        if not self.starts:
            return 0.0
        torch.cuda.synchronize()
        return sum(a.elapsed_time(b) for a, b in zip(self.starts, self.ends, strict=True)) / 1e3


async def warm_threads(backend: LocalBackend, prompts: list[Any], proto: PairwiseProtocol) -> None:
    """One call on each of the backend's threads (as many calls as it keeps in flight)."""
    select = proto.reads.selector()
    calls = [backend.next_token_logprobs(prompts, select=select)]
    calls *= max(1, backend.concurrency)
    await asyncio.gather(*calls)


#: what a variant (``--variants``) may set: the runner's scheduling constants, and the
#: backend's token budget, whether the runner quiets the garbage collector for it, its
#: calls in flight, when the next call prepares (``after``) and whether token ids come
#: from the tokenizer's Rust core (``raw``), whether a call that starts while another
#: runs is cut into waves (``split``), and the interpreter's thread switch
#: interval (Python's is 0.005)
VARIANT_KEYS = {"first": "FIRST_COUNT", "cap": "SLICE_CAP", "whole": "WHOLE_PASSES",
                "held": "HELD_QUANTILE", "budget": "max_batch_tokens",
                "quiet": "quiet_collector", "calls": "concurrency",
                "switch": "switch_interval", "after": "prepare_after_launch",
                "raw": "raw_ids", "split": "busy_in_waves"}  # fmt: skip
ON_BACKEND = ("budget", "quiet", "calls", "after", "raw", "split")


class _Interpreter:
    """The interpreter's thread switch interval (seconds) as an attribute, for a
    variant: how long a thread that waits for the GIL lets its holder run on."""

    @property
    def switch_interval(self) -> float:
        return sys.getswitchinterval()

    @switch_interval.setter
    def switch_interval(self, seconds: float) -> None:
        sys.setswitchinterval(seconds)


def parse_variant(spec: str) -> dict[str, float]:
    """``"first=256,whole=0"`` as ``{"first": 256.0, "whole": 0.0}``."""
    out = {}
    for part in filter(None, spec.split(",")):
        key, _, value = part.partition("=")
        if key not in VARIANT_KEYS:
            raise SystemExit(f"--variants: unknown key {key!r}; known: {', '.join(VARIANT_KEYS)}")
        out[key] = float(value)
    return out


def ours_with(
    backend: LocalBackend,
    spec: str,
    repeat: int,
    hooked: Callable[[LocalBackend], tuple[float, Any, Passes]],
) -> tuple[float, str]:
    """Ours under a variant's settings (the best of ``repeat`` runs of ``hooked``: its
    seconds, summary and passes), its passes and device time in them; every setting
    restored after."""
    from recuse.judging import runner

    settings = parse_variant(spec)
    where: dict[str, Any] = {
        k: backend if k in ON_BACKEND else _Interpreter() if k == "switch" else runner
        for k in settings
    }
    saved = {k: getattr(where[k], VARIANT_KEYS[k]) for k in settings}
    for k, v in settings.items():
        setattr(where[k], VARIANT_KEYS[k], type(saved[k])(v))
    best: tuple[float, str] | None = None
    try:
        for _ in range(repeat):
            seconds, _, passes = hooked(backend)
            line = f"{len(passes.shapes)} passes"
            if passes.starts:
                busy = passes.busy()
                line += f", device {busy:.3f} s in passes, {seconds - busy:.3f} s not"
            if best is None or seconds < best[0]:
                best = (seconds, line)
    finally:
        for k, v in saved.items():
            setattr(where[k], VARIANT_KEYS[k], v)
    assert best is not None
    return best


def run_shape(
    shape: str, args: argparse.Namespace, tok: Any, pairs: list[Pair], targets: Targets
) -> None:
    device = resolve_device(args.device)
    dtype_name = resolve_dtype(args.dtype, device)
    dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[dtype_name]
    t0 = time.perf_counter()
    model = build_model(shape, tok, device, dtype)
    n_block = block_parameters(model)
    n_all = sum(p.numel() for p in model.parameters())
    backend = LocalBackend(
        model,
        tok,
        model_id=f"random-{shape}",
        revision="bench",
        max_batch_tokens=args.max_batch_tokens or None,
        batch_size=args.batch_size or None,
        pipeline=False if args.serial else None,
    )
    if args.serial:
        backend.concurrency = 1
    print(
        f"\n== {shape}: {n_all / 1e9:.3f}B parameters ({n_block / 1e9:.3f}B in blocks), "
        f"{backend.hardware}, built in {time.perf_counter() - t0:.1f} s; token budget "
        f"{backend.max_batch_tokens}, {backend.batch_size} prompts per call, "
        f"{backend.concurrency} call(s) in flight, pipelined {backend.pipeline}"
    )

    proto = PairwiseProtocol(mode="direct")
    prompts = [proto.prompt(p, o) for p in pairs for o in ("first", "second")]
    seqs = backend.encode_many(prompts)
    tokens = sum(len(s) for s in seqs)
    print(f"{len(prompts)} prompts, {tokens:,} tokens (mean {tokens / len(prompts):.0f})")

    # warm-up: kernels, allocator, and what is computed once per process, tokenizer and
    # verdict format (every id's text, the verdict tokens' ids: ~1 s for a 49k
    # vocabulary), with the selection the runner asks for
    # through the backend's own threads, as a run calls it (each thread's first CUDA
    # work sets up its cuBLAS handle and workspace: see LocalBackend._call)
    asyncio.run(warm_threads(backend, prompts[:8], proto))
    bare_pass(backend, seqs, backend.max_batch_tokens)  # allocator, clocks, these shapes
    # and one whole untimed run of ours, as the bare pass had: ours' first run grows the
    # allocator for two calls in flight and meets its own shapes (135M on an H200: 1.20 s
    # against 0.84-0.90 s for the next, and the larger shapes were timed once)
    print("  untimed warm-up run of ours:")
    time_ours(backend, pairs, proto, profile=False)
    cuda = backend.device.startswith("cuda")
    record = Passes()  # of the run the hooks are on
    hidden, to_host = backend._hidden, backend._to_host

    def event(into: list[Any]) -> None:
        if cuda:
            into.append(torch.cuda.Event(enable_timing=True))
            into[-1].record()

    def counted(ids: torch.Tensor) -> torch.Tensor:
        if not record.shapes:
            record.first_at = time.perf_counter()
        record.shapes.append((int(ids.shape[0]), int(ids.shape[1])))  # shapes only: no sync
        event(record.starts)
        return hidden(ids)

    def read(*tensors: torch.Tensor) -> Any:
        event(record.ends)
        return to_host(*tensors)

    def hooked(on: LocalBackend, *, profile: bool = False) -> tuple[float, Any, Passes]:
        """One run of ours with the hooks on: its seconds, summary and passes; when its
        first pass was queued and any full garbage-collector pass in it are printed."""
        nonlocal record
        record = Passes()
        on._hidden, on._to_host = counted, read  # type: ignore[method-assign]
        full: list[float] = []  # each full garbage-collector pass: its start, then its end

        def collector(phase: str, info: dict[str, int]) -> None:
            if info["generation"] == 2:
                full.append(time.perf_counter())

        gc.callbacks.append(collector)
        try:
            seconds, summary, started = time_ours(on, pairs, proto, profile=profile)
            spent = sum(full[1::2]) - sum(full[::2])
            print(
                f"    first pass queued {record.first_at - started:.3f} s after the start; "
                f"{len(full) // 2} full garbage-collector pass(es), {spent:.3f} s"
            )
            return seconds, summary, record
        finally:
            gc.callbacks.remove(collector)
            on._hidden, on._to_host = hidden, to_host  # type: ignore[method-assign]

    ours, summary, passes = hooked(backend, profile=args.profile)
    hooked_run = ours  # the run whose passes are shown (``ours`` becomes the best)
    # --repeat: every side timed as often, the best of each kept (the best of several
    # bare budgets, each timed once, against one run of ours favoured the baseline: the
    # fastest of three noisy timings; --tiny on 2 shared cores read 0.77-0.94). Ours,
    # the bare pass at its budget and the tokenizing are timed in turns, one of each a
    # round: timed in blocks (every run of ours, then every bare pass) a change of the
    # machine's load between the blocks went to one side (bench-quick read 0.88, then
    # 0.94, 0.94 and 1.09 alone, 2026-12-01)
    same_runs = [bare_pass(backend, seqs, backend.max_batch_tokens)]
    tokenizing = [_tokenize_seconds(backend, prompts)]
    for _ in range(args.repeat - 1):
        ours = min(ours, time_ours(backend, pairs, proto, profile=False)[0])
        same_runs.append(bare_pass(backend, seqs, backend.max_batch_tokens))
        tokenizing.append(_tokenize_seconds(backend, prompts))
    assert summary.ok + summary.unparsed == len(prompts), summary.line()
    if args.one_wave:  # the call's prompts tokenized and padded before any pass runs
        waves = backend._waves
        backend._waves = lambda sizes: [list(range(len(sizes)))] if len(sizes) else []
        one_wave = time_ours(backend, pairs, proto, profile=False)[0]
        backend._waves = waves

    tried = [(spec, *ours_with(backend, spec, args.repeat, hooked)) for spec in args.variants]
    if args.also_concurrency:  # more calls in flight (the device still runs one)
        one_call = backend.concurrency
        backend.concurrency = args.also_concurrency
        in_flight = time_ours(backend, pairs, proto, profile=False)[0]
        backend.concurrency = one_call

    def best_bare(on: LocalBackend, budget: int, *, mask_free: bool = True) -> Bare:
        runs = [bare_pass(on, seqs, budget, mask_free=mask_free) for _ in range(args.repeat)]
        return min(runs, key=lambda b: b.seconds)

    same = min(same_runs, key=lambda b: b.seconds)  # timed in turns with ours, above
    masked = best_bare(backend, backend.max_batch_tokens, mask_free=False)
    sweep = [best_bare(backend, b) for b in args.sweep]
    best = min([same, *sweep], key=lambda b: b.seconds)

    def rate(seconds: float) -> float:
        return tokens / seconds

    peak = args.peak_tflops or (peak_tflops(backend.device_name) if backend.device_name else None)

    def mfu(seconds: float) -> str:
        if peak is None:
            return "MFU: peak unknown"
        return f"MFU {2 * n_block * rate(seconds) / (peak * 1e12):.1%}"

    print(
        f"ours                     : {rate(ours):10,.0f} tok/s ({ours:.2f} s, "
        f"{len(prompts) / ours:.1f} judgments/s) {mfu(ours)}"
    )
    print(f"  {summary.line()}")
    padded = sum(r * n for r, n in passes.shapes)
    print(
        f"  {len(passes.shapes)} forward passes, {padded:,} padded tokens "
        f"({padded / tokens:.3f} of real)"
    )
    if cuda and passes.starts:
        busy = passes.busy()
        gaps = [b.elapsed_time(a) / 1e3
                for a, b in zip(passes.starts[1:], passes.ends, strict=False)]  # fmt: skip
        print(
            f"  device, in the first run ({hooked_run:.2f} s): {busy:.2f} s in passes, "
            f"{sum(gaps):.2f} s idle between them (longest {max(gaps, default=0.0):.3f} s), "
            f"{hooked_run - busy - sum(gaps):.2f} s before the first and after the last"
        )
    if args.also_concurrency:
        print(
            f"ours, {args.also_concurrency} calls in flight : {rate(in_flight):10,.0f} tok/s "
            f"({in_flight:.2f} s)"
        )
    if args.one_wave:
        print(f"ours, one wave per call   : {rate(one_wave):10,.0f} tok/s ({one_wave:.2f} s)")
    for spec, seconds, line in tried:
        print(f"ours, {spec}: {rate(seconds):10,.0f} tok/s ({seconds:.3f} s) {line}")
    print(
        f"bare, same budget {same.budget:6d}: {rate(same.seconds):10,.0f} tok/s "
        f"({same.seconds:.2f} s, {same.batches} batches, {same.padded / tokens:.3f} padded) "
        f"{mfu(same.seconds)}"
    )
    print(
        f"bare, transformers' mask : {rate(masked.seconds):10,.0f} tok/s ({masked.seconds:.2f} s; "
        f"the same budget through the mask preparation: ours is mask-free {backend.mask_free})"
    )
    for b in sweep:
        print(
            f"bare, budget {b.budget:11d}: {rate(b.seconds):10,.0f} tok/s ({b.seconds:.2f} s, "
            f"{b.batches} batches)"
        )
    print(
        f"bare, best budget {best.budget:6d}: {rate(best.seconds):10,.0f} tok/s {mfu(best.seconds)}"
    )
    print(
        f"ratio ours / bare same budget: {same.seconds / ours:.2f}; ours / bare best "
        f"budget: {best.seconds / ours:.2f}"
    )
    if backend.concurrency > 1:  # calls overlap: tokenizing hides behind the passes
        targets.at_least(
            f"{shape}: ours / bare at the best budget", best.seconds / ours, 0.90, scaled=True
        )
    else:
        # one call at a time (a CPU): nothing runs beside the tokenizing, which the bare
        # pass leaves out (its ids are ready), so ours is held to the bare pass plus it;
        # at the backend's own budget: the CPU's (CPU_TOKEN_BUDGET) is set for real
        # models (larger batches ran slower per token for SmolLM2), and a tiny random
        # model runs faster at larger ones (printed above, not a target)
        tokenize = min(tokenizing)  # timed in turns with ours, above
        serial = same.seconds + tokenize
        print(
            f"tokenizing every prompt: {tokenize:.2f} s; one call at a time, nothing runs "
            f"beside it: ours / (bare at the same budget + tokenizing) {serial / ours:.2f}"
        )
        targets.at_least(f"{shape}: ours / (bare at the same budget + tokenizing)",
                         serial / ours, 0.90, scaled=True)  # fmt: skip
    if shape == "1.7b" and cuda:
        targets.at_least(f"{shape}: ours, prompt tokens/s", rate(ours), 85_000, scaled=True)
    del backend, model
    if device.startswith("cuda"):
        torch.cuda.empty_cache()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", default="135m,1.7b,7b", help="comma-separated: 135m,1.7b,7b")
    ap.add_argument("--tiny", action="store_true", help="one tiny shape (runs on a CPU)")
    ap.add_argument(
        "--repeat", type=int, default=1, help="time ours and each bare budget N times, best of each"
    )
    ap.add_argument("--pairs", type=int, default=400, help="MT-Bench pairs (0 = all 1,200)")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--batch-size", type=int, default=0, help="prompts per call (0 = default)")
    ap.add_argument("--serial", action="store_true", help="no pipeline, one call at a time")
    ap.add_argument("--dtype", default="auto")
    ap.add_argument("--profile", action="store_true", help="profile our run (own time)")
    ap.add_argument(
        "--also-concurrency", type=int, default=0, help="also time ours with N calls in flight"
    )
    ap.add_argument("--one-wave", action="store_true", help="also time ours with one wave per call")
    ap.add_argument(
        "--variants",
        default="",
        help="also time ours under these settings, ';' between variants, e.g. "
        "'first=256;whole=0,budget=65536' (keys: " + ", ".join(VARIANT_KEYS) + ")",
    )
    ap.add_argument("--max-batch-tokens", type=int, default=0, help="0 = the device's budget")
    ap.add_argument(
        "--sweep", default="16384,32768,65536,131072", help="bare-pass token budgets to try"
    )
    ap.add_argument(
        "--peak-tflops",
        type=float,
        default=0.0,
        help="dense bf16 peak of the device, TFLOP/s (0 = from the device's name; "
        "989 for an H100 SXM or H200)",
    )
    ap.add_argument(
        "--tokenizer",
        type=Path,
        default=None,
        help="tokenizer folder (default: the embedded judge's)",
    )
    ap.add_argument("--data", type=Path, default=DATA, help="MT-Bench folder")
    ap.add_argument(
        "--save-assets",
        type=Path,
        default=None,
        help="write the tokenizer and MT-Bench files to this folder and stop",
    )
    args = ap.parse_args()
    if args.save_assets:
        save_assets(args.save_assets)
        return
    args.sweep = [int(x) for x in args.sweep.split(",") if x]
    args.variants = [v.strip() for v in args.variants.split(";") if v.strip()]
    for v in args.variants:
        parse_variant(v)
    shapes = ["tiny"] if args.tiny else [s.strip() for s in args.shapes.split(",")]
    if args.tiny and args.sweep == [16384, 32768, 65536, 131072]:
        args.sweep = [1024, 4096]
    where = resolve_device("auto")
    print(
        f"recuse judge with no flag runs on {where} in {resolve_dtype('auto', where)}; "
        f"torch {torch.__version__}"
        + (f", {torch.cuda.get_device_name(0)}" if where.startswith("cuda") else "")
    )
    name = torch.cuda.get_device_name(0) if where.startswith("cuda") else ""
    peak = args.peak_tflops or (peak_tflops(name) if name else None)
    print(
        "MFU: 2 x block parameters FLOPs per prompt token over a peak of "
        + (f"{peak:g} TFLOP/s" if peak else "(peak unknown: give --peak-tflops)")
    )
    tok = load_tokenizer(args.tokenizer)
    pairs = mt_bench_pairs(args.data, args.pairs)
    targets = Targets()
    for shape in shapes:
        run_shape(shape, args, tok, pairs, targets)
    targets.finish()


if __name__ == "__main__":
    main()
