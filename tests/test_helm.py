"""Every CSI driver Helm release the library can make, rendered by the real ``helm template`` (see
tests/tools.py) against the chart it pins, vendored under tests/charts/ (tests/charts/SOURCE.md).
The releases are those of every stack and example plan, plus small programs for the values
shapes no stack has (Pod Identity instead of IRSA, no driver role, another driver namespace or
service account name). A release fails when:

- its chart at its version is not vendored, or the render fails;
- a value the library passes is read by no template. Helm ignores unknown keys silently, so
  each leaf the library sets (a scalar, an empty mapping or list; list items by index, so
  ``node.tolerations[0].operator`` is one) is perturbed in turn, everything else as the library
  sets it: changed to another value of its type (a string also to ``""``, for templates that
  only test it), and removed. A leaf is read when some perturbation changes the rendered
  output (or makes the render fail: the chart reacted to it). A key that takes effect only
  together with another (``serviceAccount.annotations`` with ``serviceAccount.create``) is
  judged with that other key as the library sets it, so a key whose partner switches it off is
  caught too. Every chart here renders byte-identically twice (checked), so an unchanged
  output means Helm never looked at the leaf;
- the IRSA role annotation (``eks.amazonaws.com/role-arn``) the library sets under a
  component's values (``controller`` or ``node``) is not on exactly one rendered
  ServiceAccount that the component's pods (``controller``: a Deployment, ``node``: a
  DaemonSet) run as;
- a node DaemonSet does not tolerate every taint (FACTS.md: CSI node plugins must run on
  GPU-tainted nodes);
- a Pod Identity association the release waits for names a service account no pod of the
  driver runs as, or the IAM role in an IRSA annotation does not trust
  ``system:serviceaccount:<release namespace>:<the annotated ServiceAccount>`` (the chain from
  role to pod, end to end).

Renders are cached per (chart, namespace, values) and run on two threads."""

from __future__ import annotations

import copy
import json
import os
import subprocess
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, cast

import pytest
import yaml

from pulumi_modelstore.aws.ebs.driver import EbsCsiDriver
from pulumi_modelstore.aws.efs import EfsModelStore, EfsModelStoreArgs
from pulumi_modelstore.aws.s3 import MountpointS3ModelStore, MountpointS3ModelStoreArgs
from pulumi_modelstore.plan.engine import Plan
from tests import tools
from tests.conftest import CLUSTER, ROOT, plan

RELEASE = "kubernetes:helm.sh/v3:Release"
ASSOCIATION = "aws:eks/podIdentityAssociation:PodIdentityAssociation"
ROLE = "aws:iam/role:Role"
CHARTS = ROOT / "tests" / "charts"
ROLE_ARN = "eks.amazonaws.com/role-arn"
# Which pods run a chart component: what the library's values for it (their first key) mean.
COMPONENT_KIND = {"controller": "Deployment", "node": "DaemonSet", "serviceAccount": "Deployment"}
WORKLOADS = ("Deployment", "DaemonSet", "StatefulSet")

KeyPath = tuple[str | int, ...]


@dataclass(frozen=True)
class Release:
    """A Helm release as the library asks for it: what ``helm template`` needs."""

    name: str
    chart: str
    version: str
    namespace: str
    values: str
    """The values as sorted JSON (hashable, and YAML to Helm)."""

    @property
    def chart_dir(self) -> Path:
        return CHARTS / f"{self.chart}-{self.version}"


def release_of(state: dict[str, Any]) -> Release:
    inputs = state["inputs"]
    return Release(
        name=inputs["name"],
        chart=inputs["chart"],
        version=inputs["version"],
        namespace=inputs["namespace"],
        values=json.dumps(inputs.get("values", {}), sort_keys=True),
    )


# ---- programs for the values shapes no stack or example has ------------------------------------


def s3(**args: Any) -> Callable[[], Any]:
    fields: dict[str, Any] = {"cluster_name": CLUSTER, "readers": ["inference"], **args}
    return lambda: MountpointS3ModelStore("llama", cast(MountpointS3ModelStoreArgs, fields))


