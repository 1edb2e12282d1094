"""PublicAddressesOnly: an opt-in transport that connects to public addresses only, checked at
connect time on the address connected to (MCP-ADDR-01, MCP-ADDR-02).

Name resolution is the test's own (``resolve=``): names such as ``mcp.example.test`` resolve
to what each test says. No test connects anywhere but 127.0.0.1; that a public address would
be allowed is tested on the policy's decision alone.
"""

from __future__ import annotations

import itertools
import threading
from urllib.parse import urlsplit

import httpx
import pytest

import llm_mcp
from llm_mcp.client.addresses import AddressPolicy, PublicAddressesOnly
from llm_mcp.client.errors import is_outage, is_refusal, may_have_run
from llm_mcp.client.oauth.discovery import discover_authorization_server


def resolving(mapping: dict[str, list[str]], calls: list[str] | None = None):
    def resolve(host: str, port: int) -> list[str]:
        if calls is not None:
            calls.append(host)
        if host not in mapping:
            raise OSError(f"no test answer for {host}")
        return list(mapping[host])
    return resolve


REFUSED = [
    ("127.0.0.1", "loopback"), ("127.8.9.10", "loopback"), ("::1", "loopback"),
    ("10.0.0.7", "private"), ("172.16.4.4", "private"), ("192.168.1.1", "private"), ("fd12::1", "private"),
    ("169.254.169.254", "link-local"), ("fe80::1", "link-local"), ("100.64.0.1", "not public"),
    ("0.0.0.0", "unspecified"), ("224.0.0.251", "multicast"), ("240.0.0.1", "reserved"),
    ("::ffff:127.0.0.1", "loopback (inside an IPv6 address)"), ("::ffff:10.0.0.1", "private (inside an IPv6 address)"),
    ("2002:a00:1::1", "private (inside an IPv6 address)"),  # 6to4 around 10.0.0.1
    ("64:ff9b::a9fe:a9fe", "link-local (inside an IPv6 address)"),  # NAT64 of 169.254.169.254
    ("fec0::1", "site-local"),  # deprecated IPv6 site-local (RFC 3879), still routed inside some networks
]


@pytest.mark.parametrize(("ip", "reason"), REFUSED)
def test_non_public_addresses_are_refused_by_the_policy(ip, reason):
    assert AddressPolicy().reason(ip) == reason
    assert not AddressPolicy().allows(ip)


@pytest.mark.parametrize("ip", ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "1.1.1.1", "64:ff9b::808:808"])
def test_public_addresses_are_allowed_on_the_decision_alone(ip):
    """The decision only: nothing is connected to."""
    assert AddressPolicy().allows(ip)


def test_allowed_networks_are_let_through():
    policy = AddressPolicy(allow=["10.20.0.0/16"])
    assert policy.allows("10.20.3.4") and not policy.allows("10.21.0.1")


def test_allow_takes_a_list_of_network_strings():
    """A bare string was read character by character ("'1' does not appear to be ... network"), and
    an int was taken as an address (10 allowed 0.0.0.10)."""
    with pytest.raises(TypeError, match=r"allow takes a list of networks such as \["):
        AddressPolicy(allow="10.0.0.0/8")
    with pytest.raises(TypeError, match=r"allow: 10 \(int\) is not a network string"):
        PublicAddressesOnly(allow=[10])
    with pytest.raises(ValueError, match="'nope' does not appear to be an IPv4 or IPv6 network"):
        AddressPolicy(allow=["nope"])


def test_addr_01_without_the_policy_a_name_resolving_to_loopback_is_reached(echo_http_url):
    """MCP-ADDR-01: the client itself does not check where a name resolves (here: an IP literal URL
    of a loopback server is simply connected to)."""
    server = llm_mcp.mcp(url=echo_http_url, name="echo")
    assert server.call("echo", message="reached").text == "reached"
    server.close()


def _named_url(url: str, host: str) -> str:
    parts = urlsplit(url)
    return f"http://{host}:{parts.port}{parts.path}"


def test_a_name_resolving_to_loopback_is_refused_before_anything_is_sent(echo_http_url):
    """MCP-ADDR-02: ``llm_mcp.context(transport=PublicAddressesOnly)``; the name resolves to 127.0.0.1."""
    calls: list[str] = []
    ctx = llm_mcp.context(transport=lambda: PublicAddressesOnly(
        resolve=resolving({"mcp.example.test": ["127.0.0.1"]}, calls)))
    server = ctx.mcp(url=_named_url(echo_http_url, "mcp.example.test"), name="typed", allow_http=True)
    with pytest.raises(llm_mcp.AddressRefusedError, match=r"mcp\.example\.test resolves only to addresses this "
                       r"connection may not reach: 127\.0\.0\.1 \(loopback\)") as refused:
        server.tools
    assert calls and set(calls) == {"mcp.example.test"}
    assert is_refusal(refused.value) and not may_have_run(refused.value) and not is_outage(refused.value)
    server.close()


