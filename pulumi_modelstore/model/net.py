"""What the sources that download over HTTP share: the error every source raises, and
requests (``urllib``, nothing else) whose failures become that error in one line naming the
source, the request and the cause, never a stack trace."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ElementTree
from typing import Any

USER_AGENT = "pulumi-modelstore-seed"


class SourceError(ValueError):
    """A source URI, revision or file that cannot be used, with a one-line message naming the
    value given and what is allowed (``source must be ..., got '...'``), or a source that
    cannot be reached or read, naming the source and the cause."""


def open_url(uri: str, request: urllib.request.Request, timeout: float) -> Any:
    """The response to ``request``, or :class:`SourceError`: an HTTP error names the request,
    the status and the service's own error code and message (JSON or XML bodies); a network
    failure names the host that could not be reached and why."""
    try:
        return urllib.request.urlopen(request, timeout=timeout)
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
