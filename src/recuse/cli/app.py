"""The ``recuse`` Typer app and what its command modules share: ``--map`` / ``--values``
parsing and the options of every command that reads a pairs file.

Command modules import ``app`` from here and add their commands to it;
:mod:`recuse.cli` imports them all and runs the app, so no module imports in a cycle.
"""

from __future__ import annotations

import os
from typing import Annotated

import typer

from recuse.data.generic import ValueReading, check_value_map
from recuse.data.importers import References
from recuse.errors import ConfigError
from recuse.tables import ConfidenceOf, SwappedFrame

app = typer.Typer(
    name="recuse",
    help="Is your LLM judge biased, by how much, with what confidence, and how to correct it.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

# options given before the subcommand that may also come after it (recuse.cli.main
# moves them to the front): name -> takes a value
GLOBAL_OPTIONS = {"--roster": True}


@app.callback()
def _root(
    roster: str = typer.Option(
        None,
        "--roster",
        envvar="RECUSE_ROSTER",
        help="TOML roster file extending the built-in one (before or after the subcommand).",
    ),
) -> None:
    """recuse: measure and correct the biases of LLM judges."""
    if roster:
        os.environ["RECUSE_ROSTER"] = roster


# --- the options of commands that read a pairs file (validate, metrics, audit, judge) ---

MapOption = Annotated[
    str | None,
    typer.Option(
        "--map",
        help="Rename file columns: FILE_COLUMN=SCHEMA_COLUMN,... e.g. id=item_id,"
        "judge_model=judge (a missing column's error suggests pairs).",
    ),
]
ValuesOption = Annotated[
    list[str] | None,
    typer.Option(
        "--values",
        help="Map written values to P(a better), per FILE column (its name before --map): "
        "COLUMN:VALUE=NUMBER,... e.g. judge_winner:A=1,B=0,tie=0.5 (repeat, or separate "
        "columns with ;). A/B/tie, [[A]], model names and AlpacaEval 1/2/1.5 need no map.",
    ),
]
SwappedFrameOption = Annotated[
    SwappedFrame,
    typer.Option(
        "--swapped-frame",
        help="How p_a_second (b shown first) is written: original (A = a, the default) or "
        "presented (A = the response shown first, i.e. b; read as 1 - p).",
    ),
]
ConfidenceOption = Annotated[
    str | None,
    typer.Option(
        "--confidence",
        help="FILE column with the judge's confidence in [0, 1] for its first-order verdict.",
    ),
]
ConfidenceOfOption = Annotated[
    ConfidenceOf,
    typer.Option(
        "--confidence-of",
        help="winner: the confidence is P(verdict given), so P(a) = c for A, 1 - c for B "
        "(default); a: the confidence is P(a better) itself.",
    ),
]
AllowUnknownOption = Annotated[
    bool,
    typer.Option(
        "--allow-unknown-models",
        hidden=True,
        help="No effect (kept for old scripts): a model name missing from the roster is "
        "always read as its own model and family, with one note.",
    ),
]

ReferenceScorerOption = Annotated[
    str | None,
    typer.Option(
        "--reference-scorer",
        help="Inspect logs: the scorer whose grades are the independent reference of the "
        "model-graded scores (e.g. match or includes), for the favoritism regression.",
    ),
]
ReferenceJudgeOption = Annotated[
    str | None,
    typer.Option(
        "--reference-judge",
        help="Ratings: the judge whose ratings of the same prompt, model and dimension are "
        "the reference of the other judges (its own rows are not audited).",
    ),
]


def references(scorer: str | None, judge: str | None) -> References:
    """The ``--reference-scorer`` / ``--reference-judge`` options as the library takes them."""
    return References(scorer=scorer or None, judge=judge or None)


def parse_mapping(text: str | None) -> dict[str, str | tuple[str, ...]]:
    """Parse ``--map file_col=schema_col,other=judge`` into a column mapping; one file
    column may feed several schema columns (``id=item_id,id=prompt_id``).

    >>> parse_mapping("label=human, evaluator=judge")
    {'label': 'human', 'evaluator': 'judge'}
    >>> parse_mapping("id=item_id,id=prompt_id")
    {'id': ('item_id', 'prompt_id')}
    """
    if not text:
        return {}
    mapping: dict[str, str | tuple[str, ...]] = {}
    for part in text.split(","):
        source, sep, target = part.rpartition("=")  # a file column may hold '='; none of ours
        if not sep or not source.strip() or not target.strip():
            raise ConfigError(
                f"--map: cannot read {part.strip()!r} — write FILE_COLUMN=SCHEMA_COLUMN, "
                "comma-separated, e.g. --map label=human,evaluator=judge"
            )
        source, target = source.strip(), target.strip()
        had = mapping.get(source)
        if had is None:
            mapping[source] = target
        else:
            have = (had,) if isinstance(had, str) else had
            mapping[source] = have if target in have else (*have, target)
    return mapping


_VALUES_HELP = (
    "write COLUMN:VALUE=NUMBER,VALUE=NUMBER with the file's column name and P(a better) "
    "in [0, 1], e.g. --values 'judge_winner:A=1,B=0,tie=0.5' (repeat --values or "
    "separate columns with ;)"
)


def parse_values(specs: list[str] | None) -> dict[str, dict[str, float]]:
    """Parse ``--values`` specs into a value map ``{file column: {value: P(a better)}}``.

    >>> parse_values(["judge_winner:A=1,B=0,tie=0.5; human_winner:neither=0.5"])
    {'judge_winner': {'A': 1.0, 'B': 0.0, 'tie': 0.5}, 'human_winner': {'neither': 0.5}}
    >>> parse_values(["score:A>B=1,A=B=0.5,B>A=0"])  # a value may hold '=' (Arena-Hard)
    {'score': {'A>B': 1.0, 'A=B': 0.5, 'B>A': 0.0}}
    """
    out: dict[str, dict[str, float]] = {}
    for spec in specs or ():
        for part in spec.split(";"):
            if not part.strip():
                continue
            column, sep, pairs = part.partition(":")
            if not sep or not column.strip() or not pairs.strip():
                raise ConfigError(f"--values: cannot read {part.strip()!r} — {_VALUES_HELP}")
            table = out.setdefault(column.strip(), {})
            for item in pairs.split(","):
                # the number is after the last '=': a value may hold one (Arena-Hard's A=B)
                value, eq, number = item.rpartition("=")
                try:
                    p = float(number)
                except ValueError:
                    eq = ""
                if not eq or not value.strip():
                    raise ConfigError(
                        f"--values {column.strip()}: cannot read {item.strip()!r} — {_VALUES_HELP}"
                    ) from None
                if table.get(value.strip(), p) != p:
                    raise ConfigError(
                        f"--values {column.strip()}: {value.strip()!r} is given twice, as "
                        f"{table[value.strip()]:g} and {p:g} — keep one"
                    )
                table[value.strip()] = p
    try:
        check_value_map(out)
    except ConfigError as exc:
        raise ConfigError(f"--values: {exc}") from None
    return out


def value_reading(
    values: list[str] | None,
    swapped_frame: SwappedFrame,
    confidence: str | None,
    confidence_of: ConfidenceOf,
) -> ValueReading:
    """The parsed value options of a command, as the library takes them."""
    return ValueReading(
        values=parse_values(values) or None,
        swapped_frame=swapped_frame,
        confidence=confidence,
        confidence_of=confidence_of,
    )
