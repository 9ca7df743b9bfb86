"""The model's Kubernetes side: the programs' ConfigMap, the seed Job, the verification Jobs and
the init container that gates a reader's pod on the published revision.

How ``pulumi up`` waits for a Job (pulumi/pulumi-kubernetes at commit 94977969,
``provider/pkg/await/``): ``awaiters.go`` maps ``batch/v1/Job`` to its ``jobAwaiter``
(lines 154-161, 195); ``job.go`` (lines 49-55) takes a Job as ready once ``status.startTime``
is set and its ``Complete`` condition is True, and fails at once on a ``Failed`` condition with
reason ``BackoffLimitExceeded`` or ``DeadlineExceeded`` (``checker/job/check.go`` lines
94-100). Meanwhile it watches the Job's pods (``job.go`` lines 111-129) and carries their
errors into the failure, among them a terminated container's ``[<reason>] <termination
message>`` (``checker/pod/check.go`` lines 143-157): the programs' one-line termination
message is what a failed ``pulumi up`` shows. The wait lasts 10 minutes by default
(``job.go`` line 79, ``await.go`` lines 306-309), else the resource's ``customTimeouts`` or a
``pulumi.com/timeoutSeconds`` annotation (``metadata/overrides.go`` lines 53-66);
``pulumi.com/skipAwait: "true"`` skips the wait altogether (``await.go`` line 406,
``overrides.go`` line 40), so it is never set here. Preview never waits (``await.go`` line
302). A change to ``spec.template`` replaces a Job (``provider/diff.go`` lines 178-186):
the Jobs are named after the revision, so a new revision is a new Job, not an edit.

A failed Job stays failed, and without more the next ``pulumi up`` awaits that same object
again and fails again. Every Job here carries ``pulumi.com/replaceUnready: "true"``
(:data:`REPLACE_UNREADY`; ``metadata/annotations.go`` line 36, ``metadata/overrides.go``
lines 44-47): on every preview and up, the provider's ``Diff`` reads the live Job and, when the
job checker does not find it complete, plans a replacement (``provider/provider.go`` lines
1622-1643), delete-before-replace since the name stays the same (lines 1645-1658). So the next
``pulumi up`` after a failure deletes the failed Job (its pods with it) and runs a new one; a
complete Job is left alone. A Job still running when an up was interrupted is not complete
either: the next up starts it over.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..labels import REVISION_LABEL, ROLE_LABEL
from ..model.bundle import bundle_digest, command, program_files
from ..model.transfer import BUFFERS, PART

PROGRAMS_PATH = "/opt/modelstore/programs"
PROGRAMS_VOLUME = "modelstore-programs"
TMP_VOLUME = "modelstore-tmp"
TOKEN_VOLUME = "modelstore-token"
TOKEN_DIR = "/var/run/secrets/modelstore"
STORE_ROOT = "/modelstore/store"
MANIFEST_MOUNT = "/modelstore/manifest"
GATE_CONTAINER = "modelstore-revision-gate"
PREPARE_CONTAINER = "modelstore-prepare"
# What the prepare container may do as root, and nothing more: give files to the seed (CHOWN),
# reach them whatever their mode (DAC_OVERRIDE) and set the mode of a root it no longer owns
# (FOWNER).
PREPARE_CAPABILITIES = ("CHOWN", "DAC_OVERRIDE", "FOWNER")
# pulumi-kubernetes replaces a Job that is not complete on the next up (module docstring).
REPLACE_UNREADY = "pulumi.com/replaceUnready"
RUN_AS = 65532  # the conventional "nonroot" uid/gid of distroless images
# How long `pulumi up` waits, and the Job's own deadline (the same, so a Job that overruns
# fails with DeadlineExceeded, which pulumi-kubernetes reports, instead of running on unseen):
# a seed downloads the whole model (70B in bf16 is ~140 GB: ~25 min at 100 MB/s), a
# verification reads it once more.
SEED_TIMEOUT_MINUTES = 240
VERIFY_TIMEOUT_MINUTES = 60
# Two retries: a transient network or API error, not a loop on a model that cannot be seeded
# (the programs say why in their termination message; a retry does not change a digest).
BACKOFF_LIMIT = 2
# Requests and limits of the verify and manifest programs: they stream in 8-16 MiB chunks and
# hash as they go, so memory stays small whatever the model's size; one CPU keeps sha256 at
# ~1 GB/s (verify.py's measurement), about what the storage gives.
RESOURCES = {
    "requests": {"cpu": "500m", "memory": "256Mi", "ephemeral-storage": "64Mi"},
    "limits": {"cpu": "1", "memory": "512Mi", "ephemeral-storage": "256Mi"},
}
# The seed downloads 8 files or 8 MiB ranges at once (model/transfer.py) and hashes up to 4
# files side by side (sha256 is about 1 GB/s a core), so it asks for 2 CPUs and may use 4;
# its memory is the transfer's buffer pool (BUFFERS parts of PART bytes) and the interpreter,
# with room for the page cache its writes dirty (charged to the pod's memory cgroup).
_SEED_BUFFERS_MIB = (BUFFERS * PART) >> 20
SEED_RESOURCES = {
    "requests": {"cpu": "2", "memory": f"{_SEED_BUFFERS_MIB + 384}Mi", "ephemeral-storage": "64Mi"},
    "limits": {"cpu": "4", "memory": f"{_SEED_BUFFERS_MIB + 896}Mi", "ephemeral-storage": "256Mi"},
}
GATE_RESOURCES = {
    "requests": {"cpu": "10m", "memory": "16Mi"},
    "limits": {"cpu": "100m", "memory": "64Mi"},
}
# The gate waits at most this long, then fails (the pod's restart policy retries it).
GATE_WAIT_SECONDS = 3600
GATE_POLL_SECONDS = 10


def container_security_context() -> dict[str, Any]:
    """Non-root, read-only root filesystem, no capabilities, no privilege escalation."""
    return {
        "runAsNonRoot": True,
        "runAsUser": RUN_AS,
        "runAsGroup": RUN_AS,
        "readOnlyRootFilesystem": True,
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def pod_security_context() -> dict[str, Any]:
    return {
        "runAsNonRoot": True,
        "runAsUser": RUN_AS,
        "runAsGroup": RUN_AS,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def prepare_container(image: str, store_mount: Mapping[str, Any]) -> dict[str, Any]:
    """The seed's first init container where the storage makes a root-owned root the kubelet
    applies no fsGroup to (a ``hostPath`` ``DirectoryOrCreate`` folder, 0755: kubernetes
    ``pkg/volume/hostpath/host_path.go`` ``makeDir``; a Lustre file system's root, whose CSI
    driver never chowns and whose ``fsGroupPolicy`` leaves ReadWriteMany volumes alone): as
    root, with only :data:`PREPARE_CAPABILITIES`, it gives the seed's uid and gid what in the
    store is not theirs yet (the root at the first seed; a revision an FSx data repository
    association imported, so its old revisions can be collected), and the root mode 0755 so
    readers of any uid traverse it. ``find`` walks the store each seed but changes only what is
    not the seed's: a model's files once."""
    owner = f"{RUN_AS}:{RUN_AS}"
    script = (
        f"find {STORE_ROOT} -xdev ! -user {RUN_AS} -exec chown -h {owner} {{}} + && "
        f"chmod 0755 {STORE_ROOT}"
    )
    return {
        "name": PREPARE_CONTAINER,
        "image": image,
        "command": ["sh", "-c", script],
        "volumeMounts": [{**store_mount, "mountPath": STORE_ROOT, "readOnly": False}],
        "resources": GATE_RESOURCES,
        "securityContext": {
            "runAsNonRoot": False,
            "runAsUser": 0,
            "runAsGroup": 0,
            "readOnlyRootFilesystem": True,
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"], "add": list(PREPARE_CAPABILITIES)},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
    }


def _preparing(patch: Any, image: str) -> Any:
    """``patch`` followed by the prepare init container, first, mounting the store as the seed
    container does."""

    def patched(pod: dict[str, Any], labels: Mapping[str, str]) -> tuple[Any, Any]:
        spec, metadata = patch(pod, labels)
        seed = next(c for c in spec["containers"] if c["name"] == "seed")
        store = next(m for m in seed["volumeMounts"] if m["mountPath"] == STORE_ROOT)
        init = [prepare_container(image, store), *spec.get("initContainers", [])]
        return {**spec, "initContainers": init}, metadata

    return patched


def seed_pod_security_context() -> dict[str, Any]:
    """The seed's pod: :func:`pod_security_context` with ``fsGroup`` :data:`RUN_AS`, so what the
    kubelet hands to the pod's group is the seed's: the token Secret, whose files are root's
    with ``defaultMode`` 0440 and readable by the seed only as their group (kubernetes
    ``pkg/apis/core/types.go`` ``SecretVolumeSource.DefaultMode``, ``PodSecurityContext.FSGroup``;
    ``pkg/volume/volume_linux.go`` ``SetVolumeOwnership``), and the store where its driver lets
    the kubelet apply fsGroup (an NFS export, a block volume; Cloud Storage FUSE mounts with
    ``gid=<fsGroup>``). ``OnRootMismatch``: the kubelet walks a store's files only while its
    root is not yet the group's, not a whole model at every seed."""
    return {**pod_security_context(), "fsGroup": RUN_AS, "fsGroupChangePolicy": "OnRootMismatch"}


