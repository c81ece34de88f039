"""Local transformers backend on a tiny random model built in the test (no download)."""

from __future__ import annotations

import asyncio
import importlib
import math
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from recuse.judging.backends.base import Failure  # noqa: E402
from recuse.judging.backends.local import LocalBackend  # noqa: E402
from recuse.judging.protocols import (  # noqa: E402
    Message,
    Pair,
    PairwiseProtocol,
    Prompt,
    is_verdict_token,
    score_distribution,
)

PAIRS = [
    Pair("p1", "What is two plus two?", "It is four.", "Five, surely."),
    Pair("p2", "Name a fox.", "The quick brown fox jumps over the lazy dog " * 6, "Fox."),
    Pair("p3", "Which is better?", "A", "B is better than A because it is careful and fair."),
]


@pytest.fixture(scope="module")
def backend(tiny_model_dir: Path) -> LocalBackend:
    return LocalBackend.load(tiny_model_dir, model_id="tiny", batch_size=8)


def _prompts() -> list[Prompt]:
    proto = PairwiseProtocol(mode="direct")
    return [proto.prompt(p, o) for p in PAIRS for o in ("first", "second")]


def _reference_logp(backend: LocalBackend, ids: list[int]) -> torch.Tensor:
    """Full-vocabulary log-probs at every position from a plain unbatched forward."""
    with torch.inference_mode():
        logits = backend.model(input_ids=torch.tensor([ids])).logits[0].float()
    return torch.log_softmax(logits, dim=-1)


def test_next_token_batched_equals_one_at_a_time(backend: LocalBackend) -> None:
    prompts = _prompts()
    lengths = {len(backend.encode(p)) for p in prompts}
    assert len(lengths) > 2  # different lengths, so the batch really is padded
    batched = asyncio.run(backend.next_token_logprobs(prompts, top_k=10, select=is_verdict_token))
    for p, b in zip(prompts, batched, strict=True):
        (single,) = asyncio.run(backend.next_token_logprobs([p], top_k=10, select=is_verdict_token))
        assert isinstance(b, dict) and isinstance(single, dict)
        assert b.keys() == single.keys()
        for k in b:
            assert b[k] == pytest.approx(single[k], abs=1e-5)
        sb, ss = score_distribution(b), score_distribution(single)
        assert sb.p_slot_a == pytest.approx(ss.p_slot_a, abs=1e-5)


def test_next_token_matches_plain_forward_and_eq3(backend: LocalBackend) -> None:
    prompts = _prompts()
    dists = asyncio.run(backend.next_token_logprobs(prompts, top_k=5, select=is_verdict_token))
    vocab = backend.vocab()
    for p, d in zip(prompts, dists, strict=True):
        assert isinstance(d, dict)
        ref = _reference_logp(backend, backend.encode(p))[-1]
        # Eq. 3 by hand over the whole vocabulary
        prob = ref.exp()
        pa = sum(float(prob[i]) for i, t in enumerate(vocab) if t.lstrip() in ("A", "A]", "A]]"))
        pb = sum(float(prob[i]) for i, t in enumerate(vocab) if t.lstrip() in ("B", "B]", "B]]"))
        assert pa > 0 and pb > 0
        s = score_distribution(d)
        assert s.p_slot_a == pytest.approx(pa / (pa + pb), abs=1e-5)
        assert s.mass == pytest.approx(pa + pb, abs=1e-6)
        # the top-5 entries are the 5 largest log-probs of the plain forward
        top = torch.topk(ref, 5)
        for i, v in zip(top.indices.tolist(), top.values.tolist(), strict=True):
            assert math.exp(d[vocab[i]]) >= math.exp(v) - 1e-6


def test_continuation_logprobs_batched_single_and_reference(backend: LocalBackend) -> None:
    prompts = _prompts()[:4]
    conts = ["It is four.", " The quick brown fox", "[[A]]", "Answer: Yes, mostly correct"]
    batched = asyncio.run(backend.continuation_logprobs(prompts, conts))
    for p, c, b in zip(prompts, conts, batched, strict=True):
        assert isinstance(b, np.ndarray)
        (single,) = asyncio.run(backend.continuation_logprobs([p], [c]))
        assert isinstance(single, np.ndarray)
        np.testing.assert_allclose(b, single, atol=1e-5)
        head = backend.encode(p)
        tail = backend.tokenizer(c, add_special_tokens=False)["input_ids"]
        ref = _reference_logp(backend, head + tail)
        expected = [float(ref[len(head) - 1 + k, t]) for k, t in enumerate(tail)]
        np.testing.assert_allclose(b, expected, atol=1e-5)
        assert len(b) == len(tail) and (b <= 0).all()


