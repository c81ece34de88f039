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

Routes:

* **local** — a :class:`~recuse.judging.backends.local.LocalBackend` and its
  ``continuation_logprobs`` primitive (right-padded batches, length bucketing,
  logits only at the scored positions; batched equals one-at-a-time to float
  rounding).
* **OpenAI-compatible server** — :class:`PromptLogprobs` over an
  :class:`~recuse.judging.backends.http.HTTPBackend` on the ``completions``
  endpoint, in one of two modes that return log-probs of the *prompt* tokens:
  ``"echo"`` (``echo=true`` with ``logprobs``; tokens located by ``text_offset``)
  or ``"vllm"`` (vLLM's ``prompt_logprobs``; the prompt head is sent alone to count
  its tokens). Chat-only endpoints cannot return prompt log-probs and are refused.
  Because some servers return wrong prompt log-probs (llama-cpp-python's ``echo``
  gave -9 to -12 per token), the first request is checked against the server's own
  next-token log-probs and a disagreement refuses the server (``verify=True``).

Results are cached in the judgment store's SQLite file (table ``perplexities``),
keyed by a content hash of the model id and revision, the conditioning prompt, the
response and the route; failed rows are retried on the next run.

A judge's perplexities in a store: :func:`judge_perplexities` computes them for
every response of the pairwise items a judge judged in the store and records which
model (id, revision, route) stands for that judge (table ``perplexity_judges``);
:func:`attach_stored_perplexities` then fills ``ppl_a`` / ``ppl_b`` of an exported
``pairs`` table from the cache (``Store.export_pairs`` does it), so the audit's
familiarity section runs on ``recuse judge export`` output. From the command line:
``recuse judge ... --perplexity``.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from recuse.errors import ConfigError, InputError, JudgeError
from recuse.judging.backends.base import Backend, Failure, TransientError
from recuse.judging.protocols import Message, Prompt
from recuse.judging.store import Store, content_key

__all__ = [
    "PERPLEXITY_VERSION",
    "PerplexityRun",
    "PromptLogprobs",
    "add_perplexities",
    "attach_stored_perplexities",
    "judge_perplexities",
    "perplexities",
    "response_prompt",
]

PERPLEXITY_VERSION = "ppl-v1"
PromptLogprobMode = Literal["echo", "vllm"]

RESULT_COLUMNS = ["key", "status", "n_tokens", "sum_logprob", "mean_logprob", "ppl", "reason"]

_TABLE = """
CREATE TABLE IF NOT EXISTS perplexities (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    revision TEXT NOT NULL,
    status TEXT NOT NULL,
    n_tokens INTEGER,
    sum_logprob REAL,
    reason TEXT,
    created_at REAL NOT NULL
)
"""

_JUDGES = """
CREATE TABLE IF NOT EXISTS perplexity_judges (
    judge TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    revision TEXT NOT NULL,
    route TEXT NOT NULL,
    created_at REAL NOT NULL
)
"""


def response_prompt(prompt: str) -> Prompt:
    """The conditioning context of a response: one user turn, assistant turn opened."""
    return Prompt((Message("user", prompt),))


@dataclass(frozen=True)
class PerplexityRun:
    """What :func:`perplexities` did: texts asked for, already cached, computed, failed.

    ``failures`` counts the reasons of the failed texts (reason -> count).
    """

    total: int
    cached: int
    computed: int
    failed: int
    seconds: float
    failures: Mapping[str, int] = field(default_factory=dict)

    def line(self) -> str:
        return (
            f"{self.total} perplexities: {self.cached} already stored, {self.computed} "
            f"computed, {self.failed} failed ({self.seconds:.1f} s)"
        )


def _route(backend: Backend | PromptLogprobs) -> str:
    if isinstance(backend, PromptLogprobs):
        return f"http-{backend.mode}"
    return "local" if hasattr(backend, "continuation_logprobs_sync") else type(backend).__name__


def _check_backend(backend: Backend | PromptLogprobs) -> None:
    from recuse.judging.backends.http import HTTPBackend

    if isinstance(backend, HTTPBackend):
        raise ConfigError(
            "perplexity over an OpenAI-compatible server needs its prompt log-probs: wrap the "
            "backend as PromptLogprobs(backend, mode='echo') (completions with echo) or "
            "mode='vllm' (vLLM prompt_logprobs); chat-only endpoints cannot give them"
        )


def _key(backend: Backend | PromptLogprobs, prompt: Prompt, response: str) -> str:
    return _text_key(backend.model_id, backend.revision, _route(backend), prompt, response)


