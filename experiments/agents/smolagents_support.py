"""A support agent on smolagents' ToolCallingAgent with its OpenAI model, unmodified: chat
completions at OPENAI_BASE_URL with OPENAI_API_KEY (the openai client's own defaults), one tool.
smolagents asks for every step's call with tool_choice "required", which the gateway forces
(docs/gateway.md#forced-tool-calls); after max_steps it asks for a final answer without tools.
ARL starts it once per episode (experiments/agents/frameworks.arl); it prints its outcome last."""

import json
import sys

from smolagents import OpenAIModel, ToolCallingAgent, tool

STATUSES = {"A": "shipped", "B": "delivered", "C": "delayed"}
looked_up = []


@tool
def lookup_order(order_id: str) -> str:
    """The status of an order, by its id.

    Args:
        order_id: The order's id, such as A100.
    """
    looked_up.append(order_id)
    return json.dumps({"status": STATUSES.get(order_id[:1], "unknown")})


task = json.loads(sys.stdin.readline())["task"]
# Two steps and the final answer: three model calls, within the spec's harness.max_turns.
agent = ToolCallingAgent(tools=[lookup_order], model=OpenAIModel(model_id="policy"), max_steps=2, verbosity_level=0)
answer = str(agent.run(task["message"]))
print(json.dumps({"signals": {"resolved": task["status"] in answer.lower(), "found_order": task["order_id"] in looked_up}}))
