"""`recuse certify SOURCE`: where a judge's verdict can be used with a guaranteed
agreement with the labels (human or correctness, as the source declares), cascades of
judges, and `recuse certify apply` for unlabelled items.

The method and its assumptions: :mod:`recuse.mitigation.selective`.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.text import Text
from typer._click.core import Context
from typer.core import TyperGroup

from recuse import numbers
from recuse.bootstrap_rules import named_settings
from recuse.choices import SelfScope
from recuse.cli.app import (
    READING,
    CertifiedConfidenceOfOption,
    CertifiedConfidenceOption,
    CertifiedSwappedFrameOption,
    ConfidenceOfOption,
    ConfidenceOption,
    ConfigOption,
    MapOption,
    SwappedFrameOption,
    ValuesOption,
    app,
    cli_context,
    config_help,
    loaded_config,
    setting_sources,
    settings_files,
    typed_options,
)
from recuse.cli.console import TerminalTable, cell, echo, json_shown
from recuse.cli.console import console as make_console
from recuse.errors import ConfigError, InputError
from recuse.interrupt import complete_over
from recuse.lazy import lazy_module
from recuse.reference import AGREEING_WITH, LABEL_NAMES, ReferenceKind

if TYPE_CHECKING:
    import pandas as pd

    from recuse import files as recuse_files
    from recuse import outputs
    from recuse.data.inputs import Input
    from recuse.data.value_maps import ValueReading
    from recuse.options import Settings
    from recuse.roster import Roster
else:  # imported as a command first uses them (recuse.lazy)
    recuse_files = lazy_module("recuse.files")
    outputs = lazy_module("recuse.outputs")

#: the reading options a thresholds file keeps (:data:`recuse.mitigation.thresholds.READING`)
READING_KEPT = ("swapped_frame", "confidence", "confidence_of")


class _RunByDefault(TyperGroup):
    """``recuse certify SOURCE ...`` runs ``certify run``; ``certify apply`` applies."""

    default_command = "run"

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)


certify_app = typer.Typer(
    cls=_RunByDefault,
    no_args_is_help=True,
    help="Certify judges: the confidence threshold above which a judge's agreement with "
    "the labels (humans', or a dataset's correctness labels) is at least a target with "
    "probability 1 - delta (exchangeable items assumed); cascades of judges ending with a "
    "person; `certify apply` for new items.",
)
app.add_typer(certify_app, name="certify")


def definitions(kind: ReferenceKind) -> str:
    """What each column means, the labels named as ``kind`` (:mod:`recuse.reference`)."""
    from recuse.mitigation.selective import AGREEING, UNCERTIFIED_BOUND

    return (
        f"labelled: items with a {LABEL_NAMES[kind]} (tied ones left out or counted, as chosen); "
        "threshold: keep a "
        "verdict when the judge's confidence c = max(p_a, 1 - p_a) (or order consistency) "
        "is at least this; coverage: share of the stratum's labelled items kept (of all "
        "the judge's labelled items: its line under the table, as recuse gate --certified "
        "and the audit read it); "
        f"agreement: share of kept verdicts equal to the {LABEL_NAMES[kind]} ({AGREEING}); "
        "bound: "
        "one-sided Clopper–Pearson lower bound of that agreement at 1 - delta' — "
        f"{UNCERTIFIED_BOUND} (the line under the table gives how many agree); at delta': "
        "this stratum's share of delta (delta over the strata tested; '—' beside a stratum "
        "not tested, which takes no share); held out: the same "
        "with thresholds certified without the item's fold (5 folds by prompt; 'one "
        "prompt': no check, no fold can be certified without its own items). The "
        "guarantee holds where the bound is at least the target."
    )


#: what the cascade table's columns and its cost mean
CASCADE_WORDS = (
    "Cascade: reaches: share of the labelled items no earlier judge kept; keeps: share of "
    "all labelled items this judge decides (held out: each prompt fold decided by "
    "thresholds certified without it); USD / 1,000 judgments: the judge's price; cost per "
    "1,000 items = Σ reaches × judgments per item (orders judged, 1 or 2) × USD / 1,000 "
    "judgments, judges only (a person's time is not counted)."
)


def _costs(
    specs: list[str], store: Path | None, prices: Path | None, roster: Roster
) -> dict[str, float]:
    """USD per 1,000 judgments per judge: ``--cost JUDGE=USD`` (read into pairs, then
    checked as ``recuse.certify``'s ``costs`` are: :func:`recuse.api.checked_costs`),
    over the evaluator card's prices."""
    from recuse.api import checked_costs, price_key

    card: dict[str, float] = {}
    if prices is not None and store is None:
        raise ConfigError("--prices goes with --store (it prices the store's evaluator card)")
    if store is not None:
        from recuse.judging import Store
        from recuse.judging.card import cards, read_prices
        from recuse.judging.store import no_store

        if not recuse_files.is_file(store):
            raise no_store(store, fix="give a store of `recuse judge`")
        table = read_prices(prices, roster=roster) if prices is not None else None
        with Store(store, read_only=True) as s:
            for c in cards(s.runs(), table):
                if c.usd_per_1000_judgments is not None:
                    card[c.judge] = c.usd_per_1000_judgments
                for damaged in c.damaged:  # priced on the other runs, as the audit's card
                    echo(f"recuse: note: {damaged}: the store is damaged there; not in "
                         "the evaluator card's price", err=True)  # fmt: skip
    pairs: list[tuple[str, object]] = []
    for spec in specs:
        for part in spec.split(","):
            judge, sep, usd = part.rpartition("=")
            if not sep:  # a nameless price is checked_costs' to refuse, as costs= is
                raise ConfigError(
                    f"--cost: cannot read {part!r} — write JUDGE=USD per 1,000 judgments, "
                    "e.g. --cost gpt-4=30"
                )
            try:
                pairs.append((judge, float(usd)))
            except ValueError:  # not a number: said as the library says it
                pairs.append((judge, usd.strip()))
    given = checked_costs(pairs, roster, option="--cost")
    overridden = {price_key(name, roster)[1] for name in given}
    keys = {name: price_key(name, roster)[1] for name in card}  # the names of one judge share one
    carded: dict[str, str] = {}  # judge key: the card's name for it
    for name, price in card.items():
        had = carded.setdefault(keys[name], name)
        if had != name and card[had] != price and keys[name] not in overridden:
            raise InputError(
                f"the evaluator card prices one judge twice: {had}={card[had]:g}, "
                f"{name}={price:g} (USD per 1,000 judgments, runs under two names)",
                file=store,
                fix=f"give its price with --cost {had}=USD",
            )
    # --cost overrides the evaluator card's price
    return {**{n: p for n, p in card.items() if keys[n] not in overridden}, **given}


def _pct(x: float | None, empty: str = "", *, beside: float | None = None) -> str:
    """``x`` as a percentage (:func:`recuse.numbers.share_percent`: a share above 0 or
    below 1 never reads 0.0% or 100.0%); ``empty`` when there is none (nothing kept to
    measure). ``beside``: the target a held-out agreement is read against, on whose
    side it is written (:func:`recuse.numbers.share_percent_beside`: 79.96% read 80.0%
    under "Certified at agreement ≥ 80%")."""
    if x is None or x != x:
        return empty
    return numbers.share_percent(x) if beside is None else numbers.share_percent_beside(x, beside)


#: what an agreement cell or sentence says when no item was kept to measure it on
NONE_KEPT = "none certified"
#: the bound's cell when no test was run (too few labelled items): never a blank
NOT_TESTED = "not tested"
NO_SHARE = "—"  # at δ' of a stratum not tested: it takes no share of δ
#: a coverage cell of a stratum without labelled items
NO_LABELS = "no labels"
#: a held-out cell where no check could be made: the items share one prompt
ONE_PROMPT = "one prompt"


def _cascade_agreement(c: Any) -> str:
    """The cascade's agreement on the calibration and held-out items, in words — "none
    certified" where no judge kept an item (it was a blank)."""
    if c.agreement is None or c.agreement != c.agreement:
        return f"machine verdicts: {NONE_KEPT} (no judge kept an item), every item goes to a person"
    return (
        f"machine verdicts agree with {AGREEING_WITH[c.reference]} {_pct(c.agreement)} on the "
        "calibration items, "
        + (
            _pct(c.heldout.agreement, f"{NONE_KEPT} on the held-out folds", beside=c.target)
            if c.heldout.checked
            else "no held-out check (the items share one prompt)"
        )
        + (" held out" if c.heldout.agreement == c.heldout.agreement else "")
    )


def _judges_table(result: Any) -> TerminalTable:
    t = TerminalTable(
        title=Text(
            f"Certified at agreement ≥ {numbers.exact(result.target, percent=True)} "
            f"(--agreement {numbers.exact(result.target, least=2)}), "
            f"δ = {numbers.general(result.delta)}"
        )
    )
    for col in ("judge", "stratum", "labelled", "threshold", "coverage", "agreement",
                "bound", "at δ'", "held-out coverage", "held-out agreement"):  # fmt: skip
        t.add_column(col, justify="left" if col in ("judge", "stratum") else "right")
    for j in result.judges:
        for s in j.strata:
            t.add_row(
                cell(j.judge), cell(s.stratum), f"{s.n_labelled:,}",
                "not certified" if s.threshold is None else numbers.exact(s.threshold),
                _pct(s.coverage, NO_LABELS), _pct(s.agreement, NONE_KEPT),
                *((NOT_TESTED, NO_SHARE) if s.lower_bound != s.lower_bound
                  else (numbers.lower_bound(s.lower_bound, percent=True, beside=s.target),
                        f"{s.delta:.3g}")),
                *((_pct(s.heldout.coverage, NO_LABELS),
                   _pct(s.heldout.agreement, NONE_KEPT, beside=s.target))
                  if s.heldout.checked else (ONE_PROMPT, ONE_PROMPT)),
            )  # fmt: skip
    return t


def _cascade_table(c: Any) -> TerminalTable:
    t = TerminalTable(
        title=cell(f"Cascade {' → '.join(s.certificate.judge for s in c.stages)} → person")
    )
    for col in ("stage", "judge", "reaches", "keeps", "keeps (held out)", "USD / 1,000 judgments"):
        t.add_column(col, justify="left" if col == "judge" else "right")
    for k, s in enumerate(c.stages, 1):
        usd = (
            "unknown"
            if s.usd_per_1000_judgments is None
            else numbers.general(s.usd_per_1000_judgments)
        )
        t.add_row(str(k), cell(s.certificate.judge), _pct(s.reached), _pct(s.share),
                  _pct(s.heldout_share, ONE_PROMPT), usd)  # fmt: skip
    t.add_row("", Text("person"), "", _pct(c.person_share),
              _pct(c.heldout_person_share, ONE_PROMPT), "")  # fmt: skip
    return t


def _print(result: Any) -> None:
    """The tables and sentences, the labels named as the source declares them
    (``result.reference``); text read from the data as :func:`~recuse.cli.console.shown`."""
    con = make_console()
    kind: ReferenceKind = result.reference
    for note in result.notes:
        con.print(cell(f"note: {note}"))
    con.print(_judges_table(result))
    for j in result.judges:
        tied = numbers.counted(j.n_ties_excluded, f"tied {LABEL_NAMES[kind]}")
        con.print(cell(f"{j.judge}: confidence = {j.confidence}"
                       + (f"; {tied} left out" if j.n_ties_excluded else "")
                       + (f"; {numbers.counted(j.n_one_order, 'item')} judged in one "
                          f"order only {'reads' if j.n_one_order == 1 else 'read'} 0.5 "
                          "(no order consistency seen)" if j.n_one_order else "")))  # fmt: skip
        con.print(cell(f"  {j.guarantee()}"))
        for s in j.strata:
            if s.reason:
                con.print(cell(f"  {s.stratum}: {s.reason}"))
    c = result.cascade
    if c is not None:
        con.print(_cascade_table(c))
        cost = c.usd_per_1000_items
        con.print(cell(
            f"{_cascade_agreement(c)}; cost "
            + (f"unknown: {c.cost_unknown}" if cost is None
               else f"${numbers.decimal(cost, 3)} per 1,000 items (judges only)")
        ))  # fmt: skip
        con.print(cell(f"guarantee: {c.guarantee()}"))
    con.print(Text(definitions(kind)))
    if c is not None:
        con.print(Text(CASCADE_WORDS))


#: the options besides :data:`~recuse.cli.app.READING` ``certify run`` takes from
#: recuse.toml: the audit's choices and meaning (docs/configuration.md)
CERTIFY_FILE_OPTIONS = ("self_scope",)

#: --config names the [audit] options this command takes from the file
CertifyConfigOption = Annotated[
    Path | None, typer.Option("--config", help=config_help(CERTIFY_FILE_OPTIONS))
]


@certify_app.command("run", help="Certify the judges of SOURCE (the default command).")
def certify_command(
    ctx: typer.Context,
    source: str = typer.Argument(..., help="Labelled pairs: dataset name or file."),
    agreement: float = typer.Option(
        0.85, "--agreement", help="Target agreement with the labels (human or correctness)."
    ),
    delta: float = typer.Option(0.1, "--delta", help="Allowed failure probability."),
    judge: Annotated[list[str] | None, typer.Option("--judge", "-j", help="Judge(s).")] = None,
    cascade: str = typer.Option(None, "--cascade", help="Judges in order: j1,j2,..."),
    strata: bool = typer.Option(True, "--strata/--no-strata", help="Own/family/other strata."),
    human_ties: Annotated[
        Literal["exclude", "count"],
        typer.Option(
            "--human-ties",
            help="exclude tied labels, or count them (a tie agrees only with a tie verdict).",
        ),
    ] = "exclude",
    recalibrate: bool = typer.Option(False, "--recalibrate", help="Isotonic, cross-fitted."),
    min_labels: int = typer.Option(
        30,
        "--min-labels",
        help="Labels a stratum needs to be certified at all; the test starts at the most "
        "confident threshold that keeps this many items.",
    ),
    self_scope: Annotated[
        SelfScope,
        typer.Option(
            "--self-scope",
            help="The own stratum: the judge's exact snapshot (default; its line's other "
            "snapshots are family) or line (every snapshot of its model line), as in the audit.",
        ),
    ] = "snapshot",
    seed: int = typer.Option(0, "--seed", help="Seed of the held-out folds."),
    cost: Annotated[
        list[str] | None,
        typer.Option("--cost", help="JUDGE=USD per 1,000 judgments (comma list or repeated)."),
    ] = None,
    store: Annotated[
        Path | None, typer.Option("--store", help="Store whose evaluator card prices.")
    ] = None,
    prices: Annotated[
        Path | None, typer.Option("--prices", help="Price table for --store's card.")
    ] = None,
    out: str = typer.Option(None, "--out", "-o", help="Write the full result as JSON."),
    thresholds: str = typer.Option(
        None,
        "--thresholds",
        help="Write thresholds (JSON) for `certify apply`, with how the verdicts were read "
        "(--swapped-frame, --confidence, --confidence-of), the strata, --self-scope and "
        "--human-ties.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    data_dir: str = typer.Option(None, "--data-dir", help="Folder with the datasets."),
    mapping: MapOption = None,
    values: ValuesOption = None,
    swapped_frame: SwappedFrameOption = "original",
    confidence: ConfidenceOption = None,
    confidence_of: ConfidenceOfOption = "winner",
    config: CertifyConfigOption = None,
) -> None:
    """Per judge and stratum: threshold, coverage, guaranteed agreement, held-out check.

    SOURCE is read as recuse audit reads it: the options given here, else recuse.toml's
    (--config, else ./recuse.toml) [map], [values], [[model]] entries and its data-dir,
    swapped-frame, confidence and confidence-of keys; --self-scope likewise (the command
    line, else the file's self-scope, else snapshot)."""
    from recuse.api import certify
    from recuse.data.inputs import read_paths

    # self_scope: the audit's choices and meaning, read as it reads them (command line >
    # recuse.toml > default); --human-ties is this command's own (exclude or count)
    settings, roster = cli_context(ctx, (*READING, *CERTIFY_FILE_OPTIONS))
    self_scope = settings.self_scope
    named = [(p, o) for p, o in ((out, "--out"), (thresholds, "--thresholds")) if p is not None]
    read = [*read_paths(source, settings.data_dir), *settings_files(ctx)]
    paths = [outputs.check_output(p, option=o, inputs=read) for p, o in named]
    if len({p.resolve() for p in paths}) < len(paths):  # the second would replace the first
        raise ConfigError(f"--out and --thresholds name one file, {out}: give each its own")
    how = settings.reading()
    # a setting out of range is said of its flag (the library names its keyword)
    with named_settings(lambda setting: "--" + setting.replace("_", "-")):
        result = certify(
            source, roster=roster, agreement=agreement, delta=delta, judges=judge or None,
            cascade=cascade,
            strata=strata, human_ties=human_ties, recalibrate=recalibrate, seed=seed,
            min_labels=min_labels, self_scope=self_scope,
            costs=_costs(list(cost or []), store, prices, roster) or None,
            mapping=dict(settings.mapping) or None, values=how.values,
            swapped_frame=how.swapped_frame, confidence=how.confidence,
            confidence_of=how.confidence_of, data_dir=settings.data_dir,
        )  # fmt: skip
    payload = {
        "source": recuse_files.path_text(source),
        **result.to_dict(),
        "setting_sources": setting_sources(ctx, settings),
    }
    written = dict(zip([o for _, o in named], paths, strict=True))
    with outputs.locked(*paths):  # a second run into the folder waits: each pair whole
        _write_run(result, payload, written, thresholds=thresholds)
    whole = f"{' and '.join(map(str, reversed(paths)))} are complete and in place"
    # a stop here is said over whole files (--json's print too, its files written)
    with complete_over(whole) if paths else contextlib.nullcontext():
        if as_json:
            shown = json.dumps(payload, indent=2, ensure_ascii=False, allow_nan=False)
            typer.echo(json_shown(shown))
            return
        _print(result)
        for p in reversed(paths):  # in the order written: the thresholds file first
            echo(f"wrote {p}")


def _write_run(
    result: Any, payload: dict[str, Any], written: dict[str, Path], *, thresholds: str | None
) -> None:
    """Write `certify run`'s files (``written``: option to path): the thresholds file
    first (``thresholds``: its path as given), then the --out file (``payload``),
    which names the thresholds file's sha256 (:func:`thresholds_named`). A failure
    writing the --out file puts the earlier thresholds file back (or removes the new
    one): the run exited 2 and left this run's thresholds, which `certify apply`
    took."""
    pair: dict[str, Any] = {}
    with contextlib.ExitStack() as undo:
        if thresholds is not None:
            undo.enter_context(outputs.undone_on_failure(written["--thresholds"]))
            text = json.dumps(result.thresholds(), indent=2, ensure_ascii=False, allow_nan=False)
            pair["thresholds_file"] = thresholds_named(thresholds, text)
            outputs.write_text(written["--thresholds"], text, option="--thresholds")
        if "--out" in written:
            text = json.dumps(payload | pair, indent=2, ensure_ascii=False, allow_nan=False)
            outputs.write_text(written["--out"], text)
    if thresholds is not None:
        _note_nothing_certified(result.thresholds(), written["--thresholds"])


#: what ``thresholds_file.sha256`` in `certify run --out`'s file says
THRESHOLDS_SHA256_WORDS = (
    "sha256 of the --thresholds file's bytes as this run wrote them (sha256sum FILE): "
    "a thresholds file whose sha256 differs is not this run's (a run stopped between "
    "writing it and this file, or another run wrote it since)"
)


def thresholds_named(path: str, text: str) -> dict[str, str]:
    """How `certify run --out`'s file names the --thresholds file written beside it: its
    path as given and the sha256 of its UTF-8 bytes, ``text``.

    The two files are written one after the other, each atomically, the thresholds file
    first: a run stopped between them left a new thresholds file beside the earlier
    run's result, which then passed for its record (two runs at once could also leave
    each one's file). The pair is one run's iff the sha256 named here is the file's."""
    import hashlib

    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return {"path": recuse_files.path_text(path), "sha256": digest,
            "sha256_definition": THRESHOLDS_SHA256_WORDS}  # fmt: skip


def _note_nothing_certified(spec: dict[str, Any], path: Path) -> None:
    """A note where the thresholds file written certifies no judge on any stratum:
    `certify apply` with it sends every item to a person."""
    from recuse.mitigation.thresholds import certifies_any

    if not certifies_any(spec):
        echo(f"recuse: note: {path.name} certifies no judge on any stratum: `recuse certify "
             "apply` with it sends every item to a person (each stratum's reason says why, and the "
             "highest target each stratum's labels could certify)", err=True)  # fmt: skip


def _read_json(path: Path, *, option: str = "--thresholds") -> Any:
    """The JSON file ``path`` that `recuse certify` wrote with ``option`` (its errors'
    fix names it)."""
    return _read_json_bytes(path, option=option)[0]


def _read_json_bytes(path: Path, *, option: str = "--thresholds") -> tuple[Any, bytes]:
    """:func:`_read_json`, and the bytes it was read from (read once: their sha256 is
    that of the JSON read, even with another run writing the file meanwhile)."""
    from recuse.files import loads_once, no_file, not_json, read_bytes, text_of

    if not recuse_files.is_file(path):
        raise no_file(path, fix=f"write one with `recuse certify SOURCE {option} FILE.json`")
    fix = f"give the file `recuse certify {option}` wrote"

    raw = read_bytes(path)
    text = text_of(raw, path)  # not UTF-8 is said with its line
    try:  # a key named twice (hand-edited) is refused, not read as its last value
        return loads_once(text, path), raw
    except (RecursionError, ValueError) as exc:  # too deep, or an integer of 5,000 digits
        raise InputError(  # were tracebacks
            f"not JSON ({not_json(exc) or exc})",
            file=path,
            fix=fix,
        ) from None


def _reading_as_certified(
    ctx: typer.Context, settings: Settings, spec: dict[str, Any], name: str
) -> ValueReading:
    """How ``certify apply`` reads its table's verdicts: the options given (command line
    or recuse.toml), and for each one not given, the value the thresholds file was
    certified with (its ``reading``). A second order read in another frame than at
    certification turns a judge's flips into consistent pairs that pass its threshold;
    an option given that differs from the file's is said on stderr."""
    cfg = loaded_config(ctx)
    configured = set(cfg.options) if cfg is not None else set()
    given = set(typed_options(ctx, READING_KEPT)) | (configured & set(READING_KEPT))
    reading = settings.reading()
    taken: dict[str, Any] = {}
    for key, value in dict(spec.get("reading", {})).items():
        now = getattr(reading, key)
        if now == value:
            continue
        flag = "--" + key.replace("_", "-")
        if key in given:
            echo(
                f"recuse: note: {flag} {now} here, but {name} was certified on verdicts read "
                f"with {flag} {value}: its guarantee holds only if the verdicts mean the "
                "same (a second order in another frame reads flips as agreement)",
                err=True,
            )
        else:
            taken[key] = value
    if taken:
        said = ", ".join(f"--{k.replace('_', '-')} {v}" for k, v in taken.items())
        echo(f"recuse: note: read with {said}, as {name} was certified", err=True)
    return replace(reading, **taken)


@certify_app.command("apply")
def apply_command(
    ctx: typer.Context,
    thresholds: Annotated[Path, typer.Argument(help="Thresholds JSON of `recuse certify`.")],
    source: str = typer.Argument(..., help="Pairs to decide (no labels needed)."),
    out: str = typer.Option(..., "--out", "-o", help="Decisions: FILE.csv or FILE.json."),
    judge: str = typer.Option(None, "--judge", "-j", help="The judge, if not a cascade."),
    run: Annotated[
        Path | None,
        typer.Option(
            "--run",
            help="The --out file of the `certify run` that wrote THRESHOLDS: refused unless "
            "THRESHOLDS is the file it records (its sha256).",
        ),
    ] = None,
    data_dir: str = typer.Option(None, "--data-dir", help="Folder with the datasets."),
    mapping: MapOption = None,
    values: ValuesOption = None,
    swapped_frame: CertifiedSwappedFrameOption = "original",
    confidence: CertifiedConfidenceOption = None,
    confidence_of: CertifiedConfidenceOfOption = "winner",
    config: ConfigOption = None,
) -> None:
    """One decision per item: the verdict (a, b or tie) and the judge that gave it, or
    'to a person'. Written atomically. SOURCE is read as by `recuse certify` (and
    recuse audit), recuse.toml included; --swapped-frame, --confidence and
    --confidence-of not given are the thresholds file's (a note says so; one given that
    differs is used, with a note). Refused (exit 2, nothing written): a thresholds file
    not as `recuse certify` wrote it, a judge whose verdicts are of another kind
    (probabilities or picks) than it was certified on, and a roster that reads a model
    of the file's judges as own, family or other otherwise than at certification (their
    items would find another stratum's threshold), and with --run, a thresholds file
    that is not the one that run's --out file records (written by another run, or
    changed since). Prints the guarantee the file carries and, when SOURCE has labels,
    how often the decided items agree with them."""
    from recuse.data.inputs import load_input
    from recuse.mitigation.selective import PERSON
    from recuse.mitigation.thresholds import (
        DECISION_FIELDS,
        applied_guarantee,
        chosen_stages,
        decide,
    )

    settings, roster = cli_context(ctx, READING)
    read: list[str | Path] = [source, thresholds, *settings_files(ctx), *filter(None, [run])]
    path = outputs.check_output(out, inputs=read)
    if path.suffix.lower() not in (".csv", ".json"):
        raise ConfigError(f"--out {out}: the file name must end in .csv or .json")
    spec, raw = _checked_thresholds(thresholds)
    chosen_stages(spec, file=str(thresholds), judge=judge)  # a bad --judge: before any line
    if run is not None:
        _recorded_by(thresholds, raw, run)
    reading = _reading_as_certified(ctx, settings, spec, thresholds.name)
    inp = load_input(
        source, table="pairs", data_dir=settings.data_dir, roster=roster,
        mapping=dict(settings.mapping) or None, reading=reading,
    )  # fmt: skip
    applied = decide(inp.frame, spec, roster, file=str(thresholds), judge=judge)
    decided = applied.decisions
    _note_absent_stages(spec, inp.frame, source)
    guarantee = applied_guarantee(spec, judges={k.judge for k in applied.kept})
    if path.suffix.lower() == ".json":
        records = decided.astype(object).where(decided.notna(), None).to_dict(orient="records")
        payload = {"thresholds": recuse_files.path_text(str(thresholds)), "guarantee": guarantee,
                   "definitions": dict(DECISION_FIELDS), "kept": applied.to_dict(),
                   "decisions": records}  # fmt: skip
        outputs.write_text(path, json.dumps(payload, indent=2, ensure_ascii=False, allow_nan=False))
        wrote = outputs.written(path)
    else:
        wrote = outputs.written(*outputs.write_csv(path, decided))
    people = int((decided["decision"] == PERSON).sum())
    # a stop from here on is said over whole files: every line below reads the file written
    with complete_over(f"{wrote}: complete and in place"):
        echo(
            f"{numbers.counted(len(decided), 'item')}: {len(decided) - people:,} decided by "
            f"a certified judge, {people:,} {PERSON}; wrote {wrote}"
        )
        _print_kept(applied, spec, thresholds.name)
        echo(f"guarantee ({thresholds.name}): {guarantee}")
        _print_observed(decided, inp, spec)


def _print_observed(decided: pd.DataFrame, inp: Input, spec: dict[str, Any]) -> None:
    """`certify apply`'s line on the items that have labels: how many a certified judge
    decided, and how often it agreed with them (beside the guarantee's target)."""
    from recuse.mitigation.thresholds import observed

    counted = spec.get("human_ties") == "count"  # as certified
    seen = observed(decided, inp.frame, "count" if counted else "exclude")
    if seen is not None:
        kind = inp.source.reference
        echo(
            f"these items have {LABEL_NAMES[kind]}s: of the {seen.n:,} "
            + ("labelled (ties counted, as certified)" if counted else "not tied")
            + (f" ({seen.ties:,} tied left out)" if seen.ties else "")
            + f", {seen.kept:,} were decided by a certified judge"
            + (f", agreeing {seen.agree:,} times "
               f"({_pct(seen.agreement, beside=float(spec['target']))}; observed on this "
               f"batch, beside the guarantee's {numbers.exact(spec['target'], percent=True)})"
               if seen.kept else "")
        )  # fmt: skip


#: what `certify apply`'s kept shares are, printed above them
KEPT_WORDS = (
    "kept: the share of the items of a stratum reaching a judge (with its verdict, no "
    "earlier judge of the file deciding them) whose confidence reaches its threshold there; "
    "certified at: the share of that stratum's labelled calibration items (reaching it) the "
    "judge kept when certified. A batch's shares scatter around the certified ones; far "
    "apart, the items may not be like the calibration items"
)


def _certified_at(share: float | None, said: bool) -> str:
    """The certified share beside a kept one, in words."""
    if share is not None:
        return f"certified at {_pct(share)}"
    return "certified at: no labelled item" if said else "certified at: not in the file"


def _print_kept(applied: Any, spec: dict[str, Any], name: str) -> None:
    """What each judge (and stratum) of the file kept of the new items and in all, beside
    the shares it was certified at (:class:`recuse.mitigation.thresholds.Applied`)."""
    from recuse.mitigation.selective import PERSON

    said = {j["judge"]: "coverage" in j for j in spec["judges"]}
    echo(KEPT_WORDS)
    judges = list(dict.fromkeys(k.judge for k in applied.kept))
    n = len(applied.decisions)
    for judge in judges:
        if len(judges) > 1:  # a cascade: each judge's share of all the items
            mine = int((applied.decisions["judge"] == judge).sum())
            stage = next(j for j in spec["judges"] if j["judge"] == judge)
            echo(f"  {judge} decides {_pct(mine / n if n else None, 'none')} of all "
                 f"{numbers.counted(n, 'item')} ({mine:,}), "
                 f"{_certified_at(stage.get('share'), said[judge])} of all labelled calibration "
                 "items")  # fmt: skip
        for k in (k for k in applied.kept if k.judge == judge):
            got = (f"kept {_pct(k.share)} ({k.kept:,} of {numbers.counted(k.reached, 'item')})"
                   if k.reached else "no item reaches it")  # fmt: skip
            where = k.stratum + ("" if k.threshold is not None else " (nothing certified)")
            echo(f"  {judge}, {where}: {got}, {_certified_at(k.certified, said[judge])}")
    decided = int((applied.decisions["decision"] != PERSON).sum())
    # a file that says the share as null (its judge had no labelled item) is no earlier
    # recuse's: certifying again writes null again
    written = all("share" in j for j in spec["judges"] if j["judge"] in judges)
    echo(f"in all: {_pct(applied.share, 'none')} of the {numbers.counted(n, 'item')} decided "
         f"by a certified judge ({decided:,}), "
         + (f"certified at {_pct(applied.certified_share)} of the labelled calibration items"
            if applied.certified_share is not None else
            "certified at: no labelled item" if written else
            f"certified share not in {name} (written by an earlier recuse: certify again to "
            "have it)"))  # fmt: skip
    if applied.unjudged:  # the judges were certified on items they judged: say the rest
        seen = n - applied.unjudged
        echo(f"  {applied.unjudged:,} of the {numbers.counted(n, 'item')} have no verdict of "
             f"the file's judges and go to a person unread; of the {seen:,} with one, "
             f"{_pct(decided / seen if seen else None, 'none')} decided")  # fmt: skip


def _checked_thresholds(thresholds: Path) -> tuple[dict[str, Any], bytes]:
    """The thresholds file as `recuse certify` wrote it (else its one-line error), and
    the bytes it was read from; a note for what a file of an earlier recuse does not
    say."""
    from recuse.mitigation.thresholds import read_thresholds, unchecked_strata, unkept

    spec: dict[str, Any]
    spec, raw = _read_json_bytes(thresholds)
    read_thresholds(spec, file=str(thresholds))
    missing = unkept(spec)
    if missing:
        echo(f"recuse: note: {thresholds.name} was written by an earlier recuse and does not "
             f"say {'; '.join(missing)}: the options given here are used"
             + (" (tied labels left out)" if "human_ties" not in spec else "")
             + "; give the ones it was certified with, or certify again to keep them",
             err=True)  # fmt: skip
    unchecked = unchecked_strata(spec)
    if unchecked:
        echo(f"recuse: note: {thresholds.name} was written by an earlier recuse and does not "
             f"say which generators were {', '.join(unchecked)}'s own, family or other: the "
             "strata (own/family/other) are drawn by the roster given here and could not be "
             "checked against the certification's; give the roster it was certified with, "
             "or certify again to have them checked", err=True)  # fmt: skip
    return spec, raw


def _recorded_by(thresholds: Path, raw: bytes, run: Path) -> None:
    """Refuse (:class:`~recuse.errors.InputError`, exit 2) ``thresholds`` unless it is
    the file whose sha256 the `certify run --out` file ``run`` records
    (``thresholds_file``, :func:`thresholds_named`): else the run's result (its
    coverage, held-out check, guarantee) is the record of other thresholds than those
    applied — another run wrote the file since, one was stopped between its two
    writes, or the file was edited. ``raw``: the bytes the thresholds applied were read
    from (hashing the file again read what another run may have written since, and
    passed its thresholds' sha256 for the ones applied). Said on stdout when it is."""
    import hashlib

    recorded, named = _recorded_sha256(run)
    digest = hashlib.sha256(raw).hexdigest()  # as written: sha256sum
    if digest != recorded:
        where = f" for {named}" if named else ""
        raise InputError(
            f"is not the thresholds file {run.name} records: its sha256 is {digest[:12]}…, "
            f"{run.name} records {recorded[:12]}…{where} — another "
            "run wrote it since, a run was stopped between writing the two, or it was edited",
            file=thresholds,
            fix="give the pair one run wrote, or certify again (recuse certify SOURCE "
            f"--thresholds {thresholds} --out {run})",
        )
    echo(f"{thresholds.name} is the thresholds file {run.name} records (sha256 {digest[:12]}…)")


def _recorded_sha256(run: Path) -> tuple[str, str | None]:
    """The sha256 the `certify run --out` file ``run`` records of its thresholds file
    (``thresholds_file.sha256``: 64 hex digits, as sha256sum writes them) and that
    file's path as given (None where it says none). A value of another form is
    refused as the --out file's fault, naming the field: it was said of the thresholds
    file ("is not the thresholds file run.json records"), which was not at fault."""
    record = _read_json(run, option="--out")
    fix = "certify again with --thresholds and --out, or apply without --run"
    if not isinstance(record, dict) or "thresholds_file" not in record:
        raise InputError(
            "names no thresholds file (thresholds_file: written without --thresholds, or "
            "by an earlier recuse), so it cannot say which thresholds it is the record of",
            file=run,
            fix=fix,
        )
    named = record["thresholds_file"]
    if not isinstance(named, dict):
        raise InputError(
            f"thresholds_file is {_json_said(named)}, not the object recuse certify writes "
            "(path, sha256): the file was edited or damaged",
            file=run,
            fix=fix,
        )
    sha = named.get("sha256")
    if not (isinstance(sha, str) and re.fullmatch(r"[0-9a-f]{64}", sha)):
        raise InputError(
            f"thresholds_file.sha256 is {_json_said(sha)}, not a sha256 (64 hex digits, "
            "as recuse certify writes it): the file was edited or damaged",
            file=run,
            fix=fix,
        )
    path = named.get("path")
    return sha, path if isinstance(path, str) and path else None


def _json_said(value: object, *, most: int = 40) -> str:
    """``value`` as JSON, cut to ``most`` characters (a field of a hostile file).

    >>> _json_said("x" * 50, most=10)
    '"xxxxxxxx…'
    """
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= most else text[: most - 1] + "…"


def _note_absent_stages(spec: dict[str, Any], frame: pd.DataFrame, source: str) -> None:
    """A note for each cascade judge but the last with no verdicts in the new items:
    every item passes on to the next judge, certified on the items it passed on."""
    present = set(frame["judge"].dropna().astype(str)) if "judge" in frame else set()
    names = [s["judge"] for s in spec["judges"]]
    for k, absent in enumerate(names[:-1] if spec.get("cascade") else []):
        if absent not in present:
            echo(f"recuse: note: the cascade's judge {absent} has no verdicts in {source}: every "
                 f"item passes on to {names[k + 1]}, whose threshold was certified on the "
                 f"items {absent} passed on; its guarantee assumes items like those",
                 err=True)  # fmt: skip
