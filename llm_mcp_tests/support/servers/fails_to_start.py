"""A stdio "server" that fails while starting, as ``npx -y <package that does not exist>`` does.

Usage::

    python llm_mcp_tests/support/servers/fails_to_start.py COUNT_FILE

It appends one line to ``COUNT_FILE`` (so a test counts the starts), writes npm's E404 lines
to stderr (with an ANSI colour sequence, and the value of ``$API_TOKEN``), and exits with
status 1 without reading its stdin.
"""

from __future__ import annotations

import os
import sys

STDERR_LINES = [
    "npm error code E404",
    "npm error 404 Not Found - GET https://registry.npmjs.org/@modelcontextprotocol%2fserver-doesnotexist - Not found",
    "npm error 404 \x1b[31mThe requested resource could not be found\x1b[0m",
]


def main() -> None:
    with open(sys.argv[1], "a") as count:
        count.write("started\n")
    for line in STDERR_LINES:
        sys.stderr.write(line + "\n")
    sys.stderr.write(f"npm verbose env API_TOKEN={os.environ.get('API_TOKEN', '')}\n")
    sys.stderr.flush()
    sys.exit(1)


if __name__ == "__main__":
    main()
