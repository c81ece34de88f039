"""`recuse probe`: judge counterfactual probes of a pairs table into a store (no labels)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from recuse.choices import Endpoint, PromptLogprobMode
from recuse.cli.app import (
    READING,
    ConfidenceOfOption,
    ConfidenceOption,
    ConfigOption,
    MapOption,
    SwappedFrameOption,
    ValuesOption,
    app,
    cli_context,
    settings_files,
)
from recuse.cli.console import echo
from recuse.cli.judge import TemplateOption, check_numbers, exit_if_failed, read_to_judge
from recuse.errors import ConfigError
from recuse.judging.device import DTypeChoice
from recuse.lazy import lazy_module
from recuse.probe_edits import PROBES, RECOGNITION, REWRITES

if TYPE_CHECKING:
    import pandas as pd

    from recuse import outputs
    from recuse.judging import setup
    from recuse.judging.protocols import PairwiseProtocol
    from recuse.judging.runner import RunSummary
    from recuse.probes.rewrite import RunnerRewriter
else:  # imported as the command first uses them (recuse.lazy)
    outputs = lazy_module("recuse.outputs")
    setup = lazy_module("recuse.judging.setup")

EDITS = [p for p in PROBES if p != "placebo"]
ALL = ",".join(EDITS)
#: shorthands: the verbosity probes (both model rewrites and the padding edit) and both
#: attribution labels
GROUPS = {
    "verbosity": ["concise", "verbose", "padding"],
    "attribution": ["attribution-self", "attribution-other"],
}
CHOICES = f"{ALL},{','.join(REWRITES)},{RECOGNITION},{','.join(GROUPS)}"


def _prompt_logprobs(protocol: PairwiseProtocol, endpoint: Endpoint) -> PromptLogprobMode | None:
    """``"echo"`` where the judge's scores need the prompt's log-probs: whole-label
    scores (labels sharing a first token) through a completions endpoint; else None."""
    return "echo" if setup.whole_labels(protocol) and endpoint == "completions" else None


@app.command("probe")
def probe(
    ctx: typer.Context,
    out: Annotated[Path, typer.Option("--out", "-o", help="SQLite store (created or resumed).")],
    data: str = typer.Option(..., "--data", "-d", help="Dataset name or pairs file with texts."),
    probes: str = typer.Option(
        ALL,
        "--probe",
        help=f"Comma list of probes (the placebo is always run): {CHOICES}. "
        f"{RECOGNITION} asks the judge which of its own and another model's answer it "
        "wrote, on the pairs whose model_a or model_b is the judge id; concise and "
        "verbose replace the treated answer by a --rewriter model's rewrite; verbosity = "
        "concise,verbose,padding; attribution = attribution-self,attribution-other.",
    ),
    rewriter: str = typer.Option(
        "smollm2-135m-instruct", "--rewriter", help="Model writing the concise/verbose rewrites."
    ),
    rewriter_base_url: Annotated[
        list[str] | None,
        typer.Option(
            "--rewriter-base-url",
            help="OpenAI-compatible base URL of the rewriter (default: a local model); it "
            "shares --endpoint, --api-key-env, --timeout and --concurrency.",
        ),
    ] = None,
    rewrite_tokens: int = typer.Option(
        512, "--rewrite-tokens", help="Most tokens a rewrite may take (a longer one is unused)."
    ),
    model: str = typer.Option("smollm2-135m-instruct", "--model", "-m", help="The judge."),
    base_url: Annotated[
        list[str] | None, typer.Option("--base-url", help="OpenAI-compatible base URL.")
    ] = None,
    endpoint: Annotated[Endpoint, typer.Option(help="completions or chat.")] = "completions",
    api_key_env: str = typer.Option(None, "--api-key-env", help="Variable holding the key."),
    data_dir: str = typer.Option(None, "--data-dir", help="Folder holding the datasets."),
    limit: int = typer.Option(
        60, "--limit", help="Base pairs, a seeded sample spread over prompts (0 = all)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the sample and of the treated side."),
    concurrency: int = typer.Option(8, help="HTTP requests in flight."),
    timeout: float = typer.Option(60.0, help="HTTP timeout per request (s)."),
    max_attempts: int = typer.Option(
        5, "--max-attempts", help="Attempts per request before recording a failure."
    ),
    device: str = typer.Option(
        "auto", "--device", help="Local: auto (the GPU when there is one), cpu, cuda[:N], mps."
    ),
    dtype: Annotated[
        DTypeChoice,
        typer.Option(help="Local: auto (bfloat16 on a capable GPU), float32 or bfloat16."),
    ] = "auto",
    batch_size: int = typer.Option(
        0, help="Local: prompts per forward pass at most (0 = 16 on CPU, 1024 on a GPU)."
    ),
    judge_id: str = typer.Option(None, "--judge-id", help="Judge name written to tables."),
    progress: bool = typer.Option(
        True,
        "--progress/--no-progress",
        help="A progress bar on stderr: redrawn on a terminal; a file or pipe gets its "
        "last frame only, with the count and rate.",
    ),
    template: TemplateOption = None,
    mapping: MapOption = None,
    values: ValuesOption = None,
    swapped_frame: SwappedFrameOption = "original",
    confidence: ConfidenceOption = None,
    confidence_of: ConfidenceOfOption = "winner",
    config: ConfigOption = None,
) -> None:
    """Edit one answer of each pair per probe (padding, fake citation, irrelevant sentence,
    bandwagon note, attribution labels, or a model's concise and verbose rewrites), and
    judge the original, a placebo and every edit in both orders into the --out store; with
    self-recognition, also ask the judge which of its own and another model's answer it
    wrote. Then `recuse judge export STORE --out
    probes.csv` and `recuse audit probes.csv` report each probe's effect beyond the
    placebo and the judge's self-recognition. A pairs file given to --data is read as
    recuse audit reads it, recuse.toml's [map], [values], [[model]] and reading keys
    included.

    Exit codes: 0 when every judgment and rewrite is ok, unparsed/unusable or refused
    for good (a prompt too long for the model); 1 when some failed after
    --max-attempts tries (run the same command again to retry only those); 2 on bad
    input; 130 when interrupted by Ctrl-C, 143 by SIGTERM, 129 by SIGHUP (finished
    work is kept)."""
    import pandas as pd

    from recuse.judging import RetryPolicy, Runner, Store
    from recuse.judging.handlers.pairwise import verdict_lines
    from recuse.judging.templates import check_references
    from recuse.probes import build_probe_table, build_recognition_table
    from recuse.probes.rewrite import RunnerRewriter
    from recuse.probes.run import judge_probes

    names = _probe_names(probes)
    edits = [p for p in names if p != RECOGNITION]
    _check_counts(rewrite_tokens, limit=limit, concurrency=concurrency, timeout=timeout,
                  max_attempts=max_attempts, batch_size=batch_size, seed=seed)  # fmt: skip
    protocol = setup.template_protocol(template, "direct")
    settings, roster = cli_context(ctx, READING)
    outputs.check_output(out, option="--out", inputs=[data, *settings_files(ctx)])
    table = read_to_judge(data, "pairwise", settings, roster, every_text=False)
    if protocol.template is not None:
        check_references(protocol.template, table, file=data)
    backend, jid = setup.judge_backend(
        model, base_urls=base_url or [], endpoint=endpoint, api_key_env=api_key_env,
        concurrency=concurrency, timeout=timeout, dtype=dtype, batch_size=batch_size,
        judge_id=judge_id, device=device, roster=roster,
        prompt_logprobs=_prompt_logprobs(protocol, endpoint),
    )  # fmt: skip
    echo(setup.describe(backend, jid, model))
    if edits:  # before the store: bad options, pairs without texts, none of the judge's
        _say_left_out(table, limit=limit, seed=seed)
    parts: list[pd.DataFrame] = []
    recognition = [build_recognition_table(table, judge=jid, limit=limit or None, seed=seed)
                   for _ in range(RECOGNITION in names)]  # fmt: skip
    rewrite: RunnerRewriter | None = None
    retry = RetryPolicy(max_attempts=max_attempts)
    with Store(out) as store:
        if note := setup.chatml_note(backend, store.runs(), jid):
            echo(f"note: {note}")
        if edits:
            if any(p in REWRITES for p in edits):
                writer, wid = setup.judge_backend(
                    rewriter, base_urls=rewriter_base_url or [], endpoint=endpoint,
                    api_key_env=api_key_env, concurrency=concurrency, timeout=timeout,
                    dtype=dtype, batch_size=batch_size, judge_id=None, device=device,
                    roster=roster,
                )  # fmt: skip
                runs = Runner(writer, store, judge=wid, retry=retry, progress=progress)
                rewrite = RunnerRewriter(runs, max_new_tokens=rewrite_tokens)
            t = build_probe_table(
                table, probes=edits, author=jid, limit=limit or None, seed=seed, rewriter=rewrite
            )
            _print_rewrites(edits, rewrite, rewriter, t)
            parts.append(t)
        # edits first: an original row shared with self-recognition keeps the edits' side
        probe_table = pd.concat([*parts, *recognition], ignore_index=True)
        probe_table = probe_table.drop_duplicates("item_id")
        judging = Runner(backend, store, judge=jid, retry=retry, progress=progress)
        summary = judge_probes(judging, probe_table, protocol)
        verdicts = verdict_lines(store.ok_verdicts(jid))
    _print_done(summary, probe_table, out, verdicts)
    exit_if_failed([summary, *(rewrite.summaries if rewrite else [])])


def _probe_names(spec: str) -> list[str]:
    """The probes ``--probe`` names (groups expanded, the placebo dropped: it comes with
    every one); :class:`ConfigError` for an unknown one or none."""
    asked = [p.strip() for p in spec.split(",") if p.strip()]
    names = list(dict.fromkeys(n for p in asked for n in GROUPS.get(p, [p])))
    unknown = [p for p in names if p not in PROBES and p not in REWRITES and p != RECOGNITION]
    if unknown:
        raise ConfigError(f"--probe: unknown probe {unknown[0]!r} — choose from {CHOICES}")
    names = [p for p in names if p != "placebo"]
    if not names:  # checked here: the store is not created for nothing
        raise ConfigError(
            f"--probe: name at least one probe (the placebo comes with every one) — choose "
            f"from {CHOICES}"
        )
    return names


def _say_left_out(table: pd.DataFrame, *, limit: int, seed: int) -> None:
    """Check the pairs the edits start from (:func:`recuse.probes.probe_bases`: it
    refuses a table with no pair of the judge's answers) and say how many pairs it
    leaves out for want of a prompt and both answers as text."""
    from recuse.probes import probe_bases

    missing = probe_bases(table, limit=limit or None, seed=seed).attrs["missing_texts"]
    if missing:
        echo(f"{missing} pair(s) without prompt and both answers as text: left out")


def _check_counts(
    rewrite_tokens: int, *, limit: int, concurrency: int, timeout: float, max_attempts: int,
    batch_size: int, seed: int,
) -> None:  # fmt: skip
    """``recuse judge``'s checks of the options the two share (:func:`check_numbers`),
    and ``--rewrite-tokens``."""
    check_numbers(limit=limit, concurrency=concurrency, timeout=timeout,
                  max_attempts=max_attempts, batch_size=batch_size, seed=seed)  # fmt: skip
    if rewrite_tokens < 1:
        raise ConfigError(f"--rewrite-tokens must be 1 or more; got {rewrite_tokens}")


def _print_rewrites(
    edits: list[str], rewrite: RunnerRewriter | None, rewriter: str, table: pd.DataFrame
) -> None:
    """Each rewrite style's run, and how many rewrites were unusable."""
    styles = [p for p in edits if p in REWRITES]
    for style, done in zip(styles, rewrite.summaries if rewrite else [], strict=False):
        echo(f"{style} rewrites by {rewriter}: {done.line()}")
    for style, n in table.attrs.get("unusable_rewrites", {}).items():
        if n:
            echo(f"{n} {style} rewrite(s) unusable (empty or cut): those pairs left out")


def _print_done(
    summary: RunSummary, probe_table: pd.DataFrame, out: Path, verdicts: list[str]
) -> None:
    """The judging run's line, what its verdicts say (``verdicts``:
    :func:`recuse.judging.handlers.pairwise.verdict_lines`), its failures, the versions
    judged and what to run next."""
    echo(summary.line())
    for line in verdicts:
        echo(line)
    for reason, n in sorted(summary.failures.items(), key=lambda kv: -kv[1])[:5]:
        echo(f"  failed x{n}: {reason}")
    versions = probe_table.groupby("probe").size().to_dict()
    # judgments given up on after their retries, or left to another run: the versions are
    # not judged yet (a server that was down read "versions judged: authority 8, …")
    pending = summary.gave_up + summary.left
    judged, then = "judged", "next"
    if pending:
        judged = "to judge"
        then = (
            f"{pending:,} of their {summary.total:,} judgments not stored yet (above); next, "
            "once they are"
        )
    echo(
        f"{probe_table['base_item'].nunique()} base pairs; versions {judged}: "
        + ", ".join(f"{k} {v}" for k, v in sorted(versions.items()))
        + f"; {then}: recuse judge export {out} --out probes.csv && recuse audit probes.csv"
    )
