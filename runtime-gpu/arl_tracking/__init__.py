"""The trackers' sidecar of an arl run (docs/tracking.md).

`python -m arl_tracking` reads one JSON request per line on stdin (config, metrics, table,
close) and copies what it is sent to TensorBoard event files, a Weights & Biases run and an
MLflow run, with the libraries themselves. Its own events (ready, error, closed) go to stdout,
one JSON line each; whatever the libraries print goes to stderr.
"""