def slug(revision: str) -> str:
    """A DNS-label piece naming a revision: a commit SHA's first 12 characters, a label
    lowercased with other characters as '-' (and a short digest where that changed it)."""
    if re.fullmatch(r"[0-9a-f]{40}", revision):
        return revision[:12]
    clean = re.sub(r"[^a-z0-9-]+", "-", revision.lower()).strip("-")[:24].strip("-")
    if clean != revision:
        clean = f"{clean}-{_short(revision)}".strip("-")
    return clean


def _short(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:6]


def job_name(claim_name: str, role: str, revision: str) -> str:
    """``<claim>-<role>-<revision slug>``, a DNS label of at most 63 characters (the Job
    controller labels its pods with it): a long claim name is cut and a digest added."""
    tail = f"-{role}-{slug(revision)}"
    name = f"{claim_name}{tail}"
    if len(name) <= 63:
        return name
    head = claim_name[: 63 - len(tail) - 7].rstrip("-")
    return f"{head}-{_short(claim_name)}{tail}"


def seed_service_account(claim_name: str) -> str:
    """The seed Job's own service account in the loader namespace (``<claim>-seed``), where
    the store's consumers have no identity but the seed must read its source with one
    (``access.SourceGrant.account``) or record its manifest's digest (``kube/model_digest``)."""
    return f"{claim_name}-seed"


