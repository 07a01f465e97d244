#!/usr/bin/env python3
"""A minimal MCP agent, for `toolpick run --backends mcp-agent:<this script>`.

toolpick starts it once per episode: the task's query comes on standard input (and the messages the
episode opens with, system prompt first, in $TOOLPICK_MESSAGES), the MCP server that serves the cell's
layout (flat, progressive, progressive-oss or search) is at $TOOLPICK_MCP_URL. The
agent lists the tools, asks an OpenAI-compatible chat-completions endpoint ($OPENAI_BASE_URL, model
$AGENT_MODEL, key $OPENAI_API_KEY) what to do, calls the tools it chooses through MCP, and repeats until
the model answers without a call; that answer, printed on standard output, is the episode's final
answer. Offline, point it at `toolpick mock-endpoint` (a test double that decides like the lexical
baseline).

Needs the Python `mcp` SDK (PyPI `mcp`; `scripts/install-mcp-servers.sh --python` puts a pinned one in
target/mcp-servers/venv). The model request uses only the standard library.
"""
import asyncio
import json
import os
import sys
import urllib.request

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

SYSTEM = "You are an assistant that can use tools. Use the tools to do what the user asks. If none of the tools can do it, say so and do not call any tool."


def chat(messages, tools):
    base = os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1").rstrip("/")
    body = {"model": os.environ.get("AGENT_MODEL", "mock"), "messages": messages}
    if tools:
        body["tools"] = tools
    request = urllib.request.Request(
        base + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer " + os.environ.get("OPENAI_API_KEY", "none")},
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.load(response)["choices"][0]["message"]


def text_of(result):
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def main():
    query = sys.stdin.read()
    async with streamable_http_client(os.environ["TOOLPICK_MCP_URL"]) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            # toolpick passes the messages its own loop opens with (a benchmark's system prompt, if the
            # task has one, in place of SYSTEM); without them, start from SYSTEM and the query.
            opening = os.environ.get("TOOLPICK_MESSAGES")
            messages = json.loads(opening) if opening else [{"role": "system", "content": SYSTEM}, {"role": "user", "content": query}]
            for _ in range(int(os.environ.get("AGENT_MAX_STEPS", "8"))):
                # Listed again every turn: a layout that loads tools on demand offers more as it goes.
                listed = await session.list_tools()
                tools = [{"type": "function", "function": {"name": t.name, "description": t.description or "", "parameters": t.input_schema}} for t in listed.tools]
                message = chat(messages, tools)
                calls = message.get("tool_calls") or []
                if not calls:
                    print(message.get("content") or "")
                    return
                messages.append({"role": "assistant", "content": message.get("content"), "tool_calls": calls})
                for call in calls:
                    try:
                        arguments = json.loads(call["function"].get("arguments") or "{}")
                    except ValueError:
                        arguments = {}
                    try:
                        result = text_of(await session.call_tool(call["function"]["name"], arguments if isinstance(arguments, dict) else {}))
                    except Exception as error:  # a JSON-RPC error (-32602 for a tool not on offer): the model reads it
                        result = str(error)
                    messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    print("")


if __name__ == "__main__":
    asyncio.run(main())
