"""A project that owns its chat and message models (``LLM_MCP_CHAT_MODEL``/``LLM_MCP_MESSAGE_MODEL``).

A throwaway project (a settings module and a ``chats`` app subclassing the abstract models) is
written to a temporary directory; ``makemigrations``, ``migrate`` and a chat turn on the
scripted model run in subprocesses, as they would in that project.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from llm_mcp.testing.scripted_model import ScriptedModel, reply, tool_call

from llm_mcp_tests.support.processes import REPO_ROOT

pytestmark = [pytest.mark.slow]

MODELS = '''
from django.db import models
from llm_mcp.models import AbstractChat, AbstractMessage


class Conversation(AbstractChat):
    title = models.CharField(max_length=100, blank=True)


class Line(AbstractMessage):
    starred = models.BooleanField(default=False)
'''

SETTINGS = '''
from example_project.settings import *  # noqa: F403

INSTALLED_APPS = [*INSTALLED_APPS, "chats"]  # noqa: F405
LLM_MCP_CHAT_MODEL = "chats.Conversation"
LLM_MCP_MESSAGE_MODEL = "chats.Line"
DATABASES = {{"default": {{"ENGINE": "django.db.backends.sqlite3", "NAME": {db!r}}}}}
'''

TURN = '''
import json, os, django
django.setup()
from chats.models import Conversation, Line
from llm_mcp.models import ToolCall

def double(n: int) -> int:
    """Double n."""
    return 2 * n

chat = Conversation.objects.create(model="gpt-test", title="mine")
chat.provider_options = {"base_url": os.environ["BASE_URL"], "api_key": "k"}
answer = chat.with_tools(double).ask("Double 4")
call = ToolCall.objects.get()
print(json.dumps({"answer": answer.content, "lines": list(Line.objects.values_list("role", "content")),
                  "call_message_table": call.message._meta.db_table, "result": call.result.content,
                  "tables": sorted(t for t in __import__("django.db").db.connection.introspection.table_names()
                                   if "chat" in t or "message" in t or "line" in t or "conversation" in t)}))
'''


def test_a_project_can_own_its_chat_and_message_models(tmp_path: Path):
    """Swapped models get the app's behaviour (a turn with a tool call), the app's ToolCall rows
    point at the project's messages, and the default chat/message tables are not created."""
    app = tmp_path / "chats"
    (app / "migrations").mkdir(parents=True)
    (app / "__init__.py").write_text("")
    (app / "migrations" / "__init__.py").write_text("")
    (app / "models.py").write_text(MODELS)
    (tmp_path / "swapped_settings.py").write_text(SETTINGS.format(db=str(tmp_path / "db.sqlite3")))
    (tmp_path / "turn.py").write_text(textwrap.dedent(TURN))
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "swapped_settings",
           "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO_ROOT)])}

    def run(*args: str) -> subprocess.CompletedProcess:
        done = subprocess.run([sys.executable, *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        return done

    manage = str(REPO_ROOT / "manage.py")
    run(manage, "makemigrations", "chats", "--verbosity", "0")
    run(manage, "migrate", "--verbosity", "0")
    with ScriptedModel() as model:
        model.add(tool_call("double", {"n": 4}, id="call_s"), reply("Eight."))
        env["BASE_URL"] = model.openai_base_url
        out = json.loads(run("turn.py").stdout.strip().splitlines()[-1])
    assert out["answer"] == "Eight."
    assert out["lines"] == [["user", "Double 4"], ["assistant", ""], ["tool", "8"], ["assistant", "Eight."]]
    assert out["call_message_table"] == "chats_line" and out["result"] == "8"
    assert "llm_mcp_chats" not in out["tables"] and "llm_mcp_messages" not in out["tables"]
    assert {"chats_conversation", "chats_line"} <= set(out["tables"])
