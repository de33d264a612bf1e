"""How many of a run's TextWorld commands were admissible: replays the episodes `arl show` prints.

    npx arl show RUN_DIR --iteration N --limit 0 --format json \
      | .venv/bin/python experiments/mini/textworld-admissible.py RUN_DIR/env-quest-files.json

Each episode's commands are typed again into its game (TextWorld games are deterministic), and
each is counted as admissible when TextWorld's own list of admissible commands for that state
holds it (compared in lower case with single spaces). Prints one JSON object: episodes, commands,
the fraction admissible, the same for each episode's first command, and the commands a
walkthrough would have used at that state (the fraction equal to the next command of TextWorld's
winning policy).
"""

import json
import os
import re
import sys

import textworld

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "runtime-gpu"))
from arl_envhost.backends.textworld import typed_command  # noqa: E402 - the runtime's own typing of a command


def _norm(command: str) -> str:
    return re.sub(r"\s+", " ", command).strip().lower()


def main() -> None:
    games = {f["task"]: f["path"] for f in json.load(open(sys.argv[1], encoding="utf-8"))["files"]}
    infos = textworld.EnvInfos(admissible_commands=True, policy_commands=True)
    episodes = commands = admissible = on_policy = firsts = first_admissible = 0
    for line in sys.stdin:
        record = json.loads(line)
        calls = [c["arguments"].get("command", "") for s in record["spans"] for c in (s.get("tool_calls") or []) if c["name"] == "act"]
        if not calls:
            continue
        env = textworld.start(games[record["task"]], request_infos=infos)
        state = env.reset()
        episodes += 1
        for i, command in enumerate(calls):
            typed = typed_command(command)
            ok = _norm(typed) in {_norm(a) for a in state.admissible_commands or []}
            commands += 1
            admissible += ok
            on_policy += bool(state.policy_commands) and _norm(typed) == _norm(state.policy_commands[0])
            if i == 0:
                firsts += 1
                first_admissible += ok
            state, _, done = env.step(typed)
            if done:
                break
        env.close()
    print(json.dumps({
        "episodes": episodes,
        "commands": commands,
        "admissible": round(admissible / max(commands, 1), 4),
        "first_command_admissible": round(first_admissible / max(firsts, 1), 4),
        "next_walkthrough_command": round(on_policy / max(commands, 1), 4),
    }))


if __name__ == "__main__":
    main()
