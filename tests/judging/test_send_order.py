"""The order tasks reach the backend (by tokens, a pair's two orders together), a
local model tokenizing each prompt once, and the evaluator card's model FLOP
utilisation."""

from __future__ import annotations

import itertools
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from judging.helpers import FakeBackend
from recuse.judging import runner as runner_module
from recuse.judging.backends.base import Failure, TokenFilter
from recuse.judging.backends.local import LocalBackend, block_parameters
from recuse.judging.card import cards
from recuse.judging.device import peak_tflops
from recuse.judging.protocols import DIMENSIONS, Message, Pair, PairwiseProtocol, Prompt
from recuse.judging.runner import Runner, count_slices, send_order
from recuse.judging.store import Store
from recuse.judging.tasks import Task


@pytest.fixture
def first_slice(monkeypatch: pytest.MonkeyPatch) -> int:
    """A first slice of 16 tasks, so that runs of a few dozen prompts are counted in
    several slices (the default, sized for a GPU's pass, would count them in one)."""
    monkeypatch.setattr(runner_module, "FIRST_COUNT", 16)
    return 16


def _task(item: str, slot: str, chars: int = 1) -> Task:
    prompt = Prompt((Message("user", "x" * chars),))
    return Task(f"{item}/{slot}", "pairwise", item, slot, prompt)


def test_tasks_go_by_size_with_a_pairs_two_orders_side_by_side() -> None:
    tasks = [_task("p", "first"), _task("q", "first"), _task("p", "second"),
             _task("r", "first"), _task("q", "second"), _task("r", "second")]  # fmt: skip
    sizes = [50, 10, 51, 30, 12, 29]
    got = [t.key for t in send_order(tasks, sizes)]
    # groups by their longest task (q 12, r 30, p 51), the smaller of a group first
    assert got == ["q/first", "q/second", "r/second", "r/first", "p/first", "p/second"]
    # perplexity tasks are their own groups: plain sort by size, stable on ties
    ppl = [Task(k, "perplexity", k, "", Prompt(())) for k in "abcd"]
    assert [t.key for t in send_order(ppl, [3, 1, 3, 2])] == ["b", "d", "a", "c"]


def test_grouping_pads_no_more_than_sorting_by_tokens_alone() -> None:
    """Cut into calls and length buckets as the local backend does, the order with a
    pair's orders together pads exactly as many tokens as a plain sort by tokens, when
    a pair's two orders differ by a token (same texts, swapped)."""
    import random

    rng = random.Random(7)
    tasks, sizes = [], []
    for k in range(200):
        n = rng.randint(50, 900)
        for slot, extra in (("first", 0), ("second", rng.choice((-1, 0, 1)))):
            tasks.append(_task(f"i{k}", slot))
            sizes.append(n + extra)
    size_of = {t.key: n for t, n in zip(tasks, sizes, strict=True)}

    def padded(order: Sequence[Task], call: int = 64, budget: int = 8192) -> int:
        """Padded tokens of ``order`` cut into calls, each into sorted length buckets."""
        total = 0
        for c in range(0, len(order), call):
            bucket: list[int] = []
            for n in sorted(size_of[t.key] for t in order[c : c + call]):
                if bucket and n * (len(bucket) + 1) > budget:
                    total += len(bucket) * bucket[-1]
                    bucket = []
                bucket.append(n)
            total += len(bucket) * bucket[-1]
        return total

    plain = sorted(tasks, key=lambda t: size_of[t.key])
    grouped = send_order(tasks, sizes)
    assert padded(grouped) <= padded(plain) * 1.002
    # by characters (the old order) pads more: characters per token vary by text
    per_token = {f"i{k}": rng.uniform(2.5, 5.5) for k in range(200)}
    by_chars = sorted(tasks, key=lambda t: size_of[t.key] * per_token[t.item_id])
    assert padded(by_chars) > padded(grouped) * 1.03


class _CountingBackend(FakeBackend):
    """Counts tokens as the reverse of characters: the runner must follow the counts."""

    def __init__(self) -> None:
        super().__init__(batch_size=2)
        self.concurrency = 1
        self.sent: list[list[str]] = []
        self.counted = 0

    def token_counts(
        self, prompts: Sequence[Prompt], continuations: Sequence[str] | None = None
    ) -> list[int]:
        self.counted += 1
        return [10_000 - len(p.canonical()) for p in prompts]

    async def next_token_logprobs(
        self, prompts: Sequence[Prompt], *, top_k: int = 20, select: TokenFilter | None = None
    ) -> list[dict[str, float] | Failure]:
        self.sent.append([p.messages[-1].content for p in prompts])
        return await super().next_token_logprobs(prompts, top_k=top_k, select=select)


def test_the_runner_sends_by_the_backends_token_counts(tmp_path: Path) -> None:
    pairs = [Pair(f"i{k}", "Q" * (10 * k + 1), "a" * k, "b") for k in range(1, 5)]
    fake = _CountingBackend()
    with Store(tmp_path / "s.db") as store:
        Runner(fake, store, progress=False).pairwise(pairs, PairwiseProtocol(mode="direct"))
    assert fake.counted == 1
    # counts reverse the characters: the longest pair (i4) goes first, its orders together
    firsts = fake.sent
    assert len(firsts) == 4 and all(len(b) == 2 for b in firsts)
    qs = [b[0].count("Q") for b in firsts]
    assert qs == sorted(qs, reverse=True) and len(set(qs)) == 4
    assert all(b[0].count("Q") == b[1].count("Q") for b in firsts)  # one pair per call


