"""Notes on how a pairs file reads. Of a plain file (:func:`pairs_notes`): a judge's two
orders that agree and disagree with the labels (``p_a_second`` read in the wrong frame);
texts and ``len_a`` / ``len_b`` naming opposite answers as the longer; one comparison's
two orders written as two rows; a judge with some pairs judged in both orders and others
in one only; perplexities below 1 (log-perplexities); lengths given where texts are not;
labels every judge disagrees with (written turned); one prompt id over several prompt
texts; labels nearly all on one side beside one-order verdicts. Of any file (another
tool's too): answers in a script whose words are not counted (Thai, Lao, Myanmar,
Khmer; :func:`spaceless_words`).
"""

from __future__ import annotations

import math
import unicodedata

import numpy as np
import pandas as pd

from recuse.cells import one_text
from recuse.numbers import share_percent
from recuse.probe_edits import PROBES
from recuse.tables import SwappedFrame, caller_option, shown


def pairs_notes(frame: pd.DataFrame, *, swapped_frame: SwappedFrame) -> tuple[str, ...]:
    """Every note of this module on a plain pairs table, in a fixed order."""
    return (
        *orders_at_odds(frame, swapped_frame=swapped_frame),
        *lengths_at_odds(frame),
        *mirrored_rows(frame),
        *orders_partly_judged(frame),
        *perplexities_below_one(frame),
        *texts_partly_given(frame),
        *labels_against_every_judge(frame),
        *prompts_sharing_an_id(frame),
        *labels_on_one_side(frame),
    )


def spaceless_words(frame: pd.DataFrame) -> tuple[str, ...]:
    """A note where answers are written in a script without spaces between words that
    :func:`recuse.files.words_in` cannot segment (Thai, Lao, Myanmar, Khmer): their
    "words" are the runs between spaces, phrases or sentences there, so a longer answer
    can count fewer, and the verbosity analysis, which counts words, reads them so with
    nothing said. A large table is read whole only where :data:`LENGTHS_GLANCE` rows
    drawn at random hold such a text (a share of 0.5% is missed with a chance of 5e-5,
    and a smaller share moves a verbosity estimate little).

    >>> t = pd.DataFrame({"response_a": ["แมว กิน ปลา", "a b"], "response_b": ["x", "y"]})
    >>> spaceless_words(t)[0][:52]
    '1 of 2 rows have an answer in Thai, a script written'
    """
    from recuse.files import spaceless_script

    text = [c for c in ("response_a", "response_b") if c in frame.columns]
    if not text:
        return ()

    def scripts_of(rows: pd.DataFrame) -> list[list[str | None]]:
        return [
            [spaceless_script(t) if isinstance(t, str) else None for t in rows[c].to_numpy()]
            for c in text
        ]  # a plain loop: most texts are ASCII, one C scan each (hashing them took longer)

    if len(frame) > 2 * LENGTHS_GLANCE:  # a glance at rows drawn at random first
        drawn = np.random.default_rng(0).choice(len(frame), LENGTHS_GLANCE, replace=False)
        if not any(any(column) for column in scripts_of(frame.iloc[np.sort(drawn)])):
            return ()
    found = scripts_of(frame)
    if not any(any(column) for column in found):
        return ()
    scripts = pd.DataFrame(dict(zip(text, found, strict=True)))
    hit = scripts.notna().any(axis=1)
    names = sorted({str(n) for n in scripts.stack().dropna()})
    return (
        f"{int(hit.sum()):,} of {len(frame):,} rows have an answer in "
        f"{' and '.join(names)}, a script written without spaces between words: verbosity "
        "counts words as the runs between spaces, which there are phrases, so a longer "
        "answer can count fewer words — count characters instead (`recuse metrics pairs "
        "--unit chars`), or give len_a / len_b (`--unit column`)",
    )


def read_in_orders(notes: tuple[str, ...], frame: pd.DataFrame, *, orders: str) -> tuple[str, ...]:
    """``notes`` without those that reading one order (``--orders first`` or ``second``)
    makes untrue: that one-order and two-order verdicts are pooled
    (:func:`orders_partly_judged`), and, with the first order only, that ``p_a_second``
    may be read in the wrong frame (:func:`orders_at_odds`: that column is then unread).
    With ``orders="second"`` the frame note stays: every verdict read is that column's.
    """
    if orders == "both" or not notes:
        return notes
    moot = set(orders_partly_judged(frame))
    if orders == "first":
        frames: tuple[SwappedFrame, ...] = ("original", "presented")
        for frame_read in frames:
            moot.update(orders_at_odds(frame, swapped_frame=frame_read))
    return tuple(n for n in notes if n not in moot)


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


