"""Simulated two-order verdicts with a planted first-position rate and realistic noise.

:func:`simulate_position` is the simulator ``recuse plan --bias position`` checks its
sizes with. Real judges flip many verdicts when the order is swapped for reasons other
than a steady preference for a slot (LLMBar: GPT-4 reverses 12% of its winners,
PaLM-2 27%, GPT-3.5 41%); a simulation without that noise makes the first-position
rate look far easier to estimate than it is.

Generative model (all options are the population values of the generated table):

* per prompt ``p``, a position preference ``w_p = w + u_p`` with
  ``u_p ~ Uniform(-a, a)`` shared by the prompt's pairs (``a`` set so that the
  within-prompt correlation of the per-pair statistic ``(p_a_first + 1 − p_a_second)/2``
  is ``icc``);
* per pair, the side ``z`` (a or b) its content favours, a fair coin;
* per order, independently: a tie (``p = 0.5``) with probability ``tie_rate``; else the
  judge picks the slot ``w_p`` points to (first if ``w_p > 0``) with probability
  ``|w_p|``, a random side with probability ``c``, and ``z`` otherwise.

Then the first-position rate is ``0.5 + (1 − tie_rate) w / 2`` (so ``w = 2 effect /
(1 − tie_rate)``) and, given ``w_p``, the flip rate (winner reversed) is
``(1 − tie_rate)² (|w_p| + c − |w_p| c − c²/2)``; ``c`` is solved so that its average
over prompts is ``flip_rate``. :func:`position_moments` gives the exact variance of the
per-pair statistic and its intra-prompt correlation (Gauss–Legendre quadrature over
``u_p``), which the planner's first guess uses.

>>> t = simulate_position(effect=0.05, n_prompts=2000, pairs_per_prompt=2, seed=3)
>>> len(t), round(float(((t.p_a_first + 1 - t.p_a_second) / 2).mean()), 2)
(4000, 0.55)
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.polynomial.legendre import leggauss
from scipy.optimize import brentq

from recuse.errors import ConfigError
from recuse.numbers import lower_bound

__all__ = ["PositionNoise", "position_moments", "simulate_position", "solve_noise"]

_NODES, _WEIGHTS = leggauss(48)


@dataclass(frozen=True)
class PositionNoise:
    """The solved parameters of the model: slot preference ``w``, prompt spread ``a``,
    random-pick share ``c``; and the per-pair statistic's mean, variance and ICC."""

    w: float
    a: float
    c: float
    tie: float
    mean: float
    variance: float
    icc: float


def _grid(w: float, a: float) -> tuple[np.ndarray, np.ndarray]:
    """Quadrature nodes for ``w_p`` over ``w + Uniform(-a, a)`` (split at 0, the kink of
    ``|w_p|``) and their weights (summing to 1)."""
    if a == 0:
        return np.array([w]), np.array([1.0])
    lo, hi = w - a, w + a
    cuts = [lo, hi] if not lo < 0 < hi else [lo, 0.0, hi]
    xs, ws = [], []
    for left, right in itertools.pairwise(cuts):
        half = (right - left) / 2
        xs.append(left + half * (_NODES + 1))
        ws.append(_WEIGHTS * half / (2 * a))
    return np.concatenate(xs), np.concatenate(ws)


def _flip(wp: np.ndarray, c: float, tie: float) -> np.ndarray:
    v = np.abs(wp)
    return (1 - tie) ** 2 * (v + c - v * c - c * c / 2)


def _pair_moments(wp: np.ndarray, c: float, tie: float) -> tuple[np.ndarray, np.ndarray]:
    """E[Y | w_p] and E[Y² | w_p] for Y = (f1 + f2) / 2, f the pick-first score per order."""
    v = np.abs(wp)
    m = 1 - v - c
    pos = wp > 0
    # P(first picked) in the order where content favours the first slot, and the other
    p_hi = (1 - tie) * np.where(pos, v + c / 2 + m, c / 2 + m)
    p_lo = (1 - tie) * np.where(pos, v + c / 2, c / 2)
    e1, e2 = p_hi + tie / 2, p_lo + tie / 2
    s1, s2 = p_hi + tie / 4, p_lo + tie / 4
    return (e1 + e2) / 2, (s1 + s2 + 2 * e1 * e2) / 4


def position_moments(w: float, a: float, c: float, tie: float) -> tuple[float, float, float, float]:
    """Mean flip rate, mean, variance and intra-prompt correlation of the per-pair
    statistic under the module's model."""
    wp, wt = _grid(w, a)
    mean_y, sq = _pair_moments(wp, c, tie)
    mean = float(wt @ mean_y)
    between = float(wt @ (mean_y - mean) ** 2)
    total = float(wt @ sq) - mean**2
    return float(wt @ _flip(wp, c, tie)), mean, total, between / total if total > 0 else 0.0


def _solve_c(w: float, a: float, flip_rate: float, tie: float) -> float:
    top = 1 - (abs(w) + a)
    if top < 0:
        raise ConfigError(
            f"a first-position effect this large with within-prompt correlation leaves no room "
            f"for random picks (|w| + spread = {abs(w) + a:.3f} > 1) — lower --icc"
        )
    low_f = position_moments(w, a, 0.0, tie)[0]
    high_f = position_moments(w, a, top, tie)[0]
    if not low_f - 1e-12 <= flip_rate <= high_f + 1e-12:
        raise ConfigError(
            f"--flip-rate {flip_rate:g} cannot go with this effect, tie share and correlation: "
            f"the model reaches flip rates {low_f:.3f} to {high_f:.3f} — choose one in that range"
        )
    if (low_f - flip_rate) * (high_f - flip_rate) >= 0:  # at an end (to rounding): no root
        return 0.0 if abs(low_f - flip_rate) <= abs(high_f - flip_rate) else top
    return float(
        brentq(lambda c: position_moments(w, a, c, tie)[0] - flip_rate, 0.0, top, xtol=1e-10)
    )


