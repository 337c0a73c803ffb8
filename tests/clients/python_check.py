"""The Python client openapi-python-client generates from docs/openapi.yaml, against a running gateway.

Run by tests/clients/test_generated_clients.py with the generator's own venv (it has httpx and attrs):
``python python_check.py URL TOKEN RECORD_FILE`` prints one JSON object of what it saw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / ".local" / "clients" / "python"))

from evidence_chain_client import AuthenticatedClient  # noqa: E402 - generated, found on the path above
from evidence_chain_client.api.agent import lookup  # noqa: E402
from evidence_chain_client.models import RawHitsValue, ReadyAnswer  # noqa: E402


def main(url: str, token: str, record_file: str) -> None:
    record = RawHitsValue.from_dict(json.loads(Path(record_file).read_text(encoding="utf-8")))
    with AuthenticatedClient(base_url=url, token=token) as client:
        answer = lookup.sync(client=client, body=record)
    seen = {"type": type(answer).__name__}
    if isinstance(answer, ReadyAnswer):
        seen |= {"projection": answer.projection, "projection_sha256": answer.projection_sha256}
    with AuthenticatedClient(base_url=url, token="not-the-token") as client:
        seen["wrong_token"] = lookup.sync_detailed(client=client, body=record).status_code.value
    print(json.dumps(seen, ensure_ascii=False))


if __name__ == "__main__":
    main(*sys.argv[1:4])
