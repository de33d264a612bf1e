"""The env host: one persistent Python process that serves arl's envs what only Python can do.

The runtime starts it (``python -m arl_envhost``) in a process group of its own, speaks JSON lines
over its stdin and stdout (docs/env-host.md), health-checks it and stops it. It serves dataset
verifiers (a veRL-style ``compute_score``, a TRL-style reward function, math-verify) and episodes
of the Python env libraries (TextWorld, ...) as sessions: many isolated episodes at once, each its
own game. Every call runs under a time limit. A call that raises or runs out of time is an error
answer for that call only (and ends that call's episode); the host goes on serving the others.
"""

# 2: env library sessions (backend.*, episode.*) and the error kinds missing and config.
# 3: verifier workers (verifier.pool); their verifier.score answers come as each call is done.
PROTOCOL_VERSION = 3
