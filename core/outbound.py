"""The one outbound HTTP client for requests to URLs a user or a client supplied (OAuth client metadata
documents, webhooks): a timeout, no redirects, a capped body, no proxies from the environment, and the
private-address guard.

The guard runs where the connection is made: the host is resolved once, every address must be globally
routable (no loopback, private, link-local, multicast or reserved address, IPv4-mapped and NAT64 forms
unwrapped), and the socket connects to one of the checked addresses, so a DNS answer that changes between
check and connect (rebinding) cannot reach an internal address. TLS still verifies the certificate for the
host name. `allow_private=True` (an operator setting) turns the guard off; `allow_loopback=True` admits loopback
addresses only (traffic that never leaves the machine: webhooks in sandbox mode).
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass

import httpcore
import httpx

USER_AGENT = "outbound-service/1.0"
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class OutboundError(Exception):
    """The request could not be made or its answer not read (refused address, timeout, too large, TLS…)."""

    def __init__(self, message: str, *, kind: str = "error"):
        super().__init__(message)
        self.kind = kind  # "refused" (guard), "timeout", "too_large", "error"


def address_allowed(ip: str, *, allow_private: bool, allow_loopback: bool = False) -> bool:
    """Only globally routable unicast addresses, unless private networks (or loopback only) are explicitly allowed."""
    if allow_private:
        return True
    try:
        addr = ipaddress.ip_address(ip.split("%")[0])
    except ValueError:
        return False
    if addr.version == 6:
        if addr.ipv4_mapped is not None:
            addr = addr.ipv4_mapped
        elif addr in _NAT64:
            addr = ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
    if allow_loopback and addr.is_loopback:
        return True
    return addr.is_global and not addr.is_multicast


class _GuardedBackend(httpcore.SyncBackend):
    def __init__(self, allow_private: bool, allow_loopback: bool = False):
        self.allow_private = allow_private
        self.allow_loopback = allow_loopback

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
        addresses = list(dict.fromkeys(info[4][0] for info in infos))
        refused = [a for a in addresses
                   if not address_allowed(a, allow_private=self.allow_private, allow_loopback=self.allow_loopback)]
        if not addresses or refused:
            raise _Refused(f"{host} resolves to an address that is not publicly routable ({', '.join(refused)})")
        last: Exception | None = None
        for address in addresses:
            try:
                return super().connect_tcp(address, port, timeout, local_address, socket_options)
            except httpcore.ConnectError as exc:
                last = exc
        raise last or httpcore.ConnectError(f"cannot connect to {host}")


class _Refused(httpcore.ConnectError):
    pass


@dataclass
class Response:
    status_code: int
    headers: httpx.Headers
    body: bytes
    elapsed_ms: int

    def json(self):
        import json

        return json.loads(self.body)


def client(*, timeout: float, allow_private: bool, allow_loopback: bool = False) -> httpx.Client:
    transport = httpx.HTTPTransport(retries=0)
    # httpx does not take a network backend; give its connection pool the guarded one.
    transport._pool = httpcore.ConnectionPool(ssl_context=httpx.create_ssl_context(), retries=0,
                                              network_backend=_GuardedBackend(allow_private, allow_loopback))
    return httpx.Client(transport=transport, timeout=timeout, follow_redirects=False, trust_env=False,
                        headers={"User-Agent": USER_AGENT})


def request(method: str, url: str, *, timeout: float, max_bytes: int, allow_private: bool = False,
            headers: dict | None = None, content: bytes | None = None, allow_loopback: bool = False) -> Response:
    """Make one request; the body read is at most `max_bytes` (more -> OutboundError kind "too_large").
    Redirects are answered as they are (a 3xx is a response, never followed)."""
    import time

    parsed = httpx.URL(url)
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise OutboundError(f"not an http(s) URL: {url}", kind="refused")
    started = time.monotonic()
    try:
        with client(timeout=timeout, allow_private=allow_private, allow_loopback=allow_loopback) as http:
            with http.stream(method, url, headers=headers, content=content) as resp:
                chunks, size = [], 0
                for chunk in resp.iter_bytes():
                    size += len(chunk)
                    if size > max_bytes:
                        raise OutboundError(f"response body larger than {max_bytes} bytes", kind="too_large")
                    chunks.append(chunk)
                return Response(resp.status_code, resp.headers, b"".join(chunks),
                                int((time.monotonic() - started) * 1000))
    except _Refused as exc:
        raise OutboundError(str(exc), kind="refused") from exc
    except httpx.TimeoutException as exc:
        raise OutboundError(f"timed out after {timeout:g} s", kind="timeout") from exc
    except httpx.HTTPError as exc:
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, _Refused):
            raise OutboundError(str(cause), kind="refused") from exc
        raise OutboundError(f"{type(exc).__name__}: {exc}") from exc
