"""Time the analyses whose work grows with the number of models, with many of them.

1. The bias-adjusted leaderboard: recuse's whole leaderboard
(raw, adjusted and human fits, each with its one-step cluster bootstrap) against one
plain statsmodels fit of the raw Bradley–Terry model on a dense design, in one run.

The pairs are simulated (:func:`recuse.simulate.simulate_pairs`): ``--judges`` judges
among ``--models`` generators (20 families), ``--prompts`` prompts of one pair each,
every pair judged by every judge in both orders (two rows of weight ½ a pair). The
baseline builds the ``rows × (systems − 1)`` design of ±1 columns with NumPy and fits
``sm.GLM(y, X, Binomial(), freq_weights=w)`` once: the plain way, and how recuse fitted
each of its three models before 2026-12-01 (150,000 pairs of 100 systems then took
6 minutes in the audit's leaderboard step; 7 s after).

Then the prompts are doubled: the leaderboard's time may grow at most 2.5x (linear in
the rows: the design is sparse, X'WX is systems × systems).

The three (baseline, leaderboard, leaderboard at doubled prompts) are timed in turns
(one call of each a round; benchmarks/_timing.py), the best of ``--repeat`` rounds
each (the first round's imports left out by taking the least), in CPU seconds of this
process with BLAS on one thread (threadpoolctl; recuse's bootstrap runs BLAS on one
thread itself): the work is NumPy, SciPy and statsmodels on this one thread, so the
CPU seconds are the work, and the time another process holds the CPU is not counted.
Timed once each by the wall clock, one after the other, the speed-up read 1.48x
(target 1.5x) once at load 4.

2. The calibrated self-preference's label graph (which model beat which in each
resample's human labels, ``CompetenceModel._label_graph``) for 256 resamples of every
labelled pair of ``--label-models`` models, against the contraction with a one-hot
``(pairs, models, models)`` array it was before 2026-12-01 (``L · M²`` products a
resample: at 100 models, 156 of the 173 s of a 150,000-pair audit's self-preference).
Both in turns, the best CPU seconds of ``--repeat`` each (no warm-up round: the
contraction takes 14 s at 100 models).

3. The calibrated self-preference with one-step resamples (``--judges`` judges,
``--models`` models, ``--prompts`` prompts, family term and rungs): each judge's
one-step Jacobian (``_OneStep._fitted``) by index sums against the dense
``(patterns, models)`` and ``(labelled pairs, models)`` contrast matrices it was built
from before 2026-12-01 (at 20 judges, 200 models and 20,000 prompts, ``recuse metrics
pairs --n-boot 50`` took 82 s and 3.3 GB then, 8 s and 2.1 GB after, the same output),
and how many full-sample strength fits the estimate makes (5 a judge before: each an
``M × M`` eigendecomposition a Newton step). Working memory is the traced peak less
what the result keeps (CPU times are printed, not targeted: BLAS threads make them
swing several-fold on the shared machine).

Targets (exit status 1 when one is missed; benchmarks/_targets.py): the leaderboard at
least 1.5x faster than the one dense statsmodels fit (measured 4-6x at the default
size on the shared 2-core machine), its raw strengths equal to the baseline's to 1e-6,
the growth at doubled prompts at most 2.5x; the label graph at least 10x faster than
the one-hot contraction (measured about 200x at 100 models), the same graphs; the
one-step Jacobian's working memory at least 3x under the dense way's (9.5x at
bench-quick's 1,000 prompts), the same ``(J⁺)ᵀ`` to 1e-9 (1.2e-15), at most one
full-sample strength fit a judge (0.2: judges with the same label sums share one; 6
as it was).

    python benchmarks/many_models.py [--judges 10] [--models 100] [--prompts 2000]
        [--label-models 100]

``make bench-quick`` runs ``--prompts 1000 --label-models 40`` (a few seconds).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from _targets import Targets
from _timing import in_turns, one_thread
from threadpoolctl import threadpool_limits

from recuse.metrics.bootstrap import Resampling
from recuse.metrics.bradley_terry import leaderboard
from recuse.metrics.competence import _pair_newton
from recuse.simulate import PlantedBias, simulate_pairs


def pairs_of(judges: int, models: int, prompts: int, seed: int = 0) -> tuple[pd.DataFrame, dict]:
    names = [f"m{i:03d}" for i in range(models)]
    families = {m: f"f{i % 20:02d}" for i, m in enumerate(names)}
    planted = {m: PlantedBias(self_preference=0.05, verbosity=0.05, position=0.05)
               for m in names[:judges]}  # fmt: skip
    sim = simulate_pairs(judges=planted, models=names, families=families,
                         n_prompts=prompts, pairs_per_prompt=1, seed=seed)  # fmt: skip
    return sim.pairs, families


def ours(pairs: pd.DataFrame, families: dict, n_boot: int) -> dict[str, float]:
    """recuse's leaderboard (raw, adjusted and human fits, bootstrap): the raw strengths."""
    lb = leaderboard(pairs, families=families, boot=Resampling(n_boot=n_boot))
    return dict(zip(lb.raw.systems, lb.raw.strengths, strict=True))


