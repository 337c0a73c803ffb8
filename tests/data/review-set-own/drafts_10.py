"""Drafts for set `cass` (Cassandra tombstones and read timeouts, English). See build.py for the format."""
SET = "cass"
C1, C2 = "db-cass-tomb#chunk-1", "db-cass-tomb#chunk-2"
LIM = ["Based on the runbook excerpts and the alert only; nodetool output of cass-ring-eu was not read."]

DRAFTS = [
    # ---------------------------------------------------------------- GROUNDED
    {"id": "cs-01", "label": "G", "cat": "restate", "uns": [],
     "why": "Plain restatement of cs1's query (10.30.8.21, 2.7%) and chunk-1 (100000, the exception, the nodetool command).",
     "analysis": [
         ("a1", "N", ["cs1"], [],
          "cass-ring-eu has read timeouts on orders.order_events with TombstoneOverwhelmingException on node 10.30.8.21; the "
          "ReadTimeout rate is 2.7%. Above tombstone_failure_threshold (default 100000) a read is aborted with "
          "TombstoneOverwhelmingException and the coordinator returns a ReadFailure."),
     ],
     "conclusion": ("Reads of orders.order_events scan too many tombstones and are aborted.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Run nodetool tablestats orders.order_events on 10.30.8.21."),
     ],
     "limits": LIM},

    {"id": "cs-02", "label": "G", "cat": "restate", "uns": [],
     "why": "Plain restatement of cs2's inventory: 4.1.3, JDK 11, 11.0.21, 12 nodes, RF 3, 7 days, 2025-03-28, 4.17.0, 2s.",
     "analysis": [
         ("a1", "N", ["cs2"], [],
          "cass-ring-eu runs Apache Cassandra 4.1.3 on JDK 11 (Temurin 11.0.21) with 12 nodes in two racks and RF 3 for "
          "keyspace orders. Reaper runs incremental repairs of orders every 7 days; the last full repair finished on "
          "2025-03-28. Clients use the DataStax Java driver 4.17.0 with LOCAL_QUORUM and a request timeout of 2s."),
     ],
     "conclusion": ("Repairs of keyspace orders run regularly.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Confirm in Reaper that the incremental repairs of orders every 7 days succeed."),
     ],
     "limits": LIM},

    {"id": "cs-03", "label": "G", "cat": "digit-grouping", "uns": [],
     "why": "1000, 100000 and 864000 written as 1,000, 100,000 and 864,000 (digit grouping); 864,000 seconds carries the "
            "unit gc_grace_seconds fixes; 10 days is stated.",
     "analysis": [
         ("a1", "N", ["cs1"], [C1],
          "tombstone_warn_threshold defaults to 1,000 and tombstone_failure_threshold to 100,000. Tombstones become purgeable "
          "only after gc_grace_seconds (default 864,000 seconds, 10 days) and a compaction that includes every copy of the "
          "partition."),
     ],
     "conclusion": ("Deleted rows of orders.order_events stay as tombstones for at least 10 days.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Find the partitions of orders.order_events that exceed 100,000 tombstones."),
     ],
     "limits": LIM},

    {"id": "cs-04", "label": "G", "cat": "key-unit", "uns": [],
     "why": "read_request_timeout_in_ms: 5000 and range_request_timeout_in_ms: 10000 written as 5000 ms and 10000 ms: the key "
            "names fix the unit; each value stays with its own key.",
     "analysis": [
         ("a1", "N", ["cs1"], [C2],
          "The coordinator gives up on a read after read_request_timeout_in_ms: 5000, that is 5000 ms, and on a range read "
          "after range_request_timeout_in_ms: 10000, that is 10000 ms (cassandra.yaml)."),
     ],
     "conclusion": ("Reads that scan many tombstones run into the 5000 ms read timeout before they finish.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Leave read_request_timeout_in_ms at 5000 and fix the tombstones instead."),
     ],
     "limits": LIM},

    {"id": "cs-05", "label": "G", "cat": "number-words", "uns": [],
     "why": "one thousand = 1000, one hundred thousand = 100000, ten days = 10 days: number words for stated values.",
     "analysis": [
         ("a1", "N", ["cs1"], [],
          "A read that scans more than one thousand tombstones logs a warning, and one that passes one hundred thousand is "
          "aborted. Tombstones can be purged only after gc_grace_seconds, ten days by default."),
     ],
     "conclusion": ("orders.order_events accumulates tombstones faster than they can be purged.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Check the tombstone warnings in the logs of 10.30.8.21."),
     ],
     "limits": LIM},

    {"id": "cs-06", "label": "G", "cat": "version-prefix", "uns": [],
     "why": "Cassandra 4.1.3 written as v4.1.3 and JDK 11 as JDK11; 4.1 and read_request_timeout: 5000ms are stated.",
     "analysis": [
         ("a1", "N", ["cs2"], [],
          "cass-ring-eu runs Apache Cassandra v4.1.3 on JDK11."),
         ("a2", "N", ["cs1"], [],
          "In 4.1 read_request_timeout_in_ms was renamed read_request_timeout: 5000ms."),
     ],
     "conclusion": ("On v4.1.3 the timeout appears as read_request_timeout: 5000ms in cassandra.yaml.", ["a1", "a2"]),
     "actions": [
         ("p1", ["a1", "a2"], "Read read_request_timeout in the cassandra.yaml of 10.30.8.21."),
     ],
     "limits": LIM},

    {"id": "cs-07", "label": "G", "cat": "own-ids", "uns": [],
     "why": "The texts name the draft's own run_id (run-cass-tomb-3905) and item ids (a1, a2, p1); the rest is stated.",
     "analysis": [
         ("a1", "N", ["cs1"], [],
          "run-cass-tomb-3905: reads of orders.order_events on 10.30.8.21 fail with TombstoneOverwhelmingException."),
         ("a2", "N", ["cs2"], [],
          "The last full repair of cass-ring-eu finished on 2025-03-28."),
     ],
     "conclusion": ("a1 and a2 together: tombstones pile up in orders.order_events while repairs keep running.",
                    ["a1", "a2"]),
     "actions": [
         ("p1", ["a1"], "Per a1, run `nodetool tablehistograms orders order_events` on 10.30.8.21."),
     ],
     "limits": LIM},

    {"id": "cs-08", "label": "G", "cat": "range", "uns": [],
     "why": "6–9 hours (en dash) where chunk-2 says 6 to 9 hours; 1.2TB and 24MiB/s are stated.",
     "analysis": [
         ("a1", "N", ["cs1"], [C2],
          "A full repair of a 1.2TB node takes 6–9 hours at the default stream_throughput_outbound of 24MiB/s; run nodetool "
          "repair -pr on every node at least once within gc_grace_seconds."),
     ],
     "conclusion": ("Repairs must be planned so that every node is covered within gc_grace_seconds.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Schedule nodetool repair -pr node by node, allowing 6–9 hours each."),
     ],
     "limits": LIM},

    {"id": "cs-09", "label": "G", "cat": "quote-style", "uns": [],
     "why": "“Average tombstones per slice (last five minutes)” and «Scanned over 100001 tombstones during query» are word "
            "for word.",
     "analysis": [
         ("a1", "N", ["cs1"], [],
          "The log of 10.30.8.21 should show «Scanned over 100001 tombstones during query» for orders.order_events; "
          "nodetool tablestats reports “Average tombstones per slice (last five minutes)”."),
     ],
     "conclusion": ("The tombstone count per read exceeds the failure threshold.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Read “Average tombstones per slice (last five minutes)” for orders.order_events."),
     ],
     "limits": LIM},

    # ---------------------------------------------------------------- UNGROUNDED
    {"id": "cs-10", "label": "U", "cat": "neighbour-value", "uns": ["1000"],
     "why": "1000 is tombstone_warn_threshold's default; chunk-1 gives tombstone_failure_threshold 100000. The value is taken "
            "from the neighbouring key.",
     "analysis": [
         ("a1", "N", ["cs1"], [],
          "Above tombstone_failure_threshold (default 1000) the read is aborted with TombstoneOverwhelmingException."),
     ],
     "conclusion": ("Reads of orders.order_events are aborted.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Run nodetool tablestats orders.order_events."),
     ],
     "limits": LIM},

    {"id": "cs-11", "label": "U", "cat": "derived", "uns": ["2025-04-07"],
     "why": "2025-04-07 (2025-03-28 plus 10 days) is a derived date; the evidence does not state it.",
     "analysis": [
         ("a1", "N", ["cs1", "cs2"], [],
          "The last full repair finished on 2025-03-28 and gc_grace_seconds is 10 days by default, so the next full repair is "
          "due by 2025-04-07."),
     ],
     "conclusion": ("A full repair is due soon.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Run nodetool repair -pr on every node."),
     ],
     "limits": LIM},

    {"id": "cs-12", "label": "U", "cat": "wrong-version", "uns": ["4.1.4"],
     "why": "cs2 gives Cassandra 4.1.3; 4.1.4, stated as a fact about the cluster, is not in the evidence.",
     "analysis": [
         ("a1", "N", ["cs2"], [],
          "cass-ring-eu runs Apache Cassandra 4.1.4 on JDK 11 with 12 nodes in two racks."),
     ],
     "conclusion": ("Repairs of keyspace orders are handled by Reaper.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Confirm in Reaper that the incremental repairs of orders succeed."),
     ],
     "limits": LIM},

    {"id": "cs-13", "label": "U", "cat": "negation", "uns": ["172800"],
     "why": "'never lower it below 172800' states 172800, which the evidence does not give.",
     "analysis": [
         ("a1", "N", ["cs1"], [],
          "Lowering gc_grace_seconds below the repair interval risks resurrected data."),
     ],
     "conclusion": ("gc_grace_seconds cannot simply be lowered.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Never lower gc_grace_seconds below 172800."),
     ],
     "limits": LIM},

    {"id": "cs-14", "label": "U", "cat": "near-miss-identifier", "uns": ["tombstone_failure_treshold"],
     "why": "tombstone_failure_treshold is a near miss of the stated key tombstone_failure_threshold (one letter dropped).",
     "analysis": [
         ("a1", "N", ["cs1"], [],
          "Above tombstone_failure_treshold (default 100000) the read is aborted with TombstoneOverwhelmingException."),
     ],
     "conclusion": ("Reads of orders.order_events are aborted.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Run nodetool tablestats orders.order_events."),
     ],
     "limits": LIM},

    {"id": "cs-15", "label": "U", "cat": "invented-quote", "uns": ["Read timed out after scanning 100001 tombstones"],
     "why": "The quotation in «» is not in the evidence (the log line reads 'Scanned over 100001 tombstones during query ...').",
     "analysis": [
         ("a1", "N", ["cs1"], [],
          "The log of 10.30.8.21 shows «Read timed out after scanning 100001 tombstones» for orders.order_events."),
     ],
     "conclusion": ("Reads are aborted on tombstones.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Run nodetool tablestats orders.order_events."),
     ],
     "limits": LIM},

    {"id": "cs-16", "label": "U", "cat": "invented-value", "uns": ["half"],
     "why": "A fraction about the incident that is not stated: cs2 gives 12 nodes, nothing about how many time out.",
     "analysis": [
         ("a1", "N", ["cs1", "cs2"], [],
          "The read timeouts come from half of the 12 nodes of cass-ring-eu, with 10.30.8.21 the worst."),
     ],
     "conclusion": ("The tombstone problem is spread over the ring.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Run nodetool tablestats orders.order_events on each node."),
     ],
     "limits": LIM},

    {"id": "cs-17", "label": "U", "cat": "disguise", "uns": ["\u0665\u0660\u0660"],
     "why": "Arabic-Indic digits display 500; chunk-1 gives tombstone_warn_threshold 1000.",
     "analysis": [
         ("a1", "N", ["cs1"], [],
          "A read that scans more than tombstone_warn_threshold (default \u0665\u0660\u0660) tombstones logs a warning."),
     ],
     "conclusion": ("Warnings appear long before reads fail.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Search the logs of 10.30.8.21 for tombstone warnings."),
     ],
     "limits": LIM},

    {"id": "cs-18", "label": "U", "cat": "disguise", "uns": ["1\u00ad500"],
     "why": "A soft hyphen (U+00AD, a format character) inside the number: it displays 1500, which the evidence does not state.",
     "analysis": [
         ("a1", "N", ["cs1"], [],
          "nodetool tablestats orders.order_events reports Average tombstones per slice (last five minutes)."),
     ],
     "conclusion": ("The per-slice average shows which tables scan the most tombstones.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Flag tables whose average tombstones per slice exceed 1\u00ad500."),
     ],
     "limits": LIM},

    {"id": "cs-19", "label": "U", "cat": "partial-number", "uns": ["100"],
     "why": "chunk-1 gives tombstone_warn_threshold 1000; `100` is not stated anywhere in cs1.",
     "analysis": [
         ("a1", "N", ["cs1"], [],
          "A read that scans more than tombstone_warn_threshold (default `100`) tombstones logs a warning."),
     ],
     "conclusion": ("Warnings appear long before reads fail.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Search the logs of 10.30.8.21 for tombstone warnings."),
     ],
     "limits": LIM},

    {"id": "cs-20", "label": "U", "cat": "slash-list", "uns": ["LOCAL_ONE/LOCAL_QUORUM"],
     "why": "A slash list with an unstated member: cs2 gives LOCAL_QUORUM; LOCAL_ONE is not stated.",
     "analysis": [
         ("a1", "N", ["cs2"], [],
          "Clients use the DataStax Java driver 4.17.0 with consistency LOCAL_ONE/LOCAL_QUORUM and a request timeout of 2s."),
     ],
     "conclusion": ("The driver's 2s timeout is shorter than the coordinator's.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Check the driver's timeout settings."),
     ],
     "limits": LIM},

    {"id": "cs-21", "label": "U", "cat": "range", "uns": ["6 to 12 hours"],
     "why": "A range with an unstated end: chunk-2 gives 6 to 9 hours; 12 hours is not stated.",
     "analysis": [
         ("a1", "N", ["cs1"], [],
          "A full repair of a 1.2TB node takes 6 to 12 hours at the default stream_throughput_outbound of 24MiB/s."),
     ],
     "conclusion": ("Repairs take many hours per node.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Schedule nodetool repair -pr node by node."),
     ],
     "limits": LIM},
]
