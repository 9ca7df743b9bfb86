"""The object-store sources download for real, with the standard library only: ``s3://``
through moto's S3 and STS server, ``gs://`` through a Cloud Storage emulator, ``az://``
through Azurite; the S3 request signature checked against botocore's signer. Each server is
started once for this module."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import pytest

from pulumi_modelstore.model import aws, bundle
from pulumi_modelstore.model import seed as seed_mod
from pulumi_modelstore.model.sources import SourceError
from pulumi_modelstore.model.verify import verify
from tests.test_model_bundle import materialize, run_bundled, seed_bundled
from tests.tools import StubHandler, moto_server, serving

MODEL = {
    "config.json": b'{"architectures": ["LlamaForCausalLM"]}',
    "model-00001-of-00002.safetensors": os.urandom(200_000),
    "model-00002-of-00002.safetensors": os.urandom(100_000),
    "sub dir/tokenizer+config.json": b"{}",
}
SHARD = "model-00001-of-00002.safetensors"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- SigV4: the signature botocore computes for the same request --------------------------


@pytest.mark.parametrize(
    ("method", "url", "headers", "token"),
    [
        (
            "GET",
            "http://127.0.0.1:9000/models/?"
            + aws.query_string(
                {
                    "list-type": "2",
                    "prefix": "llama 3/ü+x",
                    "continuation-token": "1/ab+c==",
                    "max-keys": "2",
                }
            ),
            {},
            "IQoJb3JpZ2luX2VjE//session+token=",
        ),
        (
            "GET",
            "https://models.s3.eu-west-1.amazonaws.com/"
            + aws.quote("llama/sub dir/tokenizer+config (1).json", safe="/"),
            {"x-amz-checksum-mode": "ENABLED"},
            None,
        ),
        (
            "HEAD",
            "https://s3.us-east-1.amazonaws.com/my.bucket/" + aws.quote("a/~b/ü.bin", safe="/"),
            {"x-amz-checksum-mode": "ENABLED", "Range": "bytes=0-  9"},
            "token",
        ),
    ],
)
def test_the_sigv4_signature_is_botocores(
    method: str,
    url: str,
    headers: dict[str, str],
    token: str | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from botocore import auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    now = datetime(2026, 12, 1, 13, 5, 9, tzinfo=UTC)
    monkeypatch.setattr(auth, "get_current_datetime", lambda: now.replace(tzinfo=None))
    region = "eu-west-1"
    theirs = AWSRequest(method=method, url=url, headers=dict(headers))
    auth.S3SigV4Auth(
        Credentials("AKIDEXAMPLE", "wJalr/K7MDENG+bPxRfiCY", token), "s3", region
    ).add_auth(theirs)
    ours = aws.sign(
        method,
        url,
        headers,
        aws.Credentials("AKIDEXAMPLE", "wJalr/K7MDENG+bPxRfiCY", token),
        region,
        now,
    )
    assert ours == dict(theirs.headers.items())
    assert ("X-Amz-Security-Token" in ours) == (token is not None)


# --- s3:// through moto's server on the loopback address ---------------------------------

ACCOUNT = "123456789012"  # moto's default account
# moto keeps one backend per process: a bucket of this module's own, apart from
# test_model_programs' "models".
BUCKET = "s3-models"


# What the seed says of the tampered shard in the GCS emulator and Azurite, which both publish
# the MD5 of b"other" for it.
TAMPERED_MD5 = (
    f"md5 mismatch in {SHARD}: the source publishes {hashlib.md5(b'other').hexdigest()}, "
    f"the bytes that arrived hash to {hashlib.md5(MODEL[SHARD]).hexdigest()}"
)


def seeded_by_the_bundle(tmp_path: Path, uri: str, env: dict[str, str]) -> Path:
    """What the seed Job runs: the bundle (python -I -S, no cloud SDK can import there)
    seeding ``uri`` into a new store, which it returns: MODEL's 4 files, each as verify
    hashes it, a name with a space and a plus kept as it is."""
    root = materialize(tmp_path / "bundle")
    store = tmp_path / "store"
    store.mkdir()
    out = seed_bundled(root, uri, store, env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok: seeded v1: 4 files")
    assert verify(store, "v1", sample=0).hashed == 4
    assert (store / "revisions/v1/sub dir/tokenizer+config.json").read_bytes() == b"{}"
    return store


def bundled_seed_failure(tmp_path: Path, uri: str, env: dict[str, str]) -> str:
    """The bundled seed's line on stderr for ``uri``, which must fail."""
    out = seed_bundled(materialize(tmp_path / "bundle"), uri, tmp_path, env)
    assert out.returncode == 1
    return out.stderr


