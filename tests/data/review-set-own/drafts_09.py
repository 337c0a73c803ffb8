"""Drafts for set `grpc` (gRPC DEADLINE_EXCEEDED, English). See build.py for the format."""
SET = "grpc"
C1, C2 = "rb-grpc-deadline#chunk-1", "rb-grpc-deadline#chunk-2"
LIM = ["Based on the runbook excerpts and the alert only; payment-svc's latency histograms were not read."]

DRAFTS = [
    # ---------------------------------------------------------------- GROUNDED
    {"id": "gr-01", "label": "G", "cat": "restate", "uns": [],
     "why": "Plain restatement of gr1's query (4.6%, 800ms, 1.9s) and chunk-1; the negative item restates only its own query.",
     "analysis": [
         ("a1", "N", ["gr1"], [],
          "Calls from checkout-gateway to payment-svc fail with DEADLINE_EXCEEDED at a rate of 4.6%; the client deadline is "
          "800ms and the p99 latency is 1.9s. When p99 is above the deadline, the error rate follows the tail."),
         ("a2", "NEG", ["gr3"], [],
          "No deploys or config changes of payment-svc since 2025-05-06 14:00 UTC were found."),
     ],
     "conclusion": ("payment-svc's latency tail is longer than checkout-gateway's deadline; no recent change explains it from "
                    "the knowledge base.", ["a1", "a2"]),
     "actions": [
         ("p1", ["a1"], "Compare grpc_server_handling_seconds p99 for payment-svc with the 800ms deadline."),
     ],
     "limits": LIM},

    {"id": "gr-02", "label": "G", "cat": "units", "uns": [],
     "why": "800ms written as 800-millisecond and 15s as 15-second: same values, same units.",
     "analysis": [
         ("a1", "N", ["gr1"], [C1],
          "checkout-gateway sets an 800-millisecond deadline on payment calls, while the default for internal calls is a "
          "15-second deadline."),
     ],
     "conclusion": ("Payment calls run under a much tighter deadline than other internal calls.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Check whether payment-svc propagates the remaining part of the 800-millisecond deadline downstream "
                        "instead of starting a new 15-second one."),
     ],
     "limits": LIM},

    {"id": "gr-03", "label": "G", "cat": "slash-list", "uns": [],
     "why": "p95/p99 where chunk-1 states p95 and p99; 800ms and 1.9s are in the query.",
     "analysis": [
         ("a1", "N", ["gr1"], [],
          "Compare grpc_server_handling_seconds p95/p99 for payment-svc with the client deadline of 800ms; the p99 latency is "
          "already 1.9s."),
     ],
     "conclusion": ("The p99 of payment-svc is above the deadline, so the DEADLINE_EXCEEDED rate follows the tail.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Plot grpc_server_handling_seconds p95/p99 next to the DEADLINE_EXCEEDED rate."),
     ],
     "limits": LIM},

    {"id": "gr-04", "label": "G", "cat": "slash-list", "uns": [],
     "why": "502/503/504 and 503/504 are slash lists whose members are each stated in gr2.",
     "analysis": [
         ("a1", "N", ["gr2"], [],
          "ingress-nginx answers 502/503/504 for different reasons: 504 when grpc_read_timeout expires, 502 when the backend "
          "resets the stream, and 503 when the Service has no ready endpoints."),
     ],
     "conclusion": ("Ingress 503/504 responses would point at payment-svc's availability or timeouts, not at the client "
                    "deadline.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Count 503/504 on the ingress for payments.internal.example.com."),
     ],
     "limits": LIM},

    {"id": "gr-05", "label": "G", "cat": "number-words", "uns": [],
     "why": "eight hundred milliseconds = 800ms, fifteen seconds = 15s, three = maxAttempts: 3: number words for stated values.",
     "analysis": [
         ("a1", "N", ["gr1"], [],
          "checkout-gateway gives payment calls eight hundred milliseconds, against fifteen seconds for other internal calls. "
          "With a retryPolicy of three attempts, a retry that would start after the deadline is not sent."),
     ],
     "conclusion": ("Retries cannot rescue calls that already used most of the eight hundred milliseconds.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Keep maxAttempts: 3 but make sure retries respect the deadline."),
     ],
     "limits": LIM},

    {"id": "gr-06", "label": "G", "cat": "placeholder-filled", "uns": [],
     "why": "kubectl logs <pod> -c payment-svc --since=15m | grep -c DEADLINE_EXCEEDED in a code span, <pod> filled with the "
            "alert's pod from the query.",
     "analysis": [
         ("a1", "N", ["gr1"], [],
          "Idle connections dropped by a load balancer surface as UNAVAILABLE, or as deadline errors on the first call after "
          "the drop."),
     ],
     "conclusion": ("Part of the DEADLINE_EXCEEDED errors may come from dropped idle connections.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Count the errors with `kubectl logs payment-svc-6f8b7d9c4-zr5qx -c payment-svc --since=15m | grep -c "
                        "DEADLINE_EXCEEDED`."),
     ],
     "limits": LIM},

    {"id": "gr-07", "label": "G", "cat": "key-unit", "uns": [],
     "why": "grpc.keepalive_time_ms=30000 and grpc.keepalive_timeout_ms=10000 written as 30000 ms and 10000 ms: the key "
            "names fix the unit; 20s is stated.",
     "analysis": [
         ("a1", "N", ["gr1"], [C2],
          "Client keepalive uses grpc.keepalive_time_ms=30000 (a ping every 30000 ms) and grpc.keepalive_timeout_ms=10000 "
          "(10000 ms to wait for the ack); the server must allow it with permitKeepAliveTime 20s."),
     ],
     "conclusion": ("A 30000 ms keepalive is allowed by a 20s permitKeepAliveTime.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Check payment-svc for GOAWAY with too_many_pings."),
     ],
     "limits": LIM},

    {"id": "gr-08", "label": "G", "cat": "common-term", "uns": [],
     "why": "L7, 5xx and gRPC/HTTP/2 are common vocabulary used as names; TLS 1.2, TLS 1.3, h2 and 1.9s are stated.",
     "analysis": [
         ("a1", "N", ["gr2"], [],
          "gRPC needs HTTP/2 end to end, so the ingress listener requires TLS 1.2 or TLS 1.3 with ALPN h2."),
         ("a2", "N", ["gr1"], [],
          "payment-svc's p99 latency is 1.9s."),
     ],
     "conclusion": ("The L7 ingress is not the issue unless it answers 5xx; the slow tail of payment-svc is.", ["a1", "a2"]),
     "actions": [
         ("p1", ["a2"], "Profile payment-svc's slowest gRPC methods."),
     ],
     "limits": LIM},

    {"id": "gr-09", "label": "G", "cat": "quote-style", "uns": [],
     "why": "«…» holds the stated client error word for word; ‘too_many_pings’ is the stated GOAWAY reason.",
     "analysis": [
         ("a1", "N", ["gr1"], [],
          "checkout-gateway logs «io.grpc.StatusRuntimeException: DEADLINE_EXCEEDED: deadline exceeded after 0.799873s». If "
          "keepalive pings are too frequent, the server answers GOAWAY with ‘too_many_pings’."),
     ],
     "conclusion": ("The client gives up at its 800ms deadline.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Search payment-svc's logs for ‘too_many_pings’."),
     ],
     "limits": LIM},

    # ---------------------------------------------------------------- UNGROUNDED
    {"id": "gr-10", "label": "U", "cat": "unit-mismatch", "uns": ["60ms"],
     "why": "gr2 gives grpc_read_timeout 60s; 60ms is another unit, not stated.",
     "analysis": [
         ("a1", "N", ["gr2"], [],
          "The generated location uses grpc_read_timeout 60ms; the controller answers 504 when it expires."),
     ],
     "conclusion": ("Ingress timeouts could add 504s for payment-svc.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Count 504s on the ingress."),
     ],
     "limits": LIM},

    {"id": "gr-11", "label": "U", "cat": "neighbour-value", "uns": ["75s"],
     "why": "75s is keepalive_timeout's value; gr2 gives grpc_read_timeout 60s. The value is taken from the neighbouring key.",
     "analysis": [
         ("a1", "N", ["gr2"], [],
          "The generated location uses grpc_read_timeout 75s; the controller answers 504 when it expires."),
     ],
     "conclusion": ("The ingress read timeout is not what ends the calls.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Count 504s on the ingress."),
     ],
     "limits": LIM},

    {"id": "gr-12", "label": "U", "cat": "disguise", "uns": ["9\u200b0s"],
     "why": "A zero-width space inside the number: it displays 90s, which gr2 does not state (60s, 75s, 3600s).",
     "analysis": [
         ("a1", "N", ["gr2"], [],
          "The generated location uses grpc_read_timeout 60s; long-lived streams need more."),
     ],
     "conclusion": ("Long-lived streams need a longer read timeout.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Raise grpc_read_timeout to 9\u200b0s for payment-svc's streams."),
     ],
     "limits": LIM},

    {"id": "gr-13", "label": "U", "cat": "disguise", "uns": ["3OOs"],
     "why": "Letters O in place of zeros: 3OOs displays 300s, which gr2 does not state (it gives 3600s).",
     "analysis": [
         ("a1", "N", ["gr2"], [],
          "Long-lived streams should raise grpc_read_timeout and grpc_send_timeout to 3OOs together."),
     ],
     "conclusion": ("Streams need the read and send timeouts raised together.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Raise grpc_read_timeout and grpc_send_timeout together."),
     ],
     "limits": LIM},

    {"id": "gr-14", "label": "U", "cat": "invented-quote",
     "uns": ["io.grpc.StatusRuntimeException: DEADLINE_EXCEEDED: context deadline exceeded"],
     "why": "The quotation in ‘’ changes the evidence's words ('deadline exceeded after 0.799873s' becomes 'context deadline "
            "exceeded').",
     "analysis": [
         ("a1", "N", ["gr1"], [],
          "checkout-gateway logs ‘io.grpc.StatusRuntimeException: DEADLINE_EXCEEDED: context deadline exceeded’ when its 800ms "
          "deadline expires."),
     ],
     "conclusion": ("The client gives up at its deadline.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Compare grpc_server_handling_seconds p99 with 800ms."),
     ],
     "limits": LIM},

    {"id": "gr-15", "label": "U", "cat": "number-words", "uns": ["two seconds"],
     "why": "'two seconds' is not stated; chunk-1 gives maxBackoff: 1s.",
     "analysis": [
         ("a1", "N", ["gr1"], [],
          "The retryPolicy uses maxAttempts: 3, initialBackoff: 0.1s and a maxBackoff of two seconds."),
     ],
     "conclusion": ("Retries eat into the 800ms deadline.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Make sure retries respect the deadline."),
     ],
     "limits": LIM},

    {"id": "gr-16", "label": "U", "cat": "range", "uns": ["0.1–2s"],
     "why": "A range with an unstated end: chunk-1 gives initialBackoff 0.1s and maxBackoff 1s; 2s is not stated.",
     "analysis": [
         ("a1", "N", ["gr1"], [],
          "Retries back off over 0.1–2s with backoffMultiplier: 2, and a retry that would start after the deadline is not "
          "sent."),
     ],
     "conclusion": ("With an 800ms deadline, few retries can be sent.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Keep maxAttempts: 3."),
     ],
     "limits": LIM},

    {"id": "gr-17", "label": "U", "cat": "invented-value", "uns": ["7 days"],
     "why": "No time span is stated for the errors; 7 days is not in the evidence.",
     "analysis": [
         ("a1", "N", ["gr1"], [],
          "The DEADLINE_EXCEEDED rate between checkout-gateway and payment-svc has been rising for 7 days and is now 4.6%."),
     ],
     "conclusion": ("payment-svc's tail latency is growing.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Compare grpc_server_handling_seconds p99 with the 800ms deadline."),
     ],
     "limits": LIM},

    {"id": "gr-18", "label": "U", "cat": "derived", "uns": ["238%"],
     "why": "238% (1.9s / 800ms) is a derived percentage; the evidence states only 1.9s and 800ms.",
     "analysis": [
         ("a1", "N", ["gr1"], [],
          "payment-svc's p99 latency of 1.9s is 238% of checkout-gateway's 800ms deadline, so the error rate follows the "
          "tail."),
     ],
     "conclusion": ("The tail of payment-svc is far beyond the deadline.", ["a1"]),
     "actions": [
         ("p1", ["a1"], "Compare grpc_server_handling_seconds p95 and p99 with the deadline."),
     ],
     "limits": LIM},
]

