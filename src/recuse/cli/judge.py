"""`recuse judge ...`: run a judge over pairs (or responses) into a store; export tables."""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from recuse.choices import Endpoint, JudgmentKind, PairwiseMode, PromptLogprobMode
from recuse.cli.app import (
    PAIRS_READING,
    READING,
    AllowUnknownOption,
    ConfidenceOfOption,
    ConfidenceOption,
    ConfigOption,
    MapOption,
    SwappedFrameOption,
    ValuesOption,
    app,
    cli_context,
    cli_roster,
    settings_files,
    typed_options,
)
from recuse.cli.console import echo
from recuse.data.record_lines import rows_located
from recuse.errors import ConfigError, InputError
from recuse.interrupt import complete_over
from recuse.judging.device import DTypeChoice
from recuse.lazy import lazy_module
from recuse.options import Settings

if TYPE_CHECKING:
    import pandas as pd

    from recuse import files as recuse_files
    from recuse.judging import setup
    from recuse.judging import store as judging_store
    from recuse.judging.backends import http
    from recuse.judging.backends.base import Backend
    from recuse.judging.distributed import RayExecutor
    from recuse.judging.protocols import Dimension, PairwiseProtocol
    from recuse.judging.runner import RetryPolicy, RunSummary
    from recuse.roster import Roster
else:  # imported as a command first uses them (recuse.lazy)
    pd = lazy_module("pandas")
    recuse_files = lazy_module("recuse.files")
    setup = lazy_module("recuse.judging.setup")
    judging_store = lazy_module("recuse.judging.store")
    http = lazy_module("recuse.judging.backends.http")

judge_app = typer.Typer(
    help="Run a judge (local model or OpenAI-compatible server) into a resumable store. "
    "Exit codes: 0 every judgment ok, unparsed or refused for good (a prompt too long for "
    "the model: counted and left out by the analyses); 1 some judgments failed after "
    "--max-attempts tries (stored as failed; run the same command again to retry only "
    "those); 2 bad input; 130 interrupted by Ctrl-C, 143 by SIGTERM, 129 by SIGHUP "
    "(finished work is kept).",
    invoke_without_command=True,
    no_args_is_help=True,
)
app.add_typer(judge_app, name="judge")

#: exit code of `recuse judge` / `recuse probe` when tasks failed after their retries
EXIT_FAILED = 1


