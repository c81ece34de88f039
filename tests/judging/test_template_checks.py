"""Judge templates the judge cannot be judged with as written: a FastChat prompt that
never shows an answer, placeholders with format specs, labels one of which begins
another, a bad line or annotator among good ones, duplicated names, AlpacaEval's
placeholders inside answers; and the template's content hash over every field."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judging.helpers import FakeBackend, fake_pairs
from judging.test_templates import ALPACA_CONFIGS, ALPACA_PROMPT, ARENA_V01, LabelBackend
from recuse.cli import main
from recuse.errors import ConfigError, InputError
from recuse.judging.protocols import PairwiseProtocol
from recuse.judging.runner import Runner
from recuse.judging.store import Store
from recuse.judging.templates import (
    JudgeTemplate,
    listing,
    load_template,
    placeholder_notes,
    selectable,
    template_entries,
)
from recuse.verdict_parsing import labels_format

PAIR_V2 = (
    "[User Question]\n{question}\n\n[The Start of Assistant A's Answer]\n{answer_a}\n"
    "[The End of Assistant A's Answer]\n\n[The Start of Assistant B's Answer]\n{answer_b}\n"
    "[The End of Assistant B's Answer]"
)


def _entry(name: str, template: str, **extra: object) -> dict[str, object]:
    return {
        "name": name,
        "type": "pairwise",
        "system_prompt": "Compare. End with [[A]], [[B]] or [[C]].",
        "prompt_template": template,
        "description": "test",
        "category": "general",
        "output_format": "[[A]]",
        **extra,
    }


def _jsonl(path: Path, rows: list[object]) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# --- FastChat: what the judge sees ----------------------------------------------------


@pytest.mark.parametrize(
    ("template", "said"),
    [
        (PAIR_V2.replace("{answer_a}", "(answer)"), "has no {answer_a}"),
        (PAIR_V2.replace("{answer_b}", "(answer)"), "has no {answer_b}"),
        ("", "has no {question}, {answer_a}, {answer_b} (the prompt template is empty)"),
        (
            PAIR_V2.replace("{question}", "{{ question }}")
            .replace("{answer_a}", "{{ answer_a }}")
            .replace("{answer_b}", "{{ answer_b }}"),
            "it writes {{ question }}, Jinja style",
        ),
    ],
)
def test_a_fastchat_prompt_that_never_shows_an_answer_is_not_usable(
    tmp_path: Path, template: str, said: str
) -> None:
    """Listed as usable and judged before: 12 verdicts stored ok while the judge saw
    one answer or none."""
    path = _jsonl(
        tmp_path / "judge_prompts.jsonl", [_entry("good", PAIR_V2), _entry("x", template)]
    )
    entries = {e.name: e for e in template_entries(path)}
    assert entries["good"].template is not None
    assert entries["x"].template is None and said in entries["x"].note
    with pytest.raises(ConfigError, match=re.escape(said)):
        load_template(f"{path}:x")
    assert selectable(list(entries.values())) == ["good"]


@pytest.mark.parametrize(
    "placeholder", ["{question:>999999999999}", "{question:{answer_a}}", "{question!r}"]
)
def test_format_specs_and_conversions_are_refused_in_one_line(
    tmp_path: Path, placeholder: str
) -> None:
    """These were listed as usable and ended the run in a ValueError or MemoryError."""
    path = _jsonl(
        tmp_path / "judge_prompts.jsonl",
        [_entry("spec", PAIR_V2.replace("{question}", placeholder)), _entry("good", PAIR_V2)],
    )
    entries = {e.name: e for e in template_entries(path)}
    assert entries["spec"].template is None and entries["good"].template is not None
    assert (
        placeholder in entries["spec"].note and "format spec or conversion" in entries["spec"].note
    )
    with pytest.raises(ConfigError) as err:
        load_template(f"{path}:spec")
    message = str(err.value)
    assert f"{path}:spec cannot judge pairs" in message and "\n" not in message
    # Arena-Hard-Auto's prompts are filled by str.format too: refused the same way
    arena = tmp_path / "judge_config.yaml"
    arena.write_text(
        ARENA_V01.replace("{question_1}", placeholder.replace("question", "question_1"))
    )
    with pytest.raises(InputError, match="format spec or conversion"):
        load_template(arena)


def test_one_bad_line_does_not_hide_the_files_good_prompts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _jsonl(
        tmp_path / "judge_prompts.jsonl",
        [
            _entry("first", PAIR_V2),
            '{"name": "cut off", "type": "pairw',
            {"name": "no-template", "type": "pairwise"},
            {**_entry("x", PAIR_V2), "name": 7},
            '["a list"]',
            _entry("last", PAIR_V2),
        ],
    )
    entries = template_entries(path)
    assert [e.name for e in entries if e.template is not None] == ["first", "last"]
    bad = [e for e in entries if e.template is None]
    assert [e.row for e in bad] == [2, 3, 4, 5]
    assert main(["judge", "templates", str(path)]) == 0
    out = capsys.readouterr().out
    assert "row 2: not usable — not valid JSON" in out
    assert "row 3: not usable — no system_prompt, prompt_template, output_format" in out
    assert "row 4: not usable — expected text, found int" in out
    assert "row 5: not usable — a JSON list, not an object" in out
    assert f"use: --template {path}:first" in out
    assert load_template(f"{path}:last").name == "last"


def test_a_duplicated_name_is_not_suggested_as_a_selector(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The listing suggested --template FILE:dup, which --template then refused."""
    path = _jsonl(
        tmp_path / "judge_prompts.jsonl",
        [
            _entry("dup", PAIR_V2),
            _entry("dup", PAIR_V2 + "\nBe brief."),
            _entry("same", PAIR_V2),
            _entry("same", PAIR_V2),  # identical twice: one prompt, selectable
            _entry("fine", PAIR_V2 + "\nBe fair."),
        ],
    )
    entries = template_entries(path)
    assert selectable(entries) == ["same", "fine"]
    lines = listing(entries)
    assert sum("not selectable: 2 different prompts are named 'dup' (rows 1, 2)" in x
               for x in lines) == 2  # fmt: skip
    assert main(["judge", "templates", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"use: --template {path}:same" in out
    with pytest.raises(ConfigError, match="2 different prompts named 'dup'"):
        load_template(f"{path}:dup")
    with pytest.raises(ConfigError, match=r"\(usable: same, fine\)"):
        load_template(path)


# --- AlpacaEval ---------------------------------------------------------------------------


def _alpaca(tmp_path: Path, configs: str) -> Path:
    root = tmp_path / "evaluators_configs"
    (root / "clf_mine").mkdir(parents=True)
    (root / "weighted_mine").mkdir()
    (root / "clf_mine" / "prompt.txt").write_text(ALPACA_PROMPT, encoding="utf-8")
    path = root / "weighted_mine" / "configs.yaml"
    path.write_text(configs, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ('batch_size: "abc"', "batch_size 'abc' is not a whole number"),
        ("batch_size: 1.5", "batch_size 1.5 is not a whole number"),
        ("completion_parser_kwargs: [1, 2]", "completion_parser_kwargs is list, not a mapping"),
    ],
)
def test_one_bad_alpaca_annotator_is_not_usable_and_the_good_ones_stay(
    tmp_path: Path, setting: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = (
        'bad_one:\n  prompt_template: "clf_mine/prompt.txt"\n'
        '  fn_completion_parser: "logprob_parser"\n  ' + setting + "\n"
    )
    path = _alpaca(tmp_path, ALPACA_CONFIGS + bad)
    entries = {e.name: e for e in template_entries(path)}
    assert entries["bad_one"].template is None and said in entries["bad_one"].note
    assert entries["weighted_mine"].template is not None
    assert entries["ranking_mine"].template is not None
    assert main(["judge", "templates", str(path)]) == 0
    assert "bad_one: not usable" in capsys.readouterr().out


def test_a_placeholder_inside_an_answer_is_said_in_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """AlpacaEval's first-occurrence filling puts answer B inside answer A when A's text
    holds {output_2}: kept (faithful to AlpacaEval), and said."""
    path = _alpaca(tmp_path, ALPACA_CONFIGS)
    template = load_template(f"{path}:weighted_mine")
    rows = pd.DataFrame(fake_pairs(4))
    assert placeholder_notes(template, rows) == []
    rows.loc[2, "response_a"] = "See {output_2} here"
    rows.loc[3, "prompt"] = "Echo {instruction}"
    (note,) = placeholder_notes(template, rows)
    assert note.startswith("2 pair(s) hold a placeholder of AlpacaEval's template")
    assert "item 'i2', response_a holds {output_2}" in note
    # the filling itself is AlpacaEval's: B's text is spliced into A's
    pair = PairwiseProtocol(mode="direct", template=template)
    from recuse.judging.protocols import Pair

    shown = pair.prompt(Pair("i2", "q", "See {output_2} here", "BBB"), "first")
    assert "See BBB here" in shown.messages[1].content
    # through the CLI: a note after the judge's line, and the run goes on
    src = tmp_path / "pairs.csv"
    rows.to_csv(src, index=False)
    code = main(["judge", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--data",
                 str(src), "--out", str(tmp_path / "s.db"), "--template",
                 f"{path}:weighted_mine", "--max-attempts", "1", "--timeout", "0.5",
                 "--no-progress"])  # fmt: skip
    out = capsys.readouterr().out.splitlines()
    assert code == 1  # nothing answers there: every judgment failed after its retry
    assert out[0].startswith("judge m: model m asked of the server")
    assert out[1].startswith("note: 2 pair(s) hold a placeholder")


# --- labels one of which begins another ----------------------------------------------------

_BASE = 'user = "Q: {question}\\nA: {answer_a}\\nB: {answer_b}"\n[verdict]\n'


@pytest.mark.parametrize(
    "labels",
    ['a = "A"\nb = "AB"\ntie = "ABC"\n', 'a = "AB"\nb = "A"\n', 'a = ["A", "AB"]\nb = "B"\n'],
)
def test_labels_one_of_which_begins_another_are_refused(tmp_path: Path, labels: str) -> None:
    """A / AB / ABC: scoring whole labels counted every continuation of A (AB..., ABC...)
    as A, so the shorter label's slot got 0.56 in every pair and order."""
    path = tmp_path / "prefix.toml"
    path.write_text(_BASE + labels, encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_template(path)
    message = str(err.value)
    assert "is the beginning of" in message and "column 'verdict'" in message
    assert "\n" not in message


def test_swapping_whole_labels_mirrors_the_scores(tmp_path: Path) -> None:
    """Labels sharing a first token but none beginning another are scored whole; a
    judge whose reply probabilities are planted per label text: swapping which label
    means A gives 1 - p(slot A) in every row, and p(slot A) is the planted ratio."""
    planted = {"A>B": math.log(0.3), "A<B": math.log(0.1), "B=A": math.log(0.2)}
    scores = {}
    for name, a, b in (("ab", "A>B", "A<B"), ("ba", "A<B", "A>B")):
        path = tmp_path / f"{name}.toml"
        path.write_text(_BASE + f'a = "{a}"\nb = "{b}"\ntie = "B=A"\n', encoding="utf-8")
        template = load_template(path)
        assert template.verdict.first_token_ambiguous
        with Store(tmp_path / f"{name}.db") as store:
            Runner(LabelBackend(planted), store, progress=False).pairwise(
                pd.DataFrame(fake_pairs(3)), PairwiseProtocol(template=template)
            )
            scores[name] = store.judgments().sort_values(["item_id", "slot"])
    ab, ba = scores["ab"], scores["ba"]
    assert np.allclose(ab["p_slot_a"], 0.3 / 0.4)
    assert np.allclose(ba["p_slot_a"].to_numpy(), 1 - ab["p_slot_a"].to_numpy())
    assert np.allclose(ab["p_tie"], 0.2) and np.allclose(ba["p_tie"], 0.2)


# --- the content hash: every field that changes a verdict ----------------------------------


def _base_template() -> JudgeTemplate:
    return JudgeTemplate(
        name="t",
        kind="toml",
        messages=(("system", "Be fair."), ("user", "{question} {answer_a} {answer_b}")),
        slots=(("question", "question"), ("answer_a", "answer_a"), ("answer_b", "answer_b")),
        fill="names",
        verdict=labels_format("t", [("[[A]]", "A"), ("[[B]]", "B")], pick="last"),
        answer_prefix="[[",
    )


_VERDICT = labels_format("t", [("[[A]]", "A"), ("[[B]]", "B")], pick="last")
_CHANGED: dict[str, object] = {
    "messages": (("system", "Be very fair."), ("user", "{question} {answer_a} {answer_b}")),
    "slots": (("question", "question"), ("answer_a", "answer_b"), ("answer_b", "answer_a")),
    "fill": "format",
    "chatml": True,
    "verdict": labels_format("t", [("[[A]]", "A"), ("[[B]]", "B")], pick="priority"),
    "answer_prefix": "Verdict: [[",
}
#: fields that change no verdict: a copy of a template under another name or file is
#: the same prompt
_NOT_HASHED = {"name", "kind", "source"}
_VERDICT_CHANGED: dict[str, object] = {
    "pattern": re.compile(r"\[\[(A|B)\]\]", re.IGNORECASE),
    "fallback": (re.compile(r"\[(A|B)\]"),),
    "labels": (("A", "B"), ("B", "A")),
    "pick": "unique",
    "opener": "[",
    "closer": "]",
    "tokens": "exact",
    "casefold": True,
}


def test_every_template_field_is_either_hashed_or_named_as_not() -> None:
    fields = {f.name for f in dataclasses.fields(JudgeTemplate)}
    assert fields == set(_CHANGED) | _NOT_HASHED
    assert set(_VERDICT.spec()) - {"flags"} == set(_VERDICT_CHANGED)


@pytest.mark.parametrize("field", sorted(_CHANGED))
def test_the_content_hash_changes_with_every_hashed_field(field: str) -> None:
    """The hash was tested for one difference only: dropping answer_prefix from it
    went unnoticed."""
    base = _base_template()
    changed = dataclasses.replace(base, **{field: _CHANGED[field]})
    assert changed.sha256 != base.sha256


@pytest.mark.parametrize("field", sorted(_VERDICT_CHANGED))
def test_the_content_hash_changes_with_every_rule_of_reading(field: str) -> None:
    base = _base_template()
    verdict = dataclasses.replace(base.verdict, **{field: _VERDICT_CHANGED[field]})
    assert dataclasses.replace(base, verdict=verdict).sha256 != base.sha256


@pytest.mark.parametrize("field", sorted(_NOT_HASHED))
def test_the_content_hash_ignores_where_a_template_came_from(field: str) -> None:
    base = _base_template()
    other = {"name": "renamed", "kind": "fastchat", "source": "elsewhere.toml"}[field]
    assert dataclasses.replace(base, **{field: other}).sha256 == base.sha256


# --- an edited template: both hashes said ------------------------------------------------


def test_a_template_edited_in_place_is_refused_with_both_hashes(tmp_path: Path) -> None:
    """The refusal named the same name twice ('strict' ... this run uses 'strict')."""
    path = tmp_path / "strict.toml"
    path.write_text(_BASE + 'a = "[[A]]"\nb = "[[B]]"\n', encoding="utf-8")
    before = load_template(path)
    with Store(tmp_path / "s.db") as store:
        Runner(FakeBackend(), store, judge="j", progress=False).pairwise(
            pd.DataFrame(fake_pairs(2)), PairwiseProtocol(template=before)
        )
        path.write_text(_BASE + 'a = "[[A]]"\nb = "[[B]]"\ntie = "[[C]]"\n', encoding="utf-8")
        after = load_template(path)
        with pytest.raises(ConfigError) as err:
            Runner(FakeBackend(), store, judge="j", progress=False).pairwise(
                pd.DataFrame(fake_pairs(2)), PairwiseProtocol(template=after)
            )
    message = str(err.value)
    assert f"'strict' (sha256 {before.sha256[:12]})" in message
    assert f"'strict' (sha256 {after.sha256[:12]})" in message
    assert "edited since?" in message
