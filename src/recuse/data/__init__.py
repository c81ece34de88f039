"""Readers: one per source format, each returning a validated evidence table.

The names below load :mod:`recuse.data.registry` (and pandas) on first use, so a light
module of this package (:mod:`recuse.data.record_lines`) imports without them (the
command line's front door, tests/cli/test_cli_lazy.py).
"""

from typing import TYPE_CHECKING

from recuse.lazy import first_use

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


__getattr__, __dir__ = first_use(
    "recuse.data", dict.fromkeys(__all__, "recuse.data.registry"), __all__
)
