/// Bounds-checked little-endian reads from untrusted bytes: every read answers `nil` instead of
/// trapping when it would leave the buffer.
struct ByteReader {
    /// The whole input.
    let bytes: [UInt8]

    /// The number of bytes.
    var count: Int { bytes.count }

    /// The byte range `offset ..< offset + size` when it lies inside the input (no overflow).
    func range(_ offset: UInt64, _ size: UInt64) -> Range<Int>? {
        let (end, overflow) = offset.addingReportingOverflow(size)
        guard !overflow, end <= UInt64(bytes.count) else { return nil }
        return Int(offset)..<Int(end)
    }

    /// An unsigned little-endian integer of `width` bytes at `offset`, or `nil` out of range.
    private func unsigned(_ offset: Int, _ width: Int) -> UInt64? {
        guard offset >= 0, width <= bytes.count, offset <= bytes.count - width else { return nil }
        var value: UInt64 = 0
        for index in 0..<width { value |= UInt64(bytes[offset + index]) << UInt64(8 * index) }
        return value
    }

    /// The byte at `offset`.
    func u8(_ offset: Int) -> UInt8? { offset >= 0 && offset < bytes.count ? bytes[offset] : nil }
    /// A little-endian `UInt16` at `offset`.
    func u16(_ offset: Int) -> UInt16? { unsigned(offset, 2).map { UInt16(truncatingIfNeeded: $0) } }
    /// A little-endian `UInt32` at `offset`.
    func u32(_ offset: Int) -> UInt32? { unsigned(offset, 4).map { UInt32(truncatingIfNeeded: $0) } }
    /// A little-endian `UInt64` at `offset`.
    func u64(_ offset: Int) -> UInt64? { unsigned(offset, 8) }

    /// The NUL-terminated string at `offset` inside `bounds` (at most `limit` bytes before the NUL),
    /// or `nil` when it is out of range, unterminated or longer.
    func cString(at offset: UInt64, in bounds: Range<Int>, limit: Int = 4096) -> String? {
        guard offset < UInt64(bounds.count) else { return nil }
        let start = bounds.lowerBound + Int(offset)
        var end = start
        while end < bounds.upperBound, bytes[end] != 0 {
            end += 1
            if end - start > limit { return nil }
        }
        guard end < bounds.upperBound else { return nil }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    /// Whether the bytes at `offset` inside `bounds` are `prefix`.
    func hasPrefix(_ prefix: [UInt8], at offset: UInt64, in bounds: Range<Int>) -> Bool {
        guard offset < UInt64(bounds.count), UInt64(prefix.count) <= UInt64(bounds.count) - offset else { return false }
        let start = bounds.lowerBound + Int(offset)
        for index in 0..<prefix.count where bytes[start + index] != prefix[index] { return false }
        return true
    }

    /// The first index of `needle` inside `bounds`, scanning at most `limit` bytes.
    func firstIndex(of needle: [UInt8], in bounds: Range<Int>, limit: Int) -> Int? {
        guard let first = needle.first, !bounds.isEmpty else { return nil }
        let end = bounds.lowerBound + min(bounds.count, limit)
        guard end - bounds.lowerBound >= needle.count else { return nil }
        var index = bounds.lowerBound
        let last = end - needle.count
        while index <= last {
            if bytes[index] == first {
                var matched = true
                for k in 1..<needle.count where bytes[index + k] != needle[k] {
                    matched = false
                    break
                }
                if matched { return index }
            }
            index += 1
        }
        return nil
    }
}
