"""`recuse judge --template` and `recuse probe --template` end to end: FastChat's real
pair-v2 through the stand-in server (the request holds exactly what FastChat sends), a
custom TOML template through the tiny local model (Eq. 3 worked out from the model's
own logits), and the listing and refusals."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from judging.test_templates import _fastchat_pairs
from recuse.cli import main
from recuse.judging.card import cards
from recuse.judging.protocols import Pair, PairwiseProtocol
from recuse.judging.store import Store
from recuse.judging.templates import load_template
from recuse.testing.standin import StandIn


def _fastchat_table(shared_data: Path, name: str) -> tuple[pd.DataFrame, dict[str, object]]:
    cases = _fastchat_pairs(shared_data)
    rec, pair = next((r, p) for r, p in cases if r["judge"][1] == name)  # type: ignore[index]
    row = {
        "item_id": pair.item_id,
        "prompt": pair.prompt,
        "response_a": pair.response_a,
        "response_b": pair.response_b,
        "model_a": rec["model_1"],
        "model_b": rec["model_2"],
    }
    if pair.reference is not None:
        row["reference"] = pair.reference
    return pd.DataFrame([row]), rec


def test_fastchat_pair_v2_over_a_server_sends_what_fastchat_sends(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompts_file = shared_data / "mt_bench" / "judge_prompts.jsonl"
    system = next(
        json.loads(line)["system_prompt"]
        for line in prompts_file.read_text().splitlines()
        if json.loads(line)["name"] == "pair-v2"
    )
    table, rec = _fastchat_table(shared_data, "pair-v2")
    src = tmp_path / "pairs.jsonl"
    table.to_json(src, orient="records", lines=True)
    store = tmp_path / "s.db"
    with StandIn() as server:
        code = main(["judge", "--model", "gpt-4", "--base-url", server.base_url,
                     "--endpoint", "chat", "--mode", "explain", "--data", str(src),
                     "--out", str(store), "--template", f"{prompts_file}:pair-v2",
                     "--allow-unknown-models", "--no-progress"])  # fmt: skip
        bodies = list(server.bodies)
    out = capsys.readouterr().out
    assert code == 0, out
    assert "2 judgments: 0 already stored, 2 ok" in out
    assert "judge template: pair-v2 (fastchat)" in out
    sent = [b["messages"] for b in bodies]
    expected = [
        [{"role": "system", "content": system}, {"role": "user", "content": rec[g]}]
        for g in ("g1_user_prompt", "g2_user_prompt")
    ]
    assert sorted(map(json.dumps, sent)) == sorted(map(json.dumps, expected))
    # the stand-in's reply "Fine. [[X]]" is read on pair-v2's labels, with its log-probs
    with Store(store, read_only=True) as s:
        rows = s.judgments()
    assert (rows["status"] == "ok").all() and rows["p_slot_a"].between(0, 1).all()


def test_direct_mode_prefills_the_templates_answer_prefix_over_completions(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompts_file = shared_data / "mt_bench" / "judge_prompts.jsonl"
    table, rec = _fastchat_table(shared_data, "pair-math-v1")
    src = tmp_path / "pairs.csv"
    table.to_csv(src, index=False)
    store = tmp_path / "s.db"
    args = ["judge", "--model", "gpt-4", "--data", str(src), "--out", str(store),
            "--template", f"{prompts_file}:pair-math-v1", "--allow-unknown-models",
            "--no-progress"]  # fmt: skip
    with StandIn() as server:
        assert main([*args, "--base-url", server.base_url]) == 0
        prompts = [b["prompt"] for b in server.bodies]
    assert "2 ok" in capsys.readouterr().out
    assert len(prompts) == 2
    for text in prompts:
        assert text.endswith("<|im_end|>\n<|im_start|>assistant\n[[")
    assert any(f"<|im_start|>user\n{rec['g1_user_prompt']}<|im_end|>" in t for t in prompts)
    assert any(f"<|im_start|>user\n{rec['g2_user_prompt']}<|im_end|>" in t for t in prompts)
    # without the reference column: refused before a store exists
    table.drop(columns=["reference"]).to_csv(src, index=False)
    other = tmp_path / "other.db"
    assert main([*args[:6], str(other), *args[7:]]) == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if not line.startswith("recuse: note:")]
    assert "column 'reference'" in err and len(errors) == 1  # notes: models not in roster
    assert not other.exists()


TEMPLATE = """
name = "terse"
system = "Pick the better answer."
user = "Question: {question}\\n(A) {answer_a}\\n(B) {answer_b}\\nAnswer with [[A]], [[B]] or [[C]]."
[verdict]
a = "[[A]]"
b = "[[B]]"
tie = "[[C]]"
answer_prefix = "Verdict: [["
"""


def test_custom_template_with_the_local_model_scores_eq3_on_its_labels(
    tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    torch = pytest.importorskip("torch")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = tmp_path / "terse.toml"
    path.write_text(TEMPLATE, encoding="utf-8")
    pairs = pd.DataFrame(
        {
            "item_id": ["x1", "x2"],
            "prompt": ["What is 2+2?", "Name a colour."],
            "response_a": ["4", "Blue."],
            "response_b": ["5", "Seven."],
        }
    )
    src = tmp_path / "pairs.csv"
    pairs.to_csv(src, index=False)
    store = tmp_path / "s.db"
    args = ["judge", "--model", str(tiny_model_dir), "--judge-id", "tiny", "--data", str(src),
            "--out", str(store), "--template", str(path), "--no-progress"]  # fmt: skip
    assert main(args) == 0
    assert "4 judgments: 0 already stored, 4 ok" in capsys.readouterr().out
    assert main(args) == 0
    assert "4 already stored" in capsys.readouterr().out
    with Store(store, read_only=True) as s:
        rows = s.judgments().set_index(["item_id", "slot"])
    # Eq. 3 by hand: the model's full next-token distribution after the rendered prompt,
    # every vocabulary token whose text (leading space dropped) begins "A]]" / "B]]" / "C]]"
    template = load_template(path)
    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir).eval()
    vocab = [tok.decode([i]) for i in range(len(tok))]
    for r in pairs.to_dict("records"):
        pair = Pair(r["item_id"], r["prompt"], r["response_a"], r["response_b"])
        for order in ("first", "second"):
            prompt = PairwiseProtocol(mode="direct", template=template).prompt(pair, order)  # type: ignore[arg-type]
            assert prompt.prefix == "Verdict: [["
            text = (
                tok.apply_chat_template(
                    [{"role": m.role, "content": m.content} for m in prompt.messages],
                    tokenize=False,
                    add_generation_prompt=True,
                )
                + prompt.prefix
            )
            ids = tok(text, add_special_tokens=False, return_tensors="pt")["input_ids"]
            with torch.no_grad():
                logp = torch.log_softmax(model(ids).logits[0, -1].double(), dim=-1)
            p = {v: 0.0 for v in "ABC"}
            for i, t in enumerate(vocab):
                t = t.lstrip()
                for v in "ABC":
                    if t and f"{v}]]".startswith(t):
                        p[v] += math.exp(float(logp[i]))
            row = rows.loc[(r["item_id"], order)]
            assert row["p_slot_a"] == pytest.approx(p["A"] / (p["A"] + p["B"]), rel=1e-4)
            assert row["p_tie"] == pytest.approx(p["C"], rel=1e-4)


def test_probe_with_a_template_keys_its_own_judgments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "terse.toml"
    path.write_text(TEMPLATE, encoding="utf-8")
    src = tmp_path / "pairs.csv"
    pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in range(4)],
            "prompt": [f"Question {k}?" for k in range(4)],
            "response_a": [f"Answer one to {k}." for k in range(4)],
            "response_b": [f"Answer two to {k}, longer." for k in range(4)],
        }
    ).to_csv(src, index=False)
    store = tmp_path / "s.db"
    args = ["probe", "--data", str(src), "--out", str(store), "--model", "gpt-4o",
            "--probe", "padding", "--limit", "4", "--no-progress"]  # fmt: skip
    with StandIn() as server:
        assert main([*args, "--base-url", server.base_url, "--template", str(path)]) == 0
        assert "24 judgments: 0 already stored, 24 ok" in capsys.readouterr().out
        templated = [b["prompt"] for b in server.bodies]
        # recuse's prompt under the same judge id: refused (export would merge the two)
        assert main([*args, "--base-url", server.base_url]) == 2
        assert "already holds verdicts made with the judge prompt 'terse'" in (
            capsys.readouterr().err
        )
        other = [*args, "--base-url", server.base_url, "--judge-id", "gpt-4o-plain"]
        assert main(other) == 0  # its own keys: nothing served from the template's
        assert "24 judgments: 0 already stored, 24 ok" in capsys.readouterr().out
    assert all(t.endswith("Verdict: [[") and "Pick the better answer." in t for t in templated)


def test_templates_listing_and_bad_files_through_the_cli(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompts_file = shared_data / "mt_bench" / "judge_prompts.jsonl"
    assert main(["judge", "templates", str(prompts_file)]) == 0
    out = capsys.readouterr().out
    assert "pair-v2 (fastchat): labels A=A better, B=B better, C=tie after '[['" in out
    assert "single-v1: not usable" in out and f"use: --template {prompts_file}:pair-v2" in out
    bad = tmp_path / "bad.toml"
    bad.write_text('user = "{question}"\n', encoding="utf-8")
    assert main(["judge", "templates", str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "{answer_a}" in err and len(err.strip().splitlines()) == 1
    src = tmp_path / "p.csv"
    one = {"item_id": ["i"], "prompt": ["q"], "response_a": ["a"], "response_b": ["b"]}
    pd.DataFrame(one).to_csv(src, index=False)
    store = tmp_path / "never.db"
    code = main(["judge", "--data", str(src), "--out", str(store), "--template",
                 f"{prompts_file}:single-v1"])  # fmt: skip
    assert code == 2 and not store.exists()
    assert "score per answer" in capsys.readouterr().err


def test_arena_hard_labels_scored_whole_with_the_local_model(
    tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A>B and A=B share their first token: each label's whole text is scored after the
    answer prefix; P(label) worked out here from the model's logits, token by token."""
    torch = pytest.importorskip("torch")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from judging.test_templates import ARENA_V01

    config = tmp_path / "judge_config.yaml"
    config.write_text(ARENA_V01, encoding="utf-8")
    pairs = pd.DataFrame(
        {"item_id": ["x1"], "prompt": ["What is 2+2?"], "response_a": ["4"], "response_b": ["5"]}
    )
    src = tmp_path / "pairs.csv"
    pairs.to_csv(src, index=False)
    store = tmp_path / "s.db"
    assert main(["judge", "--model", str(tiny_model_dir), "--judge-id", "tiny", "--data",
                 str(src), "--out", str(store), "--template", str(config),
                 "--no-progress"]) == 0  # fmt: skip
    assert "2 judgments: 0 already stored" in capsys.readouterr().out
    with Store(store, read_only=True) as s:
        rows = s.judgments().set_index("slot")
        runs = s.runs()
    template = load_template(config)
    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir).eval()
    pair = Pair("x1", "What is 2+2?", "4", "5")
    read = 0  # tokens the judge read: each label scored after the prompt
    for order in ("first", "second"):
        prompt = PairwiseProtocol(mode="direct", template=template).prompt(pair, order)  # type: ignore[arg-type]
        text = (
            tok.apply_chat_template(
                [{"role": m.role, "content": m.content} for m in prompt.messages],
                tokenize=False,
                add_generation_prompt=True,
            )
            + prompt.prefix
        )
        head = tok(text, add_special_tokens=False)["input_ids"]
        p = {"A": 0.0, "B": 0.0, "C": 0.0}
        for label, meaning in template.verdict.labels:
            tail = tok(label + "]]", add_special_tokens=False)["input_ids"]
            read += len(head) + len(tail)
            ids = torch.tensor([head + tail])
            with torch.no_grad():
                logp = torch.log_softmax(model(ids).logits[0].double(), dim=-1)
            total = sum(float(logp[len(head) - 1 + k, t]) for k, t in enumerate(tail))
            p[meaning] += math.exp(total)
        # the random tiny model spreads its mass over a 400-token vocabulary, so whole
        # labels may fall under Eq. 3's minimum mass (1e-6): then unparsed, never scored
        mass = p["A"] + p["B"]
        row = rows.loc[order]
        assert row["mass"] == pytest.approx(mass, rel=1e-4)
        assert row["p_tie"] == pytest.approx(p["C"], rel=1e-4)
        if mass >= 1e-6:
            assert row["status"] == "ok"
            assert row["p_slot_a"] == pytest.approx(p["A"] / mass, rel=1e-4)
        else:
            assert row["status"] == "unparsed" and math.isnan(row["p_slot_a"])
    # the evaluator card counts what whole-label judgments read (it said "0 tokens in")
    (card,) = cards(runs)
    assert card.tokens_in_per_judgment == pytest.approx(read / 2)
    assert card.tokens_out_per_judgment == 0