def test_the_same_server_is_reached_when_its_network_is_allowed(echo_http_url):
    """The refusal above is the policy's: with 127.0.0.1 allowed, a name the test resolves to it is
    reached (``localhost``, which the echo server's Host check accepts; our resolver answers, not the OS)."""
    calls: list[str] = []
    ctx = llm_mcp.context(transport=lambda: PublicAddressesOnly(
        allow=["127.0.0.1/32"], resolve=resolving({"localhost": ["127.0.0.1"]}, calls)))
    server = ctx.mcp(url=_named_url(echo_http_url, "localhost"), name="typed")
    assert server.call("echo", message="allowed").text == "allowed"
    assert calls and set(calls) == {"localhost"}
    server.close()


def test_every_answer_is_checked_and_refused_ones_are_never_connected_to(echo_http_url):
    """A name with several answers: the refused ones are skipped, the allowed one is connected to."""
    ctx = llm_mcp.context(transport=lambda: PublicAddressesOnly(
        allow=["127.0.0.1/32"],
        resolve=resolving({"localhost": ["169.254.169.254", "10.0.0.1", "127.0.0.1"]})))
    server = ctx.mcp(url=_named_url(echo_http_url, "localhost"), name="typed")
    assert server.call("echo", message="third").text == "third"
    server.close()


def test_dns_rebinding_gains_nothing_each_connection_checks_its_own_answer(echo_http_url):
    """A name whose answer changes between lookups (allowed, then refused, ...): each connection
    resolves once and connects to the address it checked, so the refused answer is refused, never
    connected to (nothing listens on 127.0.0.3: a connection there would be a ConnectError)."""
    answers = itertools.cycle([["127.0.0.1"], ["127.0.0.3"]])
    lock = threading.Lock()

    def rebinding(host: str, port: int) -> list[str]:
        with lock:
            return next(answers)

    no_keepalive = httpx.Limits(max_connections=10, max_keepalive_connections=0)
    transport = PublicAddressesOnly(allow=["127.0.0.1/32"], resolve=rebinding, limits=no_keepalive)
    with httpx.Client(transport=transport) as http:
        url = _named_url(echo_http_url, "rebind.example.test")
        first = http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                          headers={"Accept": "application/json, text/event-stream"})
        assert first.status_code == 421  # connected to 127.0.0.1: the echo server answered (refusing the Host)
        with pytest.raises(llm_mcp.AddressRefusedError, match=r"127\.0\.0\.3 \(loopback\)"):
            http.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "ping"})


def test_oauth_requests_go_through_the_policy_too(store):
    """MCP-ADDR-03 with the policy: the OAuth client of a context's server refuses an authorization
    server whose name resolves to 127.0.0.1 (metadata discovery here)."""
    ctx = llm_mcp.context(transport=lambda: PublicAddressesOnly(
        resolve=resolving({"auth.example.test": ["127.0.0.1"], "mcp.example.test": ["127.0.0.1"]})))
    server = ctx.mcp(url="https://mcp.example.test/mcp", name="typed",
                     oauth={"grant": "client_credentials", "client_id": "c", "client_secret": "s-1234"})
    flow = server.connection.auth.required_flow()
    with pytest.raises(llm_mcp.AddressRefusedError, match=r"auth\.example\.test resolves only to"):
        discover_authorization_server(flow.http, "https://auth.example.test", server_name="typed")
    with pytest.raises(llm_mcp.AddressRefusedError, match=r"mcp\.example\.test"):
        server.tools  # the unauthenticated probe and the resource metadata: refused at connect
    server.close()


@pytest.mark.parametrize("host", ["2130706433", "0", "127.1", "0x7f.1", "017700000001", "[::ffff:127.0.0.1]",
                                  "[0:0:0:0:0:ffff:7f00:1]"])
def test_numeric_spellings_of_loopback_are_refused_with_the_system_resolver(host):
    """Decimal, short, hex and octal IPv4 forms and IPv4-mapped IPv6 reach 127.0.0.1 or 0.0.0.0 through
    getaddrinfo: each is refused before anything is sent (the refusal is the point: nothing listens there)."""
    with httpx.Client(transport=PublicAddressesOnly()) as client:
        with pytest.raises(llm_mcp.AddressRefusedError, match=r"\((loopback|unspecified)"):
            client.get(f"http://{host}:9/mcp")


def test_a_name_that_does_not_resolve_is_a_connection_error():
    transport = PublicAddressesOnly(resolve=resolving({}))
    with httpx.Client(transport=transport) as http, pytest.raises(httpx.ConnectError, match="does not resolve"):
        http.get("http://nowhere.example.test/")