def efs(**args: Any) -> Callable[[], Any]:
    fields: dict[str, Any] = {"cluster_name": CLUSTER, "readers": ["inference"], **args}
    return lambda: EfsModelStore("llama", cast(EfsModelStoreArgs, fields))


def ebs(**args: Any) -> Callable[[], Any]:
    return lambda: EbsCsiDriver("ebs", {"cluster_name": CLUSTER, **args})


PROGRAMS: dict[str, Callable[[], Any]] = {
    # Driver-level credentials by IRSA on the node service account.
    "s3-irsa": s3(),
    "s3-pod-identity": s3(identity="pod-identity"),
    "s3-driver-namespace": s3(driver_namespace="storage"),
    "efs-no-role": efs(),
    "efs-pod-identity": efs(iam_authorization=True, identity="pod-identity"),
    "efs-node-sa": efs(iam_authorization=True, node_service_account="efs-node"),
    "ebs-irsa": ebs(),
    "ebs-pod-identity": ebs(identity="pod-identity", snapshot_controller="none"),
    "ebs-pod-identity-sa": ebs(identity="pod-identity", controller_service_account="ebs-ctl"),
    "ebs-controller-sa": ebs(controller_service_account="ebs-controller", tags={"team": "ml"}),
}


@pytest.fixture(scope="session")
def program_plans() -> dict[str, Plan]:
    return {pid: plan(build, fill=True) for pid, build in PROGRAMS.items()}


@pytest.fixture(scope="session")
def releases(
    filled_plans: dict[str, Plan], program_plans: dict[str, Plan]
) -> dict[Release, list[tuple[str, Plan]]]:
    """Every distinct release, with the plans (id, plan) it is in."""
    found: dict[Release, list[tuple[str, Plan]]] = {}
    for pid, p in {**filled_plans, **program_plans}.items():
        for state in p.by_type(RELEASE):
            found.setdefault(release_of(state), []).append((pid, p))
    return found


# ---- rendering ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rendered:
    ok: bool
    output: str
    """The manifests, or Helm's error."""


@cache
def render(release: Release) -> Rendered:
    """``helm template`` of ``release`` (cached: perturbations repeat)."""
    proc = subprocess.run(
        [
            str(tools.helm()),
            "template",
            release.name,
            str(release.chart_dir),
            "--namespace",
            release.namespace,
            "--values",
            "-",
        ],
        input=release.values,
        capture_output=True,
        text=True,
        check=False,
        # A render is a short process: Go's collector off saves a fifth of its CPU (peak memory
        # about 70 MB) and changes nothing in the output.
        env={**os.environ, "GOGC": "off"},
    )
    return Rendered(proc.returncode == 0, proc.stdout if proc.returncode == 0 else proc.stderr)


def render_all(many: list[Release]) -> list[Rendered]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(render, many))


def manifests(rendered: Rendered) -> list[dict[str, Any]]:
    """The rendered objects, parsed once per render: several checks read one render (the
    objects are only read)."""
    return list(_parsed(rendered.output))


# libyaml's loader where PyYAML has it (the same YAML, read in C): a render is up to 400 KB.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@cache
def _parsed(output: str) -> tuple[dict[str, Any], ...]:
    return tuple(d for d in yaml.load_all(output, Loader=_LOADER) if d)


# ---- leaves and their perturbations ---------------------------------------------------------


def leaves(value: Any, path: KeyPath = ()) -> Iterator[tuple[KeyPath, Any]]:
    """(path, value) of every leaf: scalars, and empty mappings and lists."""
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            yield from leaves(item, (*path, index))
    else:
        yield path, value


def show(path: KeyPath) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


_REMOVE = object()


def other_values(value: Any) -> list[Any]:
    """Values of the same type as ``value`` that differ from it, then removal."""
    if isinstance(value, bool):
        changed: list[Any] = [not value]
    elif isinstance(value, int | float):
        changed = [value + 1]
    elif isinstance(value, str):
        changed = [f"{value}-changed", ""] if value else ["changed"]
    elif isinstance(value, dict):
        changed = [{"modelstore-probe": "changed"}]
    elif isinstance(value, list):
        changed = [[{"modelstore-probe": "changed"}]]
    else:
        changed = ["changed"]
    return [*changed, _REMOVE]


