"""A support agent on the OpenAI Agents SDK (`openai-agents`), unmodified: its default model is
the Responses API, read from OPENAI_BASE_URL and OPENAI_API_KEY, with one function tool. ARL
starts it once per episode (experiments/agents/frameworks.arl); it prints its outcome last."""

import json
import os
import sys

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")  # no trace export from a training run

from agents import Agent, Runner, function_tool  # noqa: E402

STATUSES = {"A": "shipped", "B": "delivered", "C": "delayed"}
looked_up = []


@function_tool
def lookup_order(order_id: str) -> str:
    """The status of an order, by its id."""
    looked_up.append(order_id)
    return json.dumps({"status": STATUSES.get(order_id[:1], "unknown")})


task = json.loads(sys.stdin.readline())["task"]
agent = Agent(
    name="support",
    instructions="Support assistant: look the order up, then answer in a few words.",
    tools=[lookup_order],
    model="policy",
)
result = Runner.run_sync(agent, task["message"], max_turns=3)
answer = str(result.final_output or "")
print(json.dumps({"signals": {"resolved": task["status"] in answer.lower(), "found_order": task["order_id"] in looked_up}}))
