"""Planted tables shared by the tests of certification (test_selective.py) and of
applying its thresholds (test_thresholds.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from recuse.roster import Roster

ROSTER = Roster.load()


def table(
    n: int,
    *,
    judge: str = "j",
    p: float = 0.9,
    agree: int | None = None,
    model_a: str = "m1",
    model_b: str = "m2",
    start: int = 0,
) -> pd.DataFrame:
    """``n`` items all labelled a; ``agree`` of them judged a with probability ``p``,
    the rest judged b with the same confidence."""
    agree = n if agree is None else agree
    p_a = np.r_[np.full(agree, p), np.full(n - agree, 1 - p)]
    return pd.DataFrame({
        "item_id": [f"i{start + k}" for k in range(n)],
        "prompt_id": [f"q{start + k}" for k in range(n)],
        "model_a": model_a, "model_b": model_b, "human": 1.0, "judge": judge,
        "p_a_first": p_a, "p_a_second": p_a, "p_a": p_a,
    })  # fmt: skip


def mixed_orders(
    n: int, one_order: float, rng: np.random.Generator, start: int = 0
) -> pd.DataFrame:
    """A picks-only judge: on 70% of items (easy) both orders give the same pick, right
    with probability 0.97; on the rest it picks the answer shown first (a flip). A share
    ``one_order`` of items has its second order missing (failed)."""
    human = (rng.random(n) < 0.5).astype(float)
    easy = rng.random(n) < 0.7
    right = rng.random(n) < 0.97
    pick = np.where(right, human, 1 - human)
    first = np.where(easy, pick, 1.0)
    second = np.where(easy, pick, 0.0)
    second = np.where(rng.random(n) < one_order, np.nan, second)
    return pd.DataFrame({
        "item_id": [f"i{start + k}" for k in range(n)],
        "prompt_id": [f"q{start + k}" for k in range(n)],
        "model_a": "m1", "model_b": "m2", "human": human, "judge": "j",
        "p_a_first": first, "p_a_second": second, "p_a": np.nanmean([first, second], axis=0),
    })  # fmt: skip


def calibrated(n: int, rng: np.random.Generator, start: int = 0) -> pd.DataFrame:
    """A judge whose probability is calibrated: confidence c ~ U(0.5, 1), its verdict
    right with probability c (planted), both orders alike."""
    human = (rng.random(n) < 0.5).astype(float)
    c = rng.uniform(0.5, 1.0, n)
    pick = np.where(rng.random(n) < c, human, 1 - human)
    p_a = np.where(pick == 1, c, 1 - c)
    return pd.DataFrame({
        "item_id": [f"i{start + k}" for k in range(n)],
        "prompt_id": [f"q{start + k}" for k in range(n)],
        "model_a": "m1", "model_b": "m2", "human": human, "judge": "j",
        "p_a_first": p_a, "p_a_second": p_a, "p_a": p_a,
    })  # fmt: skip


def prompted(n_prompts: int, per: int, spread: float, seed: int) -> pd.DataFrame:
    """A judge whose confidence c tells its agreement (logit c + 0.9) shifted by a prompt
    effect, normal with sd ``spread`` on the logit, shared by the prompt's ``per`` items."""
    rng = np.random.default_rng(seed)
    n = n_prompts * per
    prompt = np.repeat(np.arange(n_prompts), per)
    c = rng.uniform(0.5, 0.999, n)
    shift = rng.normal(0.0, spread, n_prompts)[prompt]
    right = rng.random(n) < 1 / (1 + np.exp(-(np.log(c / (1 - c)) + 0.9 + shift)))
    a_better = rng.random(n) < 0.5
    p_a = np.where(a_better, c, 1 - c)
    human = np.where(right, a_better, ~a_better).astype(float)
    return pd.DataFrame({"item_id": [f"i{k}" for k in range(n)],
                         "prompt_id": [f"p{k}" for k in prompt], "judge": "j",
                         "p_a_first": p_a, "p_a_second": p_a, "human": human})  # fmt: skip
