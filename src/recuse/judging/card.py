"""The evaluator card: what a judge costs to use, from the runs a store recorded.

Per judge, over the judgments the backend answered in its runs (ok or unparsed;
cached and copied ones do not count, nor failed ones, which report no usage and are
sent again by the next run): answered judgments per second over the seconds of the
runs that answered any, each run's clock the one its summary line and progress bar
divide by, first call to last outcome (:mod:`recuse.judging.rate`; a run that failed
none reads the same rate on all three, one that failed some reads fewer here, and
says so; a run an earlier recuse recorded, without the store's ``clock``, timed the
whole run, and the card says how many of its seconds those are). A run that answered
none (every call it sent failed: a server down, a revoked key) says nothing of how
fast the judge answers: its seconds are not in the rate (nor in the MFU), and the
card says how many such runs there were and their seconds. A run no real run could
have recorded (a damaged or hand-edited store: seconds NaN, negative or under the
clock's nanosecond, tokens beyond any context; :func:`recuse.judging.store.run_damage`)
is in nothing the card counts, and the card names it, with its store. A run's record is
written with each commit of its judgments: a run killed before its end (``kill -9``, the
machine lost) counts as far as its last commit went, and the card says how many such
runs there were (and how many still run, counted so far). Tokens in and out
per judgment (where the server reported usage), and with a price table the cost of
1,000 judgments::

    cost_per_1000 = 1000 * (tokens_in * price_in + tokens_out * price_out) / 1e6

with prices in USD per million tokens. Where a local model ran on a GPU, its model
FLOP utilisation (MFU): the FLOP/s achieved over the device's peak, with
``2 * N`` FLOPs per token read (N the parameters of the transformer blocks; the
embeddings, the LM head and attention's own FLOPs not counted)::

    mfu = sum(2 * N * tokens_in) / sum(seconds * peak)

over the runs on a GPU, ``peak`` the dense bfloat16 peak of the GPU each ran on
(:func:`recuse.judging.device.peak_tflops`); a GPU with no known peak gets none
("peak unknown"), a CPU or a server no line.

The cards are typed numbers (:class:`Card`); the report renders them
(:func:`recuse.analyses.card.card_section`), so this module does not import the
report layer.
"""

from __future__ import annotations

import csv
import math
import tomllib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from recuse import numbers
from recuse.errors import InputError
from recuse.files import TOO_DEEP, is_file, no_file
from recuse.judging.device import peak_tflops
from recuse.judging.rate import per_second
from recuse.roster import Roster
from recuse.terminal import one_line

__all__ = ["Card", "PriceRow", "PriceTable", "cards", "read_prices"]

Prices = Mapping[str, tuple[float, float]]  # judge -> (USD per 1M input, per 1M output)


