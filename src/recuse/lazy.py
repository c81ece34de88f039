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
import sys
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import Any

__all__ = ["first_use", "lazy_module"]


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


def first_use(
    package: str, homes: Mapping[str, str], names: Iterable[str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` for names that load their module on
    first use: ``homes`` maps each such name to the module it is read from (then kept
    in the package); ``dir()`` (a REPL's or an editor's completion, ``help()``) lists
    ``names`` (the package's ``__all__``) before any is loaded. (The top-level ``recuse``
    keeps its own pair: it imports nothing at run time, this module's typing included.)

    >>> getattr_, dir_ = first_use("recuse.lazy", {"dumps": "json"}, ["dumps"])
    >>> getattr_("dumps")([1]), "dumps" in dir_()
    ('[1]', True)
    >>> getattr_("loads")
    Traceback (most recent call last):
    ...
    AttributeError: module 'recuse.lazy' has no attribute 'loads'
    """
    listed = tuple(names)

    def __getattr__(name: str) -> object:
        if name in homes:
            value = getattr(importlib.import_module(homes[name]), name)
            setattr(sys.modules[package], name, value)
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *listed})

    return __getattr__, __dir__
