#!/usr/bin/env python3
"""A test server of a model provider's API that checks both sides against the provider's official
Python SDK: the request toolpick sends against the SDK's request type, the answer given against the
SDK's response model. One script for every provider; `--sdk` picks the protocol:

  --sdk anthropic  Messages (`POST /v1/messages`): requests validated as
                   `anthropic.types.message_create_params.MessageCreateParamsNonStreaming`, answers as
                   `anthropic.types.Message` (the `anthropic-sdk` tier, tests/anthropic_sdk.rs);
  --sdk openai     Responses (`POST /v1/responses`): requests validated as
                   `openai.types.responses.response_create_params.ResponseCreateParamsNonStreaming`,
                   answers as `openai.types.responses.Response` (the `openai-sdk` tier,
                   tests/responses_sdk.rs);
  --sdk gemini     generateContent (`POST /v1beta/models/{model}:generateContent`): each field of the
                   request validated as the `google-genai` type the REST API names (`contents` as
                   `list[Content]`, `systemInstruction` as `Content`, `tools` as `list[Tool]`,
                   `toolConfig` as `ToolConfig`, `generationConfig` as `GenerationConfig`; any other
                   field refused), and all but `contents` together as the SDK's
                   `GenerateContentConfig`; answers as `GenerateContentResponse` (the `gemini-sdk` tier,
                   tests/gemini_sdk.rs). The SDK's models forbid unknown fields.

Requests are validated with pydantic's TypeAdapter, the SDK's iterables consumed so that every nested
item is validated; answers with the model's `model_validate_json`. One JSON line per request goes to
--log: the request body, its headers of interest, whether it carried a key, the answer's status and
body, and the two validation errors (null when valid).

Two modes:
  --upstream URL   forward each request to another server (toolpick's mock endpoint) and check
                   its answers;
  --script FILE    answer from a script, with answers built as the SDK's own objects: JSON
                   {"usage": {...}, "answers": {"<query>": [{"name": ..., "input": {...}}, ...]}}
                   (`usage` in the protocol's own fields); the first request of a query answers its
                   calls (none: a refusal in text), the request carrying their results answers
                   "Done.".

Prints `PORT <n> <sdk> <version>` once listening on 127.0.0.1; exits when its standard input closes,
so it never outlives the test that started it. Run with the tier's Python (scripts/install-venv.sh
<tier>).
"""

import argparse
import json
import os
import sys
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pydantic

LOCK = threading.Lock()


def consumed(value):
    """`value` with pydantic's lazily validated iterables consumed (validating every item)."""
    if isinstance(value, dict):
        return {k: consumed(v) for k, v in value.items()}
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return value
    if hasattr(value, "__iter__"):
        return [consumed(v) for v in value]
    return value


class Anthropic:
    """Anthropic Messages."""

    path = "/v1/messages"

    def matches(self, path):
        return path == self.path

    def validate_request(self, body):
        consumed(self.request.validate_python(body))
    key_header = "x-api-key"
    headers = ("anthropic-version", "content-type")

    def __init__(self):
        import anthropic
        from anthropic.types import Message, TextBlock, ToolUseBlock, Usage
        from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

        self.version = anthropic.__version__
        self.request = pydantic.TypeAdapter(MessageCreateParamsNonStreaming)
        self.Message, self.TextBlock, self.ToolUseBlock, self.Usage = Message, TextBlock, ToolUseBlock, Usage

    def validate_response(self, text):
        self.Message.model_validate_json(text)

    def models(self):
        return {"data": [{"id": "script", "type": "model"}], "has_more": False}

    def scripted(self, script, body, n):
        messages = body.get("messages", [])
        last = messages[-1] if messages else {}
        content = last.get("content")
        results = isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)
        calls = [] if results else script["answers"].get(content if isinstance(content, str) else "", [])
        if results:
            blocks, stop = [self.TextBlock(type="text", text="Done.")], "end_turn"
        elif calls:
            blocks = [
                self.ToolUseBlock(type="tool_use", id=f"toolu_{n}_{i}", name=c["name"], input=c["input"])
                for i, c in enumerate(calls)
            ]
            stop = "tool_use"
        else:
            blocks, stop = [self.TextBlock(type="text", text="None of my tools can do that.")], "end_turn"
        return self.Message(
            id=f"msg_{n}",
            type="message",
            role="assistant",
            model=body.get("model", "script"),
            content=blocks,
            stop_reason=stop,
            stop_sequence=None,
            usage=self.Usage(**script["usage"]),
        ).model_dump_json()


