#!/usr/bin/env python3
"""A small customer-support agent: plain Python on the official `openai` SDK, no ARL imports.

It owns its loop, its prompt and its tools (lookup_order, refund), and talks to "the model" as to
any OpenAI-compatible server: the client reads OPENAI_BASE_URL and OPENAI_API_KEY from the
environment, as it would for api.openai.com. Trained by ARL (experiments/agents/support.arl),
the model behind that URL is the policy, and the calls made here are the training data.

Contract with the runner (docs/gateway.md#agent-programs): the task arrives as one JSON line on
stdin, {"task": {...}, "task_id": n, "seed": s}; the program prints its outcome last, as
{"signals": {...}}. Run it by hand against any server:
    echo '{"task": {"order_id": "A100", "message": "Where is my order A100?", "intent": "status",
    "status": "shipped"}}' | OPENAI_BASE_URL=... OPENAI_API_KEY=... python3 support.py
"""

import json
import pathlib
import sys

from openai import OpenAI

PROMPT = "Support assistant: use the tools, then answer the user in a few words."

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup_order",
            "description": "An order's item, status and price.",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "refund",
            "description": "Refund a delivered order.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}, "reason": {"type": "string"}},
                "required": ["order_id"],
            },
        },
    },
]

# At most this many model calls per conversation: a tool call or two, then the answer.
MAX_CALLS = 3


def load_orders():
    """The shop's order database (the program's own data; here the task file doubles as it)."""
    path = pathlib.Path(__file__).with_name("data") / "support-tasks.jsonl"
    orders = {}
    for line in path.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            orders[row["order_id"]] = {"item": row["item"], "status": row["status"], "paid": row["paid"]}
    return orders


def run_tool(name, arguments, orders, refunded):
    order = orders.get(str(arguments.get("order_id", "")))
    if name == "lookup_order":
        return json.dumps(order) if order else "error: no such order"
    if name == "refund":
        if not order:
            return "error: no such order"
        if order["status"] != "delivered":
            return "error: only delivered orders can be refunded"
        refunded.add(str(arguments["order_id"]))
        return f"refunded {order['paid']} for the {order['item']}"
    return f"error: unknown tool {name}"


def main():
    job = json.loads(sys.stdin.readline())
    task = job["task"]
    orders = load_orders()
    client = OpenAI()
    messages = [{"role": "system", "content": PROMPT}, {"role": "user", "content": task["message"]}]
    looked_up, refunded = set(), set()
    answer = ""
    for _ in range(MAX_CALLS):
        reply = client.chat.completions.create(model="policy", messages=messages, tools=TOOLS, max_tokens=24)
        message = reply.choices[0].message
        if not message.tool_calls:
            answer = message.content or ""
            break
        messages.append(
            {
                "role": "assistant",
                "content": message.content,
                "tool_calls": [
                    {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
                    for c in message.tool_calls
                ],
            }
        )
        for call in message.tool_calls:
            try:
                arguments = json.loads(call.function.arguments)
            except json.JSONDecodeError:
                arguments = {}
            if call.function.name == "lookup_order":
                looked_up.add(str(arguments.get("order_id", "")))
            result = run_tool(call.function.name, arguments, orders, refunded)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})

    # The agent's own check of its conversation: the outcome signals the spec rewards.
    order_id = task["order_id"]
    if task["intent"] == "refund":
        resolved = order_id in refunded
    else:
        resolved = task["status"] in answer.lower()
    print(json.dumps({"signals": {"resolved": resolved, "found_order": order_id in looked_up or order_id in answer}}))


if __name__ == "__main__":
    main()
