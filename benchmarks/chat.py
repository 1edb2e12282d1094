#!/usr/bin/env python
"""What a chat turn with one MCP tool call costs on top of its parts, over loopback.

    python benchmarks/chat.py                  # 100 turns x 5 rounds per contender
    python benchmarks/chat.py --quick          # 10 turns x 2 rounds: a smoke run
    python benchmarks/chat.py --json out.json  # also write the numbers as JSON

One turn: the model (``ScriptedModel`` over HTTP, through the real OpenAI SDK) asks for the
echo server's ``echo`` tool, the tool runs (Streamable HTTP, 2026-07-28), the model answers.

* ``floor``: the same two model requests and one tool call written by hand: the OpenAI SDK
  called directly with the tool's schema, ``server.call("echo", ...)``, the tool message
  appended by hand. Everything a chat must do, and nothing else.
* ``chat``: ``chat.ask(...)`` on a fresh ``llm_mcp.chat`` each turn, with the server connected
  by ``with_mcp`` (tools listed once per server object, as in an app that keeps it).
* ``pydantic-ai``: the framework a Python user would otherwise pick (``pydantic-ai-slim``, the
  ``bench`` extra): an ``Agent`` with an ``OpenAIChatModel`` on the same scripted model and an
  ``MCPToolset`` on the same server, both kept across turns (its toolset connected once, in a
  private event loop), ``agent.run(...)`` per turn. Left out when pydantic-ai is not installed.

Then *parallel tool calls*: a turn in which the model asks for 10 calls of the echo server's
``sleep`` tool at once (``--sleep`` seconds each; ``chat(concurrency=10)``), against a turn with
one such call. ``x one call`` is the 10-call turn's wall time over the 1-call turn's: about 1
when the calls overlap, about 10 when they run one after the other.

Client CPU is ``time.process_time()`` of this process (the scripted model runs in a thread of
it, so both contenders carry its cost alike); wall is ``time.perf_counter()``. Within a round the
contenders take turns one turn at a time (who starts moves each round), so a change in the
machine's load falls on all of them. Reported: the median over rounds of the per-turn figures
and their ratio to the floor of the same run, and ``CPU x/rd``, the median of each round's ratio.
Nothing passes or fails on speed.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _repo  # noqa: F401 - first: puts this repository on sys.path

import llm_mcp
from llm_mcp.testing.scripted_model import ScriptedModel, reply, tool_call, turn
from llm_mcp_tests.support.processes import ECHO_SERVER, PYTHON, ServerProcess, free_port


def turns(count: int) -> list[Any]:
    return [item for _ in range(count) for item in (tool_call("echo", {"message": "hi"}), reply("done"))]


def floor_turn(client: Any, server: llm_mcp.MCP, spec: dict[str, Any]) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "echo hi"}]
    first = client.chat.completions.create(model="m", messages=messages, tools=[spec])
    call = first.choices[0].message.tool_calls[0]
    result = server.call(call.function.name, **json.loads(call.function.arguments))
    messages.append({"role": "assistant", "content": None, "tool_calls": [
        {"id": call.id, "type": "function", "function": {"name": call.function.name,
                                                         "arguments": call.function.arguments}}]})
    messages.append({"role": "tool", "tool_call_id": call.id, "content": result.text})
    second = client.chat.completions.create(model="m", messages=messages, tools=[spec])
    assert second.choices[0].message.content == "done" and result.text == "hi"


def chat_turn(model: ScriptedModel, server: llm_mcp.MCP) -> None:
    chat = llm_mcp.chat("m", "openai", base_url=model.openai_base_url, api_key="bench").with_mcp(server)
    assert chat.ask("echo hi").content == "done" and chat.messages[2].content == "hi"


class PydanticAI:
    """pydantic-ai's ``Agent`` with an ``MCPToolset``, driven from a private event loop."""

    def __init__(self, model: ScriptedModel, url: str):
        import asyncio

        from pydantic_ai import Agent
        from pydantic_ai.mcp import MCPToolset
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        self.loop = asyncio.new_event_loop()
        provider = OpenAIProvider(base_url=model.openai_base_url, api_key="bench")
        self.agent = Agent(OpenAIChatModel("m", provider=provider), toolsets=[MCPToolset(url)])
        self.loop.run_until_complete(self.agent.__aenter__())

    def turn(self) -> None:
        result = self.loop.run_until_complete(self.agent.run("echo hi"))
        returned = [part.content for message in result.all_messages() for part in message.parts
                    if type(part).__name__ == "ToolReturnPart"]
        assert result.output == "done" and returned == ["hi"], (result.output, returned)

    def close(self) -> None:
        try:
            self.loop.run_until_complete(self.agent.__aexit__(None, None, None))
        finally:
            self.loop.close()


def have_pydantic_ai() -> bool:
    try:
        import pydantic_ai  # noqa: F401
    except ImportError:
        return False
    return True


