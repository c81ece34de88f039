"""How many pairs and prompts a user needs to detect a bias of a given size.

:func:`plan` answers in two steps:

1. a first guess from the normal approximation: the number of pairs ``n`` at which
   ``(z_{1−α/2} + z_{power}) · se(n) = effect``, with ``se(n)² = σ² / n`` times the
   design effect ``1 + (k − 1) ρ`` of ``k`` pairs per prompt (ρ: within-prompt
   correlation, taken as the simulator's), σ² per metric: equal opportunity and
   verbosity (a difference of two recalls over two halves of the pairs) ``4 a (1 − a)``
   with ``a`` the judge's accuracy; the first-position rate ``1/16`` (a share of a win
   averaged over two orders, each a pick);
2. a check by seeded simulation (:func:`recuse.simulate.pairs.simulate_pairs` with the
   bias planted at ``effect``, analysed with the project's own estimator and BCa
   interval): the share of ``runs`` data sets that detect it is the achieved power,
   reported with its 95% Monte-Carlo interval (:data:`MC_LEVEL`, not the audit's
   --level; Clopper–Pearson, exact for a count of runs, so 20 of 20 runs read
   [0.83, 1.00], never [1.00, 1.00]); while it falls short of the target the
   number of prompts grows by a quarter (at most 8 times), and
   while a fifth fewer prompts still clearly reach it (by one Monte-Carlo standard
   error), it shrinks (at most 6 times). The power reported is that of a fresh set of
   ``runs`` simulations at the chosen size (other seeds), not the search's own.

"Detect" is the audit report's flag before any false-discovery adjustment
(:func:`detected`): the interval excludes the no-bias value, and a zero-width interval
that is not informative (all resamples alike, as from a handful of prompts) detects only
where its p-value, at least the exact sign test's, is at most 1 − level. It is one test:
an audit flags after adjusting across its summary's tests, which needs more pairs.

Position noise. A real judge reverses many of its winners when the order is swapped
without any steady slot preference, and that noise, not the bias, sets the sample size.
By default the simulation uses a flip rate of 0.25, a per-order tie share of 0.05 and a
within-prompt correlation of 0.2 (:data:`POSITION_DEFAULTS`: LLM judges in the shared
LLMBar and JudgeBench data flip 12–56% of their winners, median about 27%; their tie
shares run 0–36% where ties are allowed, 6% for o1-mini; their within-prompt
correlations 0.13–0.33). ``flip_rate``, ``tie_rate`` and ``icc`` replace them;
:func:`noise_like` measures them in a user's own pairs table (``recuse plan --like``).

Bounds: an effect whose normal first guess exceeds ``max_pairs`` (200,000) is refused
(before anything is allocated), and the search stops after ``max_seconds`` with the
power reached at the size it had, said so in the sentence.

The simulated judge's classes are balanced (the human prefers the judge's own answer
about half the time); with a rarer minority class more pairs are needed than this says.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy.stats import beta, norm

from recuse.choices import POSITION_DEFAULTS as POSITION_DEFAULTS
from recuse.choices import Planned as Planned
from recuse.errors import ConfigError, InputError
from recuse.metrics.bootstrap import N_BOOT, Resampling
from recuse.metrics.estimate import excludes_null
from recuse.metrics.result import MetricResult
from recuse.metrics.summary import pairwise_bias
from recuse.numbers import decimal_beside, exact, lower_bound, percent, small_decimals
from recuse.simulate.pairs import PROMPT_EFFECT, PlantedBias, simulate_pairs
from recuse.simulate.position import PositionNoise, simulate_position, solve_noise

__all__ = [
    "MAX_PAIRS",
    "MC_LEVEL",
    "PLANNED",
    "PLAN_N_BOOT",
    "POSITION_DEFAULTS",
    "Plan",
    "detected",
    "noise_like",
    "plan",
    "power_interval",
]

MAX_PAIRS = 200_000
#: bootstrap resamples of each simulated data set's interval (a search runs hundreds)
PLAN_N_BOOT = 200
#: level of the Monte-Carlo interval of the simulated power (normal, over the runs)
MC_LEVEL = 0.95

PLANNED: dict[str, tuple[str, str, float]] = {  # bias -> (metric, planted field, null)
    "self-preference": ("self_preference_eo", "self_preference", 0.0),
    "verbosity": ("verbosity_bias", "verbosity", 0.0),
    "position": ("first_position_rate", "position", 0.5),
}
MODELS = ("gpt-4", "claude-v1")  # every simulated pair holds the judge's own answer
#: the simulated human labels (passed to :func:`simulate_pairs`, and said in the answer):
#: a tie's share, and how much more than half of the other pairs prefer the longer answer
HUMAN_TIE_RATE, HUMAN_LONGER = 0.1, 0.15


def pairs_simulated(bias: str) -> str:
    """What a planned pair is, said after the answer: its "pairs" are these, not any
    pair of a table (a table holding the judge's own answer in a third of its pairs needs
    three times as many for self-preference).

    >>> pairs_simulated("position")
    'Each pair counted is judged in both orders; no labels are needed.'
    """
    ties = f"{percent(HUMAN_TIE_RATE)} of them ties, which the estimate leaves out"
    if bias == "self-preference":
        return (
            "Each pair counted holds the judge's own answer beside another model's and a "
            f"human label ({ties}; the human prefers the judge's answer in half of the rest)."
        )
    if bias == "verbosity":
        return (
            "Each pair counted holds two answers of unequal length and a human label "
            f"({ties}; the human prefers the longer answer in {percent(0.5 + HUMAN_LONGER)} "
            "of the rest)."
        )
    return "Each pair counted is judged in both orders; no labels are needed."


#: what each planned bias is measured as, said in the answer: the audit's headlines of
#: self-preference and verbosity are other estimators (the bias names alone read as them)
MEASURED_AS: dict[str, str] = {
    "self-preference": "measured as equal opportunity (self_preference_eo, a difference of "
    "recalls; not the audit's competence-calibrated headline)",
    "verbosity": "measured as Saito's recall gap (verbosity_recall_gap, a difference of "
    "recalls; not the audit's prefer-longer headline)",
    "position": "measured as the first-position rate's distance from 0.5",
}


@dataclass(frozen=True)
class Plan:
    """The recommended size and the power a simulation achieved at it."""

    bias: str
    effect: float
    pairs: int
    prompts: int
    pairs_per_prompt: int
    power: float
    achieved: float
    achieved_low: float
    achieved_high: float
    runs: int
    level: float
    first_guess_pairs: int
    seed: int
    noise: dict[str, float] = field(default_factory=dict)
    noise_source: str = ""
    stopped: str = ""
    #: the level of the Monte-Carlo interval [achieved_low, achieved_high] of the
    #: simulated power (Clopper–Pearson over the runs: :func:`power_interval`), not the
    #: audit's --level
    achieved_level: float = MC_LEVEL
    #: bootstrap resamples of each simulated data set's interval (``boot.n_boot``;
    #: :data:`PLAN_N_BOOT` unless asked otherwise), said in :meth:`sentence` where it is
    #: not the audit's :data:`~recuse.metrics.bootstrap.N_BOOT`
    n_boot: int = PLAN_N_BOOT

    def first_guess_size(self) -> tuple[int, int]:
        """The first guess as simulated: ``(pairs, prompts)`` in whole prompts of
        ``pairs_per_prompt`` (at least 2 prompts), as the search's first step tries it."""
        prompts = max(2, math.ceil(self.first_guess_pairs / self.pairs_per_prompt))
        return prompts * self.pairs_per_prompt, prompts

    def sentence(self) -> str:
        noise = ""
        if self.noise:
            noise = (
                f" Simulated with a flip rate of {self.noise['flip_rate']:.2f}, a tie share of "
                f"{self.noise['tie_rate']:.2f} per order and a within-prompt correlation of "
                f"{self.noise['icc']:.2f} ({self.noise_source})."
            )
        stop = f" {self.stopped}" if self.stopped else ""
        pairs, prompts = self.first_guess_size()
        whole = (
            f", simulated as {pairs:,} ({prompts:,} whole prompts of {self.pairs_per_prompt})"
            if pairs != self.first_guess_pairs
            else ""
        )
        return (
            f"You need about {self.pairs:,} pairs over {self.prompts:,} prompts "
            f"({self.pairs_per_prompt} per prompt) to detect a {self.bias} bias of "
            f"{self.effect:g} ({MEASURED_AS.get(self.bias, self.bias)}) with "
            f"{percent(self.power)} power at the {percent(self.level)} level; "
            "simulated power at that size (the share of runs the audit flags before its "
            "false-discovery adjustment across tests): "
            f"{decimal_beside(self.achieved, [self.power], 2)} [{self.achieved_low:.2f}, "
            f"{self.achieved_high:.2f}] ({percent(self.achieved_level)} Monte-Carlo interval "
            f"over {self.runs} runs, seed {self.seed}{self._resamples()}; first guess from "
            f"the normal approximation: {self.first_guess_pairs:,} pairs{whole}). "
            f"{pairs_simulated(self.bias)}{noise}{stop}"
        )

    def _resamples(self) -> str:
        """Each run's resamples where they are not the audit's (whose flags the simulated
        power counts): the same interval from fewer resamples, a little noisier."""
        if self.n_boot == N_BOOT:
            return ""
        return (
            f"; each run's interval from {self.n_boot:,} resamples, where the audit "
            f"draws {N_BOOT:,} by default"
        )

    def to_dict(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__} | {
            "sentence": self.sentence()
        }


