"""A support agent on the official Anthropic SDK, unmodified: a plain tool_use loop over the
Messages API, the client reading ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY. ARL starts it once
per episode (experiments/agents/frameworks.arl); it prints its outcome last."""

import json
import sys

import anthropic

STATUSES = {"A": "shipped", "B": "delivered", "C": "delayed"}
TOOLS = [
    {
        "name": "lookup_order",
        "description": "The status of an order, by its id.",
        "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
    }
]

task = json.loads(sys.stdin.readline())["task"]
client = anthropic.Anthropic()
messages = [{"role": "user", "content": task["message"]}]
answer, looked_up = "", False
for _ in range(3):
    reply = client.messages.create(model="policy", max_tokens=64, system="Support assistant: look the order up, then answer.", messages=messages, tools=TOOLS)
    calls = [block for block in reply.content if block.type == "tool_use"]
    if not calls:
        answer = "".join(block.text for block in reply.content if block.type == "text")
        break
    messages.append({"role": "assistant", "content": reply.content})
    results = []
    for call in calls:
        order_id = str(call.input.get("order_id", ""))
        looked_up = looked_up or order_id == task["order_id"]
        results.append({"type": "tool_result", "tool_use_id": call.id, "content": json.dumps({"status": STATUSES.get(order_id[:1], "unknown")})})
    messages.append({"role": "user", "content": results})
print(json.dumps({"signals": {"resolved": task["status"] in answer.lower(), "found_order": looked_up}}))
