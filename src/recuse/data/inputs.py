"""One resolver of "dataset name, file or folder" for every command: what a command is
given becomes a typed table and where it came from (:class:`Source`, kept in the
report's provenance).

:func:`load_input` reads evidence (a ``pairs`` or ``ratings`` table) from a registered
dataset's name, a plain table file (:func:`recuse.data.plain_tables.read_table`) or a
file or folder written by another tool (:mod:`recuse.data.importers`);
:func:`load_responses` reads the responses a Likert judge rates. Both find what they are
given the same way (:func:`locate`), with the same errors.
"""

from __future__ import annotations

import difflib
import errno
import math
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from recuse.cells import one_text
from recuse.data import registry
from recuse.data.columns import ColumnMapping
from recuse.data.model_names import UnknownModels
from recuse.data.record_lines import rows_located
from recuse.data.value_maps import ValueReading
from recuse.errors import ConfigError, InputError, RecuseError
from recuse.files import ABSENT_ERRNOS, unreadable_path
from recuse.numbers import share_percent
from recuse.reference import LABEL_NAMES, REFERENCE_NAMES, ReferenceKind
from recuse.roster import Roster
from recuse.tables import (
    SwappedFrame,
    TableKind,
    caller_option,
    note_missing_texts,
    read_missing_texts,
    shown,
    takes_mapping,
)

if TYPE_CHECKING:
    from recuse.data.importers import Imported, ImportFormat, References


