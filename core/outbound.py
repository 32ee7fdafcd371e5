"""The one outbound HTTP client. Every HTTP call the service makes goes through it (OAuth client metadata
documents and token endpoints, webhooks, data and provisioning providers, Stripe, the LLM upstream's sync
callers): one total deadline per call, no redirects, no proxies from the environment, one User-Agent, and, for
URLs a user or a client supplied, the private-address guard and a capped body.

The deadline is a total: connecting (name resolution included), sending the request, the answer's headers and
every byte of its body must all be done `timeout` seconds after the call started. httpx's own timeouts are per
operation (a peer sending one byte every few seconds never trips a 10-second read timeout, and a 16 KiB body
could take hours); here every read, write, connect and TLS handshake waits at most what is left of the call's
deadline, so a trickling peer costs one timeout and no more.

The guard runs where the connection is made: the host is resolved once, every address must be globally
routable (no loopback, private, link-local, multicast or reserved address, IPv4-mapped and NAT64 forms
unwrapped), and the socket connects to one of the checked addresses, so a DNS answer that changes between
check and connect (rebinding) cannot reach an internal address. TLS still verifies the certificate for the
host name. `allow_private=True` (vendor APIs named in configuration; an operator setting) turns the guard off;
`allow_loopback=True` admits loopback addresses only (traffic that never leaves the machine: webhooks in sandbox
mode).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import contextvars
import ipaddress
import json
import re
import socket
import time
from dataclasses import dataclass

import httpcore
import httpx

USER_AGENT = "outbound-service/1.0"
_NAT64 = ipaddress.ip_network("64:ff9b::/96")

# The monotonic time by which the current call must be done (None: no deadline). Sync httpx does all of one
# call's I/O in the calling thread, so a context variable reaches every read and write of that call.
_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar("outbound_deadline", default=None)
# Name resolution has no timeout of its own (getaddrinfo blocks for the resolver's retries): it runs here and
# the caller waits at most the time left. A resolution that outlives its caller finishes in the background.
_resolver = concurrent.futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="outbound-dns")


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


_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


def host_valid(host: str | None) -> bool:
    """A host a URL may name: an IP address literal (IPv6 without brackets here), or a DNS name of non-empty
    labels (letters, digits, hyphens; IDNA for others) whose last label is not all digits, so a dotted number that
    is not a plain IPv4 address (`0177.0.0.1`, `1.2.3`) or a name with an empty label (`a..b`) is refused."""
    if not host:
        return False
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        pass
    name = host[:-1] if host.endswith(".") else host
    try:
        name = name.encode("idna").decode("ascii").lower()
    except UnicodeError:
        return False
    labels = name.split(".")
    return (len(name) <= 253 and all(_LABEL.match(label) for label in labels)
            and not labels[-1].isdigit())


@contextlib.contextmanager
def deadline(seconds: float):
    """Every outbound operation inside the block finishes within `seconds` from now (or within an enclosing
    block's deadline, whichever comes first)."""
    at = time.monotonic() + seconds
    outer = _deadline.get()
    token = _deadline.set(at if outer is None else min(outer, at))
    try:
        yield
    finally:
        _deadline.reset(token)


def _left(timeout: float | None, expired: type[Exception]) -> float | None:
    """The operation's own timeout cut to what is left of the call's deadline; `expired` once it has passed."""
    at = _deadline.get()
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise expired("the call's total deadline has passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A connection whose every read, write and TLS handshake waits at most what is left of the deadline."""

    def __init__(self, inner: httpcore.NetworkStream):
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        # A peer that does not read makes send() wait for buffer space: each wait is cut by the deadline.
        view = memoryview(buffer)
        step = 64 * 1024
        for start in range(0, len(view), step):
            self._inner.write(bytes(view[start:start + step]), _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None) -> httpcore.NetworkStream:
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname,
                                                     _left(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str):
        return self._inner.get_extra_info(info)


class _Backend(httpcore.SyncBackend):
    """Connections that keep to the deadline; with the guard on, only to publicly routable addresses."""

    def __init__(self, allow_private: bool, allow_loopback: bool = False):
        self.allow_private = allow_private
        self.allow_loopback = allow_loopback

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        wait = _left(timeout, httpcore.ConnectTimeout)
        future = _resolver.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
        try:
            infos = future.result(timeout=wait)
        except concurrent.futures.TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"resolving {host} took longer than the call's deadline") from exc
        except (OSError, UnicodeError, ValueError) as exc:  # UnicodeError: a name with an empty label (a..b)
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
        addresses = list(dict.fromkeys(info[4][0] for info in infos))
        refused = [a for a in addresses
                   if not address_allowed(a, allow_private=self.allow_private, allow_loopback=self.allow_loopback)]
        if not addresses or refused:
            raise _Refused(f"{host} resolves to an address that is not publicly routable ({', '.join(refused)})")
        last: Exception | None = None
        for address in addresses:
            try:
                stream = super().connect_tcp(address, port, _left(timeout, httpcore.ConnectTimeout), local_address,
                                             socket_options)
                return _DeadlineStream(stream)
            except httpcore.ConnectError as exc:
                last = exc
        raise last or httpcore.ConnectError(f"cannot connect to {host}")


class _Refused(httpcore.ConnectError):
    pass


class _DeadlineBody(httpx.SyncByteStream):
    """A response body read under its call's deadline, wherever it is read (a streamed response's body is read
    after `send` returned); a transport that does not go through the network backend (a test's MockTransport) is
    still checked between chunks."""

    def __init__(self, inner: httpx.SyncByteStream, at: float):
        self._inner, self._at = inner, at

    def __iter__(self):
        chunks = iter(self._inner)
        while True:
            token = _deadline.set(self._at)
            try:
                chunk = next(chunks, None)
            finally:
                _deadline.reset(token)
            if chunk is None:
                return
            if time.monotonic() > self._at:
                raise httpx.ReadTimeout("the call's total deadline has passed")
            yield chunk

    def close(self) -> None:
        self._inner.close()


class Client(httpx.Client):
    """An httpx client whose every call has a total deadline (`total` seconds; a request's own `timeout=`, when
    it sets one, cuts it shorter)."""

    def __init__(self, *, total: float, **kwargs):
        super().__init__(**kwargs)
        self.total = float(total)

    def send(self, request: httpx.Request, **kwargs) -> httpx.Response:
        seconds = self.total
        own = request.extensions.get("timeout")
        if own and own != self.timeout.as_dict():
            values = [v for v in own.values() if v is not None]
            if values:
                seconds = min(seconds, max(values))
        at = time.monotonic() + seconds
        outer = _deadline.get()
        token = _deadline.set(at if outer is None else min(outer, at))
        try:
            response = super().send(request, **kwargs)
        finally:
            _deadline.reset(token)
        if isinstance(response.stream, httpx.SyncByteStream) and not response.is_stream_consumed:
            response.stream = _DeadlineBody(response.stream, at if outer is None else min(outer, at))
        return response


def client(*, timeout: float | httpx.Timeout, allow_private: bool, total: float | None = None,
           transport: httpx.BaseTransport | None = None, limits: httpx.Limits | None = None, verify=None,
           headers: dict | None = None, allow_loopback: bool = False, **kwargs) -> Client:
    """A client with the deadline (`total`, by default the `timeout` number), no redirects followed, no proxies
    from the environment and the User-Agent. `transport` (tests: a local fake) replaces the network."""
    if total is None:
        if not isinstance(timeout, int | float):
            raise TypeError("a structured timeout needs an explicit total")
        total = float(timeout)
    if transport is None:
        limits = limits or httpx.Limits()
        ssl_context = verify if verify is not None and not isinstance(verify, bool) else httpx.create_ssl_context()
        transport = httpx.HTTPTransport(retries=0)
        # httpx does not take a network backend; give its connection pool the deadline-keeping (and guarded) one.
        transport._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context, max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections, keepalive_expiry=limits.keepalive_expiry,
            retries=0, network_backend=_Backend(allow_private, allow_loopback))
    return Client(total=total, transport=transport, timeout=timeout, follow_redirects=False, trust_env=False,
                  headers={"User-Agent": USER_AGENT, **(headers or {})}, **kwargs)


