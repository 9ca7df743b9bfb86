"""The ``model`` section every store takes: which model goes in, at which pinned revision, and
how each backend gets it in (:class:`Fill`, a store class's ``model_fill``).

The field rules reuse the seed program's own parser (``model/sources.py``), so a source or
revision is refused with the same words wherever it is written. Everything here is checked
before a store registers anything.
"""

# No `from __future__ import annotations`: the component analyzer reads ModelSection's
# annotations as objects.

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Required, TypedDict

import pulumi

from . import validation as v
from .errors import ModelStoreInputError
from .model.names import AZURE_RESOURCE_GROUP_RULE, is_azure_resource_group_name
from .model.sources import INCLUDE_RULE, SourceError, can_match, check_revision, parse_source

# A python:3.12-slim image pinned by its multi-arch index digest, so every node pulls the same
# bytes. The digest is the one two public Dockerfiles pin for python:3.12-slim (found with the
# code index, 2026-12-01: one notes it as "the canonical index", its amd64 child
# sha256:2fe5997d...). Only Python's standard library is used: the programs come from a
# ConfigMap (model/bundle.py).
DEFAULT_IMAGE = (
    "python:3.12-slim@sha256:78387bc3881b8273120a12ebe6c1ab22b018ccc2c9adf565ae1ac9b536e184ea"
)
VERIFY_MODES = ("auto", "all", "sample")
# The files `verify: sample` hashes per run (the verify program's --sample N): a sharded model
# of 30-60 safetensors files gets a different eighth or so checked on every run.
SAMPLE_FILES = 8
MIN_KEEP_REVISIONS = 2
# A Hugging Face user access token (huggingface_hub's docs: tokens start with "hf_"): refused
# anywhere in a store's args, as is any key named like a token.
HF_TOKEN = re.compile(r"hf_[A-Za-z0-9]{20,}")
# What an error shows for a token's value.
REDACTED = "<redacted>"
# The field that takes a token (as a Pulumi secret): the one place a literal is not refused.
TOKEN_FIELD = "model.token"
TOKEN_KEYS = re.compile(r"(?i)^(hf_?)?token$|^api_?key$|^password$")
SECTION = "model"


class TokenSecret(TypedDict):
    """A key of a Kubernetes Secret in the seed Job's namespace."""

    name: str
    """The Secret's name (a DNS-1123 subdomain)."""
    key: str
    """The key holding the token."""