def _text_key(model_id: str, revision: str, route: str, prompt: Prompt, response: str) -> str:
    return content_key(
        model_id=model_id,
        revision=revision,
        prompt=prompt.canonical() + f"<response>{len(response)}:{response}",
        params={"kind": "perplexity", "version": PERPLEXITY_VERSION, "route": route},
    )


def _row(key: str, status: str, n: int | None, s: float | None, reason: str | None) -> dict:
    ok = status == "ok" and n
    mean = float(s) / n if ok and s is not None and n else math.nan
    return {
        "key": key,
        "status": status,
        "n_tokens": n if n is not None else 0,
        "sum_logprob": float(s) if s is not None else math.nan,
        "mean_logprob": mean,
        "ppl": math.exp(-mean) if ok else math.nan,
        "reason": reason,
    }


def _cached(store: Store, keys: Sequence[str]) -> dict[str, dict]:
    store.conn.execute(_TABLE)
    out: dict[str, dict] = {}
    uniq = sorted(set(keys))
    for start in range(0, len(uniq), 500):
        chunk = uniq[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        for key, status, n, s, reason in store.conn.execute(
            f"SELECT key, status, n_tokens, sum_logprob, reason FROM perplexities "
            f"WHERE key IN ({marks}) AND status = 'ok'",
            chunk,
        ):
            out[key] = _row(key, status, n, s, reason)
    return out


def _save(store: Store, backend: Backend | PromptLogprobs, rows: Sequence[dict]) -> None:
    now = time.time()
    with store.conn:
        store.conn.executemany(
            "INSERT OR REPLACE INTO perplexities "
            "(key, model, revision, status, n_tokens, sum_logprob, reason, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    r["key"],
                    backend.model_id,
                    backend.revision,
                    r["status"],
                    int(r["n_tokens"]),
                    None if math.isnan(r["sum_logprob"]) else r["sum_logprob"],
                    r["reason"],
                    now,
                )
                for r in rows
            ],
        )


async def _continuations(
    backend: Backend | PromptLogprobs, prompts: Sequence[Prompt], texts: Sequence[str]
) -> list[np.ndarray | Failure]:
    return await backend.continuation_logprobs(prompts, texts)


def _compute(
    backend: Backend | PromptLogprobs, prompts: Sequence[Prompt], texts: Sequence[str]
) -> list[np.ndarray | Failure]:
    sync = getattr(backend, "continuation_logprobs_sync", None)
    if sync is not None:
        return list(sync(prompts, texts))
    return asyncio.run(_continuations(backend, prompts, texts))


def perplexities(
    backend: Backend | PromptLogprobs,
    prompts: Sequence[str],
    responses: Sequence[str],
    *,
    store: Store | None = None,
    chunk_size: int = 64,
) -> tuple[pd.DataFrame, PerplexityRun]:
    """Perplexity of ``responses[i]`` given ``prompts[i]`` under ``backend``.

    Returns one row per input (columns ``key, status, n_tokens, sum_logprob,
    mean_logprob, ppl, reason``; ``ppl`` NaN unless ``status == "ok"``) and a
    summary of the run. Identical (prompt, response) inputs are computed once.
    Texts are sorted by length and sent in chunks of ``chunk_size`` (the local
    backend buckets them further under its token budget); with a ``store`` every
    chunk is committed as it finishes, so a killed run resumes where it stopped.
    """
    _check_backend(backend)
    if len(prompts) != len(responses):
        raise ConfigError("give as many prompts as responses")
    for name, seq in (("prompt", prompts), ("response", responses)):
        for i, t in enumerate(seq):
            if not isinstance(t, str):
                raise InputError(
                    f"{name} is not text", row=i + 1, fix="give every text as a string"
                )
    start = time.perf_counter()
    chat = [response_prompt(p) for p in prompts]
    keys = [_key(backend, c, r) for c, r in zip(chat, responses, strict=True)]
    done: dict[str, dict] = _cached(store, keys) if store is not None else {}
    cached = sum(1 for k in dict.fromkeys(keys) if k in done)
    todo_idx = list({k: i for i, k in reversed(list(enumerate(keys))) if k not in done}.values())
    todo_idx.sort(key=lambda i: len(prompts[i]) + len(responses[i]))
    failed = 0
    failures: dict[str, int] = {}
    for s in range(0, len(todo_idx), max(1, chunk_size)):
        idx = todo_idx[s : s + max(1, chunk_size)]
        results = _compute(backend, [chat[i] for i in idx], [responses[i] for i in idx])
        rows = []
        for i, res in zip(idx, results, strict=True):
            if isinstance(res, Failure):
                rows.append(_row(keys[i], "failed", None, None, res.reason))
                failed += 1
            elif len(res) == 0:
                rows.append(_row(keys[i], "failed", 0, None, "the response has no tokens"))
                failed += 1
            elif not np.isfinite(res).all() or (res > 1e-6).any():
                reason = "log-probs are not finite and <= 0"
                rows.append(_row(keys[i], "failed", len(res), None, reason))
                failed += 1
            else:
                rows.append(
                    _row(keys[i], "ok", len(res), float(np.sum(res, dtype=np.float64)), None)
                )
        if store is not None:
            _save(store, backend, rows)
        done.update({r["key"]: r for r in rows})
        for r in rows:
            if r["status"] != "ok":
                failures[str(r["reason"])] = failures.get(str(r["reason"]), 0) + 1
    frame = pd.DataFrame([done[k] for k in keys], columns=RESULT_COLUMNS)
    run = PerplexityRun(
        total=len(dict.fromkeys(keys)),
        cached=cached,
        computed=len(todo_idx) - failed,
        failed=failed,
        seconds=time.perf_counter() - start,
        failures=failures,
    )
    return frame, run


