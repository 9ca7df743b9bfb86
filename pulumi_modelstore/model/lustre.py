"""The read layout the seed gives a revision on Lustre (FSx for Lustre): a default file layout
on the directory it downloads into, set before any file is created there, so every weight file
is striped for many readers at once.

Why: FSx's user guide ("Striping data in your file system", docs.aws.amazon.com/fsx/latest/
LustreGuide/performance.html#striping-data) says striping "matters most for large files",
lets "multiple OSTs and their associated servers" serve one file, that "Setting a large stripe
count for small files is sub-optimal" (a round trip to every OST of the layout), that a
stripe count of ``-1`` places stripes on all OSTs, and that a directory's layout applies to
every new file created in it (not to existing ones), its subdirectories inheriting it. Its
progressive file layout example keeps files up to 100 MiB on one OST (``-E 100M -c 1``). Model
weights are large files read whole by every replica at once, the case the Lustre wiki's
striping guide gives "8+ or -1 (all OSTs)" (wiki.lustre.org/Lustre_Striping_Best_Practices,
"Large files, many concurrent clients"). So: a two-component progressive layout, ``[0,
100 MiB)`` on 1 OST (configs, tokenizers) and ``[100 MiB, EOF)`` on all OSTs; the stripe size
and first OST are left to the file system (FSx: "Stripe size by default is 1MiB ... it is
best to leave [the offset] unspecified").

How, without the ``lfs`` tool (not in a bare Python image): ``setxattr(dir, "lustre.lov",
<layout>)``. The Lustre client takes the ``lov`` xattr of its ``lustre.`` namespace
(lustre/lustre-release at commit c881f8eb, ``lustre/llite/xattr.c`` lines 886-891, the
handler; lines 415-421) to ``ll_setstripe_ea``, which on a directory sets its default layout
with ``ll_dir_setstripe`` (lines 383-388), the call ``lfs setstripe`` makes; that takes a
composite layout (``lustre/llite/dir.c`` lines 603-605). The bytes are the structures of
``include/uapi/linux/lustre/lustre_user.h`` (host-endian, packed): ``lov_comp_md_v1`` (lines
1164-1180, 32 bytes), one ``lov_comp_md_entry_v1`` per component (lines 1099-1131, 48 bytes),
then a ``lov_user_md_v1`` per component (lines 928-943, 32 bytes; ``ost_id`` lines 567-575 is
16 bytes), magics ``LOV_USER_MAGIC_COMP_V1`` 0x0BD60BD0 and ``LOV_USER_MAGIC_V1`` 0x0BD10BD0
(lines 776, 782), ``LOV_PATTERN_RAID0`` 1 (line 792), ``LOV_ALL_STRIPES`` 0xffff (line 893),
``LUSTRE_EOF`` (line 255). On any other file system the ``lustre.`` namespace is unknown and
the call fails with ENOTSUP: the seed then stops, naming the directory.

Object stores take no such setting from the seed: it writes through the loader's FUSE mount,
whose own upload settings make the objects. On Mountpoint for S3 the objects' parts are its
``--write-part-size`` and readers fetch ranges of ``--read-part-size``, both 8 MiB by default
(awslabs/mountpoint-s3 ``mount-s3 --help``), which is the alignment S3 asks for ("If objects
are PUT using a multipart upload, it's a good practice to GET them in the same part sizes",
docs.aws.amazon.com/whitepapers/latest/s3-optimizing-performance-best-practices/
use-byte-range-fetches.html; awslabs/mountpoint-s3#73): nothing to set while neither is
changed. Cloud Storage FUSE uploads each file as one object, staged and sent on close or
streamed (GoogleCloudPlatform/gcsfuse v2.9.1 release notes, "Streaming Writes"), by requests
that each carry "a portion of the object" (docs.cloud.google.com/storage/docs/resumable-uploads):
no part layout is left for readers to align to, so nothing to set either. blobfuse2 (Azure
Blob) writes block blobs in blocks of its own size; whether that block size changes read
speed through the readers' block cache is not established here, so nothing is set.
"""

