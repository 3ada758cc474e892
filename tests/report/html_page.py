"""A minimal HTML reader for the report tests (stdlib only): elements and table cells."""

from __future__ import annotations

from html.parser import HTMLParser


class Page(HTMLParser):
    """Collects elements (tag, attributes) and each table's cell texts, row by row."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.tables: list[dict[str, object]] = []
        self._stack: list[dict[str, object]] = []
        self._cell: list[str] | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.elements.append((tag, attributes))
        if tag == "table":
            entry: dict[str, object] = {"attrs": attributes, "rows": []}
            self.tables.append(entry)
            self._stack.append(entry)
        elif tag == "tr" and self._stack:
            rows = self._stack[-1]["rows"]
            assert isinstance(rows, list)
            rows.append([])
        elif tag in ("td", "th") and self._stack:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "table" and self._stack:
            self._stack.pop()
        elif tag in ("td", "th") and self._stack and self._cell is not None:
            rows = self._stack[-1]["rows"]
            assert isinstance(rows, list)
            rows[-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def table(self, **match: str) -> list[list[str]]:
        for entry in self.tables:
            attrs = entry["attrs"]
            assert isinstance(attrs, dict)
            if all(attrs.get(k) == v for k, v in match.items()):
                rows = entry["rows"]
                assert isinstance(rows, list)
                return rows
        raise AssertionError(f"no table with {match}")

    def find(self, tag: str, **match: str) -> list[dict[str, str | None]]:
        return [
            a for t, a in self.elements if t == tag and all(a.get(k) == v for k, v in match.items())
        ]

    def with_class(self, tag: str, name: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.elements if t == tag and name in (a.get("class") or "").split()]