def perturbed(values: dict[str, Any], path: KeyPath, new: Any) -> dict[str, Any]:
    out = copy.deepcopy(values)
    parent: Any = out
    for part in path[:-1]:
        parent = parent[part]
    if new is _REMOVE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return out


def with_values(release: Release, values: dict[str, Any]) -> Release:
    return Release(
        release.name,
        release.chart,
        release.version,
        release.namespace,
        json.dumps(values, sort_keys=True),
    )


def unread_leaves(release: Release) -> tuple[list[str], int]:
    """The leaves of ``release``'s values no template reads, and how many leaves there are."""
    base = render(release)
    values = json.loads(release.values)
    found = list(leaves(values))
    pending = {
        path: [with_values(release, perturbed(values, path, new)) for new in other_values(value)]
        for path, value in found
    }
    unread: list[KeyPath] = []
    # A leaf is read as soon as one of its perturbations renders otherwise than the base (or
    # fails): its other perturbations are not rendered. Each round renders the next
    # perturbation of every leaf still undecided, concurrently.
    while pending:
        render_all([tries[0] for tries in pending.values()])
        undecided: dict[KeyPath, list[Release]] = {}
        for path, tries in pending.items():
            first = render(tries[0])
            if first.ok and first.output == base.output:
                if tries[1:]:
                    undecided[path] = tries[1:]
                else:
                    unread.append(path)
        pending = undecided
    order = {path: i for i, (path, _) in enumerate(found)}
    return [show(path) for path in sorted(unread, key=order.__getitem__)], len(found)


# ---- the checks ---------------------------------------------------------------------------------


def check_release(release: Release) -> list[str]:
    """Every problem with ``release``, in words (empty: none)."""
    if not (release.chart_dir / "Chart.yaml").exists():
        return [f"chart {release.chart} {release.version} is not vendored under tests/charts/"]
    chart = yaml.safe_load((release.chart_dir / "Chart.yaml").read_text())
    assert (chart["name"], str(chart["version"])) == (release.chart, release.version)
    rendered = render(release)
    if not rendered.ok:
        return [f"helm template fails: {rendered.output.strip()}"]
    unread, _ = unread_leaves(release)
    problems = [f"value {key} is read by no template of the chart" for key in unread]
    problems += misplaced_role_annotations(release, manifests(rendered))
    problems += [
        f"DaemonSet {o['metadata']['name']} does not tolerate every taint"
        for o in manifests(rendered)
        if o.get("kind") == "DaemonSet"
        and not any(
            t.get("operator") == "Exists" and not t.get("key") and not t.get("effect")
            for t in o["spec"]["template"]["spec"].get("tolerations") or []
        )
    ]
    return problems


def pods_running_as(objects: list[dict[str, Any]], kinds: tuple[str, ...]) -> dict[str, str]:
    """Workload name -> the service account its pods run as, for workloads of ``kinds``."""
    return {
        f"{o['kind']}/{o['metadata']['name']}": o["spec"]["template"]["spec"].get(
            "serviceAccountName", "default"
        )
        for o in objects
        if o.get("kind") in kinds
    }


def annotated_service_accounts(objects: list[dict[str, Any]], arn: Any) -> list[str]:
    """The ServiceAccounts carrying the IRSA role ``arn``, Helm hooks' left out: the Velero
    chart copies the server's annotations onto its CRD-upgrade hook's ServiceAccount
    (``templates/upgrade-crds/serviceaccount-upgrade.yaml``), a pod the role's trust, pinned
    to the server's ServiceAccount, does not admit."""
    return [
        o["metadata"]["name"]
        for o in objects
        if o.get("kind") == "ServiceAccount"
        and (o["metadata"].get("annotations") or {}).get(ROLE_ARN) == arn
        and "helm.sh/hook" not in (o["metadata"].get("annotations") or {})
    ]


