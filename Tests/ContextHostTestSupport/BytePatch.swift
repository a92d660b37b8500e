/// Changes text inside a binary in place, for tests that need a library that says something else
/// (another Swift version, glibc version or provider version) without building one.
public enum BytePatch {
    /// `bytes` with every occurrence of `old` replaced by `new`, and how many there were. The two
    /// must have the same length in UTF-8, so nothing in the file moves.
    public static func replacingAll(_ old: String, with new: String, in bytes: [UInt8]) -> (bytes: [UInt8], count: Int) {
        let from = Array(old.utf8)
        let to = Array(new.utf8)
        precondition(from.count == to.count && !from.isEmpty, "BytePatch: '\(old)' and '\(new)' differ in length")
        var result = bytes
        var count = 0
        var index = 0
        while index + from.count <= result.count {
            if result[index] == from[0], result[index..<(index + from.count)].elementsEqual(from) {
                result.replaceSubrange(index..<(index + from.count), with: to)
                count += 1
                index += from.count
            } else {
                index += 1
            }
        }
        return (result, count)
    }

    /// `bytes` with each byte in `range` set to `value` (a header field of a corrupted copy).
    public static func setting(_ range: Range<Int>, to value: UInt8, in bytes: [UInt8]) -> [UInt8] {
        var result = bytes
        for index in range { result[index] = value }
        return result
    }
}
