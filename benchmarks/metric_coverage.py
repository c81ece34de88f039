"""Benchmark: do the headline 90% intervals of the pairwise metrics and favoritism hold their level?

Planted truths, at a realistic small size. Each replication simulates one table and
calls the same public function the audit calls; the share of replications whose
interval holds the true value is that interval's coverage.

* Pairs metrics (:func:`recuse.simulate.pairs.simulate_pairs`): ``--prompts`` prompts
  with 3 pairs each (prompt effect ``--prompt-effect``: each prompt shifts every
  agreement probability by Uniform(-e, e), so clustering matters), 8 models, 10 %
  human ties, 10 % pairs judged in one order only, 5 % of orders unparsed. One judge
  (``gpt-4``, family ``gpt`` with ``gpt-3.5-turbo``) with planted self-preference
  0.2, family preference 0.15, verbosity 0.15, position 0.05, accuracy 0.6. The true
  values are the simulator's exact population values (its module docstring), except
  agreement (accuracy), whose truth is the estimate on one table of 200,000 prompts.
  Metrics: first-position rate, verbosity Eq. 6, prefer-longer gap, EO and DP self-
  and family preference, agreement — each with ``Resampling(n_boot=--n-boot)``
  (BCa, the default).
* Favoritism (:func:`recuse.regression.favoritism.fit_favoritism`, cluster-robust by
  prompt, CR1): :func:`recuse.simulate.ratings.simulate_ratings` with ``--rating-prompts``
  prompts, two dimensions, an answer-level error shared by the dimensions
  (``answer_sd`` 0.1, so ratings of a prompt are correlated) and coefficients drawn per
  replication; coverage of every ``self[j]`` (γ) and ``family[F]`` (λ) term, pooled, with
  ``normalize="none"`` (the coefficients are planted in rating points).

Target (exit status 1 when missed): every coverage at least 0.84 and at most 0.96 —
read against the exact binomial floor / ceiling that an interval at 0.86 / 0.94 stays
within at every check together with probability 0.99 (``_targets.coverage_floor``).

Run: python benchmarks/metric_coverage.py [--reps 200] [--n-boot 500] [--prompts 100]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
from _targets import Targets, coverage_floor

from recuse.errors import EstimationError
from recuse.metrics.agreement import accuracy
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.position import first_position_rate
from recuse.metrics.self_preference import family_preference, self_preference
from recuse.metrics.verbosity import prefer_longer_gap, verbosity_bias
from recuse.regression.favoritism import fit_favoritism
from recuse.simulate.pairs import PlantedBias, simulate_pairs
from recuse.simulate.ratings import simulate_ratings

JUDGE = "gpt-4"
BIAS = PlantedBias(
    self_preference=0.2, family_preference=0.15, verbosity=0.15, position=0.05, accuracy=0.6
)
SIM = {
    "pairs_per_prompt": 3,
    "human_tie_rate": 0.1,
    "single_order_rate": 0.1,
    "unparsed_rate": 0.05,
}

Metric = Callable[[pd.DataFrame, Resampling], tuple[float, float, float]]


def _fams(pairs: pd.DataFrame) -> dict[str, str]:
    models = set(pairs["model_a"]) | set(pairs["model_b"]) | {JUDGE}
    return {m: m.split("-")[0] if m.startswith(("gpt", "claude")) else m for m in models}


def _ci(r: object) -> tuple[float, float, float]:
    return float(r.estimate), float(r.ci_low), float(r.ci_high)  # type: ignore[attr-defined]


METRICS: dict[str, tuple[str | None, Metric]] = {
    "first_position_rate": (
        "first_position_rate",
        lambda p, b: _ci(first_position_rate(p, judge=JUDGE, boot=b)),
    ),
    "verbosity Eq. 6": ("verbosity_bias", lambda p, b: _ci(verbosity_bias(p, judge=JUDGE, boot=b))),
    "prefer-longer gap": (
        "verbosity_longer_gap",
        lambda p, b: _ci(prefer_longer_gap(p, judge=JUDGE, boot=b)),
    ),
    "self-preference EO": (
        "self_preference_eo",
        lambda p, b: _ci(self_preference(p, judge=JUDGE, boot=b)),
    ),
    "self-preference DP": (
        "self_preference_dp",
        lambda p, b: _ci(self_preference(p, judge=JUDGE, kind="dp", boot=b)),
    ),
    "family preference EO": (
        "family_preference_eo",
        lambda p, b: _ci(family_preference(p, _fams(p), judge=JUDGE, boot=b)),
    ),
    "family preference DP": (
        "family_preference_dp",
        lambda p, b: _ci(family_preference(p, _fams(p), judge=JUDGE, kind="dp", boot=b)),
    ),
    "agreement (accuracy)": (None, lambda p, b: _ci(accuracy(p, judge=JUDGE, boot=b))),
}


def _pairs(n_prompts: int, prompt_effect: float, seed: int) -> pd.DataFrame:
    sim = simulate_pairs(
        judges={JUDGE: BIAS}, n_prompts=n_prompts, prompt_effect=prompt_effect, seed=seed, **SIM
    )  # type: ignore[arg-type]
    return sim.pairs


def truths(prompt_effect: float) -> dict[str, float]:
    """Each metric's true value: the simulator's exact one, or a 200,000-prompt estimate."""
    exact = BIAS.truth(0.15)
    out: dict[str, float] = {}
    big: pd.DataFrame | None = None
    for name, (key, fn) in METRICS.items():
        if key is not None:
            out[name] = exact[key]
        else:
            big = _pairs(200_000, prompt_effect, 10**6) if big is None else big
            out[name] = fn(big, Resampling(n_boot=10))[0]
    return out


def pairs_coverage(
    *, reps: int, n_boot: int, n_prompts: int, prompt_effect: float, seed: int
) -> dict[str, np.ndarray]:
    """Per metric: rows (covered, width, truth below, truth above, bias) per replication."""
    truth = truths(prompt_effect)
    rows: dict[str, list[tuple[float, ...]]] = {m: [] for m in METRICS}
    refused = dict.fromkeys(METRICS, 0)
    for r in range(reps):
        pairs = _pairs(n_prompts, prompt_effect, seed * 100_000 + r)
        boot = Resampling(n_boot=n_boot, seed=r)
        for name, (_, fn) in METRICS.items():
            try:
                est, lo, hi = fn(pairs, boot)
            except EstimationError:  # refused (a group under min_n), as the audit would
                refused[name] += 1
                continue
            t = truth[name]
            rows[name].append((lo <= t <= hi, hi - lo, t < lo, t > hi, est - t))
    for name, k in refused.items():
        if k:
            print(f"{name}: {k} of {reps} tables refused (a group under min_n), left out")
    return {m: np.asarray(v, dtype=float) for m, v in rows.items()}


def favoritism_coverage(*, reps: int, n_prompts: int, seed: int) -> dict[str, np.ndarray]:
    """γ (self) and λ (family) terms: (covered, width, below, above, bias) per term and rep."""
    rows: dict[str, list[tuple[float, ...]]] = {"favoritism γ": [], "favoritism λ": []}
    for r in range(reps):
        sim = simulate_ratings(n_prompts=n_prompts, answer_sd=0.1, seed=seed * 100_000 + r)
        # raw rating points: the planted coefficients are on that scale ("max" divides each
        # dimension by its top score, which moves them)
        res = fit_favoritism(sim.ratings, sim.families, level=0.9, normalize="none")
        ci = res.conf_int()
        truth = sim.truth()
        for term in res.params.index:
            kind = "favoritism γ" if term.startswith("self[") else None
            kind = "favoritism λ" if term.startswith("family[") else kind
            if kind is None:
                continue
            lo, hi = float(ci.loc[term].iloc[0]), float(ci.loc[term].iloc[1])
            t, est = float(truth[term]), float(res.params[term])
            rows[kind].append((lo <= t <= hi, hi - lo, t < lo, t > hi, est - t))
    return {m: np.asarray(v, dtype=float) for m, v in rows.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--n-boot", type=int, default=500)
    ap.add_argument("--prompts", type=int, default=100)
    ap.add_argument("--prompt-effect", type=float, default=0.15)
    ap.add_argument("--rating-prompts", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip", nargs="*", default=(), choices=("pairs", "favoritism"))
    args = ap.parse_args()
    results: dict[str, np.ndarray] = {}
    t0 = time.perf_counter()
    if "pairs" not in args.skip:
        results |= pairs_coverage(
            reps=args.reps,
            n_boot=args.n_boot,
            n_prompts=args.prompts,
            prompt_effect=args.prompt_effect,
            seed=args.seed,
        )
        print(f"pairs metrics: {time.perf_counter() - t0:.0f} s")
    t1 = time.perf_counter()
    if "favoritism" not in args.skip:
        results |= favoritism_coverage(
            reps=args.reps, n_prompts=args.rating_prompts, seed=args.seed
        )
        print(f"favoritism: {time.perf_counter() - t1:.0f} s")
    targets = Targets()
    checks = len(results)
    print(
        f"nominal 90 %; {args.reps} replications, {args.n_boot} resamples, "
        f"{args.prompts} prompts x 3 pairs (prompt effect {args.prompt_effect})"
    )
    print(f"{'metric':<24} {'n':>5} {'cover':>6} {'width':>7} {'low':>6} {'high':>6} {'bias':>8}")
    for name, a in results.items():
        n = len(a)
        cover = a[:, 0].mean()
        print(
            f"{name:<24} {n:>5} {cover:>6.3f} {a[:, 1].mean():>7.4f} {a[:, 2].mean():>6.3f} "
            f"{a[:, 3].mean():>6.3f} {a[:, 4].mean():>+8.4f}"
        )
        # the floor / ceiling an interval covering exactly 0.86 / 0.94 stays within at
        # every check together in 99 % of runs (exact binomial over its n draws)
        floor = coverage_floor(0.86, n, checks=2 * checks)
        ceiling = 1.0 - coverage_floor(0.06, n, checks=2 * checks)
        targets.at_least(f"{name} coverage", cover, floor)
        targets.at_most(f"{name} coverage", cover, ceiling)
    targets.finish()


if __name__ == "__main__":
    main()
