"""Plain causal attention for the local backend's right-padded passes, with no read of
device values on the host in the middle of a pass.

With no attention mask and no cache, recent transformers (the packed-sequence check
of ``masking_utils.create_causal_mask``) test the position ids on the host in every
forward pass (``if (...).all()``): on a GPU the host stops there until the device has
finished everything queued before, so it cannot prepare pass k+1 while pass k runs,
and each pass starts on an idle device. A right-padded batch with positions
``0..n-1`` in every row is never packed, so the test can only answer "no mask".

:func:`mask_free` names an attention implementation, registered with transformers'
public ``AttentionInterface``, that computes exactly what the ``sdpa`` one does
with no mask (scaled dot-product attention with ``is_causal``: the flash kernel on
a GPU) but that the mask builders do not know, so they return no mask without the
test. It is used only where that is the same attention: a text model whose every
layer attends over the full causal context through ``sdpa`` (no sliding window, no
chunked or bidirectional attention, no sub-models) of a type in :data:`PLAIN_CAUSAL`;
for any other model, and with a transformers that has no such test, the model runs as
configured. The list is needed because a model's own code may build its attention
from the mask it is given: Doge's dynamic mask attention, given no mask, attends to
later tokens (every other test above passes for it, and its numbers differ).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["MASK_FREE", "PLAIN_CAUSAL", "mask_free", "using"]

#: the implementation's name in transformers' registry
MASK_FREE = "recuse_causal_sdpa"
_LOCK = threading.Lock()
#: model types whose layers, given no mask, run plain causal attention through the
#: registered implementation: each gave transformers' own numbers (tests/judging/
#: test_causal.py builds every one from a small config and compares its hidden states)
PLAIN_CAUSAL = frozenset(
    {
        "apertus", "arcee", "bitnet", "cohere", "ernie4_5", "exaone", "gemma", "glm",
        "glm4", "gpt2", "gpt_bigcode", "gpt_neox", "granite", "granitemoe", "helium",
        "hunyuan_v1_dense", "internlm3", "llama", "ministral3", "mistral", "mixtral",
        "nemotron", "olmo", "olmo2", "olmoe", "opt", "persimmon", "phi", "phi3",
        "phimoe", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "seed_oss", "smollm3",
        "stablelm", "starcoder2",
    }
)  # fmt: skip


def mask_free(config: Any) -> bool:
    """Whether ``config``'s model can run :data:`MASK_FREE` with the same numbers, and
    whether it helps (this transformers tests the positions on the host); registers
    the implementation the first time it says yes."""
    try:
        from transformers import masking_utils
        from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
    except ImportError:
        return False
    if not hasattr(masking_utils, "find_packed_sequence_indices"):
        return False  # no host test to avoid: the default path is already mask-free
    masks = getattr(masking_utils, "ALL_MASK_ATTENTION_FUNCTIONS", None)
    if masks is None or "sdpa" not in ALL_ATTENTION_FUNCTIONS:
        return False
    if getattr(config, "sub_configs", None) or config._attn_implementation != "sdpa":
        return False
    if getattr(config, "model_type", None) not in PLAIN_CAUSAL:
        return False  # its own code may read the mask (Doge): keep transformers' path
    if not getattr(config, "is_causal", True):
        return False
    layer_types = getattr(config, "layer_types", None)
    if layer_types is not None and any(t != "full_attention" for t in layer_types):
        return False
    for windowed in ("sliding_window", "attention_chunk_size", "use_sliding_window"):
        if getattr(config, windowed, None):
            return False
    _register()
    return MASK_FREE not in masks


def _register() -> None:
    """:data:`MASK_FREE` in transformers' registry, as its ``sdpa`` (once a process)."""
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS, AttentionInterface

    with _LOCK:
        if MASK_FREE not in ALL_ATTENTION_FUNCTIONS:
            AttentionInterface.register(MASK_FREE, ALL_ATTENTION_FUNCTIONS["sdpa"])


@contextmanager
def using(config: Any, on: bool) -> Iterator[None]:
    """``config`` set to :data:`MASK_FREE` inside the block (where ``on``), and back
    to what it was after: the caller's model object is left as it was given, and
    generation, which passes a padding mask, never runs without it. Registers the
    implementation where :func:`mask_free` has not yet (a model it said no to, run
    with it on purpose, as the tests do)."""
    if not on:
        yield
        return
    _register()
    before = config._attn_implementation
    config._attn_implementation = MASK_FREE
    try:
        yield
    finally:
        config._attn_implementation = before