def async_timeout(*, total: float, timeout: httpx.Timeout):
    """aiohttp's timeouts for `async_session`: `total` bounds the whole call, connect to the answer's last byte
    (aiohttp's timer runs until the connection is released); the others as `timeout` sets them for httpx (a pooled
    connection's wait plus connecting, connecting, each wait for the next bytes)."""
    import aiohttp

    return aiohttp.ClientTimeout(total=total, connect=timeout.pool + timeout.connect, sock_connect=timeout.connect,
                                 sock_read=timeout.read)


def async_session(*, timeout, limits: httpx.Limits, verify):
    """A pooled aiohttp session for an operator-configured upstream whose per-call cost matters (the LLM
    passthrough's provider calls: aiohttp's parser and pool cost a fraction of httpx's, bench/RESULTS.md). The rules
    of this module that apply to it: a total deadline (`timeout`, from `async_timeout`), no proxies from the
    environment, connections up to `limits`, TLS verified with `verify` (an SSLContext). Callers pass
    `allow_redirects=False` on every request (aiohttp has no session-wide switch) and send the User-Agent; the
    private-address guard does not apply (the address is the operator's). A session belongs to the event loop that
    opened it."""
    import aiohttp

    connector = aiohttp.TCPConnector(limit=limits.max_connections, limit_per_host=0,
                                     keepalive_timeout=limits.keepalive_expiry, ssl=verify)
    return aiohttp.ClientSession(connector=connector, timeout=timeout, trust_env=False)


@dataclass
class Response:
    status_code: int
    headers: httpx.Headers
    body: bytes
    elapsed_ms: int

    def json(self):
        return json.loads(self.body)


def request(method: str, url: str, *, timeout: float, max_bytes: int, allow_private: bool = False,
            headers: dict | None = None, content: bytes | None = None, allow_loopback: bool = False) -> Response:
    """Make one request, all of it (connect, send, headers, body) within `timeout` seconds; the body read is at
    most `max_bytes` (more -> OutboundError kind "too_large"). Redirects are answered as they are (a 3xx is a
    response, never followed)."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise OutboundError(f"not a valid URL: {exc}", kind="refused") from exc
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise OutboundError(f"not an http(s) URL: {url}", kind="refused")
    if not host_valid(parsed.host):
        raise OutboundError(f"not a valid host name: {parsed.host}", kind="refused")
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
    except (httpx.HTTPError, httpx.InvalidURL, UnicodeError) as exc:
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, _Refused):
            raise OutboundError(str(cause), kind="refused") from exc
        kind = "refused" if isinstance(exc, httpx.InvalidURL | UnicodeError) else "error"
        raise OutboundError(f"{type(exc).__name__}: {exc}", kind=kind) from exc