@judge_app.callback()
def judge(
    ctx: typer.Context,
    model: str = typer.Option(
        "smollm2-135m-instruct",
        "--model",
        "-m",
        help="Roster id of the embedded judge, a local model folder, or the server's "
        "model name (with --base-url).",
    ),
    data: str = typer.Option(None, "--data", "-d", help="Dataset name or pairs/ratings file."),
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="SQLite store (created or resumed).")
    ] = None,
    data_dir: str = typer.Option(None, "--data-dir", help="Folder holding the datasets."),
    protocol: Annotated[JudgmentKind, typer.Option(help="pairwise or likert.")] = "pairwise",
    mode: Annotated[PairwiseMode, typer.Option(help="Pairwise: direct or explain.")] = "direct",
    dimension: Annotated[
        list[str] | None,
        typer.Option("--dimension", help="Likert dimension (repeat); default all six."),
    ] = None,
    limit: int = typer.Option(
        0,
        help="Judge at most N items (0 = all): a seeded sample spread over the prompts "
        "(one item per prompt first), so a small trial still covers many prompts.",
    ),
    prompts: int = typer.Option(
        0, "--prompts", help="Judge items of at most N prompts, seeded (0 = all)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the --limit / --prompts sample."),
    base_url: Annotated[
        list[str] | None,
        typer.Option(
            "--base-url", help="OpenAI-compatible base URL, e.g. http://host:8000/v1 (repeat)."
        ),
    ] = None,
    endpoint: Annotated[Endpoint, typer.Option(help="completions or chat.")] = "completions",
    api_key_env: str = typer.Option(
        None, "--api-key-env", help="Environment variable that holds the API key."
    ),
    concurrency: int = typer.Option(8, help="HTTP requests in flight."),
    timeout: float = typer.Option(60.0, help="HTTP timeout per request (s)."),
    max_attempts: int = typer.Option(5, help="Attempts per request before recording a failure."),
    device: str = typer.Option(
        "auto",
        "--device",
        help="Local: auto (the GPU when there is one), cpu, cuda, cuda:N or mps.",
    ),
    dtype: Annotated[
        DTypeChoice,
        typer.Option(
            help="Local: auto (bfloat16 on a GPU that computes in it, else float32), "
            "float32 or bfloat16."
        ),
    ] = "auto",
    batch_size: int = typer.Option(
        0,
        help="Local: prompts per call and per forward pass at most (0 = 16 on CPU, 1024 on a GPU).",
    ),
    max_batch_tokens: int = typer.Option(
        0,
        "--max-batch-tokens",
        help="Local: padded tokens per forward pass (0 = 2048 on CPU; on a GPU sized from "
        "its free memory and the model).",
    ),
    judge_id: str = typer.Option(None, "--judge-id", help="Judge name written to tables."),
    revision: str = typer.Option(
        None,
        "--revision",
        help="With --base-url: the served model's version (e.g. gpt-4o-2024-08-06), which "
        "the judgments are keyed by: another revision judges again. A local model's is its "
        "files' fingerprint.",
    ),
    perplexity: bool = typer.Option(
        False,
        "--perplexity/--no-perplexity",
        help="Also score every judged response's perplexity given its prompt under the "
        "same model, into the same store (export adds ppl_a/ppl_b, which `recuse audit` "
        "uses for its familiarity section). Pairwise only; over --base-url it needs the "
        "completions endpoint's prompt log-probs (--logprobs-mode).",
    ),
    logprobs_mode: Annotated[
        PromptLogprobMode,
        typer.Option(
            "--logprobs-mode",
            help="--perplexity over --base-url: echo (completions with echo and logprobs) "
            "or vllm (vLLM's prompt_logprobs).",
        ),
    ] = "echo",
    progress: bool = typer.Option(
        True,
        "--progress/--no-progress",
        help="A progress bar on stderr: redrawn on a terminal; a file or pipe gets its "
        "last frame only, with the count and rate.",
    ),
    template: TemplateOption = None,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="ADDRESS",
            help="Judge on a Ray cluster (pip install 'recuse[ray]'): local (a new "
            "cluster on this machine), auto (the one started here with `ray start`, or "
            "RAY_ADDRESS), HOST:PORT or ray://HOST:10001. The judgments not yet in the "
            "store are spread over a pool of actors, each holding the judge; the store is "
            "written here as results arrive, so a killed run resumes.",
        ),
    ] = None,
    ray_actors: int = typer.Option(
        0,
        "--ray-actors",
        help="With --ray: actors in the pool (0 = one per GPU of the cluster for a local "
        "model, else 1); each holds one GPU, or one CPU.",
    ),
    mapping: MapOption = None,
    values: ValuesOption = None,
    swapped_frame: SwappedFrameOption = "original",
    confidence: ConfidenceOption = None,
    confidence_of: ConfidenceOfOption = "winner",
    allow_unknown_models: AllowUnknownOption = False,  # no effect, kept for old scripts
    config: ConfigOption = None,
) -> None:
    """Judge every pair in both orders (or rate responses) into the --out store; reruns resume.

    A pairs file given to --data is read as recuse audit reads it: the options given
    here, else recuse.toml's (--config, else ./recuse.toml) [map], [values], [[model]]
    entries and its data-dir, swapped-frame, confidence and confidence-of keys.

    With --perplexity, the perplexity of each judged response is computed too
    (texts already in the store are not recomputed).

    Exit codes: 0 when every judgment is ok, unparsed or refused for good (a prompt
    too long for the model: counted and left out by the analyses); 1 when some
    failed after --max-attempts tries (stored as failed; run the same command again
    to retry only those); 2 on bad input; 130 when interrupted by Ctrl-C, 143 by
    SIGTERM, 129 by SIGHUP (finished work is kept)."""
    if ctx.invoked_subcommand is not None:
        return
    _check_options(data, out, ray=ray, ray_actors=ray_actors, perplexity=perplexity,
                   protocol=protocol, template=template,
                   pairs_options=bool(typed_options(ctx, PAIRS_READING)))  # fmt: skip
    check_numbers(limit=limit, prompts=prompts, concurrency=concurrency, timeout=timeout,
                  max_attempts=max_attempts, batch_size=batch_size,
                  max_batch_tokens=max_batch_tokens, seed=seed)  # fmt: skip
    assert out is not None  # checked above
    from recuse.judging import RetryPolicy
    from recuse.judging.protocols import DIMENSIONS
    from recuse.judging.protocols import dimension as get_dimension
    from recuse.outputs import check_output

    # everything is checked before the store is created or a request is sent
    dims = [get_dimension(d) for d in dimension or []] or list(DIMENSIONS.values())
    tpl = setup.template_protocol(template, mode)
    # a responses file (Likert) is read as written: of recuse.toml, only its data-dir
    settings, roster = cli_context(ctx, READING if protocol != "likert" else ("data_dir",))
    check_output(out, option="--out", inputs=[data, *settings_files(ctx)])
    table = read_to_judge(data, protocol, settings, roster)
    if limit > 0 or prompts > 0:
        from recuse.data.sample import spread_over_prompts

        table = spread_over_prompts(table, limit=limit or None, prompts=prompts or None, seed=seed)
    notes: list[str] = []
    if tpl.template is not None:
        from recuse.judging.templates import check_references, placeholder_notes

        check_references(tpl.template, table, file=data)
        notes = placeholder_notes(tpl.template, table)
    if ray is not None and recuse_files.is_file(model, folder=True):  # (too long: one-line error)
        model = str(Path(model).absolute())  # the workers open the folder by this path
    # whole-label scores (labels sharing a first token) need prompt log-probs too
    whole = setup.whole_labels(tpl) and endpoint == "completions"
    prompt_logprobs = logprobs_mode if perplexity or whole else None
    pool, placed = None, None
    if ray is not None:
        pool, placed = setup.ray_pool(
            ray, ray_actors, local=not base_url, device=device, dtype=dtype
        )
    backend, jid = setup.judge_backend(
        model, base_urls=base_url or [], endpoint=endpoint, api_key_env=api_key_env,
        concurrency=concurrency, timeout=timeout, dtype=dtype, batch_size=batch_size,
        judge_id=judge_id, prompt_logprobs=prompt_logprobs, device=device,
        max_batch_tokens=max_batch_tokens, placed=placed, roster=roster, revision=revision,
    )  # fmt: skip
    echo(setup.describe(backend, jid, model))
    for note in notes:
        echo(f"note: {note}")
    if pool is not None:
        pool.factory = setup.ray_backend(
            backend, base_urls=base_url or [], model=model, endpoint=endpoint,
            api_key_env=api_key_env, concurrency=concurrency, timeout=timeout,
            prompt_logprobs=prompt_logprobs,
        )  # fmt: skip
    job = _Job(backend, jid, table, protocol, tpl, dims,
               RetryPolicy(max_attempts=max_attempts), progress, pool)  # fmt: skip
    exit_if_failed(_run(job, out, perplexity=perplexity))


