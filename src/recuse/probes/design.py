"""From a pairs table to the probe table the judge runner judges.

For every base pair (with its texts) one side is *treated*, by a seeded coin; the
probe table holds the original pair (``probe = "original"``), the placebo and one row
per requested probe, each an item of its own (``item_id = <base>#<probe>``) carrying
``base_item``, ``probe`` and ``treated``. The other answer is never edited.

:func:`build_recognition_table` makes the self-recognition rows instead: pairs of the
judge's own answer and another model's, asked "which did you write?" (``probe =
"self-recognition"``, ``treated`` = the side of the judge's own answer), each with its
original row (asked which is better) so both questions are paired.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import pandas as pd

from recuse.data.sample import spread_over_prompts
from recuse.errors import ConfigError, InputError
from recuse.metrics.bootstrap import check_seed
from recuse.probe_tables import ORIGINAL, RECOGNITION, is_probe_table
from recuse.probes.rewrite import REWRITES, Rewriter
from recuse.probes.transforms import PROBES, apply_probe

__all__ = [
    "ORIGINAL",
    "RECOGNITION",
    "build_probe_table",
    "build_recognition_table",
    "probe_bases",
]

# carried to every version of a pair (reference: the answer a judge template may show)
_KEEP = ("prompt_id", "model_a", "model_b", "human", "source", "task", "category", "reference")


def _with_texts(pairs: pd.DataFrame, need: Sequence[str], what: str) -> pd.DataFrame:
    """The pairs (one row per item) with every text of ``need`` present; how many were
    left out for a missing text is in ``attrs["missing_texts"]``. Raises
    :class:`InputError` on a probe table (edits would be edited again) or when no pair
    has its texts."""
    if is_probe_table(pairs):
        raise InputError(
            "this is already a probe table (columns base_item, probe, treated)",
            fix="build probes from the pairs it was made from, not from its edited versions",
        )
    missing = [c for c in need if c not in pairs.columns]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)}", fix=f"{what}: give {', '.join(need)}"
        )
    base = pairs.drop_duplicates("item_id").reset_index(drop=True)
    texts = [c for c in ("prompt", "response_a", "response_b") if c in need]
    ok = base[texts].map(lambda t: isinstance(t, str)).all(axis=1)
    if not ok.any():
        raise InputError(
            f"no pair has all of {', '.join(texts)} as text ({len(base)} pairs)",
            column=texts[int(np.argmin(base[texts].map(lambda t: isinstance(t, str)).sum()))],
            fix=f"{what}: give the texts (a dataset with texts, or a pairs file with "
            f"{', '.join(texts)} columns)",
        )
    out = base[ok].reset_index(drop=True)
    if "prompt_id" not in out.columns:
        out = out.assign(prompt_id=out["item_id"])
    out.attrs["missing_texts"] = int((~ok).sum())
    return out


def _check_sample(limit: int | None, seed: int) -> None:
    check_seed(seed)
    if limit is not None and (
        isinstance(limit, bool) or not isinstance(limit, int | np.integer) or limit < 1
    ):
        raise ConfigError(f"limit must be a whole number, 1 or more (None = all); got {limit!r}")


def probe_bases(pairs: pd.DataFrame, *, limit: int | None = None, seed: int = 0) -> pd.DataFrame:
    """The base pairs :func:`build_probe_table` edits, each with its ``treated`` side:
    the pairs with all three texts (``attrs["missing_texts"]`` counts the others), at
    most ``limit`` of them, a seeded sample spread over prompts. Raises on bad options
    or when no pair has its texts, before any model is asked anything."""
    _check_sample(limit, seed)
    base = _with_texts(
        pairs, ["item_id", "prompt", "response_a", "response_b"], "probes edit the answers"
    )
    missing = base.attrs["missing_texts"]
    if limit is not None and limit < len(base):
        base = spread_over_prompts(base, limit=limit, seed=seed).reset_index(drop=True)
    rng = np.random.default_rng(seed)
    base = base.assign(treated=np.where(rng.random(len(base)) < 0.5, "a", "b"))
    base.attrs["missing_texts"] = missing
    return base


def _row(
    r: Mapping[Hashable, object], name: str, treated: str, texts: tuple[str, str, str]
) -> dict[str, object]:
    return {
        "item_id": f"{r['item_id']}#{name}",
        "prompt": texts[0],
        "response_a": texts[1],
        "response_b": texts[2],
        "base_item": str(r["item_id"]),
        "probe": name,
        "treated": treated,
        **{str(c): r[c] for c in _KEEP if c in r},
    }


def build_recognition_table(
    pairs: pd.DataFrame, *, judge: str, limit: int | None = None, seed: int = 0
) -> pd.DataFrame:
    """Self-recognition rows for ``judge``: every pair whose one answer is by model
    ``judge`` and the other by another named model, as an original row and a
    ``self-recognition`` row (``treated`` = the side of the judge's own answer).

    ``limit``: at most this many pairs, a seeded sample spread over prompts. Raises
    :class:`InputError` when no pair holds the judge's own answer.
    """
    _check_sample(limit, seed)
    base = _with_texts(
        pairs, ["item_id", "prompt", "response_a", "response_b", "model_a", "model_b"],
        "self-recognition pairs the judge's own answer with another model's",
    )  # fmt: skip
    a, b = base["model_a"].astype(object), base["model_b"].astype(object)
    own_a = (a == judge) & b.notna() & (b != judge)
    own_b = (b == judge) & a.notna() & (a != judge)
    base = base.assign(_side=np.where(own_a, "a", np.where(own_b, "b", "")))
    base = base[base["_side"] != ""].reset_index(drop=True)
    if base.empty:
        models = sorted({str(m) for m in pd.concat([a, b]).dropna()})
        raise InputError(
            f"no pair holds an answer by {judge!r} against another model's "
            f"(models in the data: {', '.join(models[:10]) or 'none'})",
            column="model_a",
            fix="self-recognition needs the judge's own answers: name its model in "
            "model_a/model_b exactly as the judge id (recuse probe --judge-id NAME)",
        )
    if limit is not None and limit < len(base):
        base = spread_over_prompts(base, limit=limit, seed=seed).reset_index(drop=True)
    rows = []
    for r in base.to_dict("records"):
        texts = (str(r["prompt"]), str(r["response_a"]), str(r["response_b"]))
        rows += [
            _row(r, ORIGINAL, str(r["_side"]), texts),
            _row(r, RECOGNITION, str(r["_side"]), texts),
        ]
    return pd.DataFrame(rows)


def build_probe_table(
    pairs: pd.DataFrame,
    *,
    probes: Sequence[str],
    author: str = "",
    limit: int | None = None,
    seed: int = 0,
    rewriter: Rewriter | None = None,
) -> pd.DataFrame:
    """The probe table for ``probes`` (the placebo is always added).

    ``author``: the judge's model, named by ``attribution-self``. ``limit``: at most
    this many base pairs, a seeded sample spread over prompts (one per prompt first).
    ``rewriter`` writes the ``concise`` and ``verbose`` rewrites of each treated answer
    (:mod:`recuse.probes.rewrite`); a base pair whose rewrite is unusable has no row for
    that probe, and ``table.attrs["unusable_rewrites"]`` counts them per probe.
    """
    if isinstance(probes, str):
        raise ConfigError(f"probes is a list of names, e.g. [{probes!r}]; got the text {probes!r}")
    known = {**PROBES, **REWRITES}
    unknown = [p for p in probes if p not in known]
    if unknown:
        raise ConfigError(f"unknown probe {unknown[0]!r} — choose from {', '.join(known)}")
    chosen = list(dict.fromkeys(p for p in probes if p != "placebo"))
    if not chosen:
        raise ConfigError(
            f"no probe chosen (the placebo comes with any) — choose from {', '.join(known)}"
        )
    styles = [p for p in chosen if p in REWRITES]
    if styles and rewriter is None:
        raise ConfigError(
            f"the {' and '.join(styles)} probe(s) need a model to write the rewrites — "
            "give a rewriter (recuse probe --rewriter MODEL)"
        )
    base = probe_bases(pairs, limit=limit, seed=seed)
    treated = base["treated"].to_numpy()
    records = base.to_dict("records")
    sources = [
        (str(r["prompt"]), str(r["response_a"] if t == "a" else r["response_b"]))
        for r, t in zip(records, treated, strict=True)
    ]
    rewrites = {style: rewriter(sources, style) for style in styles} if rewriter else {}
    names = [ORIGINAL, "placebo", *chosen]
    rows = []
    for k, (r, t) in enumerate(zip(records, treated, strict=True)):
        for name in names:
            question, a, b = r["prompt"], r["response_a"], r["response_b"]
            if name in REWRITES:
                text = rewrites[name][k]
                if text is None:
                    continue
                a, b = (text, b) if t == "a" else (a, text)
            elif name != ORIGINAL:
                if t == "a":
                    question, a = apply_probe(question, a, name, author=author)
                else:
                    question, b = apply_probe(question, b, name, author=author)
            rows.append(_row(r, name, str(t), (question, a, b)))
    table = pd.DataFrame(rows)
    table.attrs["unusable_rewrites"] = {s: sum(x is None for x in rewrites[s]) for s in styles}
    table.attrs["missing_texts"] = base.attrs["missing_texts"]
    return table