def baseline(pairs: pd.DataFrame) -> dict[str, float]:
    """One statsmodels GLM of the raw model on the dense design, both orders ½ each."""
    import statsmodels.api as sm

    judged = pairs[pairs["judge"].notna()]
    y = np.r_[judged["p_a_first"].to_numpy(float), judged["p_a_second"].to_numpy(float)]
    a = np.r_[judged["model_a"].astype(str), judged["model_a"].astype(str)]
    b = np.r_[judged["model_b"].astype(str), judged["model_b"].astype(str)]
    ok = np.isfinite(y)
    y, a, b = y[ok], a[ok], b[ok]
    systems = sorted(set(a) | set(b))
    col = {s: i for i, s in enumerate(systems)}
    x = np.zeros((len(y), len(systems)))
    rows = np.arange(len(y))
    x[rows, [col[s] for s in a]] += 1.0
    x[rows, [col[s] for s in b]] -= 1.0
    fit = sm.GLM(y, x[:, 1:], family=sm.families.Binomial(), freq_weights=np.full(len(y), 0.5))
    theta = np.asarray(fit.fit().params)
    s = np.r_[0.0, theta]
    return dict(zip(systems, s - s.mean(), strict=True))


def label_graph(models: int, targets: Targets, repeat: int) -> None:
    from recuse.metrics.competence import CompetenceModel

    rng = np.random.default_rng(0)
    la, lb = (np.asarray(v, np.intp) for v in np.triu_indices(models, 1))
    n_l, n_p, chunk = len(la), 4, 256
    model = CompetenceModel(
        ia=np.zeros(n_p, np.intp), ib=np.ones(n_p, np.intp), first=np.ones(n_p),
        own=np.zeros(n_p), la=la, lb=lb, n_models=models,
    )  # fmt: skip
    counts = rng.poisson(0.7, size=(chunk, n_l)).astype(float)
    sums = np.minimum(counts, rng.integers(0, 3, size=counts.shape)).astype(float)
    s = np.concatenate([np.ones((chunk, 2 * n_p)), counts, sums, np.ones((chunk, 3))], -1)

    def one_hot() -> tuple[np.ndarray, np.ndarray]:
        a_to_b = np.zeros((n_l, models, models))
        a_to_b[np.arange(n_l), la, lb] = 1.0
        b_to_a = np.swapaxes(a_to_b, 1, 2)
        drawn = counts > 0
        old_beat = np.einsum("...l,lij->...ij", (drawn & (sums > 0)).astype(float), a_to_b)
        old_beat += np.einsum("...l,lij->...ij", (drawn & (sums < counts)).astype(float), b_to_a)
        return old_beat, np.einsum("...l,lij->...i", drawn.astype(float), a_to_b + b_to_a) > 0

    (our_s, base_s), ((beat, seen), (old_beat, old_seen)) = in_turns(
        [lambda: model._label_graph(s), one_hot], repeat=repeat, warm_up=False
    )
    print(f"\n== calibrated self-preference's label graph: {chunk} resamples of {n_l:,} "
          f"labelled pairs of {models} models")  # fmt: skip
    print(f"CPU seconds, the best of {repeat} in turns")
    print(f"{base_s:8.3f} s  baseline: contracted with the one-hot (pairs, models, models) array")
    print(f"{our_s:8.3f} s  recuse: set by flat index; baseline / ours = {base_s / our_s:.0f}x")
    same = bool(np.array_equal(beat, old_beat > 0) and np.array_equal(seen, old_seen))
    print(f"the same graphs: {same}")
    targets.at_least("label graph: baseline / ours seconds", base_s / our_s, 10.0, "x", scaled=True)
    targets.at_least("label graph: the same graphs (1 = yes)", float(same), 1.0, scaled=False)