def check_numbers(
    *, limit: int, concurrency: int, timeout: float, max_attempts: int, batch_size: int,
    seed: int, prompts: int = 0, max_batch_tokens: int = 0,
) -> None:  # fmt: skip
    """Counts `recuse judge` and `recuse probe` refuse before anything is read: ``--limit
    -3`` judged every item, ``--max-attempts 0`` was read as 1, ``--timeout 0`` failed
    every request (and ``--timeout nan`` was a traceback in the HTTP client), ``--seed
    -1`` numpy's traceback once the sample was drawn."""
    at_least = (
        ("--limit", limit, 0, "0 (all) or more"),
        ("--prompts", prompts, 0, "0 (all) or more"),
        ("--concurrency", concurrency, 1, "1 or more"),
        ("--max-attempts", max_attempts, 1, "1 or more"),
        ("--batch-size", batch_size, 0, "0 (the default for the device) or more"),
        ("--max-batch-tokens", max_batch_tokens, 0, "0 (the default for the device) or more"),
        ("--seed", seed, 0, "0 or more"),
    )
    for flag, value, low, words in at_least:
        if value < low:
            raise ConfigError(f"{flag} must be {words}; got {value}")
    if not 0 < timeout < float("inf"):
        raise ConfigError(f"--timeout must be a number of seconds above 0; got {timeout:g}")


