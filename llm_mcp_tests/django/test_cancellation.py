"""Cancelling a chat record's turn: the persisted ``cancelled`` flag, set by ``cancel()``, by another
thread with its own connection (as another process would), stops the
running calls at their next event (marker ``db``: SQLite and PostgreSQL). Across real processes:
``e2e/test_processes.py``.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection

import llm_mcp
from llm_mcp.chat.chat import CANCELLED
from llm_mcp.models import Chat as ChatRecord
from llm_mcp.testing.scripted_model import reply, tool_call, turn

from llm_mcp_tests.support.progress import BOUND, kit, settled, steps_done, wait_until
from llm_mcp_tests.support.records import record_on, reload


def _flag_from_another_thread(pk: Any, ready: Any) -> threading.Thread:
    """Set the saved chat's cancelled column from a thread with its own database connection (as another
    process would), once ``ready()`` holds; the live chat is not told."""
    def run() -> None:
        from django.db import connection

        from llm_mcp.models import Chat as ChatRow

        try:
            if wait_until(ready):
                ChatRow.objects.filter(pk=pk).update(cancelled=True)
        finally:
            connection.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.mark.db
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("transport, era", [("stdio", "modern"), ("http", "modern"), ("http", "handshake")])
def test_the_persisted_flag_stops_a_running_call(model, tmp_path, transport, era):
    """MCP-PROG-11: setting the saved cancelled flag of a Django chat (elsewhere: another thread with its
    own connection) stops the server call in flight at the next event, like chat.cancel()."""
    from llm_mcp.models import Chat as ChatRow

    work = tmp_path / "work.txt"
    model.add(tool_call("steps", {"count": 200, "interval": 0.1, "path": str(work)}), reply("never"))
    record = ChatRow.objects.create(model="gpt-test", provider="openai")
    record.provider_options = {"base_url": model.openai_base_url, "api_key": "test-key"}
    with kit(tmp_path, transport, era, log_level="debug") as (server, _):
        record.with_mcp(server).tools
        flagger = _flag_from_another_thread(record.pk, lambda: steps_done(work) >= 2)
        with pytest.raises(llm_mcp.CancelledError):
            record.ask("work")
        flagger.join(BOUND)
        final = settled(work)
        assert final[-1] == "cancelled" and steps_done(work) < 200
    assert [m.content for m in record.messages][-1] == CANCELLED


@pytest.mark.db
@pytest.mark.django_db(transaction=True)
def test_the_persisted_flag_stops_concurrent_calls_in_worker_threads(model, tmp_path):
    """MCP-PROG-10, MCP-PROG-11: calls running in worker threads read the persisted flag fresh at each event
    (not a value cached by the chat's thread), so every call in flight stops, not only after the batch."""
    from llm_mcp.models import Chat as ChatRow

    files = [tmp_path / f"work{i}.txt" for i in range(2)]
    model.add(turn(tool_calls=[tool_call("steps", {"count": 200, "interval": 0.1, "path": str(f)}, id=f"call_{i}")
                               for i, f in enumerate(files)]), reply("never"))
    record = ChatRow.objects.create(model="gpt-test", provider="openai")
    record.provider_options = {"base_url": model.openai_base_url, "api_key": "test-key"}
    with kit(tmp_path, "http", "modern") as (server, _):
        record.chat.concurrency = 2
        heard: list[str] = []
        record.with_mcp(server).after_tool_progress(lambda call, progress: heard.append(call.id)).tools
        flagger = _flag_from_another_thread(record.pk, lambda: all(steps_done(f) >= 2 for f in files))
        with pytest.raises(llm_mcp.CancelledError):
            record.ask("work twice")
        flagger.join(BOUND)
        for path in files:
            final = settled(path)
            assert final[-1] == "cancelled" and steps_done(path) < 200, path
    assert set(heard) == {"call_0", "call_1"}  # progress (the events) flowed in both worker threads
    assert [m.content for m in record.messages][-2:] == [CANCELLED, CANCELLED]


@pytest.mark.db
@pytest.mark.django_db(transaction=True)
def test_cancel_sets_the_persisted_flag_a_turn_checks(model):
    """``cancel()`` on one instance stops a turn that another instance is about to run."""
    record = record_on(model, reply("never sent"))
    record.message_records.create(role="user", content="hi")
    reload(record, model).cancel()
    assert ChatRecord.objects.get(pk=record.pk).cancelled is True
    with pytest.raises(llm_mcp.CancelledError):
        record.chat._check_cancelled()
    # complete() starts a new turn: the flag is cleared, and the model answers
    assert record.complete().content == "never sent"
    assert ChatRecord.objects.get(pk=record.pk).cancelled is False


