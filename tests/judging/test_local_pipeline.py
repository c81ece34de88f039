"""The local backend's host side on a GPU, checked on the CPU: token ids straight from
the fast tokenizer's Rust core (:meth:`LocalBackend._tokenize`), a pass's numbers read
for all rows at once (:func:`local._distributions`), and when a second call in flight
starts preparing (:attr:`LocalBackend.prepare_after_launch`)."""

from __future__ import annotations

import asyncio
import copy
import math
import signal
import threading
import time
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recuse.judging.protocols import Message, Prompt, is_verdict_token

torch = pytest.importorskip("torch")

from recuse.judging.backends import local  # noqa: E402
from recuse.judging.backends.local import LocalBackend  # noqa: E402

# --- token ids from the Rust core --------------------------------------------------------

#: text a user may send: special-token text, emoji (a skin tone, a flag, a ZWJ family),
#: NUL, combining marks (e + acute, n + tilde, a Devanagari conjunct), bare whitespace
ODD_TEXTS = [
    "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
    "before <|endoftext|> after<|endoftext|>",
    "",
    "👍🏽 🇫🇷 👨\u200d👩\u200d👧 ✨",
    "a\x00b\x00\x00c",
    "e\u0301 n\u0303 \u0915\u094d\u0937 \u0301",
    "  \n\t  ",
    "Which answer is better? [[A]] or [[B]]",
]


def _prompt() -> Prompt:
    """A prompt whose chat-template rendering holds every odd text in a message."""
    return Prompt(
        (
            Message("system", "You judge. <|im_end|>"),
            Message("user", "Q: " + " | ".join(ODD_TEXTS) + " <|im_start|>assistant\nA"),
        ),
        prefix="[[",
    )


@pytest.fixture(scope="module")
def smollm2() -> LocalBackend:
    """The embedded judge (SmolLM2-135M-Instruct), as the other SmolLM2 tests load it."""
    from recuse.errors import MissingDependencyError
    from recuse.judging.models import default_judge

    try:
        model = default_judge()
    except MissingDependencyError as exc:  # pragma: no cover - CI installs it
        pytest.skip(str(exc))
    return LocalBackend.load(model.path, model_id=model.model_id, revision=model.revision)


@pytest.fixture(scope="module")
def tiny(tiny_model_dir: Path) -> LocalBackend:
    return LocalBackend.load(tiny_model_dir, model_id="tiny", batch_size=8)


def _with_bos(backend: LocalBackend) -> LocalBackend:
    """The backend's model with a copy of its tokenizer that adds a BOS token where
    special tokens are added: add_special_tokens then changes the ids."""
    from tokenizers import processors

    tok = copy.deepcopy(backend.tokenizer)
    bos = (tok.bos_token, tok.bos_token_id)
    tok._tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{bos[0]} $A", special_tokens=[bos]
    )
    return LocalBackend(backend.model, tok, model_id="bos", batch_size=8)


def _texts(backend: LocalBackend) -> list[str]:
    return [backend.render(_prompt()), *ODD_TEXTS, backend.render(_prompt()) * 3]


@pytest.mark.parametrize("which", ["smollm2", "tiny with BOS"])
def test_raw_ids_are_transformers_ids(
    which: str, request: pytest.FixtureRequest, tiny: LocalBackend
) -> None:
    backend = request.getfixturevalue("smollm2") if which == "smollm2" else _with_bos(tiny)
    tok = backend.tokenizer
    assert backend.has_template and backend._raw_tokenizer() is tok._tokenizer
    texts = _texts(backend)
    rendered = texts[0]
    assert "<|endoftext|>" in rendered and "\x00" in rendered and "👨" in rendered
    for add in (True, False):
        want = tok(texts, add_special_tokens=add)["input_ids"]
        # template=True: the rendered template holds its special tokens, none added
        got = backend._tokenize(texts, template=not add)
        assert got == want
        assert all(type(ids) is list and all(type(t) is int for t in ids) for ids in got)
        # one at a time too: a batch of one pads nothing either
        assert [backend._tokenize([t], template=not add)[0] for t in texts] == want
    # the special-token text a user wrote reads as the special token, as transformers reads it
    im_start = tok.convert_tokens_to_ids("<|im_start|>")
    assert im_start in backend._tokenize([ODD_TEXTS[0]], template=True)[0]
    with_bos, without = (backend._tokenize(texts, template=t) for t in (False, True))
    if which == "tiny with BOS":  # the case where add_special_tokens shows
        assert with_bos == [[tok.bos_token_id, *ids] for ids in without]
        assert with_bos[3] == [tok.bos_token_id]  # the empty string
    assert without[3] == []
    assert backend._tokenize([], template=True) == []
    # and through the prompt API, which renders and then tokenizes
    assert backend.encode(_prompt()) == tok(rendered, add_special_tokens=False)["input_ids"]


