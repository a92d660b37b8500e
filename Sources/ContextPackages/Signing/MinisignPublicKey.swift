import ContextHost
import ContextProviderKit

/// A minisign public key: an Ed25519 key and the 8-byte id that signatures name it by.
package struct MinisignPublicKey: Sendable, Hashable {
    /// The key id (8 bytes, as stored; printed little-endian, see `keyIDString`).
    package var keyID: [UInt8]
    /// The Ed25519 public key (32 bytes).
    package var bytes: [UInt8]

    /// The largest public key text accepted.
    static let maxTextBytes = 4096
    /// The decoded key line: "Ed" + key id + key.
    static let encodedBytes = 2 + MinisignFormat.keyIDBytes + Sodium.publicKeyBytes

    /// A key from its parts (8-byte id, 32-byte key; not checked).
    package init(keyID: [UInt8], bytes: [UInt8]) {
        self.keyID = keyID
        self.bytes = bytes
    }

    /// Accepts a `.pub` file (untrusted comment line + base64 line) or the bare base64 line (what
    /// `minisign -P` takes).
    package init(parsing text: String) throws(PackageError) {
        try self.init(parsing: Array(text.utf8))
    }

    /// The same, from the file's bytes.
    package init(parsing data: [UInt8]) throws(PackageError) {
        guard let lines = MinisignFormat.lines(data, maxBytes: Self.maxTextBytes) else {
            throw Self.invalid("it is over \(Self.maxTextBytes) bytes or holds a NUL byte")
        }
        let content = lines.filter { !$0.allSatisfy { $0 == 0x20 || $0 == 0x09 } }
        let keyLine: ArraySlice<UInt8>
        switch content.count {
        case 1: keyLine = content[0]
        case 2:
            guard MinisignFormat.hasPrefix(content[0], MinisignFormat.untrustedPrefix) else {
                throw Self.invalid("its first line does not start with '\(MinisignFormat.untrustedPrefix)'")
            }
            keyLine = content[1]
        case 0: throw Self.invalid("it is empty")
        default: throw Self.invalid("it has \(content.count) lines; expected a comment line and a key line")
        }
        guard let decoded = MinisignFormat.base64(keyLine, count: Self.encodedBytes) else {
            throw Self.invalid("the key line is not the Base64 of a \(Self.encodedBytes)-byte minisign key")
        }
        guard Array(decoded[0..<2]) == MinisignFormat.ed else {
            throw Self.invalid("its algorithm is not Ed25519 ('Ed')")
        }
        keyID = Array(decoded[2..<10])
        bytes = Array(decoded[10...])
    }

    /// The key id as 16 uppercase hex digits (how this host names keys).
    package var keyIDString: String { MinisignFormat.keyIDString(keyID) }

    /// The key id as minisign prints it in its comments: without leading zeros.
    package var printedKeyIDString: String { MinisignFormat.printedKeyIDString(keyID) }

    /// The key line: Base64 of "Ed" + key id + key (what `minisign -P` takes).
    package var base64: String { Base64.encode(MinisignFormat.ed + keyID + bytes) }

    /// The `.pub` file: `untrusted comment: COMMENT` (control characters made spaces) and the key line.
    package func fileText(comment: String) -> String {
        "\(MinisignFormat.untrustedPrefix)\(MinisignFormat.oneLine(comment, maxBytes: MinisignFormat.maxCommentBytes))\n\(base64)\n"
    }

    /// The default comment minisign writes: `minisign public key ID`.
    package var defaultComment: String { "minisign public key \(printedKeyIDString)" }

    /// keyInvalid for a public key, saying what is wrong.
    static func invalid(_ what: String) -> PackageError {
        PackageError(
            .keyInvalid, "The public key is not in the minisign format: \(what).",
            fix: "Use the author's `.pub` file (two lines: 'untrusted comment: …' and the key) or its key line, e.g. RWQ…")
    }
}
