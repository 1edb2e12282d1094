#!/usr/bin/env python
"""What persisting a chat costs: one turn of a saved chat against the same turn in memory.

    python benchmarks/records.py                   # chats of 10, 100, 200, 1000 messages, 30 turns x 5 rounds
    python benchmarks/records.py --quick           # 3 turns x 2 rounds: a smoke run
    python benchmarks/records.py --history 50,500  # other lengths
    python benchmarks/records.py --json out.json   # also write the numbers as JSON
    python benchmarks/records.py --journal wal     # the SQLite file in WAL mode (default: SQLite's own, delete)

A turn continues a chat of each ``--history`` length: the model (``ScriptedModel`` through the
real OpenAI SDK, over loopback) gets the whole history and answers once.

* ``memory``: ``llm_mcp.Chat`` over a ``MemoryStore`` holding the history (the floor).
* ``record``: ``llm_mcp.models.Chat`` loaded by primary key from an SQLite file, then
  ``complete()``: the lock, the reads of the history, and the insert of the answer.

Each turn starts from the same history (the answer is removed again, outside the timing).
The queries of one turn (``connection.execute_wrapper``) are counted too: they must not grow
with the history.
Client CPU is ``time.process_time()`` (the scripted model runs in a thread of this process,
so both carry its cost alike); wall is ``time.perf_counter()``. Reported: medians over rounds
of the per-turn figures, and their ratio to ``memory`` in the same run. Nothing passes or
fails on speed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _repo  # noqa: F401 - first: puts this repository on sys.path


def setup_django(folder: str, journal: str = "delete") -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "example_project.settings"
    os.environ["DJANGO_DB_PATH"] = str(Path(folder) / "bench.sqlite3")
    os.environ.pop("DJANGO_DB_ENGINE", None)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    from django.db import connection

    with connection.cursor() as cursor:  # kept in the file: every later connection uses it
        cursor.execute(f"PRAGMA journal_mode={journal}")
        if cursor.fetchone()[0] != journal:
            raise SystemExit(f"SQLite refused journal_mode={journal}")


def measure(turn: Callable[[], None], reset: Callable[[], None], count: int) -> tuple[float, float]:
    cpu = wall = 0.0
    for _ in range(count):
        c0, w0 = time.process_time(), time.perf_counter()
        turn()
        cpu += time.process_time() - c0
        wall += time.perf_counter() - w0
        reset()
    return cpu / count, wall / count


class QueryCount:
    """Counts the queries Django runs while installed (``connection.execute_wrapper``)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        self.count += 1
        return execute(sql, params, many, context)


def measure_history(size: int, turns: int, rounds: int, model: Any, options: dict[str, Any]) -> dict[str, Any]:
    """Both contenders continuing a chat of ``size`` messages; medians over rounds, queries per turn."""
    from django.db import connection

    import llm_mcp
    from llm_mcp.testing.scripted_model import reply
    from llm_mcp.chat import MemoryStore, Message
    from llm_mcp.models import Chat as ChatRecord
    from llm_mcp.models import Message as MessageRow

    history = [Message("user" if i % 2 == 0 else "assistant", f"message {i} " + "x" * 200)
               for i in range(size - 1)] + [Message("user", "and now?")]
    record = ChatRecord.objects.create(model="gpt-test")
    MessageRow.objects.bulk_create([MessageRow(chat=record, role=m.role, content=m.content) for m in history])
    model.add(*[reply("ok") for _ in range(2 * turns * rounds + 4)])
    store = MemoryStore(list(history))

    def memory_turn() -> None:
        assert llm_mcp.chat("gpt-test", "openai", store=store, **options).complete().content == "ok"

    def memory_reset() -> None:
        del store.messages()[len(history):]

    def record_turn() -> None:
        loaded = ChatRecord.objects.get(pk=record.pk)
        loaded.provider_options = options
        assert loaded.complete().content == "ok"

    def record_reset() -> None:
        MessageRow.objects.filter(chat=record, role="assistant", content="ok").delete()

    contenders: dict[str, tuple[Callable[[], None], Callable[[], None]]] = {
        "memory": (memory_turn, memory_reset), "record": (record_turn, record_reset)}
    queries: dict[str, int] = {}
    for name, (turn, reset) in contenders.items():  # warm up (SDK clients, caches), counting queries
        counter = QueryCount()
        with connection.execute_wrapper(counter):
            turn()
        queries[name] = counter.count
        reset()
    results: dict[str, dict[str, list[float]]] = {name: {"cpu": [], "wall": []} for name in contenders}
    for r in range(rounds):
        names = list(contenders)
        for name in names[r % 2:] + names[:r % 2]:
            turn, reset = contenders[name]
            cpu, wall = measure(turn, reset, turns)
            results[name]["cpu"].append(cpu)
            results[name]["wall"].append(wall)
    assert len(model.requests[-1].messages) == size  # the model saw the whole history
    base = {kind: statistics.median(results["memory"][kind]) for kind in ("cpu", "wall")}
    rows = {}
    for name, figures in results.items():
        cpu, wall = statistics.median(figures["cpu"]), statistics.median(figures["wall"])
        rows[name] = {"cpu_ms": cpu * 1000, "wall_ms": wall * 1000, "cpu_ratio": cpu / base["cpu"],
                      "wall_ratio": wall / base["wall"], "queries_per_turn": queries[name]}
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--history", type=lambda text: [int(n) for n in text.split(",")], default=[10, 100, 200, 1000],
                        help="chat lengths, comma-separated (default 10,100,200,1000)")
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--journal", choices=["delete", "wal"], default="delete",
                        help="SQLite journal mode of the database file (default: delete, SQLite's default)")
    args = parser.parse_args()
    if args.quick:
        args.turns, args.rounds = 3, 2

    summary: dict[str, Any] = {"turns": args.turns, "rounds": args.rounds, "journal": args.journal, "histories": {}}
    with tempfile.TemporaryDirectory() as folder:
        setup_django(folder, args.journal)
        from llm_mcp.testing.scripted_model import ScriptedModel

        with ScriptedModel() as model:
            options = {"base_url": model.openai_base_url, "api_key": "bench"}
            for size in args.history:
                print(f"  {size} messages", file=sys.stderr, flush=True)
                summary["histories"][str(size)] = measure_history(size, args.turns, args.rounds, model, options)

    print(f"One turn continuing a chat of N messages ({args.turns} turns x {args.rounds} rounds); ratio to the memory "
          f"store of the same length; SQLite journal_mode={args.journal}")
    head = f"{'messages':>8} {'store':<8} {'CPU ms':>8} {'ratio':>6} {'wall ms':>8} {'ratio':>6} {'queries/turn':>12}"
    print(head)
    print("-" * len(head))
    for size, rows in summary["histories"].items():
        for name, row in rows.items():
            print(f"{size:>8} {name:<8} {row['cpu_ms']:>8.2f} {row['cpu_ratio']:>5.2f}x {row['wall_ms']:>8.2f} "
                  f"{row['wall_ratio']:>5.2f}x {row['queries_per_turn']:>12}")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
