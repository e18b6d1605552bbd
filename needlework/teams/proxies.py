"""The client address of a request, behind reverse proxies the admin trusts.

:func:`client_address` takes the direct peer of the connection, the request's
``X-Forwarded-For`` headers and ``[server] trusted_proxies`` (needlework.toml,
:mod:`needlework.teams.config`). When the peer is a trusted proxy, the client is the
right-most ``X-Forwarded-For`` entry that is not a trusted proxy (each proxy appends the
address it was reached from, so entries left of that one were written by whoever sent
the request and prove nothing). Otherwise the client is the peer itself, and whatever
``X-Forwarded-For`` it sent is ignored. Streamlit names a loopback peer ``None``
(``st.context.ip_address``): it counts as 127.0.0.1 and as ::1 in the trust check.

Streamlit's server (uvicorn) already replaces a loopback peer by the right-most entry of
its ``X-Forwarded-For`` that is not 127.0.0.1 or ::1 (its ``FORWARDED_ALLOW_IPS``,
read from the environment, defaults to those two). :func:`client_address` therefore
treats a peer that equals that pick of the request's own header as loopback, so a
process on this machine that sends ``X-Forwarded-For`` is not believed unless loopback
is a trusted proxy. Where ``FORWARDED_ALLOW_IPS`` is set, the server's peer is taken as
it is.

The address only goes to the audit trail and the log: no decision about sign-in depends
on it (lock-out goes by name and device cookie, :mod:`needlework.teams.lockout`).
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable, Sequence

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

LOOPBACK = "127.0.0.1"
LOOPBACK_ADDRESS: Address = ipaddress.ip_address(LOOPBACK)
_LOOPBACKS = (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"))
MAX_HOPS = 32  # entries read from X-Forwarded-For, from the right


def parse_address(text: str | None) -> Address | None:
    """An IP address from a peer or an ``X-Forwarded-For`` entry (``1.2.3.4``,
    ``1.2.3.4:5678``, ``[2001:db8::1]:443``, ``2001:db8::1``), IPv4-mapped IPv6 as IPv4;
    ``None`` when it is not one."""
    if not isinstance(text, str):
        return None
    text = text.strip()
    if text.startswith("["):
        text = text[1:text.find("]")] if "]" in text else ""
    elif text.count(":") == 1:
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def forwarded_hops(headers: Iterable[str]) -> list[str]:
    """The entries of every ``X-Forwarded-For`` header, in order (left = farthest), the
    last :data:`MAX_HOPS` only."""
    hops = [part.strip() for value in headers if isinstance(value, str)
            for part in value.split(",")]
    return [h for h in hops if h][-MAX_HOPS:]


def _trusted(address: Address, trusted: Sequence[Network]) -> bool:
    candidates = _LOOPBACKS if address in _LOOPBACKS else (address,)
    return any(a in net for a in candidates for net in trusted if a.version == net.version)


def _server_pick(hops: Sequence[str]) -> Address | None:
    """What uvicorn's proxy-header middleware (default trust: 127.0.0.1, ::1) made the
    peer of a loopback connection carrying ``hops``."""
    for hop in reversed(hops):
        if hop.strip() not in ("127.0.0.1", "::1"):
            return parse_address(hop)
    return None


def client_address(peer: str | None, forwarded_for: Iterable[str] = (),
                   trusted: Sequence[Network] = (), *,
                   server_trusts: str | None = None) -> str:
    """The client's address as text (see the module docstring). ``peer``: the direct
    peer as Streamlit gives it (``None``: loopback); ``forwarded_for``: the values of
    the request's ``X-Forwarded-For`` headers; ``trusted``: the trusted proxies;
    ``server_trusts``: the server's ``FORWARDED_ALLOW_IPS`` (default: the environment's).
    An unreadable peer gives ``""``."""
    hops = forwarded_hops(forwarded_for)
    if server_trusts is None:
        server_trusts = os.environ.get("FORWARDED_ALLOW_IPS")
    address = LOOPBACK_ADDRESS if peer is None else parse_address(peer)
    if address is None:
        return ""
    if hops and server_trusts is None and address not in _LOOPBACKS \
            and address == _server_pick(hops):
        address = LOOPBACK_ADDRESS  # the server put its own pick in the peer's place
    if not _trusted(address, trusted):
        return str(address)
    client = address
    for hop in reversed(hops):
        entry = parse_address(hop)
        if entry is None:  # not an address: nothing left of it can be read
            break
        client = entry
        if not _trusted(entry, trusted):
            break
    return str(client)
