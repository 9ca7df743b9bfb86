"""NfsModelStore: defaults and wiring, read-only at every layer, unique handles, one driver
install per cluster, and exact input errors."""

from __future__ import annotations

from typing import Any, cast

import pulumi
import pytest

from pulumi_modelstore.local import LocalModelStore
from pulumi_modelstore.nfs import NFS_CSI, NfsModelStore, NfsModelStoreArgs
from pulumi_modelstore.plan.engine import PlanError
from pulumi_modelstore.program import BACKENDS, build_stores
from tests.conftest import assert_refused, plan

PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
RELEASE = "kubernetes:helm.sh/v3:Release"
SCOPE = "modelstore:index:KubernetesCluster"
SERVER = "nas01.corp.example"
SHARE = "/exports/models"
READERS = ["inference", "batch-inference"]


def nfs(name: str = "llama", **args: Any):
    fields: dict[str, Any] = {
        "server": SERVER,
        "share": SHARE,
        "readers": READERS,
        "writers": ["model-loader"],
        **args,
    }
    return lambda: NfsModelStore(name, cast(NfsModelStoreArgs, fields))


def pvs(p) -> dict[str, dict[str, Any]]:
    """PV name -> spec."""
    return {s["inputs"]["metadata"]["name"]: s["inputs"]["spec"] for s in p.by_type(PV)}


def claims(p) -> dict[str, dict[str, Any]]:
    """Namespace -> claim spec."""
    return {s["inputs"]["metadata"]["namespace"]: s["inputs"]["spec"] for s in p.by_type(PVC)}


# -- defaults and wiring ------------------------------------------------------------------------


def test_defaults_static_pvs_on_the_nfs_driver():
    p = plan(nfs())
    specs = pvs(p)
    assert set(specs) == {"llama-inference", "llama-batch-inference", "llama-model-loader"}
    for name, spec in specs.items():
        csi = spec["csi"]
        assert csi["driver"] == "nfs.csi.k8s.io" == NFS_CSI.driver
        assert csi["volumeHandle"] == f"{SERVER}#{SHARE}##{name}"
        # No subdir: the export's root. No chmod after mounting, for readers and writers.
        assert csi["volumeAttributes"] == {
            "server": SERVER,
            "share": SHARE,
            "mountPermissions": "0",
        }
        assert spec["capacity"] == {"storage": "1Gi"}  # nominal: NFS enforces no size
        assert spec["persistentVolumeReclaimPolicy"] == "Retain"
        assert spec["storageClassName"] == ""
    assert {c["resources"]["requests"]["storage"] for c in claims(p).values()} == {"1Gi"}


def test_readers_are_read_only_at_every_layer_and_writers_read_write():
    p = plan(nfs())
    specs, bound = pvs(p), claims(p)
    for ns in READERS:
        spec = specs[f"llama-{ns}"]
        assert spec["accessModes"] == ["ReadOnlyMany"]
        assert bound[ns]["accessModes"] == ["ReadOnlyMany"]
        assert spec["csi"]["readOnly"] is True
        assert spec["mountOptions"] == ["nfsvers=4.1", "hard", "ro"]
        assert spec["csi"]["volumeAttributes"]["mountPermissions"] == "0"
    writer = specs["llama-model-loader"]
    assert writer["accessModes"] == ["ReadWriteMany"]
    assert bound["model-loader"]["accessModes"] == ["ReadWriteMany"]
    assert writer["csi"]["readOnly"] is False
    assert writer["mountOptions"] == ["nfsvers=4.1", "hard"]


def test_mount_for_gives_readers_a_read_only_mount():
    found = {}

    def program():
        store = nfs()()
        found.update({ns: store.mount_for(ns) for ns in [*READERS, "model-loader"]})

    plan(program)
    assert found["inference"].volume_mount["readOnly"] is True
    assert found["inference"].volume["persistentVolumeClaim"]["readOnly"] is True
    assert found["model-loader"].volume_mount["readOnly"] is False
    assert found["inference"].service_account_name is None  # no identity: the export's ACLs


