"""What the sources that download over HTTP share: the error every source raises, requests
(``urllib``, nothing else) whose failures become that error in one line naming the source, the
request and the cause, never a stack trace, and the retry policy every request follows
(:class:`Retry`): a throttled, failing or dropped request is asked again after a backoff, as
long as the source says to wait (``Retry-After``), before it fails the seed."""

from __future__ import annotations

import base64
import email.utils
import json
import random
import time
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

USER_AGENT = "pulumi-modelstore-seed"
DEFAULT_PORTS = {"http": 80, "https": 443}
# Answers worth asking again: a timeout (408), throttling (429; S3 answers 503 SlowDown, Cloud
# Storage and Azure 429 or 503), and the server errors a proxy or a busy backend gives. The set
# huggingface_hub retries (``utils/_http.py``, ``_DEFAULT_RETRY_ON_STATUS_CODES``: 429, 500,
# 502, 503, 504) with 408, which the AWS SDKs also retry.
RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class Retry:
    """How often and how long a request is asked again. ``attempts``: tries in all (default
    8). Before try ``n`` (1, 2, ...) it waits a random time up to ``base * 2**(n-1)`` seconds,
    at most ``cap`` ("full jitter": AWS Architecture Blog, "Exponential Backoff And Jitter"),
    so many pods throttled at once do not come back at once; a ``Retry-After`` the source sent
    (seconds or an HTTP date, RFC 9110 section 10.2.3) is waited for whole when longer, up to
    ``max_retry_after``. ``sleep``: the clock (tests)."""

    attempts: int = 8
    base: float = 0.5
    cap: float = 30.0
    max_retry_after: float = 300.0
    sleep: Callable[[float], None] = time.sleep

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """The wait before try ``attempt + 1`` after ``attempt`` failed tries."""
        backoff = random.uniform(0, min(self.cap, self.base * 2 ** (attempt - 1)))
        if retry_after is None:
            return backoff
        return max(backoff, min(retry_after, self.max_retry_after))

    def wait(self, attempt: int, retry_after: float | None = None) -> None:
        self.sleep(self.delay(attempt, retry_after))


RETRY = Retry()


def retry_after(value: str | None, now: Callable[[], float] = time.time) -> float | None:
    """Seconds to wait from a ``Retry-After`` value: delay-seconds or an HTTP-date (RFC 9110
    section 10.2.3); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - now())


def urlopen(
    request: urllib.request.Request,
    timeout: float,
    opener: urllib.request.OpenerDirector | None = None,
    policy: Retry | None = None,
) -> Any:
    """``urllib``'s answer to ``request`` (through ``opener`` when given), asked again under
    the retry policy (default :data:`RETRY`) while it answers a status of
    :data:`RETRY_STATUS` or the connection fails; the last failure is raised as ``urllib``
    raises it."""
    policy = policy or RETRY
    attempt = 0
    while True:
        attempt += 1
        try:
            if opener is not None:
                return opener.open(request, timeout=timeout)
            return urllib.request.urlopen(request, timeout=timeout)
        except urllib.error.HTTPError as error:
            if error.code not in RETRY_STATUS or attempt >= policy.attempts:
                raise
            wait = retry_after(error.headers.get("Retry-After"))
            error.close()
        except (urllib.error.URLError, OSError):
            if attempt >= policy.attempts:
                raise
            wait = None
        policy.wait(attempt, wait)


class SourceError(ValueError):
    """A source URI, revision or file that cannot be used, with a one-line message naming the
    value given and what is allowed (``source must be ..., got '...'``), or a source that
    cannot be reached or read, naming the source and the cause."""


def open_url(uri: str, request: urllib.request.Request, timeout: float) -> Any:
    """The response to ``request`` (retried: :func:`urlopen`), or :class:`SourceError`: an HTTP
    error names the request,
    the status and the service's own error code and message (JSON or XML bodies); a network
    failure names the host that could not be reached and why."""
    try:
        return urlopen(request, timeout)
    except urllib.error.HTTPError as error:
        raise http_failure(uri, request, error) from None
    except (urllib.error.URLError, OSError) as error:
        raise unreachable(uri, request, error) from None


def http_failure(
    uri: str, request: urllib.request.Request, error: urllib.error.HTTPError, hint: str = ""
) -> SourceError:
    """The one line for an HTTP error answer to ``request``."""
    try:
        detail = service_message(error.read(4096))
    except OSError:
        detail = ""
    url = request.full_url
    return SourceError(
        f"source {uri}: {request.get_method()} {url} answered {error.code} {error.reason}"
        f"{f' ({detail})' if detail else ''}{f': {hint}' if hint else ''}"
    )


def unreachable(uri: str, request: urllib.request.Request, error: BaseException) -> SourceError:
    """The one line for a request that got no answer (refused, no route, DNS, timeout)."""
    parts = urllib.parse.urlsplit(request.full_url)
    reason = getattr(error, "reason", None) or error
    return SourceError(f"source {uri}: cannot reach {parts.scheme}://{parts.netloc}: {reason}")


def service_message(body: bytes) -> str:
    """``Code: Message`` from an error body: S3 and Azure answer XML (``<Error><Code>``,
    ``<Message>``), Google and Microsoft Entra JSON (``error.message`` or
    ``error_description``). Empty when the body says neither."""
    text = body.decode("utf-8", "replace").strip()
    if not text:
        return ""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict):
            return str(error.get("message") or error.get("code") or "")
        return str(data.get("error_description") or data.get("message") or error or "")
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError:
        return text.splitlines()[0][:200]
    fields = {local(e.tag): (e.text or "").strip() for e in root.iter()}
    code, message = fields.get("Code", ""), fields.get("Message", "").splitlines()
    return ": ".join(p for p in (code, message[0] if message else "") if p)


def local(tag: str) -> str:
    """An XML tag without its ``{namespace}``."""
    return tag.rpartition("}")[2]


def child_text(element: ElementTree.Element, name: str) -> str | None:
    """The text of ``element``'s first direct child named ``name`` (any namespace)."""
    for child in element:
        if local(child.tag) == name:
            return child.text or ""
    return None


