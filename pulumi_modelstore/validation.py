"""Small validators, one rule each, for what Kubernetes and the contract know (each cloud's
own rules live in its room, e.g. ``aws/validation.py``). Every one skips values that are still
Outputs: those are checked by the cloud at deploy time, not guessed at here.

Kubernetes' own rules are restated here from their source, cited next to each: the ``Is*``
functions of k8s.io/apimachinery ``pkg/util/validation/validation.go`` (names, label values,
qualified names), ``pkg/apis/meta/v1/validation/validation.go`` (``ValidateLabels``),
``pkg/api/validation/objectmeta.go`` (``ValidateAnnotations``), ``pkg/api/resource/quantity.go``
(quantities), and k8s.io/kubernetes ``pkg/apis/core/validation/validation.go`` (volumes, volume
mounts, node selectors).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import ROUND_CEILING, Decimal, InvalidOperation
from typing import Any

import pulumi

from .errors import ModelStoreInputError

# IsDNS1123Label / IsDNS1123Subdomain (apimachinery pkg/util/validation/validation.go):
# dns1123LabelFmt, DNS1123LabelMaxLength 63; dns1123SubdomainFmt, DNS1123SubdomainMaxLength 253.
# fullmatch, not match with '$': '$' also matches before a trailing newline.
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
# IsQualifiedName and IsValidLabelValue (same file): qualifiedNameFmt, qualifiedNameMaxLength 63;
# a label value is empty or a qualified name's name part, LabelValueMaxLength 63.
_QUALIFIED_NAME_PART = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
NAME_PART_MAX = 63
LABEL_VALUE_MAX = 63
# TotalAnnotationSizeLimitB (apimachinery pkg/api/validation/objectmeta.go): the sum of the
# lengths of every annotation's key and value.
TOTAL_ANNOTATION_SIZE = 256 * 1024

DNS_LABEL_RULE = (
    "a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter "
    "or digit, at most 63 characters)"
)
DNS_SUBDOMAIN_RULE = (
    "a DNS-1123 subdomain (lowercase letters, digits, '-' and '.', starting and ending with a "
    "letter or digit, at most 253 characters)"
)
QUALIFIED_NAME_RULE = (
    "a Kubernetes qualified name (a name of at most 63 letters, digits, '-', '_' and '.', "
    "starting and ending with a letter or digit, optionally after a DNS-1123 subdomain prefix "
    "and '/', e.g. team or example.com/team)"
)
LABEL_VALUE_RULE = (
    "a Kubernetes label value (at most 63 letters, digits, '-', '_' and '.', starting and "
    "ending with a letter or digit, or empty)"
)
NO_BACKSTEPS_RULE = "a path without '..' segments"


def is_output(value: Any) -> bool:
    return isinstance(value, pulumi.Output)


# ---- names ---------------------------------------------------------------------------------


def valid_name(
    store: str, field: str, value: Any, is_valid: Callable[[str], bool], rule: str
) -> None:
    """A name known before deploy is a string ``is_valid`` accepts, else refused with ``rule``;
    an Output is left to the provider."""
    if is_output(value):
        return
    if not isinstance(value, str) or not is_valid(value):
        raise ModelStoreInputError(store, field, value, rule)


def is_dns_label(value: Any) -> bool:
    """IsDNS1123Label (apimachinery pkg/util/validation/validation.go)."""
    return isinstance(value, str) and len(value) <= 63 and bool(_DNS_LABEL.fullmatch(value))


def is_dns_subdomain(value: Any) -> bool:
    """IsDNS1123Subdomain (apimachinery pkg/util/validation/validation.go)."""
    return isinstance(value, str) and len(value) <= 253 and bool(_DNS_SUBDOMAIN.fullmatch(value))


def dns_label(store: str, field: str, value: Any) -> None:
    """Namespaces (ValidateNamespaceName), pod volume names and container names (ValidateVolumes,
    validateContainers in k8s.io/kubernetes pkg/apis/core/validation/validation.go): each
    IsDNS1123Label."""
    if is_output(value):
        return
    if not is_dns_label(value):
        raise ModelStoreInputError(store, field, value, DNS_LABEL_RULE)


def dns_subdomain(store: str, field: str, value: Any) -> None:
    """Object names checked by NameIsDNSSubdomain (k8s.io/kubernetes pkg/apis/core/validation):
    PersistentVolumes and claims (ValidatePersistentVolumeName), StorageClasses
    (ValidateClassName), service accounts (ValidateServiceAccountName), nodes
    (ValidateNodeName), and custom resources such as VolumeSnapshot(Class)es."""
    if is_output(value):
        return
    if not is_dns_subdomain(value):
        raise ModelStoreInputError(store, field, value, DNS_SUBDOMAIN_RULE)


# ---- labels and annotations ----------------------------------------------------------------


def is_qualified_name(value: Any) -> bool:
    """IsQualifiedName (apimachinery pkg/util/validation/validation.go): ``[prefix/]name``, the
    prefix a DNS-1123 subdomain, the name at most 63 characters of qualifiedNameFmt."""
    if not isinstance(value, str):
        return False
    parts = value.split("/")
    if len(parts) == 2:
        prefix, name = parts
        if not is_dns_subdomain(prefix):
            return False
    elif len(parts) == 1:
        name = parts[0]
    else:
        return False
    return len(name) <= NAME_PART_MAX and bool(_QUALIFIED_NAME_PART.fullmatch(name))


def is_label_value(value: Any) -> bool:
    """IsValidLabelValue (apimachinery pkg/util/validation/validation.go): empty, or at most 63
    characters of qualifiedNameFmt."""
    return isinstance(value, str) and (
        value == ""
        or (len(value) <= LABEL_VALUE_MAX and bool(_QUALIFIED_NAME_PART.fullmatch(value)))
    )


def label_key(store: str, field: str, key: Any) -> None:
    """A label key: ValidateLabelName, which is IsQualifiedName (apimachinery
    pkg/apis/meta/v1/validation/validation.go)."""
    if not is_qualified_name(key):
        raise ModelStoreInputError(store, f"{field} key", key, QUALIFIED_NAME_RULE)


def label_value(store: str, field: str, value: Any) -> None:
    """A label value: IsValidLabelValue (ValidateLabels, apimachinery
    pkg/apis/meta/v1/validation/validation.go)."""
    if is_output(value):
        return
    if not is_label_value(value):
        raise ModelStoreInputError(store, field, value, LABEL_VALUE_RULE)


def label_map(store: str, field: str, value: Any) -> dict[str, Any]:
    """Labels for Kubernetes objects (ValidateLabels): a mapping of strings to strings (None is
    empty), each key a qualified name, each value a label value (values that are still Outputs
    are left to the API server)."""
    mapping = string_map(store, field, value)
    for key, item in mapping.items():
        label_key(store, field, key)
        label_value(store, f"{field}[{key!r}]", item)
    return mapping


def annotation_map(store: str, field: str, value: Any) -> dict[str, Any]:
    """Annotations for Kubernetes objects (ValidateAnnotations, apimachinery
    pkg/api/validation/objectmeta.go): a mapping of strings to strings (None is empty), each
    key a qualified name once lowercased, keys and values together at most
    TotalAnnotationSizeLimitB (256 KiB; a value that is still an Output counts its key only)."""
    mapping = string_map(store, field, value)
    total = 0
    for key, item in mapping.items():
        if not is_qualified_name(key.lower()):
            raise ModelStoreInputError(store, f"{field} key", key, QUALIFIED_NAME_RULE)
        # Go's len: bytes, not characters.
        total += len(key.encode()) + (0 if is_output(item) else len(item.encode()))
    if total > TOTAL_ANNOTATION_SIZE:
        raise ModelStoreInputError(
            store,
            field,
            total,
            f"at most {TOTAL_ANNOTATION_SIZE} bytes in all (keys and values, 256 KiB)",
        )
    return mapping


def name_is_label_value(store: Any, field: str, label: str) -> None:
    """A component's own name, which is the value of its ``label`` on every object it makes:
    a label value (IsValidLabelValue) and not empty (a resource needs a name). The message
    shows the name once, as the value: as a prefix it could carry a newline."""
    if not isinstance(store, str) or not store or not is_label_value(store):
        raise ModelStoreInputError(
            None,
            field,
            store,
            f"1 to 63 letters, digits, '-', '_' and '.', starting and ending with a letter or "
            f"digit (it is the value of the {label} label on every Kubernetes object it makes)",
        )


# ---- paths ---------------------------------------------------------------------------------


def absolute_path(store: str, field: str, value: Any) -> None:
    if is_output(value):
        return
    if not isinstance(value, str) or not value.startswith("/"):
        raise ModelStoreInputError(store, field, value, "an absolute path starting with '/'")


def no_backsteps(store: str, field: str, value: Any) -> None:
    """validatePathNoBacksteps (k8s.io/kubernetes pkg/apis/core/validation/validation.go): no
    ``..`` element, for hostPath and local volume paths and volume mount subPaths."""
    if is_output(value):
        return
    if ".." in str(value).split("/"):
        raise ModelStoreInputError(store, field, value, NO_BACKSTEPS_RULE)


def host_path(store: str, field: str, value: Any) -> None:
    """A node directory for a ``hostPath`` or ``local`` PV: validateHostPathVolumeSource
    (no ``..``) and validateLocalVolumeSource (absolute, no ``..``), k8s.io/kubernetes
    pkg/apis/core/validation/validation.go."""
    absolute_path(store, field, value)
    no_backsteps(store, field, value)


def container_path(store: str, field: str, value: Any) -> None:
    """A volume mount's ``mountPath``: absolute (container runtimes refuse a relative one) and
    without ``..`` (the path would read as one place and mount another; Kubernetes refuses
    ``..`` in the other paths of a volume: hostPath, local, subPath)."""
    absolute_path(store, field, value)
    no_backsteps(store, field, value)


def same_path(a: str, b: str) -> bool:
    """Whether two absolute paths name one directory (``/tmp/x/`` is ``/tmp/x``)."""
    return posixpath.normpath(a) == posixpath.normpath(b)


def sub_path(store: str, field: str, value: Any) -> None:
    """A volume mount's ``subPath``: validateLocalDescendingPath (relative, no ``..``);
    callers strip a leading '/' first."""
    if is_output(value):
        return
    if not isinstance(value, str) or value.startswith("/") or ".." in value.split("/"):
        raise ModelStoreInputError(
            store,
            field,
            value,
            "a path inside the volume, without '..' segments (e.g. llama-3-8b)",
        )


# ---- container images ------------------------------------------------------------------------

# A container image reference as the runtimes parse it (distribution/reference ``regexp.go``:
# ReferenceRegexp = name, optional ``:tag``, optional ``@digest``; the name an optional
# registry host (DNS components or a bracketed IPv6 address, an optional port) and ``/``, then
# path components of lowercase letters and digits joined by one '.', one or two '_' or any
# dashes; a tag [\w][\w.-]{0,127}; a digest <algorithm>:<at least 32 hex>; ``reference.go``:
# NameTotalLengthMax 255). A reference outside it fails the pod with InvalidImageName.
_IMAGE_PATH = r"[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*"
_IMAGE_HOST = (
    r"(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
    r"(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*|\[[a-fA-F0-9:]+\])"
    r"(?::[0-9]+)?"
)
_IMAGE = re.compile(
    rf"(?P<name>(?:{_IMAGE_HOST}/)?{_IMAGE_PATH}(?:/{_IMAGE_PATH})*)"
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?"
    r"(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?"
)
IMAGE_NAME_MAX = 255
IMAGE_RULE = (
    "a container image reference ([registry/]path[:tag][@digest], the path lowercase letters, "
    "digits and single '.', '_' or '-' between them, at most 255 characters before the tag), "
    "e.g. python:3.12-slim"
)


def is_image_reference(value: Any) -> bool:
    match = _IMAGE.fullmatch(value) if isinstance(value, str) else None
    return match is not None and len(match["name"]) <= IMAGE_NAME_MAX


# ---- quantities ----------------------------------------------------------------------------

# A Kubernetes quantity (resource.Quantity, apimachinery pkg/api/resource/quantity.go): a signed
# decimal number and a suffix. For a storage size the suffix is required: a bare "100" is 100
# bytes, and "100m" is a tenth of a byte; both are valid quantities and both are mistakes for a
# volume size.
_QUANTITY = re.compile(
    r"(?P<number>[+-]?(?:\d+(?:\.\d*)?|\.\d+))"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][+-]?\d+)?"
)
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"k": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}
SIZE_RULE = (
    "a Kubernetes quantity with a unit, e.g. '100Gi' (binary Ki, Mi, Gi, Ti, Pi, Ei or decimal "
    "k, M, G, T, P, E)"
)
GIB = 1024**3
# ParseQuantity caps a quantity at maxAllowed, 2^63-1 (quantity.go): a larger size would be
# advertised smaller than asked, without an error.
MAX_QUANTITY = 2**63 - 1
MAX_GIB = MAX_QUANTITY // GIB


def quantity(value: Any) -> Decimal | None:
    """The value of a Kubernetes quantity (``500m`` -> 0.5, ``4Gi`` -> 4294967296, ``0``);
    None when ``value`` is not one."""
    match = _QUANTITY.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        return None
    number, suffix = Decimal(match["number"]), match["suffix"]
    if suffix is None:
        return number
    if suffix == "m":
        return number / 1000
    if suffix in _BINARY:
        return number * (1024 ** _BINARY[suffix])
    if suffix in _DECIMAL:
        return number * (1000 ** _DECIMAL[suffix])
    return number * (Decimal(10) ** max(-400, min(int(suffix[1:]), 400)))


def storage_bytes(store: str, field: str, value: Any) -> int | None:
    """The size in bytes of a storage quantity such as ``100Gi``, rounded up; None when the
    value is still an Output. Refuses a size without a unit, a milli-unit, zero, a negative
    size, or one above the largest quantity (2^63-1 bytes, just under 8Ei)."""
    if is_output(value):
        return None
    match = _QUANTITY.fullmatch(value) if isinstance(value, str) else None
    if match is None or match["suffix"] in (None, "m"):
        raise ModelStoreInputError(store, field, value, SIZE_RULE)
    try:
        number = Decimal(match["number"])
    except InvalidOperation as exc:  # pragma: no cover - the pattern admits only decimals
        raise ModelStoreInputError(store, field, value, SIZE_RULE) from exc
    suffix = match["suffix"]
    if suffix in _BINARY:
        size = number * (1024 ** _BINARY[suffix])
    elif suffix in _DECIMAL:
        size = number * (1000 ** _DECIMAL[suffix])
    else:
        # The exponent is clamped to +-400 (so Decimal never raises 10 to a huge power): no
        # size written with a sane number of digits changes from the cap either side.
        size = number * (Decimal(10) ** max(-400, min(int(suffix[1:]), 400)))
    whole = int(size.to_integral_value(rounding=ROUND_CEILING))
    if whole <= 0:
        raise ModelStoreInputError(store, field, value, f"a positive size: {SIZE_RULE}")
    if whole > MAX_QUANTITY:
        raise ModelStoreInputError(store, field, value, f"less than 8Ei: {SIZE_RULE}")
    return whole


def size_gib(store: str, field: str, value: Any) -> int | None:
    """A storage quantity in whole GiB, rounded up (how block storage drivers provision)."""
    size = storage_bytes(store, field, value)
    return None if size is None else -(-size // GIB)


def capacity_gib(store: str, field: str, value: Any) -> None:
    """A capacity in whole GiB, which becomes the quantity ``<value>Gi`` of a PV and its
    claims: positive (ValidatePositiveQuantityValue on a PV's capacity and a claim's request)
    and within the largest quantity (:data:`MAX_QUANTITY`)."""
    positive_int(store, field, value)
    if is_output(value):
        return
    if value > MAX_GIB:
        raise ModelStoreInputError(
            store,
            field,
            value,
            f"at most {MAX_GIB} (GiB: Kubernetes caps a quantity at 2^63-1 bytes)",
        )


# ---- general -------------------------------------------------------------------------------


def one_of(store: str, field: str, value: Any, allowed: Sequence[Any]) -> None:
    if is_output(value):
        return
    if value not in allowed:
        raise ModelStoreInputError(store, field, value, f"one of {', '.join(map(str, allowed))}")


def positive_int(store: str, field: str, value: Any) -> None:
    if is_output(value):
        return
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ModelStoreInputError(store, field, value, "a positive whole number")


def string_list(store: str, field: str, value: Any) -> None:
    if is_output(value):
        return
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ModelStoreInputError(store, field, value, "a list of strings")
    for item in value:
        if not is_output(item) and not isinstance(item, str):
            raise ModelStoreInputError(store, field, value, "a list of strings")


def flag(store: str, field: str, value: Any) -> bool:
    """A real boolean: ``"false"`` is a truthy string, so strings are refused, not coerced."""
    if not isinstance(value, bool):
        raise ModelStoreInputError(store, field, value, "true or false")
    return value


def string_map(store: str, field: str, value: Any) -> dict[str, str]:
    """A mapping of strings to strings (tags, labels, parameters); None is empty."""
    mapping = value or {}
    if not isinstance(mapping, Mapping) or not all(
        isinstance(k, str) and (isinstance(t, str) or is_output(t)) for k, t in mapping.items()
    ):
        raise ModelStoreInputError(store, field, value, "a mapping of strings to strings")
    return dict(mapping)