def test_generate_is_greedy(backend: LocalBackend) -> None:
    prompt = _prompts()[0]
    (gen,) = asyncio.run(backend.generate([prompt], max_new_tokens=6))
    assert not isinstance(gen, Failure)
    # independent greedy loop with the plain forward
    ids = backend.encode(prompt)
    out = []
    for _ in range(6):
        nxt = int(_reference_logp(backend, ids + out)[-1].argmax())
        if nxt == backend.tokenizer.eos_token_id:
            break
        out.append(nxt)
    assert gen.text == backend.tokenizer.decode(out, skip_special_tokens=True)
    # batched generation (left padding) gives the same text
    both = asyncio.run(backend.generate([prompt, _prompts()[3]], max_new_tokens=6))
    assert not isinstance(both[0], Failure) and both[0].text == gen.text


def test_generate_stops_after_stop_string(backend: LocalBackend) -> None:
    (gen,) = asyncio.run(backend.generate([_prompts()[1]], max_new_tokens=12))
    assert not isinstance(gen, Failure)
    if len(gen.text) > 3:
        stop = gen.text[1:3]
        (cut,) = asyncio.run(backend.generate([_prompts()[1]], max_new_tokens=12, stop=[stop]))
        assert not isinstance(cut, Failure)
        assert cut.text == gen.text[: gen.text.find(stop) + len(stop)]


def test_too_long_prompt_is_a_failure_not_a_crash(backend: LocalBackend) -> None:
    long = Prompt((Message("user", "fox " * 5000),))
    short = _prompts()[0]
    out = asyncio.run(backend.next_token_logprobs([long, short]))
    assert isinstance(out[0], Failure) and "at most 4096" in out[0].reason
    assert isinstance(out[1], dict)


def test_buckets_respect_limits(backend: LocalBackend) -> None:
    b = LocalBackend(
        backend.model, backend.tokenizer, model_id="x", batch_size=3, max_batch_tokens=100
    )
    lengths = [50, 10, 30, 20, 40, 5, 60]
    batches = b._buckets(lengths)
    assert sorted(i for batch in batches for i in batch) == list(range(7))
    for batch in batches:
        assert len(batch) <= 3
        assert max(lengths[i] for i in batch) * len(batch) <= 100 or len(batch) == 1
    flat = [lengths[i] for batch in batches for i in batch]
    assert flat == sorted(flat)


def test_no_template_renders_plain(tmp_path: Path) -> None:
    from judging.helpers import build_tiny_model

    folder = build_tiny_model(tmp_path / "plain", template=False, seed=1)
    b = LocalBackend.load(folder, model_id="plain")
    assert not b.has_template
    text = b.render(Prompt((Message("system", "S"), Message("user", "U")), prefix="[["))
    assert text == "S\n\nU\n\n[["


