"""Helpers for judging tests: a tiny random causal LM and a small MT-Bench reader."""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from recuse.errors import ConfigError, JudgeError
from recuse.judging.backends.base import (
    Backend,
    Failure,
    Generation,
    TokenFilter,
    TransientError,
)
from recuse.judging.protocols import Prompt
from recuse.judging.store import Store

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

_CORPUS = [
    "Which answer is better? Answer A or answer B. [[A]] [[B]] [[C]]",
    "The quick brown fox jumps over the lazy dog. Decision: [[A]]",
    "Explanation: the response is correct. Answer: Yes, Not at all, mostly",
    "Question from the user: what is two plus two? It is four.",
    "=== Answer A (start) === === Answer B (end) === judge fair careful",
]


def build_tiny_model(
    folder: Path, *, seed: int = 0, template: bool = True, metaspace: bool = False
) -> Path:
    """A 2-layer random Llama and a trained BPE tokenizer, saved to ``folder``: byte-level
    (GPT-2's, SmolLM2's), or with ``metaspace`` SentencePiece-style pieces that put
    ``▁`` before every text's first word (Llama 2's, Mistral's: ``A`` alone is ``▁A``)."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    specials = ["<unk>", "<|im_start|>", "<|im_end|>", "<pad>"]
    if metaspace:
        bpe.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first")
        bpe.decoder = decoders.Metaspace(prepend_scheme="first")
        trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=specials)
        corpus = [*_CORPUS, "My final verdict is A>>B, B>A, A>B, B>>A or A=B."]
    else:
        bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        bpe.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=400,
            special_tokens=specials,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        )
        corpus = _CORPUS
    bpe.train_from_iterator(corpus * 4, trainer=trainer)
    tok = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        unk_token="<unk>",
        eos_token="<|im_end|>",
        bos_token="<|im_start|>",
        pad_token="<pad>",
    )
    if template:
        tok.chat_template = CHATML
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        initializer_range=0.3,  # peaky distributions: padding mistakes would show
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        tie_word_embeddings=False,
    )
    model = LlamaForCausalLM(config).eval()
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # transformers draws one as it writes the shards
    try:
        model.save_pretrained(folder)
    finally:
        if bars:
            hf_logging.enable_progress_bar()
    tok.save_pretrained(folder)
    return folder


def _byte_level_alphabet() -> list[str]:
    """GPT-2's 256 byte-level characters, in byte order (the tokens a byte-level BPE's
    vocabulary starts from, SmolLM2's among them)."""
    shown = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    shown += range(ord("®"), ord("ÿ") + 1)
    out, extra = {b: chr(b) for b in shown}, 0
    for b in range(256):
        if b not in out:
            out[b], extra = chr(256 + extra), extra + 1
    return [out[b] for b in range(256)]


