"""Write the snapshot-controller chart's ``crds.yaml``, the file its ``make crds`` builds when the
chart is packaged (piraeusdatastore/helm-charts charts/snapshot-controller/Makefile) and its
``templates/crds.yaml`` reads with ``.Files.Get``: the six CRDs of
kubernetes-csi/external-snapshotter ``client/config/crd/`` at the chart's appVersion tag, with
the group snapshot contents CRD given the conversion webhook and the cert-manager annotation as
the Makefile's yq and sed steps give them.

Run: ``python -m tests.charts.snapshot_crds <external-snapshotter git dir> <tag> <chart dir>``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

FILES = (
    "snapshot.storage.k8s.io_volumesnapshotclasses.yaml",
    "snapshot.storage.k8s.io_volumesnapshots.yaml",
    "snapshot.storage.k8s.io_volumesnapshotcontents.yaml",
    "groupsnapshot.storage.k8s.io_volumegroupsnapshotclasses.yaml",
    "groupsnapshot.storage.k8s.io_volumegroupsnapshotcontents.yaml",
    "groupsnapshot.storage.k8s.io_volumegroupsnapshots.yaml",
)
WEBHOOK_CRD = "groupsnapshot.storage.k8s.io_volumegroupsnapshotcontents.yaml"
# What the Makefile's yq/sed steps leave in that CRD: the annotation inside `if .InsertCaFrom`,
# and spec.conversion (added last in spec) inside `if .WebhookEnabled`.
ANNOTATION = (
    "    {{ if .InsertCaFrom }}cert-manager.io/inject-ca-from: '{{ .InsertCaFrom }}'{{ end }}\n"
)
CONVERSION = (
    "{{- if .WebhookEnabled }}\n"
    "  conversion:\n"
    "    strategy: Webhook\n"
    "    webhook:\n"
    "      conversionReviewVersions:\n"
    "        - v1\n"
    "      clientConfig: {{ toJson .ClientConfig }}\n"
    "{{- end }}\n"
)


def crds(git_dir: str, tag: str) -> str:
    """The file's text, from the CRDs at ``tag`` in the external-snapshotter repository."""
    out = "# DO NOT EDIT; Automatically created by make crds\n"
    for name in FILES:
        text = subprocess.run(
            ["git", "-C", git_dir, "show", f"{tag}:client/config/crd/{name}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        if name == WEBHOOK_CRD:
            assert text.count("\n  annotations:\n") == 1, f"{name}: no metadata.annotations"
            text = text.replace("\n  annotations:\n", "\n  annotations:\n" + ANNOTATION)
            assert text.endswith("\n") and "\n  conversion:" not in text
            text += CONVERSION
        out += text
    return out


if __name__ == "__main__":
    git_dir, tag, chart = sys.argv[1:]
    Path(chart, "crds.yaml").write_text(crds(git_dir, tag))
