"""The repository root, put first on ``sys.path``: a benchmark run as ``python benchmarks/NAME.py``
then imports ``llm_mcp`` and ``llm_mcp_tests.support`` from this tree.

    from _repo import REPO   # first, before any llm_mcp import (the script's folder is on sys.path)
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
"""The repository root (the folder holding ``llm_mcp/`` and ``benchmarks/``)."""

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