@dataclass(frozen=True)
class Source:
    """One input: a named dataset or a file, what was read and from where."""

    name: str
    table: str  # "pairs" or "ratings"
    rows: int
    location: str = ""
    files: tuple[str, ...] = ()
    upstream: str = ""
    judges: tuple[str, ...] = ()
    label: str = ""  # what its human/reference label is; "" = not known (a user's file)
    #: the kind of that label, which the report's words name (a user's file: human)
    reference: ReferenceKind = "human"
    format: str = ""  # a foreign format it was imported from (data/importers.py), else ""
    notes: tuple[str, ...] = ()  # what its importer tells the user (e.g. self-grading)
    #: (judge, name, format, sha256) of the judge prompt each judge's verdicts were made
    #: with, where the table says (a store's export: :func:`judge_prompts`)
    judge_prompts: tuple[tuple[str, str, str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "table": self.table,
            "rows": self.rows,
            "location": self.location,
            "files": list(self.files),
            "upstream": self.upstream,
            "judges": list(self.judges),
            "label": self.label,
            "reference": REFERENCE_NAMES[self.reference],
            "format": self.format,
            "notes": list(self.notes),
            "judge_prompts": [
                {"judge": j, "name": n, "format": f, "sha256": h}
                for j, n, f, h in self.judge_prompts
            ],
        }


#: the columns a store's export names each verdict's judge prompt in
#: (:data:`recuse.judging.store.PROMPT_COLUMNS`)
PROMPT_COLUMNS = ("judge_prompt", "judge_prompt_format", "judge_prompt_sha256")


def judge_prompts(frame: pd.DataFrame) -> tuple[tuple[str, str, str, str], ...]:
    """``(judge, name, format, sha256)`` of every distinct judge prompt in ``frame``'s
    ``judge_prompt*`` columns (written by ``recuse judge export``), by judge; a judge
    whose rows name none is left out."""
    if "judge" not in frame.columns or PROMPT_COLUMNS[0] not in frame.columns:
        return ()
    cols = ["judge", *(c for c in PROMPT_COLUMNS if c in frame.columns)]
    rows = frame[cols].dropna(subset=["judge", PROMPT_COLUMNS[0]]).drop_duplicates()

    def text(v: object) -> str:
        return "" if v is None or (isinstance(v, float) and v != v) else str(v)

    found = {
        (text(r["judge"]), text(r.get(PROMPT_COLUMNS[0])), text(r.get(PROMPT_COLUMNS[1])),
         text(r.get(PROMPT_COLUMNS[2])))
        for r in rows.to_dict("records")
    }  # fmt: skip
    return tuple(sorted(found))


@dataclass(frozen=True)
class Input:
    """One evidence table and where it came from."""

    name: str
    table: TableKind
    frame: pd.DataFrame
    source: Source


PEEK_CHARS = 1 << 20  # the first line of a file read to guess its table kind


def _first_line(path: Path) -> str | None:
    """The first non-blank line (at most PEEK_CHARS characters; None if longer)."""
    import gzip

    opener: Any = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", newline="") as fh:
        for _ in range(100):
            line = fh.readline(PEEK_CHARS)
            if not line:
                return None
            if len(line) >= PEEK_CHARS and not line.endswith("\n"):
                return None
            if line.strip():
                return line.lstrip("\ufeff")
    return None


def _peek_columns(path: Path) -> set[str] | None:
    """Column names of a data file from its first line or schema, without reading it
    all and at bounded cost (None if unknown: the reader then gives its precise error)."""
    import csv
    import json

    name = path.name.lower()
    try:
        if name.endswith((".csv", ".csv.gz", ".tsv", ".tab", ".tsv.gz")):
            sep = "\t" if ".tsv" in name or name.endswith(".tab") else ","
            line = _first_line(path)
            return set(next(csv.reader([line], delimiter=sep))) if line else None
        if name.endswith((".jsonl", ".ndjson", ".jsonl.gz")):
            line = _first_line(path)
            obj = json.loads(line) if line else None
            return set(obj) if isinstance(obj, dict) else None
        if name.endswith((".parquet", ".pq")):
            import pyarrow.parquet as pq

            return set(pq.read_schema(path).names)
    except Exception:  # unreadable: let the reader give its precise error
        return None
    return None


def _guess_table(path: Path) -> TableKind:
    cols = _peek_columns(path)
    if cols is not None and "rating" in cols and "p_a" not in cols:
        return "ratings"
    return "pairs"


def _import(
    path: Path,
    fmt: ImportFormat,
    table: TableKind | None,
    mapping: ColumnMapping | None,
    roster: Roster,
    unknown_models: UnknownModels,
    references: References | None = None,
) -> Imported:
    """A file written by another tool (its format fixes the table and the columns)."""
    from recuse.data.importers import FORMATS, read_import

    if mapping:
        raise ConfigError(
            f"a column mapping ({caller_option('--map', 'mapping=')}) does not apply to a "
            f"{fmt} file: its columns are fixed"
        )
    if fmt in FORMATS and table is not None and table != FORMATS[fmt].table:
        raise InputError(
            f"a {fmt} file gives a {FORMATS[fmt].table} table, not {table}",
            file=path,
            fix=f"drop --table or use --table {FORMATS[fmt].table}",
        )
    return read_import(
        path, fmt, roster=roster, unknown_models=unknown_models, references=references
    )


def _plain_references(
    frame: pd.DataFrame,
    kind: TableKind,
    path: Path,
    roster: Roster,
    references: References | None,
) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """A plain table file with ``references`` applied (a judge as reference: ratings)."""
    if not references:
        return frame, ()
    if references.scorer is not None:
        raise ConfigError(
            "--reference-scorer names a scorer of an Inspect log; this file is not one"
        )
    if kind != "ratings":
        raise ConfigError("--reference-judge applies to ratings, and this file is read as pairs")
    from recuse.data.reference_judge import reference_from_judge

    assert references.judge is not None
    out = reference_from_judge(frame, references.judge, roster=roster, file=path)
    return out, tuple(str(n) for n in out.attrs.get("notes", ()))


#: the column naming each row's dataset, by table (its values: registered dataset names)
ROW_DATASET: dict[str, str] = {"pairs": "source", "ratings": "dataset"}
#: the column of the reference label, by table
LABEL_COLUMN: dict[str, str] = {"pairs": "human", "ratings": "reference"}


#: how many standard errors apart the two orders' balanced agreements, on opposite sides
#: of chance, must lie for :func:`orders_at_odds` to speak (a note, so a sure sign only:
#: in 6,000 simulated judges read in the right frame, of any skill, position preference,
#: tie rate and label balance, it spoke for 2)
AT_ODDS_SE = 3.5
#: the fewest labelled pairs of each label (a better, b better) it reads a judge from
AT_ODDS_MIN = 10


def balanced_agreement(p: np.ndarray, human: np.ndarray) -> tuple[float, float]:
    """The share of the win a verdict gives the human-preferred answer, balanced over the
    two labels, and its standard error:

        BA = ½ · mean(p | human = a) + ½ · mean(1 − p | human = b),
        SE = ½ · √(s²_a / n_a + s²_b / n_b)

    (``p`` = P(a better) of each verdict, ``human`` 1 or 0; s² the sample variance of
    each label's values with a 0 and a 1 added, so that a label whose verdicts all agree
    has no standard error of 0). A judge that knows nothing reads 0.5 whatever it
    prefers by position; one better than chance above 0.5 in either order. NaN where a
    label has fewer than :data:`AT_ODDS_MIN` pairs.

    >>> p, h = np.array([1, 1, 0, 0.5] * 5), np.array([1, 1, 1, 0] * 5)
    >>> ba, se = balanced_agreement(p, h)  # a: 10 of 15 agree, b: 5 halves of 5 pairs
    >>> ba, round(se, 4)
    (0.5833333333333333, nan)
    >>> ba, se = balanced_agreement(np.tile(p, 3), np.tile(h, 3))
    >>> round(ba, 4), round(se, 4)
    (0.5833, 0.0424)
    """
    a, b = p[human == 1], 1.0 - p[human == 0]
    mean = 0.5 * float(a.mean()) + 0.5 * float(b.mean()) if len(a) and len(b) else math.nan
    if min(len(a), len(b)) < AT_ODDS_MIN:
        return mean, math.nan
    var_a, var_b = (float(np.append(x, (0.0, 1.0)).var(ddof=1)) for x in (a, b))
    return mean, 0.5 * math.sqrt(var_a / len(a) + var_b / len(b))


def orders_at_odds(frame: pd.DataFrame, *, swapped_frame: SwappedFrame) -> tuple[str, ...]:
    """A note per judge whose verdicts in one order agree with the human labels and in
    the other disagree with them (:func:`balanced_agreement`, over the labelled pairs
    judged in both orders, on opposite sides of 0.5), the two at least
    :data:`AT_ODDS_SE` standard errors apart (SE = √(SE₁² + SE₂²), the two orders taken
    as independent: they are positively correlated, so this is the larger SE).

    The second order is the first with a and b swapped, and a and b are the file's
    names, not the judge's: whatever a judge's skill and position preference, the two
    orders' balanced agreements are the same in expectation. A column read in the wrong
    frame turns one over (BA into 1 − BA): ``p_a_second`` written as the judge saw it (A =
    the answer shown first, b) but read as A = a, or the reverse. Every estimate of
    that judge then pits its two orders against each other (the peer example read
    without ``--swapped-frame presented``: agreement 0.50, self-preference −0.008 and
    no detectable bias, for 0.61 and a material +0.20), with nothing said."""
    need = {"judge", "human", "p_a_first", "p_a_second"}
    if not need <= set(frame.columns):
        return ()
    both = frame[frame["judge"].notna() & frame["p_a_first"].notna()]
    both = both[both["p_a_second"].notna() & both["human"].isin((0.0, 1.0))]
    notes: list[str] = []
    for judge, rows in both.groupby("judge", sort=True):
        human = rows["human"].to_numpy(float)
        first, se1 = balanced_agreement(rows["p_a_first"].to_numpy(float), human)
        second, se2 = balanced_agreement(rows["p_a_second"].to_numpy(float), human)
        gap_se = math.hypot(se1, se2)
        if not gap_se > 0 or (first - 0.5) * (second - 0.5) >= 0:
            continue
        if abs(first - second) < AT_ODDS_SE * gap_se:
            continue
        turned = "original" if swapped_frame == "presented" else "presented"
        notes.append(
            f"judge {shown(judge)}: over its {len(rows):,} labelled pairs judged in both "
            f"orders, its verdicts with a shown first give the human-preferred answer "
            f"{share_percent(first, 0)} of the win and those with b shown first "
            f"{share_percent(second, 0)} (balanced over the two labels; 50% = chance, "
            "whatever the judge's position preference): one order agrees with the labels "
            f"and the other disagrees, as when p_a_second is read in the wrong frame (read "
            f"{'as the judge saw it' if swapped_frame == 'presented' else 'A = a'} here) — "
            f"if so, pass {caller_option(f'--swapped-frame {turned}', f'swapped_frame={turned!r}')}"
            "; read as it is, every estimate of this judge sets its two orders against each "
            "other"
        )
    return tuple(notes)


def labels_against_every_judge(frame: pd.DataFrame) -> tuple[str, ...]:
    """A note where every judge whose agreement with the human labels can be read
    (:func:`balanced_agreement` of its verdicts, ``p_a`` or the mean of its orders, over
    the pairs labelled a or b: at least :data:`AT_ODDS_MIN` of each) gives the
    human-preferred answer less of the win than chance by at least :data:`AT_ODDS_SE`
    standard errors: the labels most likely say the opposite of what they are read as
    (``human`` written as P(b better), or 1 = b), which turns every estimate that reads
    them, with nothing said (llmbar-mtbench with its labels turned: the four judges agree
    19–29% of the time, and each reads a material preference for longer answers, +0.35
    to +0.39, where the labels as written give −0.03 to +0.02). A set built to fool judges
    can put one weak judge there (LLMBar's Neighbor pairs: gpt-3.5-turbo 18%), so the
    note says so; every judge of a table, LLMBar's own included, does not.

    >>> t = pd.DataFrame({"judge": "j", "human": [1.0, 0.0] * 20, "p_a": [0.0, 1.0] * 20})
    >>> labels_against_every_judge(t)[0][:58]
    'every judge disagrees with the human labels more often tha'
    """
    if not {"judge", "human"} <= set(frame.columns):
        return ()
    verdict = frame["p_a"] if "p_a" in frame.columns else pd.Series(np.nan, index=frame.index)
    orders = [c for c in ("p_a_first", "p_a_second") if c in frame.columns]
    if orders:
        verdict = verdict.fillna(frame[orders].astype(float).mean(axis=1))
    human = frame["human"].astype(float)
    side = np.where(human > 0.5, 1.0, np.where(human < 0.5, 0.0, np.nan))
    rows = frame.assign(_v=verdict.astype(float), _h=side)
    rows = rows[rows["judge"].notna() & rows["_v"].notna() & rows["_h"].notna()]
    read = []
    for judge, mine in rows.groupby("judge", sort=True):
        ba, se = balanced_agreement(mine["_v"].to_numpy(float), mine["_h"].to_numpy(float))
        if not se > 0:
            continue
        if ba > 0.5 - AT_ODDS_SE * se:
            return ()
        read.append(f"{shown(judge)} {share_percent(ba, 0)} over {len(mine):,}")
    if not read:
        return ()
    turn = caller_option("--values human:0=1,1=0", "values={'human': {'0': 1, '1': 0}}")
    return (
        "every judge disagrees with the human labels more often than chance (the share of "
        f"the win given to the human-preferred answer, balanced over a and b: "
        f"{'; '.join(read)} pairs; 50% = chance): if human gives P(b better), or 1 = b, "
        f"turn it (1 − human; for labels written 0/1, {turn}), or the verdicts if they are "
        "the ones written so — read as it is, every estimate that uses the labels is "
        "turned; a set built to fool judges can read so for a weak judge, rarely for every "
        "judge",
    )


#: the share of the labelled pairs on one side (a, or b) from which
#: :func:`labels_on_one_side` speaks, with at least 2 × :data:`AT_ODDS_MIN` of them
ONE_SIDE = 0.9


def labels_on_one_side(frame: pd.DataFrame) -> tuple[str, ...]:
    """A note where at least :data:`ONE_SIDE` of the labelled pairs prefer the same slot
    (a, say: the preferred answer always written first, as HH-RLHF's chosen / rejected
    invite) and a judge has a verdict with a shown first only (``p_a_first``, no
    ``p_a_second``) on at least half of its labelled pairs: its preference for the answer
    shown first then reads as agreement with the labels, and every estimate against them
    carries it, with nothing said (llmbar-mtbench with the preferred answer put in a and
    the second order left out: gpt-3.5-turbo agreed 92% of the time, 70% with its labels
    on both sides). A judge's two orders averaged, or labels on both sides, keep the two
    apart. No dataset of /work/shared/data has its labels on one side.

    >>> t = pd.DataFrame({"judge": "j", "human": 1.0, "p_a_first": [1.0, 0.0] * 15,
    ...                   "p_a_second": None})
    >>> labels_on_one_side(t)[0][:46]
    'every labelled pair but 0 of 30 prefers a, the'
    """
    if not {"human", "judge", "p_a_first"} <= set(frame.columns):
        return ()
    second = frame["p_a_second"] if "p_a_second" in frame.columns else None
    items = frame.drop_duplicates("item_id") if "item_id" in frame.columns else frame
    human = items["human"].astype(float)
    a, b = int((human > 0.5 + 1e-9).sum()), int((human < 0.5 - 1e-9).sum())
    n = a + b
    if n < 2 * AT_ODDS_MIN or max(a, b) < ONE_SIDE * n:
        return ()
    labelled = frame["human"].notna() & frame["p_a_first"].notna()
    one = labelled & (second.isna() if second is not None else True)
    by_judge = frame["judge"]
    share = (
        one.astype(float).groupby(by_judge).sum() / labelled.astype(float).groupby(by_judge).sum()
    )
    judges = [str(j) for j, x in share.items() if x >= 0.5]
    if not judges:
        return ()
    side, other = ("a", b) if a >= b else ("b", a)
    shows = "first" if side == "a" else "second"
    named = ", ".join(shown(j) for j in judges[:3]) + (" …" if len(judges) > 3 else "")
    whose = "its" if len(judges) == 1 else "their"
    reads = "agreement with" if side == "a" else "disagreement with"
    return (
        f"every labelled pair but {other:,} of {n:,} prefers {side}, the answer p_a_first "
        f"shows {shows}, and {named} judged most of {whose} pairs in that order only (no "
        "p_a_second): a preference for the answer shown first reads as "
        f"{reads} the labels, in every estimate against them — judge the other order too, "
        "or put the preferred answer in a or b at random",
    )


def prompts_sharing_an_id(frame: pd.DataFrame) -> tuple[str, ...]:
    """A note where one ``prompt_id`` holds different prompt texts (compared as
    :func:`recuse.cells.one_text` reads them: line ends and spaces around aside): the
    bootstrap resamples each id as one prompt, so ids that collide (two sets' numbered
    questions in one file) make fewer, larger clusters and other intervals, with nothing
    said (llmbar-mtbench's 75 prompts under 10 ids: gpt-3.5-turbo's position bias read
    0.70 [0.69, 0.72] for [0.67, 0.74]). No dataset of /work/shared/data has such an id.

    >>> t = pd.DataFrame({"prompt_id": ["1", "1", "2"], "prompt": ["Hi", "Bye", "Hi "]})
    >>> prompts_sharing_an_id(t)[0][:52]
    "1 prompt id holds different prompt texts (first: '1'"
    """
    if not {"prompt_id", "prompt"} <= set(frame.columns):
        return ()
    rows = frame[frame["prompt"].notna()]
    texts = rows["prompt"].map(lambda t: one_text(str(t)))
    count = texts.groupby(rows["prompt_id"], sort=True).nunique()
    shared = count[count > 1]
    if shared.empty:
        return ()
    return (
        f"{len(shared):,} prompt id{'s hold' if len(shared) > 1 else ' holds'} different prompt "
        f"texts (first: {shown(shared.index[0])}, {int(shared.iloc[0]):,} texts): the "
        "bootstrap resamples each id as one prompt, so its intervals treat those prompts as "
        "one — if the ids of two sets collide, give each prompt its own id (or leave "
        "prompt_id out: the prompt texts then name the prompts); if they are one "
        "conversation's turns, one cluster is as meant",
    )


#: the share of comparisons whose texts and len_a / len_b name opposite answers as the
#: longer from which :func:`lengths_at_odds` speaks (lengths in characters or tokens
#: beside texts counted in words part on a few close pairs)
ODD_LENGTHS = 0.2


#: how many comparisons of a large table, drawn at random (seed 0, so every reading
#: says the same), :func:`lengths_at_odds` reads first: where under half of
#: :data:`ODD_LENGTHS` of them disagree it reads no more (a share of 0.2 reads under 0.1
#: in 2,000 with a chance below 1e-25), so that counting the words of every text is
#: left to the tables that may need the note (a plain AlpacaEval file, 46,670 texts:
#: 0.55 s of its 2 s reading)
LENGTHS_GLANCE = 2_000


def _lengths_disagree(items: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Masks of the comparisons whose texts' words and len_a / len_b name opposite
    answers as the longer, and of those where both name one (neither side missing)."""
    from recuse.files import words_in

    words = [
        items[c].map(lambda t: words_in(t) if isinstance(t, str) else math.nan).astype(float)
        for c in ("response_a", "response_b")
    ]
    by_text = np.sign((words[0] - words[1]).to_numpy(float))
    by_column = np.sign((items["len_a"].astype(float) - items["len_b"].astype(float)).to_numpy())
    both = ~np.isnan(by_text) & ~np.isnan(by_column)
    return both & (by_text * by_column < 0), both  # each says the other is the longer


def lengths_at_odds(frame: pd.DataFrame) -> tuple[str, ...]:
    """A note where a table holds both the texts and ``len_a`` / ``len_b`` and the two
    name opposite answers as the longer in at least :data:`ODD_LENGTHS` of its
    comparisons (an equal length on either side is no disagreement): the verbosity
    analysis counts the texts' words (:func:`recuse.files.words_in`) and the
    leaderboard's length term reads ``len_a`` / ``len_b``, so a file whose texts are cut
    short (or whose lengths are of other texts) has two analyses measure two lengths,
    the columns unread by the first, with nothing said.

    >>> t = pd.DataFrame({"response_a": ["a b c", "a"], "response_b": ["a", "a b"],
    ...                   "len_a": [3, 9], "len_b": [1, 2]})  # item 2: b by words, a by len
    >>> lengths_at_odds(t)[0][:60]
    'the texts and len_a / len_b disagree on which answer is long'
    """
    if not {"response_a", "response_b", "len_a", "len_b"} <= set(frame.columns):
        return ()
    items = frame.drop_duplicates("item_id") if "item_id" in frame.columns else frame
    if len(items) > 2 * LENGTHS_GLANCE:  # a glance at comparisons drawn at random first
        drawn = np.random.default_rng(0).choice(len(items), LENGTHS_GLANCE, replace=False)
        glance = items.iloc[np.sort(drawn)]
        odd, both = _lengths_disagree(glance)
        if odd.sum() < ODD_LENGTHS / 2 * both.sum():
            return ()
    odd, both = _lengths_disagree(items)
    if odd.sum() < ODD_LENGTHS * both.sum() or not odd.any():
        return ()
    first = items.index[odd][0]
    item = f" (first: item {shown(items.loc[first, 'item_id'])})" if "item_id" in items else ""
    return (
        f"the texts and len_a / len_b disagree on which answer is longer in "
        f"{int(odd.sum()):,} of {int(both.sum()):,} comparisons{item}: verbosity counts the "
        "texts' words and the leaderboard's length term reads len_a / len_b — if the texts "
        "are cut short or the lengths are of other texts, give one of the two",
    )


#: the share of a table's perplexities (``ppl_a`` and ``ppl_b``) below 1 from which
#: :func:`perplexities_below_one` speaks: no perplexity is below 1, but a simulated one may
#: be (a normal log-perplexity: 0.1% of them at the simulator's defaults)
BELOW_ONE = 0.05


def perplexities_below_one(frame: pd.DataFrame) -> tuple[str, ...]:
    """A note where at least :data:`BELOW_ONE` of the perplexities in ``ppl_a`` /
    ``ppl_b`` are below 1, which no perplexity is (``exp`` of a mean negative
    log-probability per token, each at least 0): such columns most likely hold
    log-perplexities (mean negative log-likelihoods), whose log the familiarity analysis
    takes again, so its slopes (per unit of log-perplexity difference) and its curves' bins
    read another scale, with nothing said (a planted familiarity bias of +1.5 read +1.7
    from perplexities and +2.2 from their logs). Log-perplexities all above 1 (a weak
    judge's, over 2.7 nats) cannot be told from perplexities and pass unsaid.

    >>> t = pd.DataFrame({"ppl_a": [0.7, 2.0], "ppl_b": [1.2, 3.0]})
    >>> perplexities_below_one(t)[0][:44]
    '1 of 4 perplexities (ppl_a, ppl_b) are below'
    """
    columns = [c for c in ("ppl_a", "ppl_b") if c in frame.columns]
    if not columns:
        return ()
    values = frame[columns].to_numpy(float).ravel()
    values = values[np.isfinite(values) & (values > 0)]
    below = int((values < 1).sum())
    if not below or below < BELOW_ONE * len(values):
        return ()
    return (
        f"{below:,} of {len(values):,} perplexities ({', '.join(columns)}) are below 1, which "
        "no perplexity is (exp of a mean negative log-probability per token): if the columns "
        "hold log-perplexities (mean negative log-likelihoods), give exp of them — the "
        "familiarity analysis takes their log, and read as perplexities its slopes and bins "
        "are on another scale",
    )


#: the share of the comparisons with ``len_a`` / ``len_b`` whose texts are missing from
#: which :func:`texts_partly_given` speaks
TEXTLESS = 0.01


def texts_partly_given(frame: pd.DataFrame) -> tuple[str, ...]:
    """A note where a table holds the texts and ``len_a`` / ``len_b``, and at least
    :data:`TEXTLESS` of the comparisons with both lengths lack a text: the verbosity
    analysis counts the texts' words (:func:`recuse.metrics.verbosity.response_lengths`)
    and left those comparisons out, with nothing said (llmbar-mtbench without the texts of
    its longest 30% of pairs: gpt-4 read +0.033 over 136 pairs, +0.015 over all 195),
    while the leaderboard's length term reads the columns of all.

    >>> t = pd.DataFrame({"item_id": ["i1", "i2"], "response_a": ["a b", None],
    ...                   "response_b": ["c", "d"], "len_a": [2, 30], "len_b": [1, 1]})
    >>> texts_partly_given(t)[0][:62]
    '1 of 2 comparisons with len_a / len_b have no response_a or re'
    """
    if not {"response_a", "response_b", "len_a", "len_b"} <= set(frame.columns):
        return ()
    items = frame.drop_duplicates("item_id") if "item_id" in frame.columns else frame
    sized = items["len_a"].notna() & items["len_b"].notna()
    textless = sized & (items["response_a"].isna() | items["response_b"].isna())
    n, k = int(sized.sum()), int(textless.sum())
    if not k or k < TEXTLESS * n:
        return ()
    first = items.index[textless.to_numpy()][0]
    item = f" (first: item {shown(items.loc[first, 'item_id'])})" if "item_id" in items else ""
    return (
        f"{k:,} of {n:,} comparisons with len_a / len_b have no response_a or response_b "
        f"text{item}: verbosity counts the texts' words and leaves them out (its n counts "
        "the others), while the leaderboard's length term reads len_a / len_b of all — give "
        "every text, or drop the response_a / response_b columns to read len_a / len_b alone",
    )


#: the least shift of a mean of a judge's verdicts (P(a better), 0 to 1) that its
#: one-order pairs may cause for :func:`orders_partly_judged` to speak
PARTLY_JUDGED_SHIFT = 0.01


def orders_partly_judged(frame: pd.DataFrame) -> tuple[str, ...]:
    """A note per judge that has verdicts in both orders for some pairs and in one
    order only for others (the other order's column empty: not judged, or failed):
    with ``--orders both`` each pair's verdict is the mean of its orders, which cancels
    the judge's position preference, while a one-order verdict keeps it, and every
    analysis but position pooled the two with nothing said (a judge picking the first
    answer 80% of the time read agreement 0.52 over 300 pairs, half of them one-order).

    Silent where the one-order pairs cannot move a mean of the judge's verdicts by
    :data:`PARTLY_JUDGED_SHIFT`: a one-order verdict is off its pair's two-order mean
    by |p_first − p_second| / 2, so over the judge's pairs the shift is at most

        share one-order × mean(|p_first − p_second|) / 2   (over its two-order pairs)

    read from at least :data:`AT_ODDS_MIN` two-order pairs (LLMBar's judges, 1 to 6
    unparsed verdicts in 880 pairs, read 0.0001 to 0.0006; JudgeBench's claude-3-haiku,
    13 of 270, 0.007).

    >>> t = pd.DataFrame({"judge": "j", "p_a_first": [1.0, 1.0, 0.0],
    ...                   "p_a_second": [0.0, None, None]})
    >>> orders_partly_judged(t)[0][:56]
    "judge 'j': 2 of 3 pairs have a verdict in one order only"
    """
    if not {"judge", "p_a_first", "p_a_second"} <= set(frame.columns):
        return ()
    given = frame[["p_a_first", "p_a_second"]].notna()
    both, one = given.all(axis=1), given.sum(axis=1) == 1
    notes = []
    for judge, rows in frame.groupby("judge", sort=True):
        n_one, n_both = int(one[rows.index].sum()), int(both[rows.index].sum())
        if not (n_one and n_both):
            continue
        whole = rows[both[rows.index]]
        apart = float((whole["p_a_first"] - whole["p_a_second"]).abs().mean()) / 2
        if n_both >= AT_ODDS_MIN and n_one / (n_one + n_both) * apart < PARTLY_JUDGED_SHIFT:
            continue
        notes.append(
            f"judge {shown(judge)}: {n_one:,} of {n_one + n_both:,} pairs have a verdict in "
            f"one order only, {n_both:,} in both: a two-order verdict is the mean of the "
            "orders, which cancels the judge's position preference, and a one-order verdict "
            "keeps it; every analysis but position pools the two — judge the missing orders "
            "(`recuse judge` resumes its store), or read one order for every pair "
            "(`recuse metrics pairs --orders first`)"
        )
    return tuple(notes)


def _swapped_back(group: np.ndarray, a: list[np.ndarray], b: list[np.ndarray]) -> np.ndarray:
    """Mask of the rows whose (group, a codes, b codes) is another row's (group, b codes,
    a codes): the same group with its two sides swapped."""
    forward = pd.MultiIndex.from_arrays([group, *a, *b])
    return np.asarray(forward.isin(pd.MultiIndex.from_arrays([group, *b, *a])))


def mirrored_rows(frame: pd.DataFrame) -> tuple[str, ...]:
    """A note where rows of one judge are one comparison in its two orders, written as
    two items: the same prompt and two texts, a and b swapped (with their models). Read
    as they are, each is a comparison of its own, so every n counts the comparison
    twice and no position bias is measured from them. Rows that give a verdict in both
    orders (``p_a_second`` too) are no such half: LLMBar's MT-Bench set holds 10 pairs
    of items with a and b swapped, each judged in both orders and labelled by its own
    annotator, and those are comparisons of their own.

    >>> t = pd.DataFrame({"item_id": ["1", "1r"], "prompt_id": "p", "judge": "j",
    ...                   "response_a": ["x", "y"], "response_b": ["y", "x"]})
    >>> mirrored_rows(t)[0][:49]
    "judge 'j': 2 rows are one comparison's two orders"
    """
    text = ["response_a", "response_b"]
    if not {"judge", "prompt_id", *text} <= set(frame.columns):
        return ()
    rows = frame[frame["judge"].notna() & frame[text].notna().all(axis=1)]
    if "p_a_second" in rows.columns:  # a row with both orders is a whole comparison
        rows = rows[rows["p_a_second"].isna()]
    rows = rows[rows["response_a"] != rows["response_b"]]
    if rows.empty:
        return ()
    # each text, model and (judge, prompt) as an integer code: one hash of each string
    where = pd.MultiIndex.from_arrays([rows["judge"].astype(str), rows["prompt_id"].astype(str)])
    group = where.factorize()[0]
    a_side: list[np.ndarray] = []
    b_side: list[np.ndarray] = []
    if {"model_a", "model_b"} <= set(rows.columns):
        # the models first (short names): a row whose models come back swapped in no row
        # of its judge and prompt is no half, and its texts need no hashing (AlpacaEval:
        # each system against one baseline, 46,670 texts)
        n = len(rows)
        models = pd.factorize(pd.concat([rows["model_a"], rows["model_b"]]).astype(str))[0]
        maybe = _swapped_back(group, [models[:n]], [models[n:]])
        rows, group = rows[maybe], group[maybe]
        a_side, b_side = [models[:n][maybe]], [models[n:][maybe]]
        if rows.empty:
            return ()
    n = len(rows)
    texts = pd.factorize(pd.concat([rows["response_a"], rows["response_b"]]).astype(str))[0]
    mirrored = _swapped_back(group, [texts[:n], *a_side], [texts[n:], *b_side])
    judges = rows["judge"].to_numpy()
    ids = rows["item_id"].to_numpy() if "item_id" in rows else None
    notes = []
    for judge in sorted({str(j) for j in judges[mirrored]}):
        hit = mirrored & (judges.astype(str) == judge)
        count = int(hit.sum())
        first = ids[np.flatnonzero(hit)[0]] if ids is not None else None
        notes.append(
            f"judge {shown(judge)}: {count:,} rows are one comparison's two orders written as "
            "two items (one prompt, its two texts with a and b swapped"
            + (f"; first: item {shown(first)}" if first is not None else "")
            + "): each is read as a comparison of its own, so its n counts them twice, and "
            "no position bias is measured from them — write each comparison as one row, "
            "the swapped order's verdict in p_a_second"
        )
    return tuple(notes)


def file_reference(frame: pd.DataFrame, table: str) -> tuple[ReferenceKind, str, tuple[str, ...]]:
    """The kind of a file's reference labels (:mod:`recuse.reference`), what its label is
    ("" = not known) and a note when it mixes kinds.

    Each labelled row takes the kind of the registered dataset its ``source`` (ratings:
    ``dataset``) column names (``judgebench``: correctness); a row naming none is read
    as human-labelled, as any file is. One kind: that kind (all rows of one dataset:
    its label). Both: ``"mixed"``, worded with the neutral "reference label" (a
    pooled estimate is one against the file's labels, whatever their kind: defined,
    but neither a human nor a correctness one), and a note counting the rows of each
    kind, so the reader can split the file.
    """
    column, labels = ROW_DATASET.get(table, ""), LABEL_COLUMN.get(table, "")
    if column not in frame.columns or labels not in frame.columns:
        return "human", "", ()
    known = registry.datasets()
    rows = frame.loc[frame[labels].notna(), column]
    names = rows.where(rows.notna(), "").astype(str).str.strip()
    kinds = names.str.lower().map(lambda n: known[n].reference if n in known else "human")
    found = set(kinds)
    if found <= {"human"}:
        return "human", "", _near_misses(names, known)
    if len(found) == 1:
        sets = set(names.str.lower())
        return kinds.iloc[0], known[sets.pop()].label if len(sets) == 1 else "", ()

    def said(kind: ReferenceKind) -> str:
        mine = sorted(set(names[kinds == kind]) - {""})
        where = ", ".join(mine[:3]) + (", …" if len(mine) > 3 else "")
        blank = "none named" if (names[kinds == kind] == "").any() else ""
        return f"{int((kinds == kind).sum()):,} of {LABEL_NAMES[kind]}s (source: " + (
            "; ".join(w for w in (where, blank) if w) + ")"
        )

    note = (
        f"the file's {len(kinds):,} labelled rows mix kinds of reference label: "
        + ", ".join(said(k) for k in sorted(found))
        + f". Its findings and reasons say {LABEL_NAMES['mixed']!r} for all of them; to have "
        "each kind named, give its rows as a file of their own."
    )
    return "mixed", "", (note, *_near_misses(names, known))


def _near_misses(names: pd.Series, known: dict[str, Any]) -> tuple[str, ...]:
    """A note for each source that names no dataset but nearly names one whose labels
    are not human (``judge_bench``): its rows are read as human-labelled, which a typo
    would make silently wrong."""
    other = [n for n, d in known.items() if d.reference != "human"]
    out = []
    for name, rows in names[names != ""].value_counts(sort=False).items():
        if str(name).lower() in known:
            continue
        close = difflib.get_close_matches(str(name).lower(), other, n=1, cutoff=0.8)
        if close:
            plural = "" if rows == 1 else "s"
            out.append(
                f"source {str(name)!r} ({rows:,} labelled row{plural}) names no dataset "
                f"recuse knows, so its labels are read as human ones; if it means {close[0]!r} "
                f"({LABEL_NAMES[known[close[0]].reference]}s), write it so"
            )
    return tuple(out)


def _upstream(name: str) -> tuple[str, tuple[str, ...]]:
    """Upstream repositories@commits and the files of a named dataset, when known."""
    try:
        from recuse.data import fetch

        files = fetch.files_for(name)
    except (ImportError, AttributeError, RecuseError):
        return "", ()
    repos: dict[str, None] = {}
    for f in files:
        parts = f.url.split("/")
        if "raw.githubusercontent.com" in f.url and len(parts) > 5:
            repos[f"github.com/{parts[3]}/{parts[4]}@{parts[5][:12]}"] = None
    return ", ".join(repos), tuple(f"{f.folder}/{f.path}" for f in files)


def locate(spec: str | Path) -> registry.Dataset | Path:
    """What a command was given: the registered dataset of that name, else an existing
    file or folder. A name that is both a dataset and a file is the dataset (write
    ``./name`` for the file; a :class:`~pathlib.Path` is always a path). An unknown name
    that cannot be a path raises :class:`~recuse.errors.DatasetNotFoundError` listing
    the known datasets; a missing path raises :class:`InputError`."""
    text = str(spec)
    known = registry.datasets()
    if not isinstance(spec, Path) and text in known:
        return known[text]
    path = Path(text).expanduser()
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        if exc.errno not in ABSENT_ERRNOS:
            raise unreadable_path(path, exc) from None  # too long, not searchable
        if path.is_symlink():  # a link to nothing, or a loop of links
            why = "a loop of links" if exc.errno == errno.ELOOP else "a missing file"
            raise InputError(
                f"a symbolic link to {why} ({exc.strerror or exc})",
                file=path,
                fix="point the link at the data file, or give the file's own path",
            ) from None
        if "/" not in text and "\\" not in text and "." not in path.name:
            registry.get(text)  # an unknown name: the registry lists the known ones
        raise InputError(
            "file not found", file=path, fix="check the path, or give a dataset name"
        ) from None
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        # a FIFO, socket or device: opening one may wait for a writer for ever
        raise InputError(
            "not a regular file (a pipe, socket or device)",
            file=path,
            fix="write the data to a file and give its path",
        )
    return path


def read_paths(spec: str | Path, data_dir: str | Path | None = None) -> list[Path]:
    """What reading ``spec`` opens, for an output that must not replace it
    (:func:`recuse.outputs.check_output`'s ``inputs``): a dataset's folder, or the file
    or folder given; none where it cannot be found (reading it says why)."""
    try:
        where = locate(spec)
        return [
            registry.folder(where.name, data_dir) if isinstance(where, registry.Dataset) else where
        ]
    except RecuseError:
        return []


def _dataset_takes_no_file_options(
    mapping: ColumnMapping | None,
    format: ImportFormat | None,
    references: References | None,
    reading: ValueReading | None,
) -> None:
    """Options that say how a file is written mean nothing for a named dataset."""
    if mapping:  # also a recuse.toml's [map], which the user may not have in mind
        raise ConfigError(
            caller_option(
                "a column mapping (--map, or [map] in recuse.toml) applies to files, not to "
                "named datasets: leave --map out; for recuse.toml's [map], give --config a "
                "file without it",
                "a column mapping (mapping=) applies to files and tables, not to named "
                "datasets: leave mapping= out",
            )
        )
    if format is not None:
        raise ConfigError("--format applies to files, not to named datasets")
    if references:
        raise ConfigError(
            "--reference-scorer and --reference-judge apply to files, not to named datasets"
        )
    if reading is not None and reading != ValueReading():
        raise ConfigError(
            "--values, --swapped-frame and --confidence (or their entries in recuse.toml) "
            "apply to files, not to named datasets"
        )


def _wrong_table(dataset: registry.Dataset, table: TableKind) -> InputError:
    others = sorted(n for n, d in registry.datasets().items() if d.table == table)
    return InputError(
        f"dataset {dataset.name!r} is a {dataset.table} table, but a {table} table is needed",
        fix=f"choose a {table} dataset: {', '.join(others)}",
    )


def load_inputs(spec: str | Path, **kwargs: Any) -> list[Input]:
    """:func:`load_input`, as a list: a folder holding FastChat's pair judgments and its
    single-answer grades (``model_judgment/`` as FastChat writes it) gives both, a
    ``pairs`` and a ``ratings`` input named ``<folder> (fastchat-pair)`` and
    ``<folder> (fastchat-single)``; anything else gives one input. ``references``
    (``--reference-judge``) are the ratings input's: the pairs input is read without
    them, where the folder read as a whole was refused for its pair files."""
    from dataclasses import replace

    from recuse.data import importers

    where = locate(spec)
    if kwargs.get("format") is None and isinstance(where, Path) and where.is_dir():
        formats = importers.folder_formats(where)
        if len(formats) > 1:
            out = []
            for fmt in formats:
                ratings = importers.FORMATS[fmt].table == "ratings"
                given = {**kwargs, "format": fmt}
                if not ratings:
                    given["references"] = None
                inp = load_input(spec, **given)
                name = f"{inp.name} ({fmt})"
                out.append(replace(inp, name=name, source=replace(inp.source, name=name)))
            return out
    return [load_input(spec, **kwargs)]


@takes_mapping
def load_input(
    spec: str | Path,
    *,
    table: TableKind | None = None,
    data_dir: str | Path | None = None,
    roster: Roster | None = None,
    mapping: ColumnMapping | None = None,
    unknown_models: UnknownModels = "keep",
    format: ImportFormat | None = None,
    reading: ValueReading | None = None,
    references: References | None = None,
) -> Input:
    """A named dataset or a file (``.csv``, ``.jsonl``, ``.parquet``, ...) as an audit input.

    ``table`` says whether a file holds ``pairs`` or ``ratings``; without it a file
    with a ``rating`` column (and no ``p_a``) is read as ratings, else as pairs.
    ``mapping`` renames a file's columns to schema columns; ``unknown_models="keep"``
    accepts model names the roster does not know (each its own family).
    ``format`` reads a file written by another tool (``fastchat-pair``, ``arena-hard``,
    ``inspect``; see :mod:`recuse.data.importers`); without it such a file is recognised
    by :func:`~recuse.data.importers.sniff`. ``reading`` says how a plain pairs file
    writes its verdicts (value maps, swapped frame, confidence). ``references`` names
    where a ratings file's reference comes from (an Inspect scorer, or a judge; see
    :class:`~recuse.data.importers.References`).
    """
    from recuse.data import importers
    from recuse.data.plain_tables import read_table

    roster = roster or Roster.builtin()
    fmt: ImportFormat | None = None
    notes: tuple[str, ...] = ()
    where = locate(spec)
    if isinstance(where, registry.Dataset):
        _dataset_takes_no_file_options(mapping, format, references, reading)
        if table is not None and table != where.table:
            raise _wrong_table(where, table)
        frame = registry.load(where.name, data_dir=data_dir, roster=roster)
        location = str(registry.folder(where.name, data_dir))
        upstream, files = _upstream(where.name)
        kind: TableKind = where.table
        name, label, reference = where.name, where.label, where.reference
    else:
        path = where
        fmt = format or (importers.sniff_folder(path) if path.is_dir() else importers.sniff(path))
        if fmt is None and path.is_dir():
            raise InputError(
                "the folder holds no file recuse recognises as another tool's",
                file=path,
                fix="give a file, or a folder of FastChat, Arena-Hard-Auto, AlpacaEval or "
                "Inspect files (or name the format with --format)",
            )
        if fmt is not None:
            imported = _import(path, fmt, table, mapping, roster, unknown_models, references)
            frame, kind, notes = imported.frame, imported.table, imported.notes
        else:
            kind = table or _guess_table(path)
            how = reading or ValueReading()
            frame = read_table(
                path,
                table=kind,
                roster=roster,
                mapping=mapping,
                unknown_models=unknown_models,
                values=how.values if kind == "pairs" else None,
                swapped_frame=how.swapped_frame if kind == "pairs" else "original",
                confidence=how.confidence if kind == "pairs" else None,
                confidence_of=how.confidence_of,
            )
            frame, notes = _plain_references(frame, kind, path, roster, references)
            if kind == "pairs":
                notes = (*notes, *orders_at_odds(frame, swapped_frame=how.swapped_frame))
                notes = (*notes, *lengths_at_odds(frame), *mirrored_rows(frame))
                notes = (*notes, *orders_partly_judged(frame), *perplexities_below_one(frame))
                notes = (*notes, *texts_partly_given(frame), *labels_against_every_judge(frame))
                notes = (*notes, *prompts_sharing_an_id(frame), *labels_on_one_side(frame))
        location, upstream, files, name = str(path.resolve()), "", (path.name,), path.name
        reference, label, mix = file_reference(frame, kind)
        notes = (*notes, *mix)
    judges: tuple[str, ...] = ()
    if "judge" in frame.columns:
        judges = tuple(sorted(str(j) for j in frame["judge"].dropna().unique()))
    source = Source(
        name=name,
        table=kind,
        rows=len(frame),
        location=location,
        files=files,
        upstream=upstream,
        judges=judges,
        label=label,
        reference=reference,
        format=fmt or "",
        notes=notes,
        judge_prompts=judge_prompts(frame),
    )
    return Input(name=name, table=kind, frame=frame, source=source)


#: the columns of a table of responses to rate (:func:`load_responses`)
RESPONSE_COLUMNS = ("prompt_id", "model", "prompt", "response")


@rows_located
def load_responses(spec: str | Path) -> pd.DataFrame:
    """The responses a Likert judge rates: a table file (any format
    :func:`~recuse.data.table_files.read_frame` reads) with the columns
    :data:`RESPONSE_COLUMNS` (an optional ``reference_<dimension>`` column is kept as
    that dimension's reference). ``prompt_id`` and ``model`` are never empty, ``prompt``
    and ``response`` are text, kept as written (an answer ``None`` is one word); in the
    other columns ``NA``, ``null``, ... are missing, with a note, as in a ratings table.
    Errors name the file, row and column. Found as
    :func:`load_input` finds its input (:func:`locate`): a dataset's name is refused,
    no dataset being a table of responses."""
    from recuse.data.table_files import read_frame
    from recuse.files import check_text

    where = locate(spec)
    needs = ", ".join(RESPONSE_COLUMNS)
    if isinstance(where, registry.Dataset):
        raise InputError(
            f"dataset {where.name!r} is a {where.table} table, and Likert judging rates responses",
            fix=f"give a file with columns {needs}",
        )
    df = read_frame(where)
    texts = ("prompt", "response")
    note_missing_texts(read_missing_texts(df, [c for c in df.columns if c not in texts]), where)
    missing = [c for c in RESPONSE_COLUMNS if c not in df.columns]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)} for Likert judging",
            file=where,
            fix=f"give a table with columns {needs}",
        )
    for col in ("prompt_id", "model"):
        empty = df[col].isna().to_numpy()
        if empty.any():
            raise InputError(
                "the cell is empty",
                file=where,
                row=int(empty.argmax()) + 1,
                column=col,
                fix=f"give every row its {col}",
            )
    check_text(df, ["prompt", "response"], file=where)
    twice = df.duplicated(["prompt_id", "model"]).to_numpy()
    if twice.any():  # one rating per (prompt, model, dimension): the export keeps one
        i = int(twice.argmax())
        raise InputError(
            f"duplicate responses row (prompt_id={shown(df['prompt_id'].iloc[i])}, "
            f"model={shown(df['model'].iloc[i])}) — each model answers each prompt once",
            file=where,
            row=i + 1,
            fix="remove the duplicate, or give the other answer its own prompt_id or model",
        )
    return df
