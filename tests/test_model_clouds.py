"""The object-store sources download for real, with the standard library only: ``s3://``
through moto's S3 and STS server, ``gs://`` through a Cloud Storage emulator, ``az://``
through Azurite; the S3 request signature checked against botocore's signer. Each server is
started once for this module."""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import pytest

from pulumi_modelstore.model import aws, bundle
from pulumi_modelstore.model import seed as seed_mod
from pulumi_modelstore.model.sources import SourceError
from pulumi_modelstore.model.verify import verify
from tests.test_model_bundle import materialize, run_bundled

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


@pytest.fixture(scope="module")
def moto() -> Iterator[dict[str, str]]:
    """moto's threaded server with a bucket ``models`` holding MODEL under ``llama/`` (the
    shards with a SHA-256 checksum); yields the environment a seed Job would get."""
    try:
        from moto.server import ThreadedMotoServer
    except ImportError as missing:  # moto's server needs flask and flask-cors (moto[server])
        if os.environ.get("CI") == "true":
            pytest.fail(f"moto[server] is missing ({missing}); CI=true: every real run must run")
        pytest.skip(f"moto[server] is missing: {missing}")
    import boto3

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    env = {
        "AWS_ENDPOINT_URL": f"http://{host}:{port}",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
    }
    s3 = boto3.client(
        "s3",
        endpoint_url=env["AWS_ENDPOINT_URL"],
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )
    s3.create_bucket(Bucket="models")
    for name, data in MODEL.items():
        extra = {"ChecksumAlgorithm": "SHA256"} if name.endswith(".safetensors") else {}
        s3.put_object(Bucket="models", Key=f"llama/{name}", Body=data, **extra)
        s3.put_object(Bucket="models", Key=f"tampered/{name}", Body=data, **extra)
    try:
        yield env
    finally:
        server.stop()


def s3_source(env: dict[str, str], prefix: str = "llama") -> Any:
    from pulumi_modelstore.model.sources import S3Source

    return S3Source(f"s3://models/{prefix}", "v1", "models", prefix, env=env)


def test_s3_seeds_from_the_bundle_with_the_standard_library_only(
    moto: dict[str, str], tmp_path: Path
) -> None:
    # What the seed Job runs: the bundle, python -I -S (boto3 cannot import there).
    root = materialize(tmp_path / "bundle")
    store = tmp_path / "store"
    store.mkdir()
    out = run_bundled(
        root,
        "seed",
        "--source",
        "s3://models/llama",
        "--revision",
        "v1",
        "--dest",
        str(store),
        "--termination-log",
        "",
        env=moto,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok: seeded v1: 4 files")
    result = verify(store, "v1", sample=0)
    assert result.hashed == 4
    assert (store / "revisions/v1/sub dir/tokenizer+config.json").read_bytes() == b"{}"


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

    key = get_backend("s3")[ACCOUNT]["global"].buckets["models"].keys[f"tampered/{SHARD}"]
    lie = hashlib.sha256(b"other bytes").digest()
    key.checksum_value = base64.b64encode(lie).decode()
    with pytest.raises(seed_mod.SeedError) as caught:
        seed_mod.seed(s3_source(moto, "tampered"), tmp_path)
    assert str(caught.value) == (
        f"sha256 mismatch in {SHARD}: the source publishes {lie.hex()}, the bytes that "
        f"arrived hash to {sha256(MODEL[SHARD])}"
    )
    assert not (tmp_path / "revisions").exists()


def test_s3_a_wrong_checksum_sent_with_the_object_is_refused(
    moto: dict[str, str], tmp_path: Path
) -> None:
    # The listing published nothing (say the object was replaced after it): the checksum S3
    # sends with GetObject is checked.
    source = s3_source(moto)
    files = source.files
    source.files = lambda: [type(f)(f.path, f.size) for f in files()]
    lie = hashlib.sha256(b"x").digest()
    get = source.client.get

    def lying_get(bucket: str, key: str) -> Any:
        response = get(bucket, key)
        if key.endswith(SHARD):
            del response.headers["x-amz-checksum-sha256"]
            response.headers["x-amz-checksum-sha256"] = base64.b64encode(lie).decode()
        return response

    source.client.get = lying_get
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
            "s3://models/llama",
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


class ContainerCredentials(http.server.BaseHTTPRequestHandler):
    """EKS Pod Identity's agent endpoint: credentials for the pod's token, nothing without."""

    token = "pod-identity-token"
    answered: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.answered.append(self.headers.get("Authorization", ""))
        if self.headers.get("Authorization") != self.token:
            self.send_error(401)
            return
        body = json.dumps(
            {
                "AccessKeyId": "ASIAPODIDENTITY",
                "SecretAccessKey": "secret",
                "Token": "session",
                "Expiration": "2099-01-01T00:00:00Z",
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_s3_with_eks_pod_identity_reads_the_agent_with_the_pod_token(
    moto: dict[str, str], tmp_path: Path
) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), ContainerCredentials)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        token = tmp_path / "eks-pod-identity-token"
        token.write_text(ContainerCredentials.token)
        env = {
            "AWS_ENDPOINT_URL": moto["AWS_ENDPOINT_URL"],
            "AWS_CONTAINER_CREDENTIALS_FULL_URI": (
                f"http://127.0.0.1:{server.server_address[1]}/v1/credentials"
            ),
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
    finally:
        server.shutdown()
        server.server_close()


def test_s3_an_unreachable_endpoint_fails_in_one_line(tmp_path: Path) -> None:
    root = materialize(tmp_path / "bundle")
    env = {
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
        "AWS_ACCESS_KEY_ID": "a",
        "AWS_SECRET_ACCESS_KEY": "b",
    }
    out = run_bundled(
        root,
        "seed",
        "--source",
        "s3://models/llama",
        "--revision",
        "v1",
        "--dest",
        str(tmp_path),
        "--termination-log",
        "",
        env=env,
    )
    assert out.returncode == 1
    assert out.stderr == (
        "FAILED: source s3://models/llama: cannot reach http://127.0.0.1:9: [Errno 111] "
        "Connection refused\n"
    )


def test_s3_without_credentials_says_which_it_looked_for() -> None:
    source = s3_source({"AWS_ENDPOINT_URL": "http://127.0.0.1:9"})
    with pytest.raises(SourceError) as caught:
        source.files()
    assert str(caught.value) == (
        "source s3://models/llama: no AWS credentials: set AWS_ACCESS_KEY_ID and "
        "AWS_SECRET_ACCESS_KEY, or run the pod with IRSA (AWS_ROLE_ARN and "
        "AWS_WEB_IDENTITY_TOKEN_FILE) or EKS Pod Identity (AWS_CONTAINER_CREDENTIALS_FULL_URI)"
    )
