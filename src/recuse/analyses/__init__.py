"""The analyses of the audit, one file each, and the registry that lists them.

The audit, the report and the CLI read :data:`REGISTRY` (``recuse gate`` the light
:data:`recuse.biases.HEADINGS`, whose order REGISTRY follows): adding a bias is its
:class:`~recuse.report.bias.Bias` words and its analysis's heading in
:mod:`recuse.biases` (light to import), one file here (what it needs, its metrics and
how its section is built), its statistic in :mod:`recuse.metrics` or
:mod:`recuse.regression`, and a planted parameter in :mod:`recuse.simulate`.
"""

from recuse.analyses import (
    agreement,
    calibration,
    certification,
    familiarity,
    family_preference,
    favoritism,
    leaderboard,
    position,
    probes,
    self_preference,
    self_preference_ladder,
    self_recognition,
    verbosity,
)
from recuse.analyses.base import FAST_CHECKS, Analysis, AuditOptions, Context, to_finding
from recuse.errors import ConfigError
from recuse.report.bias import Bias

#: the analyses in the audit's order, that of :data:`recuse.biases.HEADINGS` (each is
#: made from its heading: tests/analyses/test_registry.py holds the two in one order)
REGISTRY: tuple[Analysis, ...] = (
    self_preference.ANALYSIS,
    self_preference_ladder.ANALYSIS,
    family_preference.ANALYSIS,
    verbosity.ANALYSIS,
    position.ANALYSIS,
    probes.ANALYSIS,
    self_recognition.ANALYSIS,
    familiarity.ANALYSIS,
    favoritism.ANALYSIS,
    leaderboard.ANALYSIS,
    agreement.ANALYSIS,
    calibration.ANALYSIS,
    certification.ANALYSIS,
)
BIASES: dict[str, Bias] = {b.key: b for a in REGISTRY for b in a.biases}
IDS: tuple[str, ...] = tuple(a.id for a in REGISTRY)


def get(analysis_id: str) -> Analysis:
    """The registered analysis with this id (KeyError names the known ones)."""
    for a in REGISTRY:
        if a.id == analysis_id:
            return a
    raise KeyError(f"unknown analysis {analysis_id!r}; known: {', '.join(IDS)}")


def selected(options: AuditOptions) -> tuple[Analysis, ...]:
    """The analyses ``options.only`` / ``options.skip`` ask for, in registry order;
    :class:`ConfigError` for an id the registry lacks, or a ``--material`` key that is
    neither a bias key nor an analysis id (checked here, before any data is read)."""
    keys = {b.key for a in REGISTRY for b in a.biases} | {a.id for a in REGISTRY}
    unknown = sorted(set(options.material) - keys)
    if unknown:
        raise ConfigError(
            f"--material: unknown bias {unknown[0]!r} — use a bias key of `recuse analyses` "
            "(or an analysis id for its headline bias)"
        )
    for option, ids in (("--only", options.only), ("--skip", options.skip)):
        bad = [i for i in ids if i not in IDS]
        if bad:
            raise ConfigError(
                f"{option}: unknown analysis {bad[0]!r} — choose from {', '.join(IDS)} "
                "(see `recuse analyses`)"
            )
    return tuple(
        a
        for a in REGISTRY
        if (not options.only or a.id in options.only) and a.id not in options.skip
    )


__all__ = [
    "BIASES",
    "FAST_CHECKS",
    "IDS",
    "REGISTRY",
    "Analysis",
    "AuditOptions",
    "Bias",
    "Context",
    "get",
    "selected",
    "to_finding",
]
