"""Regenerate the blind review set: ledger.jsonl, drafts.jsonl, labels.jsonl.

    python3 build.py    # writes the three files (deterministic bytes)

- The ledger: every raw-hits record of `evidence.py` goes through the project's `evidence-chain pipe`
  (the command named by EVIDENCE_CHAIN, default `evidence-chain` on PATH; for example
  `EVIDENCE_CHAIN=../../../.venv/bin/evidence-chain`). Nothing outside this folder is read.
- The drafts and labels: the modules `drafts_01.py` ... `drafts_08.py`, one per evidence set. Each holds
  `SET` (a key of `evidence.SETS`) and `DRAFTS`, a list of dicts:

      {"id": "ing-01", "label": "G" | "U", "cat": "restate", "uns": [...], "why": "...",
       "analysis": [(item_id, "N" | "NEG", [call names], [document ids], content), ...],
       "conclusion": (content, [analysis ids]) | None,
       "actions": [(action_id, [analysis ids], content), ...],
       "limits": ["..."]}

  Call names are the short names of `evidence.CALLS`. The labels were written from LABELS.md alone.

The build checks only what the labels promise about structure (SPEC 4 rules A-C: real READY entries of
the draft's own run, NORMAL cites EVIDENCE_FOUND, NEGATIVE_OBSERVATION cites NO_EVIDENCE, document ids
in the cited projections, known analysis ids) and that each `uns` string occurs in the draft's reviewed
texts. It never runs the review of claims.
"""
from __future__ import annotations

import hashlib
import importlib
import os
import subprocess
import sys

import orjson

sys.dont_write_bytecode = True  # keep the folder free of __pycache__
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from evidence import CALLS, RECORDS, SETS  # noqa: E402

CLI = os.environ.get("EVIDENCE_CHAIN", "evidence-chain")
MODULES = [f"drafts_{i:02d}" for i in range(1, 9)]
LABEL = {"G": "GROUNDED", "U": "UNGROUNDED"}
KIND = {"N": "NORMAL", "NEG": "NEGATIVE_OBSERVATION"}


def ledger_entry(run_id: str, call: str, projection: bytes) -> dict:
    """A READY ledger entry as SPEC 3.6 stores it (the fields the guard reads)."""
    return dict(run_id=run_id, tool_call_id=call, status="READY",
                evidence_status=orjson.loads(projection)["evidence_status"], projection=projection.decode(),
                projection_sha256=hashlib.sha256(projection).hexdigest())


def build_ledger():
    lines = [orjson.dumps(r) for r in RECORDS]
    env = dict(os.environ)
    env.pop("EC_AUDIT_DSN", None)
    out = subprocess.run([CLI, "pipe"], input=b"\n".join(lines) + b"\n", capture_output=True, env=env,
                         check=True).stdout.splitlines()
    if len(out) != len(RECORDS):
        raise SystemExit(f"pipe printed {len(out)} lines for {len(RECORDS)} records")
    for r, p in zip(RECORDS, out, strict=True):
        if b"dead_letter" in p:
            raise SystemExit(f"{r['tool_call_id']}: rejected by evidence-chain pipe: {p!r}")
        if orjson.loads(p)["truncated"]:
            raise SystemExit(f"{r['tool_call_id']}: projection truncated")
    return [ledger_entry(r["run_id"], r["tool_call_id"], p) for r, p in zip(RECORDS, out, strict=True)]


def build_drafts(entries):
    by_key = {(e["run_id"], e["tool_call_id"]): e for e in entries}
    drafts, labels, seen = [], [], set()
    for mod_name in MODULES:
        mod = importlib.import_module(mod_name)
        run_id = SETS[mod.SET][0]
        for spec in mod.DRAFTS:
            did = spec["id"]
            where = f"{mod_name}:{did}"
            if did in seen:
                raise SystemExit(f"{where}: duplicate draft id")
            seen.add(did)
            analysis, texts = [], []
            for item_id, kind, calls, docs, content in spec["analysis"]:
                tcids = []
                for c in calls:
                    s, tcid = CALLS[c]
                    if s != mod.SET:
                        raise SystemExit(f"{where}: {c} is not a call of set {mod.SET}")
                    e = by_key[(run_id, tcid)]
                    if e["status"] != "READY":
                        raise SystemExit(f"{where}: {c} is not READY")
                    want = "EVIDENCE_FOUND" if kind == "N" else "NO_EVIDENCE"
                    if e["evidence_status"] != want:
                        raise SystemExit(f"{where}: {item_id} ({kind}) cites {c} ({e['evidence_status']})")
                    tcids.append(tcid)
                known = {it["document_id"] for c in tcids
                         for it in orjson.loads(by_key[(run_id, c)]["projection"])["evidence"]}
                for d in docs:
                    if d not in known:
                        raise SystemExit(f"{where}: {item_id} cites unknown document {d}")
                item = {"id": item_id, "kind": KIND[kind], "content": content, "tool_call_ids": tcids}
                if docs:
                    item["document_ids"] = list(docs)
                analysis.append(item)
                texts.append(content)
            ids = {it["id"] for it in analysis}
            if len(ids) != len(analysis):
                raise SystemExit(f"{where}: duplicate analysis id")
            conclusion = None
            if spec["conclusion"] is not None:
                content, based = spec["conclusion"]
                if not based or not set(based) <= ids:
                    raise SystemExit(f"{where}: conclusion based on {based}")
                conclusion = {"content": content, "based_on_analysis_ids": list(based)}
                texts.append(content)
            plan = []
            for act_id, based, content in spec["actions"]:
                if not based or not set(based) <= ids or act_id in ids:
                    raise SystemExit(f"{where}: action {act_id} based on {based}")
                plan.append({"id": act_id, "content": content, "based_on_analysis_ids": list(based)})
                texts.append(content)
            if not spec["limits"]:
                raise SystemExit(f"{where}: no limitations")
            label = LABEL[spec["label"]]
            uns = list(spec["uns"])
            if (label == "GROUNDED") != (not uns):
                raise SystemExit(f"{where}: {label} with unsupported {uns}")
            if label == "UNGROUNDED" and len(uns) != 1:
                raise SystemExit(f"{where}: an UNGROUNDED draft slips in exactly one specific, not {uns}")
            for u in uns:
                if not any(u in t for t in texts):
                    raise SystemExit(f"{where}: unsupported {u!r} is not written in the draft")
            drafts.append({"run_id": run_id, "draft_id": did, "attempt": 1, "analysis": analysis,
                           "conclusion": conclusion, "action_plan": plan, "limitations": list(spec["limits"])})
            labels.append({"run_id": run_id, "draft_id": did, "label": label, "category": spec["cat"],
                           "unsupported": uns, "why": spec["why"]})
    return drafts, labels


def write_jsonl(name, rows):
    with open(os.path.join(HERE, name), "wb") as f:
        for row in rows:
            f.write(orjson.dumps(row) + b"\n")


def main(argv):
    if argv:
        raise SystemExit(f"usage: python3 build.py (no arguments), not {argv}")
    entries = build_ledger()
    drafts, labels = build_drafts(entries)
    write_jsonl("ledger.jsonl", entries)
    write_jsonl("drafts.jsonl", drafts)
    write_jsonl("labels.jsonl", labels)
    n = {k: sum(1 for x in labels if x["label"] == k) for k in ("GROUNDED", "UNGROUNDED")}
    print(f"{len(entries)} ledger entries, {len(drafts)} drafts ({n['GROUNDED']} GROUNDED, "
          f"{n['UNGROUNDED']} UNGROUNDED)")


if __name__ == "__main__":
    main(sys.argv[1:])
