"""Instructions per stdio ``tools/call``, counted by callgrind: the deterministic figure.

    python benchmarks/instructions.py            # each layer and the floor (valgrind, ~2 minutes)
    python benchmarks/instructions.py --quick    # a smoke run: the layers run and answer, nothing counted
    python benchmarks/instructions.py --json PATH

CPU time on a shared 2-vCPU machine moves by 10 to 50 % between runs; an instruction count
moves by less than 0.1 %. The client under test talks to a real echo server process (its
start, ``server/discover`` and ``tools/list`` are real); then the transport's write is
replaced by one that puts the canned answer into a pipe the transport reads as the server's
stdout: what one call costs the client when nothing waits, without the kernel's share.

Each contender runs in a fresh interpreter under ``valgrind --tool=callgrind`` twice, with
``SMALL`` and ``LARGE`` calls; the difference divided by ``LARGE - SMALL`` is its cost per call.
Contenders (``layer``):

* ``floor``: the loop a hand-written client needs: the prepared request written, ``poll``,
  ``os.read``, ``json.loads``, the text checked (the same canned answer, the same write stand-in).
* ``transport``: ``StdioTransport.request`` with a built message (encoding included).
* ``session``: ``Client.request("tools/call", ...)`` (``_meta``, checks, the result).
* ``call``: ``server.call("echo", message=...)``, the whole call, ``Result`` included.

Each figure is also given as a ratio to the floor. Requires valgrind (Debian: ``valgrind``);
without it the script says so and exits 2 (``--quick`` needs none).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _repo import REPO

LAYERS = ("floor", "transport", "session", "call")
SMALL, LARGE = 200, 1200
MESSAGE = "hello"
ANSWER = (b'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"' + MESSAGE.encode()
          + b'"}],"isError":false}}\n')
ID = re.compile(rb'"id": ?(\d+)')


def prepared(layer: str) -> Callable[[], None]:
    """Start the echo server, connect, and return one call of ``layer`` against the stand-in."""
    import llm_mcp
    from llm_mcp.client import protocol
    from llm_mcp_tests.support.processes import echo_command

    server = llm_mcp.mcp(name="echo", command=echo_command("auto"))
    if server.call("echo", message=MESSAGE).text != MESSAGE:
        raise AssertionError("the echo server did not answer")
    client = server.client
    transport = client.transport
    stream = transport._stream
    read_end, write_end = os.pipe()
    stream.fd = read_end  # the transport reads the canned answers from here from now on
    stream.poller = select.poll()
    stream.poller.register(read_end, select.POLLIN | select.POLLHUP | select.POLLERR)

    def answer(to: Any, data: bytes, deadline: float | None = None) -> int:
        found = ID.search(data)
        if found is None:
            raise AssertionError(f"no id in {data[:200]!r}")
        os.write(write_end, ANSWER % found.group(1))
        start, to.sent = to.sent, to.sent + len(data)
        return start

    transport._send = answer
    version = client.protocol_version
    arguments = {"name": "echo", "arguments": {"message": MESSAGE}}

    def check(text: Any) -> None:
        if text != MESSAGE:
            raise AssertionError(f"answered {text!r}")

    if layer == "floor":
        body = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": arguments}).encode() + b"\n"
        poller = stream.poller

        def floor() -> None:
            answer(stream, body)
            poller.poll(1000)
            check(json.loads(os.read(read_end, 1 << 16))["result"]["content"][0]["text"])
        return floor
    if layer == "transport":
        return lambda: check(transport.request(protocol.request("tools/call", arguments),
                                               version=version)["result"]["content"][0]["text"])
    if layer == "session":
        return lambda: check(client.request("tools/call", arguments)["content"][0]["text"])
    if layer == "call":
        return lambda: check(server.call("echo", message=MESSAGE).text)
    raise SystemExit(f"unknown layer {layer!r}")


def child(layer: str, calls: int) -> None:
    """Run in the measured interpreter: ``calls`` calls of ``layer``, then exit at once."""
    import logging

    logging.getLogger("llm_mcp").setLevel(logging.ERROR)  # the echo server's two bad tools warn
    one = prepared(layer)
    for _ in range(calls):
        one()
    sys.stdout.flush()
    os._exit(0)  # no teardown counted (the server sees its stdin close and ends)


def counted(layer: str, calls: int) -> int:
    """Instructions callgrind counts for a fresh interpreter running ``calls`` calls of ``layer``."""
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
                           __file__, "--child", layer, str(calls)], capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONHASHSEED": "0"}, cwd=str(REPO), timeout=900)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"{layer}: valgrind failed: {done.stderr[-2000:]}")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="run each layer 50 times, count nothing")
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON to PATH")
    parser.add_argument("--child", nargs=2, metavar=("LAYER", "CALLS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], int(args.child[1]))
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    if args.quick:
        for layer in LAYERS:
            done = subprocess.run([sys.executable, __file__, "--child", layer, "50"], capture_output=True, text=True,
                                  check=False, cwd=str(REPO), timeout=120)
            if done.returncode != 0:
                print(done.stderr[-2000:], file=sys.stderr)
                return 1
            rows.append({"layer": layer, "instructions": None, "ratio": None})
        print("instructions per call: --quick counts nothing; every layer ran and answered")
    else:
        if shutil.which("valgrind") is None:
            print("valgrind is not installed (Debian: apt-get install valgrind)", file=sys.stderr)
            return 2
        for layer in LAYERS:
            print(f"counting {layer} ...", file=sys.stderr, flush=True)
            per_call = (counted(layer, LARGE) - counted(layer, SMALL)) / (LARGE - SMALL)
            rows.append({"layer": layer, "instructions": round(per_call)})
        floor = rows[0]["instructions"]
        for row in rows:
            row["ratio"] = round(row["instructions"] / floor, 2)
        print("instructions per stdio tools/call (callgrind; the server answering at once)")
        print(f"{'layer':<10} {'instructions':>12} {'x floor':>8}")
        for row in rows:
            print(f"{row['layer']:<10} {row['instructions']:>12,} {row['ratio']:>8.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "quick": args.quick, "small": SMALL, "large": LARGE,
                                               "seconds": time.perf_counter() - started}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
