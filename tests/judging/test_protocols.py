"""Prompt templates, the order swap, Eq. 3 and answer parsing."""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from recuse.errors import ConfigError
from recuse.judging.protocols import (
    DIMENSIONS,
    VERDICT_FORMATS,
    Pair,
    PairwiseProtocol,
    bad_logprobs,
    commits_to,
    content_key,
    dimension,
    json_text,
    likert_prompt,
    parse_rating,
    parse_verdict,
    present,
    score_distribution,
    split_at_verdict,
    to_ab,
    verdict_score,
)

PAIR = Pair("x", "Q?", "answer from a", "answer from b")


def test_present_swaps_and_is_invertible() -> None:
    assert present(PAIR, "first").slot_a == "answer from a"
    shown = present(PAIR, "second")
    assert (shown.slot_a, shown.slot_b) == ("answer from b", "answer from a")
    swapped = Pair("x", "Q?", shown.slot_a, shown.slot_b)
    back = present(swapped, "second")
    assert (back.slot_a, back.slot_b) == (PAIR.response_a, PAIR.response_b)


@given(st.floats(0, 1))
def test_to_ab_is_its_own_inverse(p: float) -> None:
    for order in ("first", "second"):
        assert to_ab(to_ab(p, order), order) == pytest.approx(p)
    assert to_ab(p, "second") == pytest.approx(1 - p)


def test_pairwise_prompt_puts_answers_in_slots() -> None:
    direct = PairwiseProtocol(mode="direct")
    p1, p2 = direct.prompt(PAIR, "first"), direct.prompt(PAIR, "second")
    user1, user2 = p1.messages[-1].content, p2.messages[-1].content
    assert user1.index("answer from a") < user1.index("answer from b")
    assert user2.index("answer from b") < user2.index("answer from a")
    assert p1.prefix.endswith("[[") and "[[A]]" in p1.messages[0].content
    assert PairwiseProtocol(mode="explain").prompt(PAIR, "first").prefix == ""
    # the cache key parameters differ between modes, not with batch settings
    assert direct.key_params() != PairwiseProtocol(mode="explain").key_params()


def test_commits_to() -> None:
    for tok in ("A", " A", "A]", "A]]", "\tA"):
        assert commits_to(tok, "A")
    for tok in ("AB", "", " ", "a", "B", "A]]]", "[A"):
        assert not commits_to(tok, "A")


def test_eq3_hand_computed() -> None:
    dist = {
        "A": math.log(0.3),
        " A": math.log(0.1),
        "B": math.log(0.2),
        "C": math.log(0.25),
        "The": math.log(0.15),
    }
    s = score_distribution(dist)
    assert s.status == "ok"
    assert s.p_slot_a == pytest.approx(0.4 / 0.6)
    assert s.mass == pytest.approx(0.6)
    assert s.p_tie == pytest.approx(0.25)
    none = score_distribution({"The": 0.0, "C": -1.0})
    assert none.status == "unparsed" and math.isnan(none.p_slot_a)


#: token texts that do and do not commit to a verdict under the formats
_TOKENS = ["A", " A", "A]", "A]]", "B", " B", "B]]", "C", " C", "[[", "The", "a", "Yes",
           "No", " 1", "1", "2", "Assistant A", "[[A", "", " "]  # fmt: skip


@given(
    st.dictionaries(
        st.sampled_from(_TOKENS),
        st.floats(min_value=-30.0, max_value=0.0),
        max_size=12,
    ),
    st.sampled_from(sorted(VERDICT_FORMATS)),
)
def test_eq3_equals_its_definition_bit_for_bit(dist: dict[str, float], name: str) -> None:
    """Eq. 3 reads each token's verdicts once per format (kept across calls): the same
    numbers, to the bit, as summing exp(log-prob) over the tokens that commit to each
    verdict in the distribution's order."""
    fmt = VERDICT_FORMATS[name]
    for _ in range(2):  # the second time from what the first kept
        s = score_distribution(dist, fmt=fmt)
        pa, pb, pc = (
            float(sum(math.exp(lp) for t, lp in dist.items() if fmt.commits(t, v)))
            for v in ("A", "B", "C")
        )
        assert (s.mass, s.p_tie) == (pa + pb, pc)
        if pa + pb >= 1e-6:
            assert s.status == "ok" and s.p_slot_a == pa / (pa + pb)
        else:
            assert s.status == "unparsed" and math.isnan(s.p_slot_a)


