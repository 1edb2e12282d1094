"""A client for the official MCP conformance suite, using only llm_mcp's public API.

The suite runs ``python -m llm_mcp_tests.support.conformance.client <server URL>`` with
``MCP_CONFORMANCE_SCENARIO`` (and, for some scenarios, ``MCP_CONFORMANCE_CONTEXT``, JSON)
in the environment, and judges what reaches its server. Exit status 0 means the client
did its part; the suite decides whether the scenario passed.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import sys

import llm_mcp


def placeholder_arguments(tool: llm_mcp.Tool) -> dict:
    """Arguments that satisfy a tool's required properties with simple values."""
    samples = {"string": "test", "integer": 1, "number": 1, "boolean": True, "array": [], "object": {}}
    properties = tool.input_schema.get("properties") or {}
    required = tool.input_schema.get("required") or []
    return {name: samples.get((properties.get(name) or {}).get("type"), "test") for name in required}


def call_every_tool(server: llm_mcp.MCP) -> None:
    for tool in server.tools:
        try:
            tool.call(**placeholder_arguments(tool))
        except llm_mcp.MCPError as exc:
            logging.info("tool %s failed: %s", tool.server_name, exc)


# Scenario families with their own module (each exposes ``run(scenario, url, context)``).
FAMILIES = {
    "auth/client-credentials-": "llm_mcp_tests.support.conformance.machine",
    "auth/enterprise-managed-authorization": "llm_mcp_tests.support.conformance.machine",
    "auth/dpop": "llm_mcp_tests.support.conformance.machine",
    "auth/wif-": "llm_mcp_tests.support.conformance.machine",
    "auth/": "llm_mcp_tests.support.conformance.auth",
    "sep-2322-": "llm_mcp_tests.support.conformance.questions",
    "elicitation-": "llm_mcp_tests.support.conformance.questions",
    "sep-2640-": "llm_mcp_tests.support.conformance.skills",
}


def run(scenario: str, url: str) -> None:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    family = next((module for prefix, module in FAMILIES.items() if scenario.startswith(prefix)), None)
    if family is not None:
        importlib.import_module(family).run(scenario, url, context)
        return
    with llm_mcp.mcp(url=url, name="conformance") as server:
        if scenario == "tools_call":
            server.call("add_numbers", a=5, b=3)
        elif scenario == "sse-retry":
            server.call("test_reconnection")
        elif scenario == "json-schema-2020-12-preservation":
            schema = server.tool("json_schema_2020_12_tool").input_schema
            server.call("json_schema_echo", schema=schema)
        elif scenario == "http-custom-headers":
            server.tools
            for call in context.get("toolCalls", []):
                server.call(call["name"], **call.get("arguments", {}))
        elif scenario in ("http-invalid-tool-headers",):
            call_every_tool(server)
        elif scenario == "http-standard-headers":
            call_every_tool(server)
            for resource in server.resources:
                resource.content  # noqa: B018 - read lazily: this sends resources/read
            for prompt in server.prompts:
                server.prompt(prompt.name)
        else:  # initialize, request-metadata, json-schema-ref-no-deref, and anything new: connect and list
            server.tools


def main(argv: list[str]) -> int:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    if len(argv) < 2:
        print("usage: python -m llm_mcp_tests.support.conformance.client SERVER_URL", file=sys.stderr)
        return 2
    run(os.environ.get("MCP_CONFORMANCE_SCENARIO", ""), argv[-1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