#: the fewest judges read below chance for :func:`labels_against_every_judge` to speak
AGAINST_JUDGES = 2


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
    note says so; every judge of a table, LLMBar's own included, does not. It speaks
    only where at least :data:`AGAINST_JUDGES` judges are read: one judge alone below
    chance is what sets built to fool judges measure (LLMBar's GPTInst and Neighbor
    pairs, each of gpt-3.5-turbo, gpt-3.5-turbo-0301 and llama-2-70b-chat judged alone:
    18–39%), not a sign of turned labels.

    >>> t = pd.DataFrame({"judge": ["j", "k"] * 20, "human": [1.0, 1.0, 0.0, 0.0] * 10,
    ...                   "p_a": [0.0, 0.0, 1.0, 1.0] * 10})
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
    if len(read) < AGAINST_JUDGES:
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
    apart, and so do a judge's two orders written as rows of their own (an item with
    ``p_a_first`` only, another with ``p_a_second`` only): the share it reads is the rows
    with a first-order verdict only less those with a second-order one only, over the
    judge's labelled rows. No dataset of /work/shared/data has its labels on one side.

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
    has_second = second.notna() if second is not None else pd.Series(False, index=frame.index)
    labelled = frame["human"].notna() & (frame["p_a_first"].notna() | has_second)
    first_only = labelled & frame["p_a_first"].notna() & ~has_second
    second_only = labelled & frame["p_a_first"].isna() & has_second
    by_judge = frame["judge"]
    share = (  # first-order-only rows beyond second-order-only ones: what position keeps
        (first_only.astype(float) - second_only.astype(float)).groupby(by_judge).sum()
        / labelled.astype(float).groupby(by_judge).sum()
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


def _prompt_words(text: object) -> str:
    """A prompt as :func:`prompts_sharing_an_id` compares it: its words, each run of
    white space one space, in NFC form.

    >>> _prompt_words("Name  two cities. \\n Thanks ") == _prompt_words("Name two cities. Thanks")
    True
    """
    return " ".join(unicodedata.normalize("NFC", one_text(str(text))).split())


#: the probes that edit the question (:data:`recuse.probe_edits.PROBES`): their rows of
#: a probe table hold the base pair's question with the edit, under its prompt id
QUESTION_EDITS = tuple(name for name, p in PROBES.items() if p.target == "question")


def prompts_sharing_an_id(frame: pd.DataFrame) -> tuple[str, ...]:
    """A note where one ``prompt_id`` holds different prompt texts (compared as
    :func:`_prompt_words` reads them: every run of spaces, tabs and line ends one space,
    in Unicode's NFC form, so that one prompt written by two tools, one keeping
    trailing spaces or doubled spaces, the other not, is one prompt): the
    bootstrap resamples each id as one prompt, so ids that collide (two sets' numbered
    questions in one file) make fewer, larger clusters and other intervals, with nothing
    said (llmbar-mtbench's 75 prompts under 10 ids: gpt-3.5-turbo's position bias read
    0.70 [0.69, 0.72] for [0.67, 0.74]). No dataset of /work/shared/data has such an id.
    A probe table's rows of a probe that edits the question (:data:`QUESTION_EDITS`:
    bandwagon's note in it) are left out: their prompt is their base pair's, edited, and
    one cluster with it is as meant (every bandwagon table read this note before, and
    its advice, ids of their own, would unpair the versions the bootstrap keeps
    together).

    >>> t = pd.DataFrame({"prompt_id": ["1", "1", "2"], "prompt": ["Hi", "Bye", "Hi "]})
    >>> prompts_sharing_an_id(t)[0][:52]
    "1 prompt id holds different prompt texts (first: '1'"
    """
    if not {"prompt_id", "prompt"} <= set(frame.columns):
        return ()
    rows = frame[frame["prompt"].notna()]
    if "probe" in rows.columns:  # a probe table's edit of the question is that question
        rows = rows[~rows["probe"].isin(QUESTION_EDITS)]
    texts = rows["prompt"].map(_prompt_words)
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


def _first_item(items: pd.DataFrame, hit: np.ndarray) -> str:
    """`` (first: item 'ID')`` of the first row ``hit`` marks, or "" without item ids."""
    if "item_id" not in items:
        return ""
    return f" (first: item {shown(items['item_id'].to_numpy()[np.flatnonzero(hit)[0]])})"


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
    item = _first_item(items, odd)
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
    judge's, over 2.7 nats) cannot be told from perplexities and pass unsaid. Where no
    value is above 1 the columns may as well hold per-token probabilities (``1 /
    perplexity``, the geometric mean of the tokens' probabilities), whose log is minus
    the log-perplexity, so the note names that reading and its fix too (``exp`` of a
    probability would be no perplexity either).

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
    probabilities = (
        ""
        if (values > 1).any()
        else "; if they hold per-token probabilities (exp of the mean log-probability, none "
        "above 1 here), give 1 / them — read as perplexities, their log turns the slopes' "
        "sign"
    )
    return (
        f"{below:,} of {len(values):,} perplexities ({', '.join(columns)}) are below 1, which "
        "no perplexity is (exp of a mean negative log-probability per token): if the columns "
        "hold log-perplexities (mean negative log-likelihoods), give exp of them — the "
        "familiarity analysis takes their log, and read as perplexities its slopes and bins "
        f"are on another scale{probabilities}",
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
    while the leaderboard's length term reads the columns of all. A side without a text
    whose length is 0 is an empty answer, not a text left out (a CSV writes an empty
    answer as an empty cell, read back as missing: HH-RLHF's 4), and is not counted.

    >>> t = pd.DataFrame({"item_id": ["i1", "i2"], "response_a": ["a b", None],
    ...                   "response_b": ["c", "d"], "len_a": [2, 30], "len_b": [1, 1]})
    >>> texts_partly_given(t)[0][:62]
    '1 of 2 comparisons with len_a / len_b have no response_a or re'
    """
    if not {"response_a", "response_b", "len_a", "len_b"} <= set(frame.columns):
        return ()
    items = frame.drop_duplicates("item_id") if "item_id" in frame.columns else frame
    sized = items["len_a"].notna() & items["len_b"].notna()
    # a side without a text whose length is 0 is an empty answer (a CSV writes '' so)
    gone = [items[f"response_{x}"].isna() & (items[f"len_{x}"] != 0) for x in ("a", "b")]
    textless = sized & (gone[0] | gone[1])
    n, k = int(sized.sum()), int(textless.sum())
    if not k or k < TEXTLESS * n:
        return ()
    item = _first_item(items, textless.to_numpy())
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
            "(`--orders first`, of `recuse audit` or `recuse metrics pairs`)"
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