def _check_options(
    data: str | None, out: Path | None, *, ray: str | None, ray_actors: int,
    perplexity: bool, protocol: JudgmentKind, template: str | None, pairs_options: bool,
) -> None:  # fmt: skip
    """The option combinations `recuse judge` refuses, before anything is read
    (``pairs_options``: an option of how a pairs file is read was given)."""
    if not data or out is None:
        raise ConfigError("give --data (dataset name or file) and --out (store file)")
    if pairs_options and protocol == "likert":  # never ignored in silence
        raise ConfigError(
            "--map, --values, --swapped-frame and --confidence read a pairs file; Likert "
            "judging reads a responses file as written — drop them and name its columns "
            "prompt_id, model, prompt, response"
        )
    if ray is None and ray_actors:
        raise ConfigError("--ray-actors goes with --ray ADDRESS; add --ray local (or an address)")
    if ray_actors < 0:
        raise ConfigError(
            f"--ray-actors must be 0 (one per GPU of the cluster, else 1) or more; got {ray_actors}"
        )
    if perplexity and protocol != "pairwise":
        raise ConfigError(
            "--perplexity goes with pairwise judging (the familiarity analysis reads the "
            "pairs table); drop it or use --protocol pairwise"
        )
    if template is not None and protocol != "pairwise":
        raise ConfigError(
            "--template is a pairwise judge prompt; drop it or use --protocol pairwise"
        )


@dataclass(frozen=True)
class _Job:
    """What `recuse judge` runs: the judge, the table, how it is judged."""

    backend: Backend
    jid: str
    table: pd.DataFrame
    protocol: JudgmentKind
    tpl: PairwiseProtocol
    dims: list[Dimension]
    retry: RetryPolicy
    progress: bool
    pool: RayExecutor | None


def _run(job: _Job, out: Path, *, perplexity: bool) -> list[RunSummary]:
    """Judge ``job`` into the store ``out`` (and the perplexities), printing each run's
    lines; the runs' summaries."""
    from recuse.judging import Runner, Store
    from recuse.judging.handlers.pairwise import verdict_lines

    backend, jid, pool = job.backend, job.jid, job.pool
    with Store(out) as store, pool or contextlib.nullcontext():
        if note := setup.chatml_note(backend, store.runs(), jid):
            echo(f"note: {note}")
        runner = Runner(backend, store, judge=jid, retry=job.retry, progress=job.progress,
                        executor=pool)  # fmt: skip
        if job.protocol == "pairwise":
            summary = runner.pairwise(job.table, job.tpl)
        else:
            summary = runner.likert(job.table, job.dims)
        if job.tpl.template is not None:
            echo(f"judge template: {job.tpl.template.line()}")
        echo(summary.line())
        if isinstance(backend, http.HTTPBackend) and job.protocol == "pairwise":
            if pool is not None and pool.exact is not None:  # the workers asked, not this one
                backend.exact_ids, backend.exact_note = pool.exact
            if pool is not None and pool.pool is not None:  # the replies were the workers'
                backend.verdict_replies = pool.replies
            said = backend.logprobs_line(job.tpl.top_k)
            if said:
                echo(said)
        if job.protocol == "pairwise":
            for line in verdict_lines(store.ok_verdicts(jid)):
                echo(line)
        if pool is not None and pool.pool is not None:
            actors, gpu = pool.pool
            echo(
                f"ray: {actors} actor(s) with one {'GPU' if gpu else 'CPU'} each; "
                f"results from {len(pool.workers)} worker process(es)"
            )
        _print_failures(summary)
        from recuse.judging.card import cards

        for c in cards(store.runs(), prompts=store.judge_prompts()):
            if c.judge == jid:
                echo(f"card: {c.line()}")
        runs = [summary]
        if perplexity:
            from recuse.judging.perplexity import judge_perplexities

            run = judge_perplexities(store, backend, judge=jid, retry=job.retry,
                                     progress=job.progress, executor=pool)  # fmt: skip
            echo(run.line())
            _print_failures(run)
            runs.append(run)
    return runs