def test_loading_prints_no_third_party_progress_bar(
    tiny_model_dir: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    LocalBackend.load(tiny_model_dir, model_id="tiny")
    out, err = capfd.readouterr()
    assert "Loading weights" not in out + err and "it/s" not in out + err


def test_each_forward_pass_is_reported_as_done(backend: LocalBackend) -> None:
    from recuse.judging.backends.base import done_sink

    prompts = _prompts()
    lengths = [len(backend.encode(p)) for p in prompts]
    backend.max_batch_tokens = 2 * max(lengths)  # at most two prompts per forward pass
    try:
        steps: list[int] = []
        with done_sink(steps.append):
            asyncio.run(backend.next_token_logprobs(prompts, top_k=5))
        assert steps == [len(b) for b in backend._buckets(lengths)] and sum(steps) == 6
        assert len(steps) >= 3 and max(steps) <= 2
        steps.clear()
        with done_sink(steps.append):
            asyncio.run(backend.continuation_logprobs(prompts[:2], ["yes", "no"]))
            asyncio.run(backend.generate(prompts[:2], max_new_tokens=2))
        assert sum(steps) == 4
    finally:
        backend.max_batch_tokens = 2048


def test_a_local_model_counts_its_tokens_as_a_server_reports_usage(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    import pandas as pd

    from recuse.judging import Runner, Store
    from recuse.judging.card import cards

    fresh = LocalBackend.load(tiny_model_dir, model_id="tiny", batch_size=8)
    assert fresh.usage() == (0, 0)
    prompts = _prompts()
    asyncio.run(fresh.next_token_logprobs(prompts, top_k=5))
    read = sum(len(fresh.encode(p)) for p in prompts)
    assert fresh.usage() == (read, len(prompts))  # one scored token out per prompt
    gens = asyncio.run(fresh.generate(prompts[:2], max_new_tokens=3))
    made = sum(len(g.tokens) for g in gens if not isinstance(g, Failure))
    more = sum(len(fresh.encode(p)) for p in prompts[:2])
    assert fresh.usage() == (read + more, len(prompts) + made) and made > 0
    # the runner records a run's difference, so the card has tokens per judgment
    pairs = pd.DataFrame(
        [{"item_id": p.item_id, "prompt_id": p.item_id, "prompt": p.prompt,
          "response_a": p.response_a, "response_b": p.response_b} for p in PAIRS]
    )  # fmt: skip
    with Store(tmp_path / "s.db") as store:
        Runner(fresh, store, judge="tiny", progress=False).pairwise(pairs)
        (card,) = cards(store.runs())
    expected = sum(len(fresh.encode(p)) for p in prompts) / len(prompts)
    assert card.tokens_in_per_judgment == pytest.approx(expected)
    assert card.tokens_out_per_judgment == pytest.approx(1.0)


def test_a_folder_whose_weights_cannot_be_loaded_is_a_one_line_error(
    tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder without its weights, or with a damaged weight file, ended `recuse judge`
    in transformers' or safetensors' traceback (exit 1)."""
    import shutil

    import pandas as pd

    from judging.helpers import fake_pairs
    from recuse.cli import main
    from recuse.errors import ConfigError

    missing = tmp_path / "missing"
    shutil.copytree(tiny_model_dir, missing)
    (missing / "model.safetensors").unlink()
    damaged = tmp_path / "damaged"
    shutil.copytree(tiny_model_dir, damaged)
    with open(damaged / "model.safetensors", "r+b") as f:
        f.truncate(1000)
    data = tmp_path / "pairs.csv"
    pd.DataFrame(fake_pairs(1)).to_csv(data, index=False)
    for folder in (missing, damaged):
        with pytest.raises(ConfigError, match=rf"{folder.name}: cannot load the model \("):
            LocalBackend.load(folder, model_id="x")
        code = main(["judge", "--model", str(folder), "--data", str(data), "--out",
                     str(tmp_path / f"{folder.name}.db"), "--no-progress"])  # fmt: skip
        err = capsys.readouterr().err
        assert code == 2 and "Traceback" not in err, err[-600:]
        assert err.startswith(f"recuse: error: {folder}: cannot load the model (")
        assert len(err.strip().splitlines()) == 1


@pytest.fixture
def bar_switches() -> Iterator[None]:
    """transformers' and huggingface_hub's progress-bar switches put back after the test."""
    from transformers.utils import logging as hf_logging

    hub_tqdm = importlib.import_module("huggingface_hub.utils.tqdm")
    was, hub = hf_logging.is_progress_bar_enabled(), dict(hub_tqdm.progress_bar_states)
    try:
        yield
    finally:
        (hf_logging.enable_progress_bar if was else hf_logging.disable_progress_bar)()
        hub_tqdm.progress_bar_states.clear()
        hub_tqdm.progress_bar_states.update(hub)


def _bars() -> tuple[bool, bool, bool]:
    """(transformers' bars on, huggingface_hub's bars on, its download bars on)."""
    from huggingface_hub.utils import are_progress_bars_disabled
    from transformers.utils import logging as hf_logging

    return (
        hf_logging.is_progress_bar_enabled(),
        not are_progress_bars_disabled(),
        not are_progress_bars_disabled("huggingface_hub.http_get"),
    )


@pytest.mark.usefixtures("bar_switches")
def test_loading_leaves_the_callers_progress_bars_as_it_found_them(tiny_model_dir: Path) -> None:
    # a library call: the bars were turned off for the rest of the process (a
    # notebook's later download or model load drew none)
    from huggingface_hub.utils import disable_progress_bars
    from transformers.utils import logging as hf_logging

    hf_logging.enable_progress_bar()
    LocalBackend.load(tiny_model_dir, model_id="tiny")
    assert _bars() == (True, True, True)
    disable_progress_bars("huggingface_hub.http_get")  # the caller's own choices are kept
    LocalBackend.load(tiny_model_dir, model_id="tiny")
    assert _bars() == (True, True, False)
    hf_logging.disable_progress_bar()
    LocalBackend.load(tiny_model_dir, model_id="tiny")
    assert _bars() == (False, False, False)


@pytest.mark.usefixtures("bar_switches")
def test_loads_in_two_threads_keep_bars_off_until_the_last_ends() -> None:
    from transformers.utils import logging as hf_logging

    from recuse.judging.models import quiet_transformers

    hf_logging.enable_progress_bar()
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[tuple[bool, bool, bool]] = []

    def first() -> None:
        with quiet_transformers():
            first_in.set()
            second_in.wait(30)
        first_out.set()

    def second() -> None:
        first_in.wait(30)
        with quiet_transformers():
            second_in.set()
            first_out.wait(30)
            seen.append(_bars())  # the first is out: this load still draws no bar

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert seen == [(False, False, False)]
    assert _bars() == (True, True, True)


def test_conversions_in_two_threads_give_the_gguf_readers_bar_back() -> None:
    # each block saved the reader's tqdm and put it back: the second in saved the
    # first's bar-less one and, out last, left it for good
    gguf_utils = pytest.importorskip("transformers.modeling_gguf_pytorch_utils")
    from recuse.judging.models import _no_gguf_bar

    bar = gguf_utils.tqdm
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[bool] = []

    def first() -> None:
        with _no_gguf_bar():
            first_in.set()
            second_in.wait(30)
        first_out.set()

    def second() -> None:
        first_in.wait(30)
        with _no_gguf_bar():
            second_in.set()
            first_out.wait(30)
            seen.append(gguf_utils.tqdm([1]).disable)  # still no bar

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert seen == [True]
    assert gguf_utils.tqdm is bar
