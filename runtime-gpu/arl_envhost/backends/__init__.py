"""Env library backends of the env host (docs/env-host.md): one module a library, each a ``Backend``."""