class ModelSection(TypedDict, total=False):
    """Which model a store holds and how it gets in: seeded once by a Job (or natively where
    the storage fills itself), verified as readers see it, and mounted at its pinned revision.
    """

    source: Required[str]
    """Where the model comes from (required): ``hf://<org>/<repo>``, ``s3://<bucket>/<prefix>``,
    ``gs://<bucket>/<prefix>`` or ``az://<account>/<container>/<prefix>``. Which of them a
    backend takes, and how, is the store class's ``model_fill``. The seed Job's identity is
    granted read on an object-store source (``ModelStore.source_access``), no reader's is; the
    key of an SSE-KMS ``s3://`` source is not: its key policy must let the seed Job's role
    decrypt."""
    revision: Required[str]
    """The pinned revision (required): for ``hf://`` a 40-hex commit SHA (a branch or tag moves
    and is refused); for an object store a version label, one path segment. It names
    ``revisions/<revision>/``, what readers mount."""
    include: Sequence[str]
    """fnmatch patterns of the files to take, matched as huggingface_hub matches
    ``allow_patterns`` (``*`` crosses ``/``; a pattern ending in ``/``, such as ``onnx/``,
    takes everything under that folder); a list, never one string. The manifest records
    them: a changed list seeds the revision anew, or is refused while readers mount it.
    Refused where the storage imports the source itself (FSx for Lustre's ``s3://``,
    Hyperdisk ML): readers see every file there. Default: every file."""
    token: pulumi.Input[str]
    """The source's token as a Pulumi secret: an Output (``pulumi.Config().require_secret``,
    another stack's secret output), or a string the store wraps as one. The store makes the
    Secret ``<claim>-model-token`` (key ``token``) in the seed Job's namespace before the seed
    Job, which mounts it as a file; plans and outputs show ``[secret]``. In stack config:
    ``modelstore:tokens.<store>``, set with ``pulumi config set --secret``. Refused beside
    ``token_secret`` and for a source other than ``hf://``. Default: none."""
    token_secret: TokenSecret
    """The Secret key holding the source's token (``{name, key}``), in the seed Job's
    namespace, for a Secret that exists before the seed Job runs (``token`` makes one);
    mounted as a file, never put in the Job spec. Default: none (a public model)."""
    keep_revisions: int
    """How many published revisions the seed keeps. Default: ``2``, the least allowed: the
    pinned revision and the previous one, which readers still mount during a rollout (a
    revision removed under a live ``subPath`` mount breaks it)."""
    namespace: str
    """The seed Job's namespace. Default: ``<store>-loader``, created by the store and
    labelled as its own. A namespace named here is created only with ``create_namespaces``."""
    verify: str
    """What each reader namespace's verification Job hashes: ``auto`` (default) every file's
    sha256 when the model is at most the verify program's whole-model threshold (32 GiB),
    else a random sample of that size; ``all`` every file; ``sample`` 8 random files.
    Default: ``auto``."""
    image: str
    """The image the seed, verification and gate containers run (Python 3 is all they need).
    Default: ``python:3.12-slim`` pinned by digest."""
    manifest_sha256: str
    """The published manifest's digest (``sha256:<hex>``, what the seed's termination message
    and the store's ``model_manifest_sha256`` output show). Default: none. Pin it after the
    first seed: the seed and verification Jobs then refuse any other manifest, and a seed
    anew (a store rebuilt) publishes only files that give it (the digest leaves out the
    publish time)."""
    source_resource_group: str
    """For an ``az://<account>/<container>/<prefix>`` source only: the resource group of the
    source storage account, in the cluster's subscription. The seed Job's identity gets
    Storage Blob Data Reader on the source container there (Azure RBAC's narrowest scope for
    it: the grant covers the container, not only the prefix). Refused for other sources.
    Default: the store's own resource group (``resource_group_name``, else the cluster's)."""


@dataclass(frozen=True)
class Fill:
    """How a model from one source scheme gets into a store: ``job`` (the seed Job writes it as
    a writer consumer), ``native`` (the storage fills itself) or ``refused``; ``reason`` says
    why a source is refused, or, for a native fill not yet driven by the section, what to use
    meanwhile."""

    how: str
    reason: str = ""
    wired: bool = True
    publish: str = ""
    """For a native fill: the seed program's ``--publish`` mode that publishes what the storage
    filled (``imported``: a seed Job, as the loader namespace's writer, hashes the files and
    writes the manifest). Default: empty, no Job runs."""
    manifest: bool = True
    """Whether the store holds the revision's manifest (``.modelstore/<revision>/
    manifest.json``), so readers are gated on it and verified against it. Default: ``True``."""
    root: bool = False
    """Whether the revision is the volume's root (one revision per volume, the manifest's
    ``.modelstore/<revision>/`` beside its files: Hyperdisk ML) instead of
    ``revisions/<revision>/``: readers then mount the root. Default: ``False``."""

    @property
    def job(self) -> bool:
        """Whether a seed Job runs in the loader namespace (to seed, or to publish)."""
        return self.how == "job" or bool(self.publish)

    @property
    def refusal(self) -> str | None:
        """The reason a model section with this source is refused, or None."""
        if self.how == "refused" or (self.how == "native" and not self.wired):
            return self.reason
        return None


JOB = Fill("job")
CLOUDS = {"s3": "AWS", "gs": "Google Cloud", "az": "Azure"}
OBJECT_SCHEMES = tuple(CLOUDS)


