"""Write examples/data/peer_verdicts.csv: 200 pairwise verdicts in another tool's format.

The file is simulated (seeded; no text or verdict comes from any real dataset) to show
how `recuse` reads a peer's file with `--map` and `--values` alone (docs/your-data.md,
"A peer's file, audited as it is"). Its columns are named as such tools name them:
``id, prompt, response_a, response_b, model_a, model_b, human_winner, judge_model, judge_winner,
judge_winner_swapped, judge_confidence, category``. Verdicts are written ``A`` / ``B`` /
``tie``; ``judge_winner_swapped`` is the judge's verdict with b shown first, written as
the judge saw it (``A`` = the response shown first, b); a few human labels are
``neither`` (both bad).

The judge (gpt-4o) has planted biases: it favours its own answers, longer answers and
the answer shown first, beyond what the human labels say.

Run: ``python examples/make_peer_verdicts.py`` (rewrites the file byte for byte).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).parent / "data" / "peer_verdicts.csv"
MODELS = {  # undated names, as such files write them; quality on a logit scale
    "gpt-4o": 0.6,
    "claude-3-5-sonnet": 0.6,
    "llama-3-70b": 0.2,
    "gemini-1.5-pro": 0.4,
    "mistral-7b-instruct": -0.4,
}
WORDS = "the a answer is because first then we can see that this it so model data step".split()
CATEGORIES = ("writing", "reasoning", "coding", "math")


def _text(rng: np.random.Generator, n: int) -> str:
    return " ".join(rng.choice(WORDS, size=n)).capitalize() + "."


def _verdict(rng: np.random.Generator, logit: float, tie: float = 0.1) -> str:
    """'A' (first of the two better), 'B' or 'tie' from P(first better) = sigmoid(logit)."""
    if rng.random() < tie:
        return "tie"
    return "A" if rng.random() < 1 / (1 + np.exp(-logit)) else "B"


def make(n: int = 200, n_prompts: int = 80, seed: int = 15) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    names = list(MODELS)
    prompts = [f"Question {k + 1}: {_text(rng, 8)}" for k in range(n_prompts)]
    rows = []
    for i in range(n):
        a, b = rng.choice(names, size=2, replace=False)
        len_a, len_b = (int(x) for x in rng.integers(10, 90, size=2))
        truth = MODELS[a] - MODELS[b]  # what the humans see
        human = _verdict(rng, 2 * truth)
        if human == "tie" and rng.random() < 0.3:
            human = "neither"  # both bad: a label the built-in rules do not know
        own = 0.8 * ((a == "gpt-4o") - (b == "gpt-4o"))  # self-preference
        longer = 0.012 * (len_a - len_b)  # verbosity
        judge = 2 * truth + own + longer
        first = _verdict(rng, judge + 0.4)  # a shown first; +0.4 for the first position
        seen = _verdict(rng, -judge + 0.4)  # b shown first: "A" means b
        rows.append(
            {
                "id": f"peer-{i:03d}",
                "prompt": prompts[int(rng.integers(n_prompts))],
                "response_a": _text(rng, len_a),
                "response_b": _text(rng, len_b),
                "model_a": a,
                "model_b": b,
                "human_winner": human,
                "judge_model": "gpt-4o",
                "judge_winner": first,
                "judge_winner_swapped": seen,
                "judge_confidence": round(float(rng.uniform(0.55, 0.99)), 2),
                "category": CATEGORIES[int(rng.integers(len(CATEGORIES)))],
            }
        )
    return pd.DataFrame(rows)


if __name__ == "__main__":
    OUT.parent.mkdir(parents=True, exist_ok=True)
    make().to_csv(OUT, index=False, lineterminator="\n")
    print(f"wrote {OUT}")