def _print_failures(summary: RunSummary) -> None:
    """The five commonest reasons tasks of a run failed, with their counts."""
    for reason, n in sorted(summary.failures.items(), key=lambda kv: -kv[1])[:5]:
        echo(f"  failed x{n}: {reason}")


def exit_if_failed(summaries: Sequence[RunSummary]) -> None:
    """Exit 1 with the rerun hint when a run of ``summaries`` left tasks it gave up on
    after their retries (:attr:`RunSummary.gave_up`: stored as failed, never scored,
    tried again by the next run). Tasks refused for good (a prompt longer than the
    model reads) get a line saying a rerun fails them again, and exit 0, as unparsed
    replies do: both are counted and left out of every estimate."""
    one = {"judgments": "judgment", "perplexities": "perplexity", "rewrites": "rewrite"}

    def counted(pairs: list[tuple[int, str]]) -> str:
        return " and ".join(f"{n} {noun if n != 1 else one[noun]}" for n, noun in pairs if n)

    refused = counted([(s.failed - s.gave_up, s.what) for s in summaries])
    if refused:
        print(
            f"recuse: {refused} failed for good (reasons above, e.g. a prompt longer than "
            "the model reads); they are stored as failed and left out of every estimate — "
            "a rerun fails them again",
            file=sys.stderr,
        )
    gave_up = counted([(s.gave_up, s.what) for s in summaries])
    if not gave_up:
        return
    print(
        f"recuse: {gave_up} failed after retries (reasons above); they are stored as failed "
        "and never scored — run the same command again to retry only those (finished "
        "work is kept)",
        file=sys.stderr,
    )
    raise typer.Exit(EXIT_FAILED)


TemplateOption = Annotated[
    str | None,
    typer.Option(
        "--template",
        help="Your judge prompt instead of recuse's: a TOML template, FastChat's "
        "judge_prompts.jsonl:NAME (e.g. :pair-v2), an Arena-Hard-Auto judge config .yaml "
        "or an AlpacaEval configs.yaml[:ANNOTATOR]; `recuse judge templates FILE` lists "
        "what a file holds.",
    ),
]


@rows_located
def read_to_judge(
    data: str,
    protocol: str,
    settings: Settings | None = None,
    roster: Roster | None = None,
    *,
    every_text: bool = True,
) -> pd.DataFrame:
    """What ``--data`` names, found as every command finds its input
    (:mod:`recuse.data.inputs`): the responses a Likert judge rates, or pairs with the
    texts a pairwise judge compares (one row per pair). ``settings``: where a dataset is
    found, and how a pairs file is read (``--map``, ``--values``, ...; recuse.toml's by
    :func:`recuse.cli.app.cli_context`); a responses file is read as written.
    ``every_text``: a pair without its prompt or an answer as text is an error naming
    its row (else the caller leaves it out, and says so)."""
    from recuse.data.inputs import load_input, load_responses
    from recuse.files import check_text

    settings = settings or Settings()
    if protocol == "likert":
        return load_responses(data)
    df = load_input(
        data,
        table="pairs",
        data_dir=settings.data_dir,
        roster=roster,
        mapping=dict(settings.mapping) or None,
        reading=settings.reading(),
    ).frame
    need = ["prompt", "response_a", "response_b"]
    missing = [c for c in need if c not in df.columns or df[c].isna().all()]
    if missing:
        raise InputError(
            f"the data has no texts to judge (missing {', '.join(missing)})",
            file=data,
            fix="use a dataset with response texts (e.g. mt-bench-human) or a file with "
            "columns prompt, response_a, response_b",
        )
    if every_text:  # here, with the file's rows, not when the judge is sent them
        check_text(df, need, file=data)
    return df.drop_duplicates("item_id")


