#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Identifiers and timestamps for items, without Foundation.
public enum ItemIdentity {
    /// A new random (version 4) UUID in lowercase canonical form, e.g.
    /// `"3f2504e0-4f89-41d3-9a0c-0305e82c3301"`.
    public static func newUUID() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: 16)
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        for index in 0..<8 {
            bytes[index] = UInt8(truncatingIfNeeded: high >> (UInt64(7 - index) * 8))
            bytes[8 + index] = UInt8(truncatingIfNeeded: low >> (UInt64(7 - index) * 8))
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x40  // version 4
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 4122 variant
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        var output: [UInt8] = []
        output.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { output.append(UInt8(ascii: "-")) }
            output.append(hex[Int(byte >> 4)])
            output.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The current time as an RFC 3339 UTC timestamp with second precision, e.g.
    /// `"2025-01-31T09:30:00Z"`.
    public static func nowRFC3339() -> String {
        rfc3339(secondsSince1970: nowSecondsSince1970())
    }

    /// The wall clock: whole seconds since 1970-01-01 UTC.
    package static func nowSecondsSince1970() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int(now.tv_sec)
    }

    /// A time (whole seconds since 1970, UTC) as an RFC 3339 timestamp, e.g.
    /// `"2025-01-31T09:30:00Z"`.
    public static func rfc3339(secondsSince1970 value: Int) -> String {
        var seconds = time_t(value)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))Z"
    }
}
