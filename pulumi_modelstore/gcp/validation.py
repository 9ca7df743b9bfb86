"""GCP value rules shared by the GCP stores. Like ``validation.py``'s, each skips Outputs."""

import re
from collections.abc import Mapping
from typing import Any

from ..errors import ModelStoreInputError
from ..validation import is_output

# Resource Manager labels (cloud.google.com/resource-manager/docs/labels-overview, also the
# Cloud Storage bucket label rules): at most 64 labels; keys 1-63 characters of lowercase
# letters, digits, '_' and '-', starting with a lowercase letter; values 0-63 of the same
# characters. (International characters are allowed too; this library keeps to ASCII.)
MAX_LABELS = 64
_LABEL_KEY = re.compile(r"[a-z][a-z0-9_-]{0,62}")
_LABEL_VALUE = re.compile(r"[a-z0-9_-]{0,63}")
LABEL_KEY_RULE = (
    "GCP label keys (1-63 lowercase letters, digits, '_' and '-', starting with a letter)"
)
LABEL_VALUE_RULE = "GCP label values (at most 63 lowercase letters, digits, '_' and '-')"


def label_value(store: str, field: str, value: Any) -> None:
    if is_output(value):
        return
    if not isinstance(value, str) or not _LABEL_VALUE.fullmatch(value):
        raise ModelStoreInputError(store, field, value, LABEL_VALUE_RULE)


def resource_labels(store: str, field: str, labels: Mapping[str, Any], own: int) -> None:
    """The user's labels: valid keys and values, not the store's own keys, and at most 64 on
    a resource counting the ``own`` labels the store adds."""
    for key, value in labels.items():
        if not _LABEL_KEY.fullmatch(key):
            raise ModelStoreInputError(store, field, key, f"keys that are {LABEL_KEY_RULE}")
        if not is_output(value) and not _LABEL_VALUE.fullmatch(value):
            raise ModelStoreInputError(store, field, value, f"values that are {LABEL_VALUE_RULE}")
    if len(labels) + own > MAX_LABELS:
        raise ModelStoreInputError(
            store,
            field,
            f"{len(labels)} labels",
            f"at most {MAX_LABELS - own} labels (GCP allows {MAX_LABELS} a resource, and the "
            f"store adds {own} of its own)",
        )