def job_fills(
    *,
    cloud: str | None,
    takes_writers: bool = True,
    native: Mapping[str, Fill] | None = None,
    no_writers: str = "",
) -> Mapping[str, Fill]:
    """A backend's ``model_fill``: ``hf://`` by the seed Job wherever it can write; an object
    store only from the store's own cloud (``cloud``: its scheme, ``s3``/``gs``/``az``; None
    for NFS and local), since the seed Job runs as the store's cloud identity; ``native``
    overrides per scheme; ``no_writers``: why a store without writers takes no Job."""
    fills: dict[str, Fill] = {}
    for scheme in ("hf", *OBJECT_SCHEMES):
        if not takes_writers:
            fills[scheme] = Fill("refused", no_writers)
        elif scheme == "hf" or scheme == cloud:
            fills[scheme] = JOB
        elif cloud is None:
            fills[scheme] = Fill(
                "refused",
                f"the seed Job of a store with no cloud identity reads no {CLOUDS[scheme]} "
                f"bucket: stage the model on Hugging Face or copy it in as a writer",
            )
        else:
            fills[scheme] = Fill(
                "refused",
                f"the seed Job runs as the store's {CLOUDS[cloud]} identity, which cannot read "
                f"{CLOUDS[scheme]} storage: copy the model to a {cloud}:// bucket first",
            )
    fills.update(native or {})
    return MappingProxyType(fills)


@dataclass(frozen=True)
class Model:
    """The parsed section."""

    source: str
    scheme: str
    revision: str
    include: tuple[str, ...]
    token_secret: tuple[str, str] | None
    """An existing Secret's (name, key)."""
    keep_revisions: int
    namespace: str
    namespace_is_default: bool
    verify: str
    image: str
    manifest_sha256: str | None
    source_resource_group: str | None = None
    token: pulumi.Output[str] | None = None
    """``model.token`` as a secret Output, which the store makes into the Secret
    ``<claim>-model-token``."""

    @property
    def revision_path(self) -> str:
        """Where the revision's files are under the store root (``model/layout.py``)."""
        return f"revisions/{self.revision}"

    @property
    def manifest_dir(self) -> str:
        return f".modelstore/{self.revision}"


_FIELDS = tuple(ModelSection.__annotations__)
_MANIFEST_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def _field(name: str) -> str:
    return f"{SECTION}.{name}"


def _from_source_error(store: str, field: str, value: Any, error: SourceError) -> None:
    """The sources' own message (``<what> must be <allowed>, got <value>``) as this store's
    error naming the section's field: one set of words for the program and the plan."""
    head = str(error).rpartition(", got ")[0]
    raise ModelStoreInputError(store, _field(field), value, head.partition(" must be ")[2])


def parse_model(
    store: str, section: Any, fills: Mapping[str, Fill], claim_name: str
) -> Model | None:
    """The section's rules; raises one :class:`ModelStoreInputError` listing every problem.
    ``fills``: the store class's ``model_fill``; ``claim_name``: names the default
    namespace's check. None for no section."""
    if section is None:
        return None
    if not isinstance(section, Mapping):
        raise ModelStoreInputError(store, SECTION, section, "a mapping of model fields")
    errors: list[ModelStoreInputError] = []

    def check(rule: Any, *args: Any) -> Any:
        try:
            return rule(*args)
        except ModelStoreInputError as error:
            errors.extend(error.errors)
            return None

    unknown = sorted(str(k) for k in section if k not in _FIELDS)
    for key in unknown:
        errors.append(
            ModelStoreInputError(
                store, f"{SECTION} field name", key, f"one of {', '.join(_FIELDS)}"
            )
        )
    source = section.get("source")
    revision = section.get("revision")
    parsed = check(_source, store, source, fills)
    if parsed is not None:
        check(_revision, store, parsed, revision)
    elif revision is None or not isinstance(revision, str):
        check(_revision, store, None, revision)
    include = section.get("include") or ()
    before = len(errors)
    check(_include_list, store, include)
    if len(errors) == before:
        check(_include, store, include)
    if include and parsed is not None and fills[parsed].publish == "imported":
        errors.append(
            ModelStoreInputError(
                store,
                _field("include"),
                list(include),
                f"unset for a {parsed}:// source this store imports itself (the storage "
                f"imports every file under the source and readers see them all: publish only "
                f"the files to serve there)",
            )
        )
    token = check(_token_secret, store, section.get("token_secret"))
    given_token = check(
        _token, store, section.get("token"), section.get("token_secret"), claim_name, parsed
    )
    keep = section.get("keep_revisions", MIN_KEEP_REVISIONS)
    check(_keep_revisions, store, keep)
    given_ns = section.get("namespace")
    namespace = given_ns if given_ns is not None else f"{store}-loader"
    ns_field = (
        _field("namespace")
        if given_ns is not None
        else _field("namespace (default: <store>-loader)")
    )
    check(v.dns_label, store, ns_field, namespace)
    verify = section.get("verify", "auto")
    check(v.one_of, store, _field("verify"), verify, VERIFY_MODES)
    image = section.get("image", DEFAULT_IMAGE)
    check(_image, store, image)
    digest = section.get("manifest_sha256")
    if digest is not None and not (isinstance(digest, str) and _MANIFEST_DIGEST.fullmatch(digest)):
        errors.append(
            ModelStoreInputError(
                store, _field("manifest_sha256"), digest, "sha256:<64 lowercase hex characters>"
            )
        )
    source_group = section.get("source_resource_group")
    if source_group is not None and not is_azure_resource_group_name(source_group):
        errors.append(
            ModelStoreInputError(
                store, _field("source_resource_group"), source_group, AZURE_RESOURCE_GROUP_RULE
            )
        )
    elif source_group is not None and parsed is not None and parsed != "az":
        errors.append(
            ModelStoreInputError(
                store,
                _field("source_resource_group"),
                source_group,
                "unset unless model.source is az:// (it names the resource group of the source "
                "storage account)",
            )
        )
    if errors:
        raise ModelStoreInputError.combine(errors)
    assert parsed is not None and isinstance(source, str) and isinstance(revision, str)
    return Model(
        source=source,
        scheme=parsed,
        revision=revision,
        include=tuple(include),
        token_secret=token,
        keep_revisions=keep,
        namespace=namespace,
        namespace_is_default=given_ns is None,
        verify=verify,
        image=image,
        manifest_sha256=digest,
        source_resource_group=source_group,
        token=given_token,
    )


