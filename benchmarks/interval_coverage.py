"""Benchmark: coverage of the cluster-bootstrap intervals at the sizes real data have.

The Equal-Opportunity self-preference bias (recall when the human prefers the
judge's own response minus recall when the human prefers the other one) on small
prompt-clustered tables like LLMBar MT-Bench (GPT-4: 51 pairs on 37 prompts, 43 / 8
in the two human-label groups). Each replication draws prompts with 1-3 pairs
(shares 0.65 / 0.32 / 0.03, as in LLMBar MT-Bench) until ``pairs`` pairs, puts
exactly ``minority`` of them (at random) in the group where the human prefers the
other response, and judges every pair in two orders: each order picks the own
response with probability ``Phi(c + u_prompt + e_pair)`` (``u`` ~ N(0, 0.5^2) shared
by the pairs of a prompt, ``e`` ~ N(0, 0.7^2) shared by the two orders of a pair),
``c`` set so the mean is exactly 0.92 (human prefers own) or 0.44 (prefers other).
The verdict is the mean of the two picks (0, 0.5, 1), as in the pairs table. The
planted EO bias is 0.92 - 0.44 = 0.48.

For each size it prints the share of replications whose 90 % interval covers 0.48
(percentile vs BCa, same resamples), the mean width, and the share with the truth
below / above the interval. A size whose minority group falls under ``--min-n``
would be refused by recuse; those replications do not occur here (fixed counts).

Target (exit status 1 when missed): BCa coverage at least 0.85 at every size. Each
size's share is a binomial count over ``--reps`` tables, so it is checked against the
floor that an interval covering exactly 0.85 of tables stays above at every size
together with probability 0.99 (``_targets.coverage_floor``: 0.826 at 2,000
replications, 0.795 at 400); a floor of two standard errors per size would fail such an
interval at one of the eight sizes in about one run of three.

Run: python benchmarks/interval_coverage.py [--reps 2000] [--n-boot 1000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _targets import Targets, coverage_floor
from scipy.special import ndtri

from recuse.metrics.bootstrap import (
    INTERVALS,
    GroupedStatistic,
    Resampling,
    cluster_bootstrap,
    difference_of_ratios,
)

RECALL_OWN, RECALL_OTHER = 0.92, 0.44
TRUTH = RECALL_OWN - RECALL_OTHER
SD_PROMPT, SD_PAIR = 0.5, 0.7
SIZES = ((30, 5), (50, 7), (50, 10), (80, 15), (100, 20), (150, 30), (400, 60), (1000, 150))


def simulate(
    n_pairs: int, minority: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Per-row EO terms ``[w1 v, w1, w0 (1 - v), w0]`` and the prompt of each row."""
    sizes = rng.choice([1, 2, 3], size=n_pairs, p=[0.65, 0.32, 0.03])
    prompt = np.repeat(np.arange(n_pairs), sizes)[:n_pairs]
    other = np.zeros(n_pairs, bool)
    other[rng.choice(n_pairs, size=minority, replace=False)] = True
    mean = np.where(other, 1.0 - RECALL_OTHER, RECALL_OWN)  # P(the judge picks its own)
    scale = np.sqrt(1.0 + SD_PROMPT**2 + SD_PAIR**2)
    c = ndtri(mean) * scale
    u = rng.normal(0, SD_PROMPT, size=n_pairs)[prompt]
    e = rng.normal(0, SD_PAIR, size=n_pairs)
    z = c + u + e
    picks = (z[:, None] + rng.standard_normal((n_pairs, 2))) > 0  # Phi(z) per order
    v = picks.mean(axis=1)  # verdict for the own response
    w1, w0 = (~other).astype(float), other.astype(float)
    values = np.column_stack([w1 * v, w1, w0 * (1 - v), w0])
    return values, prompt.astype(str)


def coverage(
    n_pairs: int, minority: int, *, reps: int, n_boot: int, seed: int
) -> dict[str, tuple[float, float, float, float]]:
    """Per method: coverage, mean width, share missed low (truth below), missed high."""
    rng = np.random.default_rng(seed)
    hits: dict[str, list[tuple[bool, float, bool, bool]]] = {m: [] for m in INTERVALS}
    for r in range(reps):
        values, prompts = simulate(n_pairs, minority, rng)
        stat = GroupedStatistic(
            "eo", values, np.zeros(len(values), np.intp), ("j",), difference_of_ratios
        )
        for method in INTERVALS:
            est = cluster_bootstrap(
                [stat],
                prompts,
                boot=Resampling(level=0.9, n_boot=n_boot, seed=r),
                min_n=1,
                max_dropped=1.0,
                interval=method,
            )[0][0]
            hits[method].append(
                (
                    est.ci_low <= TRUTH <= est.ci_high,
                    est.ci_high - est.ci_low,
                    TRUTH < est.ci_low,
                    TRUTH > est.ci_high,
                )
            )
    out = {}
    for method, h in hits.items():
        a = np.asarray(h, dtype=float)
        out[method] = (a[:, 0].mean(), a[:, 1].mean(), a[:, 2].mean(), a[:, 3].mean())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    margin = 1.96 * np.sqrt(0.9 * 0.1 / args.reps)
    print(
        f"EO self-preference, planted {TRUTH:.2f}; nominal 90 %; {args.reps} replications, "
        f"{args.n_boot} resamples each (binomial SE of a coverage near 0.9: +-{margin:.3f})"
    )
    print(f"{'pairs':>6} {'minority':>8}  " + "  ".join(f"{m:>30}" for m in INTERVALS))
    print(f"{'':>6} {'':>8}  " + "  ".join(f"{'cover  width  low  high':>30}" for _ in INTERVALS))
    targets = Targets()
    floor = coverage_floor(0.85, args.reps, checks=len(SIZES))
    print(
        f"BCa coverage >= 0.85 at every size is checked as >= {floor:.3f} over "
        f"{args.reps} replications (a true 0.85 falls under it at some size in 1% of runs)"
    )
    for n_pairs, minority in SIZES:
        t0 = time.perf_counter()
        res = coverage(n_pairs, minority, reps=args.reps, n_boot=args.n_boot, seed=args.seed)
        # the default (BCa) interval: 0.88 at 50 pairs / 7 minority when it was chosen
        # (684eca0); at least 0.85 at every size, within the binomial noise of the reps
        targets.at_least(
            f"BCa coverage at {n_pairs} pairs / {minority} minority",
            res["bca"][0],
            floor,
            scaled=False,
        )
        cells = [f"{c:.3f}  {w:.3f}  {lo:.3f}  {hi:.3f}" for c, w, lo, hi in res.values()]
        print(
            f"{n_pairs:>6} {minority:>8}  "
            + "  ".join(f"{c:>30}" for c in cells)
            + f"  ({time.perf_counter() - t0:.0f} s)"
        )
    targets.finish()


if __name__ == "__main__":
    main()