def solve_noise(*, effect: float, flip_rate: float, tie_rate: float, icc: float) -> PositionNoise:
    """The model's ``w``, ``a``, ``c`` for a first-position ``effect`` (rate − 0.5), a
    ``flip_rate``, a per-order ``tie_rate`` and an intra-prompt correlation ``icc``."""
    for name, value, high in (("--flip-rate", flip_rate, 1.0), ("--ties", tie_rate, 0.95),
                              ("--icc", icc, 0.9)):  # fmt: skip
        if not 0 <= value < high:
            raise ConfigError(f"{name} must be in [0, {high}); got {value:g}")
    w = 2 * effect / (1 - tie_rate)
    if abs(w) >= 1:
        raise ConfigError(
            f"a first-position effect of {effect:g} with tie share {tie_rate:g} is beyond the "
            f"model (the judge would pick by slot more than always) — lower --effect or --ties"
        )

    def icc_at(a: float) -> float:
        c = _solve_c(w, a, flip_rate, tie_rate)
        return position_moments(w, a, c, tie_rate)[3]

    a = 0.0
    if icc > 0:
        _solve_c(w, 0.0, flip_rate, tie_rate)  # the flip rate must fit without a spread
        top = 0.0  # the largest spread at which the flip rate is still reachable
        for x in np.linspace(0.0, 1 - abs(w), 201)[1:-1]:
            if not _reachable(w, float(x), flip_rate, tie_rate):
                break
            top = float(x)
        top_icc = icc_at(top) if top > 0 else 0.0
        if icc > top_icc:
            raise ConfigError(
                f"--icc {icc:g} is more within-prompt correlation than a flip rate of "
                f"{flip_rate:g} allows in this model (at most {lower_bound(top_icc, 2)}) — "
                "lower --icc"  # rounded down, so the correlation named fits: to nearest, it
                # could be above the largest (flip rate 0.05: "at most 0.03", then refused)
            )
        a = float(brentq(lambda x: icc_at(x) - icc, 0.0, top, xtol=1e-9))
    c = _solve_c(w, a, flip_rate, tie_rate)
    _, mean, var, rho = position_moments(w, a, c, tie_rate)
    return PositionNoise(w=w, a=a, c=c, tie=tie_rate, mean=mean, variance=var, icc=rho)


def _reachable(w: float, a: float, flip_rate: float, tie: float) -> bool:
    """Whether some random-pick share ``c`` gives ``flip_rate`` at spread ``a``."""
    top = 1 - (abs(w) + a)
    if top < 0:
        return False
    low = position_moments(w, a, 0.0, tie)[0]
    high = position_moments(w, a, top, tie)[0]
    return low - 1e-12 <= flip_rate <= high + 1e-12


def simulate_position(
    *,
    effect: float,
    flip_rate: float = 0.25,
    tie_rate: float = 0.05,
    icc: float = 0.2,
    n_prompts: int = 200,
    pairs_per_prompt: int = 3,
    judge: str = "judge",
    seed: int | None = 0,
    noise: PositionNoise | None = None,
) -> pd.DataFrame:
    """A pairs table (one judge, both orders, no human labels) of ``n_prompts *
    pairs_per_prompt`` pairs whose population first-position rate is ``0.5 + effect``,
    flip rate ``flip_rate``, per-order tie share ``tie_rate`` and intra-prompt
    correlation ``icc`` (see the module docstring). ``noise`` reuses a solved model."""
    if n_prompts < 1 or pairs_per_prompt < 1:
        raise ConfigError("n_prompts and pairs_per_prompt must be positive")
    nz = noise or solve_noise(effect=effect, flip_rate=flip_rate, tie_rate=tie_rate, icc=icc)
    rng = np.random.default_rng(seed)
    n = n_prompts * pairs_per_prompt
    prompt = np.repeat(np.arange(n_prompts), pairs_per_prompt)
    wp = (nz.w + rng.uniform(-nz.a, nz.a, size=n_prompts))[prompt]
    content_a = rng.random(n) < 0.5

    def order(a_first: bool) -> np.ndarray:
        r = rng.random(n)
        v = np.abs(wp)
        slot_is_a = (wp > 0) == a_first  # the slot the judge prefers holds a
        pick_a = np.where(
            r < v,
            slot_is_a,
            np.where(r < v + nz.c, rng.random(n) < 0.5, content_a),
        )
        tie = rng.random(n) < nz.tie
        return np.where(tie, 0.5, pick_a.astype(float))

    first, second = order(True), order(False)
    return pd.DataFrame(
        {
            "item_id": [f"pos-{i}" for i in range(n)],
            "prompt_id": [f"prompt-{p}" for p in prompt],
            "model_a": None,
            "model_b": None,
            "human": np.nan,
            "judge": judge,
            "p_a_first": first,
            "p_a_second": second,
            "p_a": (first + second) / 2,
        }
    )