def test_driver_helm_release_pinned_once_under_the_cluster_scope():
    p = plan(nfs())
    (release,) = p.by_type(RELEASE)
    (scope,) = p.by_type(SCOPE)
    assert release["urn"].endswith("::kubernetes-csi-driver-nfs")
    assert release["parent"] == scope["urn"]
    inputs = release["inputs"]
    assert (NFS_CSI.chart, NFS_CSI.version, NFS_CSI.app_version) == (
        "csi-driver-nfs",
        "4.13.4",
        "4.13.4",
    )
    assert inputs["chart"] == "csi-driver-nfs" and inputs["name"] == "csi-driver-nfs"
    assert inputs["version"] == "4.13.4"
    assert inputs["repositoryOpts"] == {
        "repo": "https://raw.githubusercontent.com/kubernetes-csi/csi-driver-nfs/master/charts"
    }
    assert inputs["namespace"] == "kube-system"
    # Node pods tolerate every taint (GPU nodes); the driver name is the one the PVs use.
    assert inputs["values"]["node"]["tolerations"] == [{"operator": "Exists"}]
    assert inputs["values"]["driver"]["name"] == NFS_CSI.driver
    # The PVs come after the driver.
    for pv in p.by_type(PV):
        assert release["urn"] in pv["dependencies"]


def test_sub_dir_version_and_extra_options():
    p = plan(
        nfs(
            share="/vol1/",
            sub_dir="llama-3/8b",
            nfs_version="3",
            extra_mount_options=["nconnect=4", "tcp"],
        ),
        fill=True,
    )
    spec = pvs(p)["llama-inference"]
    assert spec["csi"]["volumeAttributes"]["subdir"] == "llama-3/8b"
    assert spec["csi"]["volumeHandle"] == f"{SERVER}#/vol1/#llama-3/8b#llama-inference"
    assert spec["mountOptions"] == ["nfsvers=3", "hard", "nconnect=4", "tcp", "ro"]
    assert pvs(p)["llama-model-loader"]["mountOptions"] == [
        "nfsvers=3",
        "hard",
        "nconnect=4",
        "tcp",
    ]

    def program():
        store = nfs(share="/vol1/", sub_dir="llama-3/8b")()
        pulumi.export("summary", store.summary)

    out = plan(program, fill=True).outputs["summary"]
    assert out["server"] == SERVER
    assert out["exportPath"] == "/vol1/llama-3/8b"  # as the driver joins share and subdir


def test_soft_replaces_hard():
    spec = pvs(plan(nfs(extra_mount_options=["soft", "timeo=600"])))["llama-inference"]
    assert spec["mountOptions"] == ["nfsvers=4.1", "soft", "timeo=600", "ro"]


def test_server_may_be_an_output_such_as_a_filestore_ip():
    def program():
        ip = pulumi.Output.from_input("10.20.0.2")  # e.g. a Filestore instance's networks[0]
        nfs(server=ip, share="/vol1")()

    p = plan(program, fill=True)
    spec = pvs(p)["llama-inference"]
    assert spec["csi"]["volumeAttributes"]["server"] == "10.20.0.2"
    assert spec["csi"]["volumeHandle"] == "10.20.0.2#/vol1##llama-inference"


# -- stores sharing a cluster ---------------------------------------------------------------------


def test_two_stores_on_one_export_one_install_and_unique_handles():
    def program():
        nfs("llama", sub_dir="llama")()
        nfs("t5", sub_dir="llama", readers=["inference"], writers=[])()

    p = plan(program)
    assert len(p.by_type(RELEASE)) == 1
    assert len(p.by_type(SCOPE)) == 1
    handles = [spec["csi"]["volumeHandle"] for spec in pvs(p).values()]
    assert len(handles) == 4 and len(set(handles)) == 4
    release = p.by_type(RELEASE)[0]["urn"]
    assert all(release in pv["dependencies"] for pv in p.by_type(PV))


