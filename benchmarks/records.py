#!/usr/bin/env python
"""What persisting a chat costs: one turn of a saved chat against the same turn in memory.

    python benchmarks/records.py                   # 200-message chats, 30 turns x 5 rounds
    python benchmarks/records.py --quick           # 5 turns x 2 rounds: a smoke run
    python benchmarks/records.py --history 1000    # longer chats
    python benchmarks/records.py --json out.json   # also write the numbers as JSON

A turn continues a chat of ``--history`` messages: the model (``ScriptedModel`` through the
real OpenAI SDK, over loopback) gets the whole history and answers once.

* ``memory``: ``llm_mcp.Chat`` over a ``MemoryStore`` holding the history (the floor).
* ``record``: ``llm_mcp.models.Chat`` loaded by primary key from an SQLite file, then
  ``complete()``: the lock, the reads of the history, and the insert of the answer.

Each turn starts from the same history (the answer is removed again, outside the timing).
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

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def setup_django(folder: str) -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "example_project.settings"
    os.environ["DJANGO_DB_PATH"] = str(Path(folder) / "bench.sqlite3")
    os.environ.pop("DJANGO_DB_ENGINE", None)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def measure(turn: Callable[[], None], reset: Callable[[], None], count: int) -> tuple[float, float]:
    cpu = wall = 0.0
    for _ in range(count):
        c0, w0 = time.process_time(), time.perf_counter()
        turn()
        cpu += time.process_time() - c0
        wall += time.perf_counter() - w0
        reset()
    return cpu / count, wall / count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--history", type=int, default=200)
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.quick:
        args.turns, args.rounds = 5, 2

    with tempfile.TemporaryDirectory() as folder:
        setup_django(folder)
        import llm_mcp
        from llm_mcp.chat import MemoryStore, Message
        from llm_mcp.models import Chat as ChatRecord
        from llm_mcp.models import Message as MessageRow
        from llm_mcp.testing.scripted_model import ScriptedModel, reply

        history = [Message("user" if i % 2 == 0 else "assistant", f"message {i} " + "x" * 200)
                   for i in range(args.history - 1)] + [Message("user", "and now?")]
        record = ChatRecord.objects.create(model="gpt-test")
        MessageRow.objects.bulk_create([MessageRow(chat=record, role=m.role, content=m.content) for m in history])
        with ScriptedModel() as model:
            options = {"base_url": model.openai_base_url, "api_key": "bench"}
            model.add(*[reply("ok") for _ in range(2 * args.turns * args.rounds + 4)])
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
            for turn, reset in contenders.values():  # warm up: SDK clients, caches
                turn()
                reset()
            results: dict[str, dict[str, list[float]]] = {name: {"cpu": [], "wall": []} for name in contenders}
            for _ in range(args.rounds):
                for name, (turn, reset) in contenders.items():
                    cpu, wall = measure(turn, reset, args.turns)
                    results[name]["cpu"].append(cpu)
                    results[name]["wall"].append(wall)

    summary: dict[str, Any] = {"history": args.history, "turns": args.turns, "rounds": args.rounds}
    base = {kind: statistics.median(results["memory"][kind]) for kind in ("cpu", "wall")}
    print(f"One turn continuing a {args.history}-message chat ({args.turns} turns x {args.rounds} rounds)")
    print(f"{'contender':<10} {'CPU ms':>9} {'ratio':>7} {'wall ms':>9} {'ratio':>7}")
    for name, figures in results.items():
        cpu, wall = statistics.median(figures["cpu"]), statistics.median(figures["wall"])
        summary[name] = {"cpu_ms": cpu * 1000, "wall_ms": wall * 1000,
                         "cpu_ratio": cpu / base["cpu"], "wall_ratio": wall / base["wall"]}
        print(f"{name:<10} {cpu * 1000:>9.2f} {cpu / base['cpu']:>6.2f}x {wall * 1000:>9.2f} "
              f"{wall / base['wall']:>6.2f}x")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