class OpenAi:
    """OpenAI Responses."""

    path = "/v1/responses"

    def matches(self, path):
        return path == self.path

    def validate_request(self, body):
        consumed(self.request.validate_python(body))
    key_header = "authorization"
    headers = ("content-type",)

    def __init__(self):
        import openai
        from openai.types.responses import (
            Response,
            ResponseFunctionToolCall,
            ResponseOutputMessage,
            ResponseOutputText,
            ResponseUsage,
        )
        from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming

        self.version = openai.__version__
        self.request = pydantic.TypeAdapter(ResponseCreateParamsNonStreaming)
        self.Response, self.Call, self.Message, self.Text, self.Usage = (
            Response,
            ResponseFunctionToolCall,
            ResponseOutputMessage,
            ResponseOutputText,
            ResponseUsage,
        )

    def validate_response(self, text):
        # Strict: a count written as a string, or a missing required field, is refused.
        self.Response.model_validate_json(text, strict=True)

    def models(self):
        return {"object": "list", "data": [{"id": "script", "object": "model"}]}

    def scripted(self, script, body, n):
        items = body.get("input", [])
        items = items if isinstance(items, list) else [{"role": "user", "content": items}]
        last = items[-1] if items else {}
        results = last.get("type") == "function_call_output"
        query = last.get("content") if last.get("role") == "user" else None
        calls = [] if results else script["answers"].get(query if isinstance(query, str) else "", [])
        if calls:
            output = [
                self.Call(
                    type="function_call",
                    id=f"fc_{n}_{i}",
                    call_id=f"call_{n}_{i}",
                    name=c["name"],
                    arguments=json.dumps(c["input"]),
                    status="completed",
                )
                for i, c in enumerate(calls)
            ]
        else:
            text = "Done." if results else "None of my tools can do that."
            output = [
                self.Message(
                    type="message",
                    id=f"msg_{n}",
                    role="assistant",
                    status="completed",
                    content=[self.Text(type="output_text", text=text, annotations=[])],
                )
            ]
        return self.Response(
            id=f"resp_{n}",
            object="response",
            created_at=0,
            model=body.get("model", "script"),
            status="completed",
            output=output,
            parallel_tool_calls=body.get("parallel_tool_calls", True),
            tool_choice=body.get("tool_choice", "auto"),
            tools=[],
            usage=self.Usage(**script["usage"]),
        ).model_dump_json()