@pytest.mark.parametrize(
    ("values", "bad"),
    [
        ([-1.0, 0.0, 1e-6, -1e308], None),
        ([np.float64(-0.5), 0, False, -3], None),  # a number of any kind Python's are
        ([-1.0, 2e-6], 2e-6),
        ([-1.0, float("nan"), 5.0], float("nan")),
        ([-math.inf], -math.inf),
        ([-1.0, math.inf], math.inf),
        ([np.float32(-0.5)], np.float32(-0.5)),  # not a Python float
        ([-0.5, "-1.0"], "-1.0"),
        ([None], None),
    ],
)
def test_bad_logprobs_names_the_first_value_that_is_no_log_prob(
    values: list[object], bad: object
) -> None:
    dist = {f"t{i}": v for i, v in enumerate(values)}
    said = bad_logprobs(dist)  # type: ignore[arg-type]
    if bad is None and values != [None]:
        assert said is None
    else:
        assert said == f"the judge returned a log-prob of {bad!r} (log-probs are finite and <= 0)"


def test_parse_verdict_and_split() -> None:
    assert parse_verdict("A is good. [[B]] ... final: [[A]]") == "A"
    assert parse_verdict("[[ C ]]") == "C"
    assert parse_verdict("I prefer A") is None
    assert verdict_score("C").p_slot_a == 0.5
    assert verdict_score(None).status == "unparsed"
    assert split_at_verdict("Both fine. [[A]]") == "Both fine. [["
    assert split_at_verdict("no verdict") is None


def test_six_dimensions_with_paper_scales() -> None:
    assert set(DIMENSIONS) == {
        "faithfulness",
        "logical_robustness",
        "logical_correctness",
        "helpfulness",
        "completeness",
        "conciseness",
    }
    assert len(DIMENSIONS["helpfulness"].labels) == 7
    assert len(DIMENSIONS["logical_correctness"].labels) == 3
    assert dimension("Logical correctness") is DIMENSIONS["logical_correctness"]
    with pytest.raises(ConfigError, match="unknown dimension"):
        dimension("charm")


@pytest.mark.parametrize(
    ("name", "text", "value"),
    [
        ("logical_correctness", "Explanation: ok.\nAnswer: partially correct", 1.0),
        ("logical_correctness", "Explanation: ok.\nAnswer: Correct.", 2.0),
        ("logical_correctness", "Answer: incorrect", 0.0),
        ("completeness", "Explanation: x\nAnswer: Not generally", 1.0),
        ("completeness", "Answer: not at all", 0.0),
        ("completeness", "Answer: **Yes**", 4.0),
        ("completeness", "Answer: Generally yes, mostly", 3.0),
        ("helpfulness", "Answer: above and beyond", 6.0),
        ("helpfulness", "Answer: not helpful at all", 0.0),
        ("conciseness", "answer: mostly", 3.0),
        ("faithfulness", "Answer: approximately half is faithful", 2.0),
    ],
)
def test_parse_rating(name: str, text: str, value: float) -> None:
    r = parse_rating(text, DIMENSIONS[name])
    assert r.status == "ok" and r.value == value


@pytest.mark.parametrize(
    "text", ["I think it is fine.", "Answer: sort of", "Answer:", "Answer: correctish"]
)
def test_unparseable_rating_is_unparsed(text: str) -> None:
    r = parse_rating(text, DIMENSIONS["logical_correctness"])
    assert r.status == "unparsed" and math.isnan(r.value) and r.label is None


def test_likert_prompt_lists_every_label() -> None:
    d = DIMENSIONS["helpfulness"]
    text = likert_prompt("Task T", "Response R", d).messages[0].content
    assert "Task T" in text and "Response R" in text
    assert all(f"- {label}" in text for label in d.labels)