def test_a_server_without_usable_prompt_log_probs_names_the_template_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Labels that share a first token ([[A]] and A) are scored whole from the server's
    prompt log-probs; where the server cannot give them, the error told the user to
    'compute perplexity with a local backend' though this run computed no perplexity."""
    template = tmp_path / "t.toml"
    template.write_text(
        'user = "{question} {answer_a} {answer_b}"\n[verdict]\n'
        'a = ["[[A]]", "A"]\nb = ["[[B]]", "B"]\n',
        "utf-8",
    )
    src = tmp_path / "pairs.csv"
    pd.DataFrame(
        {"item_id": ["i0"], "prompt_id": ["p0"], "prompt": ["q"], "response_a": ["x"],
         "response_b": ["y"], "model_a": ["gpt-4"], "model_b": ["claude-2"]}
    ).to_csv(src, index=False)  # fmt: skip
    with StandIn() as server:
        code = main(["judge", "--model", "jx", "--data", str(src), "--out",
                     str(tmp_path / "s.db"), "--template", str(template), "--no-progress",
                     "--base-url", server.base_url])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "cannot verify the server's prompt log-probs" in err
    assert "a judge template whose labels share a first token" in err
    assert "compute perplexity" not in err


def test_arena_hard_labels_are_scored_as_they_follow_the_prompt(tmp_path: Path) -> None:
    """A SentencePiece tokenizer that puts ▁ before every text's first word (Llama 2's,
    Mistral's) reads the label ``A>>B]]`` alone as ``▁A…``, while after the answer
    prefix's ``[[`` it is the bare ``A``. Each label is scored as the tokens the prompt's
    text and the label together add, worked out here token by token from the model's
    logits; before, the label tokenized alone was scored (its first token ▁A, a word's
    start the model does not write after ``[[``), and the numbers differ."""
    torch = pytest.importorskip("torch")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from judging.helpers import build_tiny_model
    from judging.test_templates import ARENA_V01
    from recuse.judging import Runner
    from recuse.judging.backends.local import LocalBackend

    folder = build_tiny_model(tmp_path / "m", metaspace=True)
    config = tmp_path / "judge_config.yaml"
    config.write_text(ARENA_V01, encoding="utf-8")
    template = load_template(config)
    protocol = PairwiseProtocol(mode="direct", template=template)
    pair = Pair("x1", "What is 2+2?", "4", "5")
    with Store(tmp_path / "s.db") as store:
        backend = LocalBackend.load(folder, model_id="tiny")
        Runner(backend, store, progress=False).pairwise([pair], protocol)
        rows = store.judgments().set_index("slot")
    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    alone = tok.convert_ids_to_tokens(tok("A>>B]]", add_special_tokens=False)["input_ids"])
    assert alone[0].startswith("▁")  # the trap: a text's start
    for order in ("first", "second"):
        prompt = protocol.prompt(pair, order)  # type: ignore[arg-type]
        text = tok.apply_chat_template(
            [{"role": m.role, "content": m.content} for m in prompt.messages],
            tokenize=False,
            add_generation_prompt=True,
        )
        text += prompt.prefix
        head = tok(text, add_special_tokens=False)["input_ids"]
        p = {"A": 0.0, "B": 0.0, "C": 0.0}
        for label, meaning in template.verdict.labels:
            whole = tok(text + label + "]]", add_special_tokens=False)["input_ids"]
            assert whole[: len(head)] == head
            tail = whole[len(head) :]
            if label.startswith("A"):  # after [[ the bare A, not ▁A
                assert tok.convert_ids_to_tokens(tail)[0] == "A"
            with torch.no_grad():
                logp = torch.log_softmax(model(torch.tensor([whole])).logits[0].double(), -1)
            p[meaning] += math.exp(
                sum(float(logp[len(head) - 1 + k, t]) for k, t in enumerate(tail))
            )
        row, mass = rows.loc[order], p["A"] + p["B"]
        assert row["mass"] == pytest.approx(mass, rel=1e-4)  # Eq. 3's inputs, by hand
        assert row["p_tie"] == pytest.approx(p["C"], rel=1e-4)
        if mass >= 1e-6:  # a random model's whole labels often fall under the minimum
            assert row["p_slot_a"] == pytest.approx(p["A"] / mass, rel=1e-4)
        else:
            assert row["status"] == "unparsed"
