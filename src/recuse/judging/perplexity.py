"""Conditional perplexity of a response given its prompt, under a model (the judge).

The prompt is rendered as a one-turn chat with the model's chat template (the
generation prompt opened, i.e. the assistant turn begins), and the response is
tokenized on its own and appended; only the response tokens are scored::

    log p(response | prompt) = sum_t log p(y_t | prompt, y_<t)
    perplexity = exp(-(1/T) * sum_t log p(y_t | prompt, y_<t))      (T response tokens)

The end-of-turn token is not scored. A model without a chat template reads the
prompt as plain text followed by a blank line. Responses with no token (empty
text) and prompts too long for the model are ``failed`` rows with the reason,
never a number.

Perplexity is a task kind of the judging runner (:meth:`Runner.perplexity`): the
same batching, concurrency, retries, resume, progress and run summary as judging.
The numbers come from the backend's ``continuation_logprobs`` primitive:

* **local** — :class:`~recuse.judging.backends.local.LocalBackend` (right-padded
  batches, length bucketing, logits only at the scored positions; batched equals
  one-at-a-time to float rounding).
* **OpenAI-compatible server** — :class:`~recuse.judging.backends.http.HTTPBackend`
  made with ``prompt_logprobs="echo"`` or ``"vllm"`` on the completions endpoint
  (the server's prompt log-probs, verified against its own generation first).

Results are cached in the judgment store (table ``perplexities``), keyed by a
content hash of the model id and revision, the conditioning prompt, the response
and the route (:func:`recuse.judging.protocols.perplexity_key`); failed rows are
retried on the next run. This module holds the functions over texts and tables:

* :func:`perplexities` — one row per (prompt, response);
* :func:`add_perplexities` — ``ppl_a`` / ``ppl_b`` of a judge's rows of a pairs table;
* :func:`judge_perplexities` — every response of the pairwise items a judge judged in
  a store, and the judge → model link (``Store.link_perplexities``) with which
  ``Store.export_pairs`` (:func:`attach_stored_perplexities`) fills ``ppl_a`` /
  ``ppl_b``, so the audit's familiarity section runs on ``recuse judge export``
  output. From the command line: ``recuse judge ... --perplexity``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pandas as pd

from recuse.errors import ConfigError, InputError
from recuse.judging.backends.base import Backend
from recuse.judging.leases import left_to
from recuse.judging.protocols import PERPLEXITY_VERSION, response_prompt
from recuse.judging.runner import Executor, RetryPolicy, Runner, RunSummary
from recuse.judging.store import Perplexity, Store

__all__ = [
    "PERPLEXITY_VERSION",
    "PerplexityRun",
    "add_perplexities",
    "attach_stored_perplexities",
    "judge_perplexities",
    "perplexities",
    "response_prompt",
]

#: what a perplexity run did (``total``, ``cached``, ``computed``, ``failed``, ``failures``)
PerplexityRun = RunSummary

RESULT_COLUMNS = ["key", "status", "n_tokens", "sum_logprob", "mean_logprob", "ppl", "reason"]


def perplexities(
    backend: Backend,
    prompts: Sequence[str],
    responses: Sequence[str],
    *,
    store: Store | None = None,
    chunk_size: int = 64,
    retry: RetryPolicy | None = None,
    progress: bool = False,
    executor: Executor | None = None,
) -> tuple[pd.DataFrame, RunSummary]:
    """Perplexity of ``responses[i]`` given ``prompts[i]`` under ``backend``.

    Returns one row per input (columns ``key, status, n_tokens, sum_logprob,
    mean_logprob, ppl, reason``; ``ppl`` NaN unless ``status == "ok"``; ``left``,
    with the run named in its reason, where another run in progress was computing
    it and had not stored it when this one ended) and a summary of the run.
    Identical (prompt, response) inputs are computed once.
    Texts are sorted by length; a backend that batches (``batch_size > 1``) gets
    ``chunk_size`` of them per call (the local backend buckets them further under
    its token budget). With a ``store`` finished rows are committed as they come,
    so a killed run resumes where it stopped; without one they live in memory. An
    ``executor`` (a Ray cluster) computes them on its workers.
    """
    if len(prompts) != len(responses):
        raise ConfigError("give as many prompts as responses")
    for name, seq in (("prompt", prompts), ("response", responses)):
        for i, t in enumerate(seq):
            if not isinstance(t, str):
                raise InputError(
                    f"{name} is not text", row=i + 1, fix="give every text as a string"
                )
    own = store is None
    db = Store(":memory:") if store is None else store
    try:
        runner = Runner(backend, db, retry=retry, progress=progress, executor=executor)
        batch = max(1, chunk_size) if backend.batch_size > 1 else 1
        keys, rows, run = runner.perplexity(
            [response_prompt(p) for p in prompts], list(responses), batch_size=batch
        )
    finally:
        if own:
            db.close()
    left = Perplexity("", "left", reason=_left_reason(run))
    rows = {k: rows.get(k, dataclasses.replace(left, key=k)) for k in keys}
    frame = pd.DataFrame(
        [
            {
                "key": k,
                "status": rows[k].status,
                "n_tokens": rows[k].n_tokens,
                "sum_logprob": rows[k].sum_logprob,
                "mean_logprob": rows[k].mean_logprob,
                "ppl": rows[k].ppl,
                "reason": rows[k].reason,
            }
            for k in keys
        ],
        columns=RESULT_COLUMNS,
    )
    return frame, run


def _left_reason(run: RunSummary) -> str:
    """The reason of a text left to another run in progress (:attr:`RunSummary.left`)."""
    return (
        f"{left_to(run.holders)}, which had not stored it when this run ended; rerun after it ends"
    )


def add_perplexities(
    pairs: pd.DataFrame,
    backend: Backend,
    *,
    judge: str | None = None,
    store: Store | None = None,
    chunk_size: int = 64,
    retry: RetryPolicy | None = None,
) -> pd.DataFrame:
    """Fill ``ppl_a`` / ``ppl_b`` of the rows of ``judge`` (default: the backend's id).

    Needs the texts (``prompt``, ``response_a``, ``response_b``). Rows of other
    judges keep their values; a response whose perplexity failed stays empty and the
    reasons are counted in ``attrs["perplexity_failures"]``.
    """
    need = ["prompt", "response_a", "response_b", "judge"]
    missing = [c for c in need if c not in pairs.columns]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)}",
            fix="perplexity needs the texts: columns prompt, response_a, response_b",
        )
    name = judge or backend.model_id
    mine = (pairs["judge"] == name).to_numpy()
    if not mine.any():
        present = sorted({str(j) for j in pairs["judge"].dropna().unique()})
        raise ConfigError(
            f"no rows of judge {name!r} — judges present: {', '.join(present) or 'none'} "
            "(pass judge= to name the rows these perplexities belong to)"
        )
    rows = pairs.loc[mine]
    out = pairs.copy()
    failures: dict[str, int] = {}
    for side in ("a", "b"):
        texts = rows[f"response_{side}"]
        ok_text = texts.map(lambda t: isinstance(t, str)).to_numpy()
        prompts_ok = rows["prompt"].map(lambda t: isinstance(t, str)).to_numpy()
        use = ok_text & prompts_ok
        values = np.full(len(rows), np.nan)
        if use.any():
            frame, _run = perplexities(
                backend,
                rows["prompt"][use].tolist(),
                texts[use].tolist(),
                store=store,
                chunk_size=chunk_size,
                retry=retry,
            )
            values[use] = frame["ppl"].to_numpy(float)
            for reason in frame.loc[frame["status"] != "ok", "reason"]:
                failures[str(reason)] = failures.get(str(reason), 0) + 1
        if (~use).any():
            failures["text missing"] = failures.get("text missing", 0) + int((~use).sum())
        col = f"ppl_{side}"
        if col not in out.columns:
            out[col] = np.nan
        out.loc[mine, col] = values
    out.attrs["perplexity_failures"] = failures
    return out


def judge_perplexities(
    store: Store,
    backend: Backend,
    *,
    judge: str | None = None,
    chunk_size: int = 64,
    retry: RetryPolicy | None = None,
    progress: bool = False,
    executor: Executor | None = None,
) -> RunSummary:
    """Perplexity of every response of the pairwise items ``judge`` judged in ``store``.

    Each item's ``prompt`` / ``response_a`` / ``response_b`` (as the runner stored
    them) are scored under ``backend`` into the store (texts already there are not
    recomputed) and ``judge`` (default: the backend's id) is linked to this model,
    so ``Store.export_pairs`` adds ``ppl_a`` / ``ppl_b`` to the judge's rows. Items
    whose texts the store does not hold count as failed ("text missing in the store").
    """
    if backend.continuation_refusal:
        raise ConfigError(backend.continuation_refusal)
    name = judge or backend.model_id
    item_ids = store.judged_items("pairwise", name)
    if not item_ids:
        present = store.judges("pairwise")
        raise ConfigError(
            f"the store holds no pairwise judgments of judge {name!r} — judges present: "
            f"{', '.join(present) or 'none'}"
        )
    items = store.items("pairwise")
    prompts: list[str] = []
    responses: list[str] = []
    missing = 0
    for item_id in item_ids:
        meta = items.get(item_id, {})
        prompt = meta.get("prompt")
        for side in ("response_a", "response_b"):
            text = meta.get(side)
            if isinstance(prompt, str) and isinstance(text, str):
                prompts.append(prompt)
                responses.append(text)
            else:
                missing += 1
    store.link_perplexities(
        name, model_id=backend.model_id, revision=backend.revision, route=backend.perplexity_route
    )
    _frame, run = perplexities(
        backend,
        prompts,
        responses,
        store=store,
        chunk_size=chunk_size,
        retry=retry,
        progress=progress,
        executor=executor,
    )
    if not missing:
        return run
    return dataclasses.replace(
        run,
        total=run.total + missing,
        failed=run.failed + missing,
        failures={**run.failures, "text missing in the store": missing},
    )


def attach_stored_perplexities(store: Store, pairs: pd.DataFrame) -> pd.DataFrame:
    """``pairs`` with ``ppl_a`` / ``ppl_b`` from the store (see ``Store.attach_perplexities``)."""
    return store.attach_perplexities(pairs)
