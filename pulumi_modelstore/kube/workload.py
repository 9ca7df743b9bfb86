"""What a pod needs to use a model store: one value a Deployment, a KServe InferenceService or a
vLLM pod can be wired with in one call."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from ..errors import ModelStoreInputError, show
from ..fields import camel_case
from .serving import engine_args

# Where Hugging Face libraries may write when the model volume is read-only.
HF_HOME_VOLUME = "hf-home"
HF_HOME_PATH = "/tmp/hf-home"


@dataclass(frozen=True)
class WorkloadMount:
    """Everything a pod spec needs to mount one store in one namespace.

    All values are plain data (the claim name is fixed before deploy), so they can go straight
    into any Kubernetes pod template.
    """

    namespace: str
    claim_name: str
    read_only: bool
    mount_path: str
    volume: dict[str, Any]
    """The pod volume: a persistentVolumeClaim source, readOnly for readers."""
    volume_mount: dict[str, Any]
    """The container volumeMount for the model volume, readOnly for readers."""
    service_account_name: str | None = None
    """The service account the pod must run as, where the backend needs a workload identity."""
    pod_annotations: dict[str, str] = field(default_factory=dict)
    """Annotations for the POD TEMPLATE metadata (not the Deployment's)."""
    pod_labels: dict[str, str] = field(default_factory=dict)
    """Labels for the pod template metadata (e.g. a workload identity's opt-in label)."""
    pod_security_context: dict[str, Any] = field(default_factory=dict)
    """Pod ``securityContext`` fields the mount needs; :meth:`patch_pod_spec` merges them over
    the pod's own."""
    env: list[dict[str, Any]] = field(default_factory=list)
    """Container env: for readers HF_HUB_OFFLINE=1 and HF_HOME on a writable emptyDir."""
    extra_volumes: list[dict[str, Any]] = field(default_factory=list)
    """Helper pod volumes: the HF_HOME emptyDir (mounted by every container, see
    :attr:`extra_volume_mounts`), then any a sidecar mounts itself (no container mount)."""
    extra_volume_mounts: list[dict[str, Any]] = field(default_factory=list)
    init_containers: list[dict[str, Any]] = field(default_factory=list)
    """Init containers the pod needs before its own: with a store's ``model`` section, the gate
    that waits until the pinned revision is published (``kube/model_jobs.py``). Empty by
    default, and for a mount from an output written before this field."""
    loader_profile: str | None = None
    """What the store's files sit on (the store class's ``loader_profile``: ``parallel-fs``,
    ``network-fs``, ``object-store``, ``block``, ``local``), which decides
    :meth:`serving_args`' loader settings. None (a mount from an output written before this
    field): no loader settings, the engine's defaults."""
    claim_template: dict[str, Any] | None = None
    """The claim each pod gets a volume of its own from (a store whose volume one node at a
    time can use: the EBS cache): ``metadata.name`` is the pod volume's name, ``spec`` the
    claim's. :attr:`volume` is then a generic ephemeral volume of that claim (the ephemeral
    volume controller makes the claim ``<pod>-<volume>`` when the pod is created and deletes
    it with the pod: kubernetes ``staging/src/k8s.io/component-helpers/storage/ephemeral/
    ephemeral.go`` VolumeClaimName, VolumeIsForPod), so it lives in the pod template and a
    change to it rolls the pods. None (the default): the pods share the claim :attr:`volume`
    names."""

    @property
    def volumes(self) -> list[dict[str, Any]]:
        """All pod volumes: the model volume first, then helpers such as the HF_HOME
        emptyDir. A mount from an output written when a claim template went into a
        StatefulSet's ``volumeClaimTemplates`` has a volume with a name alone: it gets the
        ephemeral volume of its :attr:`claim_template`, as a mount made now has."""
        volume = self.volume
        if self.claim_template is not None and set(volume) == {"name"}:
            volume = ephemeral_volume(volume["name"], self.claim_template)
        return [volume, *self.extra_volumes]

    @property
    def volume_mounts(self) -> list[dict[str, Any]]:
        """All container volumeMounts, in the same order as :attr:`volumes` (a volume only a
        sidecar mounts, such as GCS FUSE's cache, comes last and has none)."""
        return [self.volume_mount, *self.extra_volume_mounts]

    def to_output(self) -> dict[str, Any]:
        """This mount as plain JSON data with camelCase keys, for a stack output: an
        application stack reads it by ``StackReference`` and rebuilds the mount with
        :meth:`from_output`, so its pods are wired as ``mount_for`` would wire them."""
        # Keys only where they apply (a gate, a claim template), so the output of a store
        # without a model section or with shared claims stays as it was.
        out = {camel_case(f.name): getattr(self, f.name) for f in fields(self)}
        if not self.init_containers:
            del out["initContainers"]
        if self.claim_template is None:
            del out["claimTemplate"]
        return out

    @classmethod
    def from_output(cls, data: Mapping[str, Any]) -> WorkloadMount:
        """The mount :meth:`to_output` gave (from a ``StackReference`` output, once
        resolved); unknown keys are refused, so a mismatched library version is noticed."""
        names = {camel_case(f.name): f.name for f in fields(cls)}
        unknown = sorted(set(data) - set(names))
        if unknown:
            raise ValueError(f"not a WorkloadMount output: unknown keys {', '.join(unknown)}")
        return cls(**{names[key]: value for key, value in data.items()})

    def model_path(self, path: str = "") -> str:
        """Where the model is in the container: the mount path (the revision itself when the
        mount has a ``subPath``), or ``path`` under it for a store holding several models."""
        rel = path.strip("/")
        return f"{self.mount_path.rstrip('/')}/{rel}" if rel else self.mount_path

    def serving_args(
        self, engine: str, *, path: str = "", served_model_name: str | None = None
    ) -> list[str]:
        """The serving engine's arguments for a model in this store: the model path
        (:meth:`model_path`), ``--served-model-name`` when given, then the weight-loader
        settings that suit the store's storage (:attr:`loader_profile`; each setting and its
        source in :mod:`pulumi_modelstore.kube.serving`). ``engine``: ``"vllm"`` (the args
        after ``vllm serve``); another raises :class:`ModelStoreInputError` naming the known
        engines."""
        return engine_args(engine, self.loader_profile, self.model_path(path), served_model_name)

    def kserve_storage_uri(self, path: str = "") -> str:
        """``pvc://<claim>/<path>``: KServe mounts it read-only at /mnt/models, no copy. A
        mount with a :attr:`claim_template` has no claim to name: refused."""
        if self.claim_template is not None:
            raise ModelStoreInputError(
                None,
                "storageUri",
                f"pvc://{self.claim_name}",
                f"a claim of the store; {self.claim_name} is the claim template of each pod's "
                "own ephemeral volume, which KServe cannot mount",
            )
        return f"pvc://{self.claim_name}/{path.lstrip('/')}"

    def patch_inference_service(self, isvc: Mapping[str, Any], *, path: str = "") -> dict[str, Any]:
        """A copy of the KServe InferenceService ``isvc`` whose predictor serves the model at
        ``path`` in this store: ``spec.predictor.model.storageUri`` is ``pvc://<claim>/<path>``
        (under the mount's ``subPath`` when it has one; KServe mounts it read-only at
        /mnt/models and adds the claim volume itself), the predictor gets the service
        account, the pod annotations and labels (KServe puts the predictor's on its pod
        template), the helper volumes and the pod security context, and the model container
        the env and helper volumeMounts, each once (see :meth:`patch_container`). The
        InferenceService's namespace defaults to this mount's; another one raises
        :class:`ModelStoreInputError`."""
        out = dict(isvc)
        metadata = dict(out.get("metadata") or {})
        namespace = metadata.setdefault("namespace", self.namespace)
        if namespace != self.namespace:
            raise ModelStoreInputError(
                None,
                "InferenceService metadata.namespace",
                namespace,
                f"{self.namespace!r}, the namespace of claim {self.claim_name}",
            )
        out["metadata"] = metadata
        spec = dict(out.get("spec") or {})
        predictor = dict(spec.get("predictor") or {})
        # Only the helpers: KServe makes the claim's volume and mount from the storageUri.
        # The gate mounts the claim itself, so with a gate the claim's volume goes in too (a
        # second volume of one claim, beside KServe's own, is allowed).
        helpers = [self.volume, *self.extra_volumes] if self.init_containers else self.extra_volumes
        predictor["volumes"] = self._add_once(
            "predictor volumes", predictor.get("volumes", []), helpers, "name"
        )
        predictor["initContainers"] = self._add_once(
            "predictor initContainers",
            predictor.get("initContainers", []),
            self.init_containers,
            "name",
        )
        if self.service_account_name:
            predictor["serviceAccountName"] = self.service_account_name
        if self.pod_annotations:
            predictor["annotations"] = {**predictor.get("annotations", {}), **self.pod_annotations}
        if self.pod_labels:
            predictor["labels"] = {**predictor.get("labels", {}), **self.pod_labels}
        if self.pod_security_context:
            predictor["securityContext"] = {
                **predictor.get("securityContext", {}),
                **self.pod_security_context,
            }
        model = dict(predictor.get("model") or {})
        where = "predictor model"
        model["storageUri"] = self.kserve_storage_uri(
            "/".join(p for p in (self.volume_mount.get("subPath", ""), path.strip("/")) if p)
        )
        model["env"] = self._add_once(f"{where} env", model.get("env", []), self.env, "name")
        model["volumeMounts"] = self._add_once(
            f"{where} volumeMounts",
            model.get("volumeMounts", []),
            self.extra_volume_mounts,
            "mountPath",
        )
        predictor["model"] = {k: v for k, v in model.items() if v != []}
        spec["predictor"] = {k: v for k, v in predictor.items() if v != []}
        out["spec"] = spec
        return out

    def patch_container(self, container: dict[str, Any]) -> dict[str, Any]:
        """A copy of ``container`` with this mount's volumeMounts and env added, each once:
        one already there as is (another store's ``HF_HOME``) is kept; a different one at the
        same mountPath or env name raises :class:`ModelStoreInputError` (the API server
        refuses duplicates)."""
        where = f"container {container.get('name')!r}"
        out = dict(container)
        out["volumeMounts"] = self._add_once(
            f"{where} volumeMounts",
            container.get("volumeMounts", []),
            self.volume_mounts,
            "mountPath",
            " (give the stores different mount_path values)",
        )
        out["env"] = self._add_once(f"{where} env", container.get("env", []), self.env, "name")
        return out

    def patch_pod_spec(self, pod_spec: dict[str, Any]) -> dict[str, Any]:
        """A copy of ``pod_spec`` with the volumes, the service account and every container's
        mounts and env added, each once (a pod may mount several stores: see
        :meth:`patch_container`). Pod annotations go on the template metadata: see
        :attr:`pod_annotations`."""
        out = dict(pod_spec)
        out["volumes"] = self._add_once(
            "pod volumes", pod_spec.get("volumes", []), self.volumes, "name"
        )
        out["containers"] = [self.patch_container(c) for c in pod_spec.get("containers", [])]
        if self.init_containers:
            out["initContainers"] = self._add_once(
                "pod initContainers",
                pod_spec.get("initContainers", []),
                self.init_containers,
                "name",
            )
        if self.pod_security_context:
            out["securityContext"] = {
                **pod_spec.get("securityContext", {}),
                **self.pod_security_context,
            }
        if self.service_account_name:
            out["serviceAccountName"] = self.service_account_name
        return out

    def _add_once(
        self,
        field: str,
        existing: list[dict[str, Any]],
        added: list[dict[str, Any]],
        key: str,
        hint: str = "",
    ) -> list[dict[str, Any]]:
        """``existing`` and each of ``added`` whose ``key`` is new: the lists are keyed by it
        (``x-kubernetes-list-map-keys``) and server-side apply refuses two entries with one
        key ("duplicate entries for key")."""
        out = list(existing)
        for entry in added:
            taken = next(
                (e for e in out if isinstance(e, Mapping) and e.get(key) == entry[key]), None
            )
            if taken is None:
                out.append(entry)
            elif taken != entry:
                raise ModelStoreInputError(
                    None,
                    field,
                    taken,
                    f"free at {key} {show(entry[key])} for claim {self.claim_name}'s "
                    f"{show(entry)}{hint}",
                )
        return out


def ephemeral_volume(name: str, claim_template: Mapping[str, Any]) -> dict[str, Any]:
    """The pod volume ``name``: a generic ephemeral volume whose claim is made, per pod, from
    ``claim_template``'s ``spec`` and its metadata's labels and annotations (the only
    metadata an ephemeral volume's template may carry: kubernetes
    ``pkg/apis/core/validation/validation.go`` ValidateTemplateObjectMeta)."""
    metadata = claim_template.get("metadata") or {}
    kept = {key: metadata[key] for key in ("labels", "annotations") if metadata.get(key)}
    template: dict[str, Any] = {"spec": claim_template["spec"]}
    if kept:
        template = {"metadata": kept, **template}
    return {"name": name, "ephemeral": {"volumeClaimTemplate": template}}


def reader_env() -> list[dict[str, Any]]:
    return [
        {"name": "HF_HUB_OFFLINE", "value": "1"},
        {"name": "HF_HOME", "value": HF_HOME_PATH},
    ]


def hf_home_volume() -> tuple[dict[str, Any], dict[str, Any]]:
    return (
        {"name": HF_HOME_VOLUME, "emptyDir": {}},
        {"name": HF_HOME_VOLUME, "mountPath": HF_HOME_PATH},
    )