TOKEN_KEY = "token"


def token_secret_name(claim_name: str) -> str:
    """The Secret a store makes of ``model.token`` (``<claim>-model-token``), one per store
    whatever the revision, so a new token updates it in place."""
    return f"{claim_name}-model-token"


def model_token_secret(
    resource_name: str,
    *,
    claim_name: str,
    namespace: str,
    labels: Mapping[str, str],
    token: pulumi.Output[str],
    opts: pulumi.ResourceOptions,
) -> tuple[k8s.core.v1.Secret, tuple[str, str]]:
    """The Secret holding ``model.token`` (a secret Output: ``modelsection._token`` made it
    one) in the seed Job's ``namespace``, and its (name, key) for :func:`seed_job`.
    ``stringData`` is the secret Output itself, so
    the engine encrypts it in the state and a plan shows ``[secret]``; pulumi-kubernetes marks
    the Secret's ``data`` and ``stringData`` outputs secret as well
    (``sdk/python/pulumi_kubernetes/core/v1/Secret.py``: ``additional_secret_outputs``)."""
    name = token_secret_name(claim_name)
    secret = k8s.core.v1.Secret(
        resource_name,
        metadata={"name": name, "namespace": namespace, "labels": dict(labels)},
        type="Opaque",
        string_data={TOKEN_KEY: token},
        opts=opts,
    )
    return secret, (name, TOKEN_KEY)


def config_map_name(claim_name: str) -> str:
    """Named after the programs' digest: new programs are a new ConfigMap (and new Jobs)."""
    return f"{claim_name}-programs-{bundle_digest()[:10]}"


def _key(path: str) -> str:
    """A ConfigMap key for a bundle path (keys take no '/')."""
    return path.replace("/", "__")


def programs_config_map(
    resource_name: str,
    *,
    claim_name: str,
    namespace: str,
    labels: Mapping[str, str],
    opts: pulumi.ResourceOptions,
) -> k8s.core.v1.ConfigMap:
    """The seed and verify programs (``model/bundle.py``) for the Jobs of one namespace;
    immutable, since a change is a new name."""
    return k8s.core.v1.ConfigMap(
        resource_name,
        metadata={"name": config_map_name(claim_name), "namespace": namespace, "labels": labels},
        data={_key(path): text for path, text in program_files().items()},
        immutable=True,
        opts=opts,
    )


