"""A stdio "server" that fails while starting, as ``npx -y <package that does not exist>`` does.

Usage::

    python llm_mcp_tests/support/servers/fails_to_start.py COUNT_FILE [STDOUT_LINE]

It appends one line to ``COUNT_FILE`` (so a test counts the starts), writes npm's E404 lines
to stderr (with an ANSI colour sequence, and the value of ``$API_TOKEN``), and exits with
status 1 without reading its stdin. With ``STDOUT_LINE`` it first writes that line to its
stdout (as a program printing its usage there does) and exits 0.3 s later, once the client
has read it.
"""

from __future__ import annotations

import os
import sys
import time

STDERR_LINES = [
    "npm error code E404",
    "npm error 404 Not Found - GET https://registry.npmjs.org/@modelcontextprotocol%2fserver-doesnotexist - Not found",
    "npm error 404 \x1b[31mThe requested resource could not be found\x1b[0m",
]


def main() -> None:
    with open(sys.argv[1], "a") as count:
        count.write("started\n")
    if len(sys.argv) > 2:
        sys.stdout.write(sys.argv[2] + "\n")
        sys.stdout.flush()
        time.sleep(0.3)
    for line in STDERR_LINES:
        sys.stderr.write(line + "\n")
    sys.stderr.write(f"npm verbose env API_TOKEN={os.environ.get('API_TOKEN', '')}\n")
    sys.stderr.flush()
    sys.exit(1)


if __name__ == "__main__":
    main()
