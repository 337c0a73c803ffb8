"""Drafts for set `node` (Node.js heap out of memory, English). See build.py for the format."""
SET = "node"
C1, C2 = "rb-node-heap#chunk-1", "rb-node-heap#chunk-2"
LIM = ["Based on the runbook excerpts and the alert only; no heap snapshot of cart-api was read."]

DRAFTS = [
    # ---------------------------------------------------------------- GROUNDED
    {"id": "nd-01", "label": "G", "cat": "restate", "uns": [],
     "why": "Plain restatement: pod, namespace, the error text, 2Gi and --max-old-space-size=1536 from the query; 134, "
            "SIGABRT and 137 from chunk-1.",
     "analysis": [
         ("a1", "N", ["nd1"], [],
          "Pod cart-api-6c9f8d7b5-tq4mn in storefront crashed with FATAL ERROR: Reached heap limit Allocation failed - "
          "JavaScript heap out of memory; the container limit is 2Gi and --max-old-space-size=1536. V8's old space hit its "
          "limit and the process aborted with exit code 134 (SIGABRT), not the OOM killer's 137."),
     ],
     "conclusion": ("cart-api ran out of V8 heap, not out of container memory.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Watch nodejs_heap_size_used_bytes for cart-api after the restart."),
     ],
     "limits": LIM},

    {"id": "nd-02", "label": "G", "cat": "digit-grouping", "uns": [],
     "why": "300000ms, 60000ms, 5000ms and 65000 written as 300,000 ms, 60,000 ms, 5,000 ms and 65_000 (digit grouping); each "
            "value stays with its own key; 60s is stated.",
     "analysis": [
         ("a1", "N", ["nd1"], [C2],
          "Node.js 18 changed the server defaults: server.requestTimeout is 300,000 ms, server.headersTimeout is 60,000 ms "
          "and server.keepAliveTimeout is 5,000 ms. Leaked sockets hold memory too."),
     ],
     "conclusion": ("cart-api's socket timeouts are worth checking alongside the heap itself.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Behind an AWS ALB with a 60s idle timeout, set server.keepAliveTimeout above it, for example 65_000."),
     ],
     "limits": LIM},

    {"id": "nd-03", "label": "G", "cat": "key-unit", "uns": [],
     "why": "--max-old-space-size=1536 written as 1536 MiB: chunk-1 says the flag is in MiB; 2Gi and 75% are stated.",
     "analysis": [
         ("a1", "N", ["nd1"], [],
          "The heap limit is set with --max-old-space-size=1536, that is 1536 MiB of old space in a container limited to 2Gi; "
          "the runbook puts the flag at about 75% of the container limit."),
     ],
     "conclusion": ("cart-api's heap limit follows the runbook; the heap itself reached 1536 MiB.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Take a heap snapshot before the next crash to see what fills the 1536 MiB."),
     ],
     "limits": LIM},

    {"id": "nd-04", "label": "G", "cat": "range", "uns": [],
     "why": "70-80% (ASCII hyphen) where chunk-1 says 70%~80%; 75% is stated.",
     "analysis": [
         ("a1", "N", ["nd1"], [C1],
          "Steady-state old-space usage should stay at 70-80% of --max-old-space-size, which itself should be about 75% of the "
          "container limit."),
     ],
     "conclusion": ("cart-api left that range and reached the heap limit.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Alert when nodejs_heap_size_used_bytes stays above 70-80% of the heap limit."),
     ],
     "limits": LIM},

    {"id": "nd-05", "label": "G", "cat": "quote-style", "uns": [],
     "why": "The error is quoted word for word in “” with a full stop added at its end; ‘JavaScript heap out of memory’ is a "
            "word-for-word piece.",
     "analysis": [
         ("a1", "N", ["nd1"], [],
          "The container log ends with “FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory.” "
          "This means V8's old space hit its limit."),
     ],
     "conclusion": ("cart-api exhausted its V8 heap.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Search older logs of cart-api for ‘JavaScript heap out of memory’ to see how often it happens."),
     ],
     "limits": LIM},

    {"id": "nd-06", "label": "G", "cat": "placeholder-filled", "uns": [],
     "why": "kubectl logs <pod> -n <namespace> --previous in a code span, filled with the alert's pod and namespace.",
     "analysis": [
         ("a1", "N", ["nd1"], [],
          "Exit code 134 (SIGABRT) identifies V8 aborting on its heap limit, unlike the kernel OOM killer's 137."),
     ],
     "conclusion": ("The restart of cart-api was a heap abort.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Read the last crash with `kubectl logs cart-api-6c9f8d7b5-tq4mn -n storefront --previous`."),
     ],
     "limits": LIM},

    {"id": "nd-07", "label": "G", "cat": "fenced-code", "uns": [],
     "why": "A ```bash fence holding chunk-1's two commands, <pod> and <namespace> filled from the query.",
     "analysis": [
         ("a1", "N", ["nd1"], [],
          "A heap snapshot shows what fills the old space; the process must be started with "
          "`node --heapsnapshot-signal=SIGUSR2 server.js`."),
     ],
     "conclusion": ("A snapshot is needed to find what grows in cart-api's heap.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Start cart-api with the signal flag and trigger a snapshot:\n\n```bash\nnode "
                        "--heapsnapshot-signal=SIGUSR2 server.js\nkubectl exec cart-api-6c9f8d7b5-tq4mn -n storefront -- "
                        "kill -USR2 1\n```"),
     ],
     "limits": LIM},

    {"id": "nd-08", "label": "G", "cat": "own-ids", "uns": [],
     "why": "The texts name the draft's own run_id (run-node-heap-9062) and item ids (a1, a2, p1); every other specific is "
            "stated.",
     "analysis": [
         ("a1", "N", ["nd1"], [],
          "Run run-node-heap-9062: cart-api-6c9f8d7b5-tq4mn hit the V8 heap limit (--max-old-space-size=1536) inside a 2Gi "
          "container."),
         ("a2", "N", ["nd2"], [],
          "cart-api runs Node.js 18.19.0 with NODE_OPTIONS=\"--max-old-space-size=1536 --heapsnapshot-near-heap-limit=2\" and "
          "6 replicas."),
     ],
     "conclusion": ("From a1 and a2: the heap limit is set, and cart-api already writes snapshots near it.", ["a1", "a2"]),
     "actions": [
         ("p1", ["a2"], "p1 (from a2): collect the snapshots that --heapsnapshot-near-heap-limit=2 wrote before the crash."),
     ],
     "limits": LIM},

    {"id": "nd-09", "label": "G", "cat": "common-term", "uns": [],
     "why": "OOM, k8s and GC are common vocabulary used as names; HTTP/1.1, HTTP/2, 134 and the metric are stated.",
     "analysis": [
         ("a1", "N", ["nd1"], [],
          "Exit code 134 is V8's own abort, not a k8s OOM kill; GC time shows in nodejs_gc_duration_seconds."),
         ("a2", "N", ["nd2"], [],
          "cart-api serves HTTP/1.1 and HTTP/2 through the storefront gateway."),
     ],
     "conclusion": ("The crash is a V8 heap limit, not an OOM kill by the kernel.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Graph nodejs_gc_duration_seconds before the crash: GC time grows as the heap nears its limit."),
     ],
     "limits": LIM},

    # ---------------------------------------------------------------- UNGROUNDED
    {"id": "nd-10", "label": "U", "cat": "neighbour-value", "uns": ["5000ms"],
     "why": "5000ms is server.keepAliveTimeout's value; chunk-2 gives server.headersTimeout 60000ms. The value is taken from "
            "the neighbouring key.",
     "analysis": [
         ("a1", "N", ["nd1"], [],
          "Node.js 18 changed the server defaults: server.headersTimeout is 5000ms, so slow clients are cut off early."),
     ],
     "conclusion": ("Timeouts do not explain the heap growth.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Take a heap snapshot of cart-api."),
     ],
     "limits": LIM},

    {"id": "nd-11", "label": "U", "cat": "conversion", "uns": ["5 minutes"],
     "why": "chunk-2 gives server.requestTimeout 300000ms; '5 minutes' is a conversion it does not state.",
     "analysis": [
         ("a1", "N", ["nd1"], [],
          "Since Node.js 18 server.requestTimeout defaults to 5 minutes, so a stuck request holds its memory that long."),
     ],
     "conclusion": ("Long-lived requests may add to cart-api's heap.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Check nodejs_heap_size_used_bytes against request volume."),
     ],
     "limits": LIM},

    {"id": "nd-12", "label": "U", "cat": "number-words", "uns": ["forty-five seconds"],
     "why": "'forty-five seconds' is not stated; chunk-2 gives the ALB idle timeout as 60s.",
     "analysis": [
         ("a1", "N", ["nd1"], [],
          "Behind an AWS ALB with an idle timeout of forty-five seconds, keepAliveTimeout must be longer than the balancer's "
          "idle timeout."),
     ],
     "conclusion": ("cart-api's keepAliveTimeout should exceed the ALB idle timeout.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Set server.keepAliveTimeout to 65000."),
     ],
     "limits": LIM},

    {"id": "nd-13", "label": "U", "cat": "disguise", "uns": ["nodejs_heap_size_t\u043etal_bytes"],
     "why": "A Cyrillic о inside the metric name; it displays nodejs_heap_size_total_bytes, which the evidence does not "
            "state (it names nodejs_heap_size_used_bytes).",
     "analysis": [
         ("a1", "N", ["nd1"], [],
          "prom-client exports nodejs_heap_size_t\u043etal_bytes; the heap grew until V8 aborted with exit code 134."),
     ],
     "conclusion": ("cart-api's heap grows until the limit.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Watch nodejs_gc_duration_seconds as well."),
     ],
     "limits": LIM},

    {"id": "nd-14", "label": "U", "cat": "invented-value", "uns": ["twice"],
     "why": "The query says the pod restarted; 'twice' (a count about the incident) is not stated.",
     "analysis": [
         ("a1", "N", ["nd1"], [],
          "cart-api-6c9f8d7b5-tq4mn restarted twice with FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap "
          "out of memory."),
     ],
     "conclusion": ("cart-api keeps hitting its heap limit.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Read the logs of the crashed container of cart-api-6c9f8d7b5-tq4mn."),
     ],
     "limits": LIM},

    {"id": "nd-15", "label": "U", "cat": "derived", "uns": ["512 MiB"],
     "why": "512 MiB (2Gi minus 1536 MiB) is derived; the evidence does not state it.",
     "analysis": [
         ("a1", "N", ["nd1"], [],
          "With --max-old-space-size=1536 in a 2Gi container, 512 MiB remain for everything outside the old space."),
     ],
     "conclusion": ("The container limit is not what ended cart-api.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Take a heap snapshot."),
     ],
     "limits": LIM},

    {"id": "nd-16", "label": "U", "cat": "wrong-version", "uns": ["20.11.0"],
     "why": "nd2 gives Node.js 18.19.0; 20.11.0 is a version the evidence does not state.",
     "analysis": [
         ("a1", "N", ["nd2"], [],
          "cart-api runs Node.js 18.19.0 (image node:18.19.0-bookworm-slim) with NODE_OPTIONS=\"--max-old-space-size=1536 "
          "--heapsnapshot-near-heap-limit=2\"."),
     ],
     "conclusion": ("cart-api already writes heap snapshots near the limit.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Move cart-api to Node.js 20.11.0 after the leak is fixed."),
     ],
     "limits": LIM},

    {"id": "nd-17", "label": "U", "cat": "invented-quote",
     "uns": ["FATAL ERROR: Ineffective mark-compacts near heap limit Allocation failed - JavaScript heap out of memory"],
     "why": "The quoted error changes the evidence's words ('Reached heap limit' becomes 'Ineffective mark-compacts near heap "
            "limit').",
     "analysis": [
         ("a1", "N", ["nd1"], [],
          "The container log ends with “FATAL ERROR: Ineffective mark-compacts near heap limit Allocation failed - JavaScript "
          "heap out of memory”, which means V8's old space hit its limit."),
     ],
     "conclusion": ("cart-api exhausted its V8 heap.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Take a heap snapshot of cart-api."),
     ],
     "limits": LIM},

    {"id": "nd-18", "label": "U", "cat": "markdown-split", "uns": ["**1**20s"],
     "why": "Bold splits the number: **1**20s displays 120s, which the evidence does not state.",
     "analysis": [
         ("a1", "N", ["nd1"], [],
          "Behind an AWS ALB with an idle timeout of 60s, keepAliveTimeout must be longer than the balancer's idle timeout."),
     ],
     "conclusion": ("cart-api's keep-alive must outlast the ALB's idle timeout.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Set server.keepAliveTimeout to **1**20s."),
     ],
     "limits": LIM},

    {"id": "nd-19", "label": "U", "cat": "conversion", "uns": ["1.5 GiB"],
     "why": "--max-old-space-size=1536 is in MiB; 1.5 GiB is a conversion the evidence does not state.",
     "analysis": [
         ("a1", "N", ["nd1"], [],
          "--max-old-space-size=1536 gives V8 1.5 GiB of old space inside the 2Gi container."),
     ],
     "conclusion": ("cart-api filled its old space and aborted.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Take a heap snapshot of cart-api on the next run."),
     ],
     "limits": LIM},
]