def _first_guess(bias: str, effect: float, *, power: float, level: float, k: int,
                 accuracy: float, rho: float, sigma2: float | None = None) -> int:  # fmt: skip
    """``z² σ² (1 + (k − 1) ρ) / effect²`` pairs (``sigma2`` given: the position model's)."""
    z = norm.ppf(1 - (1 - level) / 2) + norm.ppf(power)
    if sigma2 is None:
        sigma2 = 1 / 16 if bias == "position" else 4 * accuracy * (1 - accuracy)
    deff = 1 + (k - 1) * rho
    return max(k * 4, math.ceil(z**2 * sigma2 * deff / effect**2))


def _achieved(
    bias: str,
    effect: float,
    *,
    prompts: int,
    k: int,
    accuracy: float,
    boot: Resampling,
    runs: int,
    noise: PositionNoise | None = None,
    deadline: float = math.inf,
) -> float:
    """Share of ``runs`` simulated data sets that detect the bias (:func:`detected`)."""
    got, _ = _simulated(
        bias,
        effect,
        prompts=prompts,
        k=k,
        accuracy=accuracy,
        boot=boot,
        runs=runs,
        noise=noise,
        deadline=deadline,
    )
    return got


def _simulated(
    bias: str,
    effect: float,
    *,
    prompts: int,
    k: int,
    accuracy: float,
    boot: Resampling,
    runs: int,
    noise: PositionNoise | None = None,
    deadline: float = math.inf,
) -> tuple[float, int]:
    """(power, runs done): fewer than ``runs`` (at least 20) once ``deadline``, a
    ``time.monotonic()`` value, has passed."""
    metric, planted_field, null = PLANNED[bias]
    hits = done = 0
    for r in range(runs):
        if done >= 20 and time.monotonic() > deadline:
            break
        if bias == "position":
            if noise is None:
                noise = solve_noise(effect=effect, **POSITION_DEFAULTS)
            table = simulate_position(
                effect=effect,
                n_prompts=prompts,
                pairs_per_prompt=k,
                judge="gpt-4",
                seed=boot.seed + r,
                noise=noise,
            )
        else:
            planted = PlantedBias(accuracy=accuracy, **{planted_field: effect})
            table = as_read(
                simulate_pairs(
                    judges={"gpt-4": planted},
                    models=MODELS,
                    n_prompts=prompts,
                    pairs_per_prompt=k,
                    seed=boot.seed + r,
                    human_tie_rate=HUMAN_TIE_RATE,
                    human_length_preference=HUMAN_LONGER,
                    validated=False,
                ).pairs
            )
        res = pairwise_bias(
            table, metrics=[metric], curves=False, boot=replace(boot, seed=boot.seed + r), min_n=2
        )
        hits += any(x.metric == metric and detected(x, null=null) for x in res.results)
        done += 1
    return hits / max(done, 1), done


