"""Task families of the reference task server (reference_env_server.py): what each task is, its
tools, state and outcome signals, deterministic by task index, and one session's game.

Apart from the server's HTTP handling because it is what a task means, not how it is served.
"""

from __future__ import annotations

import threading

MAX_STEPS = 50


def _tool(name: str, description: str, properties: dict | None = None) -> dict:
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": properties or {}, "required": list(properties or {})},
    }


class Counter:
    """Call `step` goal times; `noop` does nothing."""

    tools = [_tool("step", "Advance the counter by one."), _tool("noop", "Do nothing.")]

    def __init__(self, index: int, seed: int):
        self.goal = 1 + index % 3
        self.count = 0

    def intro(self) -> str:
        return f"Call step {self.goal} times."

    def state(self) -> dict:
        return {"progress": min(1.0, self.count / self.goal)}

    def act(self, name: str, arguments: dict) -> tuple[str, bool]:
        if name == "step":
            self.count += 1
            return f"count {self.count}", self.count >= self.goal
        if name == "noop":
            return f"count {self.count}", False
        return f"Error: unknown tool '{name}'. Tools: step, noop.", False

    def outcome(self) -> dict:
        return {"success": self.count >= self.goal}


class Reach:
    """Reach the target exactly with add (1..3) and double; passing it ends the task."""

    tools = [
        _tool("add", "Add 1, 2 or 3 to the value.", {"amount": {"type": "integer", "minimum": 1, "maximum": 3}}),
        _tool("double", "Double the value."),
    ]

    def __init__(self, index: int, seed: int):
        self.value = 1 + index % 5
        self.target = self.value + 3 + (index * 7) % 20
        self.over = False

    def intro(self) -> str:
        return f"The value is {self.value}. Make it exactly {self.target} with add (1, 2 or 3) and double."

    def state(self) -> dict:
        return {"value": self.value, "remaining": self.target - self.value}

    def act(self, name: str, arguments: dict) -> tuple[str, bool]:
        if name == "add":
            amount = arguments.get("amount")
            if isinstance(amount, bool) or not isinstance(amount, int) or not 1 <= amount <= 3:
                return "Error: add needs an integer amount of 1, 2 or 3.", False
            self.value += amount
        elif name == "double":
            self.value *= 2
        else:
            return f"Error: unknown tool '{name}'. Tools: add, double.", False
        if self.value > self.target:
            self.over = True
            return f"The value is {self.value}: past the target {self.target}.", True
        if self.value == self.target:
            return f"The value is {self.value}: the target.", True
        return f"The value is {self.value}.", False

    def outcome(self) -> dict:
        return {"success": self.value == self.target}


FAMILIES = {"counter": Counter, "reach": Reach}


class Session:
    def __init__(self, family: str, index: int, seed: int):
        self.lock = threading.Lock()
        self.index = index
        self.game = FAMILIES[family](index, seed)
        self.steps = 0
        self.done = False
        self.outcome_calls = 0