def misplaced_role_annotations(release: Release, objects: list[dict[str, Any]]) -> list[str]:
    values = json.loads(release.values)
    problems = []
    for path, arn in leaves(values):
        if not path or path[-1] != ROLE_ARN:
            continue
        component = str(path[0])
        kind = COMPONENT_KIND[component]
        annotated = annotated_service_accounts(objects, arn)
        pods = pods_running_as(objects, (kind,))
        if len(annotated) != 1:
            problems.append(
                f"{show(path)}: the role is on {len(annotated)} ServiceAccounts, not one"
            )
        elif annotated[0] not in pods.values():
            problems.append(
                f"{show(path)}: the role lands on ServiceAccount {annotated[0]}, but the "
                f"{component} pods run as {sorted(set(pods.values()))} ({sorted(pods)})"
            )
    return problems


def test_every_chart_renders_deterministically(
    releases: dict[Release, list[tuple[str, Plan]]],
) -> None:
    """Each vendored chart, with the values of a release the library makes of it, renders the
    same twice (a second ``helm template``, past the cache)."""
    checked = set()
    for release in sorted(releases, key=lambda r: (r.chart_dir.name, r.values)):
        if release.chart_dir.name in checked:
            continue
        checked.add(release.chart_dir.name)
        first = render(release)
        assert first.ok, first.output
        assert render.__wrapped__(release) == first, f"{release.chart} renders differently twice"
    assert checked == {p.parent.name for p in CHARTS.glob("*/Chart.yaml")}


def test_every_release_renders_and_reads_every_value(
    releases: dict[Release, list[tuple[str, Plan]]],
) -> None:
    problems = {
        f"{r.chart} {r.version} in {r.namespace} ({', '.join(pid for pid, _ in where)})": found
        for r, where in sorted(releases.items(), key=lambda kv: kv[0].values)
        if (found := check_release(r))
    }
    assert not problems, json.dumps(problems, indent=2)


def test_every_pinned_chart_and_values_shape_is_rendered(
    releases: dict[Release, list[tuple[str, Plan]]],
) -> None:
    """Every vendored chart is some release's, and every shape of values the library emits is
    among them (the programs above exist for the shapes no stack has)."""
    vendored = {p.parent.name for p in CHARTS.glob("*/Chart.yaml")}
    assert {r.chart_dir.name for r in releases} == vendored
    shapes = {
        (r.chart, r.namespace, tuple(show(p) for p, _ in leaves(json.loads(r.values))))
        for r in releases
    }
    for needed in (
        ("aws-mountpoint-s3-csi-driver", "kube-system", ROLE_ARN),
        ("aws-mountpoint-s3-csi-driver", "kube-system", "podLabels"),
        ("aws-mountpoint-s3-csi-driver", "storage", "tolerateAllTaints"),
        ("aws-efs-csi-driver", "kube-system", ROLE_ARN),
        ("aws-efs-csi-driver", "kube-system", "podLabels"),
        ("aws-ebs-csi-driver", "kube-system", ROLE_ARN),
        ("aws-ebs-csi-driver", "kube-system", "controller.serviceAccount.annotations"),
        ("aws-ebs-csi-driver", "kube-system", "extraVolumeTags"),
        ("velero", "velero", ROLE_ARN),
        ("velero", "velero", "azure.workload.identity/client-id"),
        ("velero", "velero", "azure.workload.identity/use"),
    ):
        chart, namespace, part = needed
        assert any(
            c == chart and ns == namespace and any(part in key for key in keys)
            for c, ns, keys in shapes
        ), f"no release of {chart} in {namespace} sets {part}"


def test_pod_identity_associations_name_the_driver_pods_service_account(
    releases: dict[Release, list[tuple[str, Plan]]],
) -> None:
    """A Pod Identity association a release waits for (its dependencies) is in the release's
    namespace and names the service account of some pod the chart runs."""
    checked = 0
    for release, where in releases.items():
        pods = pods_running_as(manifests(render(release)), WORKLOADS)
        for pid, p in where:
            (state,) = [s for s in p.by_type(RELEASE) if release_of(s) == release]
            for association in p.by_type(ASSOCIATION):
                if association["urn"] not in state["dependencies"]:
                    continue
                inputs = association["inputs"]
                assert (inputs["namespace"], inputs["serviceAccount"]) in {
                    (release.namespace, sa) for sa in pods.values()
                }, (
                    f"{pid}: the association names {inputs['namespace']}/"
                    f"{inputs['serviceAccount']}, the {release.chart} pods run in "
                    f"{release.namespace} as {pods}"
                )
                checked += 1
    assert checked >= 3  # Mountpoint, EFS and EBS by Pod Identity


