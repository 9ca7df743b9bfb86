"""Amazon S3 with the standard library: Signature Version 4, the credentials an EKS pod gets,
``ListObjectsV2`` and streamed ``GetObject``.

Signing follows "Create a signed AWS API request" (IAM User Guide,
docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html): a
canonical request (method, URI-encoded path, sorted encoded query, sorted lowercase headers,
the signed header names, the payload's sha256), a string to sign over its hash and the
credential scope ``<date>/<region>/s3/aws4_request``, and an HMAC-SHA256 chain from
``"AWS4" + secret`` through date, region, service and ``aws4_request``. S3 takes the path
as sent (no dot-segment normalisation) and needs ``x-amz-content-sha256`` signed; the tests
check every signature against botocore's ``S3SigV4Auth``.

Credentials, first found wins, in the order an EKS pod can be given them:

1. ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY`` and ``AWS_SESSION_TOKEN`` (a Secret's
   keys as env).
2. IRSA: ``AWS_ROLE_ARN`` and ``AWS_WEB_IDENTITY_TOKEN_FILE`` (set by EKS's pod identity
   webhook) exchanged by STS ``AssumeRoleWithWebIdentity`` (an unsigned call: the token is
   the proof), the token file re-read at each refresh since the kubelet rotates it
   ("Assume role credential provider", docs.aws.amazon.com/sdkref/latest/guide/
   feature-assume-role-credentials.html). STS is asked at its Regional endpoint
   ``https://sts.<region>.amazonaws.com`` unless ``AWS_STS_REGIONAL_ENDPOINTS=legacy``
   ("AWS STS Regional endpoints", docs.aws.amazon.com/sdkref/latest/guide/
   feature-sts-regionalized-endpoints.html: ``regional`` is the default of current SDKs).
3. EKS Pod Identity: ``GET $AWS_CONTAINER_CREDENTIALS_FULL_URI`` with the token of
   ``AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE`` (or ``AWS_CONTAINER_AUTHORIZATION_TOKEN``) as
   ``Authorization`` ("Container credential provider", docs.aws.amazon.com/sdkref/latest/
   guide/feature-container-credentials.html: EKS sets both variables).

Temporary credentials are fetched again five minutes before they expire, so a download
longer than the role session goes on.

Endpoints: ``AWS_ENDPOINT_URL_S3``, else ``AWS_ENDPOINT_URL`` (and ``AWS_ENDPOINT_URL_STS``
for STS), the variables of "Service-specific endpoints" (docs.aws.amazon.com/sdkref/latest/
guide/feature-ss-endpoints.html), addressed path-style (``<endpoint>/<bucket>/<key>``: what
local servers such as moto take); without them virtual-hosted
``https://<bucket>.s3.<region>.amazonaws.com`` (path-style for a bucket name with a dot,
which the wildcard certificate does not cover). The region is ``AWS_REGION``, else
``AWS_DEFAULT_REGION``, else ``us-east-1``; a bucket in another region answers with its
region in ``x-amz-bucket-region``, and the request is signed again for it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from .net import (
    USER_AGENT,
    SourceError,
    child_text,
    http_failure,
    local,
    open_url,
    unreachable,
    urlopen,
)

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
# Headers a proxy may add or change on the way: never signed (botocore's list holds these).
UNSIGNED_HEADERS = frozenset({"user-agent", "connection", "expect", "transfer-encoding"})
REFRESH_BEFORE = timedelta(minutes=5)
STS_VERSION = "2011-06-15"


@dataclass(frozen=True)
class Credentials:
    """An access key pair, the session token of temporary credentials, when they expire, and
    where they came from (named in errors)."""

    access_key: str
    secret_key: str
    token: str | None = None
    expires: datetime | None = None
    source: str = "environment"


def quote(text: str, safe: str = "") -> str:
    """SigV4's UriEncode: every byte but ``A-Za-z0-9-._~`` (and ``safe``) percent-encoded."""
    return urllib.parse.quote(text, safe=safe + "~")


def query_string(params: Mapping[str, str]) -> str:
    """A query string encoded as SigV4 wants it, in its canonical (sorted) order."""
    return "&".join(f"{quote(k)}={quote(v)}" for k, v in sorted(params.items()))


def _hmac(key: bytes, message: str) -> bytes:
    return hmac.new(key, message.encode(), hashlib.sha256).digest()


