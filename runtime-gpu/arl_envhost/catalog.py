"""The names the env libraries define, read off the installed (pinned) versions.

``python -m arl_envhost.catalog`` prints them as JSON: reasoning-gym's datasets with their config
fields, TextArena's env ids, TextWorldExpress's games and TextWorld's challenges. ARL's checker
holds a copy (src/contracts/libraries/catalog/, a file per library), so that an unknown name is a diagnostic
at check time with no Python; test/envs/library-catalog.test.ts keeps the copy equal to this.
"""

from __future__ import annotations

import dataclasses
import json
from importlib.metadata import version
from typing import Any

# Knobs of their own in ARL (reasoning_gym.ts: size, seed), not fields of a dataset's `config`.
_REASONING_GYM_TOP_LEVEL = ("seed", "size")


def reasoning_gym() -> dict[str, Any]:
    from reasoning_gym.factory import DATASETS

    datasets = {
        name: sorted(f.name for f in dataclasses.fields(config_class) if f.name not in _REASONING_GYM_TOP_LEVEL) for name, (_, config_class) in DATASETS.items()
    }
    return {"version": version("reasoning-gym"), "datasets": dict(sorted(datasets.items()))}


def textarena() -> dict[str, Any]:
    from textarena.envs.registration import ENV_REGISTRY

    return {"version": version("textarena"), "env_ids": sorted(ENV_REGISTRY)}


def textworld_express() -> dict[str, Any]:
    from textworld_express import constants

    return {"version": version("textworld-express"), "games": list(constants.GAME_NAMES)}


def textworld() -> dict[str, Any]:
    import textworld.challenges

    return {"version": version("textworld"), "challenges": sorted(textworld.challenges.CHALLENGES)}


def catalog() -> dict[str, Any]:
    return {"reasoning_gym": reasoning_gym(), "textarena": textarena(), "textworld_express": textworld_express(), "textworld": textworld()}


if __name__ == "__main__":
    print(json.dumps(catalog(), sort_keys=True))