class Gemini:
    """Gemini generateContent."""

    key_header = "x-goog-api-key"
    headers = ("content-type",)

    def __init__(self):
        import google.genai
        from google.genai import types

        self.version = google.genai.__version__
        self.t = types
        self.fields = {
            "contents": pydantic.TypeAdapter(list[types.Content]),
            "systemInstruction": pydantic.TypeAdapter(types.Content),
            "tools": pydantic.TypeAdapter(list[types.Tool]),
            "toolConfig": pydantic.TypeAdapter(types.ToolConfig),
            "generationConfig": pydantic.TypeAdapter(types.GenerationConfig),
        }

    def matches(self, path):
        return path.startswith("/v1beta/models/") and path.endswith(":generateContent")

    def validate_request(self, body):
        unknown = sorted(set(body) - set(self.fields))
        if unknown or "contents" not in body:
            raise ValueError(f"fields not in the request: {unknown}; contents present: {'contents' in body}")
        for name, value in body.items():
            # As JSON, so that bytes (thoughtSignature) are read as the API writes them: base64.
            self.fields[name].validate_json(json.dumps(value))
        config = dict(body.get("generationConfig", {}))
        for name in ("systemInstruction", "tools", "toolConfig"):
            if name in body:
                config[name] = body[name]
        self.t.GenerateContentConfig.model_validate_json(json.dumps(config))

    def validate_response(self, text):
        self.t.GenerateContentResponse.model_validate_json(text)

    def models(self):
        return {"models": [{"name": "models/script"}]}

    def scripted(self, script, body, n):
        t = self.t
        contents = body.get("contents", [])
        parts = contents[-1].get("parts", []) if contents else []
        results = any("functionResponse" in p for p in parts)
        query = parts[0].get("text", "") if parts else ""
        calls = [] if results else script["answers"].get(query, [])
        if calls:
            out = [
                t.Part(
                    function_call=t.FunctionCall(name=c["name"], args=c["input"]),
                    thought_signature=f"signed-{n}".encode() if i == 0 else None,
                )
                for i, c in enumerate(calls)
            ]
        else:
            out = [t.Part(text="Done." if results else "None of my tools can do that.")]
        return t.GenerateContentResponse(
            candidates=[t.Candidate(content=t.Content(role="model", parts=out), finish_reason="STOP", index=0)],
            usage_metadata=t.GenerateContentResponseUsageMetadata.model_validate(script["usage"]),
            model_version="script",
            response_id=f"script-{n}",
        ).model_dump_json(by_alias=True, exclude_none=True)


SDKS = {"anthropic": Anthropic, "openai": OpenAi, "gemini": Gemini}


def forwarded(upstream, method, path, headers, data):
    req = urllib.request.Request(upstream + path, data=data, method=method)
    for name in ("content-type", "x-api-key", "anthropic-version", "authorization", "x-goog-api-key"):
        if name in headers:
            req.add_header(name, headers[name])
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sdk", choices=sorted(SDKS), required=True)
    parser.add_argument("--log", required=True)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--upstream")
    mode.add_argument("--script")
    args = parser.parse_args()
    sdk = SDKS[args.sdk]()
    script = json.load(open(args.script)) if args.script else None
    counter = [0]

    def request_error(body):
        try:
            sdk.validate_request(body)
            return None
        except ValueError as e:  # pydantic's ValidationError among them
            return str(e)[:4000]

    def response_error(text):
        try:
            sdk.validate_response(text)
            return None
        except pydantic.ValidationError as e:
            return str(e)[:4000]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def answer(self, status, headers, text):
            data = text.encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for k, v in headers.items():
                if k.lower() == "retry-after":
                    self.send_header("retry-after", v)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            headers = {k.lower(): v for k, v in self.headers.items()}
            if args.upstream:
                status, h, text = forwarded(args.upstream, "GET", self.path, headers, None)
            else:
                status, h, text = 200, {}, json.dumps(sdk.models())
            self.answer(status, h, text)

        def do_POST(self):
            headers = {k.lower(): v for k, v in self.headers.items()}
            data = self.rfile.read(int(headers.get("content-length", "0")))
            with LOCK:
                counter[0] += 1
                n = counter[0]
            try:
                body = json.loads(data)
            except ValueError as e:
                body, req_error = None, f"not JSON: {e}"
            else:
                req_error = request_error(body) if sdk.matches(self.path) else None
            if args.upstream:
                status, h, text = forwarded(args.upstream, "POST", self.path, headers, data)
            else:
                status, h, text = 200, {}, sdk.scripted(script, body or {}, n)
            resp_error = response_error(text) if status == 200 else None
            line = {
                "n": n,
                "path": self.path,
                "headers": {k: headers.get(k) for k in sdk.headers},
                "has_key": sdk.key_header in headers,
                "request": body,
                "request_error": req_error,
                "status": status,
                "response": json.loads(text) if status == 200 and resp_error is None else text,
                "response_error": resp_error,
            }
            with LOCK, open(args.log, "a") as log:
                log.write(json.dumps(line) + "\n")
            self.answer(status, h, text)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"PORT {server.server_address[1]} {args.sdk} {sdk.version}", flush=True)

    def watch_stdin():
        sys.stdin.read()
        os._exit(0)

    threading.Thread(target=watch_stdin, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
