"""The env host: one persistent Python process that serves arl's envs what only Python can do.

The runtime starts it (``python -m arl_envhost``) in a process group of its own, speaks JSON lines
over its stdin and stdout (docs/env-host.md), health-checks it and stops it. It serves dataset
verifiers today: a veRL-style ``compute_score``, a TRL-style reward function and math-verify, each
call under a time limit. A call that raises or runs out of time is an error answer for that call
only; the host goes on serving the others.
"""

PROTOCOL_VERSION = 1