def _programs_volume(claim_name: str) -> dict[str, Any]:
    return {
        "name": PROGRAMS_VOLUME,
        "configMap": {
            "name": config_map_name(claim_name),
            "items": [{"key": _key(p), "path": p} for p in program_files()],
        },
    }


def _program_container(
    name: str,
    image: str,
    module: str,
    args: Sequence[pulumi.Input[str]],
    mounts: Sequence[dict[str, Any]],
    resources: dict[str, dict[str, str]] = RESOURCES,
) -> dict[str, Any]:
    return {
        "name": name,
        "image": image,
        # What the bundle tests run (python -I -S -u, the bundle on sys.path): no PYTHON*
        # variable is read, so none is set; the bundle is read-only, so no bytecode is written.
        "command": command(module, PROGRAMS_PATH),
        "args": list(args),
        "env": [{"name": "HOME", "value": "/tmp"}],
        "volumeMounts": [
            *mounts,
            {"name": PROGRAMS_VOLUME, "mountPath": PROGRAMS_PATH, "readOnly": True},
            {"name": TMP_VOLUME, "mountPath": "/tmp"},
        ],
        "resources": resources,
        "securityContext": container_security_context(),
        # The programs write their one line there; on a crash before it, the log's tail.
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "FallbackToLogsOnError",
    }


@dataclass(frozen=True)
class ModelJob:
    """What the seed Job and a verification Job of one store share: the store's claim and
    labels, the programs' image, and the revision with its manifest's pinned sha256."""

    claim_name: str
    labels: Mapping[str, str]
    image: str
    revision: str
    manifest_sha256: pulumi.Input[str] | None
    """Pinned, or (verification Jobs) what the seed recorded: ``kube/model_digest.py``."""


def _job(
    resource_name: str,
    job: ModelJob,
    role: str,
    namespace: str,
    pod: dict[str, Any],
    patch: Any,
    minutes: int,
    opts: pulumi.ResourceOptions,
) -> k8s.batch.v1.Job:
    """A Job pulumi-kubernetes waits for (module docstring), named and labelled after its
    ``role`` and revision, its pod patched by ``patch(pod, labels)``. No
    ``ttlSecondsAfterFinished``: a Job the TTL controller deleted is drift, which the next
    ``pulumi up`` would create (and run) again; the Job stays as the record of its run until
    its revision is gone."""
    labels = {**job.labels, ROLE_LABEL: role, REVISION_LABEL: slug(job.revision)}
    pod_spec, pod_metadata = patch(pod, labels)
    # Plain dicts for the provider's TypedDict inputs, as kube/volumes.py passes them.
    metadata: Any = {
        "name": job_name(job.claim_name, role, job.revision),
        "namespace": namespace,
        "labels": labels,
    }
    spec: Any = {
        "backoffLimit": BACKOFF_LIMIT,
        # A replacement pod only once the pod it replaces is fully terminated, never beside
        # one still terminating, where two seeds of one revision would overlap (kubernetes
        # staging/src/k8s.io/api/batch/v1/types.go, PodReplacementPolicy: "Failed means to
        # wait until a previously created Pod is fully terminated (has phase Failed or
        # Succeeded) before creating a replacement Pod"; the JobPodReplacementPolicy gate is
        # beta and on by default from Kubernetes 1.29). The seed's revision lock
        # (model/runs.py) covers whatever else starts two runs.
        "podReplacementPolicy": "Failed",
        "activeDeadlineSeconds": minutes * 60,
        "template": {"metadata": dict(pod_metadata), "spec": pod_spec},
    }
    return waited_job(resource_name, metadata, spec, minutes, opts)


def waited_job(
    resource_name: str, metadata: Any, spec: Any, minutes: int, opts: pulumi.ResourceOptions
) -> k8s.batch.v1.Job:
    """A Job whose create and update pulumi-kubernetes waits for, at most ``minutes`` (its
    custom timeouts; without them the 10 minutes of the module docstring), and that the next
    ``pulumi up`` replaces when it did not complete (:data:`REPLACE_UNREADY`)."""
    timeout = f"{minutes}m"
    annotations = {**(metadata.get("annotations") or {}), REPLACE_UNREADY: "true"}
    return k8s.batch.v1.Job(
        resource_name,
        metadata={**metadata, "annotations": annotations},
        spec=spec,
        opts=pulumi.ResourceOptions.merge(
            opts,
            pulumi.ResourceOptions(
                custom_timeouts=pulumi.CustomTimeouts(create=timeout, update=timeout)
            ),
        ),
    )