def test_raw_ids_are_not_used_where_the_rust_tokenizer_would_differ(
    smollm2: LocalBackend,
) -> None:
    text = "one two three four five six seven eight nine ten eleven twelve"
    reference = smollm2.tokenizer
    want = reference([text, ""], add_special_tokens=True)["input_ids"]
    assert len(want[0]) > 8

    # truncation set on the Rust tokenizer: transformers' plain call turns it off
    tok = copy.deepcopy(reference)
    tok._tokenizer.enable_truncation(8)
    truncated = LocalBackend(smollm2.model, tok, model_id="t")
    assert truncated._raw_tokenizer() is None
    assert [len(e.ids) for e in tok._tokenizer.encode_batch([text])] == [8]  # it would cut
    assert truncated._tokenize([text, ""], template=False) == want  # not cut
    assert tok._tokenizer.truncation is None  # transformers turned it off ...
    assert truncated._raw_tokenizer() is tok._tokenizer  # ... so the Rust core is safe now

    # padding set on the Rust tokenizer
    tok = copy.deepcopy(reference)
    tok._tokenizer.enable_padding(length=40, pad_id=smollm2.pad_id)
    padded = LocalBackend(smollm2.model, tok, model_id="p")
    assert padded._raw_tokenizer() is None
    assert padded._tokenize([text, ""], template=False) == want

    # split_special_tokens: transformers reads "<|im_start|>" as text, the core not yet
    tok = copy.deepcopy(reference)
    tok.split_special_tokens = True
    assert not tok._tokenizer.encode_special_tokens
    split = LocalBackend(smollm2.model, tok, model_id="s")
    assert split._raw_tokenizer() is None
    pieces = split._tokenize([ODD_TEXTS[0]], template=True)
    assert pieces == tok([ODD_TEXTS[0]], add_special_tokens=False)["input_ids"]
    whole = smollm2._tokenize([ODD_TEXTS[0]], template=True)
    assert len(pieces[0]) > len(whole[0])  # split: each special token in several pieces
    assert tok._tokenizer.encode_special_tokens  # transformers set it on the core
    assert split._raw_tokenizer() is tok._tokenizer
    assert split._tokenize([ODD_TEXTS[0]], template=True) == pieces

    # turned off by hand
    plain = LocalBackend(smollm2.model, reference, model_id="r")
    plain.raw_ids = False
    assert plain._raw_tokenizer() is None
    texts = _texts(smollm2)
    for add in (True, False):
        ids = plain._tokenize(texts, template=not add)
        assert ids == smollm2._tokenize(texts, template=not add)
        assert ids == reference(texts, add_special_tokens=add)["input_ids"]


# --- a pass's numbers, all rows at once ----------------------------------------------------


