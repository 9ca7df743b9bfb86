"""How the seed moves bytes (pulumi_modelstore/model/transfer.py, net.py, sources.py): the
token never follows a redirect to another origin, listings follow every RFC 8288 ``Link``
form, and a flaky source (429 with Retry-After, 5xx, S3's 503 SlowDown, a body cut short,
redirects) costs retries, not the seed. Each test runs the programs against a stub server on
the loopback address."""

from __future__ import annotations

import email.message
import hashlib
import importlib
import json
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import pytest

from pulumi_modelstore.model import net, sources
from pulumi_modelstore.model import seed as seed_mod
from pulumi_modelstore.model.net import next_link
from pulumi_modelstore.model.sources import SourceError, open_source
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


# --- 14: a flaky source costs retries, not the seed --------------------------------------

BIG = "model.safetensors"
FILES = {
    BIG: bytes(range(256)) * 1200 + b"tail",  # 307,204 bytes: 5 parts of 64 KiB
    "config.json": b'{"architectures": ["LlamaForCausalLM"]}',
}


def _transfer() -> Any:
    try:
        return importlib.import_module("pulumi_modelstore.model.transfer")
    except ImportError:
        return None


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The retry policy's waits, recorded instead of slept; parts of 64 KiB."""
    recorded: list[float] = []
    if hasattr(net, "Retry"):
        monkeypatch.setattr(net, "RETRY", net.Retry(sleep=recorded.append))
    transfer = _transfer()
    if transfer is not None:
        monkeypatch.setattr(transfer, "PART", 1 << 16)
    return recorded


class FlakyHub(StubHandler):
    """The Hub's tree and resolve endpoints for one repo, kept-alive HTTP/1.1 with ranges,
    and a script of faults per path: each request to a path takes the next fault of its list
    (``429``, ``503``, ``slowdown``, ``cut``: half the body then a closed connection,
    ``redirect``: to this server under another host name, as the Hub's CDN)."""

    protocol_version = "HTTP/1.1"
    faults: ClassVar[dict[str, list[str]]] = {}
    ranges: ClassVar[list[tuple[str, str]]] = []
    auth: ClassVar[list[tuple[str, str]]] = []

    def do_GET(self) -> None:
        tree = f"/api/models/org/llama/tree/{SHA}?recursive=true"
        resolve = f"/org/llama/resolve/{SHA}/"
        path = self.path
        self.auth.append((path, self.headers.get("Authorization", "")))
        script = self.faults.get(path.rpartition("/")[2] if path != tree else "tree", [])
        fault = script.pop(0) if script else ""
        if fault == "429":
            return self.reply(429, b"slow down", {"Retry-After": "7"})
        if fault == "503":
            return self.reply(503, b"")
        if fault == "slowdown":  # S3's throttling answer
            body = b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate."
            return self.reply(503, body + b"</Message></Error>")
        if path == tree:
            entries = [
                {
                    "type": "file",
                    "path": name,
                    "size": len(data),
                    "oid": git_blob_id(data),
                    **(
                        {"lfs": {"oid": hashlib.sha256(data).hexdigest(), "size": len(data)}}
                        if name.endswith(".safetensors")
                        else {}
                    ),
                }
                for name, data in FILES.items()
            ]
            return self.reply(200, json.dumps(entries).encode())
        name = ""
        if path.startswith(resolve):
            name = path[len(resolve) :]
        elif path.startswith("/cdn/"):
            name = path[len("/cdn/") :]
        if name not in FILES:
            return self.reply(404, b"")
        if fault == "redirect":
            port = self.server.server_address[1]
            return self.reply(302, b"", {"Location": f"http://localhost:{port}/cdn/{name}"})
        data = FILES[name]
        wanted = self.headers.get("Range")
        self.ranges.append((name, wanted or ""))
        start, end = 0, len(data) - 1
        if wanted:
            first, _, last = wanted.removeprefix("bytes=").partition("-")
            start, end = int(first), int(last or end)
        body = data[start : end + 1]
        headers = {"Content-Range": f"bytes {start}-{end}/{len(data)}"} if wanted else {}
        if fault == "cut":
            self.send_response(206 if wanted else 200)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return None
        return self.reply(206 if wanted else 200, body, headers)

    def reply(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def flaky_hub() -> Iterator[str]:
    FlakyHub.faults = {}
    FlakyHub.ranges = []
    FlakyHub.auth = []
    with serving(FlakyHub) as port:
        yield f"http://127.0.0.1:{port}"


def seed_from(hub: str, store: Path, token: str | None = TOKEN) -> Any:
    source = open_source("hf://org/llama", SHA, hf_endpoint=hub, token=token)
    return seed_mod.seed(source, store)


def seeded_bytes(store: Path, revision: str = SHA) -> dict[str, bytes]:
    base = store / "revisions" / revision
    return {p.relative_to(base).as_posix(): p.read_bytes() for p in base.rglob("*") if p.is_file()}


def test_a_429_is_waited_out_for_its_retry_after_and_the_seed_goes_on(
    flaky_hub: str, tmp_path: Path, waits: list[float]
) -> None:
    FlakyHub.faults = {"tree": ["429"], BIG: ["429"], "config.json": ["503", "slowdown"]}
    result = seed_from(flaky_hub, tmp_path)
    assert result.files == 2
    assert seeded_bytes(tmp_path) == FILES
    # The listing's and the shard's 429 each waited their Retry-After (7 s) whole; the two
    # 5xx of config.json waited a backoff (at most 0.5 s, then 1 s).
    assert sorted(waits)[-2:] == [7.0, 7.0]
    assert len(waits) == 4 and all(w <= 1.0 for w in sorted(waits)[:2])


def test_a_body_cut_short_is_resumed_from_its_first_missing_byte(
    flaky_hub: str, tmp_path: Path, waits: list[float]
) -> None:
    FlakyHub.faults = {BIG: ["cut"], "config.json": ["cut"]}
    seed_from(flaky_hub, tmp_path)
    assert seeded_bytes(tmp_path) == FILES
    # Each file's first request was cut halfway; the next asked only for the rest.
    config = len(FILES["config.json"])
    assert ("config.json", f"bytes={config // 2}-{config - 1}") in FlakyHub.ranges
    big = [r for name, r in FlakyHub.ranges if name == BIG]
    first, _, last = big[0].removeprefix("bytes=").partition("-")
    half = (int(last) - int(first) + 1) // 2
    assert big.count(big[0]) == 1  # the cut part was not asked again whole
    assert f"bytes={int(first) + half}-{last}" in big  # only its missing half


def test_a_source_that_keeps_failing_fails_the_seed_after_the_policy_s_tries(
    flaky_hub: str, tmp_path: Path, waits: list[float]
) -> None:
    FlakyHub.faults = {"config.json": ["503"] * 20}
    with pytest.raises(SourceError) as caught:
        seed_from(flaky_hub, tmp_path)
    assert str(caught.value) == (
        f"source hf://org/llama: GET {flaky_hub}/org/llama/resolve/{SHA}/config.json "
        "answered 503 Service Unavailable 8 times"
    )
    assert len(waits) == 7  # backoffs between 8 tries, each at most 0.5 s * 2**n, cap 30 s
    assert all(w <= 0.5 * 2**n for n, w in enumerate(waits))
    assert not (tmp_path / "revisions").exists()


def test_a_redirect_to_another_host_drops_the_token_and_serves_every_part(
    flaky_hub: str, tmp_path: Path, waits: list[float]
) -> None:
    FlakyHub.faults = {BIG: ["redirect"]}
    seed_from(flaky_hub, tmp_path)
    assert seeded_bytes(tmp_path) == FILES
    cdn = [auth for path, auth in FlakyHub.auth if path.startswith("/cdn/")]
    assert cdn and set(cdn) == {""}  # the token stayed with the Hub's own origin
    hub = {auth for path, auth in FlakyHub.auth if not path.startswith("/cdn/")}
    assert hub == {f"Bearer {TOKEN}"}


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("7", 7.0), ("0", 0.0), ("Wed, 02 Dec 2026 07:00:30 GMT", 30.0), ("soon", None), ("", None)],
)
def test_retry_after_is_read_as_seconds_or_an_http_date(value: str, seconds: float | None):
    noon = datetime(2026, 12, 2, 7, 0, 0, tzinfo=UTC).timestamp()
    assert net.retry_after(value, now=lambda: noon) == seconds