@dataclass(frozen=True)
class Card:
    judge: str
    #: judgments the backend answered (ok or unparsed) in the judge's runs
    judgments: int
    #: :attr:`judgments` over :attr:`seconds` (NaN where no time was recorded, or no
    #: run answered a judgment)
    judgments_per_second: float
    tokens_in_per_judgment: float | None
    tokens_out_per_judgment: float | None
    usd_per_1000_judgments: float | None
    #: where a local model ran and in which precision ("cuda:0 bfloat16"; several
    #: joined by " / " where runs differed); None for a server
    hardware: str | None = None
    #: the judge prompt its pairwise verdicts were made with: (name, format, sha256)
    #: (:meth:`recuse.judging.store.Store.judge_prompts`); None where none is recorded
    prompt: tuple[str, str, str] | None = None
    #: the GPU(s) a local model ran on, by name ("NVIDIA H200"; several joined by
    #: " / "); None off a GPU
    accelerator: str | None = None
    #: model FLOP utilisation, a share of the peak (0 to 1; see the module): None where
    #: the runs were not on a GPU, or on one with no known peak, or counted no tokens
    mfu: float | None = None
    #: the peak MFU divides by, TFLOP/s (the GPUs' when several, time-weighted)
    peak_tflops: float | None = None
    #: the seconds of the runs that answered a judgment or more, each from its first
    #: call to its last outcome, summed (:class:`recuse.judging.rate.RunClock`); None
    #: where not given
    seconds: float | None = None
    #: of :attr:`seconds`, those of runs an earlier recuse recorded, which timed the
    #: whole run (reading the store, loading a model), not from its first call
    whole_run_seconds: float = 0.0
    #: the runs that answered no judgment (every call failed), not in :attr:`seconds`
    #: nor the rate
    unanswered_runs: int = 0
    #: those runs' seconds, summed as :attr:`seconds` sums
    unanswered_seconds: float = 0.0
    #: the judge's runs the store holds that no real run could have recorded, each as
    #: ``STORE: run K of judge 'j' in the runs table records ...``
    #: (:meth:`recuse.judging.store.Store.runs`' ``damaged``), in nothing above
    damaged: tuple[str, ...] = ()
    #: of the runs counted, those killed before their end, or stopped where their end
    #: could not be written (a full disk): their records as their last commit left them
    #: (:meth:`recuse.judging.store.Store.runs`' ``state``)
    killed_runs: int = 0
    #: of the runs counted, those still running (counted as far as they have gone)
    running_runs: int = 0
    #: the model names a server's answers gave as serving them (their JSON "model"
    #: field: a dated snapshot behind an alias), in the order first recorded; empty for
    #: a local model, a server that names none, runs an earlier recuse recorded
    served: tuple[str, ...] = ()
    #: who wrote the prompt text a server's model read (``recuse's ChatML over
    #: /v1/completions``: read as its own turns by a ChatML model only), in the order
    #: first recorded; empty for a local model and runs an earlier recuse recorded
    rendering: tuple[str, ...] = ()

    def utilisation(self) -> str:
        """The MFU as the card says it ("" off a GPU)."""
        if self.accelerator is None:
            return ""
        if self.mfu is None:
            if self.peak_tflops is None:
                return f"model FLOP utilisation: peak unknown for {self.accelerator}"
            return "model FLOP utilisation: tokens not counted"
        peak = "unknown" if self.peak_tflops is None else numbers.general(self.peak_tflops)
        return (
            f"model FLOP utilisation {numbers.share_percent(self.mfu)} of {self.accelerator}'s "
            f"{peak} TFLOP/s dense bf16 peak"
        )

    def line(self) -> str:
        toks = (
            f"{numbers.decimal(self.tokens_in_per_judgment, 0)} tokens in / "
            f"{numbers.decimal(self.tokens_out_per_judgment, 1)} out per judgment"
            if self.tokens_in_per_judgment is not None and self.tokens_out_per_judgment is not None
            else "tokens not reported by the backend"
        )
        cost = (
            f"${numbers.decimal(self.usd_per_1000_judgments, 3)} per 1,000 judgments"
            if self.usd_per_1000_judgments is not None
            else "no price given"
        )
        where = f" on {self.hardware}" if self.hardware else ""
        if self.served:
            where += f" served as {' and '.join(one_line(repr(n)) for n in self.served)}"
        used = self.utilisation()
        if used:
            cost = f"{cost}; {used}"
        prompt = ""
        if self.prompt is not None:
            name, kind, sha = self.prompt
            said = ", ".join(x for x in (kind, f"sha256 {sha[:12]}" if sha else "") if x)
            prompt = f"; judge prompt {name!r}" + (f" ({said})" if said else "")
        if self.rendering:
            prompt += f"; prompts written in {' and '.join(self.rendering)}"
        took = (
            ""
            if self.seconds is None
            else f", in {_amount(self.seconds)} s from each run's first call to its last"
        )
        if self.whole_run_seconds:
            took += (
                f" ({_amount(self.whole_run_seconds)} s of them whole runs, as an "
                "earlier recuse timed them)"
            )
        rate = (
            f"{_amount(self.judgments_per_second)} answered judgments/s"
            if math.isfinite(self.judgments_per_second)
            else "no rate (no run answered a judgment)"
            if self.unanswered_runs and not self.judgments
            else "no rate (every run of it in the store is damaged)"
            if self.damaged and not self.judgments
            else "no rate (no time recorded)"
            if self.seconds is None
            else f"no rate ({_amount(self.seconds)} s recorded)"
        )
        unanswered = ""
        if self.unanswered_runs:
            runs = numbers.counted(self.unanswered_runs, "run")
            unanswered = (
                f"; {runs} that answered none (every call failed, "
                f"{_amount(self.unanswered_seconds)} s) not in the rate"
            )
        unended = self.unended()
        damaged = ""
        if self.damaged:
            runs = numbers.counted(len(self.damaged), "damaged run")
            damaged = f"; {runs} not counted: {'; '.join(self.damaged)}"
        return (
            f"{self.judge}: {rate}{where} ({self.judgments:,} answered, ok or unparsed"
            f"{took}; failed ones not counted{unanswered}{unended}{damaged}); {toks}; "
            f"{cost}{prompt}"
        )

    def unended(self) -> str:
        """The card's words for its runs killed before their end or still running
        (``""`` where none): ``; 1 run killed before its end (or stopped by a full
        disk), counted to the last commit``."""
        said = []
        if self.killed_runs:
            runs = numbers.counted(self.killed_runs, "run")
            ends = "its end" if self.killed_runs == 1 else "their ends"
            said.append(
                f"{runs} killed before {ends} (or stopped by a full disk), counted to the "
                "last commit"
            )
        if self.running_runs:
            runs = numbers.counted(self.running_runs, "run")
            said.append(f"{runs} still running, counted so far")
        return "".join(f"; {s}" for s in said)

    def record(self) -> dict[str, object]:
        older: dict[str, object] = (
            {"of them whole runs (timed so by an earlier recuse)": self.whole_run_seconds}
            if self.whole_run_seconds
            else {}
        )
        unanswered: dict[str, object] = (
            {
                "runs that answered none (every call failed; not in the rate)": (
                    self.unanswered_runs
                ),
                "their seconds": self.unanswered_seconds,
            }
            if self.unanswered_runs
            else {}
        )
        damaged: dict[str, object] = (
            {"damaged runs (not counted)": "; ".join(self.damaged)} if self.damaged else {}
        )
        unended: dict[str, object] = {}
        if self.killed_runs:
            unended["runs killed before their end (counted to their last commit)"] = (
                self.killed_runs
            )
        if self.running_runs:
            unended["runs still running (counted so far)"] = self.running_runs
        return {
            "judge": self.judge,
            "answered judgments (ok or unparsed)": self.judgments,
            "seconds (each answering run's first call to its last, summed)": self.seconds,
            **older,
            **unanswered,
            **unended,
            **damaged,
            "answered judgments per second": self.judgments_per_second,
            "tokens in per judgment": self.tokens_in_per_judgment,
            "tokens out per judgment": self.tokens_out_per_judgment,
            "USD per 1,000 judgments": self.usd_per_1000_judgments,
            "device and dtype": self.hardware,
            "served as (the answers' model field)": " / ".join(self.served) or None,
            "prompts written in": " / ".join(self.rendering) or None,
            "judge prompt": self.prompt[0] if self.prompt else None,
            "judge prompt format": (self.prompt[1] or None) if self.prompt else None,
            "judge prompt sha256": (self.prompt[2] or None) if self.prompt else None,
        } | (
            {
                "accelerator": self.accelerator,
                "model FLOP utilisation": self.mfu,
                "peak TFLOP/s (dense bf16)": self.peak_tflops,
            }
            if self.accelerator is not None
            else {}
        )


