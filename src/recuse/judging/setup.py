"""What a judging command builds from its options, before any judgment runs: the
judge's backend (a server, the embedded judge or a model folder) and its id, the
pairwise protocol of ``--template``, and the Ray pool with what its actors build.

``recuse judge`` and ``recuse probe`` parse their options, call these, and print; every
check here raises :class:`~recuse.errors.ConfigError` before a store is created or a
request is sent.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from recuse.errors import ConfigError
from recuse.judging.backends.http import RENDERINGS, Endpoint, PromptLogprobMode
from recuse.judging.device import DType, DTypeChoice
from recuse.judging.protocols import PairwiseMode, PairwiseProtocol
from recuse.roster import Roster

if TYPE_CHECKING:
    import pandas as pd

    from recuse.judging.backends.base import Backend
    from recuse.judging.distributed import RayExecutor

__all__ = [
    "LocalJudge",
    "chatml_note",
    "describe",
    "judge_backend",
    "ray_backend",
    "ray_pool",
    "template_protocol",
    "whole_labels",
]


def judge_backend(
    model: str,
    *,
    base_urls: list[str],
    endpoint: Endpoint,
    api_key_env: str | None,
    concurrency: int,
    timeout: float,
    dtype: DTypeChoice,
    batch_size: int,
    judge_id: str | None,
    prompt_logprobs: PromptLogprobMode | None = None,
    device: str = "auto",
    max_batch_tokens: int = 0,
    placed: tuple[str, DType] | None = None,
    roster: Roster | None = None,
    revision: str | None = None,
) -> tuple[Backend, str]:
    """The judge's backend and id. ``prompt_logprobs`` (echo / vllm): a server's
    backend also scores perplexities, through its prompt log-probs. A local model
    runs on ``device`` (auto: the GPU when there is one) in ``dtype`` (auto: bfloat16
    where the device computes in it, else float32); ``batch_size`` 0 is the device's
    default, ``max_batch_tokens`` 0 the budget sized for the device. ``placed``: the
    device and dtype a Ray pool resolved on its cluster, used instead of this
    machine's. A server's judge id is ``judge_id``, else the ``roster``'s canonical
    name of ``model``, else ``model``; ``revision`` (``--revision``) the version of the
    served model its judgments are keyed by (they enter the content keys: another
    revision judges again). A local model's revision is its files' fingerprint, which
    recuse computes: one given is refused."""
    check_revision(revision, served=bool(base_urls))
    if base_urls:
        from recuse.judging.backends.http import HTTPBackend

        roster = roster or Roster.builtin()
        jid = judge_id or (roster.canonical(model) if model in roster else None) or model
        http = HTTPBackend(
            base_urls, model=model, model_id=jid, endpoint=endpoint, api_key_env=api_key_env,
            concurrency=concurrency, timeout=timeout, prompt_logprobs=prompt_logprobs,
            revision=revision or "",
        )  # fmt: skip
        return http, jid
    local = LocalJudge.named(model, judge_id)
    return local.backend(
        device=device, dtype=dtype, batch_size=batch_size,
        max_batch_tokens=max_batch_tokens, placed=placed,
    ), local.judge_id  # fmt: skip


def check_revision(revision: str | None, *, served: bool) -> None:
    """``--revision`` (None: not given) goes with a server's judge (``served``) only."""
    if revision is not None and not served:
        raise ConfigError(
            "--revision goes with --base-url (the version of a served model, such as "
            "gpt-4o-2024-08-06); a local model's judgments are keyed by its files' "
            "fingerprint, which recuse computes from the weights — drop --revision"
        )