def test_one_install_whatever_order_and_none_joins_it():
    def program():
        nfs("a", driver_install="none", readers=["x"], writers=[])()
        nfs("b", readers=["y"], writers=[])()
        nfs("c", driver_install="none", readers=["z"], writers=[])()

    p = plan(program)
    (release,) = p.by_type(RELEASE)
    deps = {s["inputs"]["metadata"]["name"]: s["dependencies"] for s in p.by_type(PV)}
    # 'a' came before any install; 'c' waits for the one 'b' made.
    assert release["urn"] not in deps["a-x"]
    assert release["urn"] in deps["b-y"] and release["urn"] in deps["c-z"]


def test_no_install_with_driver_install_none():
    p = plan(nfs(driver_install="none"))
    assert not p.by_type(RELEASE)
    assert all(pv["dependencies"] == [] for pv in p.by_type(PV))


def test_a_different_install_on_the_same_cluster_is_refused_naming_the_first():
    def program():
        nfs("a", readers=["x"], writers=[])()
        nfs("b", readers=["y"], writers=[], driver_namespace="storage")()

    with pytest.raises(PlanError) as err:
        plan(program)
    assert str(err.value) == (
        "b: driver_install must be helm chart csi-driver-nfs 4.13.4 in kube-system, the "
        "install of nfs.csi.k8s.io store 'a' set on cluster 'kubernetes' (a driver is "
        "installed once per cluster), got 'helm chart csi-driver-nfs 4.13.4 in storage'"
    )


# Issue 26: two stores on one export, one's directory holding the other's claims' directories.
NFS_OVERLAPS = [
    (
        "a sub_dir that is the other store's claims' directory",
        [("t5", {"sub_dir": "t5", "dynamic_claims": True}), ("llama", {"sub_dir": "t5-dynamic"})],
        "llama: sub_dir must be a directory apart from t5-dynamic/ on "
        "nas01.corp.example:/exports/models, where store 't5' makes its dynamic claims' "
        "directories (its sub_dir 't5-dynamic' would show llama's readers those scratch "
        "claims), got 't5-dynamic'",
    ),
    (
        "a sub_dir under it",
        [
            ("t5", {"sub_dir": "t5", "dynamic_claims": True}),
            ("llama", {"sub_dir": "t5-dynamic/batch/", "share": "/exports/models/"}),
        ],
        "llama: sub_dir must be a directory apart from t5-dynamic/ on "
        "nas01.corp.example:/exports/models, where store 't5' makes its dynamic claims' "
        "directories (its sub_dir 't5-dynamic/batch' would show llama's readers those scratch "
        "claims), got 't5-dynamic/batch'",
    ),
    (
        "the whole share",
        [("t5", {"sub_dir": "t5", "dynamic_claims": True}), ("llama", {})],
        "llama: sub_dir is missing; it must be a directory apart from t5-dynamic/ on "
        "nas01.corp.example:/exports/models, where store 't5' makes its dynamic claims' "
        "directories (the whole share would show llama's readers those scratch claims)",
    ),
    (
        "claims where another store's readers already look",
        [("llama", {"sub_dir": "t5-dynamic/x"}), ("t5", {"sub_dir": "t5", "dynamic_claims": True})],
        "t5: dynamic_claims must be false while store 'llama' mounts t5-dynamic/ on "
        "nas01.corp.example:/exports/models (its sub_dir 't5-dynamic/x'), where this store's "
        "claims' directories would go: llama's readers would see them, got true",
    ),
]


