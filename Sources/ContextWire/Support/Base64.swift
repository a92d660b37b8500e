/// Standard Base64 (RFC 4648 §4, with padding), without Foundation.
public enum Base64 {
    /// A static string rather than an array: encoding reads it without reference counting, which
    /// threads encoding side by side would otherwise contend on.
    private static let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

    /// Encodes bytes as Base64 text.
    public static func encode<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        // Contiguous bytes (arrays, native strings' UTF-8) take the fast path; this generic
        // function is not specialized across modules.
        if let text = bytes.withContiguousStorageIfAvailable({ encode(UnsafeRawBufferPointer($0)) }) {
            return text
        }
        return Array(bytes).withUnsafeBytes { encode($0) }
    }

    /// Appends the Base64 text of `bytes` to `output` (e.g. after a `data:` URI's prefix, without
    /// an intermediate string).
    public static func append(_ bytes: [UInt8], to output: inout [UInt8]) {
        let start = output.count
        let count = encodedCount(bytes.count)
        output.append(contentsOf: repeatElement(0, count: count))
        output.withUnsafeMutableBufferPointer { buffer in
            bytes.withUnsafeBytes { input in
                encode(input, into: UnsafeMutableBufferPointer(rebasing: buffer[start...]))
            }
        }
    }

    /// A `data:` URI (RFC 2397) of `bytes`, `data:<mediaType>;base64,<Base64 text>`, such as a
    /// chip's thumbnail, written in one allocation.
    public static func dataURI(mediaType: String, _ bytes: UnsafeRawBufferPointer) -> String {
        let prefix: StaticString = "data:", suffix: StaticString = ";base64,"
        var mediaType = mediaType
        return mediaType.withUTF8 { type in
            let start = prefix.utf8CodeUnitCount + type.count + suffix.utf8CodeUnitCount
            let count = start + encodedCount(bytes.count)
            return String(unsafeUninitializedCapacity: count) { output in
                var index = 0
                func put(_ part: UnsafeBufferPointer<UInt8>) {
                    _ = UnsafeMutableBufferPointer(rebasing: output[index..<index + part.count]).initialize(from: part)
                    index += part.count
                }
                put(UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount))
                put(type)
                put(UnsafeBufferPointer(start: suffix.utf8Start, count: suffix.utf8CodeUnitCount))
                encode(bytes, into: UnsafeMutableBufferPointer(rebasing: output[start..<count]))
                return count
            }
        }
    }

    /// The two Base64 characters of every 12-bit value, as they lie in memory: three input bytes
    /// take two lookups instead of four. A pointer, not an array, so threads encoding side by side
    /// read it without reference counting; filled once, before its first use, then only read.
    private nonisolated(unsafe) static let pairs: UnsafePointer<UInt16> = {
        let table = UnsafeMutablePointer<UInt16>.allocate(capacity: 4096)
        let alphabet = UnsafeBufferPointer(start: Self.alphabet.utf8Start, count: 64)
        for value in 0..<4096 {
            let first = alphabet[value >> 6], second = alphabet[value & 0x3F]
            table[value] = UInt16(littleEndian: UInt16(first) | UInt16(second) << 8)
        }
        return UnsafePointer(table)
    }()

    /// The length of the Base64 text of `count` bytes (with padding).
    public static func encodedCount(_ count: Int) -> Int { (count + 2) / 3 * 4 }

    /// Writes the Base64 text of `bytes` into `output`, which must hold exactly
    /// `encodedCount(bytes.count)` bytes: for text built around it in one allocation, such as a
    /// `data:` URI whose first bytes are always the same and so are encoded once (when their
    /// length is a multiple of 3, the text of the rest follows theirs unchanged).
    public static func encode(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableBufferPointer<UInt8>) {
        precondition(output.count == encodedCount(bytes.count), "Base64.encode(_:into:): the output must hold exactly encodedCount(bytes.count) bytes")
        do {
            let alphabet = UnsafeBufferPointer(start: Self.alphabet.utf8Start, count: 64)
            let pairs = Self.pairs
            let target = UnsafeMutableRawPointer(output.baseAddress)
            var input = 0
            var index = 0
            // Six bytes at a time, read as one big-endian word (of which the last two bytes are
            // not used) and written as eight characters at once.
            while input + 8 <= bytes.count {
                let word = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: input, as: UInt64.self))
                // (A pair read as a little-endian number has its first character in the low byte.)
                func pair(_ value: UInt64) -> UInt64 { UInt64(UInt16(littleEndian: pairs[Int(value & 0xFFF)])) }
                let characters = pair(word >> 52) | pair(word >> 40) << 16 | pair(word >> 28) << 32 | pair(word >> 16) << 48
                target!.storeBytes(of: UInt64(littleEndian: characters), toByteOffset: index, as: UInt64.self)
                input += 6
                index += 8
            }
            while input + 3 <= bytes.count {
                let value = Int(bytes[input]) << 16 | Int(bytes[input + 1]) << 8 | Int(bytes[input + 2])
                target!.storeBytes(of: pairs[value >> 12], toByteOffset: index, as: UInt16.self)
                target!.storeBytes(of: pairs[value & 0xFFF], toByteOffset: index + 2, as: UInt16.self)
                input += 3
                index += 4
            }
            let rest = bytes.count - input
            if rest > 0 {
                let value = UInt32(bytes[input]) << 16 | (rest == 2 ? UInt32(bytes[input + 1]) << 8 : 0)
                output[index] = alphabet[Int(value >> 18 & 0x3F)]
                output[index + 1] = alphabet[Int(value >> 12 & 0x3F)]
                output[index + 2] = rest == 2 ? alphabet[Int(value >> 6 & 0x3F)] : UInt8(ascii: "=")
                output[index + 3] = UInt8(ascii: "=")
            }
        }
    }

    /// Encodes bytes as Base64 text.
    public static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        let count = encodedCount(bytes.count)
        guard count > 0 else { return "" }
        return String(unsafeUninitializedCapacity: count) { output in
            encode(bytes, into: UnsafeMutableBufferPointer(rebasing: output[0..<count]))
            return count
        }
    }

    /// The value of every byte as a Base64 digit, 0xFF for bytes that are not one (`=` included).
    /// A pointer, not an array: decoding reads it once per call instead of through a lazy
    /// global's check per character (which made a brokered 10 KB body cost ~80 µs to decode in a
    /// provider; Benchmarks/results/egress.md). Filled once, then only read.
    private nonisolated(unsafe) static let digits: UnsafePointer<UInt8> = {
        let table = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
        table.initialize(repeating: 0xFF, count: 256)
        for index in 0..<64 { table[Int(Self.alphabet.utf8Start[index])] = UInt8(index) }
        return UnsafePointer(table)
    }()

    /// Decodes Base64 text; `nil` if it is not valid padded Base64.
    public static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode(UnsafeRawBufferPointer($0)) }
    }

    /// Decodes Base64 text given as bytes; `nil` if it is not valid padded Base64 (`=` only as
    /// the last one or two characters).
    public static func decode(_ input: UnsafeRawBufferPointer) -> [UInt8]? {
        guard input.count % 4 == 0 else { return nil }
        guard input.count > 0 else { return [] }
        let padding = input[input.count - 1] != UInt8(ascii: "=") ? 0 : input[input.count - 2] == UInt8(ascii: "=") ? 2 : 1
        let count = input.count / 4 * 3 - padding
        let table = Self.digits
        var valid = true
        let output = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var index = 0
            var written = 0
            // Every quantum but a padded last one: four digits, three bytes.
            let whole = input.count - (padding > 0 ? 4 : 0)
            while index < whole {
                let a = table[Int(input[index])], b = table[Int(input[index + 1])]
                let c = table[Int(input[index + 2])], d = table[Int(input[index + 3])]
                guard (a | b | c | d) & 0x80 == 0 else {
                    valid = false
                    break
                }
                let value = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                buffer[written] = UInt8(truncatingIfNeeded: value >> 16)
                buffer[written + 1] = UInt8(truncatingIfNeeded: value >> 8)
                buffer[written + 2] = UInt8(truncatingIfNeeded: value)
                index += 4
                written += 3
            }
            if valid, padding > 0 {
                // `xy==` is one byte, `xyz=` two.
                let a = table[Int(input[index])], b = table[Int(input[index + 1])]
                let c = padding == 1 ? table[Int(input[index + 2])] : 0
                if (a | b | c) & 0x80 != 0 {
                    valid = false
                } else {
                    let value = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6
                    buffer[written] = UInt8(truncatingIfNeeded: value >> 16)
                    written += 1
                    if padding == 1 {
                        buffer[written] = UInt8(truncatingIfNeeded: value >> 8)
                        written += 1
                    }
                }
            }
            initialized = written
        }
        return valid ? output : nil
    }
}
