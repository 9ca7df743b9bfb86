"""CRC-32C and CRC-64/NVME in pure Python (the standard library has neither: ``zlib.crc32`` is
CRC-32/ISO-HDLC), for the checksums S3 keeps with an object (``x-amz-checksum-crc32c``,
``x-amz-checksum-crc64nvme``: S3 adds CRC-64/NVME to every object uploaded since its default
integrity protections).

Both are reflected CRCs, all ones in and out: CRC-32C, polynomial 0x1EDC6F41 (reflected
0x82F63B78), check value 0xE3069283 over ``b"123456789"``; CRC-64/NVME, polynomial
0xAD93D23594C93659 (reflected 0x9A6C9329AC4BC9B5), check value 0xAE8B14860A799888 (the
parameters and check values of the CRC catalogue, reveng.sourceforge.io/crc-catalogue).

A byte at a time a Python loop computes a few MB/s, far below what a seed downloads. So a
large block is split into ``LANES`` contiguous lanes worked on together: the register bytes
of every lane are one integer per byte position, each step takes the next byte of every lane
(a strided slice), looks up the table for all of them at once (``bytes.translate``, one
table per register byte) and shifts the register by a byte (XOR of those integers): C speed
over every lane, one Python step per byte of a lane. A CRC is linear, so the lanes' registers
are then joined by moving each over the zeros that stand for the lanes after it (a linear map
of the register, tabled per register byte) and XOR.
"""

from __future__ import annotations

LANES = 4096
SMALL = 64 * 1024  # below this, a block goes a byte at a time


class CrcSpec:
    """A reflected CRC of ``width`` bits (a multiple of 8) with all-ones init and xorout."""

    def __init__(self, width: int, reflected_poly: int) -> None:
        self.width = width
        self.mask = (1 << width) - 1
        self.table = [_entry(i, reflected_poly) for i in range(256)]
        self.nbytes = width // 8
        # Byte j of every table entry, for bytes.translate.
        self.planes = [bytes((t >> (8 * j)) & 0xFF for t in self.table) for j in range(self.nbytes)]
        self._shifts: dict[int, list[list[int]]] = {}

    def bytewise(self, register: int, data: bytes | memoryview) -> int:
        table = self.table
        for byte in data:
            register = table[(register ^ byte) & 0xFF] ^ (register >> 8)
        return register

    def shift(self, register: int, count: int) -> int:
        """The register after ``count`` zero bytes (a linear map, tabled per byte)."""
        tables = self._shifts.get(count)
        if tables is None:
            tables = self._shifts[count] = self._shift_tables(count)
        out = 0
        for j, table in enumerate(tables):
            out ^= table[(register >> (8 * j)) & 0xFF]
        return out

    def _shift_tables(self, count: int) -> list[list[int]]:
        images = self._zeros(count)
        tables = []
        for j in range(self.nbytes):
            table = [0] * 256
            for value in range(1, 256):
                low = value & -value
                table[value] = table[value ^ low] ^ images[8 * j + low.bit_length() - 1]
            tables.append(table)
        return tables

    def _zeros(self, count: int) -> list[int]:
        """The map of ``count`` zero bytes as the image of each register bit, by squaring
        the map of one zero byte (the map of 2k zeros is the map of k applied twice)."""
        table = self.table
        one = [table[(1 << bit) & 0xFF] ^ ((1 << bit) >> 8) for bit in range(self.width)]
        result = [1 << bit for bit in range(self.width)]  # no zeros: the identity
        while count:
            if count & 1:
                result = [_apply(one, image) for image in result]
            one = [_apply(one, image) for image in one]
            count >>= 1
        return result

    def lanes(self, data: bytes, lanes: int) -> int:
        """The register (started at zero) after ``data``, whose length is a multiple of
        ``lanes``: worked on as ``lanes`` contiguous lanes (module docstring)."""
        length = len(data) // lanes
        planes = [0] * self.nbytes
        last = self.nbytes - 1
        for step in range(length):
            column = int.from_bytes(data[step::length], "little")
            index = (planes[0] ^ column).to_bytes(lanes, "little")
            for j in range(last):
                planes[j] = (
                    int.from_bytes(index.translate(self.planes[j]), "little") ^ planes[j + 1]
                )
            planes[last] = int.from_bytes(index.translate(self.planes[last]), "little")
        columns = [p.to_bytes(lanes, "little") for p in planes]
        joined = 0
        for register_bytes in zip(*columns, strict=True):
            joined = self.shift(joined, length) ^ int.from_bytes(bytes(register_bytes), "little")
        return joined


def _apply(images: list[int], register: int) -> int:
    """A linear map of the register, given by the image of each bit, applied to ``register``."""
    out = 0
    while register:
        low = register & -register
        out ^= images[low.bit_length() - 1]
        register ^= low
    return out


def _entry(index: int, poly: int) -> int:
    crc = index
    for _ in range(8):
        crc = (crc >> 1) ^ poly if crc & 1 else crc >> 1
    return crc


CRC32C = CrcSpec(32, 0x82F63B78)
CRC64NVME = CrcSpec(64, 0x9A6C9329AC4BC9B5)


class Crc:
    """A running CRC of ``spec`` over bytes given in any pieces (``update``), as ``value``."""

    def __init__(self, spec: CrcSpec) -> None:
        self.spec = spec
        self.register = spec.mask

    def update(self, data: bytes | bytearray | memoryview) -> None:
        spec = self.spec
        data = bytes(data)
        whole = len(data) - len(data) % LANES
        if whole >= SMALL:
            self.register = spec.shift(self.register, whole) ^ spec.lanes(data[:whole], LANES)
            data = data[whole:]
        self.register = spec.bytewise(self.register, data)

    @property
    def value(self) -> int:
        return self.register ^ self.spec.mask

    def hexdigest(self) -> str:
        """The value as hex of its big-endian bytes (as S3's base64 value decodes)."""
        return f"{self.value:0{self.spec.width // 4}x}"
