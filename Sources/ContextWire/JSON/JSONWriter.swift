/// Appends compact JSON text to a byte buffer.
///
/// Output is deterministic: object members keep their order, integers print without a fraction,
/// and `/` is not escaped.
package enum JSONWriter {
    package static func append(_ value: JSONValue, to output: inout [UInt8]) {
        switch value {
        case .null: output.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
        case .bool(let flag):
            if flag {
                output.append(contentsOf: [0x74, 0x72, 0x75, 0x65])
            } else {
                output.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65])
            }
        case .number(let number): appendNumber(number, to: &output)
        case .string(let string): appendString(string, to: &output)
        case .array(let array):
            output.append(UInt8(ascii: "["))
            var first = true
            for element in array {
                if !first { output.append(UInt8(ascii: ",")) }
                first = false
                append(element, to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            for index in 0..<object.keys.count {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                appendString(object.keys[index], to: &output)
                output.append(UInt8(ascii: ":"))
                append(object.values[index], to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    package static func appendNumber(_ number: Double, to output: inout [UInt8]) {
        guard number.isFinite else {
            output.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
            return
        }
        if number.rounded() == number, abs(number) < 1e15 {
            appendInteger(Int64(number), to: &output)
        } else {
            output.append(contentsOf: number.description.utf8)
        }
    }

    package static func appendInteger(_ value: Int64, to output: inout [UInt8]) {
        if value >= 0, value < 10 {
            output.append(UInt8(truncatingIfNeeded: value) &+ UInt8(ascii: "0"))
            return
        }
        // The digits are written from the end of a buffer and appended in one piece (a summary
        // or an answer writes thousands of numbers; appending digit by digit checked the array's
        // capacity for each).
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: a sign and 20 digits fit
        withUnsafeMutableBytes(of: &digits) { buffer in
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(truncatingIfNeeded: magnitude % 10) &+ UInt8(ascii: "0")
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                start -= 1
                buffer[start] = UInt8(ascii: "-")
            }
            output.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// The index of the first byte at or after `index` that a JSON string must escape (`"`, `\\`
    /// or below 0x20), or `bytes.count`.
    @inline(__always)
    static func nextSpecialByte(_ bytes: UnsafeRawBufferPointer, from index: Int) -> Int {
        var index = JSONReader.skipPlainBlocks(bytes, from: index, stoppingAtNonASCII: false)
        while index &+ 8 <= bytes.count, !JSONReader.hasSpecialByte(bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)) {
            index &+= 8
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x20 || byte == 0x22 || byte == 0x5C { break }
            index &+= 1
        }
        return index
    }

    /// Appends `string` as a JSON string literal: quoted, with `"`, `\\` and control characters
    /// escaped (other characters as their UTF-8 bytes).
    package static func appendString(_ string: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { utf8 in
            // Plain runs are found 16 (then 8) bytes at a time.
            let raw = UnsafeRawBufferPointer(utf8)
            let first = nextSpecialByte(raw, from: 0)
            if first == utf8.count {
                output.append(contentsOf: utf8)
            } else {
                output.append(contentsOf: escaped(raw, from: first))
            }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// The escaped text of `bytes`, whose first byte to escape is at `first`: its length found by a
    /// scan, then written with pointer stores into an array of that size (appending each run and
    /// escape to the output cost more than the second scan: a 1 KB note has ~22 line breaks).
    private static func escaped(_ bytes: UnsafeRawBufferPointer, from first: Int) -> [UInt8] {
        var length = bytes.count
        var index = first
        while index < bytes.count {
            length += escapeLength(bytes[index]) - 1
            index = nextSpecialByte(bytes, from: index + 1)
        }
        return [UInt8](unsafeUninitializedCapacity: length) { buffer, count in
            guard let source = bytes.baseAddress, let target = buffer.baseAddress else { return }
            var write = 0
            var runStart = 0
            var index = first
            while true {
                let run = index - runStart
                (target + write).initialize(from: source.assumingMemoryBound(to: UInt8.self) + runStart, count: run)
                write += run
                guard index < bytes.count else { break }
                let byte = bytes[index]
                target[write] = UInt8(ascii: "\\")
                switch byte {
                case 0x22: target[write + 1] = UInt8(ascii: "\"")
                case 0x5C: target[write + 1] = UInt8(ascii: "\\")
                case 0x0A: target[write + 1] = UInt8(ascii: "n")
                case 0x0D: target[write + 1] = UInt8(ascii: "r")
                case 0x09: target[write + 1] = UInt8(ascii: "t")
                case 0x08: target[write + 1] = UInt8(ascii: "b")
                case 0x0C: target[write + 1] = UInt8(ascii: "f")
                default:
                    target[write + 1] = UInt8(ascii: "u")
                    target[write + 2] = UInt8(ascii: "0")
                    target[write + 3] = UInt8(ascii: "0")
                    target[write + 4] = hexDigits[Int(byte >> 4)]
                    target[write + 5] = hexDigits[Int(byte & 0xF)]
                }
                write += escapeLength(byte)
                runStart = index + 1
                index = nextSpecialByte(bytes, from: runStart)
            }
            count = write
        }
    }

    /// How many bytes the escape of `byte` (a byte `nextSpecialByte` stops at) takes.
    @inline(__always)
    private static func escapeLength(_ byte: UInt8) -> Int {
        switch byte {
        case 0x22, 0x5C, 0x0A, 0x0D, 0x09, 0x08, 0x0C: 2
        default: 6
        }
    }
}

extension JSONValue {
    /// Compact UTF-8 JSON text.
    public var jsonBytes: [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(64)
        JSONWriter.append(self, to: &output)
        return output
    }

    /// Compact JSON text.
    public var jsonString: String { String(decoding: jsonBytes, as: UTF8.self) }
}

extension JSONValue: CustomStringConvertible {
    /// Compact JSON text (`jsonString`).
    public var description: String { jsonString }
}