class FlakyS3(StubHandler):
    """An S3 endpoint (path-style, as ``AWS_ENDPOINT_URL_S3`` addresses it) for one bucket
    that answers each first request to a path with 503 SlowDown, as S3 throttles."""

    protocol_version = "HTTP/1.1"
    seen: ClassVar[set[str]] = set()
    slowed: ClassVar[list[str]] = []

    def do_HEAD(self) -> None:
        self.answer(body=False)

    def do_GET(self) -> None:
        self.answer(body=True)

    def answer(self, body: bool) -> None:
        if f"{self.command} {self.path}" not in self.seen:
            self.seen.add(f"{self.command} {self.path}")
            self.slowed.append(f"{self.command} {self.path.partition('?')[0]}")
            error = (
                b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate."
                b"</Message></Error>"
            )
            return self.send(503, error if body else b"", len(error))
        path, _, query = self.path.partition("?")
        if path in ("/models", "/models/") and "list-type=2" in query:
            contents = "".join(
                f"<Contents><Key>llama/{name}</Key><Size>{len(data)}</Size></Contents>"
                for name, data in FILES.items()
            )
            xml = f"<ListBucketResult><IsTruncated>false</IsTruncated>{contents}"
            return self.send(200, (xml + "</ListBucketResult>").encode())
        name = path.removeprefix("/models/llama/")
        if name not in FILES:
            return self.send(404, b"")
        return self.send(200, FILES[name] if body else b"", len(FILES[name]))

    def send(self, status: int, data: bytes, length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(data) if length is None else length))
        self.end_headers()
        self.wfile.write(data)


def test_s3_503_slowdown_on_listing_head_and_get_is_retried(
    tmp_path: Path, waits: list[float]
) -> None:
    FlakyS3.seen, FlakyS3.slowed = set(), []
    with serving(FlakyS3) as port:
        env = {
            "AWS_ENDPOINT_URL_S3": f"http://127.0.0.1:{port}",
            "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
            "AWS_SECRET_ACCESS_KEY": "secret",
        }
        source = sources.S3Source("s3://models/llama", "v1", "models", "llama", env=env)
        seed_mod.seed(source, tmp_path)
    assert seeded_bytes(tmp_path, "v1") == FILES
    # The listing, each HEAD and each GET was throttled once, then answered.
    assert sorted(FlakyS3.slowed) == sorted(
        ["GET /models/", *(f"{m} /models/llama/{n}" for m in ("HEAD", "GET") for n in FILES)]
    )
    assert len(waits) == len(FlakyS3.slowed)