#: the text columns of a simulated pairs table, which the readers hold as Python strings
_TEXT_COLUMNS = (
    "item_id", "prompt_id", "model_a", "model_b", "judge", "source", "status_first",
    "status_second",
)  # fmt: skip


def as_read(table: pd.DataFrame) -> pd.DataFrame:
    """A table :func:`~recuse.simulate.pairs.simulate_pairs` made (``validated=False``)
    as :func:`recuse.tables.validate_pairs` reads it: its text columns as Python
    strings (object), and ``p_a`` the mean of the orders judged,

        p_a = mean(p_a_first, p_a_second) over the orders not missing,

    missing where neither was judged. Validation checks what a table from outside may
    get wrong (ids, labels, names, items that disagree, verdicts without a judge); a
    table the simulator made of its own draws gets none of it wrong, and a search runs
    hundreds (validation was 37% of ``recuse plan``'s time).
    ``tests/simulate/test_power.py`` checks that validation gives this same frame, and
    no note, for the tables a plan simulates."""
    out = table.astype(dict.fromkeys(_TEXT_COLUMNS, object))
    out["p_a"] = out[["p_a_first", "p_a_second"]].mean(axis=1)
    return out


def detected(result: MetricResult, *, null: float) -> bool:
    """Whether a simulated data set detects the bias: the flag the audit's report gives
    its finding before any false-discovery adjustment
    (:func:`recuse.metrics.estimate.excludes_null`, the rule of
    :attr:`recuse.report.model.Finding.excludes_null`): the interval excludes ``null``,
    except one that is not informative (from fewer than 5 prompts, or of zero width:
    every resample alike, as from a handful of prompts all on one side), which detects
    only where its p-value, at least the sign test's, is at most 1 − level. A plan's one
    bias is one test: an audit that adjusts across many needs more."""

    def finite(x: float) -> float | None:
        return float(x) if math.isfinite(x) else None

    return excludes_null(
        estimate=result.estimate,
        low=result.ci_low,
        high=result.ci_high,
        null=null,
        level=result.level,
        p_value=finite(result.p_value),
        clusters=result.n_clusters,
        std_error=finite(result.std_error),
        fixed=result.fixed,
    )