def parallel_turns(url: str, seconds: float, rounds: int) -> list[dict[str, Any]]:
    """Wall time of a turn with 1 and with 10 ``sleep`` calls the model asks for at once."""
    server = llm_mcp.mcp(url=url, name="slow", only=["sleep"])
    samples: dict[int, list[float]] = {1: [], 10: []}
    with ScriptedModel() as model:
        for _ in range(rounds + 1):  # the first round warms up (tool list, connections)
            for calls in (1, 10):
                model.add(turn(tool_calls=[tool_call("sleep", {"seconds": seconds}) for _ in range(calls)]),
                          reply("slept"))
                chat = llm_mcp.chat("m", "openai", base_url=model.openai_base_url, api_key="bench",
                                    concurrency=10).with_mcp(server)
                started = time.perf_counter()
                answer = chat.ask("sleep")
                samples[calls].append(time.perf_counter() - started)
                results = [m.content for m in chat.messages if m.role == "tool"]
                assert answer.content == "slept" and results == [f"slept {seconds:g}"] * calls, results
    server.close()
    one = statistics.median(samples[1][1:])
    return [{"name": f"{calls} parallel call{'s' if calls > 1 else ''}", "calls": calls,
             "wall_ms": statistics.median(values[1:]) * 1000, "ratio_to_one_call": statistics.median(values[1:]) / one}
            for calls, values in samples.items()]


def measure(run: Callable[[], None], n: int) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(n):
        run()
    return (time.process_time() - cpu) / n, (time.perf_counter() - wall) / n


def measure_round(runs: list[Callable[[], None]], n: int) -> list[tuple[float, float]]:
    """``n`` turns of each contender, taken in turn (one of each, in the order given, then again),
    so that a change in the machine's load falls on all alike; each one's mean CPU and wall."""
    cpu, wall = [0.0] * len(runs), [0.0] * len(runs)
    for _ in range(n):
        for i, run in enumerate(runs):
            c0, w0 = time.process_time(), time.perf_counter()
            run()
            cpu[i] += time.process_time() - c0
            wall[i] += time.perf_counter() - w0
    return [(c / n, w / n) for c, w in zip(cpu, wall)]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="10 turns x 2 rounds")
    parser.add_argument("--sleep", type=float, default=0.5, help="seconds each parallel call sleeps (default 0.5)")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args(argv)
    if args.quick:
        args.turns, args.rounds = 10, 2
    logging.getLogger("llm_mcp").setLevel(logging.ERROR)
    import openai

    port = free_port()
    echo = ServerProcess([PYTHON, ECHO_SERVER, "--era", "modern", "--http", str(port), "--json-response"], port)
    echo.wait_ready()
    total = (args.turns * args.rounds + 5) * 3
    server_url = f"http://127.0.0.1:{port}/mcp"
    try:
        with ScriptedModel(turns(total)) as model:
            server = llm_mcp.mcp(url=server_url, name="echo", only=["echo"])
            tool = server.tool("echo")
            spec = {"type": "function", "function": {"name": tool.name, "description": tool.description,
                                                     "parameters": tool.input_schema}}
            client = openai.OpenAI(base_url=model.openai_base_url, api_key="bench")
            contenders: dict[str, Callable[[], None]] = {
                "floor": lambda: floor_turn(client, server, spec), "chat": lambda: chat_turn(model, server)}
            peer = PydanticAI(model, server_url) if have_pydantic_ai() else None
            if peer is not None:
                contenders["pydantic-ai"] = peer.turn
            try:
                for run in contenders.values():  # warm up: connections, imports, caches
                    measure(run, 2)
                samples: dict[str, list[tuple[float, float]]] = {name: [] for name in contenders}
                for round_number in range(args.rounds):
                    shift = round_number % len(contenders)
                    names = list(contenders)[shift:] + list(contenders)[:shift]
                    for name, sample in zip(names, measure_round([contenders[n] for n in names], args.turns)):
                        samples[name].append(sample)
            finally:
                if peer is not None:
                    peer.close()
                server.close()
            parallel = parallel_turns(server_url, args.sleep, args.rounds)
    finally:
        echo.stop()
    floor_cpu = statistics.median(s[0] for s in samples["floor"])
    floor_wall = statistics.median(s[1] for s in samples["floor"])
    rows = []
    for name, values in samples.items():
        cpu, wall = statistics.median(v[0] for v in values), statistics.median(v[1] for v in values)
        paired = statistics.median(v[0] / f[0] for v, f in zip(values, samples["floor"]))
        rows.append({"name": name, "cpu_ms": cpu * 1000, "wall_ms": wall * 1000,
                     "cpu_ratio": cpu / floor_cpu, "wall_ratio": wall / floor_wall, "cpu_ratio_paired": paired})
    print(f"chat turn with one MCP tool call: {args.turns} turns x {args.rounds} rounds (the contenders take turns "
          "one turn at a time; CPU x/rd = median over rounds of that round's CPU ratio)")
    print(f"{'contender':<12} {'CPU ms':>8} {'wall ms':>8} {'CPU x':>6} {'wall x':>6} {'CPU x/rd':>8}")
    for row in rows:
        print(f"{row['name']:<12} {row['cpu_ms']:>8.2f} {row['wall_ms']:>8.2f} {row['cpu_ratio']:>6.2f} "
              f"{row['wall_ratio']:>6.2f} {row['cpu_ratio_paired']:>8.2f}")
    print()
    print(f"chat turn with parallel tool calls ({args.sleep:g} s each, concurrency=10); median of {args.rounds} rounds")
    print(f"{'turn':<18} {'wall ms':>8} {'x one call':>10}")
    for row in parallel:
        print(f"{row['name']:<18} {row['wall_ms']:>8.1f} {row['ratio_to_one_call']:>10.2f}")
    results = {"turns": args.turns, "rounds": args.rounds, "rows": rows, "parallel": parallel,
               "sleep_seconds": args.sleep}
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
