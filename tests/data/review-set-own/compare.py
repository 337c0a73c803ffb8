"""Compare verdicts with the labels of the project's own review set.

    evidence-chain verify --ledger ledger.jsonl < drafts.jsonl > verdicts.jsonl
    python3 compare.py verdicts.jsonl

Expected: GROUNDED -> PASS, UNGROUNDED -> REJECT (attempt is 1). Prints, per label and category, how many
drafts the verdicts get wrong (false REJECTs of GROUNDED drafts, misses of UNGROUNDED drafts), with the ids,
and the shares that issue 39's acceptance bounds (at most 2 % of GROUNDED refused, at most 5 % of
UNGROUNDED passed; the `disguise` line must show 0 misses). It reports; it never changes a label.
"""
from __future__ import annotations

import collections
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main(path: str) -> None:
    labels = {}
    with open(os.path.join(HERE, "labels.jsonl"), encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            labels[(row["run_id"], row["draft_id"])] = row
    verdicts = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            v = json.loads(line)
            verdicts[(v["run_id"], v["draft_id"])] = v
    missing = sorted(set(labels) - set(verdicts))
    if missing:
        raise SystemExit(f"{len(missing)} drafts have no verdict, e.g. {missing[0]}")
    total = collections.Counter()
    wrong = collections.defaultdict(list)
    for key, row in labels.items():
        v = verdicts[key]
        total[(row["label"], row["category"])] += 1
        ok = (v["verdict"] == "PASS") if row["label"] == "GROUNDED" else (v["verdict"] != "PASS")
        if not ok:
            wrong[(row["label"], row["category"])].append(row["draft_id"])
    for label, what in (("GROUNDED", "false REJECTs"), ("UNGROUNDED", "misses (PASS)")):
        n = sum(c for (lab, _), c in total.items() if lab == label)
        bad = sum(len(ids) for (lab, _), ids in wrong.items() if lab == label)
        share = 100.0 * bad / n if n else 0.0
        print(f"{label}: {n} drafts, {bad} {what} ({share:.1f} %)")
        for (lab, cat), c in sorted(total.items()):
            if lab != label:
                continue
            ids = wrong.get((lab, cat), [])
            print(f"  {cat:22s} {len(ids):3d} / {c:3d}  {' '.join(ids)}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/dev/stdin")