def signing_key(secret: str, date: str, region: str, service: str) -> bytes:
    """The SigV4 key of one day, region and service."""
    key = _hmac(f"AWS4{secret}".encode(), date)
    for part in (region, service, "aws4_request"):
        key = _hmac(key, part)
    return key


def sign(
    method: str,
    url: str,
    headers: Mapping[str, str],
    credentials: Credentials,
    region: str,
    now: datetime,
    payload_sha256: str = EMPTY_SHA256,
    service: str = "s3",
) -> dict[str, str]:
    """``headers`` with what SigV4 adds for an S3 request to ``url`` at ``now``:
    ``X-Amz-Date``, ``X-Amz-Security-Token`` (temporary credentials),
    ``X-Amz-Content-SHA256`` and ``Authorization``. The URL's path and query must already be
    encoded with :func:`quote` (S3 signs the path as sent)."""
    parts = urllib.parse.urlsplit(url)
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = dict(headers)
    out["X-Amz-Date"] = stamp
    if credentials.token:
        out["X-Amz-Security-Token"] = credentials.token
    out["X-Amz-Content-SHA256"] = payload_sha256
    signed = {
        name.lower(): " ".join(value.split())
        for name, value in out.items()
        if name.lower() not in UNSIGNED_HEADERS
    }
    signed.setdefault("host", _host(parts))
    names = sorted(signed)
    pairs = sorted(p.partition("=")[::2] for p in parts.query.split("&")) if parts.query else []
    canonical = "\n".join(
        [
            method.upper(),
            parts.path or "/",
            "&".join(f"{k}={v}" for k, v in pairs),
            "".join(f"{n}:{signed[n]}\n" for n in names),
            ";".join(names),
            payload_sha256,
        ]
    )
    scope = f"{stamp[:8]}/{region}/{service}/aws4_request"
    to_sign = "\n".join(
        ["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()]
    )
    key = signing_key(credentials.secret_key, stamp[:8], region, service)
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    out["Authorization"] = (
        f"AWS4-HMAC-SHA256 Credential={credentials.access_key}/{scope}, "
        f"SignedHeaders={';'.join(names)}, Signature={signature}"
    )
    return out


def _host(parts: urllib.parse.SplitResult) -> str:
    """The Host header for a URL: the port only when it is not the scheme's default."""
    default = {"http": 80, "https": 443}.get(parts.scheme)
    host = parts.hostname or ""
    return host if parts.port in (None, default) else f"{host}:{parts.port}"


def region_of(env: Mapping[str, str]) -> str:
    return env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1"


def _domain(region: str) -> str:
    return "amazonaws.com.cn" if region.startswith("cn-") else "amazonaws.com"


def sts_endpoint(env: Mapping[str, str]) -> str:
    """Where STS is asked (module docstring)."""
    override = env.get("AWS_ENDPOINT_URL_STS") or env.get("AWS_ENDPOINT_URL")
    if override:
        return override.rstrip("/")
    region = region_of(env)
    if env.get("AWS_STS_REGIONAL_ENDPOINTS", "regional").lower() == "legacy":
        return "https://sts.amazonaws.com"
    return f"https://sts.{region}.{_domain(region)}"


class CredentialChain:
    """The credentials of the module docstring, fetched when first needed and again before
    temporary ones expire."""

    def __init__(self, uri: str, env: Mapping[str, str]) -> None:
        self.uri = uri
        self.env = env
        self._current: Credentials | None = None

    def get(self) -> Credentials:
        current = self._current
        if current is None or (
            current.expires is not None and current.expires - REFRESH_BEFORE <= datetime.now(UTC)
        ):
            current = self._current = self._resolve()
        return current

    def _resolve(self) -> Credentials:
        env = self.env
        if env.get("AWS_ACCESS_KEY_ID") and env.get("AWS_SECRET_ACCESS_KEY"):
            return Credentials(
                env["AWS_ACCESS_KEY_ID"],
                env["AWS_SECRET_ACCESS_KEY"],
                env.get("AWS_SESSION_TOKEN") or None,
            )
        if env.get("AWS_ROLE_ARN") and env.get("AWS_WEB_IDENTITY_TOKEN_FILE"):
            return self._web_identity(env["AWS_ROLE_ARN"], env["AWS_WEB_IDENTITY_TOKEN_FILE"])
        if env.get("AWS_CONTAINER_CREDENTIALS_FULL_URI"):
            return self._container(env["AWS_CONTAINER_CREDENTIALS_FULL_URI"])
        raise SourceError(
            f"source {self.uri}: no AWS credentials: set AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY, or run the pod with IRSA (AWS_ROLE_ARN and "
            "AWS_WEB_IDENTITY_TOKEN_FILE) or EKS Pod Identity "
            "(AWS_CONTAINER_CREDENTIALS_FULL_URI)"
        )

    def _read(self, path: str, what: str) -> str:
        try:
            return Path(path).read_text().strip()
        except OSError as error:
            raise SourceError(
                f"source {self.uri}: cannot read the {what} {path}: {error.strerror}"
            ) from None

    def _web_identity(self, role_arn: str, token_file: str) -> Credentials:
        token = self._read(token_file, "web identity token file (AWS_WEB_IDENTITY_TOKEN_FILE)")
        session = self.env.get("AWS_ROLE_SESSION_NAME") or (
            f"modelstore-seed-{datetime.now(UTC):%Y%m%dT%H%M%S}"
        )
        form = {
            "Action": "AssumeRoleWithWebIdentity",
            "Version": STS_VERSION,
            "RoleArn": role_arn,
            "RoleSessionName": session,
            "WebIdentityToken": token,
        }
        request = urllib.request.Request(
            sts_endpoint(self.env) + "/",
            data=urllib.parse.urlencode(form).encode(),
            headers={
                "Content-Type": "application/x-www-form-urlencoded; charset=utf-8",
                "User-Agent": USER_AGENT,
            },
            method="POST",
        )
        with open_url(self.uri, request, timeout=60) as response:
            root = ElementTree.fromstring(response.read())
        found = {local(e.tag): (e.text or "") for e in root.iter()}
        if not found.get("AccessKeyId") or not found.get("SecretAccessKey"):
            raise SourceError(
                f"source {self.uri}: STS AssumeRoleWithWebIdentity for {role_arn} answered "
                "without credentials"
            )
        return Credentials(
            found["AccessKeyId"],
            found["SecretAccessKey"],
            found.get("SessionToken") or None,
            _expiry(found.get("Expiration")),
            f"IRSA role {role_arn}",
        )

    def _container(self, url: str) -> Credentials:
        token_file = self.env.get("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE")
        token = (
            self._read(token_file, "container authorization token file")
            if token_file
            else self.env.get("AWS_CONTAINER_AUTHORIZATION_TOKEN", "")
        )
        headers = {"User-Agent": USER_AGENT}
        if token:
            headers["Authorization"] = token
        request = urllib.request.Request(url, headers=headers)
        with open_url(self.uri, request, timeout=30) as response:
            data = json.load(response)
        return Credentials(
            data["AccessKeyId"],
            data["SecretAccessKey"],
            data.get("Token") or None,
            _expiry(data.get("Expiration")),
            "EKS Pod Identity",
        )


def _expiry(value: str | None) -> datetime | None:
    if not value:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


class S3Client:
    """The S3 requests the seed makes (module docstring), signed with the chain's
    credentials. ``page_size``: ``max-keys`` of each listing page (None: the service's
    default, 1000)."""

    def __init__(self, uri: str, env: Mapping[str, str] | None = None) -> None:
        self.uri = uri
        self.env = os.environ if env is None else env
        self.region = region_of(self.env)
        endpoint = self.env.get("AWS_ENDPOINT_URL_S3") or self.env.get("AWS_ENDPOINT_URL")
        self.endpoint = endpoint.rstrip("/") if endpoint else None
        self.credentials = CredentialChain(uri, self.env)
        self.page_size: int | None = None

    def url(self, bucket: str, key: str = "", query: Mapping[str, str] | None = None) -> str:
        path = quote(key, safe="/")
        if self.endpoint:
            base = f"{self.endpoint}/{bucket}/{path}"
        elif "." in bucket:
            base = f"https://s3.{self.region}.{_domain(self.region)}/{bucket}/{path}"
        else:
            base = f"https://{bucket}.s3.{self.region}.{_domain(self.region)}/{path}"
        return f"{base}?{query_string(query)}" if query else base

    def request(
        self,
        method: str,
        bucket: str,
        key: str = "",
        query: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 60,
    ) -> Any:
        """The response to a signed request; a bucket in another region is asked again there."""
        for attempt in range(2):
            url = self.url(bucket, key, query)
            signed = sign(
                method,
                url,
                dict(headers or {}),
                self.credentials.get(),
                self.region,
                datetime.now(UTC),
            )
            request = urllib.request.Request(
                url, headers={**signed, "User-Agent": USER_AGENT}, method=method
            )
            try:
                return urlopen(request, timeout)
            except urllib.error.HTTPError as error:
                region = error.headers.get("x-amz-bucket-region")
                if attempt == 0 and region and region != self.region:
                    self.region = region
                    continue
                raise http_failure(self.uri, request, error, _hint(error.code)) from None
            except (urllib.error.URLError, OSError) as error:
                raise unreachable(self.uri, request, error) from None
        raise AssertionError("unreachable: the loop returns or raises")

    def list(self, bucket: str, prefix: str) -> Iterator[tuple[str, int]]:
        """Every object under ``prefix`` as (key, size), page after page (``ListObjectsV2``,
        continued with ``NextContinuationToken`` while ``IsTruncated``)."""
        token: str | None = None
        while True:
            query = {"list-type": "2", "prefix": prefix}
            if token:
                query["continuation-token"] = token
            if self.page_size:
                query["max-keys"] = str(self.page_size)
            with self.request("GET", bucket, query=query) as response:
                root = ElementTree.fromstring(response.read())
            for element in root:
                if local(element.tag) == "Contents":
                    yield child_text(element, "Key") or "", int(child_text(element, "Size") or 0)
            token = child_text(root, "NextContinuationToken")
            if child_text(root, "IsTruncated") != "true" or not token:
                return

    def head(self, bucket: str, key: str) -> Any:
        """The object's headers, its checksums included (``x-amz-checksum-mode: ENABLED``)."""
        with self.request(
            "HEAD", bucket, key, headers={"x-amz-checksum-mode": "ENABLED"}
        ) as response:
            return response.headers

    def get_request(
        self, bucket: str, key: str, checksum: bool = True
    ) -> tuple[str, dict[str, str]]:
        """The URL and signed headers of a ``GetObject`` of ``key`` (signed now: ask again for
        each request), with its checksum asked for (``checksum``: a whole-object GET)."""
        url = self.url(bucket, key)
        headers = {"x-amz-checksum-mode": "ENABLED"} if checksum else {}
        signed = sign("GET", url, headers, self.credentials.get(), self.region, datetime.now(UTC))
        return url, signed

    def hint(self, status: int) -> str:
        """What an error status likely means."""
        return _hint(status)

    def get(self, bucket: str, key: str) -> Any:
        """The object's bytes, streamed, with its checksum headers."""
        return self.request(
            "GET", bucket, key, headers={"x-amz-checksum-mode": "ENABLED"}, timeout=300
        )


def _hint(status: int) -> str:
    return {
        403: "the credentials may not read this bucket (s3:ListBucket on the bucket, "
        "s3:GetObject on its objects)",
        404: "no such bucket or object",
    }.get(status, "")


def checksums(headers: Any) -> dict[str, str]:
    """What an object's headers say of its bytes, as S3's API names them: ``ChecksumSHA256``,
    ``ChecksumCRC32``, ``ChecksumCRC32C``, ``ChecksumCRC64NVME`` (base64 of the big-endian
    value), ``ChecksumType``, and ``ETag`` with the encryption that decides whether it is an
    MD5 (``ServerSideEncryption``, ``SSECustomerAlgorithm``); only those present."""
    found = {
        name: headers.get(header)
        for name, header in (
            ("ChecksumSHA256", "x-amz-checksum-sha256"),
            ("ChecksumCRC32", "x-amz-checksum-crc32"),
            ("ChecksumCRC32C", "x-amz-checksum-crc32c"),
            ("ChecksumCRC64NVME", "x-amz-checksum-crc64nvme"),
            ("ETag", "ETag"),
            ("ServerSideEncryption", "x-amz-server-side-encryption"),
            ("SSECustomerAlgorithm", "x-amz-server-side-encryption-customer-algorithm"),
        )
    }
    out = {name: value for name, value in found.items() if value}
    if any(name.startswith("Checksum") for name in out):
        # An object stored before S3 reported checksum types has none: its value then tells
        # (a composite one ends in "-<parts>").
        out["ChecksumType"] = headers.get("x-amz-checksum-type") or "FULL_OBJECT"
    return out