def test_distributions_by_hand() -> None:
    vocab = ["x", "A", "y", "A", "z"]  # ids 1 and 3 are one text
    ids = np.array([[3, 1, 1, 9, 0], [4, 2, 4, 5, 3]])
    values = np.array(
        [[-2.0, -1.0, -7.0, -4.0, -0.5], [-0.1, -0.2, -0.3, -0.4, -0.6]], dtype=np.float32
    )
    rows = local._distributions(ids, values, vocab)
    both = math.log(math.exp(-1.0) + math.exp(-2.0))
    # row 0: id 1 twice (its first column's value, -1), ids 1 and 3 summed, 9 past the vocabulary
    assert list(rows[0]) == ["x", "A", "<id 9>"]  # ascending ids: 0, 1 (and 3), 9
    assert rows[0]["x"] == -0.5 and rows[0]["<id 9>"] == -4.0
    assert rows[0]["A"] == pytest.approx(both, rel=1e-12, abs=0)
    # row 1: id 4 twice (-0.1, not -0.3); id 5 is the first past the vocabulary
    assert list(rows[1]) == ["y", "A", "z", "<id 5>"]
    assert rows[1]["z"] == pytest.approx(-0.1, rel=1e-7)
    assert rows[1]["A"] == pytest.approx(-0.6, rel=1e-7)
    assert rows[1]["<id 5>"] == pytest.approx(-0.4, rel=1e-7)
    assert all(type(v) is float for row in rows for v in row.values())
    # no columns (no top k, nothing selected): an empty distribution per row
    none = np.zeros((3, 0), dtype=np.int64)
    assert local._distributions(none, none.astype(np.float32), vocab) == [{}, {}, {}]
    no_rows = np.zeros((0, 4), dtype=np.int64)
    assert local._distributions(no_rows, no_rows.astype(np.float32), vocab) == []


def _old_distribution(
    top_ids: np.ndarray | None,
    top_vals: np.ndarray | None,
    extra: np.ndarray,
    sel_vals: np.ndarray | None,
    vocab: Sequence[str],
) -> dict[str, float]:
    """One row as the code before _distributions read it (union1d and searchsorted per
    row; a selected id's value over its top-k value)."""
    if top_ids is not None and top_vals is not None:
        ids = np.union1d(top_ids, extra)
        values = np.empty(len(ids), dtype=np.float64)
        values[np.searchsorted(ids, top_ids)] = top_vals
    else:
        ids, values = extra, np.empty(len(extra), dtype=np.float64)
    if sel_vals is not None:
        values[np.searchsorted(ids, extra)] = sel_vals
    dist: dict[str, float] = {}
    for tid, v in zip(ids.tolist(), values.tolist(), strict=True):
        text = vocab[tid] if tid < len(vocab) else f"<id {tid}>"
        dist[text] = float(np.logaddexp(dist[text], v)) if text in dist else v
    return dist


@pytest.mark.parametrize(("k", "n_selected"), [(7, 9), (0, 9), (7, 0), (60, 9)])
def test_distributions_match_the_per_row_reading(k: int, n_selected: int) -> None:
    """Rows laid out as next_token_logprobs lays them (the selected ids, then the top
    k): the same dicts, keys in the same order, as reading row by row."""
    rng = np.random.default_rng(7)
    rows, width = 6, 60
    vocab = [f"t{rng.integers(0, 20)}" for _ in range(50)]  # repeated texts; ids 50+ past it
    logp = np.log(rng.dirichlet(np.ones(width), size=rows)).astype(np.float32)
    logp[:, 3] = np.log(0.5)  # id 3 tops every row, and is selected (below)
    extra = np.sort(rng.choice(width, size=n_selected, replace=False)).astype(np.int64)
    if n_selected:
        extra[0] = 3
    top_ids = np.argsort(-logp, axis=1, kind="stable")[:, :k]
    top_vals = np.take_along_axis(logp, top_ids, axis=1)
    sel_vals = logp[:, extra]
    ids = np.concatenate([np.broadcast_to(extra, (rows, len(extra))), top_ids], axis=1)
    values = np.concatenate([sel_vals, top_vals], axis=1)
    got = local._distributions(ids, values, vocab)
    for r in range(rows):
        want = _old_distribution(
            top_ids[r] if k else None,
            top_vals[r] if k else None,
            extra,
            sel_vals[r] if n_selected else None,
            vocab,
        )
        assert list(got[r].items()) == list(want.items())
    if k and n_selected:
        assert any(3 in row for row in top_ids)  # the overlap happened
        assert any(t.startswith("<id ") for t in got[0])  # and ids past the vocabulary


# --- the second call prepares once the first has queued its last wave ------------------------


_Event = tuple[int, str, float]  # thread, what, when


