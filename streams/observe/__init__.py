"""What the running parts tell people and machines: log lines (logs), Prometheus metrics (metrics),
OpenTelemetry spans (tracing)."""