def add_perplexities(
    pairs: pd.DataFrame,
    backend: Backend | PromptLogprobs,
    *,
    judge: str | None = None,
    store: Store | None = None,
    chunk_size: int = 64,
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


# --- a judge's perplexities in a judgment store ----------------------------------------------


def judge_perplexities(
    store: Store,
    backend: Backend | PromptLogprobs,
    *,
    judge: str | None = None,
    chunk_size: int = 64,
) -> PerplexityRun:
    """Perplexity of every response of the pairwise items ``judge`` judged in ``store``.

    Each item's ``prompt`` / ``response_a`` / ``response_b`` (as the runner stored
    them) are scored under ``backend`` into the store's cache (texts already there
    are not recomputed) and ``judge`` (default: the backend's id) is recorded as
    standing for this model, so :func:`attach_stored_perplexities` (and with it
    ``Store.export_pairs``) adds ``ppl_a`` / ``ppl_b`` to the judge's rows. Items
    whose texts the store does not hold count as failed ("text missing in the store").
    """
    _check_backend(backend)
    name = judge or backend.model_id
    item_ids = [
        str(r[0])
        for r in store.conn.execute(
            "SELECT DISTINCT item_id FROM judgments WHERE kind = 'pairwise' AND judge = ? "
            "ORDER BY item_id",
            (name,),
        )
    ]
    if not item_ids:
        present = [
            str(r[0])
            for r in store.conn.execute(
                "SELECT DISTINCT judge FROM judgments WHERE kind = 'pairwise' ORDER BY judge"
            )
        ]
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
    store.conn.execute(_JUDGES)
    with store.conn:
        store.conn.execute(
            "INSERT OR REPLACE INTO perplexity_judges (judge, model, revision, route, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (name, backend.model_id, backend.revision, _route(backend), time.time()),
        )
    _frame, run = perplexities(backend, prompts, responses, store=store, chunk_size=chunk_size)
    if not missing:
        return run
    failures = {**run.failures, "text missing in the store": missing}
    return PerplexityRun(
        total=run.total + missing,
        cached=run.cached,
        computed=run.computed,
        failed=run.failed + missing,
        seconds=run.seconds,
        failures=failures,
    )


def attach_stored_perplexities(store: Store, pairs: pd.DataFrame) -> pd.DataFrame:
    """``pairs`` with ``ppl_a`` / ``ppl_b`` from the store's cache, where it has them.

    For the rows of every judge :func:`judge_perplexities` recorded in ``store``, the
    perplexity of each response given the row's prompt under that judge's model
    (left as it was — NaN in an export — where it was not computed or failed).
    Without such a judge among the rows, ``pairs`` comes back unchanged (no
    columns added).
    """
    has = store.conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'perplexity_judges'"
    ).fetchone()
    need = {"judge", "prompt", "response_a", "response_b"}
    if has is None or not need <= set(pairs.columns):
        return pairs
    models = {
        str(j): (str(m), str(r), str(route))
        for j, m, r, route in store.conn.execute(
            "SELECT judge, model, revision, route FROM perplexity_judges"
        )
    }
    judges = pairs["judge"].astype(object).where(pairs["judge"].notna(), None)
    mine = judges.isin(list(models)).to_numpy()
    if not mine.any():
        return pairs
    out = pairs.copy()
    for col in ("ppl_a", "ppl_b"):
        if col not in out.columns:
            out[col] = np.nan
    positions = np.flatnonzero(mine)
    keys: dict[tuple[int, str], str] = {}
    for i in positions:
        model, revision, route = models[str(judges.iloc[i])]
        prompt = out["prompt"].iloc[i]
        if not isinstance(prompt, str):
            continue
        chat = response_prompt(prompt)
        for side in ("a", "b"):
            text = out[f"response_{side}"].iloc[i]
            if isinstance(text, str):
                keys[(int(i), side)] = _text_key(model, revision, route, chat, text)
    found = _cached(store, list(keys.values()))
    for side in ("a", "b"):
        values = out[f"ppl_{side}"].to_numpy(dtype=float, copy=True)
        for i in positions:
            key = keys.get((int(i), side))
            if key is not None and key in found:
                values[i] = found[key]["ppl"]
        out[f"ppl_{side}"] = values
    return out


