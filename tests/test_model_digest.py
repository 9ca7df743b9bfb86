"""The manifest digest as an output: the seed program records it in a ConfigMap through the
Kubernetes API (run for real against a stub API server over TLS on the loopback address), the
store grants that one write (Role and RoleBinding, checked against the API's schema) and reads
the ConfigMap back once the seed Job is done (plan tests: unknown in a preview, the recorded
value after the Job, the pinned value when pinned)."""

from __future__ import annotations

import datetime
import http.server
import ipaddress
import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

import pulumi
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from pulumi_modelstore.kube import model_digest, model_jobs
from pulumi_modelstore.model import record
from pulumi_modelstore.plan import placeholders
from pulumi_modelstore.plan.engine import UNKNOWN
from tests.conftest import plan
from tests.test_backend_contract import READERS, build
from tests.test_model_bundle import materialize, run_bundled
from tests.tools import StubHandler
from tests.validators.kube_schema import KUBERNETES_MINORS, validator

SHA = "0e9e39f249a16976918f6564b8830bc894c89659"
MODEL = {"source": "hf://meta-llama/Llama-3.1-8B-Instruct", "revision": SHA}
TOKEN = "stub-service-account-token"
NAMESPACE = "llama-loader"
RECORD = model_digest.record_name("llama", SHA)
JOB = "kubernetes:batch/v1:Job"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
ROLE = "kubernetes:rbac.authorization.k8s.io/v1:Role"
BINDING = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"
FORBIDDEN = (
    'configmaps is forbidden: User "system:serviceaccount:llama-loader:default" cannot create '
    'resource "configmaps" in API group "" in the namespace "llama-loader"'
)


# ---- a stub API server over TLS ------------------------------------------------------------


def _certificates(where: Path, host: str = "127.0.0.1") -> tuple[Path, Path, Path]:
    """A CA, and a server certificate it signs for ``host``: (CA file, cert file, key file)."""
    now = datetime.datetime.now(datetime.UTC)

    def make(
        subject: str, issuer: x509.Name | None, signer: Any, key: Any, ca: bool
    ) -> x509.Certificate:
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
        builder = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(issuer or name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if not ca:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(host))]),
                critical=False,
            )
        return builder.sign(signer, hashes.SHA256())

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = make("stub cluster CA", None, ca_key, ca_key, True)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = make("kube-apiserver", ca.subject, ca_key, key, False)
    paths = (where / "ca.crt", where / "server.crt", where / "server.key")
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


class ApiStub(StubHandler):
    """The ConfigMap endpoints of one namespace: create, get, update (with resourceVersion),
    bearer token checked; ``refuse`` answers every request 403 as RBAC does."""

    objects: ClassVar[dict[str, dict[str, Any]]] = {}
    requests: ClassVar[list[tuple[str, str, str]]] = []
    refuse: ClassVar[bool] = False
    lock = threading.Lock()
    collection = f"/api/v1/namespaces/{NAMESPACE}/configmaps"

    def _body(self) -> dict[str, Any]:
        return json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")

    def _status(self, code: int, reason: str, message: str) -> None:
        self.reply_json(
            code, {"kind": "Status", "status": "Failure", "reason": reason, "message": message}
        )

    def _handle(self) -> None:
        body = self._body() if self.command in ("POST", "PUT") else {}
        with self.lock:
            self.requests.append((self.command, self.path, self.headers.get("Authorization", "")))
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                return self._status(401, "Unauthorized", "Unauthorized")
            if self.refuse:
                return self._status(403, "Forbidden", FORBIDDEN)
            name = self.path[len(self.collection) + 1 :]
            if self.command == "POST" and self.path == self.collection:
                name = body["metadata"]["name"]
                if name in self.objects:
                    message = f'configmaps "{name}" already exists'
                    return self._status(409, "AlreadyExists", message)
                body["metadata"]["resourceVersion"] = "1"
                self.objects[name] = body
                return self.reply_json(201, body)
            if not self.path.startswith(f"{self.collection}/") or name not in self.objects:
                return self._status(404, "NotFound", f'configmaps "{name}" not found')
            if self.command == "GET":
                return self.reply_json(200, self.objects[name])
            current = self.objects[name]["metadata"]["resourceVersion"]
            if body["metadata"].get("resourceVersion") != current:
                return self._status(409, "Conflict", "the object has been modified")
            body["metadata"]["resourceVersion"] = str(int(current) + 1)
            self.objects[name] = body
            return self.reply_json(200, body)

    do_GET = do_POST = do_PUT = _handle


