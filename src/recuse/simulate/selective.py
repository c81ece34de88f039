"""Planted truth for selective judging: items whose chance of a correct verdict is
known, with a judge that is over-confident on its own and its family's answers.

Each item gets a stratum (``own`` with probability ``own_share``: one answer is by the
judge's model; ``family`` with ``family_share``: one by another model of its family;
else ``other``) and an ease ``s ~ Beta(ease, 1)`` (density ``ease·s^(ease−1)``: most
items easy for ``ease > 1``). The judge states the confidence ``c = 0.5 + 0.5 s`` (a
continuous value, so thresholds are fine-grained), and its verdict agrees with the
human label with probability::

    q = c                                    (other items: calibrated)
    q = max(0.5, c - own_drop)               (own items: as confident, less often right)
    q = max(0.5, c - family_drop)            (family items)

The human label is a or b at random; the verdict is the label with probability ``q``,
the other answer otherwise; ``p_a = c`` for a verdict a and ``1 - c`` for b, the same
in both orders. The true agreement among kept items of a stratum at threshold ``λ`` is
``E[q | c ≥ λ]``, which :meth:`SimulatedSelective.true_agreement` computes by
quadrature from the planted density (no sampling).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

__all__ = ["JUDGE", "SimulatedSelective", "simulate_selective"]

JUDGE = "gpt-4"
FAMILY = "gpt-3.5-turbo"
OTHERS = ("claude-v1", "vicuna-13b", "alpaca-13b", "llama-13b")


@dataclass(frozen=True)
class SimulatedSelective:
    """A simulated labelled pairs table and the planted truth behind it."""

    pairs: pd.DataFrame
    q: NDArray[np.float64]  # each item's probability that the verdict agrees
    stratum: NDArray[np.object_]
    own_drop: float
    family_drop: float
    ease: float

    def true_agreement(self, threshold: float, stratum: str | None = None) -> float:
        """``E[q | c ≥ threshold]`` (in ``stratum``; pooled: weighted by the strata's
        shares in this sample) from the planted density of ``c`` and
        ``q = max(0.5, c − d)``, by quadrature."""
        lam = max(0.5, float(threshold))
        drops = {"own": self.own_drop, "family": self.family_drop, "other": 0.0}
        shares = {s: float(np.mean(self.stratum == s)) for s in drops}
        use = [stratum] if stratum is not None else [s for s in drops if shares[s] > 0]
        num = den = 0.0
        for s in use:
            w = shares[s] if stratum is None else 1.0
            mass, total = _q_mass(lam, drops[s], self.ease)
            num += w * total
            den += w * mass
        return num / den if den else float("nan")


def _q_mass(lam: float, d: float, ease: float) -> tuple[float, float]:
    """``P(c ≥ lam)`` and ``E[q · 1(c ≥ lam)]`` for ``c = 0.5 + 0.5 s``,
    ``s ~ Beta(ease, 1)``, ``q = max(0.5, c − d)`` (midpoint rule, 20,000 cells)."""
    lo = min(max(2 * lam - 1, 0.0), 1.0)
    if lo >= 1:
        return 0.0, 0.0
    edges = np.linspace(lo, 1.0, 20_001)
    s = (edges[1:] + edges[:-1]) / 2
    w = edges[1:] ** ease - edges[:-1] ** ease  # P(s in cell), exactly
    q = np.maximum(0.5, 0.5 + 0.5 * s - d)
    return float(w.sum()), float((w * q).sum())


def simulate_selective(
    n: int = 1000,
    *,
    own_share: float = 0.3,
    family_share: float = 0.2,
    own_drop: float = 0.08,
    family_drop: float = 0.04,
    ease: float = 3.0,
    seed: int = 0,
) -> SimulatedSelective:
    """``n`` labelled items judged by :data:`JUDGE` (module docstring for the model).

    >>> sim = simulate_selective(200, seed=1)
    >>> sim.pairs["judge"].unique().tolist(), round(sim.true_agreement(0.5, "other"), 4)
    (['gpt-4'], 0.875)
    """
    rng = np.random.default_rng(seed)
    u = rng.random(n)
    stratum = np.where(u < own_share, "own", np.where(u < own_share + family_share, "family",
                                                       "other")).astype(object)  # fmt: skip
    c = 0.5 + 0.5 * rng.random(n) ** (1 / ease)  # s = U^(1/ease) ~ Beta(ease, 1)
    drop = np.where(stratum == "own", own_drop, np.where(stratum == "family", family_drop, 0.0))
    q = np.maximum(0.5, c - drop)
    human_a = rng.random(n) < 0.5
    right = rng.random(n) < q
    verdict_a = np.where(right, human_a, ~human_a)
    p_a = np.where(verdict_a, c, 1 - c)
    names = np.array(OTHERS, dtype=object)
    i = rng.integers(len(OTHERS), size=n)
    j = (i + rng.integers(1, len(OTHERS), size=n)) % len(OTHERS)  # another outsider
    first = np.where(stratum == "own", JUDGE, np.where(stratum == "family", FAMILY, names[j]))
    mate = names[i]
    swap = rng.random(n) < 0.5  # which side the first model's answer is on
    model_a = np.where(swap, mate, first)
    model_b = np.where(swap, first, mate)
    pairs = pd.DataFrame(
        {
            "item_id": [f"sel-{seed}-{i}" for i in range(n)],
            "prompt_id": [f"p{i}" for i in range(n)],
            "model_a": model_a,
            "model_b": model_b,
            "human": human_a.astype(float),
            "judge": JUDGE,
            "p_a_first": p_a,
            "p_a_second": p_a,
            "p_a": p_a,
        }
    )
    return SimulatedSelective(pairs, q, stratum, own_drop, family_drop, ease)
