"""How the seed moves bytes (pulumi_modelstore/model/transfer.py, net.py, sources.py): the
token never follows a redirect to another origin, listings follow every RFC 8288 ``Link``
form, and a flaky source (429 with Retry-After, 5xx, S3's 503 SlowDown, a body cut short,
redirects) costs retries, not the seed. Each test runs the programs against a stub server on
the loopback address."""

from __future__ import annotations

import email.message
import hashlib
import json
import urllib.request
from collections.abc import Iterator
from typing import ClassVar

import pytest

from pulumi_modelstore.model import sources
from pulumi_modelstore.model.net import next_link
from pulumi_modelstore.model.sources import open_source
from tests.tools import StubHandler, serving

SHA = "0e9e39f249a16976918f6564b8830bc894c89659"
TOKEN = "hf_test_token"


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(f"blob {len(data)}\0".encode() + data).hexdigest()


# --- 15: the token and redirects ---------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "keeps"),
    [
        # huggingface_hub compares (scheme, host, port), the scheme's default port filled in.
        ("https://hub.example/a", "http://hub.example/b", False),
        ("https://hub.example/a", "https://cdn.example/b", False),
        ("https://hub.example/a", "https://hub.example:8443/b", False),
        ("https://hub.example/a", "https://HUB.example:443/b", True),
        ("http://hub.example:80/a", "http://hub.example/b", True),
    ],
)
def test_a_redirect_to_another_scheme_host_or_port_drops_the_token(
    old: str, new: str, keeps: bool
) -> None:
    handler = sources._SameHostAuthRedirect()
    request = urllib.request.Request(old, headers={"Authorization": f"Bearer {TOKEN}"})
    followed = handler.redirect_request(request, None, 302, "Found", email.message.Message(), new)
    assert followed is not None
    assert followed.has_header("Authorization") is keeps


# --- 15: RFC 8288 Link headers -----------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "url"),
    [
        ('<https://hub.example/p2>; rel="next"', "https://hub.example/p2"),
        ("<https://hub.example/p2>; rel=next", "https://hub.example/p2"),
        ("<https://hub.example/p2>;rel=NEXT", "https://hub.example/p2"),
        ('<https://hub.example/p2>; rel="prev next"', "https://hub.example/p2"),
        (
            '<https://hub.example/p1>; rel="prev", <https://hub.example/p3>; rel=next',
            "https://hub.example/p3",
        ),
        ('<https://hub.example/a,b>; title="x, y; z"; rel=next', "https://hub.example/a,b"),
        ("</api/tree?cursor=2>; rel=next", "https://hub.example/api/tree?cursor=2"),
        ('<https://hub.example/p2>; rel="last"', None),
        ('<https://hub.example/p2>; rel="nextpage"', None),
        ("", None),
    ],
)
def test_the_next_page_is_read_from_any_rfc_8288_link_form(header: str, url: str | None):
    base = "https://hub.example/api/tree?recursive=true"
    assert next_link(header, base) == url


class PagedHub(StubHandler):
    """The Hub's tree endpoint, one file a page, linked with an unquoted ``rel=next``."""

    pages: ClassVar[int] = 3

    def do_GET(self) -> None:
        tree = f"/api/models/org/llama/tree/{SHA}?recursive=true"
        if not self.path.startswith(tree):
            self.send_error(404)
            return
        page = int(self.path.partition("&cursor=")[2] or 0)
        data = f"file {page}".encode()
        body = json.dumps(
            [{"type": "file", "path": f"f{page}.json", "size": len(data), "oid": "0" * 40}]
        ).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        if page + 1 < self.pages:
            # Relative and unquoted: both allowed by RFC 8288 section 3.
            self.send_header("Link", f"<{tree}&cursor={page + 1}>; rel=next")
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def paged_hub() -> Iterator[str]:
    with serving(PagedHub) as port:
        yield f"http://127.0.0.1:{port}"


def test_listing_goes_on_past_page_one_with_an_unquoted_relative_link(paged_hub: str) -> None:
    source = open_source("hf://org/llama", SHA, hf_endpoint=paged_hub)
    assert [f.path for f in source.files()] == ["f0.json", "f1.json", "f2.json"]