@judge_app.command("replay")
def replay_cmd(
    ctx: typer.Context,
    file: Annotated[
        Path,
        typer.Argument(
            help="Recorded judge replies: an LLMBar result.json, a JudgeBench "
            "outputs/…judge_name=arena_hard….jsonl, an AlpacaEval annotations.json with "
            "raw_completion, or a table (.csv/.jsonl) with columns item_id, prompt, "
            "response_a, response_b, order (first/second), text."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="SQLite store (created or resumed).")],
    source: str = typer.Option(
        "auto", help="auto (from the file name), llmbar, judgebench, alpaca-eval or table."
    ),
    verdict_format: str = typer.Option(
        None,
        "--verdict-format",
        help="How a table's replies state the verdict: brackets ([[A]]), llmbar "
        "(Output (a)), arena-hard ([[A>>B]]), alpaca-ranking, alpaca-tokens or "
        "alpaca-fn-ranking. The "
        "upstream sources set their own.",
    ),
    judge_id: str = typer.Option(None, "--judge-id", help="Judge name written to tables."),
    progress: bool = typer.Option(
        False,
        "--progress/--no-progress",
        help="A progress bar on stderr: redrawn on a terminal; a file or pipe gets its "
        "last frame only, with the count and rate.",
    ),
) -> None:
    """Parse judge replies already in a file into the --out store, exactly as a live judge's.

    Replies that break the format are stored as unparsed (counted, never scored);
    orders the file holds no reply for are failed rows with the reason. Where the
    file also records its own parse, the agreement with ours is printed. Export
    with `recuse judge export STORE`.
    """
    from recuse.data.recorded import read_recording
    from recuse.judging import Store
    from recuse.judging.protocols import verdict_format as get_format
    from recuse.judging.replay import compare_upstream, replay

    if source not in ("auto", "llmbar", "judgebench", "alpaca-eval", "table"):
        raise ConfigError(
            f"--source must be auto, llmbar, judgebench, alpaca-eval or table, not {source!r}"
        )
    fmt = get_format(verdict_format) if verdict_format else None
    recording = read_recording(
        file, source=source, verdict=fmt, judge=judge_id, roster=cli_roster(ctx)
    )
    with Store(out) as store:
        summary = replay(recording, store, judge=judge_id, progress=progress)
        agreement = compare_upstream(recording, store, judge=judge_id)
    echo(f"{recording.judge} ({recording.verdict.name} format): {summary.line()}")
    if agreement.compared:
        echo(agreement.line())
        for item_id, order, ours, theirs in agreement.disagreements[:5]:
            echo(f"  differs: {item_id} ({order}): ours {ours:g}, file {theirs:g}")
    for reason, n in sorted(summary.failures.items(), key=lambda kv: -kv[1])[:5]:
        echo(f"  failed x{n}: {reason}")


@judge_app.command("templates")
def templates_cmd(
    file: Annotated[
        Path,
        typer.Argument(
            help="A judge template file: TOML, FastChat judge_prompts.jsonl, Arena-Hard-Auto "
            "judge config .yaml or AlpacaEval configs.yaml."
        ),
    ],
) -> None:
    """List the judge prompts FILE holds: labels, answer prefix, whether a reference answer
    is shown, and the content hash that keys their judgments (or why one is not usable)."""
    from recuse.judging.templates import listing, selectable, template_entries

    entries = template_entries(file)
    for line in listing(entries):
        echo(line)
    usable = selectable(entries)
    if len(entries) > 1 and usable:
        echo(f"use: --template {file}:{usable[0]}")