def _source(store: str, source: Any, fills: Mapping[str, Fill]) -> str:
    """The source parses (the seed program's parser), and the backend takes its scheme."""
    if not isinstance(source, str):
        raise ModelStoreInputError(
            store, _field("source"), source, "hf://<org>/<repo>, s3://, gs:// or az:// (required)"
        )
    # A scheme the store refuses is said first: a well-formed name would not help.
    named, sep, _ = source.partition("://")
    if sep and fills.get(named) is not None and fills[named].refusal is not None:
        scheme = named
    else:
        try:
            scheme = parse_source(source).scheme
        except SourceError as error:
            _from_source_error(store, "source", source, error)
    fill = fills.get(scheme)
    if fill is None:
        allowed = ", ".join(f"{s}://" for s in fills)
        raise ModelStoreInputError(
            store,
            _field("source"),
            source,
            f"a source the seed Job can read ({allowed}): a {scheme}:// path is on the machine "
            f"running pulumi, not in the cluster",
        )
    if fill.refusal is not None:
        raise ModelStoreInputError(
            store,
            _field("source"),
            source,
            f"a source this store takes ({_taken(fills)}): {scheme}:// is refused because "
            f"{fill.refusal}",
        )
    return scheme


def _taken(fills: Mapping[str, Fill]) -> str:
    taken = [f"{s}://" for s, f in fills.items() if f.refusal is None]
    return ", ".join(taken) if taken else "none yet"


def _revision(store: str, scheme: str | None, revision: Any) -> None:
    if not isinstance(revision, str):
        raise ModelStoreInputError(
            store,
            _field("revision"),
            revision,
            "a pinned revision (required): a commit SHA for hf://, else a version label",
        )
    if scheme is None:
        return
    try:
        check_revision(scheme, revision)
    except SourceError as error:
        _from_source_error(store, "revision", revision, error)


def _include_list(store: str, include: Any) -> None:
    """A list of patterns; a string is refused (the seed would read it one character at a
    time, ``*`` among them perhaps: every file)."""
    if isinstance(include, str):
        raise ModelStoreInputError(
            store,
            _field("include"),
            include,
            f"a list of fnmatch patterns, such as [{include!r}] (a string would be read one "
            f"character at a time)",
        )
    v.string_list(store, _field("include"), include)


