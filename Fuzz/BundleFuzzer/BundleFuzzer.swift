// libFuzzer target for the `.ctxp` bundle layer: `BundleArchive.read` (gzip + tar, hostile input,
// small caps), `BundleIndex.decode` / `verify`, `EmbeddedSignature.split` (the signature read from
// the gzip header before anything is verified) and `LockFile.decode`. See Fuzz/README.md.
//
// The first byte picks the mode: bit 0 clear, the rest is the archive as is (gzip); bit 0 set,
// the rest is a tar stream, wrapped here in a gzip of stored blocks (so mutations reach the tar
// reader instead of breaking the deflate stream). The rest is also decoded as an index.
//
// Built with `-sanitize=fuzzer -DFUZZING` by `Fuzz/run.sh`; a normal `swift build` makes a replay
// driver (`bundle-fuzzer FILE|DIR…`).
import ContextHost
import ContextPackages
import FuzzSupport

/// Small caps, so a mutated header or a bomb costs little.
let limits: ArchiveLimits = {
    var limits = ArchiveLimits()
    limits.compressedBytes = 16_384
    limits.expandedBytes = 65_536
    limits.fileBytes = 32_768
    limits.entries = 16
    return limits
}()

/// The CRC-32 (IEEE) table for the stored-gzip wrapper.
let crcTable: [UInt32] = (0..<256).map { (n: UInt32) -> UInt32 in
    var c = n
    for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    return c
}

/// `bytes` as one gzip member of stored (uncompressed) deflate blocks.
func storedGzip(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
    var output: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3]
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
    crc ^= 0xFFFF_FFFF
    var start = bytes.startIndex
    repeat {
        let end = min(start + 65_535, bytes.endIndex)
        let count = UInt16(end - start)
        output.append(end == bytes.endIndex ? 1 : 0)
        output += [UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8(~count >> 8)]
        output += bytes[start..<end]
        start = end
    } while start < bytes.endIndex
    let size = UInt32(truncatingIfNeeded: bytes.count)
    for value in [crc, size] { output += [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: value >> $0) } }
    return output
}

func fuzzOne(_ data: UnsafeRawBufferPointer) {
    guard let mode = data.first else { return }
    let rest = Array(data.dropFirst())
    let archive = mode & 1 == 0 ? rest : storedGzip(rest[...])
    var entries: [ArchiveEntry]?
    do {
        let read = try BundleArchive.read(archive, limits: limits)
        entries = read
        // What was accepted under small caps is within the default ones: it writes, and reads back
        // the same.
        let written = try BundleArchive.write(read)
        guard try BundleArchive.read(written) == read else { fatalError("an accepted archive does not round-trip") }
    } catch {
        check(error)
    }
    for candidate in [rest] + (entries?.filter { $0.path == BundleIndex.fileName }.map(\.bytes) ?? []) {
        do {
            let index = try BundleIndex.decode(candidate)
            guard try BundleIndex.decode(index.encoded()) == index else { fatalError("an index does not round-trip") }
            if let entries {
                do { try index.verify(entries) } catch { check(error) }
            }
        } catch {
            check(error)
        }
    }
    // The signature in the gzip header is read before anything is authenticated: what splits
    // gives back exactly the bytes around the subfield, and embedding it again gives the input.
    do {
        if let split = try EmbeddedSignature.split(rest) {
            guard split.member.count + 6 + split.signature.count == rest.count, split.member.prefix(3) == rest.prefix(3),
                split.member.count >= 10, split.member[3] == 0
            else { fatalError("an embedded signature splits into the wrong bytes") }
            if let text = String(validating: split.signature, as: UTF8.self), EmbeddedSignature.embed(text, in: split.member) != rest,
                split.member.count >= 18
            {
                fatalError("an embedded signature does not round-trip")
            }
            do { _ = try MinisignSignature(parsing: split.signature) } catch { check(error) }
        }
    } catch {
        check(error)
    }
    // The lock file (providers.lock) is read at every host start: the same bytes as a lock.
    do {
        let lock = try LockFile.decode(rest, file: "providers.lock")
        guard try LockFile.decode(lock.encoded(), file: "providers.lock") == lock else { fatalError("a lock does not round-trip") }
    } catch {
        check(error)
    }
}

/// Every refusal says what and how to fix it, in bounded text.
func check(_ error: PackageError) {
    if error.message.isEmpty || error.fix.isEmpty { fatalError("an error without a message or a fix: \(error)") }
    if error.message.utf8.count > 2000 { fatalError("an error message of \(error.message.utf8.count) bytes") }
}

@main
enum Main {
    static func main() { FuzzMain.start(fuzzOne) }
}