def noise_like(pairs: pd.DataFrame) -> tuple[dict[str, float], str]:
    """Flip rate, per-order tie share and within-prompt correlation of a pairs table.

    Over the rows judged in both orders (all judges pooled): flip rate = share whose
    winner reverses; tie share = share of per-order verdicts at exactly 0.5; the
    within-prompt correlation of ``y = (p_a_first + 1 − p_a_second) / 2`` is the one-way
    ANOVA estimator ``(MSB − MSW) / (MSB + (n₀ − 1) MSW)`` over prompts (judge by judge,
    pooled by pairs; clipped to [0, 0.9]; the default 0.2 where no prompt has two pairs or
    the verdicts do not vary).
    """
    need = {"p_a_first", "p_a_second", "prompt_id"}
    if not need <= set(pairs.columns):
        raise InputError(
            "--like needs a pairs table with p_a_first, p_a_second and prompt_id",
            fix="give a pairs table judged in both orders",
        )
    f = pd.to_numeric(pairs["p_a_first"], errors="coerce").to_numpy(float)
    s = pd.to_numeric(pairs["p_a_second"], errors="coerce").to_numpy(float)
    both = np.isfinite(f) & np.isfinite(s)
    if both.sum() < 20:
        judged = int(both.sum())
        raise InputError(
            f"--like: {f'only {judged}' if judged else 'no'} "
            f"{'row is' if judged == 1 else 'rows are'} judged in both orders; 20 or more "
            "are needed to measure flips",
            fix="give a table with both orders judged, or set --flip-rate/--ties/--icc",
        )
    rows = pairs.loc[both]
    f, s = f[both], s[both]
    flip = float(np.mean(np.sign(f - 0.5) * np.sign(s - 0.5) == -1))
    tie = float(np.mean(np.concatenate([f == 0.5, s == 0.5])))
    y = (np.where(f == 0.5, 0.5, f > 0.5) + 1 - np.where(s == 0.5, 0.5, s > 0.5)) / 2
    frame = pd.DataFrame({"judge": rows.get("judge", "j"), "p": rows["prompt_id"], "y": y})
    num = den = 0.0
    grouped = False  # some judge has two prompts and a prompt with two pairs
    for _, g in frame.groupby("judge", dropna=False):
        size = g.groupby("p")["y"].size()
        n, m = len(g), len(size)
        if m < 2 or n <= m:
            continue
        grouped = True
        means = g.groupby("p")["y"].transform("mean")
        msb = float((size * (g.groupby("p")["y"].mean() - g["y"].mean()) ** 2).sum()) / (m - 1)
        msw = float(((g["y"] - means) ** 2).sum()) / (n - m)
        n0 = (n - float((size**2).sum()) / n) / (m - 1)
        total = msb + (n0 - 1) * msw
        if total > 0:
            num += n * (msb - msw) / total
            den += n
    icc = float(np.clip(num / den, 0.0, 0.9)) if den else POSITION_DEFAULTS["icc"]
    note = f"measured in {int(both.sum()):,} both-order rows"
    judges = frame["judge"].nunique()
    if judges > 1:  # one rate for all: the audit's are each judge's, and differ from it
        note += f" of {judges} judges, pooled (recuse audit gives each judge's flip rate)"
    if not den and not grouped:
        note += "; no prompt has two pairs, so the correlation is the default 0.2"
    elif not den:
        note += (
            "; the verdicts do not vary (each judge gives the first answer one share in "
            "every pair), so the correlation is the default 0.2"
        )
    return {"flip_rate": flip, "tie_rate": tie, "icc": icc}, note