@contextmanager
def stub_api(where: Path) -> Iterator[tuple[str, Path]]:
    """:class:`ApiStub` over TLS on a free loopback port, for the duration: yields its https URL
    and a ServiceAccount directory (``where/serviceaccount``) with the token and the CA that
    signed the server's certificate."""
    tls = where / "tls"
    tls.mkdir()
    ca, cert, key = _certificates(tls)
    account = where / "serviceaccount"
    account.mkdir()
    (account / "ca.crt").write_bytes(ca.read_bytes())
    (account / "token").write_text(TOKEN + "\n")
    ApiStub.objects, ApiStub.requests, ApiStub.refuse = {}, [], False
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), ApiStub)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}", account
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    with stub_api(tmp_path) as found:
        yield found


@pytest.fixture(scope="module")
def bundle_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return materialize(tmp_path_factory.mktemp("bundle"))


def seed_recording(
    bundle_root: Path, tmp_path: Path, api: tuple[str, Path], *extra: str
) -> tuple[Any, Path]:
    """The seed program of a small local model into ``tmp_path/store``, recording into the
    stub API's ConfigMap; returns the run and the store."""
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    (src / "config.json").write_text('{"architectures": ["LlamaForCausalLM"]}')
    store = tmp_path / "store"
    store.mkdir(exist_ok=True)
    url, account = api
    run = run_bundled(
        bundle_root,
        "seed",
        *("--source", f"file://{src}", "--revision", "v1", "--dest", str(store)),
        *("--record-configmap", f"{NAMESPACE}/{RECORD}"),
        *("--kube-api", url, "--kube-token-dir", str(account), "--termination-log", ""),
        *extra,
    )
    return run, store


def published_digest(store: Path) -> str:
    manifest = json.loads((store / ".modelstore" / "v1" / "manifest.json").read_text())
    return str(manifest["digest"])


# ---- the seed program records the digest -----------------------------------------------------


def test_the_seed_records_the_manifest_digest_in_its_config_map(bundle_root, tmp_path, api):
    run, store = seed_recording(bundle_root, tmp_path, api)
    assert run.returncode == 0, run.stderr
    digest = published_digest(store)
    assert run.stdout.strip().endswith(f"manifest {digest}, created ConfigMap {NAMESPACE}/{RECORD}")
    assert ApiStub.objects[RECORD]["data"] == {
        record.DIGEST_KEY: digest,
        record.REVISION_KEY: "v1",
        record.SOURCE_KEY: f"file://{tmp_path / 'src'}",
    }
    assert ApiStub.requests == [
        ("POST", f"/api/v1/namespaces/{NAMESPACE}/configmaps", f"Bearer {TOKEN}")
    ]


def test_a_rerun_finds_the_same_digest_and_a_new_publish_updates_it(bundle_root, tmp_path, api):
    seed_recording(bundle_root, tmp_path, api)
    again, store = seed_recording(bundle_root, tmp_path, api)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip().endswith(f"unchanged ConfigMap {NAMESPACE}/{RECORD}")
    # The revision published anew from other files (its manifest removed, so the seed writes
    # another, with another digest): the ConfigMap is updated at the resourceVersion it read.
    (store / ".modelstore" / "v1" / "manifest.json").unlink()
    (tmp_path / "src" / "tokenizer.json").write_text("{}")
    ApiStub.requests.clear()
    anew, _ = seed_recording(bundle_root, tmp_path, api)
    assert anew.returncode == 0, anew.stderr
    assert anew.stdout.strip().endswith(f"updated ConfigMap {NAMESPACE}/{RECORD}")
    assert [r[0] for r in ApiStub.requests] == ["POST", "GET", "PUT"]
    assert ApiStub.objects[RECORD]["data"][record.DIGEST_KEY] == published_digest(store)
    assert ApiStub.objects[RECORD]["metadata"]["resourceVersion"] == "2"


LABELS = {
    "modelstore.pulumi.com/store": "llama",
    "app.kubernetes.io/managed-by": "pulumi-modelstore",
}
LABEL_ARGS = [arg for k, v in LABELS.items() for arg in ("--record-label", f"{k}={v}")]


def test_the_record_carries_the_labels_the_job_gives_it(bundle_root, tmp_path, api):
    """Velero's Schedule selects a store's objects by its label (kube/velero.py): the record
    carries it, created so; a record made before without it gains it on the next run."""
    run, _ = seed_recording(bundle_root, tmp_path, api, *LABEL_ARGS)
    assert run.returncode == 0, run.stderr
    assert ApiStub.objects[RECORD]["metadata"]["labels"] == LABELS
    del ApiStub.objects[RECORD]["metadata"]["labels"]
    again, _ = seed_recording(bundle_root, tmp_path, api, *LABEL_ARGS)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip().endswith(f"updated ConfigMap {NAMESPACE}/{RECORD}")
    assert ApiStub.objects[RECORD]["metadata"]["labels"] == LABELS


