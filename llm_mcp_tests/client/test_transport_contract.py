"""The transport base (transports/base.py): the optional attributes' defaults, for subclasses and for
duck-typed transports, which the client adopts once instead of probing them per request."""

from __future__ import annotations

import pytest

import llm_mcp
from llm_mcp.client.transports.base import OPTIONAL, Transport, adopt
from llm_mcp.client.transports.http import HTTPTransport
from llm_mcp.client.transports.sse import SSETransport
from llm_mcp.client.transports.stdio import StdioTransport

from llm_mcp_tests.support.transports import Duck


class Declaring(Duck):
    """A duck-typed transport that declares every optional attribute."""

    cancels_by_closing = True
    listen_during_calls = False

    def __init__(self):
        self.running = False


class Subclass(Duck, Transport):
    pass


def test_defaults_are_declared_on_the_base():
    duck = adopt(Subclass())
    assert [getattr(duck, name) for name in OPTIONAL] == [True, False, False]
    assert llm_mcp.Transport is Transport


def test_builtin_transports_subclass_the_base_and_are_not_wrapped():
    built = (HTTPTransport("http://127.0.0.1:1/mcp", name="h"), SSETransport("http://127.0.0.1:1/sse", name="s"),
             StdioTransport(lambda: (["true"], {}), name="p"))
    for transport in built:
        assert adopt(transport) is transport
    assert HTTPTransport.cancels_by_closing and not StdioTransport.cancels_by_closing


def test_a_duck_typed_transport_is_still_a_transport_and_gets_the_defaults():
    duck = Duck()
    assert isinstance(duck, Transport) and not isinstance(object(), Transport)
    adopted = adopt(duck)
    assert adopted is not duck and adopted.inner is duck
    assert (adopted.running, adopted.cancels_by_closing, adopted.listen_during_calls) == (True, False, False)
    adopted.listen_during_calls = True  # not declared: nothing to tell the object
    assert not hasattr(duck, "listen_during_calls") and adopted.listen_during_calls is False


def test_what_a_duck_typed_transport_declares_is_read_from_it():
    declaring = Declaring()
    adopted = adopt(declaring)
    assert (adopted.running, adopted.cancels_by_closing) == (False, True)
    declaring.running = True
    assert adopted.running
    adopted.listen_during_calls = True
    assert declaring.listen_during_calls is True


def test_the_client_keeps_the_object_given_and_speaks_through_its_channel():
    duck = Duck()
    client = llm_mcp.Client(duck)
    assert client.transport is duck and client.channel.inner is duck
    other = Subclass()
    client.transport = other
    assert client.transport is other and client.channel is other


def test_a_subclass_missing_a_method_cannot_be_built():
    class Half(Transport):
        def request(self, message, *, version, timeout=None, headers=None, on_message=None):
            return {}

    with pytest.raises(TypeError):
        Half()