def seed_refusal(source: Any, tmp_path: Path) -> str:
    """The seed's refusal of ``source``, which must publish nothing."""
    with pytest.raises(seed_mod.SeedError) as caught:
        seed_mod.seed(source, tmp_path)
    assert not (tmp_path / "revisions").exists()
    return str(caught.value)


def listing_failure(source: Any) -> str:
    """The one line ``source`` fails with when listing its files."""
    with pytest.raises(SourceError) as caught:
        source.files()
    return str(caught.value)


@pytest.fixture(scope="module")
def moto() -> Iterator[dict[str, str]]:
    """moto's threaded server with a bucket ``models`` holding MODEL under ``llama/`` (the
    shards with a SHA-256 checksum); yields the environment a seed Job would get."""
    with moto_server() as endpoint:
        import boto3

        env = {
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_REGION": "us-east-1",
        }
        s3 = boto3.client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            region_name="us-east-1",
        )
        s3.create_bucket(Bucket=BUCKET)
        for name, data in MODEL.items():
            extra = {"ChecksumAlgorithm": "SHA256"} if name.endswith(".safetensors") else {}
            s3.put_object(Bucket=BUCKET, Key=f"llama/{name}", Body=data, **extra)
            s3.put_object(Bucket=BUCKET, Key=f"tampered/{name}", Body=data, **extra)
        yield env


def s3_source(env: dict[str, str], prefix: str = "llama") -> Any:
    from pulumi_modelstore.model.sources import S3Source

    return S3Source(f"s3://{BUCKET}/{prefix}", "v1", BUCKET, prefix, env=env)


def test_s3_seeds_from_the_bundle_with_the_standard_library_only(
    moto: dict[str, str], tmp_path: Path
) -> None:
    seeded_by_the_bundle(tmp_path, "s3://s3-models/llama", moto)


def test_s3_listing_follows_continuation_tokens(moto: dict[str, str]) -> None:
    source = s3_source(moto)
    source.client.page_size = 1  # max-keys=1: one page per object
    pages: list[str] = []
    request = source.client.request

    def spy(method: str, bucket: str, key: str = "", query: Any = None, **kw: Any) -> Any:
        if query and query.get("list-type"):
            pages.append(query.get("continuation-token", ""))
        return request(method, bucket, key, query, **kw)

    source.client.request = spy
    listed = {f.path: f.sha256 for f in source.files()}
    assert listed == {
        name: sha256(data) if name.endswith(".safetensors") else None
        for name, data in MODEL.items()
    }
    assert len(pages) == 4 and pages[0] == "" and all(pages[1:])


def test_s3_a_wrong_published_checksum_is_refused(moto: dict[str, str], tmp_path: Path) -> None:
    from moto.backends import get_backend

    key = get_backend("s3")[ACCOUNT]["global"].buckets[BUCKET].keys[f"tampered/{SHARD}"]
    lie = hashlib.sha256(b"other bytes").digest()
    key.checksum_value = base64.b64encode(lie).decode()
    assert seed_refusal(s3_source(moto, "tampered"), tmp_path) == (
        f"sha256 mismatch in {SHARD}: the source publishes {lie.hex()}, the bytes that "
        f"arrived hash to {sha256(MODEL[SHARD])}"
    )


