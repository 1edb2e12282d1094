#!/usr/bin/env python
"""What persisting a chat costs: one turn of a saved chat against the same turn in memory.

    python benchmarks/records.py                   # chats of 10, 100, 200, 1000 messages, 30 turns x 5 rounds
    python benchmarks/records.py --quick           # 3 turns x 2 rounds: a smoke run
    python benchmarks/records.py --history 50,500  # other lengths
    python benchmarks/records.py --json out.json   # also write the numbers as JSON
    python benchmarks/records.py --debug           # with DEBUG = True (Django logs every query; default: off)
    python benchmarks/records.py --journal wal     # the SQLite file in WAL mode, as the example project sets it
                                                   # (default: SQLite's own rollback journal, delete)

A turn continues a chat of each ``--history`` length: the model (``ScriptedModel`` through the
real OpenAI SDK, over loopback) gets the whole history and answers once.

* ``memory``: ``llm_mcp.Chat`` over a ``MemoryStore`` holding the history (the floor).
* ``record``: ``llm_mcp.models.Chat`` loaded by primary key from an SQLite file, then
  ``complete()``: the lock, the reads of the history, and the insert of the answer.

Each turn starts from the same history (the answer is removed again, outside the timing). Within
a round the two stores take turns one turn at a time (who starts alternates by round), so a
change in the machine's load falls on both; ``CPU x/rd`` is the median of each round's ratio.
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


def setup_django(folder: str, journal: str = "delete", debug: bool = False) -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "example_project.settings"
    os.environ["DJANGO_DB_PATH"] = str(Path(folder) / "bench.sqlite3")
    os.environ["DJANGO_DEBUG"] = "1" if debug else "0"  # DEBUG logs every query (on SQLite, with a query of its own)
    os.environ.pop("DJANGO_DB_ENGINE", None)
    import django
    from django.conf import settings
    from django.core.management import call_command

    # The journal asked for, on every connection (the example settings set WAL in the same way).
    settings.DATABASES["default"].setdefault("OPTIONS", {})["init_command"] = f"PRAGMA journal_mode={journal}"
    django.setup()
    call_command("migrate", verbosity=0)
    from django.db import connection

    with connection.cursor() as cursor:  # kept in the file: every later connection uses it
        cursor.execute(f"PRAGMA journal_mode={journal}")
        if cursor.fetchone()[0] != journal:
            raise SystemExit(f"SQLite refused journal_mode={journal}")


def measure_round(order: list[tuple[Callable[[], None], Callable[[], None]]], count: int) -> list[tuple[float, float]]:
    """``count`` turns of each contender, taken in turn (one of each, in ``order``, then again), so
    that a change in the machine's load falls on both alike; each one's mean CPU and wall per turn."""
    cpu, wall = [0.0] * len(order), [0.0] * len(order)
    for _ in range(count):
        for i, (turn, reset) in enumerate(order):
            c0, w0 = time.process_time(), time.perf_counter()
            turn()
            cpu[i] += time.process_time() - c0
            wall[i] += time.perf_counter() - w0
            reset()
    return [(c / count, w / count) for c, w in zip(cpu, wall)]


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
        names = names[r % 2:] + names[:r % 2]
        for name, (cpu, wall) in zip(names, measure_round([contenders[name] for name in names], turns)):
            results[name]["cpu"].append(cpu)
            results[name]["wall"].append(wall)
    assert len(model.requests[-1].messages) == size  # the model saw the whole history
    base = {kind: statistics.median(results["memory"][kind]) for kind in ("cpu", "wall")}
    rows = {}
    for name, figures in results.items():
        cpu, wall = statistics.median(figures["cpu"]), statistics.median(figures["wall"])
        paired = statistics.median(a / b for a, b in zip(figures["cpu"], results["memory"]["cpu"]))
        rows[name] = {"cpu_ms": cpu * 1000, "wall_ms": wall * 1000, "cpu_ratio": cpu / base["cpu"],
                      "wall_ratio": wall / base["wall"], "cpu_ratio_paired": paired,
                      "queries_per_turn": queries[name]}
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
    parser.add_argument("--debug", action="store_true",
                        help="run with DEBUG = True (Django then logs every query; default: off, as deployed)")
    args = parser.parse_args()
    if args.quick:
        args.turns, args.rounds = 3, 2

    summary: dict[str, Any] = {"turns": args.turns, "rounds": args.rounds, "journal": args.journal,
                               "debug": args.debug, "histories": {}}
    with tempfile.TemporaryDirectory() as folder:
        setup_django(folder, args.journal, args.debug)
        from llm_mcp.testing.scripted_model import ScriptedModel

        with ScriptedModel() as model:
            options = {"base_url": model.openai_base_url, "api_key": "bench"}
            for size in args.history:
                print(f"  {size} messages", file=sys.stderr, flush=True)
                summary["histories"][str(size)] = measure_history(size, args.turns, args.rounds, model, options)

    print(f"One turn continuing a chat of N messages ({args.turns} turns x {args.rounds} rounds); ratio to the memory "
          f"store of the same length; SQLite journal_mode={args.journal}; DEBUG={args.debug}")
    print("CPU x/rd = median over rounds of that round's CPU ratio (the turns of both stores alternate within a round)")
    head = (f"{'messages':>8} {'store':<8} {'CPU ms':>8} {'ratio':>6} {'wall ms':>8} {'ratio':>6} {'CPU x/rd':>8} "
            f"{'queries/turn':>12}")
    print(head)
    print("-" * len(head))
    for size, rows in summary["histories"].items():
        for name, row in rows.items():
            print(f"{size:>8} {name:<8} {row['cpu_ms']:>8.2f} {row['cpu_ratio']:>5.2f}x {row['wall_ms']:>8.2f} "
                  f"{row['wall_ratio']:>5.2f}x {row['cpu_ratio_paired']:>7.2f}x {row['queries_per_turn']:>12}")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