def _position_noise(
    effect: float, flip_rate: float | None, tie_rate: float | None, icc: float | None,
    like: tuple[dict[str, float], str] | None,
) -> tuple[PositionNoise, dict[str, float], str]:  # fmt: skip
    given = {"flip_rate": flip_rate, "tie_rate": tie_rate, "icc": icc}
    base, source = like if like is not None else (dict(POSITION_DEFAULTS), "")
    values = {k: (float(v) if v is not None else base[k]) for k, v in given.items()}
    told = [k for k, v in given.items() if v is not None]
    if like is None:
        source = "defaults: typical of LLM judges in LLMBar and JudgeBench"
        if told:
            source = f"{', '.join(k.replace('_', ' ') for k in told)} as given; others " + source
    elif told:
        source = f"{source}; {', '.join(k.replace('_', ' ') for k in told)} as given"
    try:
        noise, values, source = _fitted_noise(effect, values, source, raise_flips=flip_rate is None)
    except ConfigError as err:
        if like is None or len(told) == len(given):
            raise
        # numbers the user never typed (the message names them as options): the table's
        words = {"flip_rate": "flip rate", "tie_rate": "tie share", "icc": "correlation"}
        measured = ", ".join(f"{words[k]} {base[k]:.2f}" for k in given if k not in told)
        raise ConfigError(
            f"--like: the table's {measured} ({like[1]}) do not fit this effect: {err}"
        ) from err
    return noise, values, source


def _fitted_noise(
    effect: float, values: dict[str, float], source: str, *, raise_flips: bool
) -> tuple[PositionNoise, dict[str, float], str]:
    """:func:`solve_noise` at ``values``; where they do not fit and ``raise_flips`` (no
    flip rate given), at the least higher flip rate that does."""
    try:
        noise = solve_noise(effect=effect, **values)
    except ConfigError:
        if not raise_flips:
            raise
        # a large effect forces more flips than the default: the least flip rate that fits
        for extra in np.arange(0.01, 0.76, 0.01):
            trial = values | {"flip_rate": round(values["flip_rate"] + float(extra), 2)}
            try:
                noise = solve_noise(effect=effect, **trial)
            except ConfigError:
                continue
            values = trial
            source += (
                f"; flip rate raised to {trial['flip_rate']:.2f}, the least this effect allows"
            )
            break
        else:
            raise
    return noise, values, source


def power_interval(hits: int, runs: int, level: float = MC_LEVEL) -> tuple[float, float]:
    """The Monte-Carlo interval of a simulated power, ``hits`` of ``runs`` data sets
    detecting: two-sided Clopper–Pearson at ``level``. A normal interval has zero width
    at 0 or all runs (20 of 20 read 1.00 [1.00, 1.00], as if 20 runs proved a power of
    1); this one is [0.83, 1.00] there.

    >>> [round(x, 3) for x in power_interval(20, 20)]
    [0.832, 1.0]
    >>> [round(x, 3) for x in power_interval(150, 200)]
    [0.684, 0.808]
    """
    a = (1 - level) / 2
    low = float(beta.ppf(a, hits, runs - hits + 1)) if hits > 0 else 0.0
    high = float(beta.ppf(1 - a, hits + 1, runs - hits)) if hits < runs else 1.0
    return low, high


