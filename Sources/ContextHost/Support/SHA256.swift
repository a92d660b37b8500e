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

    private static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

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