@judge_app.command("card")
def card(
    ctx: typer.Context,
    store: Annotated[Path, typer.Argument(help="Store written by `recuse judge`.")],
    prices: Annotated[
        Path | None,
        typer.Option(
            "--prices",
            help="Price table (CSV: judge,input_per_million,output_per_million; or TOML), "
            "USD per million tokens; one row per judge, names matched through the roster "
            "(any case, aliases); a row that prices no judge of the store is noted.",
        ),
    ] = None,
) -> None:
    """The evaluator card of each judge in STORE: judgments per second, tokens in/out per
    judgment (where the server reported usage) and, with --prices, USD per 1,000."""
    from recuse.judging import Store
    from recuse.judging.card import cards, read_prices

    table = read_prices(prices, roster=cli_roster(ctx)) if prices is not None else None
    if not recuse_files.is_file(store):
        raise judging_store.no_store(store, fix="run `recuse judge ... --out STORE`")
    with Store(store, read_only=True) as s:
        found = cards(s.runs(), table, s.judge_prompts())
    if not found:
        echo(f"{store}: no runs recorded (judged before recuse recorded runs, or nothing)")
    for c in found:
        echo(c.line())
    if table is not None and found:
        for note in table.unmatched_notes([c.judge for c in found], str(store)):
            echo(f"note: {note}")


@judge_app.command("export")
def export(
    store: Annotated[Path, typer.Argument(help="Store written by `recuse judge`.")],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Output file: .csv, .jsonl or .parquet.")
    ],
    table: str = typer.Option("pairs", help="pairs or ratings."),
    judge: Annotated[
        list[str] | None,
        typer.Option("--judge", help="Export only this judge id's rows (repeat for more)."),
    ] = None,
    dataset: Annotated[
        list[str] | None,
        typer.Option(
            "--dataset",
            help="Pairs: export only the pairs of this dataset (the `source` each was "
            "judged from, e.g. mt-bench-human; repeat for more).",
        ),
    ] = None,
) -> None:
    """Write the judged `pairs` (or `ratings`) table from a store.

    Pairs of a judge whose perplexities the store holds (`recuse judge --perplexity`)
    get columns ppl_a and ppl_b. A store holding several judges or datasets exports
    them all unless --judge / --dataset name the ones to keep."""
    from recuse.judging import Store
    from recuse.outputs import check_output

    if not recuse_files.is_file(store):
        raise judging_store.no_store(store, fix="run `recuse judge ... --out STORE`")
    if table not in ("pairs", "ratings"):
        raise ConfigError(f"--table must be pairs or ratings, not {table!r}")
    if dataset and table == "ratings":
        raise ConfigError(
            "--dataset picks the datasets of pairs; ratings record no dataset — "
            "leave out --dataset, or give --table pairs"
        )
    suffix = out.suffix.lower()
    if suffix not in (".csv", ".jsonl", ".parquet"):
        raise ConfigError(f"unknown output type {suffix!r} — use .csv, .jsonl or .parquet")
    check_output(out, option="--out", inputs=[store])
    notes: list[str] = []
    with Store(store, read_only=True) as s:  # export only reads: read-only media are fine
        if table == "pairs":
            df = s.export_pairs(notes=notes, judges=judge or (), sources=dataset or ())
        else:
            df = s.export_ratings(notes=notes, judges=judge or ())
        prompts = s.judge_prompts() if table == "pairs" else {}
    wrote = _write_table(out, df)
    from recuse.judging.store import prompt_line

    with complete_over(f"{wrote}: complete and in place"):  # said over whole files
        echo(f"wrote {len(df)} rows to {wrote}")
        for name in sorted(set(prompts) & set(df["judge"].astype(str))):
            echo(f"  {prompt_line(name, *prompts[name])}")
        for note in notes:
            echo(f"note: {note}")
        if "ppl_a" in df.columns:
            both = int((df["ppl_a"].notna() & df["ppl_b"].notna()).sum())
            echo(f"  {both} rows with perplexities ppl_a/ppl_b (for `recuse audit`)")


def _write_table(out: Path, df: pd.DataFrame) -> str:
    """Write ``df`` to ``out`` as its suffix says (.csv, .jsonl, .parquet); the words
    naming what was written (a CSV's spreadsheet-safe copy beside it included)."""
    from recuse.outputs import write_bytes, write_csv, write_text, written

    suffix, copy = out.suffix.lower(), None
    if suffix == ".csv":
        copy = write_csv(out, df)[1]
    elif suffix == ".jsonl":
        write_text(out, df.to_json(orient="records", lines=True, force_ascii=False))
    else:
        buffer = io.BytesIO()
        df.to_parquet(buffer, index=False)
        write_bytes(out, buffer.getvalue())
    return written(out, copy)
