"""Simulated ``pairs`` tables with planted biases of known size.

:func:`simulate_pairs` draws prompts, pairs of responses from a set of models, human
labels and judge verdicts in both presentation orders, such that every judge's
population values of the pairwise bias metrics (:mod:`recuse.metrics`) are known
exactly (with their default options: ``human_ties="drop"``, ``judge_ties="half"``,
either ``verdict``):

==============================  ======================================
metric                          population value
==============================  ======================================
``self_preference_eo``          ``self_preference``
``self_preference_dp``          ``self_preference / 2``
``self_preference_calibrated``  ``self_preference / 2``  (see below)
``family_preference_eo``        ``family_preference``
``family_preference_dp``        ``family_preference / 2``
``verbosity_bias``              ``verbosity``  (Eq. 6)
``verbosity_deviation``         ``abs(verbosity)``  (Eq. 5)
``verbosity_longer_gap``        ``verbosity/2 - 2 * h * (1 - accuracy)``
``first_position_rate``         ``0.5 + position``
``flip_rate``                   ``2 * abs(position)``
``position_consistency``        ``1 - 2 * abs(position)``
==============================  ======================================

Generative model, per item (one pair of responses to a prompt):

* the two responses come from two different models drawn at random (or, with
  probability ``same_source_rate``, both from one model); word counts are
  log-normal around ``mean_words``, independent of everything else;
* the human label is a tie with probability ``human_tie_rate``; otherwise the
  human prefers the longer response with probability ``0.5 +
  human_length_preference`` (a random one if both have the same length). Call the
  preferred response ``y1`` (for a tie, a random side);
* per judge, the probability that its order-averaged verdict agrees with ``y1``
  is ``t = accuracy + self_preference/2 * s + family_preference/2 * f + verbosity/2
  * l + u_prompt`` with ``s`` = +1 / -1 / 0 when the judge's own response is
  ``y1`` / the other one / absent, ``f`` likewise for a family member's response
  facing a non-family one, ``l`` = +1 / -1 / 0 when ``y1`` is the longer / shorter
  / equally long response, and ``u_prompt`` ~ Uniform(-prompt_effect,
  prompt_effect) shared by the items of a prompt (within-prompt correlation);
  with ``bias_effect`` > 0 each bias also varies by prompt: ``w_prompt`` ~
  Uniform(-bias_effect, bias_effect), shared by the items of a prompt, is added to
  each of ``self_preference/2``, ``family_preference/2`` and ``verbosity/2`` (mean 0
  and independent of ``s``, ``f``, ``l``, so the population values below are
  unchanged, but a bias metric's items are then correlated within a prompt, as the
  agreement's are through ``u_prompt``);
* with probability ``phi = 2 * abs(position)`` the judge decides by position: it
  picks the first-shown response in both orders (``position > 0``; the second
  when ``position < 0``), which flips its verdict and gives ``p_a = 0.5``;
  otherwise it judges on content, agreeing with ``y1`` with probability
  ``(t - phi/2) / (1 - phi)``, identically in both orders. ``verdicts="pick"``
  gives 0/1 picks, ``"prob"`` Beta-distributed probabilities with that mean
  (``concentration`` = a + b).

With ``h = human_length_preference``, over unequal lengths and no human tie the judge
picks the longer response with probability ``q (accuracy + verbosity/2) + (1 - q)
(1 - accuracy + verbosity/2)``, ``q = 0.5 + h`` (the ``s`` and ``f`` terms average
out), and the humans with ``q``: their difference is the prefer-longer gap above.

Because the side each model lands on and the lengths are exchangeable between a
and b and independent of the human's choice among models, ``s``, ``f`` and ``l``
are independent, which makes the table above exact. Orders left out at random
(``single_order_rate``: the second order is missing; ``unparsed_rate``: an order's
output is unparsed) do not change these values.

``self_preference_calibrated``
(:func:`recuse.metrics.competence.calibrated_self_preference`) is the judge's
own-pick rate minus the rate its fitted competence model predicts with the own term
removed. Here the human label does not depend on which models wrote
the responses, so every model's Bradley–Terry strength from the labels is 0 in the
population and the model reduces to ``logit P(picks a) = β·first + τ·own``. On the
pairs holding the judge's answer (``f = 0`` there), the judge picks its own answer
with probability ``0.5 + position·first·own + self_preference/2`` (position and
content parts as above), and ``first·own`` is +1 or -1 with equal weight whichever
orders are missing (the own side is a or b at random), so the observed own-pick rate
is ``0.5 + self_preference/2`` and the predicted one ``mean(expit(β·first·own)) =
0.5``: the difference is ``self_preference / 2``.

>>> sim = simulate_pairs(n_prompts=20, pairs_per_prompt=2, seed=1)
>>> len(sim.pairs), sorted(sim.pairs["judge"].unique())
(80, ['claude-v1', 'gpt-4'])
>>> sim.true_value("self_preference_eo", "gpt-4")
0.25
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from recuse.errors import ConfigError
from recuse.numbers import decimal_beside
from recuse.roster import Roster
from recuse.tables import validate_pairs

__all__ = [
    "DEFAULT_JUDGES",
    "DEFAULT_MODELS",
    "PROMPT_EFFECT",
    "PlantedBias",
    "SimulatedPairs",
    "simulate_pairs",
]

SimVerdicts = Literal["pick", "prob"]
#: half-width of the prompt-level shift of every agreement probability (``prompt_effect``)
PROMPT_EFFECT = 0.05

DEFAULT_MODELS: tuple[str, ...] = (
    "gpt-4",
    "gpt-3.5-turbo",
    "claude-v1",
    "claude-2",
    "llama-2-70b-chat",
    "vicuna-13b",
    "palm-2",
    "mistral-7b-instruct-v0.2",
)


@dataclass(frozen=True)
class PlantedBias:
    """The biases planted in one judge (see the module docstring for their meaning).

    ``position`` is the first-position preference rate minus 0.5 (negative: the
    judge prefers the second slot); ``accuracy`` is the judge's agreement with the
    human label when no bias is at play.
    """

    self_preference: float = 0.0
    family_preference: float = 0.0
    verbosity: float = 0.0
    position: float = 0.0
    accuracy: float = 0.7

    def truth(self, human_length_preference: float = 0.15) -> dict[str, float]:
        """Population value of every metric (default metric options) when the humans
        prefer the longer response with probability ``0.5 + human_length_preference``."""
        phi = 2.0 * abs(self.position)
        gap = self.verbosity / 2 - 2 * human_length_preference * (1 - self.accuracy)
        return {
            "self_preference_eo": self.self_preference,
            "self_preference_dp": self.self_preference / 2,
            "self_preference_calibrated": self.self_preference / 2,
            "family_preference_eo": self.family_preference,
            "family_preference_dp": self.family_preference / 2,
            # the family term of the competence model: the same shift as DP's, beyond
            # what the judge's competence predicts (planted independently of quality)
            "family_preference_calibrated": self.family_preference / 2,
            "verbosity_bias": self.verbosity,
            "verbosity_deviation": abs(self.verbosity),
            "verbosity_longer_gap": gap,
            "position_consistency": 1.0 - phi,
            "flip_rate": phi,
            "first_position_rate": 0.5 + self.position,
        }


DEFAULT_JUDGES: Mapping[str, PlantedBias] = {
    "gpt-4": PlantedBias(
        self_preference=0.25, family_preference=0.15, verbosity=0.15, position=0.08, accuracy=0.65
    ),
    "claude-v1": PlantedBias(
        self_preference=-0.1, family_preference=0.0, verbosity=0.1, position=-0.05, accuracy=0.7
    ),
}


@dataclass(frozen=True)
class SimulatedPairs:
    """A simulated, validated ``pairs`` table with what was planted in it."""

    pairs: pd.DataFrame
    families: Mapping[str, str]
    planted: Mapping[str, PlantedBias]
    settings: Mapping[str, object] = field(default_factory=dict)

    def true_value(self, metric: str, judge: str) -> float:
        """Population value of ``metric`` for ``judge``."""
        return self.planted[judge].truth(self._length_preference)[metric]

    @property
    def _length_preference(self) -> float:
        return float(self.settings.get("human_length_preference", 0.15))  # type: ignore[arg-type]

    def truth(self) -> pd.DataFrame:
        """Long table ``judge, metric, value`` of every planted population value."""
        rows = [
            {"judge": j, "metric": m, "value": v}
            for j, b in self.planted.items()
            for m, v in b.truth(self._length_preference).items()
        ]
        return pd.DataFrame(rows, columns=["judge", "metric", "value"])


@functools.cache
def _builtin_roster() -> Roster:
    return Roster.builtin()


def _families(
    models: Sequence[str], judges: Sequence[str], given: Mapping[str, str] | None
) -> dict[str, str]:
    names = list(dict.fromkeys([*models, *judges]))
    if given is not None:
        missing = [n for n in names if n not in given]
        if missing:
            raise ConfigError(f"families: no family for {missing[0]!r}")
        return {n: str(given[n]) for n in names}
    roster = _builtin_roster()
    unknown = [n for n in names if n not in roster]
    if unknown:
        raise ConfigError(
            f"model {unknown[0]!r} is not in the built-in roster — pass families={{model: family}}"
        )
    return {n: roster.family(n) for n in names}


def _check_range(name: str, value: float, low: float, high: float) -> None:
    if not low <= value <= high:
        raise ConfigError(f"{name} must be in [{low}, {high}], got {value!r}")


def simulate_pairs(
    *,
    judges: Mapping[str, PlantedBias] | None = None,
    models: Sequence[str] = DEFAULT_MODELS,
    families: Mapping[str, str] | None = None,
    n_prompts: int = 200,
    pairs_per_prompt: int = 3,
    verdicts: SimVerdicts = "pick",
    human_tie_rate: float = 0.1,
    human_length_preference: float = 0.15,
    same_source_rate: float = 0.0,
    single_order_rate: float = 0.0,
    unparsed_rate: float = 0.0,
    prompt_effect: float = PROMPT_EFFECT,
    bias_effect: float = 0.0,
    mean_words: float = 120.0,
    concentration: float = 6.0,
    texts: bool = False,
    seed: int | None = 0,
    validated: bool = True,
) -> SimulatedPairs:
    """A ``pairs`` table of ``n_prompts * pairs_per_prompt`` items, each judged by every judge.

    ``judges`` maps judge ids to their :class:`PlantedBias` (default
    :data:`DEFAULT_JUDGES`); ``models`` are the generators (canonical ids), their
    families come from ``families`` or the built-in roster. ``len_a`` / ``len_b``
    hold word counts; ``texts=True`` also writes ``response_a`` / ``response_b``
    with that many words. Returns a :class:`SimulatedPairs` whose ``pairs`` is a
    validated table (``validated=False``: the table as simulated, for a caller that
    reshapes it and validates what it makes, as
    :func:`recuse.simulate.familiarity.simulate_familiarity`); see the module docstring
    for the model and the exact population values.
    """
    judges = dict(DEFAULT_JUDGES if judges is None else judges)
    if not judges:
        raise ConfigError("simulate_pairs needs at least one judge")
    models = list(models)
    if len(set(models)) < 2:
        raise ConfigError("simulate_pairs needs at least two distinct models")
    if n_prompts < 1 or pairs_per_prompt < 1:
        raise ConfigError("n_prompts and pairs_per_prompt must be positive")
    if verdicts not in ("pick", "prob"):
        raise ConfigError(f"verdicts must be 'pick' or 'prob'; got {verdicts!r}")
    for name, value in (
        ("human_tie_rate", human_tie_rate),
        ("same_source_rate", same_source_rate),
        ("single_order_rate", single_order_rate),
        ("unparsed_rate", unparsed_rate),
    ):
        _check_range(name, value, 0.0, 1.0)
    _check_range("human_length_preference", human_length_preference, -0.5, 0.5)
    _check_range("prompt_effect", prompt_effect, 0.0, 0.5)
    _check_range("bias_effect", bias_effect, 0.0, 0.25)
    fam = _families(models, list(judges), families)
    for j, b in judges.items():
        _check_range(f"{j}: position", b.position, -0.49, 0.49)
        phi = 2 * abs(b.position)
        spread = (max(abs(b.self_preference), abs(b.family_preference)) + abs(b.verbosity)) / 2
        spread += 2 * bias_effect  # s and f are never both non-zero: |w (s + f + l)| <= 2 w
        lo, hi = b.accuracy - spread - prompt_effect, b.accuracy + spread + prompt_effect
        if lo < phi / 2 - 1e-12 or hi > 1 - phi / 2 + 1e-12:
            edges = (phi / 2, 1 - phi / 2)  # 1.0004 read "[…, 1.000], outside […, 1.000]"
            reach = ", ".join(decimal_beside(v, edges, 3) for v in (lo, hi))
            raise ConfigError(
                f"judge {j!r}: agreement probabilities reach [{reach}], outside "
                f"[{phi / 2:.3f}, {1 - phi / 2:.3f}] — lower the biases or move accuracy toward 0.5"
            )

    rng = np.random.default_rng(seed)
    n = n_prompts * pairs_per_prompt
    m = len(models)
    prompt = np.repeat(np.arange(n_prompts), pairs_per_prompt)

    # generators: two different models, or one model twice
    ia = rng.integers(0, m, size=n)
    ib = (ia + rng.integers(1, m, size=n)) % m
    same = rng.random(n) < same_source_rate
    ib = np.where(same, ia, ib)
    model_arr = np.array(models, dtype=object)
    model_a, model_b = model_arr[ia], model_arr[ib]
    fam_arr = np.array([fam[x] for x in models], dtype=object)
    fam_a, fam_b = fam_arr[ia], fam_arr[ib]

    # lengths in words
    sigma = 0.6
    mu = np.log(mean_words) - sigma**2 / 2
    len_a = np.maximum(1, np.round(rng.lognormal(mu, sigma, size=n))).astype(int)
    len_b = np.maximum(1, np.round(rng.lognormal(mu, sigma, size=n))).astype(int)
    l_side = np.sign(len_a - len_b)

    # human label; y1 = the side the judge's agreement refers to (+1 = a, -1 = b)
    tie = rng.random(n) < human_tie_rate
    coin = np.where(rng.random(n) < 0.5, 1, -1)
    prefers_longer = rng.random(n) < 0.5 + human_length_preference
    y1 = np.where(l_side != 0, np.where(prefers_longer, l_side, -l_side), coin)
    y1 = np.where(tie, coin, y1)
    human = np.where(tie, 0.5, (y1 > 0).astype(float))
    u = rng.uniform(-prompt_effect, prompt_effect, size=n_prompts)[prompt]
    # drawn only when asked, so that tables without it stay as they were for a seed
    w = rng.uniform(-bias_effect, bias_effect, size=n_prompts)[prompt] if bias_effect else 0.0

    frames = []
    for j, b in judges.items():
        own = np.where(
            (model_a == j) & (model_b != j), 1, np.where((model_b == j) & (model_a != j), -1, 0)
        )
        fj = fam[j]
        mate_a = (fam_a == fj) & (model_a != j)
        mate_b = (fam_b == fj) & (model_b != j)
        fam_side = np.where(mate_a & (fam_b != fj), 1, np.where(mate_b & (fam_a != fj), -1, 0))
        s, f, ll = own * y1, fam_side * y1, l_side * y1
        t = (
            b.accuracy
            + (b.self_preference / 2 + w) * s
            + (b.family_preference / 2 + w) * f
            + (b.verbosity / 2 + w) * ll
            + u
        )
        phi = 2 * abs(b.position)
        q = np.clip((t - phi / 2) / (1 - phi), 0.0, 1.0)
        if verdicts == "pick":
            agree = (rng.random(n) < q).astype(float)
        else:
            qq = np.clip(q, 1e-6, 1 - 1e-6)
            agree = rng.beta(concentration * qq, concentration * (1 - qq))
        p_content = np.where(y1 > 0, agree, 1.0 - agree)
        by_position = rng.random(n) < phi
        first_val = 1.0 if b.position > 0 else 0.0
        p_first = np.where(by_position, first_val, p_content)
        p_second = np.where(by_position, 1.0 - first_val, p_content)
        status_first = np.full(n, "ok", dtype=object)
        status_second = np.full(n, "ok", dtype=object)
        single = rng.random(n) < single_order_rate
        status_second[single] = "missing"
        unparsed_first = rng.random(n) < unparsed_rate
        unparsed_second = (rng.random(n) < unparsed_rate) & ~single
        status_first[unparsed_first] = "unparsed"
        status_second[unparsed_second] = "unparsed"
        p_first = np.where(status_first == "ok", p_first, np.nan)
        p_second = np.where(status_second == "ok", p_second, np.nan)
        frames.append(
            pd.DataFrame(
                {
                    "item": np.arange(n),
                    "judge": j,
                    "p_a_first": p_first,
                    "p_a_second": p_second,
                    "status_first": status_first,
                    "status_second": status_second,
                }
            )
        )

    verdict_rows = pd.concat(frames, ignore_index=True).sort_values(["item"], kind="stable")
    item = verdict_rows["item"].to_numpy()
    table = pd.DataFrame(
        {
            "item_id": pd.Series(item).map(lambda i: f"sim-{i}").to_numpy(),
            "prompt_id": pd.Series(prompt[item]).map(lambda p: f"prompt-{p}").to_numpy(),
            "model_a": model_a[item],
            "model_b": model_b[item],
            "human": human[item],
            "judge": verdict_rows["judge"].to_numpy(),
            "p_a_first": verdict_rows["p_a_first"].to_numpy(),
            "p_a_second": verdict_rows["p_a_second"].to_numpy(),
            "p_a": np.nan,
            "source": "simulated",
            "len_a": len_a[item].astype(float),
            "len_b": len_b[item].astype(float),
            "status_first": verdict_rows["status_first"].to_numpy(),
            "status_second": verdict_rows["status_second"].to_numpy(),
        }
    )
    if texts:
        longest = int(max(len_a.max(), len_b.max()))
        base = "word " * longest
        text_a = np.array([base[: 5 * k - 1] for k in len_a], dtype=object)
        text_b = np.array([base[: 5 * k - 1] for k in len_b], dtype=object)
        table.insert(5, "response_a", text_a[item])
        table.insert(6, "response_b", text_b[item])
    settings: dict[str, object] = {
        "n_prompts": n_prompts,
        "pairs_per_prompt": pairs_per_prompt,
        "verdicts": verdicts,
        "human_tie_rate": human_tie_rate,
        "human_length_preference": human_length_preference,
        "same_source_rate": same_source_rate,
        "single_order_rate": single_order_rate,
        "unparsed_rate": unparsed_rate,
        "prompt_effect": prompt_effect,
        "bias_effect": bias_effect,
        "seed": seed,
    }
    return SimulatedPairs(validate_pairs(table) if validated else table, fam, judges, settings)
