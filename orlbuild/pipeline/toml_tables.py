"""Reading one TOML table of the pipeline config: typed look-ups that collect every problem
under its key's path, reported together (docs/pipeline.md)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

from orlbuild.errors import ConfigError
from orlbuild.limits import NAME_MAX, SEED_MAX, count_problem

__all__ = [
    "MISSING",
    "Problems",
    "Table",
    "count_rule",
    "is_instance",
    "name_rule",
    "non_empty",
    "positive_rule",
    "probability_rule",
    "seed_rule",
    "type_name",
]

T = TypeVar("T")
MISSING: Any = object()


class Problems:
    """Collects every problem in a config file so they are reported together."""

    def __init__(self, file: Path) -> None:
        self.file = file
        self.items: list[str] = []

    def add(self, key: str, message: str) -> None:
        self.items.append(f"{key}: {message}")

    def raise_if_any(self) -> None:
        if not self.items:
            return
        count = len(self.items)
        head = f"{self.file}: {count} problem{'s' if count > 1 else ''} in the pipeline config: "
        raise ConfigError(head + "; ".join(self.items))


class Table:
    """One TOML table being read: typed look-ups that record problems under the key's path."""

    def __init__(self, data: object, where: str, problems: Problems) -> None:
        self.where = where
        self.problems = problems
        self.used: set[str] = set()
        if isinstance(data, dict):
            self.data: dict[str, Any] = data
        else:
            self.data = {}
            problems.add(where, f"must be a table (got {type_name(data)})")

    def key(self, name: str) -> str:
        return f"{self.where}.{name}" if self.where else name

    def get(
        self,
        name: str,
        kind: type[T] | tuple[type, ...],
        default: Any = MISSING,
        *,
        choices: Sequence[Any] | None = None,
        check: Callable[[Any], str | None] | None = None,
    ) -> T:
        """Return ``data[name]`` if well-typed (and passing ``check``), else ``default``."""
        self.used.add(name)
        if name not in self.data:
            if default is MISSING:
                self.problems.add(self.key(name), required_text(kind, choices))
                return cast(T, None)
            return cast(T, default)
        value = self.data[name]
        if not is_instance(value, kind):
            self.problems.add(self.key(name), f"{expected_text(kind, choices)} (got {value!r})")
            return cast(T, default if default is not MISSING else None)
        if choices is not None and value not in choices:
            allowed = ", ".join(str(c) for c in choices)
            self.problems.add(self.key(name), f"must be one of {allowed} (got {value!r})")
            return cast(T, default if default is not MISSING else None)
        if check is not None and (reason := check(value)) is not None:
            self.problems.add(self.key(name), f"{reason} (got {value!r})")
            return cast(T, default if default is not MISSING else None)
        return cast(T, value)

    def strings(self, name: str, *, required: bool = False) -> tuple[str, ...]:
        """A list of distinct non-empty strings (empty tuple when absent or invalid)."""
        values = self.get(name, list, MISSING if required else None)
        if not isinstance(values, list):
            return ()
        bad = [v for v in values if not isinstance(v, str) or not v.strip()]
        if bad:
            self.problems.add(
                self.key(name), f"must be a list of non-empty strings (got {bad[0]!r})"
            )
            return ()
        stripped = tuple(v.strip() for v in values)
        duplicates = [v for v in stripped if stripped.count(v) > 1]
        if duplicates:
            self.problems.add(self.key(name), f"lists {duplicates[0]!r} twice")
        return tuple(dict.fromkeys(stripped))

    def table(self, name: str) -> Table | None:
        """A sub-table, or ``None`` when absent."""
        self.used.add(name)
        if name not in self.data:
            return None
        return Table(self.data[name], self.key(name), self.problems)

    def tables(self, name: str) -> list[Table]:
        """An array of tables (``[[name]]``)."""
        self.used.add(name)
        value = self.data.get(name, [])
        if not isinstance(value, list):
            self.problems.add(self.key(name), f"must be an array of tables [[{name}]]")
            return []
        return [Table(v, f"{self.key(name)}[{i}]", self.problems) for i, v in enumerate(value)]

    def finish(self, allowed: Sequence[str] | None = None) -> None:
        """Report keys that are not part of the schema (typos), listing the allowed ones."""
        known = sorted(self.used if allowed is None else set(allowed))
        for name in self.data:
            if name not in known:
                self.problems.add(self.key(name), f"unknown key; allowed here: {', '.join(known)}")


def is_instance(value: object, kind: type | tuple[type, ...]) -> bool:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        return False  # TOML true/false is not a number
    if float in kinds and isinstance(value, int) and not isinstance(value, bool):
        return True
    return isinstance(value, kinds)


def type_name(value: object) -> str:
    return {dict: "a table", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


def expected_text(kind: type | tuple[type, ...], choices: Sequence[Any] | None) -> str:
    if choices is not None:
        return "must be one of " + ", ".join(str(c) for c in choices)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {
        str: "a string",
        int: "an integer",
        float: "a number",
        bool: "true or false",
        list: "an array",
    }
    return "must be " + " or ".join(names.get(k, k.__name__) for k in kinds)


def required_text(kind: type | tuple[type, ...], choices: Sequence[Any] | None) -> str:
    return "is required and " + expected_text(kind, choices)


def non_empty(value: str) -> str | None:
    return None if value.strip() else "must not be empty"


def seed_rule(value: int) -> str | None:
    return None if 0 <= value <= SEED_MAX else f"must be a whole number from 0 to {SEED_MAX}"


def count_rule(name: str) -> Callable[[int], str | None]:
    """The documented limit of a count that sizes work, as a TOML key check."""
    return lambda value: count_problem(name, value)


def name_rule(value: str) -> str | None:
    return non_empty(value) or (
        None if len(value.strip()) <= NAME_MAX else f"must have at most {NAME_MAX} characters"
    )


def positive_rule(value: int) -> str | None:
    return None if value >= 1 else "must be >= 1"


def probability_rule(value: float) -> str | None:
    return None if 0.0 < value < 1.0 else "must be between 0 and 1 (exclusive)"
