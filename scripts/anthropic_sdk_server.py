#!/usr/bin/env python3
"""A test server of the Anthropic Messages API that checks both sides against the official Python SDK.

Every `POST /v1/messages` body is validated against the SDK's request type
(`anthropic.types.message_create_params.MessageCreateParamsNonStreaming`, with pydantic's TypeAdapter;
its iterables are consumed so that every nested item is validated), and every answer given is
validated against the SDK's response model (`anthropic.types.Message`). One JSON line per request goes
to --log: the request body, its headers of interest, the answer's status and body, and the two
validation errors (null when valid).

Two modes:
  --upstream URL   forward each request to another server (toolpick's mock endpoint) and check
                   its answers;
  --script FILE    answer from a script, with answers built as the SDK's own objects: JSON
                   {"usage": {...}, "answers": {"<query>": [{"name": ..., "input": {...}}, ...]}};
                   the first request of a query answers its calls (none: a refusal in text), the
                   request carrying their results answers "Done.".

Prints `PORT <n>` once listening on 127.0.0.1; exits when its standard input closes, so it never
outlives the test that started it. tests/anthropic_sdk.rs runs it with the `anthropic-sdk` tier's
Python (scripts/install-anthropic-sdk.sh).
"""

import argparse
import json
import os
import sys
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anthropic
import pydantic
from anthropic.types import Message, TextBlock, ToolUseBlock, Usage
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

REQUEST = pydantic.TypeAdapter(MessageCreateParamsNonStreaming)
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


def request_error(body):
    try:
        consumed(REQUEST.validate_python(body))
        return None
    except pydantic.ValidationError as e:
        return str(e)[:4000]


def response_error(text):
    try:
        Message.model_validate_json(text)
        return None
    except pydantic.ValidationError as e:
        return str(e)[:4000]


def scripted(script, body, n):
    """The SDK `Message` answering `body` from the script."""
    messages = body.get("messages", [])
    last = messages[-1] if messages else {}
    content = last.get("content")
    results = isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)
    if results:
        blocks, stop = [TextBlock(type="text", text="Done.")], "end_turn"
    else:
        query = content if isinstance(content, str) else ""
        calls = script["answers"].get(query, [])
        if calls:
            blocks = [
                ToolUseBlock(type="tool_use", id=f"toolu_{n}_{i}", name=c["name"], input=c["input"])
                for i, c in enumerate(calls)
            ]
            stop = "tool_use"
        else:
            blocks, stop = [TextBlock(type="text", text="None of my tools can do that.")], "end_turn"
    message = Message(
        id=f"msg_{n}",
        type="message",
        role="assistant",
        model=body.get("model", "script"),
        content=blocks,
        stop_reason=stop,
        stop_sequence=None,
        usage=Usage(**script["usage"]),
    )
    return 200, {}, message.model_dump_json()


def forwarded(upstream, method, path, headers, data):
    req = urllib.request.Request(upstream + path, data=data, method=method)
    for name in ("content-type", "x-api-key", "anthropic-version", "authorization"):
        if name in headers:
            req.add_header(name, headers[name])
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--upstream")
    mode.add_argument("--script")
    args = parser.parse_args()
    script = json.load(open(args.script)) if args.script else None
    counter = [0]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def answer(self, status, headers, text):
            data = text.encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for name in ("retry-after",):
                for k, v in headers.items():
                    if k.lower() == name:
                        self.send_header(name, v)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            headers = {k.lower(): v for k, v in self.headers.items()}
            if args.upstream:
                status, h, text = forwarded(args.upstream, "GET", self.path, headers, None)
            else:
                status, h, text = 200, {}, json.dumps({"data": [{"id": "script", "type": "model"}], "has_more": False})
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
                req_error = request_error(body) if self.path == "/v1/messages" else None
            if args.upstream:
                status, h, text = forwarded(args.upstream, "POST", self.path, headers, data)
            else:
                status, h, text = scripted(script, body or {}, n)
            resp_error = response_error(text) if status == 200 else None
            line = {
                "n": n,
                "path": self.path,
                "headers": {k: headers.get(k) for k in ("anthropic-version", "content-type")},
                "has_key": "x-api-key" in headers,
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
    print(f"PORT {server.server_address[1]} anthropic {anthropic.__version__}", flush=True)

    def watch_stdin():
        sys.stdin.read()
        os._exit(0)

    threading.Thread(target=watch_stdin, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
