"""Smoke test of ``benchmarks/run.py``: it runs end to end and reports a ratio for every contender.

Nothing here looks at how fast anything is; the numbers only have to exist and be positive.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
RUN = REPO_ROOT / "benchmarks" / "run.py"

CONTENDERS = {
    ("http", "floor"), ("http", "llm_mcp"), ("http", "sdk"), ("http", "llm_mcp-handshake"), ("http", "sdk-handshake"),
    ("http-sse", "floor"), ("http-sse", "llm_mcp"), ("http-sse", "sdk"),
    ("stdio", "floor"), ("stdio", "llm_mcp"), ("stdio", "sdk"),
}
FASTMCP = {("http", "fastmcp"), ("http", "fastmcp-handshake"), ("http-sse", "fastmcp"), ("stdio", "fastmcp")}
"""FastMCP's client in every transport and era it speaks (the ``bench`` extra, which ``dev`` includes)."""


def positive(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_quick_benchmark_reports_every_ratio(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    done = subprocess.run([sys.executable, str(RUN), "--quick", "--json", str(out)], cwd=str(REPO_ROOT),
                          capture_output=True, text=True, timeout=540)
    assert done.returncode == 0, done.stderr[-4000:]
    results = json.loads(out.read_text())

    calls = {(row["group"], row["name"]): row for row in results["calls"]}
    assert set(calls) == CONTENDERS | FASTMCP
    for key, row in calls.items():
        for field in ("cpu_us", "wall_us", "cpu_ratio", "wall_ratio", "cpu_ratio_paired", "wall_ratio_paired"):
            assert positive(row[field]), (key, field, row[field])
        if row["kind"] == "floor":
            assert row["cpu_ratio"] == row["wall_ratio"] == 1.0

    imports = {row["name"]: row for row in results["imports"]}
    assert {"llm_mcp.client", "mcp.client", "fastmcp"} <= set(imports)
    for name in ("llm_mcp.client", "mcp.client", "fastmcp"):
        assert positive(imports[name]["ms"]) and positive(imports[name]["ms_ratio_to_sdk"]), imports[name]
        assert positive(imports[name]["peak_rss_mb"]), imports[name]

    first = {(row["name"], row["first_tls_context"]) for row in results["first_result"]}
    assert first == {(name, tls) for name in ("floor", "llm_mcp", "sdk") for tls in (True, False)}
    for row in results["first_result"]:
        assert positive(row["ms"]) and positive(row["ratio"]), row

    assert "CPU x" in done.stdout  # the table was printed


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_quick_chat_benchmark_reports_every_ratio(tmp_path: Path) -> None:
    """The chat turn against its floor and pydantic-ai, and the turn with 10 parallel slow calls."""
    out = tmp_path / "chat.json"
    done = subprocess.run([sys.executable, str(REPO_ROOT / "benchmarks" / "chat.py"), "--quick", "--sleep", "0.2",
                           "--json", str(out)], cwd=str(REPO_ROOT), capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-4000:]
    results = json.loads(out.read_text())
    rows = {row["name"]: row for row in results["rows"]}
    assert set(rows) == {"floor", "chat", "pydantic-ai"}
    assert rows["floor"]["cpu_ratio"] == 1.0
    assert all(positive(row[key]) for row in rows.values() for key in ("cpu_ms", "wall_ms", "cpu_ratio", "wall_ratio"))
    parallel = {row["calls"]: row for row in results["parallel"]}
    assert set(parallel) == {1, 10} and parallel[1]["ratio_to_one_call"] == 1.0
    assert all(positive(row["wall_ms"]) and positive(row["ratio_to_one_call"]) for row in parallel.values())
    assert "x one call" in done.stdout


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_quick_concurrency_benchmark_reports_every_level(tmp_path: Path) -> None:
    """``benchmarks/concurrency.py --quick``: each group at 1, 10 and 100 threads, floor and llm_mcp."""
    out = tmp_path / "concurrency.json"
    done = subprocess.run([sys.executable, str(REPO_ROOT / "benchmarks" / "concurrency.py"), "--quick",
                           "--json", str(out)], cwd=str(REPO_ROOT), capture_output=True, text=True, timeout=360)
    assert done.returncode == 0, done.stderr[-4000:]
    rows = {(row["group"], row["threads"], row["name"]): row for row in json.loads(out.read_text())["rows"]}
    assert set(rows) == {(group, threads, name) for group in ("http", "http-handshake", "stdio")
                         for threads in (1, 10, 100) for name in ("floor", "llm_mcp")}
    for key, row in rows.items():
        assert all(positive(row[field]) for field in ("calls_per_s", "cpu_us", "rate_ratio", "cpu_ratio")), (key, row)
        if key[2] == "floor":
            assert row["rate_ratio"] == row["cpu_ratio"] == 1.0
    assert "calls/s x" in done.stdout


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("journal", ["delete", "wal"])
def test_quick_records_benchmark_reports_both_contenders(tmp_path: Path, journal: str) -> None:
    """``benchmarks/records.py --quick`` runs and reports, for each history length, a positive
    ratio for a saved chat and its queries per turn (the same for every length), with the
    SQLite file in either journal mode."""
    out = tmp_path / "records.json"
    done = subprocess.run([sys.executable, str(REPO_ROOT / "benchmarks" / "records.py"), "--quick", "--history",
                           "10,100", "--journal", journal, "--json", str(out)], cwd=str(REPO_ROOT),
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-4000:]
    summary = json.loads(out.read_text())
    assert summary["journal"] == journal and f"journal_mode={journal}" in done.stdout
    histories = summary["histories"]
    assert set(histories) == {"10", "100"}
    for results in histories.values():
        assert results["memory"]["cpu_ratio"] == 1.0 and results["memory"]["queries_per_turn"] == 0
        assert all(positive(results["record"][key]) for key in ("cpu_ms", "wall_ms", "cpu_ratio", "wall_ratio",
                                                                 "queries_per_turn"))
    assert histories["10"]["record"]["queries_per_turn"] == histories["100"]["record"]["queries_per_turn"]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_quick_instruction_count_runs_every_layer(tmp_path: Path) -> None:
    """``instructions.py --quick``: every layer (the floor, the transport, the session, the whole
    call) runs against the stand-in answer and checks it; callgrind is not needed for that."""
    out = tmp_path / "instructions.json"
    done = subprocess.run([sys.executable, str(REPO_ROOT / "benchmarks" / "instructions.py"), "--quick",
                           "--json", str(out)], cwd=str(REPO_ROOT), capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-4000:]
    results = json.loads(out.read_text())
    assert [row["layer"] for row in results["rows"]] == ["floor", "transport", "session", "call"]
    assert results["quick"] is True and "every layer ran" in done.stdout