@pytest.mark.parametrize(
    ("stores", "message"), [r[1:] for r in NFS_OVERLAPS], ids=[r[0] for r in NFS_OVERLAPS]
)
def test_a_store_that_would_see_another_stores_claims_is_refused_naming_both(stores, message):
    def program():
        for i, (name, args) in enumerate(stores):
            nfs(name, readers=[f"ns{i}"], writers=[f"w{i}"], **args)()

    with pytest.raises(PlanError) as err:
        plan(program)
    assert str(err.value) == message
    # The refused store registered nothing: only the first store's resources exist.
    refused = message.split(":")[0]
    assert not [u for u in err.value.registered if f"::{refused}" in u]


def test_the_config_program_refuses_the_overlap_before_any_store_registers():
    base = {"backend": "nfs", "server": SERVER, "share": SHARE}
    assert_refused(
        lambda: build_stores(
            {
                "t5": {**base, "sub_dir": "t5", "dynamic_claims": True, "readers": ["a"]},
                "llama": {**base, "sub_dir": "t5-dynamic", "readers": ["b"]},
            }
        ),
        NFS_OVERLAPS[0][2],
    )


def test_stores_apart_from_each_others_claims_share_an_export():
    """Beside each other's claims' directories, on another export, or another server: planned."""

    def program():
        nfs("t5", sub_dir="t5", dynamic_claims=True, readers=["a"], writers=["w"])()
        nfs("llama", sub_dir="t5-dynamics", readers=["b"], writers=[])()
        nfs("bert", share="/exports/other", readers=["c"], writers=[])()
        nfs("gpt", server="nas02.corp.example", readers=["d"], writers=[])()

    assert len(plan(program).by_type(PV)) == 5


def test_nfs_and_local_stores_share_one_kubernetes_cluster_scope():
    def program():
        nfs(readers=["inference"], writers=[])()
        LocalModelStore("scratch", {"readers": ["dev"]})

    p = plan(program)
    (scope,) = p.by_type(SCOPE)
    assert scope["urn"].endswith("::kubernetes")


def test_config_program_knows_the_backend_and_installs_once():
    assert BACKENDS["nfs"] is NfsModelStore
    stores = {
        "llama": {"backend": "nfs", "server": SERVER, "share": SHARE, "readers": ["a"]},
        "t5": {
            "backend": "nfs",
            "server": "10.0.0.2",
            "share": "/vol1",
            "nfsVersion": "3",
            "clusterName": "kubernetes",
            "readers": ["b"],
        },
    }
    p = plan(lambda: build_stores(stores))
    assert len(p.by_type(RELEASE)) == 1
    assert pvs(p)["t5-b"]["mountOptions"] == ["nfsvers=3", "hard", "ro"]
    assert p.outputs["llama"]["exportPath"] == SHARE


# -- bad input ------------------------------------------------------------------------------------

SERVER_RULE = (
    "set to the NFS server's hostname or IP address (e.g. nas01.corp.example or 10.0.0.2; the "
    "export path goes in share)"
)
SHARE_RULE = (
    "set to the export's absolute path on the server, starting with '/', without '..' (e.g. "
    "/exports/models, or /vol1 on Filestore)"
)
SUB_DIR_RULE = "a path inside the share, without a leading '/' or '..' (e.g. llama-3-8b)"
OPTIONS_RULE = (
    "NFS mount options the store does not set itself (not empty, not nfsvers, vers, "
    "minorversion, v2 to v4.2: use nfs_version; not ro, rw: readers get ro, writers rw)"
)
IPV4_RULE = (
    "a valid IPv4 address: four numbers from 0 to 255 without leading zeros (a name whose last "
    "label is all digits is read as an address, RFC 1123 section 2.1), or a host name"
)
IPV6_RULE = (
    "an IPv6 address without a zone (%...) that is not IPv4-mapped (::ffff:a.b.c.d): the driver "
    "puts such addresses unbracketed before ':<share>' (or give the IPv4 address)"
)


def in_range(option: str, low: int, high: int) -> str:
    key = option.split(",")[-1].split("=")[0]
    return (
        f"llama: extra_mount_options must be {key}=<a whole number from {low} to {high}> (the "
        f"Linux NFS client's range), got '{option}'"
    )