def cards(
    runs: pd.DataFrame,
    prices: Prices | None = None,
    prompts: Mapping[str, tuple[str, str, str]] | None = None,
) -> list[Card]:
    """One card per judge of ``runs`` (:meth:`recuse.judging.store.Store.runs`), with
    the judge prompt of each judge from ``prompts`` (``{judge: (name, format,
    sha256)}``, :meth:`recuse.judging.store.Store.judge_prompts`)."""
    out = []
    for judge, recorded in runs.groupby("judge", sort=True):
        said = recorded.get("damaged", pd.Series(None, index=recorded.index, dtype=object))
        damaged = tuple(str(d) for d in said[said.notna()])  # in nothing the card counts
        every = recorded[said.isna()].astype({"judgments": int, "seconds": float})
        none = every["judgments"] <= 0  # every call failed: not the judge's speed
        g = every[~none]
        n = int(g["judgments"].sum())
        seconds = float(g["seconds"].sum()) if len(every) or not damaged else None
        older = g["clock"].isna() if "clock" in g.columns else pd.Series(True, index=g.index)
        whole = float(g.loc[older, "seconds"].sum())
        used = g[g["tokens_in"].notna() & g["tokens_out"].notna()]
        nu = int(used["judgments"].sum())
        tin = float(used["tokens_in"].sum()) / nu if nu else None
        tout = float(used["tokens_out"].sum()) / nu if nu else None
        cost = None
        if prices is not None and str(judge) in prices and tin is not None and tout is not None:
            pin, pout = prices[str(judge)]
            cost = 1000 * (tin * pin + tout * pout) / 1e6
        rate = per_second(n, seconds or 0.0)
        places = (
            every["hardware"].dropna() if "hardware" in every.columns else pd.Series(dtype=object)
        )
        hardware = " / ".join(dict.fromkeys(str(h) for h in places if h)) or None
        prompt = (prompts or {}).get(str(judge))
        named = every["served_names"] if "served_names" in every.columns else ()
        served = tuple(dict.fromkeys(n for names in named if names for n in names))
        written = every["rendering"].dropna() if "rendering" in every.columns else ()
        rendering = tuple(dict.fromkeys(str(r) for r in written if r))
        accelerator, mfu, peak = _utilisation(g)
        per = math.nan if rate is None else rate
        state = every["state"] if "state" in every.columns else pd.Series("ended", every.index)
        out.append(
            Card(str(judge), n, per, tin, tout, cost, hardware, prompt, accelerator, mfu, peak,
                 seconds, whole, int(none.sum()), float(every.loc[none, "seconds"].sum()),
                 damaged, int((state == "killed").sum()), int((state == "running").sum()),
                 served, rendering)
        )  # fmt: skip
    return out