def _count_tokenizing(backend: LocalBackend) -> list[int]:
    """The texts of each of ``backend``'s tokenizer calls from now on, as they happen."""
    calls: list[int] = []
    tokenize = backend._tokenize

    def counted(texts: list[str], template: bool) -> list[list[int]]:
        calls.append(len(texts))
        return tokenize(texts, template)

    backend._tokenize = counted  # type: ignore[method-assign]
    return calls


def test_a_local_model_tokenizes_each_prompt_once(tiny_model_dir: Path, tmp_path: Path) -> None:
    backend = LocalBackend.load(tiny_model_dir, model_id="tiny", batch_size=4)
    calls = _count_tokenizing(backend)
    pairs = [Pair(f"i{k}", f"Question {k}?" * (k + 1), "Four." * k, "Five.") for k in range(6)]
    proto = PairwiseProtocol(mode="direct")
    prompts = [proto.prompt(p, o) for p in pairs for o in ("first", "second")]
    reference = [backend.encode(p) for p in prompts]
    calls.clear()
    with Store(tmp_path / "s.db") as store:
        summary = Runner(backend, store, progress=False).pairwise(pairs, proto)
    assert summary.ok == 12
    assert sum(calls) == 12  # every prompt tokenized once, to count and to run
    assert backend._ids == {}  # the kept ids were all taken by the calls
    assert backend.token_counts(prompts) == [len(r) for r in reference]
    assert backend.encode_many(prompts) == reference
    # the same verdicts as without counting first
    again = backend.next_token_logprobs_sync(prompts[:3], select=proto.reads.selector())
    backend.token_counts(prompts[:3])
    counted_first = backend.next_token_logprobs_sync(prompts[:3], select=proto.reads.selector())
    assert again == counted_first


def test_counting_beside_calls_tokenizes_each_prompt_once(
    tiny_model_dir: Path, tmp_path: Path, first_slice: int
) -> None:
    """A pipelined local backend (two calls in flight) counts in slices while its calls
    run: every prompt and continuation is still tokenized once, the kept ids are all
    taken, and the numbers are those of one call at a time."""
    piped = LocalBackend.load(tiny_model_dir, model_id="tiny", batch_size=8, pipeline=True)
    serial = LocalBackend(piped.model, piped.tokenizer, model_id="tiny", batch_size=8)
    assert piped.concurrency == 2 and serial.concurrency == 1
    texts: list[int] = []
    counts: list[int] = []
    tokenize, count = piped._tokenize, piped.token_counts

    def tokenized(batch: list[str], template: bool) -> list[list[int]]:
        texts.append(len(batch))
        return tokenize(batch, template)

    def counted(prompts: Sequence[Prompt], continuations: Sequence[str] | None = None) -> list[int]:
        counts.append(len(prompts))
        return count(prompts, continuations)

    piped._tokenize = tokenized  # type: ignore[method-assign]
    piped.token_counts = counted  # type: ignore[method-assign]
    pairs = [Pair(f"i{k}", f"Question {k}?" * (1 + k % 7), "Four." * (k % 5), "Five.")
             for k in range(50)]  # fmt: skip
    proto = PairwiseProtocol(mode="direct")
    tables = []
    for name, backend in (("piped", piped), ("serial", serial)):
        with Store(tmp_path / f"{name}.db") as store:
            assert Runner(backend, store, progress=False).pairwise(pairs, proto).ok == 100
            tables.append(store.export_pairs().sort_values("item_id"))
    assert counts[0] == first_slice and len(counts) >= 2 and sum(counts) == 100
    assert sum(texts) == 100 and piped._ids == {}
    cols = ["p_a_first", "p_a_second"]
    np.testing.assert_allclose(tables[0][cols].to_numpy(float), tables[1][cols].to_numpy(float),
                               atol=1e-6)  # fmt: skip
    # perplexities: prompts and continuations counted in slices, each tokenized once
    texts.clear()
    counts.clear()
    prompts = [Prompt((Message("user", f"Say something {k}." * (1 + k % 4)),)) for k in range(90)]
    replies = [f"Four and five {k}. " * (1 + k % 6) for k in range(90)]
    got = {}
    for name, backend in (("piped", piped), ("serial", serial)):
        with Store(tmp_path / f"p{name}.db") as store:
            keys, rows, summary = Runner(backend, store, progress=False).perplexity(
                prompts, replies
            )
            assert summary.computed == 90
            got[name] = [(rows[k].n_tokens, rows[k].sum_logprob) for k in keys]
    assert counts[0] == first_slice and sum(counts) == 90
    assert sum(texts) == 2 * 90 and piped._ids == {} and piped._tail_ids == {}
    np.testing.assert_allclose(got["piped"], got["serial"], atol=1e-4)


def test_a_count_reads_the_ids_it_found_though_a_call_takes_them(tiny_model_dir: Path) -> None:
    """The runner counts a slice while calls run: a prompt counted before may be taken
    by its call between the count finding it and reading it (before, a KeyError)."""
    backend = LocalBackend.load(tiny_model_dir, model_id="tiny")
    prompts = [Prompt((Message("user", "x " * k),)) for k in range(1, 5)]
    want = [len(backend.encode(p)) for p in prompts]
    backend.token_counts(prompts[:2])

    class Taken(dict[Prompt, list[int]]):
        """Kept ids a call takes the moment a count has looked them up."""

        def get(self, key: Prompt, default: object = None) -> Any:
            found = super().get(key, default)
            self.pop(key, None)
            return found

        def __contains__(self, key: object) -> bool:
            found = super().__contains__(key)
            self.pop(key, None)  # type: ignore[call-overload]
            return found

    backend._ids = Taken(backend._ids)
    assert backend.token_counts(prompts) == want


