"""Cloud Storage with the standard library: the JSON API's object listing and media download,
authorised by the GKE metadata server's token.

- Listing: ``GET <endpoint>/storage/v1/b/<bucket>/o?prefix=<prefix>``, continued with
  ``pageToken=<nextPageToken>`` until a page has none ("Objects: list",
  cloud.google.com/storage/docs/json_api/v1/objects/list). Each item has ``name``, ``size``
  (a string) and, for objects that have one, ``md5Hash`` (base64).
- Download: ``GET <endpoint>/storage/v1/b/<bucket>/o/<object, percent-encoded>?alt=media``
  ("Objects: get", .../json_api/v1/objects/get: ``alt=media`` returns the object data).
- Upload (a manifest only, ``source_manifest.py``): ``POST <endpoint>/upload/storage/v1/b/
  <bucket>/o?uploadType=media&name=<object>`` with the bytes as the body ("Objects: insert",
  .../json_api/v1/objects/insert; "Perform a single-request upload",
  cloud.google.com/storage/docs/uploading-objects): one request, so the object appears whole
  or not at all.
- Checks: ``md5Hash`` when the object has one. A composite object has none ("Composite
  objects do not have an MD5 hash metadata field", cloud.google.com/storage/docs/
  composite-objects), only ``crc32c`` (base64 of the big-endian value); CRC-32C is not in
  Python's standard library (``zlib``'s CRC-32 is another polynomial), so :mod:`.crc` computes
  it in pure Python, a few tens of MB/s: checked up to ``transfer.PURE_CRC_MAX_BYTES`` per
  object, above it the size only, and the sha256 goes into the manifest that the verification
  Job checks as readers see it.
- Credentials: ``GET http://metadata.google.internal/computeMetadata/v1/instance/
  service-accounts/default/token`` with ``Metadata-Flavor: Google``, answered on GKE by the
  metadata server with the pod's Workload Identity ("Authenticate workloads using service
  accounts", cloud.google.com/compute/docs/access/authenticate-workloads); fetched again a
  minute before ``expires_in`` runs out. ``GCE_METADATA_HOST`` replaces the host, as
  google-auth reads it (googleapis/google-auth-library-python,
  ``google/auth/compute_engine/_metadata.py``).
- Endpoint: ``https://storage.googleapis.com``, or ``STORAGE_EMULATOR_HOST`` (with or without
  a scheme), the variable Google's Cloud Storage clients honour for an emulator
  (googleapis/google-cloud-go ``storage/doc.go``: "set the STORAGE_EMULATOR_HOST environment
  variable to the address at which your emulator is running"); with it no token is asked for,
  as those clients then go anonymous.
"""

from __future__ import annotations

import json
import os
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from typing import Any

from .net import USER_AGENT, SourceError, open_url

DEFAULT_ENDPOINT = "https://storage.googleapis.com"
METADATA_HOST = "metadata.google.internal"
TOKEN_PATH = "/computeMetadata/v1/instance/service-accounts/default/token"
REFRESH_BEFORE = 60.0  # seconds


class GcsClient:
    """The Cloud Storage requests the seed makes (module docstring). ``endpoint`` replaces
    the one the environment names (tests)."""

    def __init__(
        self, uri: str, env: Mapping[str, str] | None = None, endpoint: str | None = None
    ) -> None:
        self.uri = uri
        env = os.environ if env is None else env
        emulator = env.get("STORAGE_EMULATOR_HOST")
        if emulator and "://" not in emulator:
            emulator = f"http://{emulator}"
        self.anonymous = bool(emulator) and endpoint is None
        self.endpoint = (endpoint or emulator or DEFAULT_ENDPOINT).rstrip("/")
        self.metadata = f"http://{env.get('GCE_METADATA_HOST') or METADATA_HOST}{TOKEN_PATH}"
        self._token: tuple[str, float] | None = None

    def token(self) -> str:
        """The pod's access token from the metadata server, cached until a minute before it
        expires."""
        if self._token is None or self._token[1] - REFRESH_BEFORE <= time.monotonic():
            request = urllib.request.Request(
                self.metadata, headers={"Metadata-Flavor": "Google", "User-Agent": USER_AGENT}
            )
            with open_url(self.uri, request, timeout=30) as response:
                data = json.load(response)
            if not data.get("access_token"):
                raise SourceError(
                    f"source {self.uri}: the metadata server answered without an access token"
                )
            self._token = (
                data["access_token"],
                time.monotonic() + float(data.get("expires_in", 0)),
            )
        return self._token[0]

    def _get(self, url: str, timeout: float, data: bytes | None = None) -> Any:
        headers = {"User-Agent": USER_AGENT}
        if not self.anonymous:
            headers["Authorization"] = f"Bearer {self.token()}"
        if data is not None:
            # Bytes as they are: a JSON content type makes some servers parse the body (the
            # gcp-storage-emulator the tests run does), and readers never look at the type.
            headers["Content-Type"] = "application/octet-stream"
        request = urllib.request.Request(url, data=data, headers=headers)
        return open_url(self.uri, request, timeout)

    def list(self, bucket: str, prefix: str) -> Iterator[dict[str, Any]]:
        """Every object resource under ``prefix``, page after page."""
        base = f"{self.endpoint}/storage/v1/b/{urllib.parse.quote(bucket, safe='')}/o"
        page: str | None = None
        while True:
            query = {"prefix": prefix, **({"pageToken": page} if page else {})}
            with self._get(f"{base}?{urllib.parse.urlencode(query)}", timeout=60) as response:
                data = json.load(response)
            yield from data.get("items", [])
            page = data.get("nextPageToken")
            if not page:
                return

    def get(self, bucket: str, name: str) -> Any:
        """The object's bytes, streamed."""
        return self._get(self.get_request(bucket, name)[0], timeout=300)

    def get_request(self, bucket: str, name: str) -> tuple[str, dict[str, str]]:
        """The URL and headers of a download of the object ``name`` (the token as it is now:
        ask again for each request)."""
        url = (
            f"{self.endpoint}/storage/v1/b/{urllib.parse.quote(bucket, safe='')}/o/"
            f"{urllib.parse.quote(name, safe='')}?alt=media"
        )
        headers = {"User-Agent": USER_AGENT}
        if not self.anonymous:
            headers["Authorization"] = f"Bearer {self.token()}"
        return url, headers

    def put(self, bucket: str, name: str, data: bytes) -> None:
        """Upload ``data`` as the object ``name`` in one request (module docstring)."""
        query = urllib.parse.urlencode({"uploadType": "media", "name": name})
        url = f"{self.endpoint}/upload/storage/v1/b/{urllib.parse.quote(bucket, safe='')}/o?{query}"
        with self._get(url, timeout=60, data=data):
            pass