def _recording(backend: LocalBackend) -> list[_Event]:
    """Wrap _pad, _to_device and _hidden to record (thread, event, time). The first
    call's first pass waits until a second call is in the backend; its later passes
    start 20 ms late, time in which a second call allowed to prepare would pad."""
    events: list[_Event] = []
    first: list[int] = []
    pad, to_device, hidden = backend._pad, backend._to_device, backend._hidden

    def padded(self: LocalBackend, seqs: Any) -> Any:
        events.append((threading.get_ident(), "pad", time.perf_counter()))
        return pad(seqs)

    def copied(self: LocalBackend, *arrays: Any) -> Any:
        events.append((threading.get_ident(), "to_device", time.perf_counter()))
        return to_device(*arrays)

    def run(self: LocalBackend, ids: Any) -> Any:
        me = threading.get_ident()
        if not first:
            first.append(me)
            deadline = time.monotonic() + 5
            while self._calls < 2:
                assert time.monotonic() < deadline, "the second call never came in"
                time.sleep(0.001)
        elif me == first[0]:
            time.sleep(0.02)
        events.append((me, "hidden", time.perf_counter()))
        return hidden(ids)

    backend._pad = types.MethodType(padded, backend)  # type: ignore[method-assign]
    backend._to_device = types.MethodType(copied, backend)  # type: ignore[method-assign]
    backend._hidden = types.MethodType(run, backend)  # type: ignore[method-assign]
    return events


async def _two_calls(
    backend: LocalBackend, calls: list[list[Prompt]], events: list[_Event]
) -> list[list[dict[str, float]]]:
    """Two calls in flight, the second sent once the first has padded a pass."""
    first = asyncio.ensure_future(
        backend.next_token_logprobs(calls[0], top_k=5, select=is_verdict_token)
    )
    deadline = time.monotonic() + 5
    while not any(what == "pad" for _, what, _ in events):
        assert time.monotonic() < deadline and not first.done()
        await asyncio.sleep(0.001)
    second = asyncio.ensure_future(
        backend.next_token_logprobs(calls[1], top_k=5, select=is_verdict_token)
    )
    out = [await first, await second]
    assert all(type(d) is dict for dists in out for d in dists)
    return out  # type: ignore[return-value]


def _calls() -> list[list[Prompt]]:
    """Two calls of different prompts, each sorted by size as the runner sends them."""
    words = "the quick brown fox jumps over the lazy dog and judges fairly".split()
    a = [
        Prompt((Message("user", f"Which is better {k}? " + " ".join(words[: 1 + k % 11])),))
        for k in range(30)
    ]
    b = [Prompt((Message("user", f"Answer {k}: " + "A or B. " * (1 + k % 4)),)) for k in range(6)]
    return [sorted(a, key=local._chars), sorted(b, key=local._chars)]


@pytest.mark.parametrize("after_launch", [True, False])
def test_the_second_call_prepares_after_the_first_queued_its_last_wave(
    tiny: LocalBackend, after_launch: bool
) -> None:
    calls = _calls()
    serial = LocalBackend(tiny.model, tiny.tokenizer, model_id="s", pipeline=False)
    want = [serial.next_token_logprobs_sync(c, top_k=5, select=is_verdict_token) for c in calls]
    lengths = [len(tiny.encode(p)) for p in calls[0]]
    piped = LocalBackend(tiny.model, tiny.tokenizer, model_id="p", pipeline=True,
                         max_batch_tokens=2 * max(lengths))  # fmt: skip
    assert piped.concurrency == 2 and piped.prepare_after_launch  # the default
    piped.prepare_after_launch = after_launch
    waves = piped._waves([piped._size(p) for p in calls[0]])
    assert len(waves) >= 3 and len(piped._buckets(lengths)) >= 5  # several passes, waves
    events = _recording(piped)
    got = asyncio.run(_two_calls(piped, calls, events))

    threads = list(dict.fromkeys(t for t, what, _ in events if what == "pad"))
    assert len(threads) == 2  # each call padded on its own worker thread
    a, b = threads
    a_hidden = [i for i, (t, what, _) in enumerate(events) if t == a and what == "hidden"]
    b_pads = [i for i, (t, what, _) in enumerate(events) if t == b and what == "pad"]
    assert len(a_hidden) == len(piped._buckets(lengths)) and b_pads
    if after_launch:
        # its first padding, in order and in time, after the first call's last pass
        assert b_pads[0] > a_hidden[-1]
        assert events[b_pads[0]][2] > events[a_hidden[-1]][2]
        # nor copied anything to the device before (the selected ids: the first call's)
        b_copies = [i for i, (t, what, _) in enumerate(events) if t == b and what == "to_device"]
        assert min(b_copies) > a_hidden[-1]
        # and the second call's own passes after the first's: one call on the device
        b_hidden = [i for i, (t, what, _) in enumerate(events) if t == b and what == "hidden"]
        assert min(b_hidden) > max(a_hidden)
    # before or after the first's last pass: the numbers are the same either way
    for dists, serial_dists in zip(got, want, strict=True):
        for d, s in zip(dists, serial_dists, strict=True):
            assert isinstance(s, dict) and list(d) == list(s)
            np.testing.assert_allclose(list(d.values()), list(s.values()), rtol=0, atol=1e-5)
    other = LocalBackend(tiny.model, tiny.tokenizer, model_id="o", pipeline=True,
                         max_batch_tokens=piped.max_batch_tokens)  # fmt: skip
    other.prepare_after_launch = not after_launch
    assert asyncio.run(_two_calls(other, calls, _recording(other))) == got  # to the bit