@dataclass(frozen=True)
class LocalJudge:
    """A local judge: its folder, the id and revision its judgments are keyed by, the
    judge id written to tables, and whether the revision is the folder's fingerprint
    (a user's folder) rather than the embedded judge's pinned one."""

    path: Path
    model_id: str
    revision: str
    judge_id: str
    fingerprinted: bool

    @classmethod
    def named(cls, model: str, judge_id: str | None) -> LocalJudge:
        """The embedded judge when ``model`` names it, else the model folder ``model``."""
        from recuse.judging.models import DEFAULT_JUDGE, default_judge, names_embedded

        if names_embedded(model):  # a folder of that name is the user's model
            m = default_judge()
            return cls(Path(m.path), m.model_id, m.revision, judge_id or m.model_id, False)
        path = Path(model)
        if not path.is_dir():
            raise ConfigError(
                f"--model {model!r} is neither the embedded judge ({DEFAULT_JUDGE}) nor a "
                "model folder — give a folder saved with save_pretrained, or --base-url for "
                "a server"
            )
        from recuse.judging.fingerprint import folder_fingerprint

        # the folder's own name, also where it is given as "." or "sub/.." (whose last
        # component as typed is "" or ".."); a symlink keeps the name it was given by
        jid = judge_id or Path(os.path.abspath(path)).name
        # the weights' fingerprint, not the folder's name: other weights saved into
        # the same folder, or another folder of the same name, get other keys
        return cls(path, jid, folder_fingerprint(path), jid, True)

    def backend(
        self, *, device: str, dtype: DTypeChoice, batch_size: int, max_batch_tokens: int,
        placed: tuple[str, DType] | None,
    ) -> Backend:  # fmt: skip
        """A backend that loads the model on its first judgment (a rerun with nothing
        left to judge never loads it), on ``device`` in ``dtype`` or where ``placed``."""
        from recuse.judging.backends.lazy import LazyBackend
        from recuse.judging.backends.local import (
            LocalBackend,
            default_batch_size,
            default_calls_in_flight,
            stored_revision,
        )
        from recuse.judging.device import resolve_device, resolve_dtype

        if not (self.path / "config.json").is_file():
            raise ConfigError(f"{self.path} is not a model folder (no config.json)")
        if batch_size < 0 or max_batch_tokens < 0:
            raise ConfigError("--batch-size and --max-batch-tokens must be 0 (automatic) or more")
        if placed is not None:  # a Ray pool's (RayExecutor.placement): may differ from here
            where, precision = placed
        else:
            where = resolve_device(device)
            precision = resolve_dtype(dtype, where)
        size = batch_size or default_batch_size(where)

        def load() -> Backend:
            loaded = LocalBackend.load(
                self.path, model_id=self.model_id, revision=self.revision,
                dtype=precision,  # pinned here: it enters the revision the tasks are keyed by
                device=device if placed is None else where,  # resolved where it loads
                batch_size=size, max_batch_tokens=max_batch_tokens or None,
            )  # fmt: skip
            if self.fingerprinted:  # weights saved into the folder since it was fingerprinted
                from recuse.judging.fingerprint import check_unchanged

                check_unchanged(self.path, self.revision)
            return loaded

        return LazyBackend(
            load, model_id=self.model_id, revision=stored_revision(self.revision, precision),
            batch_size=size, route=LocalBackend.ROUTE,
            concurrency=default_calls_in_flight(where), hardware=f"{where} {precision}",
        )  # fmt: skip


def describe(backend: Backend, jid: str, model: str | None = None) -> str:
    """The run's first line: the judge, and where it runs (a local model's device and
    dtype, and which model: the embedded judge or the folder ``model``) or the model
    name asked of the servers (which model served it, the answers say: the run's
    summary line)."""
    if backend.hardware:
        from recuse.judging.models import local_source

        which = f", read from {local_source(model)}" if model is not None else ""
        where = f"local model on {backend.hardware} (revision {backend.revision})"
        return f"judge {jid}: {where}{which}"
    at = f" at revision {backend.revision}" if backend.revision else ""
    # the model asked for: an alias (gpt-4o) may be served by a snapshot, which the
    # run's last line names from the answers (it read "served model gpt-4o" above
    # "the server's answers named the model serving them: 'gpt-4o-2024-08-06'")
    return f"judge {jid}: model {backend.model_id} asked of the server{at}{_prompt_form(backend)}"


def _prompt_form(backend: Backend) -> str:
    """How a server's judge reads its prompts, for the run's first line: the chat
    endpoint's are written by the server in the model's own template. Recuse's own
    ChatML over /v1/completions is not said here on every run: its caveat is said once
    per store and judge (:func:`chatml_note`), and every run records it, which the
    evaluator card says (``prompts written in recuse's ChatML over /v1/completions``)."""
    if getattr(backend, "endpoint", None) == "chat":
        return "; its prompts written by the server in the model's own chat template"
    return ""


#: recuse's ChatML over /v1/completions, as runs record it (:attr:`Backend.rendering`)
CHATML = RENDERINGS["chatml"]


