"""Names of a package loaded on first use (PEP 562), shared by the package ``__init__``s.

A package lists its public names with the module that defines each; importing
the package loads none of them, so that a light caller (the command line's
option declarations, the store's record types) does not pay for NumPy, SciPy
or choix.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_getattr"]


def lazy_getattr(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: a public name imported from its home.

    Parameters
    ----------
    package
        The package's ``__name__``.
    homes
        Public name -> the module that defines it: a submodule of ``package``
        (``"quality"``), or a dotted absolute name (``"orlbuild.records"``).

    Returns
    -------
    callable
        To assign to the package's ``__getattr__``; a loaded name is kept in the
        package, so it is imported once.
    """

    def __getattr__(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        home = homes[name]
        module = importlib.import_module(home if "." in home else f"{package}.{home}")
        value = getattr(module, name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