def dense_pinv_t(one: Any, code: int) -> np.ndarray:
    """A judge's one-step ``(J⁺)ᵀ`` as ``_OneStep._fitted`` computed it before 2026-12-01:
    its strengths refitted, dense ``(patterns, models)`` and ``(labelled pairs, models)``
    contrast matrices and a one-hot ``(patterns, d)`` array, multiplied out."""
    from scipy import special

    m, (t, theta) = one.model, one.fits[code]
    p_n, n_l, d, k_n = len(m.ia), len(m.la), len(theta), m.n_kappa
    kcol = np.zeros(p_n, dtype=np.intp) if m.kgroup is None else m.kgroup
    n_p, y_p, _ = m.placed(t)
    st = _pair_newton(
        m.la, m.lb, m.n_models, t[2 * p_n : 2 * p_n + n_l], t[2 * p_n + n_l : 2 * p_n + 2 * n_l]
    )
    gap = st[m.ia] - st[m.ib]
    x = np.zeros((p_n, d))
    x[np.arange(p_n), kcol] = gap
    x[:, k_n], x[:, k_n + 1] = m.first, m.own
    if m.fam is not None:
        x[:, k_n + 2] = m.fam
    if m.label is not None:
        x[:, d - 1] = m.label
    mu = special.expit(x @ theta)
    kap = theta[kcol]
    j_tt = -(x * (n_p * mu * (1.0 - mu))[:, None]).T @ x
    e_p = np.zeros((p_n, m.n_models))
    e_p[np.arange(p_n), m.ia] += 1.0
    e_p[np.arange(p_n), m.ib] -= 1.0
    e_l = np.zeros((n_l, m.n_models))
    e_l[np.arange(n_l), m.la] += 1.0
    e_l[np.arange(n_l), m.lb] -= 1.0
    q = special.expit(st[m.la] - st[m.lb])
    onehot = np.zeros((p_n, d))
    onehot[np.arange(p_n), kcol] = 1.0
    j_ts = (-(x * (n_p * mu * (1.0 - mu) * kap)[:, None]).T @ e_p
            + (onehot * (y_p - n_p * mu)[:, None]).T @ e_p)  # fmt: skip
    j_ss = -(e_l * (t[2 * p_n : 2 * p_n + n_l] * q * (1.0 - q))[:, None]).T @ e_l
    jac = np.block([[j_ss, np.zeros((m.n_models, d))], [j_ts, j_tt]])
    return np.linalg.pinv(jac).T


def calibrated_at(
    pairs: pd.DataFrame, families: dict, model: bool = True
) -> tuple[float, int, Any]:
    """CPU seconds of the calibrated self-preference's specs (one-step resamples, with the
    family term and the rungs), how many full-sample strength fits they made, and (with
    ``model``) the model."""
    from recuse.metrics import competence
    from recuse.metrics.self_preference import favored_side
    from recuse.metrics.verdicts import judge_codes

    calls = [0]

    def counted(*a: Any) -> np.ndarray:
        calls[0] += 1
        return _pair_newton(*a)

    codes, labels = judge_codes(pairs, None)
    kw = dict(side=favored_side(pairs, relation="self"), stratum=None,
              family_side=favored_side(pairs, relation="family", families=families))  # fmt: skip
    competence._pair_newton = counted
    try:
        gc.collect()
        t = time.process_time()
        competence.calibrated_specs(pairs, codes, labels, one_step=True, rungs=True, **kw)
        seconds = time.process_time() - t
    finally:
        competence._pair_newton = _pair_newton
    if not model:
        return seconds, calls[0], None
    parts = competence.calibrated_parts(pairs, codes, labels, one_step=True, **kw)
    return seconds, calls[0], parts[4]


def peak(f: Callable[[], Any]) -> tuple[float, float, Any]:
    """CPU seconds of this process, the working memory of ``f()`` (MB: the traced peak,
    NumPy's arrays included, less what its result keeps) and its result."""
    gc.collect()
    tracemalloc.start()
    t = time.process_time()
    out = f()
    seconds = time.process_time() - t
    kept, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return seconds, (top - kept) / 1e6, out


