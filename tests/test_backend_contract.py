"""The contract every backend keeps, checked on every backend the config program knows (each
declares ``example_args``, ``data_bearing_types`` and ``takes_writers`` on its class): one claim
per consumer namespace bound to its own PV, readers read-only at every layer the backend
enforces, unique volume handles, ``mount_for``, data-bearing resources protected and retained,
nothing registered on bad input."""

from __future__ import annotations

from typing import Any

import pytest

from pulumi_modelstore.errors import ModelStoreInputError
from pulumi_modelstore.plan.engine import PlanError
from pulumi_modelstore.program import BACKENDS
from tests.conftest import plan

PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
READERS, WRITERS = ["inference", "batch"], ["loader"]

NAMES = sorted(BACKENDS)
# The resources that hold the data, per backend: protected and retained by default.
DATA_BEARING = {name: BACKENDS[name].data_bearing_types for name in NAMES}


def writers(backend: str) -> list[str]:
    return WRITERS if BACKENDS[backend].takes_writers else []


def build(backend: str, **extra: Any):
    cls = BACKENDS[backend]
    args = {**cls.example_args, "readers": READERS, "writers": writers(backend), **extra}
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
    backend, p, _ = planned
    claims = {c["inputs"]["metadata"]["namespace"]: c["inputs"] for c in p.by_type(PVC)}
    pvs = {v["inputs"]["metadata"]["name"]: v["inputs"] for v in p.by_type(PV)}
    assert sorted(claims) == sorted(READERS + writers(backend))
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
    for claim in p.by_type(PVC):  # provisioned claims (no static PV): the claim's mode
        spec = claim["inputs"]["spec"]
        if "volumeName" in spec:
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
    consumers = ", ".join(READERS + writers(store.backend_name))
    assert str(err.value) == (
        "llama: namespace must be one of the store's consumer namespaces "
        f"({consumers}), got 'elsewhere'"
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


@pytest.mark.parametrize("backend", NAMES)
def test_nothing_registers_on_bad_input(backend):
    with pytest.raises(PlanError) as err:
        plan(lambda: build(backend, claim_name="Models"))
    assert str(err.value).startswith("llama: claim_name must be a DNS-1123 label")
    assert len(err.value.registered) == 1  # the stack itself


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
    assert sorted(mounts) == sorted(READERS + writers(backend))
    pod = {"containers": [{"name": "server", "image": "vllm/vllm-openai"}]}
    for ns, data in mounts.items():
        rebuilt = WorkloadMount.from_output(data)
        assert rebuilt == stores["llama"].mount_for(ns)
        assert rebuilt.patch_pod_spec(pod) == stores["llama"].mount_for(ns).patch_pod_spec(pod)


def test_a_mounts_output_of_another_shape_is_refused():
    from pulumi_modelstore.kube.workload import WorkloadMount

    with pytest.raises(ValueError) as err:
        WorkloadMount.from_output({"namespace": "a", "claimName": "b", "volumeSource": {}})
    assert str(err.value) == "not a WorkloadMount output: unknown keys volumeSource"
