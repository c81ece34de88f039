"""Time ``recuse certify apply``'s count of the labelled decided items at scale.

``certify apply`` on a labelled file says how often the decided items agree with the
labels (:func:`recuse.mitigation.thresholds.observed`). It found the decided items that
hold a label with ``Index.isin``, whose str-dtype form (pandas 3) builds one pyarrow
scalar per label: at 480,000 judged rows (240,000 items) that one call took 2.6 s of the
command's 17 s. It now looks the items up in the labels' (unique) index.

Simulated: ``--items`` item ids with two label rows each (repeated ids, as a pairs file
of two judges holds them; 10% missing), decisions for the even-numbered half plus
10,000 ids without labels, shuffled. Timed in the same run, in turns (one call of each
a round, after a warm-up round: benchmarks/_timing.py), the best of ``--repeat`` rounds,
in CPU seconds of this process (the work is pandas and NumPy on this one thread, and
pyarrow's string kernels; CPU seconds sum every thread, so time another process holds
the CPU is not counted and no candidate gains from threads):

* ours: ``observed(decided, pairs)``;
* the old lookup: the same count with ``by.index.isin(words.index)`` (what it was);
* a plain pandas baseline: first label per id by ``groupby().first()``, then an inner
  ``merge`` of the decisions on it and the counts.

Targets (exit status 1 when one is missed; benchmarks/_targets.py): the same counts
from all three; ours at least 3x faster than the old lookup (measured 3.4-6.3x at
400,000 items on the shared 2-core machine at load 3-6) and at least 0.6x the plain
pandas merge's speed (measured 0.9x: the same work, a hash join).

Growth: ours at doubled items against a linear reference at doubled items, the four
timed in turns in each round (after the comparisons above). The reference hashes the
same ids (``factorize`` of the label rows' ids, then ``get_indexer_for`` of the
decisions' ids: the memory traffic of the lookup, nothing else). The target is on
their ratio in each round, (ours at 2N / ours at N) / (reference at 2N / reference at
N), its median over the rounds at most 1.3 (one round's four calls share the machine's
load). The bare growth of ours read the caches: at 400,000 items the smaller table
fits the 32 MB L3 cache and the doubled one does not (3.06x against <= 2.5x with the
code unchanged), while the reference, doing the same traffic over the same tables,
grows alike, so the ratio reads the code's growth beyond linear. A quadratic part
taking a share s of ours' time at N reads about (g (1 - s) + 4 s) / g, g the linear
growth (2 to 3 with the cache): ``--plant-quadratic`` adds one (every 35th id compared
with every other, in 1,024-wide blocks that stay in cache; s about 0.7 at 400,000
items) and the run must exit 1 (docs/benchmarks.md gives the numbers).

    python benchmarks/certify_apply.py [--items 400000] [--repeat 5] [--plant-quadratic]

Not in ``make bench-quick``: the growth check needs the default size (at 100,000 items
the calls take 0.04-0.06 s and the rounds' ratios scatter 0.81-1.34), and a run there
takes 1-4 minutes wall on the shared machine.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd
from _targets import Targets
from _timing import in_turns, one_thread

from recuse.mitigation.selective import PERSON, side_labels
from recuse.mitigation.thresholds import observed

Counts = tuple[int, int, int, int]


def tables(items: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A labelled pairs table (two rows an item) and the decisions of half its items."""
    rng = np.random.default_rng(seed)
    ids = np.repeat(np.arange(items), 2)
    human = rng.choice([1.0, 0.0, 0.5, np.nan], size=len(ids), p=[0.45, 0.4, 0.05, 0.1])
    pairs = pd.DataFrame({"item_id": [f"i{k}" for k in ids], "human": human})
    mine = [f"i{k}" for k in range(0, items, 2)] + [f"x{k}" for k in range(10_000)]
    order = rng.permutation(len(mine))
    decision = rng.choice(["a", "b", "tie", PERSON], size=len(mine))
    decided = pd.DataFrame({"item_id": [mine[k] for k in order], "decision": decision})
    return decided, pairs


def ours(decided: pd.DataFrame, pairs: pd.DataFrame) -> Counts:
    seen = observed(decided, pairs)
    assert seen is not None
    return seen.n, seen.kept, seen.agree, seen.ties


def reference(decided: pd.DataFrame, pairs: pd.DataFrame) -> int:
    """The growth's linear reference: the ids hashed as ``observed`` hashes them (the
    label rows' ids factorized, the decisions' ids looked up in them), no counting."""
    ids = pd.factorize(pairs["item_id"].astype(str))[1]
    at = pd.Index(ids).get_indexer_for(pd.Index(decided["item_id"]))
    return int((at >= 0).sum())


def quadratic_step(pairs: pd.DataFrame, *, every: int = 35, block: int = 1024) -> int:
    """A planted super-linear step: every ``every``-th label row's id compared with every
    other such id, ``block`` by ``block`` (each block stays in cache): work grows as the
    square of the rows, memory does not."""
    codes = pd.factorize(pairs["item_id"])[0][::every]
    same = 0
    for i in range(0, len(codes), block):
        row = codes[i : i + block, None]
        for j in range(0, len(codes), block):
            same += int((row == codes[None, j : j + block]).sum())
    return same


def planted(decided: pd.DataFrame, pairs: pd.DataFrame) -> Counts:
    """``observed`` with :func:`quadratic_step` before it: what the growth must catch."""
    quadratic_step(pairs)
    return ours(decided, pairs)