def test_a_call_that_starts_while_another_runs_is_cut_into_waves_with_busy_in_waves(
    tiny: LocalBackend,
) -> None:
    """``busy_in_waves``: the second call (30 prompts, several waves' worth) queues its
    first pass before it pads its last one; off (the default) it pads all first. The
    numbers are a serial run's either way."""
    calls = _calls()
    calls = [calls[0], calls[0][::-1][:1] + calls[0][:-1]]  # the second as long as the first
    calls[1] = sorted(calls[1], key=local._chars)
    serial = LocalBackend(tiny.model, tiny.tokenizer, model_id="s", pipeline=False)
    want = [serial.next_token_logprobs_sync(c, top_k=5, select=is_verdict_token) for c in calls]
    budget = 2 * max(len(tiny.encode(p)) for p in calls[0])
    order = {}
    for split in (True, False):
        piped = LocalBackend(tiny.model, tiny.tokenizer, model_id="p", pipeline=True,
                             max_batch_tokens=budget)  # fmt: skip
        assert piped.busy_in_waves is False  # the default
        piped.busy_in_waves = split
        events = _recording(piped)
        got = asyncio.run(_two_calls(piped, calls, events))
        b = list(dict.fromkeys(t for t, what, _ in events if what == "pad"))[1]
        b_pads = [i for i, (t, what, _) in enumerate(events) if t == b and what == "pad"]
        b_hidden = [i for i, (t, what, _) in enumerate(events) if t == b and what == "hidden"]
        order[split] = min(b_hidden) < max(b_pads)  # a pass queued before its last padding
        for dists, serial_dists in zip(got, want, strict=True):
            for d, s in zip(dists, serial_dists, strict=True):
                assert isinstance(s, dict) and list(d) == list(s)
                np.testing.assert_allclose(list(d.values()), list(s.values()), rtol=0, atol=1e-5)
    assert order == {True: True, False: False}


def test_raw_ids_only_from_a_tokenizer_class_that_encodes_as_the_base_one() -> None:
    """A subclass of the fast tokenizer that overrides an encoding method (Code Llama's
    does, for infilling) may give other ids than its Rust core: the raw path is not
    taken for it; a plain subclass, and the base class, take it."""
    from transformers.models.code_llama.tokenization_code_llama import CodeLlamaTokenizer

    from recuse.judging.backends.local import _plain_fast

    base = CodeLlamaTokenizer.__mro__[1]  # transformers' fast base class

    class Plain(base):  # type: ignore[misc, valid-type]
        pass

    class OwnWay(base):  # type: ignore[misc, valid-type]
        def _encode_plus(self, *args: object, **kwargs: object) -> object:
            return None

    class BelowOwnWay(OwnWay):
        pass

    assert _plain_fast(object.__new__(base))
    assert _plain_fast(object.__new__(Plain))
    assert not _plain_fast(object.__new__(OwnWay))
    assert not _plain_fast(object.__new__(BelowOwnWay))
    assert not _plain_fast(object.__new__(CodeLlamaTokenizer))
    assert not _plain_fast(object())  # not a transformers tokenizer at all