def test_s3_a_wrong_checksum_sent_with_the_object_is_refused(
    moto: dict[str, str], tmp_path: Path
) -> None:
    # The listing published nothing (say the object was replaced after it): the checksum S3
    # sends with GetObject is checked.
    from moto.backends import get_backend

    key = get_backend("s3")[ACCOUNT]["global"].buckets[BUCKET].keys[f"tampered/{SHARD}"]
    lie = hashlib.sha256(b"x").digest()
    key.checksum_value = base64.b64encode(lie).decode()
    source = s3_source(moto, "tampered")
    files = source.files
    source.files = lambda: [type(f)(f.path, f.size) for f in files()]
    with pytest.raises(
        seed_mod.SeedError, match=f"^sha256 mismatch in {SHARD}: the source publishes {lie.hex()},"
    ):
        seed_mod.seed(source, tmp_path)


def test_s3_with_irsa_assumes_the_role_through_sts(moto: dict[str, str], tmp_path: Path):
    from moto.backends import get_backend

    token = tmp_path / "token"
    token.write_text(
        "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6bG9hZGVyIn0.c2ln\n"
    )
    role = f"arn:aws:iam::{ACCOUNT}:role/modelstore-seed"
    env = {
        "AWS_ENDPOINT_URL": moto["AWS_ENDPOINT_URL"],
        "AWS_REGION": "us-east-1",
        "AWS_ROLE_ARN": role,
        "AWS_WEB_IDENTITY_TOKEN_FILE": str(token),
        "AWS_ROLE_SESSION_NAME": "seed-irsa-test",
    }
    source = s3_source(env)
    credentials = source.client.credentials.get()
    assert credentials.source == f"IRSA role {role}"
    assert credentials.token and credentials.expires is not None
    sessions = [
        r.session_name
        for r in get_backend("sts")[ACCOUNT]["global"].assumed_roles
        if r.role_arn == role
    ]
    assert sessions == ["seed-irsa-test"]
    store = tmp_path / "store"
    store.mkdir()
    root = materialize(tmp_path / "bundle")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    out = subprocess.run(
        [
            sys.executable,
            *bundle.command("seed", str(root))[1:],
            "--source",
            "s3://s3-models/llama",
            "--revision",
            "v1",
            "--dest",
            str(store),
            "--termination-log",
            "",
        ],
        capture_output=True,
        text=True,
        env={**clean, **env},
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert verify(store, "v1", sample=0).hashed == 4


class ContainerCredentials(StubHandler):
    """EKS Pod Identity's agent endpoint: credentials for the pod's token, nothing without."""

    token = "pod-identity-token"
    answered: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.answered.append(self.headers.get("Authorization", ""))
        if self.headers.get("Authorization") != self.token:
            self.send_error(401)
            return
        self.reply_json(
            200,
            {
                "AccessKeyId": "ASIAPODIDENTITY",
                "SecretAccessKey": "secret",
                "Token": "session",
                "Expiration": "2099-01-01T00:00:00Z",
            },
        )


def test_s3_with_eks_pod_identity_reads_the_agent_with_the_pod_token(
    moto: dict[str, str], tmp_path: Path
) -> None:
    with serving(ContainerCredentials) as port:
        token = tmp_path / "eks-pod-identity-token"
        token.write_text(ContainerCredentials.token)
        env = {
            "AWS_ENDPOINT_URL": moto["AWS_ENDPOINT_URL"],
            "AWS_CONTAINER_CREDENTIALS_FULL_URI": (f"http://127.0.0.1:{port}/v1/credentials"),
            "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE": str(token),
        }
        source = s3_source(env)
        assert sorted(f.path for f in source.files()) == sorted(MODEL)
        credentials = source.client.credentials.get()
        assert (credentials.access_key, credentials.token, credentials.source) == (
            "ASIAPODIDENTITY",
            "session",
            "EKS Pod Identity",
        )
        assert ContainerCredentials.answered == [ContainerCredentials.token]  # fetched once


def test_s3_an_unreachable_endpoint_fails_in_one_line(tmp_path: Path) -> None:
    env = {
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
        "AWS_ACCESS_KEY_ID": "a",
        "AWS_SECRET_ACCESS_KEY": "b",
    }
    assert bundled_seed_failure(tmp_path, "s3://s3-models/llama", env) == (
        "FAILED: source s3://s3-models/llama: cannot reach http://127.0.0.1:9: [Errno 111] "
        "Connection refused\n"
    )


def test_s3_without_credentials_says_which_it_looked_for() -> None:
    source = s3_source({"AWS_ENDPOINT_URL": "http://127.0.0.1:9"})
    assert listing_failure(source) == (
        "source s3://s3-models/llama: no AWS credentials: set AWS_ACCESS_KEY_ID and "
        "AWS_SECRET_ACCESS_KEY, or run the pod with IRSA (AWS_ROLE_ARN and "
        "AWS_WEB_IDENTITY_TOKEN_FILE) or EKS Pod Identity (AWS_CONTAINER_CREDENTIALS_FULL_URI)"
    )


# --- gs:// through gcp-storage-emulator (PyPI) on the loopback address -------------------


def upload_gcs(base: str, bucket: str, name: str, data: bytes) -> None:
    """An object uploaded through the JSON API's media upload."""
    import urllib.request

    quoted = urllib.parse.quote(name, safe="")
    request = urllib.request.Request(
        f"{base}/upload/storage/v1/b/{bucket}/o?uploadType=media&name={quoted}",
        data=data,
        method="POST",
        headers={"Content-Type": "application/octet-stream"},
    )
    urllib.request.urlopen(request).close()


@pytest.fixture(scope="module")
def gcs_emulator() -> Iterator[str]:
    """The emulator with bucket ``models``: MODEL under ``llama/``, ``tampered/`` (one shard's
    md5Hash replaced) and ``composite/`` (one shard without md5Hash, as Cloud Storage keeps a
    composite object); yields its host:port (STORAGE_EMULATOR_HOST without a scheme)."""
    try:
        from gcp_storage_emulator import server as emulator
    except ImportError as missing:  # PyPI gcp-storage-emulator, a test dependency
        if os.environ.get("CI") == "true":
            pytest.fail(f"gcp-storage-emulator is missing ({missing}); CI=true: it must run")
        pytest.skip(f"gcp-storage-emulator is missing: {missing}")
    server = emulator.create_server("127.0.0.1", 0, in_memory=True, default_bucket="models")
    server.start()
    host = f"127.0.0.1:{server._api._httpd.server_address[1]}"
    try:
        for prefix in ("llama", "tampered", "composite", "composite-tampered"):
            for name, data in MODEL.items():
                upload_gcs(f"http://{host}", "models", f"{prefix}/{name}", data)
        objects = server._storage.objects["models"]
        lie = base64.b64encode(hashlib.md5(b"other").digest()).decode()
        objects[f"tampered/{SHARD}"]["md5Hash"] = lie
        objects[f"composite/{SHARD}"]["md5Hash"] = None  # the emulator needs the key
        # A composite object whose crc32c is not its bytes' (issue 24, point 15).
        objects[f"composite-tampered/{SHARD}"]["md5Hash"] = None
        objects[f"composite-tampered/{SHARD}"]["crc32c"] = base64.b64encode(b"\0\0\0\1").decode()
        yield host
    finally:
        server.stop()


def test_gs_seeds_from_the_bundle_checking_md5(gcs_emulator: str, tmp_path: Path) -> None:
    seeded_by_the_bundle(tmp_path, "gs://models/llama", {"STORAGE_EMULATOR_HOST": gcs_emulator})


def gcs_source(host: str, prefix: str = "llama", **kw: Any) -> Any:
    from pulumi_modelstore.model.sources import GcsSource

    env = kw.pop("env", {"STORAGE_EMULATOR_HOST": host})
    return GcsSource(f"gs://models/{prefix}", "v1", "models", prefix, env=env, **kw)


def test_gs_lists_md5_and_a_composite_object_has_none(gcs_emulator: str) -> None:
    listed = {f.path: f.md5 for f in gcs_source(gcs_emulator).files()}
    assert listed == {name: hashlib.md5(data).hexdigest() for name, data in MODEL.items()}
    composite = {f.path: f.md5 for f in gcs_source(gcs_emulator, "composite").files()}
    assert composite[SHARD] is None


def test_gs_a_wrong_md5_is_refused(gcs_emulator: str, tmp_path: Path) -> None:
    assert seed_refusal(gcs_source(gcs_emulator, "tampered"), tmp_path) == TAMPERED_MD5


def test_gs_a_composite_object_is_checked_by_its_crc32c(gcs_emulator: str, tmp_path: Path):
    from pulumi_modelstore.model import crc

    listed = {f.path: f for f in gcs_source(gcs_emulator, "composite").files()}
    running = crc.Crc(crc.CRC32C)
    running.update(MODEL[SHARD])
    assert (listed[SHARD].md5, listed[SHARD].crc32c) == (None, running.hexdigest())
    assert seed_refusal(gcs_source(gcs_emulator, "composite-tampered"), tmp_path) == (
        f"crc32c mismatch in {SHARD}: the source publishes 00000001, the bytes that arrived "
        f"give {running.hexdigest()}"
    )


def test_gs_a_composite_object_is_seeded_on_its_size(gcs_emulator: str, tmp_path: Path):
    result = seed_mod.seed(gcs_source(gcs_emulator, "composite"), tmp_path)
    assert result.files == 4
    manifest = json.loads((tmp_path / ".modelstore/v1/manifest.json").read_text())
    assert {f["path"]: f["sha256"] for f in manifest["files"]}[SHARD] == sha256(MODEL[SHARD])


def test_gs_publish_source_writes_the_manifest_into_the_source_for_the_populator(
    gcs_emulator: str, tmp_path: Path
) -> None:
    """Hyperdisk ML's manifest Job (``source_manifest``, run from the bundle): every
    object hashed and its md5 checked, the manifest written into the source under
    ``.modelstore/<revision>/``; the folder then copied whole, as the volume populator copies
    it to the disk, verifies as readers see it (files at the root, the manifest beside them);
    a rerun writes nothing."""
    for name, data in MODEL.items():
        upload_gcs(f"http://{gcs_emulator}", "models", f"hdml/{name}", data)
    root = materialize(tmp_path / "bundle")
    args = ["--source", "gs://models/hdml", "--revision", "v1"]
    env = {"STORAGE_EMULATOR_HOST": gcs_emulator}
    out = run_bundled(root, "source_manifest", *args, "--termination-log", "", env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok: seeded v1: 4 files")
    disk = tmp_path / "disk"
    source = gcs_source(gcs_emulator, "hdml")
    copied = source.files()
    assert sorted(f.path for f in copied) == sorted([*MODEL, ".modelstore/v1/manifest.json"])
    for file in copied:
        (disk / file.path).parent.mkdir(parents=True, exist_ok=True)
        with source.open(file) as stream:
            (disk / file.path).write_bytes(stream.read())
    manifest = disk / ".modelstore/v1/manifest.json"
    assert verify(None, "v1", sample=0, files_dir=disk, manifest_path=manifest).hashed == 4
    again = run_bundled(root, "source_manifest", *args, "--termination-log", "", env=env)
    digest = json.loads(manifest.read_text())["digest"]
    assert again.stdout == (
        f"ok: already seeded, nothing to do: v1: 4 files, 0.0 GiB, manifest {digest}\n"
    )
    pinned = run_bundled(
        root,
        "source_manifest",
        *args,
        "--manifest-sha256",
        "sha256:" + "0" * 64,
        "--termination-log",
        "",
        env=env,
    )
    assert pinned.returncode == 1
    assert pinned.stderr == (
        f"FAILED: revision v1 must be published with the pinned manifest sha256:{'0' * 64}, "
        f"found {digest} (unpin manifest_sha256 to publish it anew)\n"
    )


def test_gs_publish_source_refuses_a_wrong_md5_and_writes_no_manifest(gcs_emulator: str):
    from pulumi_modelstore.model.source_manifest import publish_to_source

    with pytest.raises(seed_mod.SeedError) as caught:
        publish_to_source(gcs_source(gcs_emulator, "tampered"))
    assert str(caught.value) == TAMPERED_MD5
    listed = [f.path for f in gcs_source(gcs_emulator, "tampered").files()]
    assert not [p for p in listed if p.startswith(".modelstore/")]


class Stub(StubHandler):
    """A stub answering GETs from ``routes`` (path with query -> (status, JSON)); records
    each request's path and headers."""

    routes: ClassVar[dict[str, tuple[int, Any]]] = {}
    seen: ClassVar[list[tuple[str, dict[str, str]]]] = []

    def do_GET(self) -> None:
        self.seen.append((self.path, dict(self.headers.items())))
        self.reply_json(*self.routes.get(self.path, (404, {"error": {"message": "no route"}})))


@pytest.fixture(scope="module")
def stub() -> Iterator[str]:
    with serving(Stub) as port:
        yield f"127.0.0.1:{port}"


def test_gs_listing_follows_page_tokens(stub: str) -> None:
    # The emulator answers every listing in one page (it reads no maxResults or pageToken),
    # so the paging is checked against a stub of the list endpoint.
    item = lambda name: {"name": f"llama/{name}", "size": "1"}  # noqa: E731
    Stub.routes = {
        "/storage/v1/b/models/o?prefix=llama%2F": (
            200,
            {"items": [item("a")], "nextPageToken": "t 1"},
        ),
        "/storage/v1/b/models/o?prefix=llama%2F&pageToken=t+1": (200, {"items": [item("b")]}),
    }
    source = gcs_source(stub)
    assert [f.path for f in source.files()] == ["a", "b"]


def test_gs_asks_the_metadata_server_for_the_pods_token(gcs_emulator: str, stub: str) -> None:
    Stub.routes = {
        "/computeMetadata/v1/instance/service-accounts/default/token": (
            200,
            {"access_token": "ya29.pod-token", "expires_in": 3599, "token_type": "Bearer"},
        )
    }
    Stub.seen = []
    source = gcs_source(
        gcs_emulator, env={"GCE_METADATA_HOST": stub}, endpoint=f"http://{gcs_emulator}"
    )
    assert sorted(f.path for f in source.files()) == sorted(MODEL)
    with source.open(source.files()[0]) as stream:
        assert stream.read() == MODEL["config.json"]
    assert [headers.get("Metadata-Flavor") for _, headers in Stub.seen] == ["Google"]  # cached
    assert source.client.token() == "ya29.pod-token"


def test_gs_an_unreachable_metadata_server_fails_in_one_line(tmp_path: Path) -> None:
    assert bundled_seed_failure(
        tmp_path, "gs://models/llama", {"GCE_METADATA_HOST": "127.0.0.1:9"}
    ) == (
        "FAILED: source gs://models/llama: cannot reach http://127.0.0.1:9: [Errno 111] "
        "Connection refused\n"
    )


# --- az:// through Azurite (npm) over HTTPS, with a bearer token --------------------------

TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
CLIENT_ID = "11111111-2222-3333-4444-555555555555"


def fake_entra_token() -> str:
    """A token shaped as Microsoft Entra issues them for Azure Storage: Azurite's OAuth mode
    checks its issuer, audience and lifetime (not a signature, which no emulator could)."""
    now = int(datetime.now(UTC).timestamp())
    claims = {
        "aud": "https://storage.azure.com",
        "iss": f"https://sts.windows.net/{TENANT}/",
        "iat": now - 60,
        "nbf": now - 60,
        "exp": now + 3600,
        "appid": CLIENT_ID,
        "tid": TENANT,
    }
    part = lambda d: base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()  # noqa: E731
    return f"{part({'alg': 'RS256', 'typ': 'JWT'})}.{part(claims)}.c2lnbmF0dXJl"


class EntraStub(StubHandler):
    """Microsoft Entra's token endpoint for one tenant: the client credentials grant with a
    client assertion; records each request's form."""

    forms: ClassVar[list[dict[str, str]]] = []

    def do_POST(self) -> None:

        length = int(self.headers["Content-Length"])
        form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
        self.forms.append(form)
        if self.path != f"/{TENANT}/oauth2/v2.0/token":
            status, payload = 404, {"error": "not_found"}
        elif form.get("client_assertion") != "projected-service-account-token":
            status, payload = (
                401,
                {
                    "error": "invalid_client",
                    "error_description": "AADSTS700213: No matching federated identity "
                    "record found",
                },
            )
        else:
            status, payload = (
                200,
                {
                    "token_type": "Bearer",
                    "expires_in": 3599,
                    "access_token": fake_entra_token(),
                },
            )
        self.reply_json(status, payload)


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Azurite's blob service over HTTPS with OAuth on (it takes bearer tokens only over
    HTTPS), a self-signed certificate for 127.0.0.1 trusted through SSL_CERT_FILE, account
    ``devstoreaccount1`` with container ``models`` holding MODEL under ``llama/`` and
    ``tampered/`` (one shard's Content-MD5 set to another's); and the Entra stub. Yields the
    environment of a seed pod with workload identity."""
    import ssl
    import urllib.request

    from tests.tools import azurite_blob, node

    script = azurite_blob()
    where = tmp_path_factory.mktemp("azurite")
    cert, key = where / "cert.pem", where / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",  # a P-256 key: made at once, where an RSA key takes a tenth of a second
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    port = free_port()
    process = subprocess.Popen(
        [
            node(),
            str(script),
            "--blobHost",
            "127.0.0.1",
            "--blobPort",
            str(port),
            "--oauth",
            "basic",
            "--cert",
            str(cert),
            "--key",
            str(key),
            "--inMemoryPersistence",
            "--disableTelemetry",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=where,  # what Azurite writes besides its in-memory data lands here
    )
    with serving(EntraStub) as entra_port:
        saved = os.environ.get("SSL_CERT_FILE")
        os.environ["SSL_CERT_FILE"] = str(cert)
        try:
            assert process.stdout is not None
            for line in process.stdout:  # blocks until Azurite says it listens (or exits)
                if "successfully listens" in line:
                    break
            else:
                pytest.fail(f"azurite exited with {process.wait()}")
            account = f"https://127.0.0.1:{port}/devstoreaccount1"
            context = ssl.create_default_context(cafile=str(cert))
            headers = {
                "Authorization": f"Bearer {fake_entra_token()}",
                "x-ms-version": "2024-11-04",
            }

            def put(path: str, data: bytes = b"", **extra: str) -> None:
                request = urllib.request.Request(
                    f"{account}/{path}", data=data, method="PUT", headers={**headers, **extra}
                )
                urllib.request.urlopen(request, context=context).close()

            put("models?restype=container")
            for prefix in ("llama", "tampered"):
                for name, data in MODEL.items():
                    quoted = urllib.parse.quote(f"{prefix}/{name}", safe="/")
                    put(f"models/{quoted}", data, **{"x-ms-blob-type": "BlockBlob"})
            lie = base64.b64encode(hashlib.md5(b"other").digest()).decode()
            put(f"models/tampered/{SHARD}?comp=properties", **{"x-ms-blob-content-md5": lie})
            # ``hns/``: MODEL as an account with a hierarchical namespace lists it through the
            # Blob API, each directory a zero-length blob with metadata hdi_isfolder=true.
            for name, data in MODEL.items():
                quoted = urllib.parse.quote(f"hns/{name}", safe="/")
                put(f"models/{quoted}", data, **{"x-ms-blob-type": "BlockBlob"})
            for folder in ("hns", "hns/sub dir"):
                quoted = urllib.parse.quote(folder, safe="/")
                stub = {"x-ms-blob-type": "BlockBlob", "x-ms-meta-hdi_isfolder": "true"}
                put(f"models/{quoted}", b"", **stub)
            token_file = where / "azure-identity-token"
            token_file.write_text("projected-service-account-token\n")
            yield {
                "MODELSTORE_AZURE_BLOB_ENDPOINT": account,
                "AZURE_CLIENT_ID": CLIENT_ID,
                "AZURE_TENANT_ID": TENANT,
                "AZURE_FEDERATED_TOKEN_FILE": str(token_file),
                "AZURE_AUTHORITY_HOST": f"http://127.0.0.1:{entra_port}/",
                "SSL_CERT_FILE": str(cert),
            }
        finally:
            if saved is None:
                os.environ.pop("SSL_CERT_FILE", None)
            else:
                os.environ["SSL_CERT_FILE"] = saved
            process.terminate()
            process.wait(timeout=30)


def blob_source(env: dict[str, str], prefix: str = "llama") -> Any:
    from pulumi_modelstore.model.sources import AzureBlobSource

    uri = f"az://devstoreaccount1/models/{prefix}"
    return AzureBlobSource(uri, "v1", "devstoreaccount1", "models", prefix, env=env)


def test_az_seeds_from_the_bundle_with_workload_identity(
    azurite: dict[str, str], tmp_path: Path
) -> None:
    EntraStub.forms = []
    seeded_by_the_bundle(tmp_path, "az://devstoreaccount1/models/llama", azurite)
    # One token for the whole seed: the client credentials grant with the pod's token.
    assert EntraStub.forms == [
        {
            "client_id": CLIENT_ID,
            "scope": "https://storage.azure.com/.default",
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            "client_assertion": "projected-service-account-token",
            "grant_type": "client_credentials",
        }
    ]


def test_az_lists_content_md5_page_by_page(azurite: dict[str, str]) -> None:
    source = blob_source(azurite)
    source.client.page_size = 1
    listed = {f.path: f.md5 for f in source.files()}
    assert listed == {name: hashlib.md5(data).hexdigest() for name, data in MODEL.items()}


def test_az_hierarchical_namespace_directories_are_not_files(
    azurite: dict[str, str], tmp_path: Path
) -> None:
    """Issue 24, point 15: "sub dir" listed as a zero-length blob beside "sub dir/..." would
    be written as a file, and its files could then not be written under it."""
    listed = sorted(f.path for f in blob_source(azurite, "hns").files())
    assert listed == sorted(MODEL)
    seeded_by_the_bundle(tmp_path, "az://devstoreaccount1/models/hns", azurite)


def test_az_a_wrong_content_md5_is_refused(azurite: dict[str, str], tmp_path: Path) -> None:
    assert seed_refusal(blob_source(azurite, "tampered"), tmp_path) == TAMPERED_MD5


def test_az_a_refused_federated_token_fails_in_one_line(
    azurite: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "token").write_text("someone-elses-token")
    source = blob_source({**azurite, "AZURE_FEDERATED_TOKEN_FILE": str(tmp_path / "token")})
    assert listing_failure(source) == (
        f"source az://devstoreaccount1/models/llama: POST {azurite['AZURE_AUTHORITY_HOST']}"
        f"{TENANT}/oauth2/v2.0/token answered 401 Unauthorized (AADSTS700213: No matching "
        "federated identity record found)"
    )


def test_az_without_workload_identity_names_the_missing_variables() -> None:
    source = blob_source({"AZURE_CLIENT_ID": CLIENT_ID})
    assert listing_failure(source) == (
        "source az://devstoreaccount1/models/llama: no Azure workload identity: "
        "AZURE_TENANT_ID, AZURE_FEDERATED_TOKEN_FILE not set (the AKS workload identity "
        "webhook sets them in a pod whose service account is annotated "
        "azure.workload.identity/client-id and that is labelled azure.workload.identity/use: "
        '"true")'
    )


def test_az_an_unreachable_authority_fails_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("t")
    env = {
        "AZURE_CLIENT_ID": CLIENT_ID,
        "AZURE_TENANT_ID": TENANT,
        "AZURE_FEDERATED_TOKEN_FILE": str(tmp_path / "token"),
        "AZURE_AUTHORITY_HOST": "http://127.0.0.1:9/",
    }
    assert bundled_seed_failure(tmp_path, "az://acct/models/llama", env) == (
        "FAILED: source az://acct/models/llama: cannot reach http://127.0.0.1:9: [Errno 111] "
        "Connection refused\n"
    )
