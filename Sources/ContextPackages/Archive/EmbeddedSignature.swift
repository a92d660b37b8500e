import ContextHost

/// The bundle file's own signature, carried in its gzip header (docs/packages.md §1), so an
/// installer checks the file before a byte of it is decompressed or parsed even when no
/// `NAME.ctxp.minisig` travels with it.
///
/// `package --sign` writes the gzip member as usual (a 10-byte header with no flags), signs those
/// exact bytes (minisign, prehashed), then sets the header's `FEXTRA` flag and inserts one extra
/// subfield, `CS`, holding the signature text. Reading undoes exactly that: what is verified and
/// then decompressed is the original member, byte for byte. gzip, tar and Python ignore the
/// subfield, so the bundle stays an ordinary `.tar.gz`.
///
/// Only the fixed header, `XLEN` and the subfield headers are read before the signature is
/// checked (bounded: at most `MinisignSignature.maxTextBytes` of signature text).
package enum EmbeddedSignature {
    /// The subfield id, `CS` (RFC 1952 §2.3.1.1).
    static let subfieldID: [UInt8] = [0x43, 0x53]
    /// gzip's `FEXTRA` flag.
    static let extraFlag: UInt8 = 0x04

    /// `member` (a gzip member with no header flags, as `BundleArchive.write` makes it) with
    /// `signature` in a `CS` subfield. nil if `member` has header flags or the text is too long.
    package static func embed(_ signature: String, in member: [UInt8]) -> [UInt8]? {
        let text = Array(signature.utf8)
        guard member.count >= 18, member[0] == 0x1F, member[1] == 0x8B, member[2] == 8, member[3] == 0,
            text.count <= MinisignSignature.maxTextBytes
        else { return nil }
        let extraLength = 4 + text.count
        var result: [UInt8] = []
        result.reserveCapacity(member.count + 2 + extraLength)
        result += member[0..<3]
        result.append(extraFlag)
        result += member[4..<10]
        result += [UInt8(extraLength & 0xFF), UInt8(extraLength >> 8)]
        result += subfieldID
        result += [UInt8(text.count & 0xFF), UInt8(text.count >> 8)]
        result += text
        result += member[10...]
        return result
    }

    /// The signature text and the member it signs, if `bytes` is a gzip member whose only header
    /// flag is `FEXTRA` and whose extra field is exactly one `CS` subfield; nil when the file
    /// carries no embedded signature (no `FEXTRA`, other flags, other subfields, not gzip).
    /// Throws `signatureInvalid` for a `CS` subfield whose lengths do not add up.
    package static func split(_ bytes: [UInt8]) throws(PackageError) -> (signature: [UInt8], member: [UInt8])? {
        guard bytes.count >= 16, bytes[0] == 0x1F, bytes[1] == 0x8B, bytes[2] == 8, bytes[3] == extraFlag,
            bytes[12] == subfieldID[0], bytes[13] == subfieldID[1]
        else { return nil }
        let extraLength = Int(bytes[10]) | Int(bytes[11]) << 8
        let textLength = Int(bytes[14]) | Int(bytes[15]) << 8
        guard extraLength == 4 + textLength, 12 + extraLength <= bytes.count, textLength <= MinisignSignature.maxTextBytes else {
            throw PackageError(
                .signatureInvalid,
                "the signature in the gzip header is damaged (extra field \(extraLength) bytes, signature \(textLength) bytes, file \(bytes.count) bytes); nothing in the file was read",
                fix: "get the bundle again from its author")
        }
        let signature = Array(bytes[16..<(16 + textLength)])
        var member: [UInt8] = []
        member.reserveCapacity(bytes.count - 2 - extraLength)
        member += bytes[0..<3]
        member.append(0)
        member += bytes[4..<10]
        member += bytes[(12 + extraLength)...]
        return (signature, member)
    }
}
