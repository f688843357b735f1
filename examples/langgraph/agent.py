"""A LangGraph agent that searches your indices through rcp-sidecar's MCP tools.

    pip install langgraph langchain-mcp-adapters "langchain[anthropic]"
    export ANTHROPIC_API_KEY=...
    python agent.py "why do comets have tails"

By default it spawns `rcp-sidecar mcp --demo` (stdio); point it at your own
configuration with RCP_SIDECAR_ARGS="mcp --config config.yaml", or at a
running sidecar with RCP_MCP_URL=https://search.example.com/mcp and
RCP_MCP_KEY=<api key> (Streamable HTTP, bearer key).

AGENT_MODEL picks the chat model (any `init_chat_model` id, default
anthropic:claude-sonnet-4-5). AGENT_MODEL=scripted uses a stand-in model,
with no network and no key, that calls the search tool once with the
question and answers with the top hit: it exercises the MCP tools, the
adapters and the LangGraph loop exactly as a real model would, and is what
the project's CI runs.
"""

import asyncio
import os
import shlex
import sys

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_mcp_adapters.client import MultiServerMCPClient
from langgraph.prebuilt import create_react_agent


class ScriptedModel(BaseChatModel):
    """Stand-in chat model: search once, then answer with the top hit."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if not results:
            question = messages[-1].content
            call = {"name": "search", "args": {"query": question, "k": 3}, "id": "call-1", "type": "tool_call"}
            msg = AIMessage(content="", tool_calls=[call])
        else:
            content = results[-1].content
            text = content if isinstance(content, str) else " ".join(
                c.get("text", "") if isinstance(c, dict) else str(c) for c in content)
            first = text.strip().splitlines()[0] if text.strip() else "no hits"
            msg = AIMessage(content="Top hit: " + first)
        return ChatResult(generations=[ChatGeneration(message=msg)])


def connection():
    url = os.environ.get("RCP_MCP_URL")
    if url:
        headers = {"Authorization": "Bearer " + os.environ["RCP_MCP_KEY"]} if os.environ.get("RCP_MCP_KEY") else {}
        return {"transport": "streamable_http", "url": url, "headers": headers}
    binary = os.environ.get("RCP_SIDECAR_BIN", "rcp-sidecar")
    args = shlex.split(os.environ.get("RCP_SIDECAR_ARGS", "mcp --demo"))
    return {"transport": "stdio", "command": binary, "args": args}


async def main(question: str) -> None:
    client = MultiServerMCPClient({"rcp": connection()})
    tools = await client.get_tools()
    print("tools:", ", ".join(t.name for t in tools))
    name = os.environ.get("AGENT_MODEL", "anthropic:claude-sonnet-4-5")
    if name == "scripted":
        model = ScriptedModel()
    else:
        from langchain.chat_models import init_chat_model

        model = init_chat_model(name)
    agent = create_react_agent(model, tools)
    state = await agent.ainvoke({"messages": [("user", question)]})
    for m in state["messages"]:
        if isinstance(m, AIMessage) and m.tool_calls:
            for c in m.tool_calls:
                print("tool call:", c["name"], c["args"])
        elif isinstance(m, ToolMessage):
            print("tool result:", str(m.content)[:300].replace("\n", " | "))
    print("answer:", state["messages"][-1].content)


if __name__ == "__main__":
    asyncio.run(main(" ".join(sys.argv[1:]) or "why do comets have tails"))