UNSET = object()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"server": UNSET}, f"llama: server is missing; it must be {SERVER_RULE}"),
        ({"server": ""}, f"llama: server must be {SERVER_RULE}, got ''"),
        (
            {"server": "nas01.corp.example:/exports/models"},
            f"llama: server must be {SERVER_RULE}, got 'nas01.corp.example:/exports/models'",
        ),
        ({"server": "[fd00::2]"}, f"llama: server must be {SERVER_RULE}, got '[fd00::2]'"),
        ({"server": 10}, "llama: server must be a string, got 10"),
        # Host names (RFC 1123 2.1) and addresses the driver and the kernel take (issue 14).
        ({"server": "10.0.0.256"}, f"llama: server must be {IPV4_RULE}, got '10.0.0.256'"),
        ({"server": "10.0.1"}, f"llama: server must be {IPV4_RULE}, got '10.0.1'"),
        ({"server": "010.0.0.2"}, f"llama: server must be {IPV4_RULE}, got '010.0.0.2'"),
        ({"server": "12345"}, f"llama: server must be {IPV4_RULE}, got '12345'"),
        ({"server": "fe80::1%eth0"}, f"llama: server must be {IPV6_RULE}, got 'fe80::1%eth0'"),
        (
            {"server": "::ffff:10.0.0.2"},
            f"llama: server must be {IPV6_RULE}, got '::ffff:10.0.0.2'",
        ),
        (
            {"server": "0.0.0.0"},
            "llama: server must be an address other than 0.0.0.0 or :: (the any address), got "
            "'0.0.0.0'",
        ),
        (
            {"server": "::"},
            "llama: server must be an address other than 0.0.0.0 or :: (the any address), got '::'",
        ),
        ({"server": "nas_01.corp"}, f"llama: server must be {SERVER_RULE}, got 'nas_01.corp'"),
        ({"server": "nas-.corp"}, f"llama: server must be {SERVER_RULE}, got 'nas-.corp'"),
        (
            {"server": "n" * 64 + ".corp"},
            f"llama: server must be {SERVER_RULE}, got '{'n' * 64}.corp'",
        ),
        (
            {"server": ("n" * 63 + ".") * 4 + "corp"},
            f"llama: server must be {SERVER_RULE}, got '{('n' * 63 + '.') * 4}corp'",
        ),
        ({"share": UNSET}, f"llama: share is missing; it must be {SHARE_RULE}"),
        ({"share": "exports/models"}, f"llama: share must be {SHARE_RULE}, got 'exports/models'"),
        ({"share": "/exports/../etc"}, f"llama: share must be {SHARE_RULE}, got '/exports/../etc'"),
        ({"sub_dir": "/llama"}, f"llama: sub_dir must be {SUB_DIR_RULE}, got '/llama'"),
        ({"sub_dir": "../other"}, f"llama: sub_dir must be {SUB_DIR_RULE}, got '../other'"),
        ({"sub_dir": "a/../../b"}, f"llama: sub_dir must be {SUB_DIR_RULE}, got 'a/../../b'"),
        ({"sub_dir": ""}, f"llama: sub_dir must be {SUB_DIR_RULE}, got ''"),
        (
            {"nfs_version": "5"},
            "llama: nfs_version must be one of 3, 4, 4.0, 4.1, 4.2, got '5'",
        ),
        (
            {"nfs_version": "v4.1"},
            "llama: nfs_version must be one of 3, 4, 4.0, 4.1, 4.2, got 'v4.1'",
        ),
        ({"nfs_version": 4.1}, "llama: nfs_version must be a string, got 4.1"),
        ({"nfs_version": 3}, "llama: nfs_version must be a string, got 3"),
        (
            {"extra_mount_options": ["nfsvers=3"]},
            f"llama: extra_mount_options must be {OPTIONS_RULE}, got 'nfsvers=3'",
        ),
        (
            {"extra_mount_options": ["nconnect=4", "vers=4.2"]},
            f"llama: extra_mount_options must be {OPTIONS_RULE}, got 'vers=4.2'",
        ),
        (
            {"extra_mount_options": ["minorversion=1"]},
            f"llama: extra_mount_options must be {OPTIONS_RULE}, got 'minorversion=1'",
        ),
        (
            {"extra_mount_options": ["ro"]},
            f"llama: extra_mount_options must be {OPTIONS_RULE}, got 'ro'",
        ),
        (
            {"extra_mount_options": ["RW"]},
            f"llama: extra_mount_options must be {OPTIONS_RULE}, got 'RW'",
        ),
        (
            {"extra_mount_options": ["nconnect=4,rw"]},
            f"llama: extra_mount_options must be {OPTIONS_RULE}, got 'nconnect=4,rw'",
        ),
        (
            {"extra_mount_options": ["v4.1"]},
            f"llama: extra_mount_options must be {OPTIONS_RULE}, got 'v4.1'",
        ),
        # The Linux client's ranges and values (fs/nfs/fs_context.c; issue 14).
        ({"extra_mount_options": ["nconnect=32"]}, in_range("nconnect=32", 1, 16)),
        ({"extra_mount_options": ["hard,nconnect=0"]}, in_range("hard,nconnect=0", 1, 16)),
        ({"extra_mount_options": ["nconnect"]}, in_range("nconnect", 1, 16)),
        ({"extra_mount_options": ["max_connect=17"]}, in_range("max_connect=17", 1, 16)),
        ({"extra_mount_options": ["timeo=0"]}, in_range("timeo=0", 1, 2147483647)),
        ({"extra_mount_options": ["retrans=-1"]}, in_range("retrans=-1", 0, 2147483647)),
        ({"extra_mount_options": ["rsize=1M"]}, in_range("rsize=1M", 0, 4294967295)),
        (
            {"extra_mount_options": ["actimeo=4294967296"]},
            in_range("actimeo=4294967296", 0, 4294967295),
        ),
        ({"extra_mount_options": ["port=70000"]}, in_range("port=70000", 0, 65535)),
        ({"extra_mount_options": ["mountvers=4"]}, in_range("mountvers=4", 1, 3)),
        (
            {"extra_mount_options": ["proto=quic"]},
            "llama: extra_mount_options must be proto=<one of rdma, rdma6, tcp, tcp6, udp, udp6> "
            "(the Linux NFS client's values), got 'proto=quic'",
        ),
        (
            {"extra_mount_options": ["lookupcache=some"]},
            "llama: extra_mount_options must be lookupcache=<one of all, none, pos, positive> "
            "(the Linux NFS client's values), got 'lookupcache=some'",
        ),
        (
            {"extra_mount_options": ["sec=krb5:krb6"]},
            "llama: extra_mount_options must be sec=<flavours joined by ':', each one of krb5, "
            "krb5i, krb5p, lkey, lkeyi, lkeyp, none, null, spkm3, spkm3i, spkm3p, sys> (the "
            "Linux NFS client's values), got 'sec=krb5:krb6'",
        ),
        (
            {"extra_mount_options": ["udp"]},
            "llama: extra_mount_options must be a TCP or RDMA transport with nfs_version 4.1 (the "
            "Linux client refuses UDP for NFSv4; UDP needs nfs_version 3), got 'udp'",
        ),
        (
            {"nfs_version": "4", "extra_mount_options": ["proto=udp6"]},
            "llama: extra_mount_options must be a TCP or RDMA transport with nfs_version 4 (the "
            "Linux client refuses UDP for NFSv4; UDP needs nfs_version 3), got 'proto=udp6'",
        ),
        (
            {"extra_mount_options": [""]},
            f"llama: extra_mount_options must be {OPTIONS_RULE}, got ''",
        ),
        (
            {"extra_mount_options": "nconnect=4"},
            "llama: extra_mount_options must be a list of strings, got 'nconnect=4'",
        ),
        (
            {"extra_mount_options": [4]},
            "llama: extra_mount_options must be a list of strings, got [4]",
        ),
        ({"capacity_gib": 0}, "llama: capacity_gib must be a positive whole number, got 0"),
        ({"capacity_gib": "1"}, "llama: capacity_gib must be a whole number, got '1'"),
        (
            {"driver_install": "eks-addon"},
            "llama: driver_install must be one of helm, none, got 'eks-addon'",
        ),
        ({"driver_install": True}, "llama: driver_install must be a string, got true"),
        (
            {"driver_namespace": "Kube_System"},
            "llama: driver_namespace must be a DNS-1123 label (lowercase letters, digits and "
            "'-', starting and ending with a letter or digit, at most 63 characters), got "
            "'Kube_System'",
        ),
        (
            {"cluster_name": "On Prem"},
            "llama: cluster_name must be a DNS-1123 label (lowercase letters, digits and '-', "
            "starting and ending with a letter or digit, at most 63 characters), got 'On Prem'",
        ),
        ({"readers": "inference"}, "llama: readers must be a list of strings, got 'inference'"),
        ({"protect": "false"}, "llama: protect must be true or false, got 'false'"),
        (
            {"servr": SERVER},
            "llama: field name must be one of the 20 fields listed by "
            "`modelstore fields NfsModelStore` (nearest: server, cluster), got 'servr'; did you "
            "mean `server`?",
        ),
    ],
)
def test_bad_input(args, message):
    fields = {**{"server": SERVER, "share": SHARE, "readers": READERS}, **args}
    fields = {k: value for k, value in fields.items() if value is not UNSET}
    assert_refused(lambda: NfsModelStore("llama", cast(NfsModelStoreArgs, fields)), message)


