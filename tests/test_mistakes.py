"""The ten most common mistakes a new user makes (issue 18), each with the exact message that
says how to fix it: the nearest valid name, a shortened list pointing to the reference,
booleans as YAML writes them, "missing" for a missing field, one line for a cluster of the wrong
kind. Each is refused before anything but the stack registers."""

from __future__ import annotations

import contextlib
import io
import textwrap
from pathlib import Path

import pulumi_aws as aws
import pulumi_gcp as gcp
import pytest

from pulumi_modelstore import validate_all
from pulumi_modelstore.aws import EfsModelStore, FsxLustreModelStore, MountpointS3ModelStore
from pulumi_modelstore.local import LocalModelStore
from pulumi_modelstore.plan.engine import PlanError, plan_directory
from pulumi_modelstore.plan.project import ProjectError
from tests.conftest import assert_refused, plan

PROGRAM = "from pulumi_modelstore.program import main\nmain()\n"
PROJECT = "name: modelstore\nruntime: python\n"
EKS = (
    "prod: {kind: eks, attributes: {vpc_id: vpc-0123456789abcdef0, cluster_subnet_ids: "
    "[subnet-0123456789abcdef0], node_security_group_ids: [sg-0123456789abcdef0], "
    "region: us-east-1}}"
)

# (mistake, the stack's config under `config:`, the message)
MISTAKES: list[tuple[str, str, str]] = [
    (
        "a misspelt field",
        f"""
        modelstore:clusters: {{{EKS}}}
        modelstore:stores:
          llama: {{backend: efs, cluster: prod, readers: [a], iam_authorisation: true}}
        """,
        "modelstore:stores.llama.iam_authorisation must be a field of backend efs: one of the 39 "
        "fields listed by `modelstore fields EfsModelStore` (nearest: iam_authorization), got "
        "'iam_authorisation'; did you mean `iam_authorization`?",
    ),
    (
        "a misspelt backend",
        """
        modelstore:stores:
          llama: {backend: fsx-lustr, readers: [a]}
        """,
        "modelstore:stores.llama.backend must be one of azure-blob, azure-files-nfs, ebs-snapshot, "
        "efs, fsx-lustre, gcs-fuse, hyperdisk-ml, local, mountpoint-s3, nfs, got 'fsx-lustr'; did "
        "you mean `fsx-lustre`?",
    ),
    (
        "a misspelt cluster key",
        f"""
        modelstore:clusters: {{{EKS}}}
        modelstore:stores:
          llama: {{backend: efs, cluster: prd, readers: [a]}}
        """,
        "modelstore:stores.llama.cluster must be one of the keys of modelstore:clusters (prod), "
        "got 'prd'; did you mean `prod`?",
    ),
    (
        "a wrong cluster kind",
        """
        modelstore:clusters:
          prod: {kind: gke, attributes: {vpc_id: vpc-0123456789abcdef0, region: us-east-1}}
        modelstore:stores:
          llama: {backend: efs, cluster: prod, readers: [a]}
        """,
        "modelstore:clusters.prod.kind must be eks (the kind that takes attributes.region, "
        "attributes.vpc_id), got 'gke'",
    ),
    (
        "a boolean as a string",
        """
        modelstore:stores:
          llama: {backend: local, host_path: /models, readers: [a], protect: "false"}
        """,
        "modelstore:stores.llama.protect must be true or false, got 'false'",
    ),
    (
        "a missing required field",
        """
        modelstore:stores:
          llama: {backend: nfs, share: /exports/models, readers: [a]}
        """,
        "modelstore:stores.llama.server is missing; it must be set to the NFS server's hostname "
        "or IP address (e.g. nas01.corp.example or 10.0.0.2; the export path goes in share)",
    ),
    (
        "a bad namespace",
        """
        modelstore:stores:
          llama: {backend: local, host_path: /models, readers: [Inference_Team]}
        """,
        "modelstore:stores.llama.readers must be a DNS-1123 label (lowercase letters, digits and "
        "'-', starting and ending with a letter or digit, at most 63 characters), got "
        "'Inference_Team'",
    ),
    (
        "a store in a cluster kind it does not take",
        """
        modelstore:clusters:
          dev: {kind: gke, location: europe-west4, project: my-project}
        modelstore:stores:
          llama: {backend: efs, cluster: dev, readers: [a]}
        """,
        "modelstore:stores.llama.cluster must be a cluster of kind eks for backend efs "
        "(modelstore:clusters.dev.kind is gke), got 'dev'",
    ),
]


def _project(tmp_path: Path, config: str) -> Path:
    (tmp_path / "Pulumi.yaml").write_text(PROJECT)
    (tmp_path / "__main__.py").write_text(PROGRAM)
    body = textwrap.indent(textwrap.dedent(config).strip("\n"), "  ")
    (tmp_path / "Pulumi.dev.yaml").write_text(f"config:\n{body}\n")
    return tmp_path


@pytest.mark.parametrize(
    ("config", "message"), [m[1:] for m in MISTAKES], ids=[m[0] for m in MISTAKES]
)
def test_a_common_mistake_in_a_stack_says_how_to_fix_it(tmp_path, config, message):
    assert_refused(_project(tmp_path, config), message)


def test_a_camel_case_field_in_a_python_program_names_the_python_spelling():
    # The config program takes camelCase; a Python program takes the Python name only.
    assert_refused(
        lambda: LocalModelStore("llama", {"hostPath": "/models", "readers": ["a"]}),  # type: ignore[typeddict-unknown-key]
        "llama: field name must be one of the 15 fields listed by "
        "`modelstore fields LocalModelStore` (nearest: host_path, mount_path), got 'hostPath'; "
        "did you mean `host_path`?",
    )


