"""The position simulator plants what it says: rate, flips, ties, correlation."""

from __future__ import annotations

import numpy as np
import pytest

from recuse.errors import ConfigError
from recuse.simulate.position import simulate_position, solve_noise


@pytest.mark.parametrize(
    ("effect", "flip", "tie", "icc"),
    [(0.02, 0.25, 0.05, 0.2), (-0.08, 0.3, 0.15, 0.1), (0.1, 0.3, 0.0, 0.0)],
)
def test_planted_values_are_recovered_from_a_large_table(
    effect: float, flip: float, tie: float, icc: float
) -> None:
    t = simulate_position(effect=effect, flip_rate=flip, tie_rate=tie, icc=icc,
                          n_prompts=40_000, pairs_per_prompt=2, seed=11)  # fmt: skip
    f, s = t["p_a_first"].to_numpy(), t["p_a_second"].to_numpy()
    y = (f + 1 - s) / 2
    assert y.mean() == pytest.approx(0.5 + effect, abs=0.004)
    assert np.mean(np.sign(f - 0.5) * np.sign(s - 0.5) == -1) == pytest.approx(flip, abs=0.005)
    assert np.mean(np.r_[f == 0.5, s == 0.5]) == pytest.approx(tie, abs=0.003)
    pairs = y.reshape(-1, 2)  # two pairs per prompt: their correlation is the ICC
    assert np.corrcoef(pairs[:, 0], pairs[:, 1])[0, 1] == pytest.approx(icc, abs=0.015)
    # the exact variance the planner's first guess uses matches the table's
    nz = solve_noise(effect=effect, flip_rate=flip, tie_rate=tie, icc=icc)
    assert y.var() == pytest.approx(nz.variance, rel=0.02)


def test_impossible_noise_is_refused_with_the_range() -> None:
    with pytest.raises(ConfigError, match="reaches flip rates"):
        solve_noise(effect=0.2, flip_rate=0.1, tie_rate=0.0, icc=0.0)
    with pytest.raises(ConfigError, match=r"--icc 0\.6"):
        solve_noise(effect=0.02, flip_rate=0.1, tie_rate=0.0, icc=0.6)


@pytest.mark.parametrize(
    ("flip_rate", "effect"), [(0.05, 0.02), (0.08, 0.02), (0.12, 0.02), (0.25, 0.05), (0.3, 0.02)]
)
def test_the_largest_correlation_named_fits(flip_rate: float, effect: float) -> None:
    """Too much --icc for a flip rate is refused with the most it allows, written to
    nearest: at flip rate 0.05 (effect 0.02, ties 0.1) "at most 0.03", and --icc 0.03 was
    refused in its turn. It is rounded down: the correlation named is accepted, and one
    a hundredth more is not."""
    with pytest.raises(ConfigError) as info:
        solve_noise(effect=effect, flip_rate=flip_rate, tie_rate=0.1, icc=0.89)
    most = float(str(info.value).split("at most ")[1].split(")")[0])
    noise = solve_noise(effect=effect, flip_rate=flip_rate, tie_rate=0.1, icc=most)
    assert noise.icc == pytest.approx(most, abs=1e-6)
    with pytest.raises(ConfigError, match="more within-prompt correlation"):
        solve_noise(effect=effect, flip_rate=flip_rate, tie_rate=0.1, icc=most + 0.01)