def test_a_record_label_without_a_value_is_refused(bundle_root, tmp_path, api):
    run, _ = seed_recording(bundle_root, tmp_path, api, "--record-label", "modelstore")
    assert run.returncode == 2
    assert "--record-label must be <key>=<value>, got 'modelstore'" in run.stderr
    assert ApiStub.objects == {}


def test_a_refusal_fails_the_seed_with_the_api_servers_reason(bundle_root, tmp_path, api):
    ApiStub.refuse = True
    run, _ = seed_recording(bundle_root, tmp_path, api)
    assert run.returncode == 1
    assert run.stderr.strip() == (
        f"FAILED: ConfigMap {NAMESPACE}/{RECORD}: POST /api/v1/namespaces/{NAMESPACE}/configmaps "
        f"answered 403 ({FORBIDDEN})"
    )


def test_no_token_mounted_is_named(bundle_root, tmp_path, api):
    (api[1] / "token").unlink()
    run, _ = seed_recording(bundle_root, tmp_path, api)
    assert run.returncode == 1
    assert run.stderr.strip() == (
        f"FAILED: no ServiceAccount token at {api[1] / 'token'} (No such file or directory): "
        f"is it mounted (automountServiceAccountToken)?"
    )
    assert ApiStub.requests == []


def test_the_api_servers_certificate_is_checked_against_the_accounts_ca(bundle_root, tmp_path, api):
    other = tmp_path / "other"
    other.mkdir()
    (api[1] / "ca.crt").write_bytes(_certificates(other)[0].read_bytes())
    run, _ = seed_recording(bundle_root, tmp_path, api)
    assert run.returncode == 1
    assert run.stderr.startswith(f"FAILED: cannot reach the Kubernetes API at {api[0]}: ")
    assert "CERTIFICATE_VERIFY_FAILED" in run.stderr
    assert ApiStub.objects == {}


@pytest.mark.parametrize(
    ("environ", "url"),
    [
        (
            {"KUBERNETES_SERVICE_HOST": "10.100.0.1", "KUBERNETES_SERVICE_PORT_HTTPS": "443"},
            "https://10.100.0.1:443",
        ),
        (
            {"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "6443"},
            "https://[fd00::1]:6443",
        ),
        ({}, "https://kubernetes.default.svc"),
    ],
)
def test_the_in_cluster_api_is_found_as_the_kubernetes_docs_say(environ, url):
    assert record.in_cluster_api(environ) == url


def test_a_malformed_record_target_is_refused() -> None:
    with pytest.raises(record.RecordError, match="must be <namespace>/<name>, got 'x'"):
        record.Target.parse("x")


# ---- the store: grant, read, output ----------------------------------------------------------


def _store_plan(fill: bool, **model: Any) -> tuple[Any, dict[str, Any]]:
    def program() -> None:
        store = build("local", model={**MODEL, **model})
        pulumi.export("digest", store.model_manifest_sha256)

    p = plan(program, fill=fill)
    return p, {s["urn"].rsplit("::", 1)[-1]: s for s in p.steps}


@pytest.fixture(scope="module")
def previewed() -> tuple[Any, dict[str, Any]]:
    return _store_plan(False)


def test_in_a_preview_the_digest_is_read_after_the_seed_job_and_unknown(previewed):
    p, steps = previewed
    assert p.outputs["digest"] == UNKNOWN
    read = steps[f"llama-manifest-{SHA[:12]}"]
    seed_urn = steps[f"llama-seed-{SHA[:12]}"]["urn"]
    assert read["op"] == "read"
    assert read["newState"]["type"] == CONFIG_MAP
    # The engine skips a read whose id is unknown: nothing is read before the Job ran.
    assert read["newState"]["id"] == UNKNOWN
    assert read["newState"]["dependencies"] == [seed_urn]
    # Each verification Job checks the manifest against what the seed recorded.
    for ns in READERS:
        verify = steps[f"llama-verify-{ns}-{SHA[:12]}"]["newState"]
        args = verify["inputs"]["spec"]["template"]["spec"]["containers"][0]["args"]
        assert args[args.index("--manifest-sha256") + 1] == UNKNOWN
        assert read["urn"] in verify["dependencies"]


def test_the_seed_job_records_with_its_own_account_once_granted(previewed):
    p, steps = previewed
    seed = steps[f"llama-seed-{SHA[:12]}"]["newState"]
    pod = seed["inputs"]["spec"]["template"]["spec"]
    args = pod["containers"][0]["args"]
    assert args[args.index("--record-configmap") + 1] == f"{NAMESPACE}/{RECORD}"
    assert pod["automountServiceAccountToken"] is True
    (role,) = [s for s in p.states() if s["type"] == ROLE]
    (binding,) = [s for s in p.states() if s["type"] == BINDING]
    assert {role["urn"], binding["urn"]} <= set(seed["dependencies"])
    assert role["inputs"]["rules"] == [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]},
        {
            "apiGroups": [""],
            "resources": ["configmaps"],
            "resourceNames": [RECORD],
            "verbs": ["get", "update"],
        },
    ]
    # The local store gives its consumers no account: the seed gets one of its own, never the
    # namespace's default (other pods of a loader namespace the user names may run as that).
    (account,) = [s for s in p.states() if s["type"] == "kubernetes:core/v1:ServiceAccount"]
    assert pod["serviceAccountName"] == account["inputs"]["metadata"]["name"] == "llama-seed"
    assert account["urn"] in seed["dependencies"]
    assert binding["inputs"]["subjects"] == [
        {"kind": "ServiceAccount", "name": "llama-seed", "namespace": NAMESPACE}
    ]
    assert binding["inputs"]["roleRef"]["name"] == role["inputs"]["metadata"]["name"]
    for minor in KUBERNETES_MINORS:
        for kind, state in (("Role", role), ("RoleBinding", binding)):
            validator(minor).validate(
                {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, **state["inputs"]}
            )