def _amount(value: float) -> str:
    """A rate or a number of seconds on the card: two decimals, more where two would
    write a non-zero one as 0 (:func:`recuse.numbers.small_decimals`; a bound past six):
    a rate of 5e-09 judgments/s read ``0.00``, as if none were answered."""
    small = value != 0 and abs(value) < 0.005
    return numbers.decimal(value, numbers.small_decimals(value) if small else 2)


def _utilisation(runs: pd.DataFrame) -> tuple[str | None, float | None, float | None]:
    """(accelerator, MFU, peak TFLOP/s) of one judge's runs (see the module): the runs
    on a GPU, each at its GPU's peak; MFU None where a GPU's peak is unknown or no run
    counted its tokens and block parameters."""
    if "device" not in runs.columns:
        return None, None, None
    on_gpu = runs[runs["device"].notna() & (runs["device"].astype(str) != "")]
    if on_gpu.empty:
        return None, None, None
    names = list(dict.fromkeys(str(d) for d in on_gpu["device"]))
    peaks = {name: peak_tflops(name) for name in names}
    unknown = [name for name, peak in peaks.items() if peak is None]
    if unknown:
        return " / ".join(names), None, None
    known = {name: float(peak) for name, peak in peaks.items() if peak is not None}
    secs = on_gpu["seconds"].to_numpy(dtype=float)
    peak_each = np.array([known[str(d)] for d in on_gpu["device"]], dtype=float)
    total = float(secs.sum())
    peak = float((secs * peak_each).sum() / total) if total > 0 else float(peak_each[0])
    tin = pd.to_numeric(on_gpu["tokens_in"], errors="coerce").to_numpy(dtype=float)
    blocks = pd.to_numeric(on_gpu["block_params"], errors="coerce").to_numpy(dtype=float)
    has = ~np.isnan(tin) & ~np.isnan(blocks)
    capacity = float((secs[has] * peak_each[has]).sum()) * 1e12
    if capacity <= 0:
        return " / ".join(names), None, peak
    flops = float((2.0 * blocks[has] * tin[has]).sum())
    return " / ".join(names), flops / capacity, peak


#: the most USD per million tokens a price may be: more is no model's price (a thousand
#: dollars a token), and the card wrote a price of 1e300 as a 300-digit cost
MAX_PER_MILLION = 1e9


def _price(value: object, path: Path, row: int, column: str) -> float:
    try:
        x = float(str(value))
    except ValueError:
        x = math.nan
    if not math.isfinite(x) or x < 0:
        raise InputError(
            f"price {value!r} is not a non-negative number",
            file=path,
            row=row,
            column=column,
            fix="give USD per million tokens, e.g. 2.5",
        )
    if x > MAX_PER_MILLION:
        raise InputError(
            f"price {value!r} is over {MAX_PER_MILLION:g} USD per million tokens (a thousand "
            "dollars a token)",
            file=path,
            row=row,
            column=column,
            fix="give USD per million tokens, e.g. 2.5 (not per token or per thousand)",
        )
    return x


@dataclass(frozen=True)
class PriceRow:
    """One judge's price as the file wrote it: its row (1-based data row of a CSV, or
    the table's number in a TOML file), the name as written, USD per million tokens."""

    row: int
    name: str
    input_per_million: float
    output_per_million: float


