"""The contract every store keeps: claims per consumer namespace and one call that wires a
workload. Checked on the local store (no cloud) and the FSx store."""

from __future__ import annotations

import pytest

from pulumi_modelstore import ModelStoreInputError, WorkloadMount
from pulumi_modelstore.local import LocalModelStore
from pulumi_modelstore.plan.engine import PlanError
from pulumi_modelstore.program import BACKENDS, build_stores, snake_case
from tests.conftest import CLUSTER, assert_refused, plan

PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"


def mounts(build) -> dict[str, WorkloadMount]:
    found: dict[str, WorkloadMount] = {}

    def program():
        store = build()
        for ns, _ in store.common.consumers:
            found[ns] = store.mount_for(ns)

    plan(program)
    return found


def local(**args):
    return lambda: LocalModelStore(
        "models", {"readers": ["inference"], "writers": ["loader"], **args}
    )


def test_reader_mount_is_read_only_with_offline_hugging_face_env():
    m = mounts(local())["inference"]
    assert m.volume == {
        "name": "models",
        "persistentVolumeClaim": {"claimName": "models", "readOnly": True},
    }
    assert m.volume_mount == {"name": "models", "mountPath": "/mnt/models", "readOnly": True}
    assert {"name": "HF_HUB_OFFLINE", "value": "1"} in m.env
    hf_home = next(e["value"] for e in m.env if e["name"] == "HF_HOME")
    assert {"name": "hf-home", "emptyDir": {}} in m.volumes
    assert {"name": "hf-home", "mountPath": hf_home} in m.volume_mounts
    assert m.kserve_storage_uri("llama/") == "pvc://models/llama/"


def test_writer_mount_is_read_write_without_offline_env():
    m = mounts(local())["loader"]
    assert m.read_only is False
    assert m.volume["persistentVolumeClaim"]["readOnly"] is False
    assert m.volume_mount["readOnly"] is False
    assert m.env == [] and m.volumes == [m.volume]


def test_patch_pod_spec_wires_every_container_and_keeps_what_was_there():
    m = mounts(local())["inference"]
    spec = m.patch_pod_spec(
        {
            "volumes": [{"name": "cache", "emptyDir": {}}],
            "containers": [
                {"name": "a", "env": [{"name": "X", "value": "1"}]},
                {"name": "b"},
            ],
        }
    )
    assert [v["name"] for v in spec["volumes"]] == ["cache", "models", "hf-home"]
    for container in spec["containers"]:
        assert [vm["name"] for vm in container["volumeMounts"]] == ["models", "hf-home"]
        assert {"name": "HF_HUB_OFFLINE", "value": "1"} in container["env"]
    assert spec["containers"][0]["env"][0] == {"name": "X", "value": "1"}


def test_local_store_uses_host_path_and_retains_data():
    p = plan(local(capacity_gib=50))
    pvs = p.by_type(PV)
    assert len(pvs) == 2
    for pv in pvs:
        spec = pv["inputs"]["spec"]
        assert spec["hostPath"] == {
            "path": "/var/lib/modelstore/models",
            "type": "DirectoryOrCreate",
        }
        assert spec["accessModes"] == ["ReadWriteOnce"]
        assert spec["persistentVolumeReclaimPolicy"] == "Retain"
        assert spec["capacity"] == {"storage": "50Gi"}
    assert len(p.by_type(PVC)) == 2
    assert not p.by_type("kubernetes:core/v1:Namespace")


def test_local_store_pinned_to_a_node_uses_a_local_volume_with_affinity():
    p = plan(local(node_name="kind-worker", create_namespaces=True))
    spec = p.by_type(PV)[0]["inputs"]["spec"]
    assert spec["local"] == {"path": "/var/lib/modelstore/models"}
    term = spec["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]
    assert term == {"key": "kubernetes.io/hostname", "operator": "In", "values": ["kind-worker"]}
    namespaces = {
        n["inputs"]["metadata"]["name"] for n in p.by_type("kubernetes:core/v1:Namespace")
    }
    assert namespaces == {"inference", "loader"}
    # Claims wait for their namespace.
    ns_urns = {n["urn"] for n in p.by_type("kubernetes:core/v1:Namespace")}
    for pv in p.by_type(PV):
        assert set(pv["dependencies"]) & ns_urns


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"host_path": "models"},
            "models: host_path must be an absolute path starting with '/', got 'models'",
        ),
        ({"capacity_gib": -5}, "models: capacity_gib must be a positive whole number, got -5"),
    ],
)
def test_local_bad_input(args, message):
    assert_refused(lambda: LocalModelStore("models", {"readers": ["inference"], **args}), message)


def test_program_accepts_snake_and_camel_case_and_exports_each_store():
    assert snake_case("storageCapacityGib") == "storage_capacity_gib"
    assert snake_case("capacity_gib") == "capacity_gib"
    p = plan(lambda: build_stores({"a": {"backend": "local", "readers": ["x"], "capacityGib": 7}}))
    assert p.by_type(PV)[0]["inputs"]["spec"]["capacity"] == {"storage": "7Gi"}
    assert p.outputs["a"]["claimNames"] == {"x": "a"}


def test_program_validates_every_store_before_registering_any():
    stores = {
        "good": {"backend": "local", "readers": ["x"]},
        "bad": {"backend": "s3", "readers": ["x"]},
    }
    with pytest.raises(PlanError) as err:
        plan(lambda: build_stores(stores))
    assert str(err.value) == (
        f"bad: backend must be one of {', '.join(sorted(BACKENDS))}, got 's3'"
    )
    assert len(err.value.registered) == 1  # the stack itself
    stores["bad"] = {"backend": "local", "readers": ["x"], "host_path": "relative"}
    assert_refused(
        lambda: build_stores(stores),
        "bad: host_path must be an absolute path starting with '/', got 'relative'",
    )


def test_input_error_is_a_value_error_with_its_parts():
    err = ModelStoreInputError("s", "field", 3, "1 or 2")
    assert isinstance(err, ValueError)
    assert (err.store, err.field, err.value, err.allowed) == ("s", "field", 3, "1 or 2")
    assert str(err) == "s: field must be 1 or 2, got 3"


def test_program_plans_one_fsx_driver_install_for_two_stores_on_one_cluster():
    stores = {
        "a": {"backend": "fsx-lustre", "cluster_name": CLUSTER, "readers": ["x"]},
        "b": {"backend": "fsx-lustre", "cluster_name": CLUSTER, "readers": ["y"]},
    }
    p = plan(lambda: build_stores(stores))
    (release,) = p.by_type("kubernetes:helm.sh/v3:Release")
    assert release["urn"].rsplit("::", 1)[-1] == f"{CLUSTER}-aws-fsx-csi-driver"
    assert release["parent"] == p.by_name(CLUSTER)["urn"]
    assert release["aliases"] == [{"name": "a-fsx-csi-driver", "parentUrn": p.by_name("a")["urn"]}]
    for pv in p.by_type(PV):
        assert release["urn"] in pv["dependencies"]
    assert set(p.outputs) == {"a", "b"}
