"""Which hosts count as this machine (loopback), for the rules that allow plain http there.

    is_loopback("127.0.0.1")          # True
    is_loopback("api.localhost")      # True
    is_loopback("mcp.example.com")    # False

Plain http is refused except to loopback (server URLs, OAuth endpoints, client ID
metadata documents), since traffic that never leaves the machine cannot be read on the way.
Names are not resolved: ``localhost`` and ``*.localhost`` count (RFC 6761 §6.3), other names
do not, whatever they resolve to.
"""

from __future__ import annotations

import ipaddress

__all__ = ["is_loopback"]


def is_loopback(host: str | None) -> bool:
    """Whether ``host`` (a hostname or IP literal, IPv6 with or without brackets) is loopback."""
    if not host:
        return False
    host = host.lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
