import CHostSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// SHA-256 (FIPS 180-4), incremental: the CPU's SHA instructions where there are some (x86-64
/// SHA-NI, `CHostSupport/sha256_hw.c`, about 6x faster), else pure Swift.
///
/// ```swift
/// let hex = SHA256.hex(of: bytes)          // one shot
/// var hasher = SHA256(); hasher.update(part1); hasher.update(part2); let digest = hasher.finalize()
/// ```
package struct SHA256: Sendable {
    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19
    )
    /// Bytes waiting for a full 64-byte block.
    private var buffer: [UInt8] = []
    private var length: UInt64 = 0
    /// Forces the portable path (for tests).
    private var portable = false

    package init() {
        buffer.reserveCapacity(64)
    }

    /// The 32-byte digest of `bytes`.
    package static func hash(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// The 32-byte digest of `bytes`.
    package static func hash(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { hash($0) }
    }

    /// The digest of `bytes` as 64 lowercase hex digits.
    package static func hex(of bytes: UnsafeRawBufferPointer) -> String {
        hexString(hash(bytes))
    }

    /// The digest of `bytes` as 64 lowercase hex digits.
    package static func hex(of bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { hex(of: $0) }
    }

    /// The digest of the UTF-8 of `text` as 64 lowercase hex digits.
    package static func hex(of text: String) -> String {
        hex(of: Array(text.utf8))
    }

    /// The digest of the file at `path` as 64 lowercase hex digits, or `nil` if it cannot be read.
    /// Reads in 1 MiB chunks. (The loader should prefer hashing the exact bytes it loads.)
    package static func hex(ofFile path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var hasher = SHA256()
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if n == 0 { break }
            chunk.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
        }
        return hexString(hasher.finalize())
    }

    /// Lowercase hex of `bytes`.
    package static func hexString(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Adds bytes.
    package mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// Adds bytes.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        length &+= UInt64(bytes.count)
        var offset = 0
        if !buffer.isEmpty {
            let take = min(64 - buffer.count, bytes.count)
            buffer.append(contentsOf: UnsafeRawBufferPointer(start: base, count: take))
            offset = take
            if buffer.count == 64 {
                buffer.withUnsafeBytes { compress($0.baseAddress!, blocks: 1) }
                buffer.removeAll(keepingCapacity: true)
            }
        }
        let blocks = (bytes.count - offset) / 64
        if blocks > 0 {
            compress(base + offset, blocks: blocks)
            offset += blocks * 64
        }
        if offset < bytes.count {
            buffer.append(contentsOf: UnsafeRawBufferPointer(start: base + offset, count: bytes.count - offset))
        }
    }

    /// Pads, and returns the 32-byte digest. The hasher should not be used afterwards.
    package mutating func finalize() -> [UInt8] {
        let bitLength = length &* 8
        var tail = buffer
        tail.append(0x80)
        while tail.count % 64 != 56 { tail.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        tail.withUnsafeBytes { compress($0.baseAddress!, blocks: tail.count / 64) }
        buffer.removeAll()
        var digest = [UInt8]()
        digest.reserveCapacity(32)
        for word in [state.0, state.1, state.2, state.3, state.4, state.5, state.6, state.7] {
            digest.append(UInt8(truncatingIfNeeded: word >> 24))
            digest.append(UInt8(truncatingIfNeeded: word >> 16))
            digest.append(UInt8(truncatingIfNeeded: word >> 8))
            digest.append(UInt8(truncatingIfNeeded: word))
        }
        return digest
    }

    /// The round constants (CHostSupport's table, which the hardware path reads too).
    private static let k: [UInt32] = withUnsafeBytes(of: ctxh_sha256_k) { Array($0.bindMemory(to: UInt32.self)) }

    @inline(__always)
    private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 &- n)) }

    /// Whether the hardware path is used (tests compare it with the portable one).
    package static let usesHardware = ctxh_sha256_hw_available() == 1

    private mutating func compress(_ data: UnsafeRawPointer, blocks: Int) {
        if Self.usesHardware, !portable {
            withUnsafeMutableBytes(of: &state) { words in
                ctxh_sha256_hw_blocks(
                    words.baseAddress!.assumingMemoryBound(to: UInt32.self), data.assumingMemoryBound(to: UInt8.self), blocks)
            }
            return
        }
        compressPortably(data, blocks: blocks)
    }

    /// The portable compression function, also the reference the hardware one is tested against.
    package static func portableHash(_ bytes: [UInt8]) -> [UInt8] {
        var hasher = SHA256()
        hasher.portable = true
        hasher.update(bytes)
        return hasher.finalize()
    }

    private mutating func compressPortably(_ data: UnsafeRawPointer, blocks: Int) {
        var (h0, h1, h2, h3, h4, h5, h6, h7) = state
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            SHA256.k.withUnsafeBufferPointer { k in
                for block in 0..<blocks {
                    let p = data + block * 64
                    for i in 0..<16 {
                        w[i] = UInt32(bigEndian: p.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self))
                    }
                    for i in 16..<64 {
                        let a = w[i - 15], b = w[i - 2]
                        let s0 = SHA256.rotr(a, 7) ^ SHA256.rotr(a, 18) ^ (a >> 3)
                        let s1 = SHA256.rotr(b, 17) ^ SHA256.rotr(b, 19) ^ (b >> 10)
                        w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
                    }
                    var a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7
                    for i in 0..<64 {
                        let s1 = SHA256.rotr(e, 6) ^ SHA256.rotr(e, 11) ^ SHA256.rotr(e, 25)
                        let ch = (e & f) ^ (~e & g)
                        let t1 = h &+ s1 &+ ch &+ k[i] &+ w[i]
                        let s0 = SHA256.rotr(a, 2) ^ SHA256.rotr(a, 13) ^ SHA256.rotr(a, 22)
                        let maj = (a & b) ^ (a & c) ^ (b & c)
                        let t2 = s0 &+ maj
                        h = g
                        g = f
                        f = e
                        e = d &+ t1
                        d = c
                        c = b
                        b = a
                        a = t1 &+ t2
                    }
                    h0 &+= a
                    h1 &+= b
                    h2 &+= c
                    h3 &+= d
                    h4 &+= e
                    h5 &+= f
                    h6 &+= g
                    h7 &+= h
                }
            }
        }
        state = (h0, h1, h2, h3, h4, h5, h6, h7)
    }
}
