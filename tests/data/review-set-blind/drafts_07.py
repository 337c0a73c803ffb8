"""Drafts for set `lsq` (Logstash pipeline backpressure, English). See build.py for the format."""
SET = "lsq"
L1, L2 = "kb-logstash-pq#chunk-1", "kb-logstash-pq#chunk-2"
LIM = ["Based on the runbook excerpts and the alert only; the node stats of logstash-ingest-02 were not read."]

DRAFTS = [
    # ---------------------------------------------------------------- GROUNDED
    {"id": "ls-01", "label": "G", "cat": "restate", "uns": [],
     "why": "Host, pipeline, 18k/s, 6k/s, 92% of 8gb and 'from 125 to 250' are restated from ls1 (query and excerpts), "
            "with the stats URL; the negative item restates its own query (path, 09:40 UTC); bullets, bold, code spans.",
     "analysis": [
         ("a1", "N", ["ls1"], [],
          "- Pipeline `main` on **logstash-ingest-02** is under backpressure: events in 18k/s vs out 6k/s, and the "
          "persisted queue is at 92% of 8gb.\n"
          "- Once the queue is full, backpressure reaches the inputs and the Beats clients retry with back-off.\n"
          "- The runbook's tuning for an Elasticsearch bulk output: raise pipeline.batch.size from 125 to 250."),
         ("a2", "NEG", ["ls3"], [],
          "No data came back on the disk IOPS of /var/lib/logstash/queue on logstash-ingest-02 since 09:40 UTC."),
     ],
     "conclusion": ("The output side of main cannot keep up with its inputs; the queue only delays the moment the "
                    "inputs are blocked.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Compare events.in with events.out via `GET http://localhost:9600/_node/stats/pipelines?pretty`."),
         ("p2", ["a2"], "Read the disk IOPS of /var/lib/logstash/queue since 09:40 UTC from the host metrics directly."),
     ],
     "limits": LIM},

    {"id": "ls-02", "label": "G", "cat": "windows-path", "uns": [],
     "why": "The Windows paths C:\\logstash\\config\\logstash.yml and C:\\logstash\\config\\pipelines.yml are restated "
            "exactly (backslashes) in code spans; 125 and the setting names are stated; main is in ls1's query (the "
            "query counts even with document_ids).",
     "analysis": [
         ("a1", "N", ["ls1"], [L2],
          "On Windows hosts the settings live in `C:\\logstash\\config\\logstash.yml`, and the pipelines themselves "
          "(main included) are declared in `C:\\logstash\\config\\pipelines.yml`."),
     ],
     "conclusion": ("Any tuning of main on a Windows host goes into those files.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Check pipeline.batch.size (default 125) and pipeline.workers in "
                        "C:\\logstash\\config\\logstash.yml."),
     ],
     "limits": LIM},

    {"id": "ls-03", "label": "G", "cat": "units", "uns": [],
     "why": "50 ms → 50 milliseconds; timeout_millis 30000 → 30000 ms (the unit its key name fixes, LABELS.md fine "
            "point); 2s → 2 seconds, 64s → 64 seconds.",
     "analysis": [
         ("a1", "N", ["ls1"], [L2],
          "pipeline.batch.delay is 50 milliseconds, and a grok filter gives up after timeout_millis, 30000 ms by default."),
         ("a2", "N", ["ls2"], [],
          "The elasticsearch output retries 429 responses starting at 2 seconds and doubling up to 64 seconds."),
     ],
     "conclusion": ("Neither the batch delay nor the grok timeout explains the gap; retries against Elasticsearch do.",
                    ["a1", "a2"]),
     "actions": [
         ("p1", ["a2"], "Check whether es-logs-prod rejects bulk requests."),
     ],
     "limits": LIM},

    {"id": "ls-04", "label": "G", "cat": "digit-grouping", "uns": [],
     "why": "10,000 and '30 000' are the stated 10000 and 30000 with digit grouping (comma, space).",
     "analysis": [
         ("a1", "N", ["ls2"], [],
          "Elasticsearch rejects bulk requests with HTTP 429 and es_rejected_execution_exception once the write thread "
          "pool queue (thread_pool.write.queue_size, default 10,000) is full."),
         ("a2", "N", ["ls1"], [],
          "A runaway grok match is stopped by timeout_millis (default 30 000)."),
     ],
     "conclusion": ("The write queue of es-logs-prod filling up is the likelier cause of the backpressure on "
                    "logstash-ingest-02.", ["a1", "a2"]),
     "actions": [
         ("p1", ["a1"], "Run GET _cat/thread_pool/write?v&h=node_name,active,queue,rejected against es-logs-prod."),
     ],
     "limits": LIM},

    {"id": "ls-05", "label": "G", "cat": "range", "uns": [],
     "why": "'4–8g' is the stated range 4g to 8g; '250–500' has both ends stated (raise the batch to 250 or 500); 125, 8g "
            "and the file are stated.",
     "analysis": [
         ("a1", "N", ["ls1"], [L2],
          "Give the JVM a heap of 4–8g, with -Xms and -Xmx equal in config/jvm.options; above 8g GC pauses grow. Raising "
          "pipeline.batch.size from its default of 125 to 250–500 helps when the output is an Elasticsearch bulk request."),
     ],
     "conclusion": ("Tuning logstash-ingest-02 can help the output keep up, within the runbook's heap range.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Raise pipeline.batch.size to 250 first and keep the heap at 4–8g."),
     ],
     "limits": LIM},

    {"id": "ls-06", "label": "G", "cat": "multiplier", "uns": [],
     "why": "'x2' and '2×' write the stated doubling as a multiplier in digits (LABELS.md counts 'twice'/'翻倍' as numbers; "
            "this one is stated); 2s and 64s are restated.",
     "analysis": [
         ("a1", "N", ["ls2"], [],
          "The output retries 429 responses without limit: retry_initial_interval 2s, then x2 on every retry up to "
          "retry_max_interval 64s."),
     ],
     "conclusion": ("Rejections from es-logs-prod turn into retries with a 2× longer wait each time, which Logstash "
                    "passes upstream as backpressure.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Watch the rejected column of GET _cat/thread_pool/write?v&h=node_name,active,queue,rejected on es-logs-prod "
                        "while the backlog drains."),
     ],
     "limits": LIM},

    {"id": "ls-07", "label": "G", "cat": "plural-number", "uns": [],
     "why": "'HTTP 429s' and 'those 429s' are the stated status code 429 with an English plural s (many responses), not a "
            "unit.",
     "analysis": [
         ("a1", "N", ["ls2"], [],
          "es-logs-prod is answering bulk requests from logstash-ingest-02 with HTTP 429s (es_rejected_execution_exception); "
          "the Logstash elasticsearch output retries those 429s without limit, so they show up as backpressure, not as "
          "lost events."),
     ],
     "conclusion": ("No events are being lost; they are queued and retried.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Check thread_pool.write.queue_size on es-logs-prod (default 10000)."),
     ],
     "limits": LIM},

    {"id": "ls-08", "label": "G", "cat": "common-term", "uns": [],
     "why": "CPU, HTTP, JVM, GC and I/O (i/o in the quoted line) are common vocabulary used as names; the quoted line, "
            "8.11.1, 6 data nodes and 16 vCPU are restated.",
     "analysis": [
         ("a1", "N", ["ls1"], [],
          "pipeline.workers defaults to the number of CPU cores; a worker_concurrency close to pipeline.workers means "
          "every worker is busy. The Beats clients log \"Failed to publish events caused by: read tcp i/o timeout\"."),
         ("a2", "N", ["ls2"], [],
          "es-logs-prod runs Elasticsearch 8.11.1 on 6 data nodes with 16 vCPU each and answers rejected bulk requests "
          "with HTTP 429."),
     ],
     "conclusion": ("The bottleneck is on the output side: es-logs-prod rejects bulk writes over HTTP, and the pipeline's "
                    "workers wait on it.", ["a1", "a2"]),
     "actions": [
         ("p1", ["a1"], "Keep the JVM heap within the runbook's 4g to 8g so GC pauses do not add to the delay."),
     ],
     "limits": LIM},

    # ---------------------------------------------------------------- UNGROUNDED
    {"id": "ls-09", "label": "U", "cat": "derived", "uns": ["3×"],
     "why": "3× (18k/s / 6k/s) is a derived ratio; the evidence states only the two rates.",
     "analysis": [
         ("a1", "N", ["ls1"], [],
          "Events come into main at 18k/s but leave at 6k/s: the inputs outpace the outputs 3×, and the persisted queue "
          "is at 92% of 8gb."),
     ],
     "conclusion": ("The queue of logstash-ingest-02 will fill up soon.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Compare events.in with events.out per pipeline."),
     ],
     "limits": LIM},

    {"id": "ls-10", "label": "U", "cat": "unit-change", "uns": ["64ms"],
     "why": "The evidence gives retry_max_interval 64s; 64ms is a different quantity (the unit changed).",
     "analysis": [
         ("a1", "N", ["ls2"], [],
          "The elasticsearch output retries 429 responses without limit, starting at retry_initial_interval 2s and "
          "doubling up to retry_max_interval 64ms."),
     ],
     "conclusion": ("Rejections from es-logs-prod show up as backpressure on logstash-ingest-02.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "GET _cat/thread_pool/write?v&h=node_name,active,queue,rejected"),
     ],
     "limits": LIM},

    {"id": "ls-11", "label": "U", "cat": "rounded", "uns": ["90%"],
     "why": "The query says 92%; 'about 90%' is a rounded value the evidence does not state.",
     "analysis": [
         ("a1", "N", ["ls1"], [],
          "The persisted queue of main on logstash-ingest-02 is about 90% full (8gb); once it is full, backpressure "
          "reaches the inputs."),
     ],
     "conclusion": ("The pipeline is close to blocking its inputs.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Compare queue.queue_size_in_bytes with queue.max_queue_size_in_bytes."),
     ],
     "limits": LIM},

    {"id": "ls-12", "label": "U", "cat": "near-miss-identifier", "uns": ["pipeline.batch_size"],
     "why": "pipeline.batch_size changes a separator of the stated pipeline.batch.size (a near miss).",
     "analysis": [
         ("a1", "N", ["ls1"], [],
          "pipeline.batch_size defaults to 125; raising it to 250 or 500 helps when the output is an Elasticsearch bulk "
          "request."),
     ],
     "conclusion": ("Larger batches could raise the output rate of main.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Raise the batch size of main to 250 and compare events.out."),
     ],
     "limits": LIM},

    {"id": "ls-13", "label": "U", "cat": "invented-quote", "uns": ["Failed to publish events caused by: connection reset by peer"],
     "why": "The quoted Beats log line changes the evidence's words ('read tcp i/o timeout' becomes 'connection reset by "
            "peer').",
     "analysis": [
         ("a1", "N", ["ls1"], [],
          "The Beats clients log “Failed to publish events caused by: connection reset by peer” and retry with back-off "
          "while the queue of main is full."),
     ],
     "conclusion": ("filebeat is blocked by the backpressure of logstash-ingest-02.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Check GET http://localhost:9600/_node/stats/pipelines?pretty on logstash-ingest-02."),
     ],
     "limits": LIM},

    {"id": "ls-14", "label": "U", "cat": "wrong-version", "uns": ["8.11.3"],
     "why": "The evidence gives Elasticsearch 8.11.1; 8.11.3 is a version it does not state.",
     "analysis": [
         ("a1", "N", ["ls2"], [],
          "es-logs-prod runs Elasticsearch 8.11.3 on 6 data nodes (es-logs-data-0 to es-logs-data-5) with 16 vCPU each."),
     ],
     "conclusion": ("The cluster is sized for the load; the write queue is the place to look.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Check thread_pool.write.queue_size and the rejected counts on es-logs-prod."),
     ],
     "limits": LIM},

    {"id": "ls-15", "label": "U", "cat": "disguise", "uns": ["queue.m\u0430x_events"],
     "why": "A Cyrillic а inside the key: it displays queue.max_events, which the evidence does not state (it names "
            "queue.max_bytes).",
     "analysis": [
         ("a1", "N", ["ls1"], [],
          "With queue.type: persisted the queue of main is bounded by queue.max_bytes (default 1024mb) and by "
          "queue.m\u0430x_events; once it is full, backpressure reaches the inputs."),
     ],
     "conclusion": ("The persisted queue at 92% of 8gb will soon block the inputs.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Compare queue.queue_size_in_bytes with queue.max_queue_size_in_bytes."),
     ],
     "limits": LIM},
]