def plan(
    bias: Planned,
    effect: float,
    *,
    power: float = 0.8,
    boot: Resampling = Resampling(n_boot=PLAN_N_BOOT),
    pairs_per_prompt: int = 3,
    accuracy: float = 0.7,
    runs: int = 200,
    flip_rate: float | None = None,
    tie_rate: float | None = None,
    icc: float | None = None,
    like: pd.DataFrame | None = None,
    max_pairs: int = MAX_PAIRS,
    max_seconds: float = 120.0,
    progress: Callable[[str], None] | None = None,
) -> Plan:
    """The pairs (and prompts) needed to detect ``effect`` (see the module docstring).

    Position only: ``flip_rate``, ``tie_rate``, ``icc`` (default
    :data:`POSITION_DEFAULTS`, or measured in ``like`` by :func:`noise_like`) set the
    simulated judge's noise. ``progress`` receives one line per simulated size.
    ``boot`` is each simulated data set's bootstrap: its level is the interval's (in
    ``[0.5, 1)``, checked as the :class:`Resampling` was made, so not again here), its
    ``n_boot`` is :data:`PLAN_N_BOOT` by default (a search runs hundreds of bootstraps),
    and its seed also seeds the simulated data sets (run ``r`` uses ``seed + r``).
    """
    if bias not in PLANNED:
        raise ConfigError(f"--bias must be one of {', '.join(PLANNED)}; got {bias!r}")
    if not 0 < abs(effect) < (0.5 if bias == "position" else 1):
        raise ConfigError(
            f"--effect must be non-zero and below {0.5 if bias == 'position' else 1} in size "
            f"(a {'rate above 0.5' if bias == 'position' else 'difference of recalls'}); "
            f"got {effect}"
        )
    for name, value, ok, want in (
        ("--power", power, 0.5 <= power < 1, "in [0.5, 1), e.g. 0.8"),
        ("--pairs-per-prompt", pairs_per_prompt, pairs_per_prompt >= 1, "1 or more"),
        ("--runs", runs, runs >= 20, "20 or more"),
        ("--accuracy", accuracy, 0.5 < accuracy < 1, "in (0.5, 1), e.g. 0.7"),
    ):
        if not ok:  # each option named with the value given
            # as given: 0.4999999 read "--power must be in [0.5, 1), e.g. 0.8; got 0.5"
            raise ConfigError(f"{name} must be {want}; got {exact(value)}")
    if not 0 < max_seconds < math.inf:  # nan and inf too: a deadline never reached
        raise ConfigError(
            f"--max-seconds must be a positive number of seconds, e.g. 120; got {max_seconds:g}"
        )
    if bias != "position" and any(v is not None for v in (flip_rate, tie_rate, icc, like)):
        raise ConfigError("--flip-rate, --ties, --icc and --like apply to --bias position only")
    if bias != "position" and accuracy + abs(effect) / 2 + PROMPT_EFFECT > 1 + 1e-12:
        # the simulated judge agrees with the human at accuracy ± effect/2, each prompt
        # shifting it by up to PROMPT_EFFECT: named here in the options the user gave
        # (simulate_pairs would say "judge 'gpt-4' ... lower the biases")
        most = 2 * (1 - PROMPT_EFFECT - accuracy)
        # rounded down, as a lower bound is, so the effect named fits: 0.346 at --accuracy
        # 0.777 read "at most 0.35", which is refused (0.777 + 0.175 + 0.05 > 1)
        fits = lower_bound(most + 1e-12, 2 if most >= 0.01 else small_decimals(most))
        room = (
            f"at --accuracy {accuracy:g} plan for an --effect of at most {fits}, or lower "
            "--accuracy"
            if most > 0
            else f"at --accuracy {1 - PROMPT_EFFECT:g} or more no effect fits: lower --accuracy"
        )
        raise ConfigError(
            f"--effect {effect:g} with --accuracy {accuracy:g} cannot be simulated: the "
            f"judge would agree with the human with probability up to "
            f"{accuracy + abs(effect) / 2 + PROMPT_EFFECT:.3f} (accuracy + effect/2 + "
            f"{PROMPT_EFFECT:g} of prompt-to-prompt variation), above 1 — {room}"
        )
    k = pairs_per_prompt
    noise: PositionNoise | None = None
    values: dict[str, float] = {}
    source = ""
    if bias == "position":
        measured = noise_like(like) if like is not None else None
        noise, values, source = _position_noise(effect, flip_rate, tie_rate, icc, measured)
    rho, sigma2 = (noise.icc, noise.variance) if noise is not None else (0.05, None)

    def guess_at(per_prompt: int) -> int:
        return _first_guess(bias, abs(effect), power=power, level=boot.level, k=per_prompt,
                            accuracy=accuracy, rho=rho, sigma2=sigma2)  # fmt: skip

    guess = guess_at(k)
    if guess > max_pairs:
        if k > 1 and (one := guess_at(1)) <= max_pairs:
            # the per-prompt count, not the effect, is what is too large (an effect of
            # 0.4 at 60,000 per prompt was "an effect this small ...")
            raise ConfigError(
                f"a {bias} effect of {effect:g} at --pairs-per-prompt {k:,} needs about "
                f"{guess:,} pairs by the normal approximation, more than plan simulates "
                f"({max_pairs:,}): plan simulates 4 prompts or more, and the pairs of one "
                "prompt are correlated (each adds less than a pair of a new prompt) — at 1 "
                f"pair per prompt it needs about {one:,}; plan for fewer --pairs-per-prompt"
            )
        raise ConfigError(
            f"a {bias} effect of {effect:g} needs about {guess:,} pairs by the normal "
            f"approximation, more than plan simulates ({max_pairs:,}); an effect this small "
            "is below what a judge audit can resolve — plan for a larger --effect"
        )
    say = progress or (lambda _line: None)
    deadline = time.monotonic() + max_seconds
    stopped = ""
    prompts = max(2, math.ceil(guess / k))
    opts = {
        "k": k,
        "accuracy": accuracy,
        "boot": boot,
        "runs": runs,
        "noise": noise,
        "deadline": deadline,
    }

    last_runs = [runs]

    def check(size: int, what: str) -> float:
        t0 = time.monotonic()
        say(f"{what}: simulating {runs} data sets of {size * k:,} pairs ...")
        got, done = _simulated(bias, effect, prompts=size, **opts)  # type: ignore[arg-type]
        shown = decimal_beside(got, [power], 2)  # 159 of 200 runs: 0.795, not 0.80 ≥ 80%
        say(f"{what}: {size * k:,} pairs over {size:,} prompts -> simulated power {shown} "
            f"({done} runs, {time.monotonic() - t0:.0f} s)")  # fmt: skip
        last_runs[0] = done
        return got

    def out_of_time() -> bool:
        nonlocal stopped
        if time.monotonic() > deadline:
            stopped = (
                f"The search stopped at its time limit ({max_seconds:g} s, --max-seconds): "
                "the size is the last one tried, and the power may be below the target."
            )
        return bool(stopped)

    achieved = check(prompts, "first guess")
    for _ in range(8):
        if achieved >= power or out_of_time() or prompts * k >= max_pairs:
            break
        prompts = min(math.ceil(prompts * 1.25), max_pairs // k)
        achieved = check(prompts, "more")
    mc = math.sqrt(power * (1 - power) / runs)  # Monte-Carlo standard error at the target
    for _ in range(6):  # the first guess may be generous: the smallest size that clearly works
        smaller = max(2, math.floor(prompts * 0.8))
        if achieved < power or smaller == prompts or out_of_time():
            break
        trial = check(smaller, "fewer")
        if trial < power + mc:  # not clearly enough: a lucky draw would shrink too far
            break
        prompts, achieved = smaller, trial
    # the power reported is a fresh simulation at the chosen size, not the search's own
    opts["boot"] = replace(boot, seed=boot.seed + 1_000_000)
    opts["deadline"] = max(deadline, time.monotonic() + max_seconds / 4)
    achieved = check(prompts, "fresh check")
    done = last_runs[0]
    if done < runs and not stopped:
        stopped = f"The fresh check ran {done} of {runs} data sets in its time (--max-seconds)."
    low, high = power_interval(round(achieved * done), done)
    return Plan(
        bias=bias,
        effect=effect,
        pairs=prompts * k,
        prompts=prompts,
        pairs_per_prompt=k,
        power=power,
        achieved=achieved,
        achieved_low=low,
        achieved_high=high,
        runs=done,
        level=boot.level,
        first_guess_pairs=guess,
        seed=boot.seed,
        n_boot=boot.n_boot,
        noise=values,
        noise_source=source,
        stopped=stopped,
    )