def test_a_prompt_twice_in_a_call_takes_its_counted_ids_once(tiny_model_dir: Path) -> None:
    """A pair whose two answers are one text has one prompt in both orders: counted
    once, and its call takes the kept ids for both (before, the second was tokenized
    again, waiting for the tokenizer while the runner counted the next slice)."""
    backend = LocalBackend.load(tiny_model_dir, model_id="tiny")
    same = Prompt((Message("user", "the same answer twice"),))
    other = Prompt((Message("user", "another prompt"),))
    want = [backend.encode(p) for p in (same, other, same)]
    calls = _count_tokenizing(backend)
    assert backend.token_counts([same, other, same]) == [len(w) for w in want]
    assert backend.encode_many([same, other, same]) == want
    assert calls == [2, 0] and backend._ids == {}


def test_block_parameters_leave_out_embeddings_and_head(tiny_model_dir: Path) -> None:
    backend = LocalBackend.load(tiny_model_dir, model_id="tiny")
    model = backend.model
    by_hand = sum(p.numel() for p in model.model.layers.parameters()) + sum(
        p.numel() for p in model.model.norm.parameters()
    )
    assert block_parameters(model) == by_hand == backend.block_parameters
    assert backend.device_name == ""  # on the CPU: no accelerator, no MFU


@pytest.mark.parametrize(
    ("name", "peak"),
    [
        ("NVIDIA H200", 989.0),
        ("NVIDIA H100 80GB HBM3", 989.0),
        ("NVIDIA H100 PCIe", 756.0),
        ("NVIDIA H100 NVL", 835.0),
        ("NVIDIA A100-SXM4-80GB", 312.0),
        ("NVIDIA L40S", 362.0),
        ("NVIDIA L4", 121.0),
        ("NVIDIA L40", None),
        ("NVIDIA A10G", None),
        ("Tesla T4", None),
    ],
)
def test_peak_table_by_device_name(name: str, peak: float | None) -> None:
    assert peak_tflops(name) == peak


def _runs(**cols: list[object]) -> pd.DataFrame:
    base: dict[str, list[object]] = {
        "judge": ["j"], "judgments": [100], "seconds": [2.0], "tokens_in": [40_000],
        "tokens_out": [100], "hardware": ["cuda:0 bfloat16"], "device": ["NVIDIA H200"],
        "block_params": [1_600_000_000],
    }  # fmt: skip
    base.update(cols)
    return pd.DataFrame(base)


def test_card_model_flop_utilisation() -> None:
    (c,) = cards(_runs())
    # 2 x 1.6e9 FLOPs x 40,000 tokens in 2 s = 6.4e13 FLOP/s over 989e12
    assert c.mfu == pytest.approx(2 * 1.6e9 * 40_000 / 2.0 / 989e12)
    assert c.peak_tflops == 989.0 and c.accelerator == "NVIDIA H200"
    assert "model FLOP utilisation 6.5% of NVIDIA H200's 989 TFLOP/s" in c.line()
    assert c.record()["model FLOP utilisation"] == c.mfu
    # two runs on two GPUs: FLOPs over the time-weighted capacity
    two = _runs(
        judge=["j", "j"], judgments=[1, 1], seconds=[1.0, 3.0], tokens_in=[1000, 3000],
        tokens_out=[1, 1], hardware=["cuda:0 bfloat16"] * 2,
        device=["NVIDIA H200", "NVIDIA A100-SXM4-80GB"], block_params=[10**9, 10**9],
    )  # fmt: skip
    (c2,) = cards(two)
    assert c2.mfu == pytest.approx(2e9 * 4000 / (1.0 * 989e12 + 3.0 * 312e12))
    assert c2.accelerator == "NVIDIA H200 / NVIDIA A100-SXM4-80GB"


def test_card_says_peak_unknown_and_nothing_off_a_gpu() -> None:
    (c,) = cards(_runs(device=["Tesla T4"]))
    assert c.mfu is None and c.peak_tflops is None
    assert "model FLOP utilisation: peak unknown for Tesla T4" in c.line()
    assert "%" not in c.utilisation()
    (cpu,) = cards(_runs(device=[None], hardware=["cpu float32"]))
    assert cpu.accelerator is None and "FLOP" not in cpu.line()
    assert "model FLOP utilisation" not in cpu.record()
    (old,) = cards(_runs().drop(columns=["device", "block_params"]))  # an older store
    assert old.accelerator is None