def test_an_unknown_stack_names_the_nearest(tmp_path):
    directory = _project(tmp_path, "modelstore:stores: {}\n")
    with pytest.raises(ProjectError) as err:
        plan_directory(directory, stack="dve")
    assert str(err.value) == (
        f"stack 'dve' not found in {directory}; stacks: dev; did you mean `dev`?"
    )


def test_validate_all_reports_every_store_of_a_python_program_at_once():
    def program() -> None:
        stores = [
            (LocalModelStore, "llama", {"host_path": "/models", "readers": ["a"], "protect": "no"}),
            (LocalModelStore, "t5", {"hostPath": "/models", "readers": ["a"]}),
        ]
        validate_all(stores)
        for store_class, name, args in stores:
            store_class(name, args)

    assert_refused(
        program,
        "llama: protect must be true or false, got 'no'\n"
        "t5: field name must be one of the 15 fields listed by `modelstore fields LocalModelStore` "
        "(nearest: host_path, mount_path), got 'hostPath'; did you mean `host_path`?",
    )


def test_every_component_the_messages_point_at_lists_its_fields():
    # An unknown field's message points to `modelstore fields <component>`, a command every
    # install has (a pip user has no docs/ folder): it lists every field of that component.
    from pulumi_modelstore.cli import main
    from pulumi_modelstore.docs import _args_type
    from pulumi_modelstore.errors import reference
    from pulumi_modelstore.fields import fields_of
    from pulumi_modelstore.schema import components

    for component in components():
        command = reference(component.__name__).strip("`").split()
        assert command[:2] == ["modelstore", "fields"], command
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(command[1:]) == 0, component
        listed = {line.split(" (")[0] for line in out.getvalue().splitlines()[1:]}
        assert set(fields_of(_args_type(component))) <= listed, component


@pytest.mark.parametrize(
    "store_class", [EfsModelStore, FsxLustreModelStore, MountpointS3ModelStore]
)
def test_a_cluster_made_in_the_program_given_by_its_name_names_from_cluster(store_class):
    # The platform stack makes its cluster and passes its name (an Output) the way an existing
    # cluster is named: refused with the way to do it, before the store registers anything.
    def program() -> None:
        cluster = aws.eks.Cluster(
            "ml-eks", role_arn="arn:aws:iam::123456789012:role/eks", vpc_config={"subnet_ids": []}
        )
        store_class("llama", {"cluster_name": cluster.name, "readers": ["inference"]})

    with pytest.raises(PlanError) as err:
        plan(program)
    assert str(err.value) == (
        "llama: cluster_name must be the name of an existing EKS cluster, a plain string (it "
        "is looked up before deploy); for a cluster this program makes, give cluster="
        "EksCluster.from_cluster('<name>', <the cluster>, ...), got '<Output>'"
    )
    registered = [urn.split("::")[2].rsplit("$", 1)[-1] for urn in err.value.registered]
    assert registered == ["pulumi:pulumi:Stack", "aws:eks/cluster:Cluster"]


def test_a_gke_cluster_made_in_the_program_given_by_its_name_names_from_cluster():
    from pulumi_modelstore.gcp import GcsFuseModelStore

    def program() -> None:
        cluster = gcp.container.Cluster("ml-gke", location="us-central1")
        GcsFuseModelStore(
            "llama",
            {"cluster_name": cluster.name, "location": "us-central1", "readers": ["inference"]},
        )

    with pytest.raises(PlanError) as err:
        plan(program)
    assert str(err.value) == (
        "llama: cluster_name must be the name of an existing GKE cluster, a plain string (it "
        "is looked up before deploy); for a cluster this program makes, give cluster="
        "GkeCluster.from_cluster('<name>', <the cluster>, location=...), got '<Output>'"
    )
    registered = [urn.split("::")[2].rsplit("$", 1)[-1] for urn in err.value.registered]
    assert registered == ["pulumi:pulumi:Stack", "gcp:container/cluster:Cluster"]


def test_modelstore_fields_lists_what_it_knows_and_refuses_a_name_in_one_line():
    from pulumi_modelstore.cli import main
    from pulumi_modelstore.program import installed_backends

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(["fields"]) == 0
        assert main(["fields", "model"]) == 0
        assert main(["fields", "efs-store"]) == 1
    listing = out.getvalue()
    for backend, cls in installed_backends().items():
        assert f"  {backend:<16} {cls.__name__}\n" in listing
    assert "section model (pulumi_modelstore.modelsection.ModelSection): " in listing
    assert "keep_revisions (keepRevisions), default `2`\n" in listing
    lines = err.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "error: 'efs-store' is no backend, component or section: one of azure-blob, "
    )


def test_an_aks_cluster_made_in_the_program_given_by_its_name_names_from_cluster():
    import pulumi_azure_native as azure_native

    from pulumi_modelstore.azure import AzureBlobModelStore

    def program() -> None:
        cluster = azure_native.containerservice.ManagedCluster(
            "ml-aks", resource_group_name="ml-rg", location="eastus"
        )
        AzureBlobModelStore(
            "llama",
            {
                "cluster_name": cluster.name,
                "cluster_resource_group_name": "ml-rg",
                "readers": ["inference"],
            },
        )

    with pytest.raises(PlanError) as err:
        plan(program)
    assert str(err.value) == (
        "llama: cluster_name must be the name of an existing AKS cluster, a plain string (it "
        "is looked up before deploy); for a cluster this program makes, give cluster="
        "AksCluster.from_cluster('<name>', <the cluster>, resource_group_name=..., "
        "location=...), got '<Output>'"
    )
