"""Readers: one per source format, each returning a validated evidence table.

The names below load :mod:`recuse.data.registry` (and pandas) on first use, so a light
module of this package (:mod:`recuse.data.record_lines`) imports without them (the
command line's front door, tests/cli/test_cli_lazy.py).
"""

from typing import TYPE_CHECKING

__all__ = ["Dataset", "datasets", "default_data_dir", "folder", "get", "load", "register"]

if TYPE_CHECKING:
    from recuse.data.registry import (
        Dataset,
        datasets,
        default_data_dir,
        folder,
        get,
        load,
        register,
    )


def __getattr__(name: str) -> object:
    if name in __all__:
        from recuse.data import registry

        value = getattr(registry, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'recuse.data' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names with those loaded on first use (``dir()``, a REPL's or an
    editor's completion, ``help()``), listed before any is loaded."""
    return sorted({*globals(), *__all__})
