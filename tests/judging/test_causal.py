"""Plain causal attention without a host read mid-pass (recuse.judging.backends.causal)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from recuse.judging.backends.causal import MASK_FREE, mask_free  # noqa: E402
from recuse.judging.backends.local import LocalBackend  # noqa: E402
from recuse.judging.protocols import Pair, PairwiseProtocol, is_verdict_token  # noqa: E402

needs_host_test = pytest.mark.skipif(
    not hasattr(transformers.masking_utils, "find_packed_sequence_indices"),
    reason="this transformers reads no device value while building the mask",
)


class _Tok:
    pad_token_id = 0
    eos_token_id = 1
    chat_template = None


def _llama(**kw: Any) -> Any:
    cfg = transformers.LlamaConfig(
        vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, **kw,
    )  # fmt: skip
    with torch.device("meta"):
        return transformers.LlamaForCausalLM(cfg)


@needs_host_test
def test_a_pass_reads_no_device_value_on_the_host() -> None:
    # on the meta device every value read on the host raises: the default path reads
    # one (the packed-sequence test), ours none, so on a GPU nothing waits mid-pass
    model = _llama()
    b = LocalBackend(model, _Tok(), model_id="m")
    assert b.mask_free
    ids = torch.zeros(3, 7, dtype=torch.long, device="meta")
    with torch.inference_mode():
        assert b._hidden(ids).shape == (3, 7, 32)
        assert model.config._attn_implementation == "sdpa"  # the caller's model as given
        b.mask_free = False
        with pytest.raises(RuntimeError, match="meta tensors"):
            b._hidden(ids)


@needs_host_test
def test_only_where_it_is_the_same_attention() -> None:
    assert mask_free(_llama().config)
    assert not mask_free(_llama(attn_implementation="eager").config)
    sliding = transformers.MistralConfig(
        vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, sliding_window=16,
    )  # fmt: skip
    sliding._attn_implementation = "sdpa"
    assert not mask_free(sliding)
    qwen = transformers.Qwen2Config(
        vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, use_sliding_window=False,
    )  # fmt: skip
    qwen._attn_implementation = "sdpa"
    assert mask_free(qwen)  # every layer full attention
    qwen.layer_types = ["full_attention", "sliding_attention"]
    assert not mask_free(qwen)
    gemma = transformers.Gemma3TextConfig(
        vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=8,
    )  # fmt: skip
    gemma._attn_implementation = "sdpa"
    assert not mask_free(gemma)  # sliding layers
    assert MASK_FREE in transformers.modeling_utils.ALL_ATTENTION_FUNCTIONS


def test_same_numbers_as_transformers_own_path(tiny_model_dir: Path) -> None:
    # the tiny Llama runs mask-free (where this transformers has the host test); its
    # right-padded batched log-probs equal those of the default path, one at a time
    b = LocalBackend.load(tiny_model_dir, model_id="tiny", device="cpu", batch_size=8)
    assert b.mask_free == hasattr(transformers.masking_utils, "find_packed_sequence_indices")
    proto = PairwiseProtocol(mode="direct")
    pairs = [Pair("p1", "Two plus two?", "Four.", "Five, surely " * 9),
             Pair("p2", "Name a fox.", "The quick brown fox " * 7, "Fox.")]  # fmt: skip
    prompts = [proto.prompt(p, o) for p in pairs for o in ("first", "second")]
    got = asyncio.run(b.next_token_logprobs(prompts, top_k=0, select=is_verdict_token))
    vocab = b.vocab()
    for p, d in zip(prompts, got, strict=True):
        assert isinstance(d, dict)
        with torch.inference_mode():
            logits = b.model(input_ids=torch.tensor([b.encode(p)])).logits[0, -1].float()
        ref = torch.log_softmax(logits, dim=-1)
        for tok, v in d.items():
            same = [i for i, t in enumerate(vocab) if t == tok]  # ids of one text add up
            np.testing.assert_allclose(v, float(torch.logsumexp(ref[same], 0)), atol=1e-5)
    assert b.model.config._attn_implementation == "sdpa"


@needs_host_test
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_on_a_gpu_a_pass_never_waits_for_the_device(tiny_model_dir: Path) -> None:
    # torch raises on any operation that synchronizes with the device while the sync
    # debug mode is "error": the mask-free pass has none, transformers' own path one
    b = LocalBackend.load(tiny_model_dir, model_id="t", device="cuda", dtype="float32")
    assert b.mask_free
    ids = torch.randint(5, 50, (3, 40), device="cuda")
    with torch.inference_mode():
        b._hidden(ids)  # warm-up: kernels, the allocator
        torch.cuda.synchronize()
        torch.cuda.set_sync_debug_mode("error")
        try:
            b._hidden(ids)
            b.mask_free = False
            with pytest.raises(RuntimeError, match="synchroniz"):
                b._hidden(ids)
        finally:
            torch.cuda.set_sync_debug_mode(0)
            b.mask_free = True


_SMALL = {
    "vocab_size": 128, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "n_embd": 64,
    "n_layer": 2, "n_head": 4, "max_position_embeddings": 256, "n_positions": 256,
    "ffn_dim": 128, "num_layers": 2, "moe_intermediate_size": 32, "num_experts": 4,
    "num_local_experts": 4, "num_experts_per_tok": 2, "pad_token_id": 0,
    "bos_token_id": 1, "eos_token_id": 2, "sliding_window": None,
}  # fmt: skip


def _small(model_type: str) -> Any:
    """A seeded two-layer model of ``model_type`` from its default config, sdpa, float32."""
    auto = transformers.AutoConfig
    base = auto.for_model(model_type)
    cfg = auto.for_model(model_type, **{k: v for k, v in _SMALL.items() if hasattr(base, k)})
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(
        cfg, attn_implementation="sdpa", dtype=torch.float32
    )
    return model.eval()


def _same_numbers(model: Any) -> bool:
    """Whether a right-padded batch's hidden states are the same mask-free as on
    transformers' own path (and the first rows' positions equal the rows alone)."""
    from recuse.judging.backends.causal import using

    torch.manual_seed(1)
    ids = torch.randint(3, 128, (3, 24))
    with torch.inference_mode():
        ref = model.base_model(input_ids=ids, use_cache=False).last_hidden_state
        with using(model.config, True):
            got = model.base_model(input_ids=ids, use_cache=False).last_hidden_state
    return bool(torch.allclose(got, ref, atol=1e-5, rtol=0))


@needs_host_test
@pytest.mark.parametrize("model_type", ["llama", "qwen2", "mistral", "phi3", "gpt2", "doge"])
def test_mask_free_only_where_the_numbers_are_the_same(model_type: str) -> None:
    # Doge passes every structural test (sdpa, no window, no sub-models) but builds its
    # attention from the mask it is given: with none it attends to later tokens, so a
    # rule on the config alone read wrong numbers for it
    model = _small(model_type)
    if model_type == "doge":
        assert not _same_numbers(model)  # the plain causal attention is not its attention
        assert not mask_free(model.config)
    else:
        assert mask_free(model.config)
        assert _same_numbers(model)


@needs_host_test
def test_every_listed_type_gives_transformers_numbers() -> None:
    from recuse.judging.backends.causal import PLAIN_CAUSAL

    for model_type in sorted(PLAIN_CAUSAL):
        model = _small(model_type)
        assert mask_free(model.config), model_type
        assert _same_numbers(model), model_type


def test_the_models_config_is_restored_when_a_pass_raises(tiny_model_dir: Path) -> None:
    # a pass that fails inside the model (out of memory, a bad kernel) leaves the
    # caller's model as given, and generation afterwards (left padding, with a mask)
    # gives the text it gave before any pass ran
    b = LocalBackend.load(tiny_model_dir, model_id="tiny", device="cpu", batch_size=4)
    proto = PairwiseProtocol(mode="direct")
    pairs = [Pair(f"p{i}", "Why? " * (i + 1), "Yes " * (3 * i + 1), "No.") for i in range(3)]
    prompts = [proto.prompt(p, o) for p in pairs for o in ("first", "second")]
    before = [g.text for g in b.generate_sync(prompts, max_new_tokens=6)]  # type: ignore[union-attr]
    want = b.model.config._attn_implementation
    attn = b.model.model.layers[1].self_attn
    seen: list[str] = []

    def fail(*args: Any, **kwargs: Any) -> Any:
        seen.append(b.model.config._attn_implementation)
        raise RuntimeError("planted failure")

    attn.forward = fail
    with pytest.raises(RuntimeError, match="planted failure"):
        asyncio.run(b.next_token_logprobs(prompts, top_k=0, select=is_verdict_token))
    del attn.forward
    assert seen == [MASK_FREE if b.mask_free else want]
    assert b.model.config._attn_implementation == want
    asyncio.run(b.next_token_logprobs(prompts, top_k=0, select=is_verdict_token))
    after = [g.text for g in b.generate_sync(prompts, max_new_tokens=6)]  # type: ignore[union-attr]
    assert after == before


def test_a_second_backend_over_the_same_model_waits_for_a_mask_free_pass(
    tiny_model_dir: Path,
) -> None:
    # two backends over one model object (two judge ids, a probe beside a judge): a
    # generation through one while the other's pass ran under the mask-free setting
    # read its padding mask as no causal mask and gave other text
    import threading

    a = LocalBackend.load(tiny_model_dir, model_id="tiny", device="cpu", batch_size=4)
    b = LocalBackend(a.model, a.tokenizer, model_id="tiny", batch_size=4)
    proto = PairwiseProtocol(mode="direct")
    pairs = [Pair(f"p{i}", "Why? " * (5 * i + 1), "Yes " * (3 * i + 1), "No.") for i in range(4)]
    prompts = [proto.prompt(p, "first") for p in pairs]  # left-padded by up to ~40 tokens
    want = [g.text for g in b.generate_sync(prompts, max_new_tokens=6)]  # type: ignore[union-attr]
    got: list[str] = []
    worker = threading.Thread(
        target=lambda: got.extend(g.text for g in b.generate_sync(prompts, max_new_tokens=6))  # type: ignore[union-attr]
    )

    def in_the_pass(module: Any, args: Any) -> None:
        if not worker.is_alive() and not got:
            worker.start()
            worker.join(timeout=2.0)  # it waits for this pass (before: ran inside it)

    hook = a.model.model.layers[0].register_forward_pre_hook(in_the_pass)
    try:
        asyncio.run(a.next_token_logprobs(prompts, top_k=0, select=is_verdict_token))
    finally:
        hook.remove()
    worker.join()
    assert got == want
    assert a.model.config._attn_implementation == "sdpa"


def test_using_registers_the_implementation_in_a_fresh_process() -> None:
    # a model run with the implementation on before any mask_free said yes in the
    # process (Doge's test, first on its worker) found it unregistered: KeyError
    import subprocess
    import sys

    code = (
        "import torch, transformers\n"
        "from recuse.judging.backends.causal import MASK_FREE, using\n"
        "from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS\n"
        "assert MASK_FREE not in ALL_ATTENTION_FUNCTIONS\n"
        "cfg = transformers.LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32,"
        " num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1)\n"
        "model = transformers.LlamaForCausalLM(cfg).eval()\n"
        "ids = torch.randint(0, 64, (2, 5))\n"
        "with torch.inference_mode(), using(model.config, True):\n"
        "    model(input_ids=ids, use_cache=False)\n"
        "print('ran')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "ran"
