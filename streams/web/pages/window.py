"""Which part of a run one page holds: the run page and its JSON stay under 5 MB, however large the run.

A run's document (:func:`streams.web.pages.render.run_document`) has three lists that grow with the run: the
tool call rows, the stored entries (each projection as the agent saw it) and the drafts. A page holds a
window of each, from the offset its address gives (``?calls=``, ``?entries=``, ``?drafts=``), as many
elements as fit in that list's share of the page's budget (at least one, so every page moves on), by
the size of their JSON. What a window leaves out is said on the page and in its JSON (``left_out``:
how many, and the addresses of the previous and the next window). Issue 38 M7: one 42 KB draft citing
50 lookups from each of 100 items made a 39.7 MB page; each projection is now shown once, in the
entries, and the items that cite it link to it: on this page, or on the page whose entries window
starts at it (:class:`streams.web.pages.render.Links`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar, cast

from typing_extensions import TypedDict

from streams import codec

T = TypeVar("T")

MAX_PAGE_BYTES = 5_000_000
"""No run page, nor its JSON, is larger than this (bytes)."""
PAGE_BUDGET_BYTES = 3_000_000
"""What the windows of one page may hold, by the JSON of their elements; the HTML of the same elements
is larger (markup, escaping), so a page whose HTML is over :data:`MAX_PAGE_BYTES` is drawn again with
half the budget."""
SECTIONS: tuple[tuple[str, str, str, float], ...] = (
    ("tool_calls", "calls", "tool-calls", 0.15),
    ("entries", "entries", "evidence", 0.35),
    ("drafts", "drafts", "drafts", 0.5),
)
"""Each list of a run's document: its name, its query parameter, the element id of its section on the
page, and its share of the budget."""


@dataclass(frozen=True, slots=True)
class Starts:
    """Where each window of a run page starts (``?calls=``, ``?entries=``, ``?drafts=``; 0 by default)."""

    calls: int = 0
    entries: int = 0
    drafts: int = 0

    def of(self, parameter: str) -> int:
        start: int = getattr(self, parameter)
        return start

    def moved(self, parameter: str, to: int) -> Starts:
        """These starts with ``parameter``'s window at ``to``."""
        values = {name: self.of(name) for name in ("calls", "entries", "drafts")} | {parameter: to}
        return Starts(**values)

    def query(self) -> str:
        """The query that gives these starts (``""`` for the first page)."""
        given = [f"{name}={start}" for name in ("calls", "entries", "drafts") if (start := self.of(name))]
        return "&".join(given)


def run_address(base: str, query: str, fragment: str = "") -> str:
    """``base`` (a run's address, maybe with a query) with ``query`` added, and ``#fragment``."""
    if query:
        base = f"{base}{'&' if '?' in base else '?'}{query}"
    return f"{base}#{fragment}" if fragment else base


def window(elements: Sequence[T], start: int, budget_bytes: int) -> tuple[list[T], int]:
    """The elements from ``start`` whose JSON fits in ``budget_bytes`` (at least one), and where the
    next window starts (``len(elements)`` when none is left)."""
    shown: list[T] = []
    used = 0
    index = min(max(start, 0), len(elements))
    while index < len(elements):
        size = len(codec.dumps(elements[index]))
        if shown and used + size > budget_bytes:
            break
        shown.append(elements[index])
        used += size
        index += 1
    return shown, index


Window = TypedDict(
    "Window", {"from": int, "shown": int, "total": int, "previous": str | None, "next": str | None}
)
"""What the window of one list of a page leaves out: where it starts, how many it shows of how many, and
the addresses of the neighbouring windows (``from`` is a keyword, hence the functional form)."""


def windowed(
    document: Mapping[str, object], starts: Starts, base: str, budget_bytes: int, *, html: bool = True
) -> dict[str, object]:
    """``document`` with each of its lists cut to the window ``starts`` gives, and ``left_out``: per
    list, ``{from, shown, total, previous, next}`` (the addresses of the neighbouring windows, under
    ``base``, the run's address, at the list's section when ``html``; None where there is none)."""
    out = dict(document)
    left_out: dict[str, Window] = {}
    for name, parameter, section, share in SECTIONS:
        fragment = section if html else ""
        elements = cast(Sequence[object], document.get(name) or [])  # one of the document's lists
        start = min(starts.of(parameter), len(elements))
        shown, after = window(elements, start, int(budget_bytes * share))
        out[name] = shown
        previous = None
        if start > 0:
            back = _window_before(elements, start, int(budget_bytes * share))
            previous = run_address(base, starts.moved(parameter, back).query(), fragment)
        following = None
        if after < len(elements):
            following = run_address(base, starts.moved(parameter, after).query(), fragment)
        left_out[name] = {
            "from": start,
            "shown": len(shown),
            "total": len(elements),
            "previous": previous,
            "next": following,
        }
    out["left_out"] = left_out
    return out


def _window_before(elements: Sequence[object], end: int, budget_bytes: int) -> int:
    """Where a window that ends just before ``end`` starts (as many as fit, at least one)."""
    used = 0
    start = end
    while start > 0:
        size = len(codec.dumps(elements[start - 1]))
        if start < end and used + size > budget_bytes:
            break
        used += size
        start -= 1
    return start


FIRST = Starts()
"""The first page of a run: every window from its start."""
