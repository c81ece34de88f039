"""Planted truth for AlpacaEval 2's length-controlled win rate, with instruction
difficulty that may move with answer length.

``systems`` systems each answer ``n_instructions`` instructions and are judged against
one baseline (AlpacaEval's layout: ``model_a`` = the baseline). Instruction ``i`` has an
easiness ``d_i ~ N(0, difficulty_sd²)`` shared by every system; system ``m``'s answer
is ``z_mi`` standard deviations longer than the baseline's, with::

    z_mi = −rho · d_i / difficulty_sd + sqrt(1 − rho²) · ε_mi,    ε_mi ~ N(0, 1)

so ``rho`` is the correlation between a system's answer length and the instruction's
*difficulty* (−d): ``rho > 0``, longer answers on harder instructions. The judge's
verdict (binary) follows the length-controlled GLM with the true difficulty::

    logit P(m beats the baseline on i) = θ_m + φ · tanh(δ_mi / σ_δ) + d_i

with ``δ_mi = −length_sd · z_mi`` (characters of the baseline − characters of the
system's answer; the baseline writes ``length`` characters on every instruction) and
``σ_δ = length_sd`` its standard deviation. The **estimand** is the win rate this model
gives at no length difference, averaged over instructions::

    LC_m = E_d σ(θ_m + d) = ∫ σ(θ_m + difficulty_sd · x) φ(x) dx

(φ the standard normal density), which :meth:`SimulatedLengthControlled.true_lc`
computes by Gauss–Hermite quadrature (no sampling). It is the population value of
:func:`recuse.metrics.length_controlled.length_controlled_win_rates`' ``lc_win_rate``
(``mean_i σ(θ_m + ψ_m γ_i)``) when ``γ_i`` is the true difficulty.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["BASELINE", "JUDGE", "SimulatedLengthControlled", "simulate_length_controlled"]

BASELINE = "baseline"
JUDGE = "judge"


@dataclass(frozen=True)
class SimulatedLengthControlled:
    """A simulated AlpacaEval-style table and the planted truth behind it."""

    pairs: pd.DataFrame
    skills: dict[str, float]  # θ_m per system
    length_effect: float  # φ
    difficulty_sd: float
    rho: float

    def true_lc(self, system: str) -> float:
        """``E_d σ(θ_m + d)`` in %, ``d ~ N(0, difficulty_sd²)``, by 80-node
        Gauss–Hermite quadrature."""
        x, w = np.polynomial.hermite_e.hermegauss(80)
        eta = self.skills[system] + self.difficulty_sd * x
        return float(100 * np.sum(w / (1 + np.exp(-eta))) / np.sqrt(2 * np.pi))


def simulate_length_controlled(
    *,
    n_instructions: int = 400,
    systems: int = 6,
    rho: float = 0.0,
    difficulty_sd: float = 1.5,
    length_effect: float = 0.8,
    longer: float = 0.0,
    skills: tuple[float, ...] | None = None,
    length: float = 1000.0,
    length_sd: float = 300.0,
    seed: int | None = 0,
) -> SimulatedLengthControlled:
    """Draw one table (see the module's docstring for the model). ``skills``: θ_m per
    system (default evenly spaced from −1 to 1); systems are named ``s0``, ``s1``, …

    >>> sim = simulate_length_controlled(n_instructions=50, systems=2, seed=1)
    >>> len(sim.pairs), sorted(sim.pairs["model_b"].unique())
    (100, ['s0', 's1'])
    >>> round(sim.true_lc("s0"), 1)  # E σ(−1 + 1.5 x): nearer 50% than σ(−1) = 26.9
    32.9
    """
    if not -1 < rho < 1:
        raise ValueError(f"rho must be in (-1, 1), got {rho}")
    if systems < 1 or n_instructions < 2:
        raise ValueError("need at least one system and two instructions")
    thetas = np.linspace(-1, 1, systems) if skills is None else np.asarray(skills, float)
    if len(thetas) != systems:
        raise ValueError(f"{len(thetas)} skills for {systems} systems")
    rng = np.random.default_rng(seed)
    easy = rng.normal(0.0, difficulty_sd, n_instructions)
    frames = []
    for m, theta in enumerate(thetas):
        z = (
            longer
            - rho * easy / difficulty_sd
            + np.sqrt(1 - rho**2) * rng.normal(0, 1, n_instructions)
        )
        eta = theta + length_effect * np.tanh(-z) + easy
        won = (rng.random(n_instructions) < 1 / (1 + np.exp(-eta))).astype(float)
        frames.append(
            pd.DataFrame(
                {
                    "prompt_id": [f"i{k}" for k in range(n_instructions)],
                    "model_a": BASELINE,
                    "model_b": f"s{m}",
                    "judge": JUDGE,
                    "p_a": 1.0 - won,
                    "len_a": np.full(n_instructions, length),
                    "len_b": length + length_sd * z,
                }
            )
        )
    return SimulatedLengthControlled(
        pairs=pd.concat(frames, ignore_index=True),
        skills={f"s{m}": float(t) for m, t in enumerate(thetas)},
        length_effect=length_effect,
        difficulty_sd=difficulty_sd,
        rho=rho,
    )
