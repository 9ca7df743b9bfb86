"""Record a published manifest's digest in a ConfigMap, through the Kubernetes API from inside
the seed Job's pod, so the store can read it back as an output (``kube/model_digest.py``).

The pod reaches the API server as the Kubernetes docs describe for a pod without a client
library (kubernetes.io/docs/tasks/run-application/access-api-from-pod/, "Directly accessing the
REST API"): ``https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT_HTTPS`` (the docs: the
control plane presents a valid certificate for that host, which it does not promise for
``kubernetes.default.svc``, the fallback when the variables are unset), the pod's
ServiceAccount token as a bearer token and its CA bundle, both under
``/var/run/secrets/kubernetes.io/serviceaccount/``. The token is read at each request: a
projected token is rotated in place.

What the ServiceAccount may do (the store's Role): ``create`` ConfigMaps in the namespace
(RBAC cannot restrict ``create`` to a name: kubernetes.io/docs/reference/access-authn-authz/
rbac/#referring-to-resources), ``get`` and ``update`` on the one ConfigMap name. So a first run
creates it; a rerun finds it (409 AlreadyExists), reads it and, where it records another digest
(the revision was published anew) or lacks a label, replaces it with the resourceVersion it read.

The ConfigMap carries the labels the Job gives (``--record-label``, the store's labels): Velero's
Schedule for the store selects its objects by the store's label (``kube/velero.py``), so the
record is backed up with them and a restored store's preview reads it back.
"""

from __future__ import annotations

import json
import os
import ssl
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .net import USER_AGENT, service_message

TOKEN_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
FALLBACK_API = "https://kubernetes.default.svc"
TIMEOUT_SECONDS = 30.0
# The ConfigMap's data keys (IsConfigMapKey: letters, digits, '-', '_', '.').
DIGEST_KEY = "manifest-sha256"
REVISION_KEY = "revision"
SOURCE_KEY = "source"


class RecordError(Exception):
    """The digest could not be recorded; the message is one line naming the ConfigMap, the
    request and the API server's own reason."""


@dataclass(frozen=True)
class Target:
    """A ConfigMap by namespace and name (``<namespace>/<name>``, pulumi-kubernetes' id)."""

    namespace: str
    name: str

    @classmethod
    def parse(cls, text: str) -> Target:
        namespace, _, name = text.partition("/")
        if not namespace or not name or "/" in name:
            raise RecordError(f"record-configmap must be <namespace>/<name>, got {text!r}")
        return cls(namespace, name)

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


def in_cluster_api(environ: dict[str, str] | None = None) -> str:
    """The API server's URL as a pod sees it (module docstring): from the service variables
    the kubelet sets, else ``kubernetes.default.svc``."""
    env = os.environ if environ is None else environ
    host = env.get("KUBERNETES_SERVICE_HOST")
    port = env.get("KUBERNETES_SERVICE_PORT_HTTPS") or env.get("KUBERNETES_SERVICE_PORT")
    if not host:
        return FALLBACK_API
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    return f"https://{host}:{port}" if port else f"https://{host}"


class Api:
    """Requests to the API server with the pod's ServiceAccount credentials."""

    def __init__(self, base: str, token_dir: Path) -> None:
        self.base = base.rstrip("/")
        self.token_dir = token_dir
        self._context: ssl.SSLContext | None = None

    def _ssl(self) -> ssl.SSLContext | None:
        if not self.base.startswith("https://"):
            return None
        if self._context is None:
            ca = self.token_dir / "ca.crt"
            if not ca.is_file():
                raise RecordError(
                    f"no CA bundle at {ca}: is the ServiceAccount token mounted "
                    f"(automountServiceAccountToken)?"
                )
            self._context = ssl.create_default_context(cafile=str(ca))
        return self._context

    def _token(self) -> str:
        path = self.token_dir / "token"
        try:
            return path.read_text().strip()
        except OSError as error:
            raise RecordError(
                f"no ServiceAccount token at {path} ({error.strerror}): is it mounted "
                f"(automountServiceAccountToken)?"
            ) from None

    def request(
        self, method: str, path: str, body: dict[str, Any] | None = None
    ) -> tuple[int, dict[str, Any]]:
        """``(status, JSON body)``; an HTTP error answer is returned, not raised, so the
        caller tells 404 and 409 from a refusal. A network failure raises :class:`RecordError`."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"{self.base}{path}", data=data, method=method)
        request.add_header("Authorization", f"Bearer {self._token()}")
        request.add_header("Accept", "application/json")
        request.add_header("User-Agent", USER_AGENT)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(
                request, timeout=TIMEOUT_SECONDS, context=self._ssl()
            ) as response:
                return response.status, _json(response.read())
        except urllib.error.HTTPError as error:
            return error.code, _json(error.read(65536))
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", None) or error
            raise RecordError(f"cannot reach the Kubernetes API at {self.base}: {reason}") from None


def _json(body: bytes) -> dict[str, Any]:
    try:
        value = json.loads(body.decode("utf-8", "replace") or "{}")
    except ValueError:
        return {"message": body.decode("utf-8", "replace")[:200]}
    return value if isinstance(value, dict) else {}


def _refused(target: Target, method: str, path: str, status: int, body: dict[str, Any]) -> str:
    detail = service_message(json.dumps(body).encode()) or "no reason given"
    return f"ConfigMap {target}: {method} {path} answered {status} ({detail})"


def parse_label(text: str) -> tuple[str, str]:
    """``<key>=<value>`` (a ``--record-label``), split at the first ``=``."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise RecordError(f"--record-label must be <key>=<value>, got {text!r}")
    return key, value


def record_digest(
    api: Api,
    target: Target,
    *,
    digest: str,
    revision: str,
    source: str,
    labels: Mapping[str, str] | None = None,
) -> str:
    """Make the ConfigMap ``target`` hold ``digest`` (and the revision and source it is of)
    and carry ``labels`` (beside any it has); returns what was done: ``created``,
    ``unchanged`` or ``updated``. Raises :class:`RecordError` with one line when the API
    server refuses."""
    data = {DIGEST_KEY: digest, REVISION_KEY: revision, SOURCE_KEY: source}
    wanted = dict(labels or {})
    collection = f"/api/v1/namespaces/{_quote(target.namespace)}/configmaps"
    item = f"{collection}/{_quote(target.name)}"
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": target.name, "namespace": target.namespace, "labels": wanted},
        "data": data,
    }
    status, answer = api.request("POST", collection, body)
    if status == 201:
        return "created"
    if status != 409:
        raise RecordError(_refused(target, "POST", collection, status, answer))
    # One more round if another writer updates it between our read and our write (409 again).
    for _ in range(2):
        status, found = api.request("GET", item)
        if status != 200:
            raise RecordError(_refused(target, "GET", item, status, found))
        metadata = found.get("metadata") or {}
        have = metadata.get("labels") or {}
        if found.get("data") == data and wanted.items() <= have.items():
            return "unchanged"
        body["metadata"] = {
            **body["metadata"],
            "labels": {**have, **wanted},
            "resourceVersion": metadata.get("resourceVersion"),
        }
        status, answer = api.request("PUT", item, body)
        if status == 200:
            return "updated"
        if status != 409:
            raise RecordError(_refused(target, "PUT", item, status, answer))
    raise RecordError(_refused(target, "PUT", item, status, answer))


def _quote(segment: str) -> str:
    return urllib.parse.quote(segment, safe="")
