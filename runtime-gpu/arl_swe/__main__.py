"""``python -m arl_swe generate CONFIG_JSON CACHE``: make (or find) a preset's tasks; prints {"dir": ..., "python": ...} as its last line.

Progress goes to stderr; a preset that cannot make its tasks prints ``arl_swe: <why>`` on stderr
and exits with status 3.
"""

from __future__ import annotations

import json
import sys

from .generate import GenerationError, generate


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] != "generate":
        print("usage: python -m arl_swe generate CONFIG_JSON CACHE_DIR", file=sys.stderr)
        return 2
    config = json.loads(argv[1])
    try:
        folder, python = generate(config, argv[2], python=config.get("python") or sys.executable, log=lambda line: print(line, file=sys.stderr, flush=True))
    except GenerationError as e:
        print(f"arl_swe: {e}", file=sys.stderr)
        return 3
    print(json.dumps({"dir": folder, "python": python}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
