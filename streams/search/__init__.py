"""The knowledge search behind ``lookup_knowledge``: the port and its py-rag adapter (design note §10).

``KnowledgeSearchPort`` is the seam: swap the engine, keep the evidence chain. Whatever answers a
search, its bytes become one ``raw-hits`` record (:func:`raw_hits_record`) and the chain governs them.
"""

from __future__ import annotations

from streams.search.port import DEFAULT_MODE, Filters, KnowledgeSearchPort, SearchMode
from streams.search.pyrag import PyRagSearch
from streams.search.record import raw_hits_record

__all__ = [
    "DEFAULT_MODE",
    "Filters",
    "KnowledgeSearchPort",
    "PyRagSearch",
    "SearchMode",
    "raw_hits_record",
]