def test_store_records_the_accelerator_and_migrates_old_stores(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with Store(path) as store:
        store.put_run("j", judgments=3, seconds=1.0, tokens=(30, 3), hardware="cpu float32")
    con = sqlite3.connect(path)  # an older store: runs without the two columns
    con.executescript(
        "CREATE TABLE r2 AS SELECT judge, judgments, seconds, tokens_in, tokens_out, "
        "created_at, hardware FROM runs; DROP TABLE runs; ALTER TABLE r2 RENAME TO runs;"
    )
    con.close()
    with Store(path) as store:
        store.put_run(
            "j", judgments=2, seconds=1.0, tokens=(20, 2), hardware="cuda:0 bfloat16",
            device="NVIDIA H200", block_params=123,
        )  # fmt: skip
        runs = store.runs()
    assert list(runs["device"].fillna("")) == ["", "NVIDIA H200"]
    assert list(runs["block_params"].fillna(-1)) == [-1, 123]


class _SlicedBackend(FakeBackend):
    """Two calls in flight, planted token counts (characters over a per-item ratio, so
    the order by tokens is not the order by characters); records every count and call.
    A count after the first waits until a call has been sent: a runner that counted
    every prompt before its first call fails here."""

    def __init__(self, tokens: dict[str, int]) -> None:
        super().__init__(batch_size=64)
        self.concurrency = 2
        self.tokens = tokens
        self.counted: list[int] = []  # prompts per token_counts call, in order
        self.sent: list[list[str]] = []  # each call's prompts (canonical), in order
        self.first_call = threading.Event()

    def token_counts(
        self, prompts: Sequence[Prompt], continuations: Sequence[str] | None = None
    ) -> list[int]:
        if self.counted and not self.first_call.wait(10):
            raise AssertionError("a later slice was counted before any call was sent")
        self.counted.append(len(prompts))
        return [self.tokens[p.canonical()] for p in prompts]

    async def next_token_logprobs(
        self, prompts: Sequence[Prompt], *, top_k: int = 20, select: TokenFilter | None = None
    ) -> list[dict[str, float] | Failure]:
        self.sent.append([p.canonical() for p in prompts])
        self.first_call.set()
        return await super().next_token_logprobs(prompts, top_k=top_k, select=select)


def _planted(n: int, seed: int) -> tuple[list[Pair], PairwiseProtocol, dict[str, int]]:
    """``n`` pairs of varied lengths; a prompt's tokens are its characters over its
    pair's ratio (2.5 to 5.5 characters per token, as texts vary), the two orders of
    a pair one token apart at most."""
    import random

    rng = random.Random(seed)
    proto = PairwiseProtocol(mode="direct")
    pairs, tokens = [], {}
    for k in range(n):
        a, b = rng.randint(20, 3000), rng.randint(20, 3000)
        pair = Pair(f"i{k}", f"Question {k}?", "a" * a, "b" * b)
        ratio = rng.uniform(2.5, 5.5)
        for o in ("first", "second"):
            text = proto.prompt(pair, o).canonical()
            tokens[text] = int(len(text) / ratio) + (o == "second") * rng.choice((-1, 0, 1))
        pairs.append(pair)
    return pairs, proto, tokens


def _padded(calls: Sequence[Sequence[int]], budget: int = 32768) -> int:
    """Padded tokens of calls cut into sorted length buckets under ``budget``, as the
    local backend cuts each call."""
    total = 0
    for call in calls:
        bucket: list[int] = []
        for n in sorted(call):
            if bucket and n * (len(bucket) + 1) > budget:
                total += len(bucket) * bucket[-1]
                bucket = []
            bucket.append(n)
        if bucket:
            total += len(bucket) * bucket[-1]
    return total


def test_overlapping_calls_start_before_every_prompt_is_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first_slice = 64  # four slices at least of these 800 prompts
    monkeypatch.setattr(runner_module, "FIRST_COUNT", first_slice)
    pairs, proto, tokens = _planted(400, seed=3)
    fake = _SlicedBackend(tokens)
    with Store(tmp_path / "s.db") as store:
        summary = Runner(fake, store, progress=False).pairwise(pairs, proto)
    assert summary.ok == 800
    # counted in slices, each prompt once: the first slice of FIRST_COUNT, and the
    # first call sent before the second slice's count (the backend waits for it)
    assert fake.counted[0] == first_slice and len(fake.counted) >= 4
    assert sum(fake.counted) == 800
    order = [text for call in fake.sent for text in call]
    assert sorted(order) == sorted(tokens)  # every prompt sent once
    # a pair's two orders side by side: prompts 2j and 2j+1 belong to one pair
    item = {proto.prompt(p, o).canonical(): p.item_id for p in pairs for o in ("first", "second")}
    assert all(item[order[j]] == item[order[j + 1]] for j in range(0, 800, 2))
    # by tokens, except where a slice's tasks end: an item's longest prompt falls
    # below the one before it at most once per slice (by characters: far more often)
    longest = [max(tokens[order[j]], tokens[order[j + 1]]) for j in range(0, 800, 2)]
    drops = sum(b < a for a, b in itertools.pairwise(longest))
    assert drops < len(fake.counted)
    by_chars = sorted(range(400), key=lambda j: len(order[2 * j]))
    chars_drops = sum(longest[b] < longest[a] for a, b in itertools.pairwise(by_chars))
    assert chars_drops > 10 * len(fake.counted)
    # what the order by tokens won is kept: calls as sent pad as the calls cut from one
    # sort of every prompt by tokens, and less than calls cut from the order by
    # characters (and than sending each slice's counted tasks at once, below)
    sent = [[tokens[t] for t in call] for call in fake.sent]
    ideal = sorted(tokens.values())
    by_tokens = [ideal[i : i + 64] for i in range(0, 800, 64)]
    chars = sorted(tokens, key=len)
    char_calls = [[tokens[t] for t in chars[i : i + 64]] for i in range(0, 800, 64)]
    assert _padded(sent) <= 1.01 * _padded(by_tokens)
    assert _padded(char_calls) > 1.05 * _padded(by_tokens)


def test_counted_tasks_wait_for_the_next_slice_when_shorter_ones_may_come(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sending each slice's counted tasks at once (no task held back: quantile 0 of
    characters per token makes every task ready) pads more at the slices' edges."""
    pairs, proto, tokens = _planted(400, seed=3)
    padded = {}
    for q in (0.0, runner_module.HELD_QUANTILE):
        monkeypatch.setattr(runner_module, "HELD_QUANTILE", q)
        fake = _SlicedBackend(tokens)
        with Store(tmp_path / f"s{q}.db") as store:
            Runner(fake, store, progress=False).pairwise(pairs, proto)
        padded[q] = _padded([[tokens[t] for t in call] for call in fake.sent])
    assert padded[0.0] > 1.02 * padded[runner_module.HELD_QUANTILE]


class _PassBackend(_SlicedBackend):
    """:class:`_SlicedBackend` whose calls are cut into passes as the local backend
    cuts them (:meth:`LocalBackend._buckets` under a 32,768-token budget)."""

    def __init__(self, tokens: dict[str, int]) -> None:
        super().__init__(tokens)
        self.batch_size = 1024
        self.max_batch_tokens = 32768
        self.pipeline = True

    def buckets(self, counts: Sequence[int]) -> list[list[int]]:
        return LocalBackend._buckets(self, counts)  # type: ignore[arg-type]

    def _buckets(self, counts: Sequence[int]) -> list[list[int]]:
        return self.buckets(counts)

    def last_pass(self, counts: Sequence[int]) -> list[int]:
        return LocalBackend.last_pass(self, counts)  # type: ignore[arg-type]

    def _full(self, rows: int, longest: int) -> bool:
        return LocalBackend._full(self, rows, longest)  # type: ignore[arg-type]


def test_calls_after_the_first_run_whole_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the first slice (sent whole, so the device starts) a counted task that
    would join a call's part-filled last pass waits for the next slice: the run makes
    the passes of one sort of every prompt (the bare pass) and one, each call's
    passes full but the first call's and the last's; holding nothing makes more."""
    monkeypatch.setattr(runner_module, "FIRST_COUNT", 64)  # a part-filled first pass
    pairs, proto, tokens = _planted(400, seed=3)
    ideal = len(_PassBackend(tokens).buckets(list(tokens.values())))
    passes = {}
    for whole in (False, True):
        monkeypatch.setattr(runner_module, "WHOLE_PASSES", whole)
        fake = _PassBackend(tokens)
        with Store(tmp_path / f"s{whole}.db") as store:
            assert Runner(fake, store, progress=False).pairwise(pairs, proto).ok == 800
        calls = [[tokens[t] for t in call] for call in fake.sent]
        assert sorted(n for call in calls for n in call) == sorted(tokens.values())
        cut = [fake.buckets(call) for call in calls]
        passes[whole] = sum(map(len, cut))
        if whole:  # every call between the first and the last ends on a full pass
            for call, buckets in zip(calls[1:-1], cut[1:-1], strict=True):
                last = [call[i] for i in buckets[-1]]
                assert max(last) * (len(last) + 1) > 0.9 * fake.max_batch_tokens
    # one more than the bare pass's (the first call's part-filled pass)
    assert passes[True] <= ideal + 1 < passes[False]


def test_the_first_slice_keeps_one_pass_and_holds_a_part_filled_last() -> None:
    """The first call starts the device: its slice's part-filled last pass waits for
    the next slice where the slice makes more than one pass, and goes where it makes
    only that one; a later slice's lone part-filled pass waits."""
    fake = _PassBackend({})
    fake.max_batch_tokens = 100
    tasks = [_task(f"i{k}", o) for k in range(4) for o in ("first", "second")]
    # 8 prompts of 20 tokens: passes of 5 and 3; the pass of 3 splits item i2's tasks
    ready = [(t, 20) for t in tasks]
    sent, held = runner_module._whole_passes(fake, ready, [], first=True)
    assert [t.item_id for t, _ in sent] == ["i0", "i0", "i1", "i1"]  # i2 goes whole
    assert [t.item_id for t, _ in held] == ["i2", "i2", "i3", "i3"]
    alone = ready[:4]  # one part-filled pass
    assert runner_module._whole_passes(fake, alone, [], first=True) == (alone, [])
    assert runner_module._whole_passes(fake, alone, [], first=False) == ([], alone)


def test_a_part_larger_than_a_call_is_cut_into_calls_of_whole_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A part is cut into calls of ``batch_size`` tasks (1,024 on a GPU by default,
    fewer with ``--batch-size``): cut every ``batch_size`` tasks, each such call ended on a
    part-filled pass (400 planted pairs in calls of 128: 31 passes against 26 for one
    pass over all, calls of 2 and 12 prompts). The items of a call's part-filled last
    pass now open the next call, and a slice holds the part-filled last pass of its
    last call (not of one call of all its tasks, whose passes are cut otherwise): 27
    passes, every call but the first and the last ending on a pass at least 0.9 full
    (28 and one call at 0.03 holding as one call)."""
    monkeypatch.setattr(runner_module, "FIRST_COUNT", 64)
    pairs, proto, tokens = _planted(400, seed=3)
    fake = _PassBackend(tokens)
    fake.batch_size = 128  # a call; a pass holds 10-60 of these prompts by tokens
    ideal = len(fake.buckets(list(tokens.values())))
    with Store(tmp_path / "s.db") as store:
        assert Runner(fake, store, progress=False).pairwise(pairs, proto).ok == 800
    calls = [[tokens[t] for t in call] for call in fake.sent]
    assert sorted(n for call in calls for n in call) == sorted(tokens.values())
    assert max(map(len, calls)) <= 128
    cut = [fake.buckets(call) for call in calls]
    passes = sum(map(len, cut))
    assert ideal == 26 and passes <= ideal + 1  # 31 cut every 128 tasks
    fill = [max(c[i] for i in b[-1]) * len(b[-1]) / fake.max_batch_tokens
            for c, b in zip(calls, cut, strict=True)]  # fmt: skip
    assert min(fill[1:-1]) >= 0.9  # 6 of 8 under it cut every 128 tasks


def test_calls_are_cut_after_a_call_s_last_whole_pass() -> None:
    """By hand: 20-token prompts under a 100-token budget make passes of 5. Calls of 8
    end on the part-filled pass of 3, which opens the next call; a call that is one
    pass (the prompts per pass capped at the call's size) is never emptied; without
    counts (a server) the part is cut every ``size`` tasks."""
    fake = _PassBackend({})
    fake.max_batch_tokens = 100
    tasks = [_task(f"i{k}", "first") for k in range(12)]
    calls = runner_module._calls(fake, tasks, [20] * 12, 8)
    assert calls == [tasks[:5], tasks[5:]]  # 5 | 7: passes 5 | 5 2
    assert runner_module._calls(fake, tasks[:10], [20] * 10, 8) == [tasks[:5], tasks[5:10]]
    assert runner_module._calls(fake, tasks, None, 8) == [tasks[:8], tasks[8:]]
    fake.batch_size = 4  # passes of 4 prompts, each a whole call
    assert runner_module._calls(fake, tasks, [1] * 12, 4) == [tasks[:4], tasks[4:8], tasks[8:]]
    # an item is not split: its tasks in the held pass go to the next call together
    pairs = [_task(f"p{k}", o) for k in range(6) for o in ("first", "second")]
    fake.batch_size = 1024
    calls = runner_module._calls(fake, pairs, [20] * 12, 8)
    assert calls == [pairs[:4], pairs[4:]]  # pass 5|3 splits p2: p2 waits with p3


def test_a_slice_larger_than_a_call_holds_its_last_call_s_part_filled_pass() -> None:
    """By hand, a 100-token budget and calls of 4: tokens 10 10 10 10 10 30 30 30 as
    one call make passes 10x5 | 30x3, the last full (a fourth 30 makes 120): nothing
    held. Cut into calls of 4, the first (10x4, one pass) stays whole and the second
    is 10 30 30 | 30: its last pass of one waits for the next slice."""
    fake = _PassBackend({})
    fake.max_batch_tokens = 100
    counts = [10] * 5 + [30] * 3
    ready = [(_task(f"i{k}", "first"), n) for k, n in enumerate(counts)]
    assert runner_module._whole_passes(fake, ready, [], first=False) == (ready, [])
    sent, held = runner_module._whole_passes(fake, ready, [], first=False, size=4)
    assert sent == ready[:7] and held == ready[7:]
    calls = runner_module._calls(fake, [t for t, _ in sent], [n for _, n in sent], 4)
    assert [len(c) for c in calls] == [4, 3]


def test_the_first_slice_is_sent_where_holding_its_last_pass_would_leave_nothing() -> None:
    """One item's three tasks of 30, 30 and 35 tokens under a 100-token budget make
    passes of 30 30 | 35, the item in both: holding the items of the part-filled last
    pass held the whole first slice, and the device waited for the next slice's
    count. The first slice goes; a later one's item waits."""
    fake = _PassBackend({})
    fake.max_batch_tokens = 100
    ready = [(_task("i0", o), n) for o, n in (("a", 30), ("b", 30), ("c", 35))]
    assert fake.last_pass([30, 30, 35]) == [2]
    assert runner_module._whole_passes(fake, ready, [], first=True) == (ready, [])
    assert runner_module._whole_passes(fake, ready, [], first=False) == ([], ready)


def test_a_full_last_pass_is_not_held(tiny_model_dir: Path) -> None:
    """A call's last pass that no prompt as long could join (its tokens or its prompts
    at the limit) is full: it is not held (it was, waiting a slice for nothing)."""
    piped = LocalBackend.load(tiny_model_dir, model_id="tiny", batch_size=3, pipeline=True,
                              max_batch_tokens=20)  # fmt: skip
    assert piped.last_pass([5, 5, 5]) == []  # three prompts: the most a pass takes
    assert piped.last_pass([1, 2]) == [0, 1]  # a third would join
    piped.batch_size = 8
    assert piped.last_pass([5, 5, 5, 5]) == []  # 20 tokens: a fifth makes 25
    assert piped.last_pass([5, 5, 5]) == [0, 1, 2]  # a fourth makes 20
    assert piped.last_pass([6, 5, 5, 5, 5]) == [0]  # 5 5 5 5 | 6 (a second: 12)
    assert piped.last_pass([9, 5, 5, 5, 5, 7]) == []  # 5 5 5 5 | 7 9 (a third: 27)


def test_every_task_kind_held_for_whole_passes_gives_a_serial_run_s_results(
    tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pairwise (a pair too long for the model, one with identical answers), Likert,
    perplexity (an empty continuation) and rewrites through a pipelined local model
    whose counted tasks are held for whole passes and whose parts are cut into calls
    on them: every outcome as one call at a time computes it, every kept id taken."""
    monkeypatch.setattr(runner_module, "FIRST_COUNT", 6)
    piped = LocalBackend.load(tiny_model_dir, model_id="tiny", batch_size=4, pipeline=True,
                              max_batch_tokens=1600)  # fmt: skip
    serial = LocalBackend(piped.model, piped.tokenizer, model_id="tiny", batch_size=4,
                          max_batch_tokens=1600)  # fmt: skip
    piped.max_length = serial.max_length = 1000  # the long pair: 1,475 tokens
    held: list[int] = []
    last_pass = piped.last_pass

    def holding(counts: Sequence[int]) -> list[int]:
        tail = last_pass(counts)
        held.append(len(tail) if len(tail) < len(counts) else 0)
        return tail

    piped.last_pass = holding  # type: ignore[method-assign]
    pairs = [Pair(f"i{k}", f"Question {k}?" * (1 + k % 5), "Four. " * (k % 9), "Five. " * (k % 4))
             for k in range(24)]  # fmt: skip
    pairs[3] = Pair("i3", "Same?", "Four.", "Four.")
    pairs[5] = Pair("i5", "Long?", "x " * 500, "Five.")
    rows = pd.DataFrame({"prompt_id": ["q0", "q1", "q2"], "model": ["m"] * 3,
                         "prompt": ["P", "P two", "P three " * 3],
                         "response": ["R", "", "R r " * 9]})  # fmt: skip
    dims = [DIMENSIONS["conciseness"], DIMENSIONS["logical_correctness"]]
    prompts = [Prompt((Message("user", f"Say {k}." * (1 + k % 6)),)) for k in range(30)]
    replies = [f"Four and five {k}. " * (k % 5) for k in range(30)]
    got = {}
    for name, backend in (("piped", piped), ("serial", serial)):
        with Store(tmp_path / f"{name}.db") as store:
            runner = Runner(backend, store, progress=False)
            summaries = [runner.pairwise(pairs, PairwiseProtocol(mode="direct")),
                         runner.likert(rows, dims)]  # fmt: skip
            keys, rated, s = runner.perplexity(prompts, replies)
            rk, rewrites, r = runner.rewrite(prompts[:8], max_new_tokens=2, version="v1")
            got[name] = (
                [(x.ok, x.unparsed, x.failed, dict(x.failures)) for x in (*summaries, s, r)],
                store.export_pairs().sort_values("item_id").reset_index(drop=True),
                store.export_ratings().sort_values(["prompt_id", "dimension"], ignore_index=True),
                [(rated[k].status, rated[k].n_tokens, rated[k].sum_logprob) for k in keys],
                [(rewrites[k].status, rewrites[k].text) for k in rk],
            )
    assert sum(held) > 0  # tasks were held, and calls cut on passes
    piped_, serial_ = got["piped"], got["serial"]
    assert piped_[0] == serial_[0] and piped_[4] == serial_[4]
    assert piped_[0][0][2] == 2  # the long pair's two orders failed
    numbers = ["p_a_first", "p_a_second"]
    pd.testing.assert_frame_equal(piped_[1].drop(columns=numbers), serial_[1].drop(columns=numbers))
    np.testing.assert_allclose(piped_[1][numbers].to_numpy(float),
                               serial_[1][numbers].to_numpy(float), atol=1e-6)  # fmt: skip
    pd.testing.assert_frame_equal(piped_[2], serial_[2])
    assert [x[:2] for x in piped_[3]] == [x[:2] for x in serial_[3]]
    np.testing.assert_allclose([x[2] for x in piped_[3]], [x[2] for x in serial_[3]], atol=1e-4)
    assert piped._ids == {} and piped._tail_ids == {}


def test_a_run_stopped_while_tasks_are_held_loses_none_and_sends_none_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call that raises (a device error; Ctrl-C ends a run the same way) while
    counted tasks are held: what finished is stored, the next run sends every other
    prompt once; a backend whose last pass is every prompt, or none, sends each once
    and ends (in a thread given 60 s: a task held forever would hang the run)."""
    monkeypatch.setattr(runner_module, "FIRST_COUNT", 64)
    pairs, proto, tokens = _planted(300, seed=5)

    class Stops(_PassBackend):
        async def next_token_logprobs(
            self, prompts: Sequence[Prompt], *, top_k: int = 20, select: TokenFilter | None = None
        ) -> list[dict[str, float] | Failure]:
            if len(self.sent) == 3:
                raise RuntimeError("device lost")
            return await super().next_token_logprobs(prompts, top_k=top_k, select=select)

    stops = Stops(tokens)
    stops.batch_size = 128
    with Store(tmp_path / "s.db") as store:
        with pytest.raises(RuntimeError, match="device lost"):
            Runner(stops, store, progress=False).pairwise(pairs, proto)
        stored = len(store.export_pairs()) * 2  # both orders of each stored pair
        again = _PassBackend(tokens)
        summary = Runner(again, store, progress=False).pairwise(pairs, proto)
    first = [t for call in stops.sent for t in call]
    second = [t for call in again.sent for t in call]
    assert 0 < stored <= len(first) < 600 and summary.cached == stored
    assert summary.ok == 600 - stored and len(second) == len(set(second)) == 600 - stored

    def run(last_pass: Any, out: list[list[str]]) -> None:
        fake = _PassBackend(tokens)
        fake.batch_size = 128
        fake.last_pass = last_pass  # type: ignore[method-assign]
        with Store(tmp_path / f"{len(outs)}.db") as store:
            assert Runner(fake, store, progress=False).pairwise(pairs, proto).ok == 600
        out.extend(fake.sent)

    outs: list[list[list[str]]] = []
    for last_pass in (lambda c: list(range(len(c))), lambda c: []):
        outs.append([])
        worker = threading.Thread(target=run, args=(last_pass, outs[-1]))
        worker.start()
        worker.join(60)
        assert not worker.is_alive()
        sent = [t for call in outs[-1] for t in call]
        assert len(sent) == len(set(sent)) == 600


def test_a_lazy_backend_holds_as_the_backend_it_loads() -> None:
    from recuse.judging.backends.lazy import LazyBackend

    loaded = _PassBackend({})
    loaded.max_batch_tokens = 100
    lazy = LazyBackend(lambda: loaded, model_id=loaded.model_id, revision=loaded.revision,
                       batch_size=8, route=loaded.perplexity_route)  # fmt: skip
    assert lazy.last_pass([20] * 8) == []  # not loaded: nothing was counted
    lazy.backend()
    assert lazy.last_pass([20] * 8) == [5, 6, 7]


def test_a_local_model_holds_its_last_pass_only_where_calls_are_pipelined(
    tiny_model_dir: Path,
) -> None:
    piped = LocalBackend.load(tiny_model_dir, model_id="tiny", batch_size=3, pipeline=True)
    serial = LocalBackend(piped.model, piped.tokenizer, model_id="tiny", batch_size=3)
    counts = [5, 9, 1, 7, 3, 8, 2]
    assert piped.last_pass(counts) == [1]  # buckets of 3 by length: 1 2 3 | 5 7 8 | 9 (at 1)
    assert serial.last_pass(counts) == [] and piped.last_pass([]) == []


def test_count_slices_double_by_characters_up_to_a_cap_and_keep_groups_whole() -> None:
    tasks = [_task(f"i{k}", o, chars=10 + k) for k in range(150) for o in ("first", "second")]
    slices = count_slices(tasks, 3)
    assert [t for s in slices for t in s] == tasks
    # 3 tasks reach into pair i1, so the slice ends after it; then twice the characters
    assert [len(s) for s in slices[:2]] == [4, 8]
    sizes = [sum(t.size for t in s) for s in slices]
    cap = runner_module.SLICE_CAP * sizes[0]
    for before, part, size in zip(sizes, slices[1:-1], sizes[1:], strict=False):
        want = min(2 * before, cap)  # reached, and passed by at most the last pair
        assert want <= size < want + 2 * part[-1].size
    assert max(sizes) < cap + 2 * tasks[-1].size  # never past the cap but by a pair
    assert sum(s >= cap for s in sizes) >= 5  # most of the run in capped slices
    assert all(s[-1].item_id != n[0].item_id for s, n in itertools.pairwise(slices))
    assert count_slices(tasks[:1], 64) == [tasks[:1]] and count_slices([], 64) == []


def test_count_slices_ends_when_tasks_have_no_characters(monkeypatch: pytest.MonkeyPatch) -> None:
    # never a real prompt (its text has a few characters at least), but a slice of no
    # characters asked the next for none, and the cut never moved on
    tasks = [_task(f"i{k}", "first", chars=5) for k in range(6)]
    monkeypatch.setattr(Task, "size", property(lambda self: 0))
    slices = count_slices(tasks, 2)
    assert [t for part in slices for t in part] == tasks and all(slices)


def test_a_backend_that_does_not_count_is_sent_by_characters(
    tmp_path: Path, first_slice: int
) -> None:
    class NoCounts(FakeBackend):
        def __init__(self) -> None:
            super().__init__(batch_size=8)
            self.asked: list[int] = []
            self.sent: list[str] = []

        def token_counts(
            self, prompts: Sequence[Prompt], continuations: Sequence[str] | None = None
        ) -> None:
            self.asked.append(len(prompts))
            return None

        async def next_token_logprobs(
            self, prompts: Sequence[Prompt], *, top_k: int = 20, select: TokenFilter | None = None
        ) -> list[dict[str, float] | Failure]:
            self.sent += [p.canonical() for p in prompts]
            return await super().next_token_logprobs(prompts, top_k=top_k, select=select)

    pairs, proto, _ = _planted(100, seed=5)
    fake = NoCounts()
    with Store(tmp_path / "s.db") as store:
        assert Runner(fake, store, progress=False).pairwise(pairs, proto).ok == 200
    assert fake.asked == [first_slice]  # asked once: it cannot count
    sizes = [len(t) for t in fake.sent]
    pair_sizes = [max(sizes[j], sizes[j + 1]) for j in range(0, 200, 2)]
    assert pair_sizes == sorted(pair_sizes)


def test_a_count_of_the_wrong_length_is_said_and_the_work_before_it_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A backend whose count of a later slice is one short stopped the run with zip's
    'zip() argument 2 is shorter than argument 1'; it names the backend and the
    lengths now. The calls that finished before it are stored, and the next run (a
    sound backend) sends only the rest, each prompt once."""

    class Short(_SlicedBackend):
        def token_counts(
            self, prompts: Sequence[Prompt], continuations: Sequence[str] | None = None
        ) -> list[int]:
            counts = super().token_counts(prompts, continuations)
            return counts[:-1] if len(self.counted) == 3 else counts

    monkeypatch.setattr(runner_module, "FIRST_COUNT", 64)  # three slices at least
    pairs, proto, tokens = _planted(200, seed=3)
    bad = Short(tokens)
    with Store(tmp_path / "s.db") as store, pytest.raises(RuntimeError) as err:
        Runner(bad, store, progress=False).pairwise(pairs, proto)
    n = bad.counted[2]
    assert str(err.value) == f"Short.token_counts gave {n - 1} counts for {n} prompts"
    good = _SlicedBackend(tokens)
    with Store(tmp_path / "s.db") as store:
        summary = Runner(good, store, progress=False).pairwise(pairs, proto)
    again = [t for call in good.sent for t in call]
    assert summary.cached > 0 and summary.cached + summary.ok == 400
    assert len(again) == summary.ok and len(set(again)) == len(again)