def calibrated(args: argparse.Namespace, targets: Targets) -> None:
    pairs, families = pairs_of(args.judges, args.models, args.prompts)
    calibrated_at(*pairs_of(3, 10, 100, seed=2), model=False)  # warm: first-call imports
    seconds, fits, model = calibrated_at(pairs, families)
    one = model.one_step
    n_j = len(one.fits)
    print(f"\n== calibrated self-preference, one-step resamples: {n_j} judges, {args.models} "
          f"models, {args.prompts:,} prompts ({len(model.ia):,} patterns, "
          f"{len(model.la):,} labelled model pairs)")  # fmt: skip
    one._shared.clear()
    our_s, our_mb, fitted = peak(one._fitted)
    base_s, base_mb, old = peak(lambda: {code: dense_pinv_t(one, code) for code in one.fits})
    gap = max(float(np.abs(fitted[c].pinv_t - old[c]).max()) for c in old)
    print(f"{base_s:8.3f} s {base_mb:8.1f} MB  baseline: each judge's Jacobian from dense "
          "contrast matrices, its strengths refitted (as before 2026-12-01)")  # fmt: skip
    print(f"{our_s:8.3f} s {our_mb:8.1f} MB  recuse: by index sums; baseline / ours = "
          f"{base_s / our_s:.1f}x the CPU time, {base_mb / our_mb:.1f}x the working memory "
          "(traced peak less the result)")  # fmt: skip
    print(f"largest difference of a (J+)' entry from the baseline's: {gap:.1e}")
    print(f"full-sample strength fits: {fits} for {n_j} judges (5 a judge before)")
    print(f"{seconds:8.2f} s CPU  the estimate's specs (one-step, family term, rungs)")
    targets.at_least(
        "one-step Jacobian: baseline / ours working memory", base_mb / our_mb, 3.0, "x", scaled=True
    )
    targets.at_most("one-step Jacobian: largest (J+)' difference", gap, 1e-9, scaled=False)
    targets.at_most("full-sample strength fits a judge", fits / n_j, 1.0, scaled=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--judges", type=int, default=10)
    parser.add_argument("--models", type=int, default=100)
    parser.add_argument("--prompts", type=int, default=2000)
    parser.add_argument("--n-boot", type=int, default=200)
    parser.add_argument(
        "--repeat", type=int, default=3, help="rounds of the timed parts in turns; the best kept"
    )
    parser.add_argument(
        "--label-models",
        type=int,
        default=100,
        help="models of the label-graph section (its baseline: 14 s at 100)",
    )
    args = parser.parse_args()
    one_thread()  # CPU seconds are the work of one thread (benchmarks/_timing.py)
    targets = Targets()
    pairs, families = pairs_of(args.judges, args.models, args.prompts)
    print(f"== leaderboard of {args.models} systems, {args.judges} judges, {args.prompts:,} "
          f"prompts ({len(pairs):,} judged pairs, both orders), n_boot={args.n_boot}")  # fmt: skip
    doubled, _ = pairs_of(args.judges, args.models, 2 * args.prompts, seed=1)
    with threadpool_limits(limits=1, user_api="blas"):
        (base_s, our_s, twice_s), (base, got, _) = in_turns(
            [
                lambda: baseline(pairs),
                lambda: ours(pairs, families, args.n_boot),
                lambda: ours(doubled, families, args.n_boot),
            ],
            repeat=args.repeat,
            warm_up=False,  # the first round's imports (statsmodels) are left out by the least
        )
    print(f"CPU seconds (BLAS on one thread), the best of each over {args.repeat} rounds in turns:")
    print(f"{base_s:8.2f} s  baseline: one statsmodels GLM fit of the raw model, dense design")
    print(f"{our_s:8.2f} s  recuse leaderboard: raw, adjusted and human fits with bootstrap")
    print(f"speed-up: baseline / ours = {base_s / our_s:.1f}x")
    gap = max(abs(got[s] - base[s]) for s in base)
    print(f"largest difference of a raw strength from the baseline's: {gap:.1e} log-odds")
    targets.at_least("baseline / leaderboard seconds", base_s / our_s, 1.5, "x", scaled=True)
    targets.at_most("largest raw strength difference (log-odds)", gap, 1e-6, scaled=False)
    print(f"{twice_s:8.2f} s  recuse leaderboard at {2 * args.prompts:,} prompts: "
          f"{twice_s / our_s:.2f}x the time for 2x the pairs")  # fmt: skip
    targets.at_most(
        "growth of the leaderboard's seconds at doubled prompts", twice_s / our_s, 2.5, scaled=True
    )
    label_graph(args.label_models, targets, args.repeat)
    calibrated(args, targets)
    targets.finish()
    return 0


if __name__ == "__main__":
    sys.exit(main())
