"""What an operator's tools read of a running workbench: Prometheus metrics (metrics.py,
served by app.api.metrics), OpenTelemetry traces (tracing.py; model calls: model_calls.py)
and the log lines' format and ids (logs.py)."""
