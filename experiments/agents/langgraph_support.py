"""A support agent on LangGraph's prebuilt ReAct agent with LangChain's OpenAI chat model,
unmodified: chat completions at OPENAI_BASE_URL with OPENAI_API_KEY, one tool. ARL starts it
once per episode (experiments/agents/frameworks.arl); it prints its outcome last."""

import json
import sys

from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent

STATUSES = {"A": "shipped", "B": "delivered", "C": "delayed"}
looked_up = []


@tool
def lookup_order(order_id: str) -> str:
    """The status of an order, by its id."""
    looked_up.append(order_id)
    return json.dumps({"status": STATUSES.get(order_id[:1], "unknown")})


task = json.loads(sys.stdin.readline())["task"]
agent = create_react_agent(ChatOpenAI(model="policy", max_retries=0), [lookup_order], prompt="Support assistant: look the order up, then answer.")
state = agent.invoke({"messages": [("user", task["message"])]}, {"recursion_limit": 8})
answer = str(state["messages"][-1].content)
print(json.dumps({"signals": {"resolved": task["status"] in answer.lower(), "found_order": task["order_id"] in looked_up}}))