def chatml_note(backend: Backend, runs: pd.DataFrame, judge: str) -> str | None:
    """The caveat of recuse's ChatML prompts over /v1/completions (a ChatML model, Qwen
    or SmolLM2, reads them as its own turns; a model with another chat template, Llama 3
    or Mistral, reads the marks as plain text, its verdicts those of a prompt it was not
    trained on), said where it matters: on a run of ``judge`` over them when no run of it
    the store recorded (``runs``, :meth:`~recuse.judging.store.Store.runs`) was, i.e.
    once per store and judge (a run that judges something records it); None otherwise.
    Before, the run's first line said it on every run.

    >>> import pandas as pd
    >>> from recuse.judging.backends.http import HTTPBackend
    >>> http = HTTPBackend("http://127.0.0.1:9/v1", model="m")
    >>> chatml_note(http, pd.DataFrame({"judge": [], "rendering": []}), "m")[:40]
    "this judge's prompts are written by recu"
    >>> chatml_note(http, pd.DataFrame({"judge": ["m"], "rendering": [CHATML]}), "m") is None
    True
    """
    if backend.rendering != CHATML:
        return None
    if (
        "rendering" in runs.columns
        and ((runs["judge"] == judge) & (runs["rendering"] == CHATML)).any()
    ):
        return None
    return (
        "this judge's prompts are written by recuse in ChatML (<|im_start|>…<|im_end|>) "
        "for /v1/completions: a ChatML model (Qwen, SmolLM2) reads them as its own "
        "turns, a model with another chat template (Llama 3, Mistral, Gemma) reads those "
        "marks as plain text; --endpoint chat --mode explain has the server write its "
        "own (said once per store and judge; the evaluator card says which each judge's "
        "runs used)"
    )


def whole_labels(protocol: PairwiseProtocol) -> bool:
    """Does this template's verdict need each label's whole text scored?"""
    return protocol.template is not None and protocol.template.verdict.first_token_ambiguous


def template_protocol(spec: str | None, mode: PairwiseMode) -> PairwiseProtocol:
    """The pairwise protocol for ``--template`` (recuse's prompt when none)."""
    if spec is None:
        return PairwiseProtocol(mode=mode)
    from recuse.judging.templates import load_template

    template = load_template(spec)
    if mode == "direct" and template.answer_prefix is None:
        raise ConfigError(
            f"--template {spec}: its verdict is a structure written in the reply, with no "
            "answer prefix to score it at — add --mode explain"
        )
    return PairwiseProtocol(mode=mode, template=template)


def ray_pool(
    address: str, actors: int, *, local: bool, device: str, dtype: DTypeChoice
) -> tuple[RayExecutor, tuple[str, DType] | None]:
    """The Ray pool for `judge --ray`, and for a local model the device and dtype its
    actors use, resolved on the cluster (``--device cpu`` keeps the pool off GPUs;
    ``cuda`` requires them; the dtype is fixed once since it enters the keys)."""
    from recuse.judging.device import device_spec
    from recuse.judging.distributed import RayExecutor

    spec = device_spec(device)  # its form: what it names is resolved on the cluster
    if local and spec == "mps":
        raise ConfigError("--device mps does not go with --ray: a Ray pool runs on CUDA or CPU")
    pool = RayExecutor(None, address=address, actors=actors or None, gpu=local and spec != "cpu")
    if not local:
        return pool, None
    return pool, pool.placement(dtype, require_gpu=spec.startswith("cuda"))


def ray_backend(
    backend: Backend,
    *,
    base_urls: list[str],
    model: str,
    endpoint: Endpoint,
    api_key_env: str | None,
    concurrency: int,
    timeout: float,
    prompt_logprobs: PromptLogprobMode | None,
) -> Callable[[], Backend]:
    """What builds the judge's backend on each Ray actor (it travels to them)."""
    if base_urls:
        from recuse.judging.backends.http import HTTPBackend
        from recuse.judging.secrets import split_credentials

        if any(split_credentials(u)[1] is not None for u in base_urls):
            raise ConfigError(
                "with --ray, put the server's password in an environment variable "
                "(--api-key-env NAME, set on every Ray machine): a user:password@ in "
                "--base-url would travel to the workers through Ray's object store"
            )
        # only the variable's name travels; each worker reads the key on its machine
        return functools.partial(
            HTTPBackend, base_urls, model=model, model_id=backend.model_id, endpoint=endpoint,
            api_key_env=api_key_env, concurrency=concurrency, timeout=timeout,
            prompt_logprobs=prompt_logprobs, revision=backend.revision,
        )  # fmt: skip
    from recuse.judging.backends.lazy import LazyBackend

    if not isinstance(backend, LazyBackend) or backend.loaded:
        raise ConfigError("--ray judges with a local model folder or with --base-url")
    # the unloaded stand-in travels; each actor loads the model once, after checking
    # that its copy of the folder has the files the driver fingerprinted
    load: Callable[[], Backend] = backend.backend
    if Path(model).is_dir():
        from recuse.judging.distributed import CheckedFolder
        from recuse.judging.fingerprint import folder_fingerprint

        load = CheckedFolder(load, model, folder_fingerprint(model))
    return load
