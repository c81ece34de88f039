"""A judge run in-process with transformers (the ``local`` extra).

Batches are right-padded: every real token keeps its natural position, the causal
mask keeps padding out of every real token's view, and logits are gathered only at
the positions that are read, so a batched answer equals a one-at-a-time answer up
to float rounding. Prompts are sorted by length and cut into sub-batches under a
token budget (length bucketing), so little compute goes into padding. Each finished
sub-batch is reported (:func:`report_done`), so progress moves per forward pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from recuse.errors import ConfigError, MissingDependencyError
from recuse.judging.backends.base import (
    Backend,
    Failure,
    Generation,
    TokenFilter,
    report_done,
)
from recuse.judging.fingerprint import folder_fingerprint
from recuse.judging.protocols import Prompt

if TYPE_CHECKING:
    import torch

DType = Literal["float32", "bfloat16"]


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise MissingDependencyError("torch", "local") from None
    return torch


def _quiet_transformers() -> None:
    """No third-party progress bars ("Loading weights ...") on the user's terminal: the
    runner's own progress is the one the user reads."""
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    try:
        from huggingface_hub.utils import disable_progress_bars
    except ImportError:  # pragma: no cover - transformers depends on huggingface_hub
        return
    disable_progress_bars()


class LocalBackend(Backend):
    """A causal LM and its tokenizer, both already loaded (see :meth:`load`)."""

    ROUTE = "local"  # how it computes perplexities (enters perplexity keys)

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        model_id: str,
        revision: str = "",
        batch_size: int = 16,
        max_batch_tokens: int | None = None,
    ) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.model_id = model_id
        self.revision = revision
        self.batch_size = batch_size
        self.concurrency = 1
        if max_batch_tokens is None:
            # Padded tokens per forward pass. On CPU, batches past ~2k tokens run
            # slower per token (activations leave the cache): SmolLM2 perplexity went
            # from 685 to 406 tok/s between batches of 4 and 16 answers (~1k vs ~4k
            # tokens) on a 2-core machine.
            on_gpu = next(model.parameters()).device.type != "cpu"
            max_batch_tokens = 16384 if on_gpu else 2048
        self.max_batch_tokens = max_batch_tokens
        self.has_template = bool(getattr(tokenizer, "chat_template", None))
        config = model.config
        self.max_length = int(getattr(config, "max_position_embeddings", 0) or 1 << 30)
        self.softcap = getattr(config, "final_logit_softcapping", None)
        self._vocab: list[str] | None = None
        self._selected: dict[TokenFilter, np.ndarray] = {}
        pad = tokenizer.pad_token_id
        if pad is None:
            pad = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else 0
        self.pad_id = int(pad)
        self._tokens = (0, 0)  # read and produced so far, as a server's usage counts them

    def usage(self) -> tuple[int, int] | None:
        """Tokens read (prompts, prefix included) and produced (one per scored next
        token, every generated token) so far: the evaluator card's counts."""
        return self._tokens

    def _count(self, read: int, produced: int) -> None:
        self._tokens = (self._tokens[0] + read, self._tokens[1] + produced)

    @classmethod
    def load(
        cls,
        path: str | Path,
        *,
        model_id: str,
        revision: str | None = None,
        dtype: DType = "float32",
        **kwargs: Any,
    ) -> LocalBackend:
        """Load a saved model folder (never a hub id: the path must exist).

        ``revision`` (enters every cache key) defaults to the folder's fingerprint, a
        content hash of its config, weight and tokenizer files
        (:func:`~recuse.judging.fingerprint.folder_fingerprint`): other weights in the
        same folder are never served the old weights' results. A ``dtype`` other than
        float32 gives other numbers, so it is appended (``"<revision>+bfloat16"``):
        stored results of one precision are never served to the other.
        """
        torch = _torch()
        try:
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError:
            raise MissingDependencyError("transformers", "local") from None
        folder = Path(path)
        if not (folder / "config.json").is_file():
            raise ConfigError(
                f"{folder} is not a model folder (no config.json) — give a folder saved "
                "with save_pretrained, or use the default judge"
            )
        if revision is None:
            revision = folder_fingerprint(folder)
        _quiet_transformers()
        torch_dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[dtype]
        tok = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(
            folder, dtype=torch_dtype, local_files_only=True
        )
        if dtype != "float32":
            revision = f"{revision}+{dtype}"
        return cls(model, tok, model_id=model_id, revision=revision, **kwargs)

    # --- text -> ids ---------------------------------------------------------------

    def render(self, prompt: Prompt) -> str:
        """The prompt as the model reads it (chat template when the tokenizer has one)."""
        if self.has_template:
            messages = [{"role": m.role, "content": m.content} for m in prompt.messages]
            text = self.tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            )
            return str(text) + prompt.prefix
        body = "\n\n".join(m.content for m in prompt.messages)
        return body + "\n\n" + prompt.prefix

    def encode(self, prompt: Prompt) -> list[int]:
        ids = self.tokenizer(self.render(prompt), add_special_tokens=not self.has_template)
        return list(ids["input_ids"])

    def vocab(self) -> list[str]:
        """Decoded text of every token id (computed once)."""
        if self._vocab is None:
            n = len(self.tokenizer)
            self._vocab = list(self.tokenizer.batch_decode([[i] for i in range(n)]))
        return self._vocab

    def _select_ids(self, select: TokenFilter) -> np.ndarray:
        if select not in self._selected:
            vocab = self.vocab()
            self._selected[select] = np.array(
                [i for i, t in enumerate(vocab) if select(t)], dtype=np.int64
            )
        return self._selected[select]

    # --- batched forward -----------------------------------------------------------

    def _buckets(self, lengths: Sequence[int]) -> list[list[int]]:
        """Indices sorted by length, cut into batches under both size limits."""
        order = sorted(range(len(lengths)), key=lambda i: lengths[i])
        batches: list[list[int]] = []
        current: list[int] = []
        for i in order:
            longest = lengths[i]  # sorted: the newcomer is the longest
            if current and (
                len(current) >= self.batch_size
                or longest * (len(current) + 1) > self.max_batch_tokens
            ):
                batches.append(current)
                current = []
            current.append(i)
        if current:
            batches.append(current)
        return batches

    def _log_probs_at(
        self, seqs: Sequence[Sequence[int]], positions: Sequence[Sequence[int]]
    ) -> list[torch.Tensor]:
        """Log-softmax (float32, full vocabulary) at ``positions[i]`` of ``seqs[i]``."""
        torch = _torch()
        width = max(len(s) for s in seqs)
        device = next(self.model.parameters()).device
        ids = torch.full((len(seqs), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for r, s in enumerate(seqs):
            ids[r, : len(s)] = torch.tensor(s, dtype=torch.long)
            mask[r, : len(s)] = 1
        with torch.inference_mode():
            hidden = self.model.base_model(
                input_ids=ids.to(device), attention_mask=mask.to(device)
            ).last_hidden_state
            rows = torch.tensor([r for r, p in enumerate(positions) for _ in p], device=device)
            cols = torch.tensor([c for p in positions for c in p], device=device)
            logits = self.model.get_output_embeddings()(hidden[rows, cols]).float()
            if self.softcap:
                logits = torch.tanh(logits / self.softcap) * self.softcap
            logp = torch.log_softmax(logits, dim=-1).cpu()
        out, start = [], 0
        for p in positions:
            out.append(logp[start : start + len(p)])
            start += len(p)
        return out

    def _too_long(self, n: int) -> Failure | None:
        if n > self.max_length:
            return Failure(f"prompt has {n} tokens; the model reads at most {self.max_length}")
        if n == 0:
            return Failure("empty prompt")
        return None

    def next_token_logprobs_sync(
        self, prompts: Sequence[Prompt], *, top_k: int = 20, select: TokenFilter | None = None
    ) -> list[dict[str, float] | Failure]:
        torch = _torch()
        seqs = [self.encode(p) for p in prompts]
        out: list[dict[str, float] | Failure] = [Failure("not run")] * len(seqs)
        ok = []
        for i, s in enumerate(seqs):
            bad = self._too_long(len(s))
            if bad:
                out[i] = bad
            else:
                ok.append(i)
        vocab = self.vocab()
        extra = self._select_ids(select) if select is not None else np.zeros(0, dtype=np.int64)
        for batch in self._buckets([len(seqs[i]) for i in ok]):
            idx = [ok[b] for b in batch]
            rows = self._log_probs_at([seqs[i] for i in idx], [[len(seqs[i]) - 1] for i in idx])
            for i, lp in zip(idx, rows, strict=True):
                row = lp[0]
                top = torch.topk(row, min(top_k, row.shape[0])).indices.numpy() if top_k else []
                ids = np.union1d(np.asarray(top, dtype=np.int64), extra)
                values = row[torch.from_numpy(ids)].numpy().astype(np.float64)
                dist: dict[str, float] = {}
                for tid, v in zip(ids.tolist(), values.tolist(), strict=True):
                    text = vocab[tid] if tid < len(vocab) else f"<id {tid}>"
                    dist[text] = float(np.logaddexp(dist[text], v)) if text in dist else v
                out[i] = dist
            self._count(sum(len(seqs[i]) for i in idx), len(idx))
            report_done(len(idx))
        return out

    def continuation_logprobs_sync(
        self, prompts: Sequence[Prompt], continuations: Sequence[str]
    ) -> list[np.ndarray | Failure]:
        heads = [self.encode(p) for p in prompts]
        tails = [
            list(self.tokenizer(c, add_special_tokens=False)["input_ids"]) for c in continuations
        ]
        out: list[np.ndarray | Failure] = [Failure("not run")] * len(heads)
        ok = []
        for i, (h, t) in enumerate(zip(heads, tails, strict=True)):
            bad = self._too_long(len(h) + len(t)) or self._too_long(len(h))
            if bad:
                out[i] = bad
            elif not t:
                out[i] = np.zeros(0)
            else:
                ok.append(i)
        for batch in self._buckets([len(heads[i]) + len(tails[i]) for i in ok]):
            idx = [ok[b] for b in batch]
            seqs = [heads[i] + tails[i] for i in idx]
            pos = [list(range(len(heads[i]) - 1, len(seqs[k]) - 1)) for k, i in enumerate(idx)]
            rows = self._log_probs_at(seqs, pos)
            for i, lp in zip(idx, rows, strict=True):
                tail = _torch().tensor(tails[i], dtype=_torch().long)
                out[i] = lp.gather(1, tail[:, None])[:, 0].numpy().astype(np.float64)
            report_done(len(idx))
        return out

    def generate_sync(
        self,
        prompts: Sequence[Prompt],
        *,
        max_new_tokens: int,
        stop: Sequence[str] = (),
        top_k: int = 0,
    ) -> list[Generation | Failure]:
        torch = _torch()
        seqs = [self.encode(p) for p in prompts]
        out: list[Generation | Failure] = [Failure("not run")] * len(seqs)
        ok = []
        for i, s in enumerate(seqs):
            bad = self._too_long(len(s) + max_new_tokens)
            if bad:
                out[i] = bad
            else:
                ok.append(i)
        device = next(self.model.parameters()).device
        eos = self.tokenizer.eos_token_id
        for batch in self._buckets([len(seqs[i]) + max_new_tokens for i in ok]):
            idx = [ok[b] for b in batch]
            width = max(len(seqs[i]) for i in idx)
            ids = torch.full((len(idx), width), self.pad_id, dtype=torch.long)
            mask = torch.zeros((len(idx), width), dtype=torch.long)
            for r, i in enumerate(idx):  # left padding for generation
                ids[r, width - len(seqs[i]) :] = torch.tensor(seqs[i])
                mask[r, width - len(seqs[i]) :] = 1
            kwargs: dict[str, Any] = {}
            if stop:
                kwargs.update(stop_strings=list(stop), tokenizer=self.tokenizer)
            with torch.inference_mode():
                result = self.model.generate(
                    input_ids=ids.to(device),
                    attention_mask=mask.to(device),
                    max_new_tokens=max_new_tokens,
                    do_sample=False,
                    pad_token_id=self.pad_id,
                    eos_token_id=eos,
                    return_dict_in_generate=True,
                    output_logits=top_k > 0,
                    **kwargs,
                )
            new = result.sequences[:, width:].cpu()
            for r, i in enumerate(idx):
                g = self._finish(new[r], stop, result.logits if top_k else None, r, top_k)
                out[i] = g
                self._count(len(seqs[i]), len(g.tokens))
            report_done(len(idx))
        return out

    def _finish(
        self, new: torch.Tensor, stop: Sequence[str], logits: Any, row: int, top_k: int
    ) -> Generation:
        torch = _torch()
        eos = self.tokenizer.eos_token_id
        tokens: list[int] = []
        for t in new.tolist():
            if t == eos:  # generate pads only after a row's end
                break
            tokens.append(t)
        finish = "length" if len(tokens) == len(new) else "stop"
        text = self.tokenizer.decode(tokens, skip_special_tokens=True)
        cut = min((text.find(s) + len(s) for s in stop if s in text), default=-1)
        if cut >= 0:
            text, finish = text[:cut], "stop"
        dists: list[dict[str, float]] = []
        vocab = self.vocab()
        if logits is not None:
            for step in range(len(tokens)):
                lp = torch.log_softmax(logits[step][row].float(), dim=-1)
                top = torch.topk(lp, top_k)
                dists.append(
                    {vocab[int(k)]: float(v) for k, v in zip(top.indices, top.values, strict=True)}
                )
        return Generation(
            text=text,
            tokens=tuple(vocab[t] for t in tokens),
            dists=tuple(dists),
            finish_reason=finish,
        )

    # --- async interface (compute stays in this thread; concurrency is 1) -----------

    async def next_token_logprobs(
        self, prompts: Sequence[Prompt], *, top_k: int = 20, select: TokenFilter | None = None
    ) -> list[dict[str, float] | Failure]:
        return self.next_token_logprobs_sync(prompts, top_k=top_k, select=select)

    @property
    def perplexity_route(self) -> str:
        return self.ROUTE

    async def continuation_logprobs(
        self, prompts: Sequence[Prompt], continuations: Sequence[str]
    ) -> list[np.ndarray | Failure]:
        return self.continuation_logprobs_sync(prompts, continuations)

    async def generate(
        self,
        prompts: Sequence[Prompt],
        *,
        max_new_tokens: int,
        stop: Sequence[str] = (),
        top_k: int = 0,
    ) -> list[Generation | Failure]:
        return self.generate_sync(prompts, max_new_tokens=max_new_tokens, stop=stop, top_k=top_k)