def test_a_formats_selector_is_made_once_and_follows_its_own_labels() -> None:
    import dataclasses
    import pickle

    fmt = VERDICT_FORMATS["brackets"]
    sel = fmt.selector()
    assert fmt.selector() is sel  # shared: asked for on every call
    # the texts, worked out by hand: each prefix of "X]]", bare and after a space
    expect = tuple(t for v in "ABC" for t in (v, f"{v}]", f"{v}]]", f" {v}", f" {v}]", f" {v}]]"))
    assert sel.candidates == expect
    assert sel.needed == (expect[:6], expect[6:12])
    assert sel("A]") and sel(" B") and not sel("D") and not sel("]")
    # a format made from it (other closer) has its own, not the one made before
    other = dataclasses.replace(fmt, closer=")")
    assert other.selector().candidates == tuple(
        t for v in "ABC" for t in (v, f"{v})", f" {v}", f" {v})")
    )
    # a copy sent to another process (Ray) reads the same
    assert pickle.loads(pickle.dumps(fmt)).selector().candidates == expect


def test_token_logprobs_adds_a_token_listed_twice_and_keeps_the_rest_as_listed() -> None:
    from recuse.verdict_parsing import token_logprobs

    top = [
        {"token": "A", "logprob": math.log(0.2)},
        {"token": "B", "logprob": math.log(0.5)},
        {"token": "A", "logprob": math.log(0.1)},  # another id that decodes alike
    ]
    chat = {"logprobs": {"content": [{"token": "A", "logprob": -1.6, "top_logprobs": top}]}}
    tokens, dists = token_logprobs(chat)
    assert tokens == ["A"] and list(dists[0]) == ["A", "B"]
    assert dists[0]["A"] == pytest.approx(math.log(0.3), abs=1e-12)
    assert dists[0]["B"] == math.log(0.5)
    legacy = {"logprobs": {"tokens": ["B"], "top_logprobs": [{"B": -0.7, "A": -0.9, "C": -3}]}}
    tokens, dists = token_logprobs(legacy)
    assert tokens == ["B"] and dists == [{"B": -0.7, "A": -0.9, "C": -3.0}]
    assert list(dists[0]) == ["B", "A", "C"] and type(dists[0]["C"]) is float


def _dumped(text: str) -> bytes:
    return json.dumps(text, ensure_ascii=False).encode("utf-8")


def test_json_text_is_the_json_of_every_character() -> None:
    """Every code point but the surrogates, alone, between others and all in one text,
    written as ``json.dumps(..., ensure_ascii=False)`` writes it; a lone surrogate is
    refused as the key's encoding refused it."""
    every = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    assert json_text("".join(every)) == _dumped("".join(every))
    for c in [*every[:0x100], "\u2028", "\u2029", "\ufeff", "\U0010ffff"]:
        for text in (c, f"a{c}b", f"{c}{c}\n\\"):
            assert json_text(text) == _dumped(text), repr(text)
    with pytest.raises(UnicodeEncodeError):
        json_text("a\ud800b")


@given(st.text())
def test_json_text_of_any_text(text: str) -> None:
    assert json_text(text) == _dumped(text)


@pytest.mark.parametrize(
    ("model_id", "revision", "params"),
    [
        ("org/judge-7b", "rev-abc", {"protocol": "pairwise-v1", "mode": "direct", "top_k": 20}),
        ('m "quoted" \\ é', "r\n日本", {}),
        ("m", "", {"z": [1, 2.5, None, True], "a": {"y": "\x00\u2028", "b": -0.0}, "é": 1e300}),
        ("m", "r", {"n": np.int64(20), "x": np.float64(0.1), "prompt": "in params too"}),
    ],
)
def test_content_keys_are_the_sha256_of_the_whole_json(
    model_id: str, revision: str, params: dict[str, object]
) -> None:
    """A key hashes its JSON written around the prompt (KeyFrame); the same bytes as
    the whole object dumped at once, as keys were computed before (worked out here)."""
    plain = json.loads(json.dumps(params, default=lambda v: v.item()))  # NumPy as Python
    for prompt in ["", "p", '<user>3:a"b\\<prefix>2:[[', "\x1f\t\x7f \U0001f600 " * 50]:
        blob = {"model": model_id, "revision": revision, "prompt": prompt, "params": plain}
        dumped = json.dumps(blob, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        want = hashlib.sha256(dumped.encode("utf-8")).hexdigest()
        assert (
            content_key(model_id=model_id, revision=revision, prompt=prompt, params=params) == want
        )
