"""core.outbound for libraries that make their HTTP calls with `requests` (django-allauth's OpenID Connect sign-in:
discovery document, token endpoint, user info, key set). `Session` is a `requests.Session` whose every request goes
out through core.outbound's client: one call, with the redirects requests follows for it, is done within the total
deadline (`total` seconds, connect to the last byte of the last answer), where requests' own timeout applies to
each read and a peer trickling bytes could hold the calling thread for hours. Proxies, certificates and credentials
from the environment are not used, and the User-Agent is core.outbound's.

Failures are requests' own exceptions, which such libraries catch: `requests.Timeout` once the deadline has passed,
`requests.ConnectionError` when no connection was made or the answer was broken, `requests.exceptions.InvalidURL`.
"""

from __future__ import annotations

import httpx
import requests
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict
from requests.utils import get_encoding_from_headers

from core import outbound


class _Adapter(BaseAdapter):
    """Sends one prepared request (one hop; requests.Session follows redirects) with core.outbound's client."""

    def __init__(self, client: outbound.Client):
        super().__init__()
        self._client = client

    def send(self, request, stream=False, timeout=None, verify=True, cert=None, proxies=None):
        body = request.body.encode("utf-8") if isinstance(request.body, str) else request.body
        kwargs = {}
        seconds = max((t for t in timeout if t is not None), default=None) if isinstance(timeout, tuple) else timeout
        if seconds is not None:
            kwargs["timeout"] = float(seconds)  # core.outbound cuts the call's deadline to it
        try:
            answer = self._client.request(request.method, request.url, headers=list(request.headers.items()),
                                          content=body, **kwargs)
        except httpx.TimeoutException as exc:
            kind = (requests.exceptions.ConnectTimeout if isinstance(exc, httpx.ConnectTimeout)
                    else requests.exceptions.ReadTimeout)
            raise kind(f"the call's total deadline has passed: {exc}", request=request) from exc
        except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
            raise requests.exceptions.InvalidURL(str(exc), request=request) from exc
        except httpx.HTTPError as exc:
            raise requests.exceptions.ConnectionError(f"{type(exc).__name__}: {exc}", request=request) from exc
        response = requests.Response()
        response.status_code = answer.status_code
        response.headers = CaseInsensitiveDict(
            {name: ", ".join(answer.headers.get_list(name)) for name in answer.headers.keys()})
        response.encoding = get_encoding_from_headers(response.headers)
        response.reason = answer.reason_phrase
        response.url = request.url
        response.request = request
        response.connection = self
        response._content = answer.content  # read whole, within the deadline
        response._content_consumed = True
        return response

    def close(self):
        pass  # the client belongs to the session


class Session(requests.Session):
    """A requests session whose every request keeps core.outbound's rules; `allow_private` as core.outbound's (the
    addresses an operator configured may be private)."""

    def __init__(self, *, total: float, allow_private: bool = False):
        super().__init__()
        self.trust_env = False
        self.total = float(total)
        self.headers["User-Agent"] = outbound.USER_AGENT
        self._http = outbound.client(timeout=self.total, allow_private=allow_private)
        adapter = _Adapter(self._http)
        self.mount("http://", adapter)
        self.mount("https://", adapter)

    def request(self, method, url, *args, **kwargs):
        with outbound.deadline(self.total):  # one deadline for the call and every redirect it follows
            return super().request(method, url, *args, **kwargs)

    def close(self):
        super().close()
        self._http.close()