def test_an_identity_backend_binds_the_seeds_own_service_account() -> None:
    def program() -> None:
        build("mountpoint-s3", model={"source": "s3://acme-models/llama", "revision": "v1"})

    p = plan(program, fill=True)
    (seed,) = [j for j in p.by_type(JOB) if "-seed-" in j["inputs"]["metadata"]["name"]]
    account = seed["inputs"]["spec"]["template"]["spec"]["serviceAccountName"]
    (binding,) = p.by_type(BINDING)
    assert binding["inputs"]["subjects"] == [
        {"kind": "ServiceAccount", "name": account, "namespace": NAMESPACE}
    ]


def test_after_the_seed_job_the_output_is_the_recorded_digest():
    """The Job done (``--fill-outputs``: its status is the placeholder of a complete Job, as
    ``pulumi up`` sees it after the Job's await), the read runs with the ConfigMap's id and the
    output is the digest it holds (the placeholder of the ConfigMap's data)."""
    p, steps = _store_plan(True)
    read = steps[f"llama-manifest-{SHA[:12]}"]["newState"]
    assert read["id"] == f"{NAMESPACE}/{RECORD}"
    recorded = read["outputs"]["data"][record.DIGEST_KEY]
    assert recorded == f"sha256:{placeholders.digest('manifest', read['id'], length=64)}"
    assert p.outputs["digest"] == recorded
    for ns in READERS:
        verify = steps[f"llama-verify-{ns}-{SHA[:12]}"]["newState"]["inputs"]
        args = verify["spec"]["template"]["spec"]["containers"][0]["args"]
        assert args[args.index("--manifest-sha256") + 1] == recorded


def test_a_pinned_digest_is_the_output_and_nothing_is_recorded() -> None:
    pinned = "sha256:" + "cd" * 32
    p, steps = _store_plan(False, manifest_sha256=pinned)
    assert p.outputs["digest"] == pinned
    assert not [s for s in p.states() if s["type"] in (ROLE, BINDING)]
    assert [s["op"] for s in p.steps if s["newState"]["type"] == CONFIG_MAP] == ["create"] * 3
    pod = steps[f"llama-seed-{SHA[:12]}"]["newState"]["inputs"]["spec"]["template"]["spec"]
    args = pod["containers"][0]["args"]
    # No record, no API call: the Job mounts no ServiceAccount token (kube/model_jobs.py).
    assert "--record-configmap" not in args and pod["automountServiceAccountToken"] is False
    assert args[args.index("--manifest-sha256") + 1] == pinned


def test_the_record_is_named_as_the_jobs_are() -> None:
    assert model_digest.record_name("llama", SHA) == f"llama-manifest-{SHA[:12]}"
    assert model_digest.record_name("x" * 60, "v1") == model_jobs.job_name(
        "x" * 60, "manifest", "v1"
    )
    assert len(model_digest.record_name("x" * 60, "v1")) <= 63
