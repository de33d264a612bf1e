#!/usr/bin/env python3
"""An agent that manages its own context: after two model calls it drops the old turns and keeps
a summary instead, as long-running agents do. Plain Python on the official `openai` SDK, no ARL
imports.

Because the history it sends is rewritten, a call no longer extends what the gateway served
before, so ARL trains each such call as its own sample with the context it really had
(step-wise; docs/gateway.md#exact-tokens-and-rewrites), never on re-tokenized text. Trained by
experiments/agents/summarizing.arl. The task arrives as one JSON line on stdin; the outcome is
printed last as {"signals": {...}}.
"""

import json
import sys

from openai import OpenAI

PROMPT = "Use the lookup tool, then answer in one word."

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "A fact about a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]

RIVERS = {
    "Lyon": "Rhone",
    "Porto": "Douro",
    "Vienna": "Danube",
    "Cairo": "Nile",
    "Seville": "Guadalquivir",
    "Dresden": "Elbe",
    "Basel": "Rhine",
    "Budapest": "Danube",
}

CALLS = 4
# Turns older than this many calls are replaced by a summary.
KEEP_CALLS = 2


def lookup(arguments):
    city = str(arguments.get("city", ""))
    river = RIVERS.get(city)
    return f"The river of {city} is the {river}." if river else f"No facts about {city!r}."


def summarized(question, notes):
    """The context after a compaction: the prompt, the question, and what was learnt so far."""
    summary = " ".join(notes) if notes else "nothing yet"
    return [
        {"role": "system", "content": PROMPT},
        {"role": "user", "content": f"{question}\nSummary of the earlier conversation: {summary}"},
    ]


def main():
    task = json.loads(sys.stdin.readline())["task"]
    client = OpenAI()
    messages = [{"role": "system", "content": PROMPT}, {"role": "user", "content": task["question"]}]
    notes, answer = [], ""
    for call in range(CALLS):
        if call >= KEEP_CALLS:
            # Context management: the old turns go, a summary of them stays.
            messages = summarized(task["question"], notes)
        reply = client.chat.completions.create(model="policy", messages=messages, tools=TOOLS, max_tokens=16)
        message = reply.choices[0].message
        answer = message.content or ""
        if not message.tool_calls:
            notes.append(f"The assistant said: {answer.strip()[:60]}")
            messages.append({"role": "assistant", "content": answer})
            messages.append({"role": "user", "content": "Is that your final answer? Answer with the river's name."})
            continue
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
        for c in message.tool_calls:
            try:
                result = lookup(json.loads(c.function.arguments))
            except json.JSONDecodeError:
                result = "error: the arguments are not JSON"
            notes.append(result)
            messages.append({"role": "tool", "tool_call_id": c.id, "content": result})
    correct = task["answer"].lower() in answer.lower()
    print(json.dumps({"signals": {"correct": correct, "mentions_city": task["city"].lower() in answer.lower()}}))


if __name__ == "__main__":
    main()