def _base_pod(claim_name: str, containers: list[dict[str, Any]]) -> dict[str, Any]:
    """A model Job's pod, without the ServiceAccount's API token: the programs call the
    Kubernetes API only to record a digest (:func:`seed_job` turns it back on there), and no
    mount or cloud identity needs it. The CSI drivers get a pod's token from the kubelet
    (their CSIDriver's ``tokenRequests``); IRSA and EKS Pod Identity
    (aws/amazon-eks-pod-identity-webhook ``pkg/handler/handler.go``:350-353) and Azure workload
    identity (Azure/azure-workload-identity ``pkg/webhook/webhook.go``:486-498) inject a
    projected token volume of their own; GKE's workload identity answers from the metadata
    server."""
    return {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "securityContext": pod_security_context(),
        "containers": containers,
        "volumes": [_programs_volume(claim_name), {"name": TMP_VOLUME, "emptyDir": {}}],
    }


def seed_job(
    resource_name: str,
    job: ModelJob,
    *,
    namespace: str,
    source: str,
    include: Sequence[str],
    keep_revisions: int,
    publish: str,
    token_secret: tuple[str, str] | None,
    patch: Any,
    opts: pulumi.ResourceOptions,
    record: str | None = None,
    layout: str = "none",
    prepare: bool = False,
) -> k8s.batch.v1.Job:
    """The Job that seeds ``job.revision`` into the store as a writer consumer: ``patch`` is the
    loader namespace's ``WorkloadMount.patch_pod_spec`` (its claim at the store's root,
    read-write, its service account and pod metadata from the access layer). ``record``: the
    ConfigMap (``<namespace>/<name>``) the seed records the manifest digest in
    (``kube/model_digest.py``), labelled with ``job.labels`` (the store's: a Velero Schedule
    selects the store's objects by them, ``kube/velero.py``, so backups hold the record);
    default: none, nothing recorded. ``layout``: the read layout the seed sets
    (``model/lustre.py``); default ``none``. ``prepare``: the store's root is root's and no
    fsGroup applies to it, so :func:`prepare_container` gives it to the seed first; default:
    false, the driver or the kubelet lets the seed write."""
    args: list[Any] = ["--source", source, "--revision", job.revision, "--dest", STORE_ROOT]
    for pattern in include:
        args += ["--include", pattern]
    args += [
        "--keep-revisions",
        str(keep_revisions),
        "--in-use",
        job.revision,
        "--publish",
        publish,
    ]
    mounts: list[dict[str, Any]] = []
    if token_secret is not None:
        args += ["--token-file", f"{TOKEN_DIR}/token"]
        mounts.append({"name": TOKEN_VOLUME, "mountPath": TOKEN_DIR, "readOnly": True})
    if job.manifest_sha256:
        args += ["--manifest-sha256", job.manifest_sha256]
    if record is not None:
        args += ["--record-configmap", record]
        for key, value in sorted(job.labels.items()):
            args += ["--record-label", f"{key}={value}"]
    if layout != "none":
        args += ["--layout", layout]
    pod = _base_pod(
        job.claim_name,
        [_program_container("seed", job.image, "seed", args, mounts, SEED_RESOURCES)],
    )
    pod["securityContext"] = seed_pod_security_context()
    if record is not None:
        # The API call needs the ServiceAccount's token.
        pod["automountServiceAccountToken"] = True
    if token_secret is not None:
        secret, key = token_secret
        pod["volumes"].append(
            {
                "name": TOKEN_VOLUME,
                "secret": {
                    "secretName": secret,
                    "items": [{"key": key, "path": "token"}],
                    "defaultMode": 0o440,
                },
            }
        )
    if prepare:
        patch = _preparing(patch, job.image)
    return _job(resource_name, job, "seed", namespace, pod, patch, SEED_TIMEOUT_MINUTES, opts)