# --- OpenAI-compatible servers -------------------------------------------------------------


class PromptLogprobs:
    """Continuation log-probs from an OpenAI-compatible ``completions`` endpoint.

    ``mode="echo"``: ``echo=true``, ``logprobs``, ``max_tokens=1``; the response's
    tokens are those whose ``text_offset`` falls inside the response text.
    ``mode="vllm"``: vLLM's ``prompt_logprobs=0`` on the full text and on the prompt
    head alone (its token count marks where the response starts; the head's token
    ids must be a prefix of the full text's, else the item fails).

    The prompt is rendered as the backend renders chat prompts (ChatML or plain).
    With ``verify`` the first item is checked: the prompt log-prob of the response's
    first token must match the server's own next-token log-prob for the head
    (within ``tolerance`` nats), else :class:`JudgeError` refuses the server.
    """

    def __init__(
        self,
        backend: Any,
        *,
        mode: PromptLogprobMode,
        verify: bool = True,
        tolerance: float = 0.05,
    ) -> None:
        from recuse.judging.backends.http import HTTPBackend

        if not isinstance(backend, HTTPBackend):
            raise ConfigError("PromptLogprobs wraps an HTTPBackend (an OpenAI-compatible server)")
        if backend.endpoint != "completions":
            raise ConfigError(
                "chat endpoints return log-probs of generated tokens only, not of the prompt, "
                "so perplexity cannot be computed through them — use the server's completions "
                "endpoint (endpoint='completions') with mode='echo' or mode='vllm'"
            )
        if mode not in ("echo", "vllm"):
            raise ConfigError(f"mode must be 'echo' or 'vllm'; got {mode!r}")
        self.backend = backend
        self.mode: PromptLogprobMode = mode
        self.model_id: str = backend.model_id
        self.revision: str = backend.revision
        self.verify = verify
        self.tolerance = tolerance
        self._verified = False

    def _render(self, prompt: Prompt) -> str:
        from recuse.judging.backends.http import render_chatml, render_plain

        render = render_chatml if self.backend.chat_format == "chatml" else render_plain
        return render(prompt)

    async def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        body = {"model": self.backend.model, "temperature": 0, **body}
        return await self.backend._post("/completions", body)

    async def _echo(self, head: str, response: str) -> np.ndarray | Failure:
        text = head + response
        data = await self._post({"prompt": text, "echo": True, "logprobs": 1, "max_tokens": 1})
        lp = data["choices"][0].get("logprobs")
        if not isinstance(lp, dict):
            raise TransientError("response has no logprobs")
        tokens = lp.get("tokens")
        values = lp.get("token_logprobs")
        offsets = lp.get("text_offset")
        if not (
            isinstance(tokens, list) and isinstance(values, list) and isinstance(offsets, list)
        ):
            return Failure(
                "the server's echo answer has no tokens/token_logprobs/text_offset — "
                "it does not return prompt log-probs"
            )
        if not len(tokens) == len(values) == len(offsets):
            return Failure("the server's echo answer has lists of different lengths")
        offs = [int(o) for o in offsets]
        if len(head) not in offs:
            return Failure("a token spans the end of the prompt and the start of the response")
        first = offs.index(len(head))
        end = first
        while end < len(offs) and offs[end] < len(text):
            end += 1
        if any(b < a for a, b in itertools.pairwise(offs)):
            return Failure("the server's text offsets go backwards")
        span = values[first:end]
        if any(v is None for v in span):
            return Failure("the server left some prompt log-probs empty")
        return np.asarray(span, dtype=np.float64)

    async def _prompt_logprobs(self, text: str) -> list[tuple[int, float]] | Failure:
        data = await self._post({"prompt": text, "prompt_logprobs": 0, "max_tokens": 1})
        entries = data["choices"][0].get("prompt_logprobs")
        if entries is None:
            entries = data.get("prompt_logprobs")
        if not isinstance(entries, list) or not entries:
            return Failure(
                "the server returned no prompt_logprobs — it is not vLLM or does not "
                "support them; use mode='echo' or a local backend"
            )
        out: list[tuple[int, float]] = []
        for e in entries[1:]:  # the first prompt token has no log-prob
            if not isinstance(e, dict) or len(e) != 1:
                return Failure("prompt_logprobs entries must hold exactly the prompt token")
            ((tid, info),) = e.items()
            lp = info.get("logprob") if isinstance(info, dict) else info
            if lp is None:
                return Failure("the server left some prompt log-probs empty")
            out.append((int(tid), float(lp)))
        return out

    async def _vllm(self, head: str, response: str) -> np.ndarray | Failure:
        full = await self._prompt_logprobs(head + response)
        if isinstance(full, Failure):
            return full
        part = await self._prompt_logprobs(head)
        if isinstance(part, Failure):
            return part
        n_head = len(part)
        if [t for t, _ in full[:n_head]] != [t for t, _ in part]:
            return Failure("a token spans the end of the prompt and the start of the response")
        return np.asarray([v for _, v in full[n_head:]], dtype=np.float64)

    async def _verify(self, head: str) -> None:
        """Refuse a server whose prompt log-probs disagree with its own generation.

        The server generates one token greedily after ``head`` with its log-prob;
        the same token appended to ``head`` is then scored as a prompt token. The
        two numbers are the same quantity and must agree within ``tolerance``.
        """
        data = await self._post({"prompt": head, "logprobs": 1, "max_tokens": 1})
        choice = data["choices"][0]
        token = choice.get("text")
        lp = choice.get("logprobs")
        gen: float | None = None
        if isinstance(lp, dict):
            values = lp.get("token_logprobs")
            if isinstance(values, list) and values and values[0] is not None:
                gen = float(values[0])
        if not isinstance(token, str) or not token or gen is None:
            raise JudgeError(
                "cannot verify the server's prompt log-probs: it returned no log-prob for a "
                "generated token — compute perplexity with a local backend"
            )
        if self.mode == "echo":
            scored = await self._echo(head, token)
        else:
            scored = await self._vllm(head, token)
        if isinstance(scored, Failure) or len(scored) != 1:
            reason = scored.reason if isinstance(scored, Failure) else "token count differs"
            raise JudgeError(
                f"cannot verify the server's prompt log-probs ({reason}) — compute "
                "perplexity with a local backend"
            )
        if abs(float(scored[0]) - gen) > self.tolerance:
            raise JudgeError(
                f"the server's prompt log-prob of a token ({float(scored[0]):.3f}) disagrees "
                f"with the log-prob it gave when generating that token ({gen:.3f}) — its "
                "prompt log-probs are wrong; compute perplexity with a local backend"
            )

    async def _one(self, prompt: Prompt, response: str) -> np.ndarray | Failure:
        head = self._render(prompt)
        if not response:
            return np.zeros(0)
        try:
            if self.mode == "echo":
                return await self._echo(head, response)
            return await self._vllm(head, response)
        except _rejected() as exc:
            return Failure(str(exc))

    async def continuation_logprobs(
        self, prompts: Sequence[Prompt], continuations: Sequence[str]
    ) -> list[np.ndarray | Failure]:
        """Log-prob of each token of ``continuations[i]`` after ``prompts[i]``."""
        limit = asyncio.Semaphore(max(1, self.backend.concurrency))
        try:
            if self.verify and not self._verified and prompts:
                await self._verify(self._render(prompts[0]))
                self._verified = True

            async def one(p: Prompt, c: str) -> np.ndarray | Failure:
                async with limit:
                    return await self._retrying(p, c)

            items = zip(prompts, continuations, strict=True)
            return list(await asyncio.gather(*(one(p, c) for p, c in items)))
        finally:
            await self.backend.aclose()

    async def _retrying(self, prompt: Prompt, response: str) -> np.ndarray | Failure:
        from recuse.judging.runner import RetryPolicy

        policy = RetryPolicy()
        for attempt in range(1, policy.max_attempts + 1):
            try:
                return await self._one(prompt, response)
            except TransientError as exc:
                if attempt == policy.max_attempts:
                    return Failure(f"gave up after {attempt} attempts: {exc.reason}")
                await asyncio.sleep(policy.delay(attempt, exc.retry_after))
        return Failure("not run")  # pragma: no cover


def _rejected() -> type[Exception]:
    from recuse.judging.backends.http import _PromptRejected

    return _PromptRejected
