"""AlpacaEval 1 and 2 annotations: a GPT-4-family judge compares each model with a baseline.

Dataset ``alpaca-eval`` -> a ``pairs`` table, one row per annotation in every
``results/<model>/<annotator>/annotations.json`` (23,338 rows in the 29 upstream files).

=================  ==============================================================
``model_a``        ``generator_1``, the baseline (text_davinci_003 for AlpacaEval 1,
                   gpt4_1106_preview for AlpacaEval 2), canonical id
``model_b``        ``generator_2`` with a ``_concise`` / ``_verbose`` suffix removed,
                   canonical id
``category``       ``"concise"`` / ``"verbose"`` for those length-prompted variants,
                   else ``"default"``
``judge``          ``annotator`` through the roster (``alpaca_eval_gpt4`` -> gpt-4,
                   ``weighted_alpaca_eval_gpt4_turbo``, ``alpaca_eval_gpt4_turbo_fn``,
                   ``alpaca_eval_cot_gpt4_turbo_fn`` -> gpt-4-1106-preview, their
                   configs' ``model_name``)
``p_a``            ``2 - preference``: the judge's probability that the baseline
                   (output_1) is better. ``preference`` is 1 (baseline wins) .. 2
                   (model wins), continuous in AlpacaEval 2; 0 and 1.5 mean a draw
                   (p_a = 0.5); null means the annotation failed: p_a NaN on a row
                   that has a judge (10 rows). No ``status_*`` columns: those are per
                   shown order, which is unknown here
``p_a_first``,     NaN: upstream randomised the order shown to the judge and did not
``p_a_second``     store it, so ``p_a`` is a single verdict of unknown order
``human``          NaN (no human labels in these files)
``item_id``        ``alpaca-eval/<raw generator_2>/<annotator>/<element number>``
``prompt_id``      ``ae-`` + 12 hex digits of the BLAKE2b hash of the instruction text
                   (stable across models, annotators and files; 805 prompts)
``len_a/len_b``    word counts (whitespace-separated tokens) of output_1 / output_2
``source``         ``"alpaca-eval"``; ``task`` = the instruction's ``dataset``
                   (helpful_base, koala, oasst, selfinstruct, vicuna)
=================  ==============================================================

Where a folder holds two annotator configs that the roster maps to one judge for one
model and baseline (``weighted_alpaca_eval_gpt4_turbo`` beside ``alpaca_eval_gpt4_turbo_fn``:
two prompt templates of gpt-4-1106-preview), one config's rows are kept, as AlpacaEval
reports one number per config: :func:`one_annotator_per_judge`. Where the models of one judge
are judged through different configs (one each), a note names each config's models.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd

from recuse.data.model_names import UnknownModels, canonicalize_models
from recuse.data.registry import Dataset, register
from recuse.errors import InputError
from recuse.files import check_text, read_json, require_keys, word_count
from recuse.roster import Roster
from recuse.tables import as_number, check_scalars, validate_pairs

NAME = "alpaca-eval"
FOLDER = "alpaca_eval"
KEYS = (
    "instruction",
    "output_1",
    "generator_1",
    "output_2",
    "generator_2",
    "annotator",
    "preference",
)
SUFFIXES = {"_concise": "concise", "_verbose": "verbose"}
DRAWS = (0.0, 1.5)


def prompt_id(instruction: str) -> str:
    """Stable id of an AlpacaEval instruction: ``ae-`` + 12 hex digits of its BLAKE2b hash."""
    return "ae-" + hashlib.blake2b(instruction.encode("utf-8"), digest_size=6).hexdigest()


def _prompt_ids(instructions: pd.Series) -> pd.Series:
    codes, uniques = pd.factorize(instructions)
    ids = np.array([prompt_id(str(u)) for u in uniques], dtype=object)
    return pd.Series(ids[codes], index=instructions.index, dtype=object)


def split_variant(generator: str) -> tuple[str, str]:
    """``"claude-2.1_concise"`` -> ``("claude-2.1", "concise")``; no suffix -> "default"."""
    for suffix, category in SUFFIXES.items():
        if generator.endswith(suffix):
            return generator[: -len(suffix)], category
    return generator, "default"


def preference_to_p_a(preference: pd.Series) -> pd.Series:
    """Map AlpacaEval ``preference`` to P(baseline better): ``2 - preference``.

    0 and 1.5 are draws (0.5); null stays NaN (failed annotation). Other values
    outside [1, 2] are not AlpacaEval preferences and raise in the caller.
    """
    pref = _numbers(preference)
    p_a = 2.0 - pref
    return p_a.mask(pref.isin(DRAWS), 0.5)


def _numbers(values: pd.Series) -> pd.Series:
    """Each cell as a float: numbers and texts written as numbers; NaN for anything
    else (a boolean, a word, a list); an integer too large for a float is ``inf``
    (``pd.to_numeric`` raised an OverflowError on 10**19 and read ``true`` as 1)."""

    def one(v: object) -> float:
        x = as_number(v)
        return np.nan if x is None else x

    return values.map(one).astype(float)


def read_annotations(
    path: Path, roster: Roster, *, unknown_models: UnknownModels = "keep"
) -> pd.DataFrame:
    """One ``annotations.json`` file as (unvalidated) ``pairs`` rows."""
    records = require_keys(read_json(path), KEYS, file=path)
    if not records:
        raise InputError("no annotations in the file", file=path, fix="fetch the dataset again")
    raw = pd.DataFrame.from_records(records, columns=[*KEYS, "dataset"])
    check_scalars(raw, (*KEYS, "dataset"), file=path)  # a list or object is no name
    pref = raw["preference"]
    numeric = _numbers(pref)
    bad = (numeric.isna() & pref.notna()) | ~(
        numeric.isna() | numeric.between(1.0, 2.0) | numeric.isin(DRAWS)
    )
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(
            f"preference {pref.tolist()[i]!r} is not an AlpacaEval preference",
            file=path,
            row=i + 1,
            column="preference",
            fix="use a number in [1, 2] (1 = output_1 better), 0 or 1.5 for a draw, "
            "or null for a failed annotation",
        )
    check_text(raw, ("instruction", "output_1", "output_2"), file=path)
    for col in ("generator_1", "generator_2", "annotator"):
        missing = raw[col].isna()
        if missing.any():
            raise InputError(
                f"{col} is missing",
                file=path,
                row=int(np.flatnonzero(missing.to_numpy())[0]) + 1,
                column=col,
            )
    # one annotation per instruction, model pair and annotator: a second would count the
    # pair twice in every win rate
    who = ["instruction", "generator_1", "generator_2", "annotator"]
    again = raw.duplicated(who)
    if again.any():
        i = int(np.flatnonzero(again.to_numpy())[0])
        first = int(np.flatnonzero((raw[who] == raw.loc[i, who]).all(axis=1).to_numpy())[0])
        raise InputError(
            f"the annotation of element {first + 1} again (same instruction, generator_1, "
            "generator_2 and annotator)",
            file=path,
            row=i + 1,
            column="instruction",
            fix="keep one annotation per instruction and model: remove the copy",
        )
    raw_gen = raw["generator_2"].astype(str)
    variants = raw_gen.map(split_variant)
    base = variants.str[0]
    category = variants.str[1]
    fname = str(path)
    p_a = preference_to_p_a(pref)
    element = pd.Series(np.arange(1, len(raw) + 1)).astype(str)
    out = pd.DataFrame(
        {
            "item_id": "alpaca-eval/"
            + raw_gen
            + "/"
            + raw["annotator"].astype(str)
            + "/"
            + element,
            "prompt_id": _prompt_ids(raw["instruction"]),
            "model_a": raw["generator_1"],
            "model_b": base,
            "human": np.nan,
            "judge": raw["annotator"],
            "p_a_first": np.nan,
            "p_a_second": np.nan,
            "p_a": p_a,
            "prompt": raw["instruction"],
            "response_a": raw["output_1"],
            "response_b": raw["output_2"],
            "source": NAME,
            "task": raw["dataset"],
            "category": category,
            "len_a": word_count(raw["output_1"]),
            "len_b": word_count(raw["output_2"]),
        }
    )
    # the file's own column names in an unknown-name error
    names = {"model_a": "generator_1", "model_b": "generator_2", "judge": "annotator"}
    out = canonicalize_models(
        out.rename(columns=names), tuple(names.values()), roster, file=fname,
        unknown_models=unknown_models,
    ).rename(columns={v: k for k, v in names.items()})  # fmt: skip
    return out


def read_annotation_file(
    path: str | Path, *, roster: Roster | None = None, unknown_models: UnknownModels = "keep"
) -> pd.DataFrame:
    """One ``annotations.json`` as AlpacaEval writes it (any name: ``recuse audit
    annotations.json``) as a validated ``pairs`` table, mapped as the module says.

    A ``baseline`` column names ``generator_1`` (AlpacaEval's baseline), so the
    length-controlled win rate knows it even for one model against the baseline.
    ``frame.attrs["notes"]`` says what the file cannot show: the order each pair was
    shown in is not stored, so position bias is not estimated from it; and, where the
    file holds two configs of one judge, which was left out
    (:func:`one_annotator_per_judge`).
    """
    path = Path(path).expanduser()
    rows = read_annotations(path, roster or Roster.builtin(), unknown_models=unknown_models)
    # a file holding two configs of one judge (files joined by hand) keeps one, as a folder
    rows, left_out = one_annotator_per_judge(rows, where=path.name)
    table = validate_pairs(rows, file=path)
    # AlpacaEval's baseline is generator_1 by construction: said so, since one model
    # against its baseline leaves the data no way to tell which side is fixed
    table["baseline"] = table["model_a"]
    judges = ", ".join(sorted(table["judge"].dropna().astype(str).unique()))
    table.attrs["notes"] = [
        f"{path.name}: AlpacaEval shows each pair to {judges} in one order (drawn per "
        "instruction) and does not store which, so each verdict is kept as p_a of unknown "
        "order and position bias is not estimated from this file.",
        *left_out,
    ]
    return table


#: the annotator configs of AlpacaEval's leaderboards (AlpacaEval 2's, then 1's): the one
#: kept where another config of the same judge also judged a model
LEADERBOARD_ANNOTATORS = ("weighted_alpaca_eval_gpt4_turbo", "alpaca_eval_gpt4")


def annotators(item_ids: pd.Series) -> pd.Series:
    """Each row's annotator config, from its ``item_id``
    (``alpaca-eval/<generator_2>/<annotator>/<element>``).

    >>> annotators(pd.Series(["alpaca-eval/org/m_concise/alpaca_eval_gpt4/7"])).tolist()
    ['alpaca_eval_gpt4']
    """
    return item_ids.astype(str).str.rsplit("/", n=2).str[1]


def _kept_annotator(names: list[str]) -> tuple[str, str]:
    """The annotator kept among ``names`` (two or more configs of one judge) and why."""
    for board in LEADERBOARD_ANNOTATORS:
        if board in names:
            return board, "the leaderboard's"
    return min(names), "the first by name"


def one_annotator_per_judge(table: pd.DataFrame, *, where: str) -> tuple[pd.DataFrame, list[str]]:
    """Per judge, baseline, model and variant (``judge``, ``model_a``, ``model_b``,
    ``category``), the rows of one annotator config: the leaderboard's
    (:data:`LEADERBOARD_ANNOTATORS`), else the first by name; and a note per annotator
    left out (``where``: the folder, named first), with how many annotations each
    config holds there, so a kept config that covers fewer instructions says so.

    AlpacaEval reports one number per annotator config, and a judge is a model plus a
    prompt template: the roster maps ``weighted_alpaca_eval_gpt4_turbo``,
    ``alpaca_eval_gpt4_turbo_fn`` and ``alpaca_eval_cot_gpt4_turbo_fn`` to one model, so
    two of them on one model's answers against one baseline, pooled, would count each
    instruction twice (one win rate over both templates, n = twice the instructions).
    Against two baselines they are two comparisons, and both are kept.
    """
    if table.empty:
        return table, []
    who = annotators(table["item_id"])
    key = [
        table["judge"].astype(str),
        table["model_a"].astype(str),
        table["model_b"].astype(str),
        table["category"],
    ]
    drop = pd.Series(False, index=table.index)
    # (judge, left out, kept, why kept) -> models, annotations left out and kept
    left: dict[tuple[str, str, str, str], list[str]] = {}
    counts: dict[tuple[str, str, str, str], list[int]] = {}
    for (judge, _baseline, model, variant), names in who.groupby(key, sort=True):
        configs = sorted(set(names))
        if len(configs) < 2:
            continue
        kept, why = _kept_annotator(configs)
        for other in configs:
            if other == kept:
                continue
            rows = names.index[names == other]
            drop[rows] = True
            k = (str(judge), other, kept, why)
            shown = str(model) if variant == "default" else f"{model} ({variant})"
            left.setdefault(k, []).append(shown)
            n = counts.setdefault(k, [0, 0])
            n[0] += len(rows)
            n[1] += int((names == kept).sum())
    notes = [
        _left_out_note(where, *k, counts[k][0], counts[k][1], models) for k, models in left.items()
    ]
    kept_rows = table.loc[~drop].reset_index(drop=True)
    return kept_rows, [*notes, *_templates_notes(kept_rows, where=where)]


def _templates_notes(table: pd.DataFrame, *, where: str) -> list[str]:
    """A note per judge and baseline whose rows (one config per model kept) still come
    from two or more annotator configs, naming each config's models: its numbers then
    compare models that the judge saw through different prompt templates."""
    who = annotators(table["item_id"])
    notes = []
    for (judge, baseline), names in who.groupby([table["judge"], table["model_a"]], sort=True):
        configs = sorted(set(names))
        if len(configs) < 2:
            continue
        models = table.loc[names.index, "model_b"].astype(str)
        each = "; ".join(
            f"{c}: {', '.join(sorted(set(models[names == c]))[:3])}"
            + (", ..." if models[names == c].nunique() > 3 else "")
            for c in configs
        )
        notes.append(
            f"{where}: judge {judge} (against {baseline}) judged the models through "
            f"{len(configs)} annotator configs, one per model ({each}): the configs are "
            "prompt templates of one model, so its win rates compare models judged "
            "with different templates; audit one config's files to compare like with like."
        )
    return notes


def _left_out_note(
    where: str, judge: str, other: str, kept: str, why: str, n: int, n_kept: int, models: list[str]
) -> str:
    them = "it" if len(models) == 1 else "them"
    fewer = f", though it holds fewer ({n_kept} to {n})" if n_kept < n else ""
    return (
        f"{where}: annotator {other}'s {n} annotation{'s' if n != 1 else ''} of "
        f"{', '.join(models[:5])}{', ...' if len(models) > 5 else ''} left out: annotator "
        f"{kept} also judged {them} as the same judge, {judge}, with another "
        "prompt template, and AlpacaEval reports one number per annotator config (pooled, "
        f"each instruction judged by both would count twice); kept {kept}'s {n_kept} "
        f"annotation{'s' if n_kept != 1 else ''}, {why}{fewer}."
    )


def annotation_files(folder: Path) -> list[Path]:
    """All ``results/<model>/<annotator>/annotations.json`` files, sorted."""
    return sorted((Path(folder) / "results").glob("*/*/annotations.json"))


def read_alpaca_eval(folder: Path, roster: Roster) -> pd.DataFrame:
    """Read every AlpacaEval annotation file under ``folder`` into one ``pairs`` table."""
    files = annotation_files(folder)
    if not files:
        raise InputError(
            "no results/<model>/<annotator>/annotations.json files",
            file=Path(folder) / "results",
            fix=f"run `recuse data fetch {NAME}`",
        )
    table = pd.concat([read_annotations(f, roster) for f in files], ignore_index=True)
    table, notes = one_annotator_per_judge(table, where=Path(folder).name)
    out = validate_pairs(table, file=folder)
    out.attrs["notes"] = [*out.attrs.get("notes", ()), *notes]
    return out


LEADERBOARD_2 = Path(
    "src/alpaca_eval/leaderboards/data_AlpacaEval_2/weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"
)
#: AlpacaEval 1's (GPT-4 judging against text_davinci_003); upstream gives it a
#: length-controlled column too
LEADERBOARD_1 = Path(
    "src/alpaca_eval/leaderboards/data_AlpacaEval/alpaca_eval_gpt4_leaderboard.csv"
)


def read_leaderboard(folder: Path, roster: Roster, path: Path = LEADERBOARD_2) -> pd.DataFrame:
    """Upstream's AlpacaEval 2 leaderboard (``path``: :data:`LEADERBOARD_1` for
    AlpacaEval 1's) as ``system, win_rate,
    length_controlled_winrate`` (in %), systems named as :func:`system_names` names
    ours (canonical id, `` (concise)``/`` (verbose)`` for length-prompted variants);
    rows whose model is not in the roster are left out."""
    file = Path(folder) / path
    if not file.is_file():
        raise InputError(
            "the AlpacaEval leaderboard is missing",
            file=file,
            fix=f"run `recuse data fetch {NAME}`",
        )
    try:
        board = pd.read_csv(file, index_col=0)
    except (ValueError, pd.errors.ParserError) as exc:
        said = " ".join(str(exc).split())  # pandas ends its message with a line break
        raise InputError(f"cannot read the leaderboard: {said}", file=file) from None
    for col in ("win_rate", "length_controlled_winrate"):
        if col not in board.columns:
            raise InputError(f"no {col} column", file=file, column=col)
    rows = []
    for name, r in board.iterrows():
        base, variant = split_variant(str(name))
        if base not in roster:
            continue
        system = roster.canonical(base) + ("" if variant == "default" else f" ({variant})")
        rows.append(
            {
                "system": system,
                "upstream_name": str(name),
                "win_rate": float(r["win_rate"]),
                "length_controlled_winrate": float(r["length_controlled_winrate"]),
            }
        )
    return pd.DataFrame(rows).drop_duplicates("system", keep=False)


register(
    Dataset(
        name=NAME,
        folder=FOLDER,
        table="pairs",
        summary="AlpacaEval 1/2: GPT-4 and GPT-4-turbo judge 805 instructions, each model "
        "against a fixed baseline, incl. concise/verbose variants (no human labels)",
        reader=read_alpaca_eval,
    )
)
