"""A Weights & Biases run (offline by default: run files under RUN/tracking/wandb, no network)."""

from __future__ import annotations

import os
from typing import Any


class WandbTracker:
    name = "wandb"

    def __init__(self, directory: str, settings: dict[str, Any], run_name: str, run_id: str | None, plan: dict[str, Any]):
        mode = settings["mode"]
        if mode == "online" and not os.environ.get("WANDB_API_KEY"):
            raise RuntimeError(
                "wandb mode online needs WANDB_API_KEY in the environment (a spec never holds keys); set it, or use mode: offline and `wandb sync` later"
            )
        import wandb

        os.makedirs(directory, exist_ok=True)
        quiet = wandb.Settings(silent=True, console="off", disable_git=True, x_disable_stats=True, x_save_requirements=False)
        # resume="allow" with the id stored in the run directory: a resumed arl run continues the
        # same W&B run (offline: a second run folder with the same id, which `wandb sync` joins).
        self._run = wandb.init(
            project=settings["project"],
            entity=settings["entity"],
            mode=mode,
            dir=directory,
            name=run_name,
            id=run_id,
            resume="allow",
            config=plan,
            settings=quiet,
        )
        self._wandb = wandb

    @property
    def run_id(self) -> str:
        return str(self._run.id)

    def config(self, plan: dict[str, Any], name: str) -> None:
        """The plan went in at init (wandb.init's config)."""

    def metrics(self, step: int, values: dict[str, float]) -> None:
        self._run.log(values, step=step)

    def table(self, name: str, columns: list[str], rows: list[list[Any]], step: int) -> None:
        self._run.log({name: self._wandb.Table(columns=columns, data=rows)}, step=step)

    def close(self) -> None:
        self._run.finish()
