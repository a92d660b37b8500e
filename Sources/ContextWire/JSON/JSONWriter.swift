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

    package static func appendString(_ string: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { utf8 in
            // Most strings need no escapes: copy them whole.
            var clean = JSONReader.skipPlainBlocks(UnsafeRawBufferPointer(utf8), from: 0, stoppingAtNonASCII: false)
            while clean + 8 <= utf8.count,
                  !JSONReader.hasSpecialByte(UnsafeRawBufferPointer(utf8).loadUnaligned(fromByteOffset: clean, as: UInt64.self)) {
                clean += 8
            }
            while clean < utf8.count, utf8[clean] >= 0x20, utf8[clean] != 0x22, utf8[clean] != 0x5C { clean += 1 }
            if clean == utf8.count {
                output.append(contentsOf: utf8)
                return
            }
            var runStart = 0
            for index in clean..<utf8.count {
                let byte = utf8[index]
                let escape: UInt8?
                switch byte {
                case 0x22: escape = UInt8(ascii: "\"")
                case 0x5C: escape = UInt8(ascii: "\\")
                case 0x0A: escape = UInt8(ascii: "n")
                case 0x0D: escape = UInt8(ascii: "r")
                case 0x09: escape = UInt8(ascii: "t")
                case 0x08: escape = UInt8(ascii: "b")
                case 0x0C: escape = UInt8(ascii: "f")
                case 0..<0x20: escape = 0
                default: continue
                }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                runStart = index + 1
                output.append(UInt8(ascii: "\\"))
                if let escape, escape != 0 {
                    output.append(escape)
                } else {
                    output.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                    output.append(hexDigits[Int(byte >> 4)])
                    output.append(hexDigits[Int(byte & 0xF)])
                }
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count]))
        }
        output.append(UInt8(ascii: "\""))
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