def old_lookup(decided: pd.DataFrame, pairs: pd.DataFrame) -> Counts:
    """``observed`` as it was (``isin``), tied labels left out."""
    h = pd.to_numeric(pairs["human"], errors="coerce")
    labels = pd.Series(h.to_numpy(float), index=pairs["item_id"].astype(str)).dropna()
    labels = labels[~labels.index.duplicated()]
    words = pd.Series(side_labels(labels.to_numpy(float)), index=labels.index).map(
        {1: "a", -1: "b", 0: "tie"}
    )
    by = decided.set_index("item_id")
    mine = by.loc[by.index.isin(words.index)]
    label = words.loc[mine.index]
    sided = label != "tie"
    kept = sided & (mine["decision"] != PERSON)
    agree = kept & (mine["decision"] == label)
    return int(sided.sum()), int(kept.sum()), int(agree.sum()), int((label == "tie").sum())


def pandas_merge(decided: pd.DataFrame, pairs: pd.DataFrame) -> Counts:
    first = pairs.dropna(subset=["human"]).groupby("item_id", sort=False)["human"].first()
    side = np.where(first > 0.5, "a", np.where(first < 0.5, "b", "tie"))
    labels = pd.DataFrame({"item_id": first.index, "label": side})
    m = decided.merge(labels, on="item_id", how="inner")
    sided = m["label"] != "tie"
    kept = sided & (m["decision"] != PERSON)
    agree = kept & (m["decision"] == m["label"])
    return int(sided.sum()), int(kept.sum()), int(agree.sum()), int((~sided).sum())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=400_000, help="labelled items")
    parser.add_argument(
        "--repeat", type=int, default=5, help="rounds of each in turns; the best kept"
    )
    parser.add_argument(
        "--plant-quadratic",
        action="store_true",
        help="time ours with a planted quadratic step in the growth (must exit 1)",
    )
    args = parser.parse_args()
    one_thread()  # CPU seconds are the work of one thread (benchmarks/_timing.py)
    targets = Targets()
    decided, pairs = tables(args.items)
    print(f"== certify apply's labelled count: {len(pairs):,} label rows, "
          f"{len(decided):,} decided items")  # fmt: skip
    decided2, pairs2 = tables(2 * args.items, seed=1)
    grown = planted if args.plant_quadratic else ours
    (our_s, old_s, base_s), (got, old, base) = in_turns(
        [
            lambda: ours(decided, pairs),
            lambda: old_lookup(decided, pairs),
            lambda: pandas_merge(decided, pairs),
        ],
        repeat=args.repeat,
    )
    growth_rounds = []  # each round: observed at N, reference at N, at 2N, at 2N
    for k in range(args.repeat):
        growth_rounds.append(
            in_turns(
                [
                    lambda: grown(decided, pairs),
                    lambda: reference(decided, pairs),
                    lambda: grown(decided2, pairs2),
                    lambda: reference(decided2, pairs2),
                ],
                repeat=1,
                warm_up=k == 0,
            )[0]
        )
    print("CPU seconds of this process, the best of each over "
          f"{args.repeat} rounds taken in turns:")  # fmt: skip
    print(f"{our_s:8.3f} s  recuse observed (hash lookup)")
    print(f"{old_s:8.3f} s  old lookup (str-dtype Index.isin)")
    print(f"{base_s:8.3f} s  pandas baseline (groupby first, inner merge)")
    print(f"counts (labelled, kept, agree, ties left out): ours {got}, old {old}, pandas {base}")
    targets.at_least("the same counts as the old lookup and pandas (1 = yes)",
                     float(got == old == base), 1.0, scaled=False)  # fmt: skip
    targets.at_least("old lookup / ours seconds", old_s / our_s, 3.0, "x", scaled=True)
    targets.at_least("pandas merge / ours seconds", base_s / our_s, 0.6, "x", scaled=True)
    what = "observed with a planted quadratic step" if args.plant_quadratic else "observed"
    times = np.array(growth_rounds)
    beyond = (times[:, 2] / times[:, 0]) / (times[:, 3] / times[:, 1])
    grown_s, ref_s, twice_s, ref_twice_s = times.min(axis=0)
    print(f"growth at {2 * args.items:,} items against {args.items:,} (2x the items; "
          "linear work reads about 2x, more where the larger table leaves a cache), "
          f"CPU seconds, the best of {args.repeat} rounds:")  # fmt: skip
    print(f"{grown_s:8.3f} s -> {twice_s:8.3f} s  {what}: {twice_s / grown_s:.2f}x")
    print(f"{ref_s:8.3f} s -> {ref_twice_s:8.3f} s  linear reference (the same ids hashed, "
          f"the same tables): {ref_twice_s / ref_s:.2f}x")  # fmt: skip
    print("growth beyond linear, each round's (observed's growth / the reference's; "
          "1 = linear, a quadratic part of share s at N about (g (1 - s) + 4 s) / g, "
          "g the reference's growth): "
          + ", ".join(f"{x:.2f}" for x in beyond))  # fmt: skip
    targets.at_most(
        f"growth beyond linear of {what} at doubled items, median of {args.repeat} rounds",
        float(np.median(beyond)),
        1.3,
        "x",
        scaled=True,
    )
    targets.finish()
    return 0


if __name__ == "__main__":
    sys.exit(main())
