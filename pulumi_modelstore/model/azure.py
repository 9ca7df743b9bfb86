"""Azure Blob Storage with the standard library: List Blobs and Get Blob, authorised by the
pod's AKS workload identity.

- Listing: ``GET <endpoint>/<container>?restype=container&comp=list&prefix=<prefix>``,
  continued with ``marker=<NextMarker>`` until ``NextMarker`` is empty ("List Blobs" and
  "Listing Blob storage resources", learn.microsoft.com/rest/api/storageservices/list-blobs
  and .../enumerating-blob-resources). Each ``Blob`` has ``Name`` and ``Properties`` with
  ``Content-Length`` and, when set, ``Content-MD5`` (base64); ``include=metadata`` adds its
  ``Metadata``. In an account with a hierarchical namespace (Data Lake Storage) the Blob API
  lists each directory too, as a zero-length blob whose metadata has ``hdi_isfolder=true``;
  such a blob is a directory, not a file (blobfuse2 reads it so:
  Azure/azure-storage-fuse ``component/azstorage/utils.go``, ``parseMetadata``), and is not
  listed.
- Download: ``GET <endpoint>/<container>/<blob>`` ("Get Blob").
- Checks: ``Content-MD5`` when the blob has one (Put Blob stores the MD5 of what it received;
  a blob committed from blocks has one only when its writer set it): the one whole-blob
  digest the service keeps.
- Every request carries ``x-ms-version: 2024-11-04`` ("Versioning for Azure Storage",
  learn.microsoft.com/rest/api/storageservices/versioning-for-the-azure-storage-services: a
  request names the version it was written against; Microsoft Entra bearer tokens need
  2017-11-09 or later, "Authorize with Microsoft Entra ID",
  .../authorize-with-azure-active-directory) and ``x-ms-date``.
- Credentials: AKS workload identity. Its webhook sets ``AZURE_CLIENT_ID``,
  ``AZURE_TENANT_ID``, ``AZURE_FEDERATED_TOKEN_FILE`` and ``AZURE_AUTHORITY_HOST`` in the pod
  ("Use Microsoft Entra Workload ID with AKS", learn.microsoft.com/azure/aks/
  workload-identity-overview); the projected service account token is the client assertion
  of a client credentials request, ``POST <authority>/<tenant>/oauth2/v2.0/token`` with
  ``client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer`` and
  ``scope=https://storage.azure.com/.default`` ("Microsoft identity platform and the OAuth
  2.0 client credentials flow", learn.microsoft.com/entra/identity-platform/
  v2-oauth2-client-creds-grant-flow, "Third case: Access token request with a federated
  credential"). The token file is re-read at each refresh (the kubelet rotates it), a
  minute before ``expires_in`` runs out.
- Endpoint: ``https://<account>.blob.core.windows.net``, or
  ``MODELSTORE_AZURE_BLOB_ENDPOINT`` (this project's variable, not an Azure one: Azure's
  clients take an endpoint in code or a connection string), e.g. Azurite's path-style
  ``https://127.0.0.1:10000/<account>``.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator, Mapping
from email.utils import formatdate
from pathlib import Path
from typing import Any

from .net import USER_AGENT, SourceError, child_text, http_failure, local, unreachable, urlopen

X_MS_VERSION = "2024-11-04"
SCOPE = "https://storage.azure.com/.default"
DEFAULT_AUTHORITY = "https://login.microsoftonline.com/"
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
WORKLOAD_IDENTITY = ("AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_FEDERATED_TOKEN_FILE")
REFRESH_BEFORE = 60.0  # seconds


class BlobClient:
    """The Blob requests the seed makes (module docstring). ``endpoint`` replaces the one the
    environment names (tests). ``page_size``: ``maxresults`` of each listing page (None: the
    service's default, 5000)."""

    def __init__(
        self,
        uri: str,
        account: str,
        env: Mapping[str, str] | None = None,
        endpoint: str | None = None,
    ) -> None:
        self.uri = uri
        self.env = os.environ if env is None else env
        default = f"https://{account}.blob.core.windows.net"
        self.endpoint = (
            endpoint or self.env.get("MODELSTORE_AZURE_BLOB_ENDPOINT") or default
        ).rstrip("/")
        self.page_size: int | None = None
        self._token: tuple[str, float] | None = None

    def token(self) -> str:
        """An access token for Azure Storage from the workload identity, cached until a
        minute before it expires."""
        if self._token is not None and self._token[1] - REFRESH_BEFORE > time.monotonic():
            return self._token[0]
        missing = [name for name in WORKLOAD_IDENTITY if not self.env.get(name)]
        if missing:
            raise SourceError(
                f"source {self.uri}: no Azure workload identity: {', '.join(missing)} not "
                "set (the AKS workload identity webhook sets them in a pod whose service "
                "account is annotated azure.workload.identity/client-id and that is labelled "
                'azure.workload.identity/use: "true")'
            )
        path = self.env["AZURE_FEDERATED_TOKEN_FILE"]
        try:
            assertion = Path(path).read_text().strip()
        except OSError as error:
            raise SourceError(
                f"source {self.uri}: cannot read the federated token file {path}: {error.strerror}"
            ) from None
        authority = self.env.get("AZURE_AUTHORITY_HOST") or DEFAULT_AUTHORITY
        url = f"{authority.rstrip('/')}/{self.env['AZURE_TENANT_ID']}/oauth2/v2.0/token"
        form = {
            "client_id": self.env["AZURE_CLIENT_ID"],
            "scope": SCOPE,
            "client_assertion_type": ASSERTION_TYPE,
            "client_assertion": assertion,
            "grant_type": "client_credentials",
        }
        request = urllib.request.Request(
            url,
            data=urllib.parse.urlencode(form).encode(),
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "User-Agent": USER_AGENT,
            },
            method="POST",
        )
        data = json.load(self._open(request, timeout=30))
        if not data.get("access_token"):
            raise SourceError(f"source {self.uri}: {url} answered without an access token")
        self._token = (data["access_token"], time.monotonic() + float(data.get("expires_in", 0)))
        return self._token[0]

    def _open(self, request: urllib.request.Request, timeout: float) -> Any:
        try:
            return urlopen(request, timeout)
        except urllib.error.HTTPError as error:
            raise http_failure(self.uri, request, error, self.hint(error.code)) from None
        except (urllib.error.URLError, OSError) as error:
            raise unreachable(self.uri, request, error) from None

    def _get(self, url: str, timeout: float) -> Any:
        return self._open(urllib.request.Request(url, headers=self._headers()), timeout)

    def _headers(self) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {self.token()}",
            "x-ms-version": X_MS_VERSION,
            "x-ms-date": formatdate(usegmt=True),
            "User-Agent": USER_AGENT,
        }

    def list(self, container: str, prefix: str) -> Iterator[tuple[str, int, str | None]]:
        """Every blob under ``prefix`` as (name, size, Content-MD5 or None), page after page,
        less directories (``hdi_isfolder``, module docstring)."""
        base = f"{self.endpoint}/{urllib.parse.quote(container, safe='')}"
        marker = ""
        while True:
            query = {"restype": "container", "comp": "list", "prefix": prefix}
            query["include"] = "metadata"
            if marker:
                query["marker"] = marker
            if self.page_size:
                query["maxresults"] = str(self.page_size)
            with self._get(f"{base}?{urllib.parse.urlencode(query)}", timeout=60) as response:
                root = ElementTree.fromstring(response.read())
            for blob in root.iter():
                if local(blob.tag) != "Blob":
                    continue
                if _is_directory(blob):
                    continue
                props = next((p for p in blob if local(p.tag) == "Properties"), None)
                size = child_text(props, "Content-Length") if props is not None else None
                md5 = child_text(props, "Content-MD5") if props is not None else None
                yield child_text(blob, "Name") or "", int(size or 0), md5 or None
            marker = child_text(root, "NextMarker") or ""
            if not marker:
                return

    def get(self, container: str, name: str) -> Any:
        """The blob's bytes, streamed."""
        return self._get(self.get_request(container, name)[0], timeout=300)

    def get_request(self, container: str, name: str) -> tuple[str, dict[str, str]]:
        """The URL and headers of a download of the blob ``name`` (the token and date as
        they are now: ask again for each request)."""
        url = (
            f"{self.endpoint}/{urllib.parse.quote(container, safe='')}/"
            f"{urllib.parse.quote(name, safe='/')}"
        )
        return url, self._headers()

    def hint(self, status: int) -> str:
        """What an error status likely means."""
        return (
            "the workload identity needs a data role on the account or container "
            "(Storage Blob Data Reader)"
            if status == 403
            else ""
        )


def _is_directory(blob: ElementTree.Element) -> bool:
    """Whether a listed blob is a directory of a hierarchical namespace (module docstring)."""
    metadata = next((m for m in blob if local(m.tag) == "Metadata"), None)
    if metadata is None:
        return False
    return any(
        local(m.tag).lower() == "hdi_isfolder" and (m.text or "").strip().lower() == "true"
        for m in metadata
    )