# --- a stopped call ------------------------------------------------------------------------


def test_a_call_stopped_before_it_began_prepares_nothing(tiny: LocalBackend) -> None:
    """Ctrl-C (the calls cancelled) while the first of three calls runs its first pass:
    the second waits to prepare, the third for a thread. Neither renders, tokenizes or
    pads its prompts once stopped (before, each prepared its whole call, then stopped at
    the device); the first stops before its next wave. Nothing is left counted: a later
    call runs."""
    calls = [*_calls(), _calls()[1][::-1]]
    lengths = [len(tiny.encode(p)) for p in calls[0]]
    piped = LocalBackend(tiny.model, tiny.tokenizer, model_id="p", pipeline=True,
                         max_batch_tokens=2 * max(lengths))  # fmt: skip
    assert len(piped._waves([piped._size(p) for p in calls[0]])) >= 3
    tokenized: list[tuple[threading.Event | None, bool]] = []  # the call's stop, set?
    first_stop: list[threading.Event] = []
    in_pass, cancelled = threading.Event(), threading.Event()
    tokenize, hidden = piped._tokenize, piped._hidden

    def recorded(self: LocalBackend, texts: list[str], template: bool) -> list[list[int]]:
        stop = getattr(self._local, "stop", None)
        tokenized.append((stop, stop is not None and stop.is_set()))
        return tokenize(texts, template)

    def held(self: LocalBackend, ids: Any) -> Any:
        if not first_stop:  # the first call's first pass: held until all are cancelled
            first_stop.append(self._local.stop)
            deadline = time.monotonic() + 10
            while self._calls < 2:
                assert time.monotonic() < deadline, "the second call never came in"
                time.sleep(0.001)
            in_pass.set()
            assert cancelled.wait(10)
        return hidden(ids)

    piped._tokenize = types.MethodType(recorded, piped)  # type: ignore[method-assign]
    piped._hidden = types.MethodType(held, piped)  # type: ignore[method-assign]

    async def stopped() -> list[asyncio.Task[Any]]:
        tasks = [asyncio.ensure_future(piped.next_token_logprobs(c, top_k=5)) for c in calls]
        deadline = time.monotonic() + 10
        while not in_pass.is_set():
            assert time.monotonic() < deadline and not any(t.done() for t in tasks)
            await asyncio.sleep(0.001)
        for t in tasks:
            t.cancel()
        await asyncio.sleep(0.05)  # each call's stop is set (its task is cancelled)
        cancelled.set()
        _done, pending = await asyncio.wait(tasks, timeout=30)
        assert not pending, "a stopped call never ended"
        return tasks

    tasks = asyncio.run(stopped())
    assert all(t.cancelled() for t in tasks)
    stops = {id(stop) for stop, _ in tokenized}
    assert len(stops) == 1 and first_stop and id(first_stop[0]) in stops  # the first only
    # and that one, once stopped, prepared at most the wave it was preparing (one batch)
    assert sum(was_set for _, was_set in tokenized) <= 1
    assert piped._calls == piped._preparing == 0
    cancelled.set()
    later = piped.next_token_logprobs_sync(calls[1], top_k=5)
    assert all(type(d) is dict for d in later)


