"""Judge backends: local transformers, OpenAI-compatible HTTP, replay of recorded outputs.

Backends are leaves: each imports only ``backends.base``, ``protocols`` (and the HTTP
backend ``secrets``); the runner, the store and the data readers import them, never
the reverse.
"""

from recuse.judging.backends.base import Backend, Failure, Generation, TransientError

__all__ = ["Backend", "Failure", "Generation", "TransientError"]
