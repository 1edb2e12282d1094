"""The kit's ``Tool.sample`` and ``sampling_request``: a kit tool asks the client's model for a completion,
as an ``inputRequests`` entry on 2026-07-28 and as a request on the call's stream in the handshake era, and
refuses to ask a client that did not declare sampling (-32021)."""

from __future__ import annotations

import json

import pytest

import llm_mcp
from llm_mcp.testing import Server, Tool, running_server
from llm_mcp.testing.asking import sampling_request


class Haiku(Tool):
    name = "haiku"

    def call(self):
        reply = self.sample("poem", [{"role": "user", "content": {"type": "text", "text": "Rain"}},
                                     {"role": "assistant", "content": {"type": "text", "text": "Drops"}}],
                            max_tokens=7, system_prompt="Short.", temperature=0.2)
        return json.dumps(reply, sort_keys=True)


def test_sampling_request_shapes_and_refuses_bad_input():
    """A string is one user message; maxTokens and systemPrompt are named as the spec names them; an empty
    message list or a max_tokens that is not a positive integer is refused naming it."""
    assert sampling_request("Hi", max_tokens=3, system_prompt="S", temperature=0.5) == {
        "method": "sampling/createMessage",
        "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "Hi"}}], "maxTokens": 3,
                   "systemPrompt": "S", "temperature": 0.5}}
    for bad, words in (({"messages": []}, "non-empty list"), ({"max_tokens": 0}, "positive integer"),
                       ({"max_tokens": True}, "positive integer")):
        args = {"messages": "Hi", "max_tokens": 3, **bad}
        with pytest.raises(ValueError, match=words):
            sampling_request(args.pop("messages"), **args)


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_a_kit_tool_gets_the_clients_completion_in_both_eras(era):
    """The client's sampling callable receives the tool's request as the kit built it (messages, maxTokens,
    systemPrompt, temperature) and the tool gets the CreateMessageResult back; a client that declared no
    sampling gets error -32021 and its callable is never asked."""
    seen = []
    with running_server(Server("poet", tools=[Haiku]), era=era) as running:
        with running.mcp(name="poet", sampling=lambda params: seen.append(params) or "Grey sky.") as server:
            reply = json.loads(server.call("haiku").text)
        with running.mcp(name="poet") as plain:
            with pytest.raises(llm_mcp.MCPError, match="did not declare the sampling capability") as refused:
                plain.call("haiku")
    assert refused.value.code == -32021
    assert reply["content"] == {"type": "text", "text": "Grey sky."} and reply["role"] == "assistant"
    [params] = seen
    assert params["maxTokens"] == 7 and params["systemPrompt"] == "Short." and params["temperature"] == 0.2
    assert [m["content"]["text"] for m in params["messages"]] == ["Rain", "Drops"]
