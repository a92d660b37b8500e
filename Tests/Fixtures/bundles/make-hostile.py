#!/usr/bin/env python3
"""Writes hostile and valid .ctxp archives with Python's stdlib tarfile (a real tar writer) into
the directory given, for Tests/ContextHostTests/BundleArchiveTests.swift. Names: see `make`."""
import gzip
import io
import os
import random
import sys
import tarfile
import zlib

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rand = random.Random(27)


def info(name, type=tarfile.REGTYPE, size=0, mode=0o644, linkname=""):
    t = tarfile.TarInfo(name)
    t.type = type
    t.size = size
    t.mode = mode
    t.linkname = linkname
    t.mtime = 0
    return t


def make(name, members, format=tarfile.PAX_FORMAT, **kwargs):
    """members: (TarInfo, bytes or None)."""
    with tarfile.open(os.path.join(out, name), "w:gz", format=format, **kwargs) as tar:
        for member, data in members:
            if data is not None:
                member.size = len(data)
            tar.addfile(member, io.BytesIO(data) if data is not None else None)


def raw(name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


ok = (info("ctxp-bundle.json"), b"{}")
long_path = "data/" + "d" * 60 + "/" + "f" * 80 + ".txt"

make("valid.ctxp", [(info("lib", tarfile.DIRTYPE, mode=0o755), None), (info("lib/linux-x86_64", tarfile.DIRTYPE, mode=0o755), None),
                    (info("lib/linux-x86_64/libX.so", mode=0o755), b"\x7fELF" + bytes(100)), ok])
make("symlink.ctxp", [ok, (info("lib/evil.so", tarfile.SYMTYPE, linkname="/etc/passwd"), None)])
make("hardlink.ctxp", [ok, (info("copy.json", tarfile.LNKTYPE, linkname="ctxp-bundle.json"), None)])
make("chardev.ctxp", [ok, (info("dev/null", tarfile.CHRTYPE), None)])
make("blockdev.ctxp", [ok, (info("dev/sda", tarfile.BLKTYPE), None)])
make("fifo.ctxp", [ok, (info("pipe", tarfile.FIFOTYPE), None)])
make("dotdot.ctxp", [ok, (info("../x"), b"x")])
make("absolute.ctxp", [ok, (info("/etc/x"), b"x")])
make("nested-dotdot.ctxp", [ok, (info("a/../../x"), b"x")])
make("dot.ctxp", [ok, (info("./x"), b"x")])
make("empty-component.ctxp", [ok, (info("a//x"), b"x")])
make("backslash.ctxp", [ok, (info("a\\x"), b"x")])
make("too-deep.ctxp", [ok, (info("a/b/c/d/e/f/g/h/x"), b"x")])
make("too-long.ctxp", [ok, (info("data/" + "x" * 250), b"x")])
make("non-utf8.ctxp", [ok, (info("caf\u00e9.txt"), b"x")], format=tarfile.GNU_FORMAT, encoding="latin-1")
make("duplicate.ctxp", [ok, (info("a.txt"), b"one"), (info("a.txt"), b"two")])
make("case-duplicate.ctxp", [ok, (info("A.txt"), b"one"), (info("a.txt"), b"two")])
make("file-dir-clash.ctxp", [ok, (info("lib"), b"file"), (info("lib", tarfile.DIRTYPE), None)])
make("file-parent-clash.ctxp", [ok, (info("lib"), b"file"), (info("lib/x.so"), b"x")])
make("global-header.ctxp", [ok], pax_headers={"comment": "global"})
make("pax-path.ctxp", [ok, (info(long_path), b"long"), (info("data/caf\u00e9.txt"), b"accent")])
make("gnu-longname.ctxp", [ok, (info(long_path), b"long")], format=tarfile.GNU_FORMAT)
make("ustar-prefix.ctxp", [ok, (info(long_path), b"long")], format=tarfile.USTAR_FORMAT)
make("many-entries.ctxp", [(info("f%04d" % i), b"") for i in range(1025)])

# A header declaring a huge size with no data behind it: GNU base-256 and a pax 'size' record.
for fmt, name in ((tarfile.GNU_FORMAT, "huge-size-gnu.ctxp"), (tarfile.PAX_FORMAT, "huge-size-pax.ctxp")):
    member = info("data/huge.bin", size=1 << 40)
    raw(name, gzip.compress(member.tobuf(fmt, "utf-8", "surrogateescape") + bytes(1024), mtime=0))

# A file just over the one-file cap, octal size field; its data is absent, as the reader must
# refuse it from the header alone.
member = info("data/zeros.bin", size=(128 << 20) + 1)
raw("big-file.ctxp", gzip.compress(member.tobuf(tarfile.USTAR_FORMAT, "utf-8", "surrogateescape") + bytes(1024), mtime=0))

# A gzip bomb: 300 MB of zeros (zero blocks read as an end-of-archive marker followed by padding).
compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
parts = [compressor.compress(bytes(1 << 20)) for _ in range(300)]
parts.append(compressor.flush())
raw("bomb.ctxp", b"".join(parts))

# Random (incompressible) data, then damaged copies of it.
payload = bytes(rand.getrandbits(8) for _ in range(200_000))
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
    for member, data in [ok, (info("data/random.bin"), payload)]:
        member.size = len(data)
        tar.addfile(member, io.BytesIO(data))
tar_bytes = buf.getvalue()
good = gzip.compress(tar_bytes, mtime=0)
raw("random.ctxp", good)
raw("truncated.ctxp", good[: len(good) // 2])
flipped = bytearray(good)
flipped[len(good) // 2] ^= 0x01  # inside the stored random data: only the CRC-32 shows it
raw("flipped.ctxp", bytes(flipped))
crc = bytearray(good)
crc[-8] ^= 0xFF  # the gzip trailer's CRC-32
raw("bad-crc.ctxp", bytes(crc))
raw("trailing-garbage.ctxp", good + b"garbage")
raw("two-members.ctxp", good + good)
raw("plain-tar.ctxp", tar_bytes)
raw("not-tar.ctxp", gzip.compress(b"hello, this is not a tar file\n" * 100, mtime=0))
bad_checksum = bytearray(tar_bytes)
bad_checksum[5] ^= 0x01  # the first header's name: its checksum no longer matches
raw("bad-checksum.ctxp", gzip.compress(bytes(bad_checksum), mtime=0))
raw("no-end-marker.ctxp", gzip.compress(tar_bytes[:1024], mtime=0))  # one header and its data block