def build_tiny_gguf(path: Path, *, seed: int = 0) -> Path:
    """A 1-layer random Llama in a GGUF file as llama.cpp writes one (SmolLM2's layout:
    byte-level BPE vocabulary and merges, ChatML template, Q8_0 embeddings, Q4_1
    projections, F32 norms), 20 KB: transformers converts it in a second where the
    embedded 135M judge's file takes 15-40 s, through the same reader, de-quantizing
    and the same three progress bars."""
    import gguf
    import numpy as np
    from gguf.quants import quantize

    kind = gguf.GGMLQuantizationType
    tokens = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", *_byte_level_alphabet(), "Ġt", "he"]
    dim, ffn, heads, kv = 32, 64, 2, 1
    out = gguf.GGUFWriter(str(path), "llama")
    out.add_block_count(1)
    out.add_context_length(256)
    out.add_embedding_length(dim)
    out.add_feed_forward_length(ffn)
    out.add_head_count(heads)
    out.add_head_count_kv(kv)
    out.add_rope_freq_base(10000.0)
    out.add_layer_norm_rms_eps(1e-5)
    out.add_vocab_size(len(tokens))
    out.add_rope_dimension_count(dim // heads)
    out.add_tokenizer_model("gpt2")
    out.add_tokenizer_pre("smollm")
    out.add_token_list(tokens)
    out.add_token_types([3, 3, 3] + [1] * (len(tokens) - 3))  # control, then normal
    out.add_token_merges(["Ġ t", "h e"])
    out.add_bos_token_id(1)
    out.add_eos_token_id(2)
    out.add_unk_token_id(0)
    out.add_pad_token_id(2)
    out.add_chat_template(CHATML)
    rng = np.random.default_rng(seed)
    shapes = {
        "token_embd.weight": ((len(tokens), dim), kind.Q8_0),
        "blk.0.attn_norm.weight": ((dim,), kind.F32),
        "blk.0.ffn_norm.weight": ((dim,), kind.F32),
        "blk.0.attn_q.weight": ((dim, dim), kind.Q4_1),
        "blk.0.attn_k.weight": ((dim // heads * kv, dim), kind.Q4_1),
        "blk.0.attn_v.weight": ((dim // heads * kv, dim), kind.Q4_1),
        "blk.0.attn_output.weight": ((dim, dim), kind.Q4_1),
        "blk.0.ffn_gate.weight": ((ffn, dim), kind.Q4_1),
        "blk.0.ffn_up.weight": ((ffn, dim), kind.Q4_1),
        "blk.0.ffn_down.weight": ((dim, ffn), kind.Q4_1),
        "output_norm.weight": ((dim,), kind.F32),
    }
    for name, (shape, quant) in shapes.items():
        values = rng.normal(0.0, 0.3, size=shape).astype(np.float32)
        if quant == kind.F32:
            out.add_tensor(name, values)
        else:
            out.add_tensor(name, quantize(values, quant), raw_dtype=quant)
    out.write_header_to_file()
    out.write_kv_data_to_file()
    out.write_tensors_to_file()
    out.close()
    return path


def read_mt_bench_pairs(data: Path, model_a: str, model_b: str, n: int) -> list[dict[str, str]]:
    """Turn-1 MT-Bench question with two models' answers (tiny local reader for tests)."""
    folder = data / "mt_bench"
    answers: dict[str, dict[int, str]] = {}
    for model in (model_a, model_b):
        with open(folder / "model_answer" / f"{model}.jsonl", encoding="utf-8") as f:
            answers[model] = {
                r["question_id"]: r["choices"][0]["turns"][0] for r in map(json.loads, f)
            }
    out = []
    with open(folder / "question.jsonl", encoding="utf-8") as f:
        for q in map(json.loads, f):
            qid = q["question_id"]
            out.append(
                {
                    "item_id": f"{qid}:{model_a}:{model_b}",
                    "prompt_id": str(qid),
                    "prompt": q["turns"][0],
                    "response_a": answers[model_a][qid],
                    "response_b": answers[model_b][qid],
                    "model_a": model_a,
                    "model_b": model_b,
                }
            )
    return out[:n]


class FakeBackend(Backend):
    """A deterministic judge without a model: log-probs from a hash of the prompt.

    Optional ``sleep`` per batch (to be killed mid-run), a number of transient
    errors to raise first, and a marker that makes a prompt fail permanently.
    """

    def __init__(
        self,
        *,
        sleep: float = 0.0,
        transient: int = 0,
        retry_after: float | None = None,
        fail_marker: str | None = None,
        batch_size: int = 4,
    ) -> None:
        self.model_id = "fake-judge"
        self.revision = "r1"
        self.batch_size = batch_size
        self.concurrency = 2
        self.supports_prefix = True
        self.sleep = sleep
        self.transient = transient
        self.retry_after = retry_after
        self.fail_marker = fail_marker
        self.calls = 0

    @staticmethod
    def dist(text: str) -> dict[str, float]:
        h = hashlib.sha256(text.encode()).digest()
        raw = [h[0] + 1, h[1] + 1, h[2] + 1, 600]
        total = sum(raw)
        return {t: math.log(v / total) for t, v in zip(("A", " B", "C", "The"), raw, strict=True)}

    async def _tick(self) -> None:
        self.calls += 1
        if self.sleep:
            await asyncio.sleep(self.sleep)
        if self.transient > 0:
            self.transient -= 1
            raise TransientError("HTTP 429 from fake", retry_after=self.retry_after)

    async def next_token_logprobs(
        self, prompts: Sequence[Prompt], *, top_k: int = 20, select: TokenFilter | None = None
    ) -> list[dict[str, float] | Failure]:
        await self._tick()
        out: list[dict[str, float] | Failure] = []
        for p in prompts:
            text = p.canonical()
            if self.fail_marker and self.fail_marker in text:
                out.append(Failure("marked to fail"))
            else:
                out.append(self.dist(text))
        return out

    async def continuation_logprobs(
        self, prompts: Sequence[Prompt], continuations: Sequence[str]
    ) -> list[object]:  # type: ignore[override]
        raise NotImplementedError

    async def generate(
        self,
        prompts: Sequence[Prompt],
        *,
        max_new_tokens: int,
        stop: Sequence[str] = (),
        top_k: int = 0,
        select: TokenFilter | None = None,
    ) -> list[Generation | Failure]:
        await self._tick()
        out: list[Generation | Failure] = []
        for p in prompts:
            d = self.dist(p.canonical())
            best = max(("A", " B", "C"), key=lambda k: d[k]).strip()
            out.append(Generation(text=f"Explanation: fine.\nAnswer: mostly [[{best}]]"))
        return out


class RevokedMidRun(FakeBackend):
    """Four one-prompt calls in flight: the third stops the run (a revoked key), the
    fourth fails transiently after it, the first two answer last (``answer_after``)."""

    answer_after = 0.6

    def __init__(self) -> None:
        super().__init__(batch_size=1)
        self.concurrency = 4

    async def next_token_logprobs(  # type: ignore[override]
        self, prompts: Sequence[Prompt], **options: Any
    ) -> list[dict[str, float] | Failure]:
        n, self.calls = self.calls, self.calls + 1
        if n == 2:
            await asyncio.sleep(0.01)
            raise JudgeError("HTTP 401: key revoked")
        if n == 3:
            await asyncio.sleep(0.05)
            raise TransientError("HTTP 503")
        await asyncio.sleep(self.answer_after)
        return [self.dist(p.canonical()) for p in prompts]


def fake_pairs(n: int) -> list[dict[str, str]]:
    return [
        {
            "item_id": f"i{k}",
            "prompt_id": f"q{k // 2}",
            "prompt": f"Question number {k}?",
            "response_a": f"answer a{k}",
            "response_b": f"answer b{k * 7 % 5}",
            "model_a": "gpt-4",
            "model_b": "claude-v1",
            "human": "a" if k % 3 else "b",
        }
        for k in range(n)
    ]


def mirrored_pairs(n: int) -> list[dict[str, str]]:
    """``fake_pairs(n)`` where every odd item shows its even neighbour's two responses
    swapped (same prompt): item 2k's first-order prompt is item 2k+1's second-order
    prompt, so the two share content keys and a copy between them must change frame."""
    out = fake_pairs(n)
    for k in range(1, n, 2):
        src = out[k - 1]
        out[k] = {
            **src,
            "item_id": f"i{k}",
            "response_a": src["response_b"],
            "response_b": src["response_a"],
            "model_a": src["model_b"],
            "model_b": src["model_a"],
            "human": {"a": "b", "b": "a"}[src["human"]],
        }
    return out


def claiming_while_another_claims(
    path: Path, table: str, other: Callable[[Store], object], mine: Callable[[Store], object]
) -> Store:
    """``mine(store)`` on a fresh store at ``path`` while another run's ``other(store)``
    claims between mine's look-up in ``table`` and its insert (two runs started at once);
    the claiming store, or ``mine``'s ConfigError with both stores closed."""
    path.unlink(missing_ok=True)
    first, second = Store(path), Store(path)
    first.conn  # noqa: B018 - the tables exist before either claims
    real = second._rows
    raced: list[bool] = []

    def rows(sql: str, params: Sequence[object] = ()) -> list[tuple[object, ...]]:
        out = real(sql, params)
        if f"FROM {table}" in sql and not raced:  # the other run claims now
            raced.append(True)
            other(first)
        return out

    second._rows = rows  # type: ignore[method-assign]
    try:
        mine(second)
    except ConfigError:
        second.close()
        raise
    finally:
        first.close()
        assert raced
    return second
