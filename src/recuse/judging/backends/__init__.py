"""Judge backends: local transformers, OpenAI-compatible HTTP, replay of recorded outputs."""

from recuse.judging.backends.base import Backend, Failure, Generation, TransientError

__all__ = ["Backend", "Failure", "Generation", "TransientError"]