class Body:
    """A streamed response body with what the service published about it when the bytes were
    asked for (``sha256``/``md5``: hex, or None), for the seed to check them against."""

    def __init__(self, response: Any, sha256: str | None = None, md5: str | None = None) -> None:
        self.response = response
        self.sha256 = sha256
        self.md5 = md5

    def read(self, size: int = -1) -> bytes:
        data: bytes = self.response.read(size)
        return data

    def close(self) -> None:
        self.response.close()

    def __enter__(self) -> Body:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def md5_hex(value: str | None) -> str | None:
    """A base64 MD5 (Cloud Storage's ``md5Hash``, Azure's ``Content-MD5``) as hex, None when
    absent."""
    return base64.b64decode(value).hex() if value else None


def origin(url: str) -> tuple[str, str, int]:
    """A URL's origin: (scheme, host in lower case, port, the scheme's default when none is
    given)."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or DEFAULT_PORTS.get(scheme, 0)


def keeps_authorization(old_url: str, new_url: str) -> bool:
    """Whether a redirect from ``old_url`` to ``new_url`` may carry the request's
    ``Authorization``: only to the same origin (scheme, host and port), as huggingface_hub
    decides (``utils/_http.py``, ``_url_origin`` and ``_is_same_or_hub_host``). An https to
    http redirect on the same host would send the token in clear; another host or port is
    another service (the Hub's CDN needs no token)."""
    return origin(old_url) == origin(new_url)


def next_link(header: str | None, base: str) -> str | None:
    """The target of the ``Link`` header's link whose ``rel`` holds ``next``, resolved against
    ``base`` (the request's URL), or None. Parsed as RFC 8288 section 3 writes it: links
    separated by commas, each ``<URI-Reference>`` then ``;``-separated parameters whose value
    is a token or a quoted-string (commas and semicolons inside ``<>`` or quotes are not
    separators); ``rel`` is a space-separated list of relation types, compared
    case-insensitively, and only a link's first ``rel`` counts (section 3.3)."""
    for target, params in _links(header or ""):
        rel = params.get("rel")
        if rel is not None and "next" in rel.lower().split():
            return urllib.parse.urljoin(base, target)
    return None


def _links(text: str) -> list[tuple[str, dict[str, str]]]:
    """The (target, parameters) of each link of a ``Link`` header value; a parameter given
    twice keeps its first value; a malformed tail ends the list."""
    links: list[tuple[str, dict[str, str]]] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] in " \t,":
            i += 1
        if i >= n or text[i] != "<":
            break
        end = text.find(">", i)
        if end < 0:
            break
        target, i = text[i + 1 : end], end + 1
        params: dict[str, str] = {}
        while True:
            while i < n and text[i] in " \t":
                i += 1
            if i >= n or text[i] != ";":
                break
            i += 1
            start = i
            while i < n and text[i] not in "=;,":
                i += 1
            name = text[start:i].strip().lower()
            value = ""
            if i < n and text[i] == "=":
                i += 1
                while i < n and text[i] in " \t":
                    i += 1
                if i < n and text[i] == '"':
                    i += 1
                    chars = []
                    while i < n and text[i] != '"':
                        if text[i] == "\\" and i + 1 < n:
                            i += 1
                        chars.append(text[i])
                        i += 1
                    i += 1
                    value = "".join(chars)
                else:
                    start = i
                    while i < n and text[i] not in ";,":
                        i += 1
                    value = text[start:i].strip()
            if name:
                params.setdefault(name, value)
        links.append((target, params))
    return links
