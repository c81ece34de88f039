"""Simulated ``pairs`` tables whose verdicts depend on perplexity by a planted amount.

The pair skeleton (prompts, items, the two generators of each item, lengths) comes
from :func:`recuse.simulate.pairs.simulate_pairs`; this module replaces the labels and the
verdicts and adds ``ppl_a`` / ``ppl_b``.

Generative model:

* every response (prompt ``p``, model ``m``) has a base log-perplexity
  ``mu + prompt_sd * z_p + log_ppl_sd * e_pm``; under judge ``j`` its log-perplexity
  is that base ``+ own_gap_j`` when ``m`` is ``j`` itself ``+ noise_sd_j * e_jpm``
  (standard normal ``z``, ``e``). Every response has one perplexity per judge,
  whatever the pairs it appears in;
* ``d_j = log ppl_a - log ppl_b`` under judge ``j``;
* the human label of an item: P(a better) ``= logistic(human_intercept +
  human_slope * d)`` where ``d`` is the (only) judge's ``d_j``; with several judges
  ``human_slope`` must be 0 (the label is then independent of every ``d_j``). With
  ``human_votes = k`` the label is the share of ``k`` such votes;
* judge ``j`` prefers a with probability ``logistic(intercept_j + judge_slope_j * d_j
  + self_shift_j * s)``, ``s`` = +1 / -1 / 0 when a / b / neither is ``j``'s own
  response. ``verdicts="pick"`` gives 0/1, ``"prob"`` a Beta draw with that mean
  (``concentration`` = a + b); both presentation orders get the same verdict.

Judge and human draws are coupled through uniforms (a Gaussian copula with a prompt
component, ``prompt_correlation``, so items of a prompt are correlated; with
probability ``agreement`` the judge reuses the human's uniform), which correlates
them without changing either margin. Hence, with ``self_shift = 0``, the population
fractional-logit slopes on ``d_j`` are exactly ``judge_slope`` and ``human_slope``:

    familiarity_bias (true) = human_slope - judge_slope

and the population mean log-perplexity of own minus other responses is ``own_gap``.

>>> sim = simulate_familiarity({"j": PlantedFamiliarity(judge_slope=-2.0)}, human_slope=-0.5,
...                            n_prompts=10, seed=0)
>>> sim.true_value("j"), len(sim.pairs), sorted(sim.pairs.columns)[-3:]
(1.5, 30, ['source', 'status_first', 'status_second'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import special, stats

from recuse.errors import ConfigError
from recuse.simulate.pairs import PlantedBias, SimVerdicts, simulate_pairs
from recuse.tables import validate_pairs

__all__ = [
    "DEFAULT_FAMILIARITY_MODELS",
    "PlantedFamiliarity",
    "SimulatedFamiliarity",
    "simulate_familiarity",
]

DEFAULT_FAMILIARITY_MODELS: tuple[str, ...] = ("m1", "m2", "m3", "m4", "m5", "m6")


@dataclass(frozen=True)
class PlantedFamiliarity:
    """What is planted in one judge (see the module docstring).

    ``judge_slope``: log-odds of preferring a per nat of ``d = log ppl_a - log
    ppl_b`` (negative: prefers the lower-perplexity response); ``own_gap``: shift of
    the log-perplexity of the judge's own responses (negative: more familiar);
    ``self_shift``: extra log-odds toward its own response beyond perplexity;
    ``noise_sd``: judge-specific noise of log-perplexities; ``agreement``: how
    often its draw reuses the human's (correlation with the human label).
    """

    judge_slope: float = -1.0
    intercept: float = 0.0
    own_gap: float = 0.0
    self_shift: float = 0.0
    noise_sd: float = 0.1
    agreement: float = 0.5


@dataclass(frozen=True)
class SimulatedFamiliarity:
    """A validated ``pairs`` table with perplexities and what was planted in it."""

    pairs: pd.DataFrame
    planted: Mapping[str, PlantedFamiliarity]
    human_slope: float
    settings: Mapping[str, object] = field(default_factory=dict)

    def true_value(self, judge: str) -> float:
        """Population ``familiarity_bias`` of ``judge`` (exact when its self_shift is 0)."""
        return self.human_slope - self.planted[judge].judge_slope

    def true_gap(self, judge: str) -> float:
        """Population own-minus-other mean log-perplexity of ``judge`` (Figure 5)."""
        return self.planted[judge].own_gap


def _uniforms(rng: np.random.Generator, prompt: np.ndarray, n_prompts: int, r: float) -> np.ndarray:
    z = rng.standard_normal(n_prompts)[prompt]
    e = rng.standard_normal(len(prompt))
    return np.asarray(stats.norm.cdf(np.sqrt(r) * z + np.sqrt(1.0 - r) * e))


def simulate_familiarity(
    judges: Mapping[str, PlantedFamiliarity],
    *,
    human_slope: float = 0.0,
    human_intercept: float = 0.0,
    human_votes: int = 1,
    models: Sequence[str] = DEFAULT_FAMILIARITY_MODELS,
    n_prompts: int = 200,
    pairs_per_prompt: int = 3,
    verdicts: SimVerdicts = "pick",
    concentration: float = 4.0,
    log_ppl_mean: float = 1.5,
    log_ppl_sd: float = 0.4,
    prompt_sd: float = 0.3,
    prompt_correlation: float = 0.3,
    seed: int | None = 0,
) -> SimulatedFamiliarity:
    """A ``pairs`` table of ``n_prompts * pairs_per_prompt`` items judged by every judge.

    Judges may be among ``models`` (then some pairs hold their own responses).
    See the module docstring for the model and the planted population values.
    """
    judges = dict(judges)
    if not judges:
        raise ConfigError("simulate_familiarity needs at least one judge")
    if human_slope != 0 and len(judges) > 1:
        raise ConfigError(
            "human_slope must be 0 with several judges (each judge has its own perplexities, "
            "so a human label cannot follow all of them) — simulate one judge at a time"
        )
    if verdicts not in ("pick", "prob"):
        raise ConfigError(f"verdicts must be 'pick' or 'prob'; got {verdicts!r}")
    if human_votes < 1:
        raise ConfigError("human_votes must be at least 1")
    if not 0 <= prompt_correlation < 1:
        raise ConfigError("prompt_correlation must be in [0, 1)")
    for j, b in judges.items():
        if not 0 <= b.agreement <= 1:
            raise ConfigError(f"judge {j!r}: agreement must be in [0, 1]")
        if b.noise_sd < 0:
            raise ConfigError(f"judge {j!r}: noise_sd must be >= 0")

    rng = np.random.default_rng(seed)
    names = list(dict.fromkeys([*models, *judges]))
    skeleton = simulate_pairs(
        judges={"skeleton": PlantedBias()},
        models=list(models),
        families={m: m for m in [*names, "skeleton"]},
        n_prompts=n_prompts,
        pairs_per_prompt=pairs_per_prompt,
        human_tie_rate=0.0,
        seed=int(rng.integers(0, 2**31)),
        validated=False,  # its columns are read here; the table made of them is validated
    ).pairs
    base = skeleton[["item_id", "prompt_id", "model_a", "model_b", "len_a", "len_b"]]
    n = len(base)
    prompt = base["prompt_id"].str.removeprefix("prompt-").astype(int).to_numpy()
    m_index = {m: i for i, m in enumerate(models)}
    ia = base["model_a"].map(m_index).to_numpy()
    ib = base["model_b"].map(m_index).to_numpy()

    z_prompt = rng.standard_normal(n_prompts)
    e_resp = rng.standard_normal((n_prompts, len(models)))
    base_lp = log_ppl_mean + prompt_sd * z_prompt[:, None] + log_ppl_sd * e_resp

    u_human = _uniforms(rng, prompt, n_prompts, prompt_correlation)
    frames = []
    lp_by_judge = {}
    for j, b in judges.items():
        noise = b.noise_sd * rng.standard_normal((n_prompts, len(models)))
        own_col = np.array([m == j for m in models], dtype=float)
        lp = base_lp + noise + b.own_gap * own_col[None, :]
        lp_by_judge[j] = lp
    first = next(iter(judges))
    d_human = lp_by_judge[first][prompt, ia] - lp_by_judge[first][prompt, ib]
    p_human = special.expit(human_intercept + human_slope * d_human)
    votes = (u_human < p_human).astype(float)
    for _ in range(human_votes - 1):
        votes += rng.random(n) < p_human
    human = votes / human_votes

    for j, b in judges.items():
        lp = lp_by_judge[j]
        lp_a, lp_b = lp[prompt, ia], lp[prompt, ib]
        s = np.where(base["model_a"].to_numpy() == j, 1.0, 0.0) - np.where(
            base["model_b"].to_numpy() == j, 1.0, 0.0
        )
        p = special.expit(b.intercept + b.judge_slope * (lp_a - lp_b) + b.self_shift * s)
        own_u = _uniforms(rng, prompt, n_prompts, prompt_correlation)
        u = np.where(rng.random(n) < b.agreement, u_human, own_u)
        if verdicts == "pick":
            v = (u < p).astype(float)
        else:
            pp = np.clip(p, 1e-9, 1 - 1e-9)
            v = 1.0 - stats.beta.ppf(u, concentration * (1 - pp), concentration * pp)
        frames.append(
            base.assign(
                human=human,
                judge=j,
                p_a_first=v,
                p_a_second=v,
                p_a=np.nan,
                ppl_a=np.exp(lp_a),
                ppl_b=np.exp(lp_b),
                source="simulated-familiarity",
                status_first="ok",
                status_second="ok",
            )
        )
    table = pd.concat(frames, ignore_index=True)
    settings: dict[str, object] = {
        "n_prompts": n_prompts,
        "pairs_per_prompt": pairs_per_prompt,
        "verdicts": verdicts,
        "human_votes": human_votes,
        "human_intercept": human_intercept,
        "prompt_correlation": prompt_correlation,
        "seed": seed,
    }
    return SimulatedFamiliarity(validate_pairs(table), judges, human_slope, settings)
