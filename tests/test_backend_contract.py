"""The contract every backend keeps, checked on every backend the config program knows (each
declares ``example_args``, ``data_bearing_types`` and ``takes_writers`` on its class): one claim
per consumer namespace bound to its own PV, readers read-only at every layer the backend
enforces, unique volume handles, ``mount_for``, data-bearing resources protected and retained,
nothing registered on bad input."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from pulumi_modelstore.errors import ModelStoreInputError
from pulumi_modelstore.kube.workload import HF_HOME_PATH, HF_HOME_VOLUME
from pulumi_modelstore.plan.engine import PlanError
from pulumi_modelstore.program import BACKENDS
from pulumi_modelstore.store import ACCESS_LABEL
from tests.conftest import assert_refused, plan
from tests.rules import (
    DNS_LABEL,
    HF_HOME_CLAIM,
    HF_HOME_MOUNT,
    LABEL_VALUE,
    NO_BACKSTEPS,
    QUALIFIED,
    STORE_NAME,
)

PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
READERS, WRITERS = ["inference", "batch"], ["loader"]

NAMES = sorted(BACKENDS)
# The resources that hold the data, per backend: protected and retained by default.
DATA_BEARING = {name: BACKENDS[name].data_bearing_types for name in NAMES}


def writers(backend: str) -> list[str]:
    return WRITERS if BACKENDS[backend].takes_writers else []


def readers(backend: str) -> list[str]:
    return READERS[: BACKENDS[backend].max_readers]


def consumers(backend: str) -> list[str]:
    return readers(backend) + writers(backend)


def build(backend: str, **extra: Any):
    cls = BACKENDS[backend]
    args = {**cls.example_args, "readers": readers(backend), "writers": writers(backend), **extra}
    store = cls("llama", args)
    return store


@pytest.mark.parametrize("backend", [n for n in NAMES if not BACKENDS[n].takes_writers])
def test_a_backend_that_takes_no_writers_refuses_them(backend):
    with pytest.raises(PlanError) as err:
        plan(lambda: build(backend, writers=WRITERS))
    assert str(err.value).startswith("llama: writers must be empty")
    assert len(err.value.registered) == 1  # the stack itself


@pytest.fixture(scope="module", params=NAMES)
def planned(request):
    backend = request.param
    stores = {}

    def program():
        stores["llama"] = build(backend)

    return backend, plan(program, fill=True), stores["llama"]


def test_one_claim_per_consumer_namespace_bound_to_its_own_pv(planned):
    backend, p, store = planned
    claims = {
        c["inputs"]["metadata"]["namespace"]: c["inputs"]
        for c in p.by_type(PVC)
        if ACCESS_LABEL in c["inputs"]["metadata"]["labels"]  # a consumer's, not a seed's
    }
    pvs = {v["inputs"]["metadata"]["name"]: v["inputs"] for v in p.by_type(PV)}
    templates = {ns: store.mount_for(ns).claim_template for ns in consumers(backend)}
    if any(templates.values()):
        # Binding.claim_template: each pod's own ephemeral claim, restored from the template's
        # data source; the store makes no claim and no PV of its own.
        assert not claims and not pvs
        for template in templates.values():
            assert template is not None
            assert template["metadata"]["name"] == store.mount_for(readers(backend)[0]).claim_name
            assert template["spec"]["accessModes"] == ["ReadWriteOnce"]
        return
    assert sorted(claims) == sorted(consumers(backend))
    for ns, claim in claims.items():
        assert claim["metadata"]["name"] == "llama"
        if "volumeName" not in claim["spec"]:
            # Provisioned (Binding.claim): a class and a data source, no static PV.
            assert not pvs
            assert claim["spec"]["storageClassName"]
            assert claim["spec"]["dataSourceRef"]["name"]
            if ns in READERS:
                assert claim["spec"]["accessModes"] == ["ReadOnlyMany"]
            continue
        pv = pvs[claim["spec"]["volumeName"]]
        assert pv["spec"]["claimRef"] == {"namespace": ns, "name": "llama"}
        assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
        assert claim["spec"]["storageClassName"] == pv["spec"].get("storageClassName")
        assert claim["spec"]["accessModes"] == pv["spec"]["accessModes"]
    assert len(pvs) == len([c for c in claims.values() if "volumeName" in c["spec"]])


def test_readers_are_read_only_at_every_layer_the_backend_enforces(planned):
    _, p, store = planned
    for pv in p.by_type(PV):
        spec = pv["inputs"]["spec"]
        ns = spec["claimRef"]["namespace"]
        reader = ns in READERS
        mount = store.mount_for(ns)
        assert mount.read_only is reader
        assert mount.volume_mount["readOnly"] is reader
        assert mount.volume["persistentVolumeClaim"]["readOnly"] is reader
        if "csi" in spec:
            assert spec["csi"].get("readOnly", False) is reader
        if reader and "ReadOnlyMany" not in spec["accessModes"]:
            # The driver refuses ReadOnlyMany (FSx, EFS) or there is one node (local): then
            # the read-only mount is the enforcement, which the lines above check.
            assert spec["accessModes"] in (["ReadWriteMany"], ["ReadWriteOnce"])
        if not reader:
            assert "ReadOnlyMany" not in spec["accessModes"]
    for ns in consumers(store.backend_name):  # a claim template: the mount is read-only
        mount = store.mount_for(ns)
        if mount.claim_template is not None:
            assert (mount.read_only, mount.volume_mount["readOnly"]) == (True, True)
    for claim in p.by_type(PVC):  # provisioned claims (no static PV): the claim's mode
        spec = claim["inputs"]["spec"]
        if "volumeName" in spec or ACCESS_LABEL not in claim["inputs"]["metadata"]["labels"]:
            continue
        ns = claim["inputs"]["metadata"]["namespace"]
        reader = ns in READERS
        mount = store.mount_for(ns)
        assert mount.read_only is reader
        assert mount.volume["persistentVolumeClaim"]["readOnly"] is reader
        assert ("ReadOnlyMany" in spec["accessModes"]) is reader


def test_volume_handles_are_unique(planned):
    _, p, _ = planned
    handles = [
        pv["inputs"]["spec"]["csi"]["volumeHandle"]
        for pv in p.by_type(PV)
        if "csi" in pv["inputs"]["spec"]
    ]
    assert len(set(handles)) == len(handles)


def test_mount_for_refuses_a_namespace_that_is_not_a_consumer(planned):
    _, _, store = planned
    with pytest.raises(ModelStoreInputError) as err:
        store.mount_for("elsewhere")
    listed = ", ".join(consumers(store.backend_name))
    assert str(err.value) == (
        "llama: namespace must be one of the store's consumer namespaces "
        f"({listed}), got 'elsewhere'"
    )


def test_data_bearing_resources_are_protected_and_retained(planned):
    backend, p, _ = planned
    for type_ in DATA_BEARING[backend]:
        (state,) = p.by_type(type_)
        assert (state["protect"], state["retainOnDelete"]) == (True, True), type_


@pytest.mark.parametrize("backend", [n for n in NAMES if DATA_BEARING.get(n)])
def test_protection_can_be_turned_off(backend):
    p = plan(lambda: build(backend, protect=False))
    for type_ in DATA_BEARING[backend]:
        (state,) = p.by_type(type_)
        assert (state["protect"], state["retainOnDelete"]) == (False, False)


# The fields every backend has (ModelStoreArgs), refused alike by every backend: (args over the
# example's, the exact message) for the store "llama". A backend's own fields are its own
# table's, and so is a store name a backend refuses for its cloud's names too (the claim name's
# default rows in tests/test_inputs_kube.py).
COMMON_BAD_INPUTS: list[tuple[dict[str, Any], str]] = [
    ({"labels": {"team name": "ml"}}, f"llama: labels key must be {QUALIFIED}, got 'team name'"),
    (
        {"labels": {"example.com/team/ml": "x"}},
        f"llama: labels key must be {QUALIFIED}, got 'example.com/team/ml'",
    ),
    (
        {"labels": {"Example.com/team": "ml"}},
        f"llama: labels key must be {QUALIFIED}, got 'Example.com/team'",
    ),
    ({"labels": {"/team": "ml"}}, f"llama: labels key must be {QUALIFIED}, got '/team'"),
    ({"labels": {"-team": "ml"}}, f"llama: labels key must be {QUALIFIED}, got '-team'"),
    ({"labels": {"t" * 64: "ml"}}, f"llama: labels key must be {QUALIFIED}, got '{'t' * 64}'"),
    (
        {"labels": {"team": "ML team"}},
        f"llama: labels['team'] must be {LABEL_VALUE}, got 'ML team'",
    ),
    (
        {"labels": {"team": "m" * 64}},
        f"llama: labels['team'] must be {LABEL_VALUE}, got '{'m' * 64}'",
    ),
    ({"labels": {"team": "ml/ai"}}, f"llama: labels['team'] must be {LABEL_VALUE}, got 'ml/ai'"),
    ({"labels": {"team": "-ml"}}, f"llama: labels['team'] must be {LABEL_VALUE}, got '-ml'"),
    ({"labels": {"team": "ml."}}, f"llama: labels['team'] must be {LABEL_VALUE}, got 'ml.'"),
    ({"claim_name": "Models"}, f"llama: claim_name must be {DNS_LABEL}, got 'Models'"),
    ({"claim_name": "Llama_3"}, f"llama: claim_name must be {DNS_LABEL}, got 'Llama_3'"),
    ({"claim_name": HF_HOME_VOLUME}, f"llama: claim_name must be {HF_HOME_CLAIM}, got 'hf-home'"),
    (
        {"mount_path": "/mnt/models/../../etc"},
        f"llama: mount_path must be {NO_BACKSTEPS}, got '/mnt/models/../../etc'",
    ),
    ({"mount_path": "/models/.."}, f"llama: mount_path must be {NO_BACKSTEPS}, got '/models/..'"),
    (
        {"mount_path": "/mnt/./../models"},
        f"llama: mount_path must be {NO_BACKSTEPS}, got '/mnt/./../models'",
    ),
    (
        {"mount_path": HF_HOME_PATH},
        f"llama: mount_path must be {HF_HOME_MOUNT}, got '/tmp/hf-home'",
    ),
    (
        {"mount_path": "/tmp/hf-home/"},
        f"llama: mount_path must be {HF_HOME_MOUNT}, got '/tmp/hf-home/'",
    ),
    (
        {"mount_path": "/tmp//hf-home"},
        f"llama: mount_path must be {HF_HOME_MOUNT}, got '/tmp//hf-home'",
    ),
    (
        {"mount_path": "models"},
        "llama: mount_path must be an absolute path starting with '/', got 'models'",
    ),
    ({"readers": ["Inference"]}, f"llama: readers must be {DNS_LABEL}, got 'Inference'"),
    (
        {"readers": ["inference", "inference"]},
        "llama: readers must be a list without repeats, got ['inference', 'inference']",
    ),
    ({"readers": "inference"}, "llama: readers must be a list of strings, got 'inference'"),
    (
        {"readers": [], "writers": []},
        "llama: readers and writers must be at least one consumer namespace between them, got []",
    ),
    ({"protect": "false"}, "llama: protect must be true or false, got 'false'"),
    ({"create_namespaces": "no"}, "llama: create_namespaces must be true or false, got 'no'"),
    ({"labels": ["team"]}, "llama: labels must be a mapping of strings to strings, got ['team']"),
]
# Rows about writers: for the backends that take them.
WRITER_BAD_INPUTS: list[tuple[dict[str, Any], str]] = [
    (
        {"readers": ["inference"], "writers": ["inference"]},
        "llama: writers must be a namespace that is not also a reader, got 'inference'",
    ),
]
# Store names no backend takes: each refused with STORE_NAME.
BAD_STORE_NAMES = ["llama 3", "l" * 64, "", "llama/3", "llama:3", "llama\n"]


def _common_rows() -> list[Any]:
    rows = []
    for b in NAMES:
        table = [*COMMON_BAD_INPUTS, *(WRITER_BAD_INPUTS if BACKENDS[b].takes_writers else [])]
        rows += [
            pytest.param(b, "llama", args, message, id=f"{b}-{i}-{message.split()[1]}")
            for i, (args, message) in enumerate(table)
        ]
        rows += [
            pytest.param(b, name, {}, f"{STORE_NAME}, got {name!r}", id=f"{b}-name-{i}")
            for i, name in enumerate(BAD_STORE_NAMES)
        ]
    return rows


@pytest.mark.parametrize(("backend", "name", "args", "message"), _common_rows())
def test_a_bad_common_field_is_refused_alike_by_every_backend(backend, name, args, message):
    cls = BACKENDS[backend]
    fields = {**cls.example_args, "readers": readers(backend), "writers": writers(backend), **args}
    assert_refused(lambda: cls(name, fields), message)
    # validate (the config program's check before any store registers) refuses it alike.
    with pytest.raises(ModelStoreInputError) as err:
        cls.validate(name, fields)
    assert str(err.value) == message


@pytest.mark.parametrize("backend", NAMES)
def test_the_mounts_output_rebuilds_what_mount_for_gives(backend):
    # An application stack reads `mounts` by StackReference: the pod it wires from the output
    # must be the pod `mount_for` wires, for every consumer namespace.
    import pulumi

    from pulumi_modelstore.kube.workload import WorkloadMount

    stores = {}

    def program():
        stores["llama"] = build(backend)
        pulumi.export("mounts", stores["llama"].mounts)

    p = plan(program)
    mounts = p.outputs["mounts"]
    assert sorted(mounts) == sorted(consumers(backend))
    pod = {"containers": [{"name": "server", "image": "vllm/vllm-openai"}]}
    for ns, data in mounts.items():
        rebuilt = WorkloadMount.from_output(data)
        live = stores["llama"].mount_for(ns)
        if live.claim_template is not None:
            # The template's values are Outputs (after the snapshot) until resolved.
            assert rebuilt.claim_template is not None
            assert rebuilt.claim_template["metadata"] == live.claim_template["metadata"]
            assert rebuilt.volume["name"] == live.volume["name"]
            rebuilt = dataclasses.replace(
                rebuilt, claim_template=live.claim_template, volume=live.volume
            )
        assert rebuilt == live
        assert rebuilt.patch_pod_spec(pod) == stores["llama"].mount_for(ns).patch_pod_spec(pod)


def test_a_mounts_output_of_another_shape_is_refused():
    from pulumi_modelstore.kube.workload import WorkloadMount

    with pytest.raises(ValueError) as err:
        WorkloadMount.from_output({"namespace": "a", "claimName": "b", "volumeSource": {}})
    assert str(err.value) == "not a WorkloadMount output: unknown keys volumeSource"
