"""Drafts for set `rabbit` (RabbitMQ queue backlog, English). See build.py for the format."""
SET = "rabbit"
C1, C2 = "mq-rabbit-backlog#chunk-1", "mq-rabbit-backlog#chunk-2"
LIM = ["Based on the runbook excerpts and the alert only; the queue metrics of billing.invoices were not read live."]

DRAFTS = [
    # ---------------------------------------------------------------- GROUNDED
    {"id": "rb-01", "label": "G", "cat": "restate", "uns": [],
     "why": "Plain restatement of rb1's query (1240000, 8000, 12 consumers, /billing) and chunk-1 (0.5, consumer_utilisation).",
     "analysis": [
         ("a1", "N", ["rb1"], [],
          "Queue billing.invoices on vhost /billing has messages_ready 1240000 and messages_unacknowledged 8000 with 12 "
          "consumers, which fired RabbitMQQueueBacklog. A growing messages_ready count means publishers outpace consumers."),
     ],
     "conclusion": ("Publishers to billing.invoices outpace its 12 consumers.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Check consumer_utilisation for billing.invoices: below 0.5 the prefetch is too small or the consumer is "
                        "slow per message."),
     ],
     "limits": LIM},

    {"id": "rb-02", "label": "G", "cat": "restate", "uns": [],
     "why": "rb2's inventory restated exactly as bold and bullets (3.12.13, 26.2, the three node names, 32 GiB, 3, "
            "concurrentConsumers=4, maxConcurrentConsumers=12, prefetch 250).",
     "analysis": [
         ("a1", "N", ["rb2"], [],
          "**rabbit-prod-fra**\n- RabbitMQ 3.12.13 on Erlang/OTP 26.2, three nodes (rabbit@mq-fra-1, rabbit@mq-fra-2, "
          "rabbit@mq-fra-3), 32 GiB of RAM each;\n- billing.invoices is a quorum queue with a replication factor of 3;\n"
          "- consumer: invoice-renderer (Spring AMQP 3.1.2), concurrentConsumers=4, maxConcurrentConsumers=12, prefetch 250."),
     ],
     "conclusion": ("invoice-renderer is the only consumer named for billing.invoices; its concurrency settings bound how fast "
                    "the queue drains.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Check whether invoice-renderer actually reaches maxConcurrentConsumers=12 while the backlog grows."),
     ],
     "limits": LIM},

    {"id": "rb-03", "label": "G", "cat": "digit-grouping", "uns": [],
     "why": "1240000, 1800000 ms and 2000000 written as 1,240,000, 1,800,000 ms and 2_000_000 (digit grouping); 3.8.15 and "
            "30 minutes are stated.",
     "analysis": [
         ("a1", "N", ["rb1"], [],
          "billing.invoices holds 1,240,000 ready messages. Since RabbitMQ 3.8.15 consumer_timeout defaults to 1,800,000 ms "
          "(30 minutes); a consumer that holds a delivery longer has its channel closed with PRECONDITION_FAILED."),
     ],
     "conclusion": ("A backlog this size needs a cap while the consumers catch up.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Cap the queue with x-max-length = 2_000_000 and x-overflow = reject-publish."),
     ],
     "limits": LIM},

    {"id": "rb-04", "label": "G", "cat": "slash-list", "uns": [],
     "why": "TLS 1.2/1.3 where rb2 states TLS 1.2 and TLS 1.3; 5671, 5672 and 15672 are stated.",
     "analysis": [
         ("a1", "N", ["rb2"], [],
          "AMQP listeners on rabbit-prod-fra accept TLS 1.2/1.3 on port 5671; plain AMQP on 5672 is disabled, and the "
          "management API listens on 15672."),
     ],
     "conclusion": ("invoice-renderer can only reach rabbit-prod-fra over TLS on 5671.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Confirm that invoice-renderer connects to port 5671 with TLS 1.2/1.3 and is not retrying on 5672."),
     ],
     "limits": LIM},

    {"id": "rb-05", "label": "G", "cat": "number-words", "uns": [],
     "why": "sixty seconds / sixty-second = heartbeat = 60 (seconds) and the client's 60s timeout: number words for stated "
            "values; 2047 and 131072 keep their own keys.",
     "analysis": [
         ("a1", "N", ["rb1"], [C2],
          "Heartbeats are sixty seconds on the server (heartbeat = 60) with a sixty-second timeout on the client; "
          "channel_max = 2047 and frame_max = 131072."),
     ],
     "conclusion": ("The heartbeat settings do not explain a backlog of ready messages.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Leave heartbeat = 60 unchanged and look at consumer throughput instead."),
     ],
     "limits": LIM},

    {"id": "rb-06", "label": "G", "cat": "quote-style", "uns": [],
     "why": "The PRECONDITION_FAILED message is quoted word for word in «» with a full stop added at its end; the action "
            "quotes a piece of it word for word in ‘’.",
     "analysis": [
         ("a1", "N", ["rb1"], [C1],
          "A consumer of billing.invoices that holds a delivery past consumer_timeout has its channel closed with "
          "«PRECONDITION_FAILED - delivery acknowledgement on channel 1 timed out. Timeout value used: 1800000 ms. This timeout "
          "value can be configured, see consumers doc guide to learn more.»"),
     ],
     "conclusion": ("Closed channels would leave deliveries unacknowledged and slow the drain of billing.invoices.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Search the consumer logs for ‘delivery acknowledgement on channel 1 timed out’."),
     ],
     "limits": LIM},

    {"id": "rb-07", "label": "G", "cat": "placeholder-filled", "uns": [],
     "why": "rabbitmqctl list_queues -p <vhost> ... with <vhost> filled by the query's /billing.",
     "analysis": [
         ("a1", "N", ["rb1"], [],
          "A consumer_utilisation below 0.5 usually means the prefetch is too small or the consumer is slow per message."),
     ],
     "conclusion": ("consumer_utilisation tells whether billing.invoices is limited by prefetch or by the consumer itself.",
                    ["a1"]),
     "actions": [
         ("p1", ["a1"], "Run `rabbitmqctl list_queues -p /billing name messages_ready messages_unacknowledged consumers "
                        "consumer_utilisation` and read consumer_utilisation for billing.invoices."),
     ],
     "limits": LIM},

    {"id": "rb-08", "label": "G", "cat": "common-term", "uns": [],
     "why": "CPU and I/O are common vocabulary used as names (not in the evidence, not facts about the incident); 0.5, 0.4 "
            "and the keys are stated.",
     "analysis": [
         ("a1", "N", ["rb1"], [],
          "A consumer_utilisation below 0.5 means the prefetch is too small or each message is slow to process, for example "
          "a consumer that is CPU-bound or waiting on I/O. When memory use crosses vm_memory_high_watermark.relative = 0.4 "
          "of RAM, the broker blocks every publishing connection."),
     ],
     "conclusion": ("billing.invoices is limited by its consumers' CPU or I/O unless the broker shows blocked connections.",
                    ["a1"]),
     "actions": [
         ("p1", ["a1"], "Check the consumers' CPU and I/O before raising basic.qos prefetch_count to 500."),
     ],
     "limits": LIM},

    {"id": "rb-09", "label": "G", "cat": "version-prefix", "uns": [],
     "why": "RabbitMQ 3.12.13 and 3.8.15 written as v3.12.13 and v3.8.15 (leading v); 3.12, 2000000 and the keys are stated.",
     "analysis": [
         ("a1", "N", ["rb2"], [],
          "rabbit-prod-fra runs RabbitMQ v3.12.13 on Erlang/OTP 26.2."),
         ("a2", "N", ["rb1"], [],
          "Lazy mode is a no-op since 3.12, and consumer_timeout defaults to 1800000 ms since v3.8.15."),
     ],
     "conclusion": ("On v3.12.13 lazy mode does not help; the backlog has to be capped instead.", ["a1", "a2"]),
     "actions": [
         ("p1", ["a2"], "Set x-max-length = 2000000 and x-overflow = reject-publish on billing.invoices."),
     ],
     "limits": LIM},

    # ---------------------------------------------------------------- UNGROUNDED
    {"id": "rb-10", "label": "U", "cat": "partial-number", "uns": ["50"],
     "why": "rb1 says prefetch_count 500; `50` is not stated anywhere in rb1.",
     "analysis": [
         ("a1", "N", ["rb1"], [],
          "Set basic.qos prefetch_count to `50` for fast consumers and lower it for slow ones; a consumer_utilisation below "
          "0.5 shows the prefetch is too small."),
     ],
     "conclusion": ("The prefetch of billing.invoices' consumers should be checked first.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Read consumer_utilisation for billing.invoices."),
     ],
     "limits": LIM},

    {"id": "rb-11", "label": "U", "cat": "neighbour-value", "uns": ["2047"],
     "why": "2047 is channel_max's value; rb1 gives frame_max = 131072. The value is taken from the neighbouring key.",
     "analysis": [
         ("a1", "N", ["rb1"], [],
          "Connection limits on the broker: heartbeat = 60 (seconds) and frame_max = 2047; neither limits how fast "
          "billing.invoices drains."),
     ],
     "conclusion": ("The backlog is not caused by connection limits.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Look at consumer_utilisation instead of connection settings."),
     ],
     "limits": LIM},

    {"id": "rb-12", "label": "U", "cat": "invented-value", "uns": ["8 consumers"],
     "why": "rb2 gives concurrentConsumers=4 and maxConcurrentConsumers=12; 8 consumers is not stated.",
     "analysis": [
         ("a1", "N", ["rb2"], [],
          "invoice-renderer runs with concurrentConsumers=4 and maxConcurrentConsumers=12 and a prefetch of 250; during the "
          "backlog it settled at 8 consumers."),
     ],
     "conclusion": ("invoice-renderer is not scaling to its maximum concurrency.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Check why invoice-renderer does not reach maxConcurrentConsumers=12."),
     ],
     "limits": LIM},

    {"id": "rb-13", "label": "U", "cat": "markdown-split", "uns": ["`9`0s"],
     "why": "Markdown splits the number: `9`0s displays 90s, which rb1 does not state (it states 60 and 60s).",
     "analysis": [
         ("a1", "N", ["rb1"], [C2],
          "Heartbeats are heartbeat = 60 (seconds) on the server with a 60s timeout on the client."),
     ],
     "conclusion": ("A slow consumer may miss heartbeats while it processes a large prefetch.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Raise the client heartbeat timeout to `9`0s while the backlog drains."),
     ],
     "limits": LIM},

    {"id": "rb-14", "label": "U", "cat": "invented-quote",
     "uns": ["PRECONDITION_FAILED - delivery acknowledgement on channel 1 timed out after 1800000 ms"],
     "why": "The quotation in «» changes the evidence's words (the message says 'timed out. Timeout value used: 1800000 ms').",
     "analysis": [
         ("a1", "N", ["rb1"], [],
          "A consumer that holds a delivery past consumer_timeout has its channel closed with «PRECONDITION_FAILED - delivery "
          "acknowledgement on channel 1 timed out after 1800000 ms»."),
     ],
     "conclusion": ("Slow consumers of billing.invoices may be losing their channels.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Search the consumer logs for PRECONDITION_FAILED."),
     ],
     "limits": LIM},

    {"id": "rb-15", "label": "U", "cat": "wrong-version", "uns": ["3.13"],
     "why": "rb2 gives RabbitMQ 3.12.13; 3.13 is a version the evidence does not state.",
     "analysis": [
         ("a1", "N", ["rb2"], [],
          "rabbit-prod-fra runs RabbitMQ 3.12.13 on Erlang/OTP 26.2; billing.invoices is a quorum queue."),
     ],
     "conclusion": ("billing.invoices keeps its working set in memory as a quorum queue.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Plan an upgrade of rabbit-prod-fra to RabbitMQ 3.13 after the backlog has drained."),
     ],
     "limits": LIM},

    {"id": "rb-16", "label": "U", "cat": "conversion", "uns": ["half an hour"],
     "why": "rb1 states 1800000 ms (30 minutes); 'half an hour' is a conversion the evidence does not state.",
     "analysis": [
         ("a1", "N", ["rb1"], [],
          "Since RabbitMQ 3.8.15 consumer_timeout defaults to half an hour; a consumer that holds a delivery longer has its "
          "channel closed."),
     ],
     "conclusion": ("Consumers that stall on a message lose their channels.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Search the consumer logs for PRECONDITION_FAILED."),
     ],
     "limits": LIM},

    {"id": "rb-17", "label": "U", "cat": "negation", "uns": ["100"],
     "why": "'never below 100' states 100, which rb1 does not give (it gives 500 and 0.5).",
     "analysis": [
         ("a1", "N", ["rb1"], [],
          "Set basic.qos prefetch_count to 500 for fast consumers and lower it for slow ones."),
     ],
     "conclusion": ("The consumers' prefetch decides how fast billing.invoices drains.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Lower prefetch_count for slow consumers, but never below 100."),
     ],
     "limits": LIM},
]