def _token_secret(store: str, value: Any) -> tuple[str, str] | None:
    if value is None:
        return None
    field = _field("token_secret")
    if (
        not isinstance(value, Mapping)
        or set(value) != {"name", "key"}
        or not all(isinstance(value[k], str) for k in ("name", "key"))
    ):
        raise ModelStoreInputError(
            store, field, value, "{name: <Secret name>, key: <its key>} (a Secret, never a value)"
        )
    v.dns_subdomain(store, f"{field}.name", value["name"])
    # ConfigMap and Secret keys: IsConfigMapKey (kubernetes/apimachinery
    # pkg/util/validation/validation.go): [-._a-zA-Z0-9]+, at most 253 characters, not '.',
    # not '..' and not starting with '..'.
    key = value["key"]
    if not re.fullmatch(r"[-._a-zA-Z0-9]{1,253}", key) or key == "." or key.startswith(".."):
        raise ModelStoreInputError(
            store,
            f"{field}.key",
            key,
            "a Secret key (letters, digits, '-', '_' and '.', at most 253 characters, not '.' "
            "and not starting with '..')",
        )
    return value["name"], value["key"]


def _include(store: str, include: Sequence[str]) -> None:
    """Each pattern can match a file of the revision (``sources.can_match``)."""
    for pattern in include:
        if isinstance(pattern, str) and not can_match(pattern):
            raise ModelStoreInputError(store, _field("include"), pattern, INCLUDE_RULE)


def _token(
    store: str, value: Any, token_secret: Any, claim_name: str, scheme: str | None
) -> pulumi.Output[str] | None:
    """``model.token``: an Output or a non-empty string, made (or kept) secret, for an
    ``hf://`` source (the seed reads no other with a token: ``model/sources.open_source``);
    never echoed."""
    if value is None:
        return None
    field = _field("token")
    if scheme is not None and scheme != "hf":
        raise ModelStoreInputError(
            store,
            field,
            REDACTED,
            "unset unless model.source is hf:// (the seed reads an object store as the store's "
            "cloud identity, never with a token)",
        )
    if token_secret is not None:
        raise ModelStoreInputError(
            store,
            field,
            REDACTED,
            f"unset when model.token_secret is given (model.token makes the Secret "
            f"{claim_name}-model-token, model.token_secret names one that exists)",
        )
    if not isinstance(value, pulumi.Output) and not (isinstance(value, str) and value):
        raise ModelStoreInputError(
            store,
            field,
            REDACTED,
            "a Pulumi secret (an Output such as pulumi.Config().require_secret(...), or a "
            "non-empty string the store keeps as one)",
        )
    return pulumi.Output.secret(value)


def _keep_revisions(store: str, keep: Any) -> None:
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < MIN_KEEP_REVISIONS:
        raise ModelStoreInputError(
            store,
            _field("keep_revisions"),
            keep,
            f"a whole number of at least {MIN_KEEP_REVISIONS} (the pinned revision and the one "
            f"readers may still mount during a rollout)",
        )


def _image(store: str, image: Any) -> None:
    if not v.is_image_reference(image):
        raise ModelStoreInputError(store, _field("image"), image, v.IMAGE_RULE)


def literal_tokens(store: str, args: Any, path: str = "") -> list[ModelStoreInputError]:
    """Every literal token in a store's args (a string that looks like a Hugging Face token, or
    a key named like a token) but ``model.token``, which takes one as a secret, refused with
    the hint to use that or ``model.token_secret``. The value is never echoed."""
    found: list[ModelStoreInputError] = []
    hint = (
        "model.token (a Pulumi secret) or a reference to a Secret (model.token_secret: "
        "{name, key}), never a literal token"
    )
    if isinstance(args, Mapping):
        for key, value in args.items():
            where = f"{path}.{key}" if path else str(key)
            if where == TOKEN_FIELD:
                continue  # _token checks it
            if isinstance(key, str) and TOKEN_KEYS.match(key) and value is not None:
                found.append(ModelStoreInputError(store, where, REDACTED, hint))
                continue
            found += literal_tokens(store, value, where)
    elif isinstance(args, Sequence) and not isinstance(args, str | bytes):
        for i, item in enumerate(args):
            found += literal_tokens(store, item, f"{path}[{i}]")
    elif isinstance(args, str) and HF_TOKEN.search(args):
        found.append(ModelStoreInputError(store, path, REDACTED, hint))
    return found