class PriceTable(Mapping[str, tuple[float, float]]):
    """Prices by judge, ``{judge: (USD per 1M input tokens, per 1M output)}``, where a
    judge is found by any name the roster gives it: its id, an alias, in any case
    (``prices["GPT-4o"]`` and ``prices["gpt-4o-2024-05-13"]`` are the row of
    ``gpt-4o`` if the roster says they are one model). A name the roster does not know
    matches itself, in any case. Iterating gives the canonical names.
    """

    def __init__(self, rows: Sequence[PriceRow], roster: Roster, *, file: str = "") -> None:
        self.file = file
        self._roster = roster
        self._rows: dict[str, PriceRow] = {}
        for r in rows:
            key = self.key(r.name)
            first = self._rows.get(key)
            if first is not None:
                same = (
                    ""
                    if first.name == r.name
                    else f"; {first.name!r} and {r.name!r} are one judge through the roster"
                )
                raise InputError(
                    f"judge {r.name!r} is priced twice (also in row {first.row}{same})",
                    file=file or None,
                    row=r.row,
                    column="judge",
                    fix="keep one price row per judge",
                )
            self._rows[key] = r

    def key(self, name: str) -> str:
        """The roster's id of ``name``, or the name itself (trimmed, case-folded)."""
        return self._roster.canonical(name) if name in self._roster else name.strip().casefold()

    @property
    def rows(self) -> tuple[PriceRow, ...]:
        return tuple(self._rows.values())

    def __getitem__(self, name: str) -> tuple[float, float]:
        r = self._rows[self.key(name)]
        return (r.input_per_million, r.output_per_million)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.key(name) in self._rows

    def __iter__(self) -> Iterator[str]:
        return iter(k if k in self._roster else r.name for k, r in self._rows.items())

    def __len__(self) -> int:
        return len(self._rows)

    def unmatched(self, judges: Iterable[str]) -> tuple[PriceRow, ...]:
        """The rows that price none of ``judges``."""
        keys = {self.key(j) for j in judges}
        return tuple(r for k, r in self._rows.items() if k not in keys)

    def unmatched_notes(self, judges: Iterable[str], where: str) -> list[str]:
        """One sentence per row that prices none of ``judges`` (the judges of ``where``)."""
        names = sorted(set(judges))
        return [
            f"{self.file}: price row {r.row} ({r.name!r}) matches no judge in {where} "
            f"(judges there: {', '.join(names) or 'none'}; names match through the roster, "
            "in any case or by an alias)"
            for r in self.unmatched(names)
        ]


def read_prices(path: str | Path, *, roster: Roster | None = None) -> PriceTable:
    """A price table: CSV with columns ``judge, input_per_million, output_per_million``,
    or TOML with one table per judge (``["gpt-4o"]`` ``input_per_million = 2.5``
    ``output_per_million = 10``); USD per million tokens.

    Judge names are read through ``roster`` (default :meth:`Roster.builtin`; the CLI
    passes its ``--roster``): two rows naming one judge (``gpt-4o`` and ``GPT-4o``, or a
    name and its alias) are an :class:`InputError`, not the later row silently winning."""
    p = Path(path)
    if not is_file(p):  # a folder or a pipe was "price file not found"
        raise no_file(p, fix="give the price table (CSV or TOML) with --prices")
    need = ("input_per_million", "output_per_million")
    rows: list[PriceRow] = []
    try:
        if p.suffix.lower() == ".toml":
            data = tomllib.loads(p.read_text(encoding="utf-8"))
            for k, (judge, entry) in enumerate(data.items(), start=1):
                if not isinstance(entry, dict) or not all(c in entry for c in need):
                    raise InputError(f"[{judge}] needs {' and '.join(need)}", file=p, row=k)
                rows.append(
                    PriceRow(
                        k,
                        judge,
                        _price(entry[need[0]], p, k, need[0]),
                        _price(entry[need[1]], p, k, need[1]),
                    )
                )
        else:
            with p.open(encoding="utf-8", newline="") as f:
                records = list(csv.DictReader(f))
            for k, r in enumerate(records, start=1):
                missing = [c for c in ("judge", *need) if not (r.get(c) or "").strip()]
                if missing:
                    raise InputError(
                        f"missing {', '.join(missing)}",
                        file=p,
                        row=k,
                        fix="columns: judge, input_per_million, output_per_million",
                    )
                rows.append(
                    PriceRow(
                        k,
                        r["judge"].strip(),
                        _price(r[need[0]], p, k, need[0]),
                        _price(r[need[1]], p, k, need[1]),
                    )
                )
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, csv.Error) as exc:
        raise InputError(f"cannot read the price table: {exc}", file=p) from None
    except RecursionError:  # (tomllib's reader recurses: it was a traceback)
        raise InputError(TOO_DEEP, file=p) from None
    if not rows:
        raise InputError(
            "the price table is empty",
            file=p,
            fix="give one row per judge: judge,input_per_million,output_per_million "
            "(USD per million tokens), or a TOML table per judge",
        )
    return PriceTable(rows, roster or Roster.builtin(), file=str(p))
