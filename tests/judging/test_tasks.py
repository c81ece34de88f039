"""Tasks and their keying: immutable and hashable, with the content keys they had."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from recuse.errors import ConfigError
from recuse.judging.protocols import (
    ORDERS,
    LikertProtocol,
    Pair,
    PairwiseProtocol,
    content_key,
    dimension,
    response_prompt,
)
from recuse.judging.tasks import FrozenParams, Keying, Task

# content keys of these tasks as the code made them when Keying held the caller's
# dict (computed there, 2026-11-29): a stored judgment is found by them, so they
# must not move
PAIR = Pair("i0", "What is 2+2?", "4", "5")
PAIRWISE_KEYS = {
    "first": "f870f003581c6e0ca2fa6fc2559a7e4e5af3b87498009df7c9cd043932031e16",
    "second": "0c7f358ee69a9ceaaed0d7a2489e2dfcae572cbbbbaa1df9bb9f2b7da712abbf",
}
LIKERT_KEY = "a15910ef7214386f5467b4648e6c1a52196270d93c6e52be6cc1c397700537cd"
REWRITE_KEY = "82115819ca9388d4f200e5abbf645b035e3a45a4742fe23fa21c214ceda74585"
REWRITE_PARAMS = {"protocol": "rewrite-v1", "max_new_tokens": 256, "decoding": "greedy"}


def _likert_params() -> dict[str, object]:
    d = dimension("logical correctness")
    # as the runner builds them: the labels a list (JSON writes a tuple the same)
    return {**LikertProtocol().key_params(), "dimension": d.name, "labels": list(d.labels)}


def test_content_keys_are_the_ones_stored_before() -> None:
    proto = PairwiseProtocol()
    keying = Keying("org/judge-7b", "rev-abc", proto.key_params())
    for order in ORDERS:
        prompt = proto.prompt(PAIR, order)
        task = Task(keying, "pairwise", "i0", order, prompt, order=order)
        assert task.key == PAIRWISE_KEYS[order]
        # and what content_key gives for the plain dict
        assert task.key == content_key(
            model_id="org/judge-7b",
            revision="rev-abc",
            prompt=prompt.canonical(),
            params=proto.key_params(),
        )
    text = response_prompt("Explain gravity.")
    assert Keying("org/judge-7b", "rev-abc", _likert_params()).key(text) == LIKERT_KEY
    assert Keying("m", "r", REWRITE_PARAMS).key(text) == REWRITE_KEY


def test_a_task_keyed_by_a_keying_hashes() -> None:
    """Keying.params was the caller's dict: hash(Task) raised TypeError (unhashable
    type: 'dict'), so tasks could not go in a set or key a dict."""
    d = dimension("logical correctness")
    text = response_prompt("Explain gravity.")

    def likert() -> Task:
        keying = Keying("j", "r", _likert_params())
        return Task(keying, "likert", "q|m", d.name, text, dimension=d)

    a, b = likert(), likert()
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    other = Task(Keying("j", "r2", _likert_params()), "likert", "q|m", d.name, text, dimension=d)
    assert len({a, other}) == 2 and a != other
    nested = Keying("j", "r", {"options": {"stop": ["\n"], "n": 1}})
    assert hash(nested) == hash(Keying("j", "r", {"options": {"n": 1, "stop": ("\n",)}}))


def test_a_keying_is_read_only_and_keeps_its_own_copy() -> None:
    params = _likert_params()
    keying = Keying("org/judge-7b", "rev-abc", params)
    text = response_prompt("Explain gravity.")
    before = keying.key(text)
    params["labels"] = ["1", "2"]  # the caller's dict, changed afterwards
    params["extra"] = 1
    assert keying.key(text) == before == LIKERT_KEY
    with pytest.raises(TypeError, match="read-only"):
        keying.params["extra"] = 1  # type: ignore[index]
    with pytest.raises(TypeError, match="read-only"):
        keying.params.update(extra=1)  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="read-only"):
        del keying.params["dimension"]  # type: ignore[attr-defined]
    assert "extra" not in keying.params and isinstance(keying.params, FrozenParams)


def test_a_task_survives_pickle_and_copy_with_its_key() -> None:
    """A task travels to a Ray worker pickled: the read-only params must rebuild."""
    proto = PairwiseProtocol()
    keying = Keying("org/judge-7b", "rev-abc", proto.key_params())
    task = Task(keying, "pairwise", "i0", "first", proto.prompt(PAIR, "first"), order="first")
    for back in (pickle.loads(pickle.dumps(task)), copy.deepcopy(task), copy.copy(task)):
        assert back == task and hash(back) == hash(task)
        assert back.key == PAIRWISE_KEYS["first"]
        assert isinstance(back.key_from, Keying)
        assert isinstance(back.key_from.params, FrozenParams)


def test_numpy_params_key_as_the_equal_python_values() -> None:
    """``top_k=np.int64(20)`` (a number read from a table or config array) failed the
    content key's JSON with a TypeError traceback; it keys as 20 does, so the stored
    judgments are found (the keys pinned above)."""
    proto = PairwiseProtocol(top_k=np.int64(20))  # type: ignore[arg-type]
    keying = Keying("org/judge-7b", "rev-abc", proto.key_params())
    prompt = proto.prompt(PAIR, "first")
    task = Task(keying, "pairwise", "i0", "first", prompt, order="first")
    assert task.key == PAIRWISE_KEYS["first"]
    likert = {
        **_likert_params(),
        "max_new_tokens": np.int64(256),
        "labels": np.array(_likert_params()["labels"]).tolist(),  # type: ignore[call-overload]
    }
    text = response_prompt("Explain gravity.")
    assert Keying("org/judge-7b", "rev-abc", likert).key(text) == LIKERT_KEY
    numbers = {"a": np.int32(3), "b": np.float64(0.1), "c": np.bool_(True), "d": np.float32(2)}
    plain = {"a": 3, "b": 0.1, "c": True, "d": 2.0}
    direct = content_key(model_id="m", revision="r", prompt="p", params=numbers)
    assert direct == content_key(model_id="m", revision="r", prompt="p", params=plain)
    assert Keying("m", "r", {"x": (np.int64(1), [np.float64(0.5)])}).params == {"x": (1, (0.5,))}
    # 1 and 1.0 still key apart, as stored keys always have
    assert Keying("m", "r", {"n": 1}).key(text) != Keying("m", "r", {"n": 1.0}).key(text)


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"stop": {"\n", "###"}}, "stop"),
        ({"options": {"n": 1, "extra": object()}}, "options.extra"),
        ({"labels": ["1", {"2"}]}, r"labels\[1\]"),
        ({"seed": np.array([1, 2])}, "seed"),
    ],
)
def test_a_param_no_key_can_hold_is_a_config_error_naming_it(
    params: dict[str, object], named: str
) -> None:
    """A set (no one order to write), an object or an array: a ConfigError naming the
    parameter when the Keying is made, not a TypeError when the first key is read."""
    with pytest.raises(ConfigError, match=rf"^judge parameter {named}: .* cannot be part of"):
        Keying("m", "r", params)
    with pytest.raises(ConfigError, match="cannot be part of a content key"):
        content_key(model_id="m", revision="r", prompt="p", params=params)


def test_names_of_two_types_in_one_table_are_a_config_error() -> None:
    """A table whose names mix texts and numbers (``logit_bias={50256: -100, "a": 1}``)
    cannot be written in one sorted order: a ConfigError naming the parameter, not the
    TypeError of the sort when the first key is read; a direct content_key with a NumPy
    name likewise (json writes no np.int64 name), a table of numbers alone still keys."""
    with pytest.raises(ConfigError, match=r"^judge parameter logit_bias: .*names of more"):
        Keying("m", "r", {"logit_bias": {50256: -100, "a": 1}})
    with pytest.raises(ConfigError, match="cannot be part of a content key"):
        content_key(model_id="m", revision="r", prompt="p", params={"b": {1: 1, "a": 2}})
    with pytest.raises(ConfigError, match="cannot be part of a content key"):
        content_key(model_id="m", revision="r", prompt="p", params={"b": {np.int64(1): 1}})
    ints = Keying("m", "r", {"logit_bias": {np.int64(50256): -100, 13: 5}})
    assert ints.params == {"logit_bias": {50256: -100, 13: 5}}
    text = response_prompt("Explain gravity.")
    assert ints.key(text) == Keying("m", "r", {"logit_bias": {50256: -100, 13: 5}}).key(text)
