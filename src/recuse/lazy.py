"""A module imported where it is first used, not where it is named.

The ``recuse`` command modules name the heavy modules their commands compute with
(pandas, the analyses, the judging backends) through :func:`lazy_module`, so that
``recuse --help``, ``recuse <command> --help`` and ``recuse gate`` import none of them
(tests/cli/test_cli_lazy.py): the import happens on the first attribute read, when a
command runs. Each such name is imported for real under ``TYPE_CHECKING`` beside it, so
mypy checks every use.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__all__ = ["lazy_module"]


class _LazyModule(ModuleType):
    """Stands for the module ``name``: the first attribute read imports it (once; Python
    keeps it in ``sys.modules``) and reads the attribute there."""

    def __init__(self, name: str) -> None:
        super().__init__(name)

    def __getattr__(self, attribute: str) -> Any:
        module = importlib.import_module(self.__name__)
        return getattr(module, attribute)

    def __repr__(self) -> str:
        return f"<module {self.__name__!r}, imported when first used>"


def lazy_module(name: str) -> Any:
    """The module ``name``, imported when one of its attributes is first read.

    >>> import sys
    >>> json = lazy_module("json")
    >>> json.dumps([1])
    '[1]'
    >>> lazy_module("recuse.no_such_module").anything
    Traceback (most recent call last):
    ...
    ModuleNotFoundError: No module named 'recuse.no_such_module'
    """
    return _LazyModule(name)