from __future__ import annotations

import errno
import os
import struct
from pathlib import Path

XATTR = "lustre.lov"
LOV_USER_MAGIC_V1 = 0x0BD10BD0
LOV_USER_MAGIC_COMP_V1 = 0x0BD60BD0
LOV_PATTERN_RAID0 = 0x001
LOV_ALL_STRIPES = 0xFFFF
# A stripe size of 0 and a first OST of -1: the file system's defaults (lfs setstripe(1)).
DEFAULT_STRIPE_SIZE = 0
ANY_OST = 0xFFFF
LUSTRE_EOF = 0xFFFFFFFFFFFFFFFF
MIB = 1 << 20
# Up to 100 MiB on one OST (FSx's progressive layout example), all OSTs beyond (docstring).
SMALL_FILE_END = 100 * MIB
COMPONENTS = ((0, SMALL_FILE_END, 1), (SMALL_FILE_END, LUSTRE_EOF, LOV_ALL_STRIPES))

# lov_comp_md_v1: magic, size, layout_gen (u32); flags, entry_count, mirror_count (u16);
# ec_count, padding3 (u8); padding1[2] (u16); padding2 (u64).
COMP_HEADER = struct.Struct("=IIIHHHBB2HQ")
# lov_comp_md_entry_v1: id, flags (u32); extent start, end (u64); offset, size, layout_gen
# (u32); time_and_id (u64); dstripe_count, cstripe_count, compr_type, compr_lvl|bits (u8).
COMP_ENTRY = struct.Struct("=IIQQIIIQBBBB")
# lov_user_md_v1: magic, pattern (u32); ost_id (2 x u64); stripe_size (u32); stripe_count,
# stripe_offset (u16).
USER_MD_V1 = struct.Struct("=IIQQIHH")


class LayoutError(Exception):
    """The layout could not be set; the message is one line naming the directory and why."""


def progressive_layout(
    components: tuple[tuple[int, int, int], ...] = COMPONENTS,
) -> bytes:
    """The ``lustre.lov`` value of a composite layout: one ``(start, end, stripe count)`` per
    component, each RAID0 with the file system's stripe size and any first OST."""
    blobs_at = COMP_HEADER.size + COMP_ENTRY.size * len(components)
    size = blobs_at + USER_MD_V1.size * len(components)
    header = COMP_HEADER.pack(LOV_USER_MAGIC_COMP_V1, size, 0, 0, len(components), 0, 0, 0, 0, 0, 0)
    entries = b"".join(
        COMP_ENTRY.pack(
            0, 0, start, end, blobs_at + i * USER_MD_V1.size, USER_MD_V1.size, 0, 0, 0, 0, 0, 0
        )
        for i, (start, end, _) in enumerate(components)
    )
    blobs = b"".join(
        USER_MD_V1.pack(
            LOV_USER_MAGIC_V1, LOV_PATTERN_RAID0, 0, 0, DEFAULT_STRIPE_SIZE, count, ANY_OST
        )
        for _, _, count in components
    )
    return header + entries + blobs


def set_default_layout(directory: Path, value: bytes | None = None) -> None:
    """Give ``directory`` (empty: the layout applies to files created after it) the progressive
    layout (or ``value``). Raises :class:`LayoutError` when the directory is not on Lustre or
    the client refuses the layout."""
    try:
        os.setxattr(directory, XATTR, value if value is not None else progressive_layout())
    except OSError as error:
        if error.errno in (errno.ENOTSUP, errno.EOPNOTSUPP):
            raise LayoutError(
                f"cannot set the Lustre read layout on {directory}: it is not on Lustre "
                f"(setxattr {XATTR}: {error.strerror}); is the store's volume FSx for Lustre?"
            ) from None
        raise LayoutError(
            f"cannot set the Lustre read layout on {directory}: setxattr {XATTR}: {error.strerror}"
        ) from None
