"""What the command line reads of an analysis without running it: its id, title, the
table kind it reads and the biases it estimates, light to import."""

from __future__ import annotations

from dataclasses import dataclass

from recuse.choices import TableKind
from recuse.report.bias import Bias


@dataclass(frozen=True)
class Heading:
    """An analysis's words: ``id`` (``--only``, ``--skip``, a gate's shorthand for its
    headline bias), ``title`` (its section, as skips name it), ``table`` (the kind of
    table it reads: ``pairs`` / ``ratings``) and ``biases`` (the headline one first).
    :class:`recuse.analyses.base.Analysis` is made from it."""

    id: str
    title: str
    table: TableKind
    biases: tuple[Bias, ...]

    @property
    def headline(self) -> Bias:
        """The headline bias (a gate's ``--max ID=x`` reads it for the analysis id)."""
        return self.biases[0]