def source_manifest_job(
    resource_name: str,
    job: ModelJob,
    *,
    namespace: str,
    source: str,
    service_account_name: str,
    opts: pulumi.ResourceOptions,
) -> k8s.batch.v1.Job:
    """The Job that writes ``job.revision``'s manifest into its ``gs://`` source
    (``model/source_manifest.py``), before a storage that copies the source folder whole
    (Hyperdisk ML's volume populator) copies it; it mounts no volume and runs as
    ``service_account_name``, the one account with a writer grant on the source bucket."""
    args: list[pulumi.Input[str]] = ["--source", source, "--revision", job.revision]
    if job.manifest_sha256:
        args += ["--manifest-sha256", job.manifest_sha256]
    container = _program_container("manifest", job.image, "source_manifest", args, [])
    pod = _base_pod(job.claim_name, [container])

    def patch(pod: dict[str, Any], labels: Mapping[str, str]) -> tuple[Any, Any]:
        return {**pod, "serviceAccountName": service_account_name}, {"labels": dict(labels)}

    return _job(resource_name, job, "manifest", namespace, pod, patch, SEED_TIMEOUT_MINUTES, opts)


def verify_job(
    resource_name: str,
    job: ModelJob,
    *,
    store: str,
    namespace: str,
    files_path: str,
    verify: str,
    sample_files: int,
    patch: Any,
    opts: pulumi.ResourceOptions,
    minutes: int = VERIFY_TIMEOUT_MINUTES,
) -> k8s.batch.v1.Job:
    """The Job that verifies ``job.revision`` in a reader namespace as its pods see it: ``patch``
    is that namespace's ``WorkloadMount.patch_pod_spec`` (the revision's subPath at
    ``files_path``, read-only, the gate, the service account and pod metadata), and the
    manifest's directory is mounted read-only as the gate mounts it. ``minutes``: the Job's
    deadline and ``pulumi up``'s wait. Default: :data:`VERIFY_TIMEOUT_MINUTES`."""
    args: list[pulumi.Input[str]] = [
        "--files",
        files_path,
        "--manifest",
        f"{MANIFEST_MOUNT}/manifest.json",
        "--revision",
        job.revision,
        "--label",
        f"{store}/{namespace}",
    ]
    if verify == "all":
        args.append("--all")
    elif verify == "sample":
        args += ["--sample", str(sample_files)]
    if job.manifest_sha256:
        args += ["--manifest-sha256", job.manifest_sha256]
    manifest_mount = {
        "name": job.claim_name,
        "mountPath": MANIFEST_MOUNT,
        "readOnly": True,
        "subPath": f".modelstore/{job.revision}",
    }
    container = _program_container("verify", job.image, "verify", args, [manifest_mount])
    pod = _base_pod(job.claim_name, [container])
    return _job(resource_name, job, "verify", namespace, pod, patch, minutes, opts)


def gate_container(*, store: str, claim_name: str, image: str, revision: str) -> dict[str, Any]:
    """The init container that holds a reader's pod until ``revision`` is published (its
    manifest, written last, exists), so no replica starts on a half-written model. The kubelet
    itself keeps it waiting while ``.modelstore/<revision>`` does not exist yet (a missing
    ``subPath`` on a read-only volume fails the container's start, which it retries)."""
    manifest = f"{MANIFEST_MOUNT}/manifest.json"
    tries = GATE_WAIT_SECONDS // GATE_POLL_SECONDS
    what = f"store {store}: revision {revision}"
    script = (
        f"i=0; until [ -f {manifest} ]; do "
        f'if [ "$i" -ge {tries} ]; then '
        f'echo "modelstore: {what} is not published after {GATE_WAIT_SECONDS} s '
        f'(no .modelstore/{revision}/manifest.json): is its seed Job done?" >&2; exit 1; fi; '
        f'[ "$i" -eq 0 ] && echo "modelstore: waiting for {what} to be published"; '
        f"i=$((i+1)); sleep {GATE_POLL_SECONDS}; done; "
        f'echo "modelstore: {what} is published"'
    )
    return {
        "name": GATE_CONTAINER,
        "image": image,
        "command": ["sh", "-c", script],
        "volumeMounts": [
            {
                "name": claim_name,
                "mountPath": MANIFEST_MOUNT,
                "readOnly": True,
                "subPath": f".modelstore/{revision}",
            }
        ],
        "resources": GATE_RESOURCES,
        "securityContext": container_security_context(),
    }
