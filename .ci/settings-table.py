"""Prints the README settings table from streams.settings (run: .venv/bin/python .ci/settings-table.py)."""
from pydantic import BaseModel, SecretStr
from streams.settings import Settings
rows = ["| variable | default | meaning |", "| --- | --- | --- |"]
def show(v):
    if isinstance(v, SecretStr): return v.get_secret_value()
    if isinstance(v, frozenset): return ",".join(sorted(v))
    if v is None: return "(empty)"
    if v == "": return "(empty)"
    return str(v)
for name, f in Settings.model_fields.items():
    if isinstance(f.default, BaseModel):
        for sub, sf in type(f.default).model_fields.items():
            rows.append(f"| `EC_{name.upper()}__{sub.upper()}` | `{sf.default}` | {sf.description} |")
    else:
        d = show(f.default)
        d = f"`{d}`" if d != "(empty)" else d
        rows.append(f"| `EC_{name.upper()}` | {d} | {f.description} |")
print("\n".join(rows))
