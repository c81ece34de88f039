"""Where a local judge runs and in which precision, and how much it reads per pass.

``--device auto`` is the GPU when torch sees one (CUDA first, then Apple's MPS),
else the CPU; ``--dtype auto`` is bfloat16 where the device computes in it natively
(a CUDA GPU of compute capability 8.0 or newer), else float32. The dtype changes
the numbers, so a precision other than float32 enters the judge's revision (see
:meth:`~recuse.judging.backends.local.LocalBackend.load`).

The token budget of one forward pass (padded tokens) on a CUDA GPU comes from its
free memory after the weights are loaded (:func:`gpu_token_budget`); on the CPU it
stays 2,048, where larger batches run slower per token.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from recuse.errors import ConfigError, MissingDependencyError

__all__ = [
    "CPU_TOKEN_BUDGET",
    "DType",
    "DTypeChoice",
    "device_spec",
    "gpu_token_budget",
    "peak_tflops",
    "resolve_device",
    "resolve_dtype",
]

DType = Literal["float32", "bfloat16"]
DTypeChoice = Literal["auto", "float32", "bfloat16"]

#: dense (no sparsity) bfloat16 tensor-core peak of a GPU, TFLOP/s, by the name its
#: driver gives (``torch.cuda.get_device_name``), from the vendors' datasheets (their
#: figures with sparsity halved); the first pattern that matches wins, so the
#: specific variants come before the family. What the evaluator card's model FLOP
#: utilisation divides by; a GPU not listed has no such number ("peak unknown").
BF16_PEAK_TFLOPS: tuple[tuple[str, float], ...] = (
    (r"\bGH200\b", 989.0),
    (r"\bH200\b.*\bNVL\b", 835.0),
    (r"\bH200\b", 989.0),
    (r"\bH100\b.*\bPCIe\b", 756.0),
    (r"\bH100\b.*\bNVL\b", 835.0),
    (r"\bH100\b", 989.0),  # SXM ("NVIDIA H100 80GB HBM3")
    (r"\bB200\b", 2250.0),
    (r"\bA100\b", 312.0),
    (r"\bL40S\b", 362.0),
    (r"\bL4\b", 121.0),
    (r"\bA10\b", 125.0),
)


def peak_tflops(device_name: str) -> float | None:
    """The dense bfloat16 peak (TFLOP/s) of the GPU named ``device_name``
    (:data:`BF16_PEAK_TFLOPS`), or None for a device not listed."""
    for pattern, tflops in BF16_PEAK_TFLOPS:
        if re.search(pattern, device_name, flags=re.IGNORECASE):
            return tflops
    return None


#: padded tokens per forward pass on the CPU. Past ~2k tokens a batch runs slower per
#: token (activations leave the cache): SmolLM2 perplexity went from 685 to 406 tok/s
#: between batches of ~1k and ~4k tokens on a 2-core machine.
CPU_TOKEN_BUDGET = 2048

#: the largest budget chosen from free memory (padded tokens): past it a bigger
#: batch was no faster on an H200 for the 1.7B and 7B shapes (benchmarks/judge_gpu.py),
#: nor for the 135M shape once its passes ran without a mask read: its bare pass took
#: 0.73 s at 65,536 and 0.76-0.77 s at 131,072 (800 MT-Bench prompts, two runs), and a
#: part-filled last pass costs less at the smaller budget
GPU_TOKEN_BUDGET_MAX = 65536
#: the smallest budget a GPU is given, however full its memory
GPU_TOKEN_BUDGET_MIN = 4096

_CUDA = re.compile(r"cuda(?::(\d+))?")


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise MissingDependencyError("torch", "local") from None
    return torch


def device_spec(spec: str) -> str:
    """``spec`` (``--device``) checked for its form and lower-cased: ``auto``, ``cpu``,
    ``cuda``, ``cuda:N`` or ``mps``; anything else is a
    :class:`~recuse.errors.ConfigError`. Nothing is asked of torch (a Ray pool's
    device is resolved on the cluster, see :func:`resolve_device` for this machine)."""
    name = spec.strip().lower()
    if name not in ("auto", "cpu", "mps") and _CUDA.fullmatch(name) is None:
        raise ConfigError(f"--device must be auto, cpu, cuda, cuda:N or mps, not {spec!r}")
    return name


def resolve_device(spec: str = "auto") -> str:
    """``auto``, ``cpu``, ``cuda``, ``cuda:N`` or ``mps`` as a torch device name.

    ``auto`` is ``cuda:0`` where torch sees a CUDA GPU, else ``mps`` where Apple's
    Metal backend is available, else ``cpu``; ``cuda`` is ``cuda:0``. A device
    torch cannot use is a :class:`~recuse.errors.ConfigError` saying what it sees.
    """
    name = device_spec(spec)
    torch = _torch()
    if name == "auto":
        if torch.cuda.is_available():
            return "cuda:0"
        if _mps_available(torch):
            return "mps"
        return "cpu"
    if name == "cpu":
        return "cpu"
    if name == "mps":
        if not _mps_available(torch):
            raise ConfigError("--device mps: torch sees no Apple GPU here — use --device auto")
        return "mps"
    m = _CUDA.fullmatch(name)
    assert m is not None  # device_spec checked the form
    if not torch.cuda.is_available():
        raise ConfigError(
            f"--device {spec}: torch {torch.__version__} sees no CUDA GPU (a CPU-only build, "
            "or no driver) — use --device auto or cpu"
        )
    index = int(m.group(1) or 0)
    count = int(torch.cuda.device_count())
    if index >= count:
        raise ConfigError(
            f"--device {spec}: there are {count} CUDA GPU(s), numbered 0 to {count - 1}"
        )
    return f"cuda:{index}"


def _mps_available(torch: Any) -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def resolve_dtype(spec: DTypeChoice | str, device: str) -> DType:
    """``auto`` is bfloat16 on a CUDA GPU that computes in it natively (compute
    capability 8.0 or newer: A100, H100, H200, RTX 30xx and later), else float32 (the
    CPU, MPS, older GPUs); ``float32`` and ``bfloat16`` are taken as given."""
    if spec == "float32":
        return "float32"
    if spec == "bfloat16":
        return "bfloat16"
    if spec != "auto":
        raise ConfigError(f"--dtype must be auto, float32 or bfloat16, not {spec!r}")
    if device.startswith("cuda"):
        torch = _torch()
        major, _minor = torch.cuda.get_device_capability(device)
        return "bfloat16" if int(major) >= 8 else "float32"
    return "float32"


def gpu_token_budget(
    *,
    free_bytes: int,
    hidden_size: int,
    num_layers: int,
    vocab_size: int,
    intermediate_size: int | None = None,
    dtype_bytes: int = 2,
) -> int:
    """Padded tokens per forward pass that fit a CUDA GPU's free memory.

    One pass keeps, per token, about ``hidden * (8 + 2 * intermediate / hidden)``
    activation values of one layer alive at its peak (attention input, q/k/v,
    output, residual and the MLP's two wide projections) plus 1/16 of a hidden
    vector per layer (copies of the residual stream); the log-softmax over the
    vocabulary is taken only at the read positions (at most one per prompt here, a
    few per perplexity token), counted as 1/8 of a float32 vocabulary row per token.
    Half of the free memory is used (the allocator's fragmentation and torch's
    workspaces take the rest)::

        per_token = dtype_bytes * hidden * (8 + 2 * intermediate / hidden)
                    + 4 * vocab / 8 + dtype_bytes * hidden * max(1, layers) / 16
        budget = clip(0.5 * free_bytes / per_token, 4096, cap)

    rounded down to a multiple of 1,024; ``cap`` is :data:`GPU_TOKEN_BUDGET_MAX`.
    """
    inter = intermediate_size or 4 * hidden_size
    per_token = dtype_bytes * hidden_size * (8 + 2 * inter / hidden_size) + 4 * vocab_size / 8
    per_token += dtype_bytes * hidden_size * max(1, num_layers) / 16  # residual stream copies
    budget = int(0.5 * free_bytes / per_token)
    budget = max(GPU_TOKEN_BUDGET_MIN, min(GPU_TOKEN_BUDGET_MAX, budget))
    return budget // 1024 * 1024
