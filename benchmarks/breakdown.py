"""Where the station chain's time goes, per step, for one representative record (µs, timeit).

.venv/bin/python benchmarks/breakdown.py
"""

from __future__ import annotations

import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from chain import corpus  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from models.rag import PY_RAG_RESPONSE_ADAPTER  # noqa: E402
from streams import codec  # noqa: E402
from streams.pipeline import StationRules, process_raw_hits  # noqa: E402
from streams.settings import Settings  # noqa: E402
from streams.stations.adapt import adapt  # noqa: E402
from streams.stations.pack import pack  # noqa: E402
from streams.stations.postprocess import postprocess  # noqa: E402
from streams.stations.project import project_lookup  # noqa: E402


def main() -> int:
    settings = Settings()
    raw = corpus(1)[0]
    doc = codec.loads(raw)
    response = PY_RAG_RESPONSE_ADAPTER.validate_python(doc["response"])
    hits = adapt(response)
    result = postprocess(hits, settings.postprocess)
    lookup = process_raw_hits(raw, StationRules.from_settings(settings)).lookup
    text = codec.dumps(lookup)
    parsed = codec.loads(text)
    steps = {
        "orjson.loads(raw) [baseline]": lambda: codec.loads(raw),
        "orjson.dumps(doc) [baseline]": lambda: codec.dumps(doc),
        "validate (pydantic)": lambda: PY_RAG_RESPONSE_ADAPTER.validate_python(doc["response"]),
        "adapt": lambda: adapt(response),
        "postprocess": lambda: postprocess(hits, settings.postprocess),
        "pack": lambda: pack(result["evidence_blocks"], settings.postprocess.char_budget),
        "dumps LookupResult": lambda: codec.dumps(lookup),
        "loads LookupResult text (string boundary)": lambda: codec.loads(text),
        "project (gates, canonical bytes, sha256)": lambda: project_lookup(parsed, settings.projection),
    }
    table = Table(title="one record of 20 hits, µs per step (best of 5 × 2000)")
    table.add_column("step")
    table.add_column("µs", justify="right")
    for name, step in steps.items():
        best = min(timeit.repeat(step, number=2000, repeat=5)) / 2000 * 1e6
        table.add_row(name, f"{best:.1f}")
    Console().print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