def test_every_bad_field_is_reported_at_once_one_line_each():
    fields = {"share": "exports", "nfs_version": "5", "extra_mount_options": ["ro"]}
    with pytest.raises(PlanError) as err:
        plan(lambda: NfsModelStore("llama", cast(NfsModelStoreArgs, {"readers": ["x"], **fields})))
    assert str(err.value.cause).splitlines() == [
        f"llama: server is missing; it must be {SERVER_RULE}",
        f"llama: share must be {SHARE_RULE}, got 'exports'",
        "llama: nfs_version must be one of 3, 4, 4.0, 4.1, 4.2, got '5'",
        f"llama: extra_mount_options must be {OPTIONS_RULE}, got 'ro'",
    ]
    assert [u.rsplit("::", 1)[-1] for u in err.value.registered] == ["modelstore-test"]


def test_accepted_servers():
    long_name = ("n" * 63 + ".") * 3 + "n" * 61  # 253 characters
    for server in ["nas01", "NAS01.Corp.Example", "10.0.0.2", "fd00::2", "1nas.x9", long_name]:
        p = plan(nfs(server=server, readers=["x"], writers=[]))
        assert pvs(p)["llama-x"]["csi"]["volumeAttributes"]["server"] == server


def test_options_at_the_client_limits_plan():
    options = [
        "nconnect=16",
        "max_connect=1",
        "timeo=1",
        "retrans=0",
        "rsize=0x100000",
        "wsize=1048576",
        "actimeo=0",
        "port=65535",
        "mountvers=3",
        "proto=tcp6",
        "sec=krb5p:sys",
        "lookupcache=pos",
        "local_lock=flock",
        "noresvport",
    ]
    spec = pvs(plan(nfs(extra_mount_options=options)))["llama-inference"]
    assert spec["mountOptions"] == ["nfsvers=4.1", "hard", *options, "ro"]
    spec = pvs(plan(nfs(nfs_version="3", extra_mount_options=["udp"])))["llama-inference"]
    assert spec["mountOptions"] == ["nfsvers=3", "hard", "udp", "ro"]
