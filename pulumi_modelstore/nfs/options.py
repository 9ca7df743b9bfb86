"""Mount options of the Linux NFS client, checked before deploy: a value the client refuses
fails every mount of the PV on the node, after the store deployed fine. Used by the NFS store
and by EFS (whose mount helper hands NFS options to the same client)."""

import re
from collections.abc import Sequence
from typing import Any

from .. import validation as v
from ..errors import ModelStoreInputError

# Numeric options of the Linux NFS client and the values it takes (fs/nfs/fs_context.c at
# torvalds/linux 0961f0c0: nfs_fs_parameters declares each fsparam_u32, so 0 to 2^32-1, and
# nfs_fs_context_parse_param narrows some, failing the mount with "NFS: Value for '<option>'
# out of range"). rsize and wsize are rounded to what client and server support, not refused.
U32 = 2**32 - 1
INT_MAX = 2**31 - 1
NUMERIC_OPTIONS: dict[str, tuple[int, int]] = {
    "nconnect": (1, 16),  # NFS_MAX_CONNECTIONS
    "max_connect": (1, 16),  # NFS_MAX_TRANSPORTS (include/linux/nfs_fs.h)
    "timeo": (1, INT_MAX),
    "retrans": (0, INT_MAX),
    "port": (0, 65535),  # USHRT_MAX
    "mountport": (0, 65535),
    "mountvers": (1, 3),  # NFS_MNT_VERSION to NFS_MNT3_VERSION
    **{
        name: (0, U32)
        for name in (
            "rsize",
            "wsize",
            "bsize",
            "actimeo",
            "acregmin",
            "acregmax",
            "acdirmin",
            "acdirmax",
            "namlen",
        )
    },
}
# Options the client takes from a fixed list (same file: nfs_xprt_protocol_tokens, the
# mountproto cases of nfs_fs_context_parse_param, nfs_param_enums_lookupcache,
# nfs_param_enums_local_lock; sec takes flavours from nfs_secflavor_tokens joined by ':').
CHOICE_OPTIONS: dict[str, tuple[str, ...]] = {
    "proto": ("rdma", "rdma6", "tcp", "tcp6", "udp", "udp6"),
    "mountproto": ("tcp", "tcp6", "udp", "udp6"),
    "lookupcache": ("all", "none", "pos", "positive"),
    "local_lock": ("all", "flock", "none", "posix"),
}
SEC_FLAVOURS = (
    "krb5",
    "krb5i",
    "krb5p",
    "lkey",
    "lkeyi",
    "lkeyp",
    "none",
    "null",
    "spkm3",
    "spkm3i",
    "spkm3p",
    "sys",
)


def _kernel_uint(text: str) -> int | None:
    """``text`` as the kernel's kstrtouint with base 0 reads it (fsparam_u32): an optional '+',
    then decimal, ``0x`` hexadecimal or ``0`` octal digits; else None."""
    digits = text[1:] if text.startswith("+") else text
    for prefix, base, pattern in (("0x", 16, "[0-9a-f]+"), ("0", 8, "[0-7]+")):
        if digits.lower().startswith(prefix) and len(digits) > len(prefix):
            rest = digits[len(prefix) :].lower()
            return int(rest, base) if re.fullmatch(pattern, rest) else None
    return int(digits) if re.fullmatch(r"[0-9]+", digits) else None


def options_fit_the_client(store: str, field: str, options: Sequence[Any]) -> None:
    """Numeric options within the Linux NFS client's range (:data:`NUMERIC_OPTIONS`) and
    listed ones among its values (:data:`CHOICE_OPTIONS`, ``sec``): otherwise every mount of
    the PV fails on the node, after the store deployed fine."""
    for option in options:
        if v.is_output(option):
            continue
        for part in option.split(","):
            key, has_value, value = (x.strip() for x in part.partition("="))
            key = key.casefold()
            if key in NUMERIC_OPTIONS:
                low, high = NUMERIC_OPTIONS[key]
                number = _kernel_uint(value) if has_value else None
                if number is None or not low <= number <= high:
                    raise ModelStoreInputError(
                        store,
                        field,
                        option,
                        f"{key}=<a whole number from {low} to {high}> (the Linux NFS client's "
                        "range)",
                    )
            elif key in CHOICE_OPTIONS and value not in CHOICE_OPTIONS[key]:
                raise ModelStoreInputError(
                    store,
                    field,
                    option,
                    f"{key}=<one of {', '.join(CHOICE_OPTIONS[key])}> (the Linux NFS client's "
                    "values)",
                )
            elif key == "sec" and not all(f in SEC_FLAVOURS for f in value.split(":") if f):
                raise ModelStoreInputError(
                    store,
                    field,
                    option,
                    f"sec=<flavours joined by ':', each one of {', '.join(SEC_FLAVOURS)}> (the "
                    "Linux NFS client's values)",
                )