def test_raw_ids_not_from_a_class_that_sets_its_input_mode_for_each_call(
    tiny: LocalBackend,
) -> None:
    """MBart's (and NLLB's) tokenizer puts its source language's tokens on the Rust core
    at every call (``_switch_to_input_mode``): a call for target text that failed midway
    (or ``set_tgt_lang_special_tokens``) leaves the target language's there, which the
    core alone would add. transformers' call's ids, not the core's."""
    from transformers.models.mbart.tokenization_mbart import MBartTokenizer
    from transformers.models.nllb.tokenization_nllb import NllbTokenizer

    from recuse.judging.backends.local import _plain_fast

    tok = MBartTokenizer(src_lang="en_XX", tgt_lang="ro_RO")
    backend = LocalBackend(tiny.model, tok, model_id="mbart")
    texts = ["hello there", "a b c"]
    src, tgt = (tok.convert_tokens_to_ids(lang) for lang in ("en_XX", "ro_RO"))
    with pytest.raises(ValueError):
        tok(text_target=[1, 2])  # not text: raised once the core took the target's tokens
    rust: Any = tok._tokenizer
    core = [e.ids for e in rust.encode_batch(texts, add_special_tokens=True)]
    assert {ids[-1] for ids in core} == {tgt}  # what the core alone would give
    got = backend._tokenize(texts, template=False)
    want = tok(texts, add_special_tokens=True)["input_ids"]
    assert got == want and {ids[-1] for ids in want} == {src}
    assert not _plain_fast(tok) and not _plain_fast(object.__new__(NllbTokenizer))


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="POSIX: a signal to a thread")
def test_a_run_stopped_by_ctrl_c_ends_after_its_calls_in_flight(
    tiny_model_dir: Path, tmp_path: Path, shared_data: Path
) -> None:
    """Ctrl-C during a pass of a pipelined backend's run: the run's task is cancelled;
    its gather of the calls ends as soon as one call waiting for its turn ends
    cancelled, and the runner then cancels every call once more. A call in flight
    still waits for its thread to stop (before its next wave): the run ends after it,
    as the runner's backend.aclose expects. Before, the second cancel cut that wait
    short: the run returned while a thread still ran its call."""
    import pandas as pd

    from judging.helpers import read_mt_bench_pairs
    from recuse.judging import Runner, Store

    pairs = pd.DataFrame(read_mt_bench_pairs(shared_data, "gpt-4", "alpaca-13b", 20))
    piped = LocalBackend.load(tiny_model_dir, model_id="t", device="cpu", batch_size=3,
                              pipeline=True, max_batch_tokens=1500)  # fmt: skip
    passes: list[str] = []
    hidden = piped._hidden
    main = threading.main_thread().ident
    assert main is not None

    def pressed(self: LocalBackend, ids: Any) -> Any:
        passes.append(threading.current_thread().name)
        if len(passes) == 3:
            signal.pthread_kill(main, signal.SIGINT)  # Ctrl-C, taken by the loop at once
            time.sleep(0.3)  # the pass goes on while the run stops
        return hidden(ids)

    piped._hidden = types.MethodType(pressed, piped)  # type: ignore[method-assign]
    with Store(tmp_path / "s.db") as store, pytest.raises(KeyboardInterrupt):
        Runner(piped, store, judge="t", progress=False).pairwise(pairs)
    assert len(passes) >= 3 and piped._calls == piped._preparing == 0  # none still running
    with Store(tmp_path / "s.db") as store:  # and the next run judges the rest
        summary = Runner(piped, store, judge="t", progress=False).pairwise(pairs)
        assert summary.cached + summary.ok + summary.unparsed == 40 and not summary.failed


def test_raw_ids_not_from_a_tokenizer_whose_encoding_was_patched_on_it(
    tiny: LocalBackend,
) -> None:
    """A tokenizer whose encoding method is replaced on the object itself (a library's
    patch, after the backend was made): transformers' call runs the patch, the Rust core
    would not. The ids are transformers' call's."""
    tok = copy.deepcopy(tiny.tokenizer)
    backend = LocalBackend(tiny.model, tok, model_id="patched")
    texts = ["Which Answer Is Better? A or B", "THE QUICK BROWN FOX"]
    cased = backend._tokenize(texts, template=True)
    encode = tok._encode_plus

    def lowered(text: Any, *args: Any, **kwargs: Any) -> Any:
        return encode([t.lower() for t in text], *args, **kwargs)

    tok._encode_plus = lowered
    want = tok(texts, add_special_tokens=False)["input_ids"]
    assert want == tiny.tokenizer([t.lower() for t in texts], add_special_tokens=False)["input_ids"]
    assert want != cased  # the patch changes the ids
    assert backend._tokenize(texts, template=True) == want