def trusted_subjects(role: dict[str, Any]) -> set[str]:
    """The ``<issuer>:sub`` values a role's trust policy accepts."""
    policy = json.loads(role["inputs"]["assumeRolePolicy"])
    found: set[str] = set()
    for statement in policy["Statement"]:
        for key, value in statement.get("Condition", {}).get("StringEquals", {}).items():
            if key.endswith(":sub"):
                found |= {value} if isinstance(value, str) else set(value)
    return found


def test_irsa_roles_trust_the_service_account_their_annotation_lands_on(
    releases: dict[Release, list[tuple[str, Plan]]],
) -> None:
    checked = 0
    for release, where in releases.items():
        objects = manifests(render(release))
        for path, arn in leaves(json.loads(release.values)):
            if not path or path[-1] != ROLE_ARN:
                continue
            (sa,) = annotated_service_accounts(objects, arn)
            subject = f"system:serviceaccount:{release.namespace}:{sa}"
            for pid, p in where:
                (role,) = [r for r in p.by_type(ROLE) if r["outputs"].get("arn") == arn]
                assert subject in trusted_subjects(role), (
                    f"{pid}: {arn} trusts {sorted(trusted_subjects(role))}, the {release.chart} "
                    f"pods run as {subject}"
                )
                checked += 1
    assert checked >= 6


# ---- canaries: the checks above catch what they are for ---------------------------------------


def nfs_release(values: dict[str, Any]) -> Release:
    return Release("csi-driver-nfs", "csi-driver-nfs", "4.13.4", "kube-system", json.dumps(values))


def test_canary_an_unknown_value_key_is_caught() -> None:
    release = nfs_release({"node": {"tolerations": [{"operator": "Exists"}], "tolerateAll": True}})
    assert check_release(release) == ["value node.tolerateAll is read by no template of the chart"]


def test_canary_a_broken_render_is_caught() -> None:
    # The chart's controller template indexes its own values: a string where it expects a map.
    (problem,) = check_release(nfs_release({"controller": "broken"}))
    assert problem.startswith("helm template fails: Error:"), problem


def test_canary_a_role_on_the_wrong_service_account_is_caught() -> None:
    values = {
        "controller": {"serviceAccount": {"annotations": {ROLE_ARN: "arn:aws:iam::1:role/r"}}}
    }
    release = Release(
        "aws-efs-csi-driver", "aws-efs-csi-driver", "4.4.1", "kube-system", json.dumps(values)
    )
    objects = manifests(render(release))
    values["node"] = values.pop("controller")  # says it is meant for the node pods
    assert misplaced_role_annotations(with_values(release, values), objects) == [
        "node.serviceAccount.annotations.eks.amazonaws.com/role-arn: the role lands on "
        "ServiceAccount efs-csi-controller-sa, but the node pods run as ['efs-csi-node-sa'] "
        "(['DaemonSet/efs-csi-node'])"
    ]


def test_canary_a_node_plugin_kept_off_tainted_nodes_is_caught() -> None:
    release = Release(
        "aws-fsx-csi-driver",
        "aws-fsx-csi-driver",
        "1.17.0",
        "kube-system",
        json.dumps({"node": {"tolerateAllTaints": False}}),
    )
    assert check_release(release) == ["DaemonSet fsx-csi-node does not tolerate every taint"]


def test_a_release_of_a_chart_not_vendored_is_refused() -> None:
    release = Release("x", "aws-fsx-csi-driver", "1.16.0", "kube-system", "{}")
    assert check_release(release) == [
        "chart aws-fsx-csi-driver 1.16.0 is not vendored under tests/charts/"
    ]
