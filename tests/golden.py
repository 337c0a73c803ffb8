"""Where the golden cases live (``tests/data/golden``): one definition for every tier."""

from __future__ import annotations

from pathlib import Path

GOLDEN = Path(__file__).resolve().parent / "data" / "golden"
