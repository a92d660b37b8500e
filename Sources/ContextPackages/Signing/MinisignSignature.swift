import ContextHost
import ContextProviderKit

/// A minisign signature file (`.minisig`): the Ed25519 signature of a message (prehashed "ED" or
/// legacy "Ed"), the signing key's id, and a trusted comment covered by a second, global signature.
package struct MinisignSignature: Sendable, Equatable {
    /// The id of the key that made the signature (8 bytes).
    package var keyID: [UInt8]
    /// The trusted comment (signed; valid UTF-8 with no control characters but tab).
    package var trustedComment: String
    /// The untrusted comment (not signed; anyone may have changed it), made printable.
    package var untrustedComment: String
    /// Whether the message was hashed with BLAKE2b-512 before signing ("ED", what minisign makes
    /// by default); false for legacy "Ed" signatures of the message itself.
    package var isPrehashed: Bool
    /// The signature of the message (or of its hash).
    var signature: [UInt8]
    /// The signature of `signature` + the trusted comment's bytes.
    var globalSignature: [UInt8]

    /// The largest signature file accepted.
    package static let maxTextBytes = 8192
    /// The decoded signature line: algorithm (2) + key id (8) + signature (64).
    static let encodedBytes = 74

    /// Reads a signature file: `untrusted comment: …`, the signature line, `trusted comment: …`,
    /// the global signature line. Throws signatureInvalid saying what is wrong.
    package init(parsing text: String) throws(PackageError) {
        try self.init(parsing: Array(text.utf8))
    }

    /// The same, from the file's bytes.
    package init(parsing bytes: [UInt8]) throws(PackageError) {
        guard bytes.count <= Self.maxTextBytes else {
            throw Self.invalid("it is \(bytes.count) bytes, over the \(Self.maxTextBytes)-byte limit")
        }
        guard let lines = MinisignFormat.lines(bytes, maxBytes: Self.maxTextBytes) else {
            throw Self.invalid("it holds a NUL byte")
        }
        guard lines.count == 4 else {
            throw Self.invalid("it has \(lines.count) lines; expected 4 (untrusted comment, signature, trusted comment, global signature)")
        }
        guard MinisignFormat.hasPrefix(lines[0], MinisignFormat.untrustedPrefix) else {
            throw Self.invalid("line 1 does not start with '\(MinisignFormat.untrustedPrefix)'")
        }
        // Not signed, so anything goes; made printable (invalid UTF-8 replaced, controls made spaces).
        let untrusted = MinisignFormat.oneLine(
            String(decoding: lines[0].dropFirst(MinisignFormat.untrustedPrefix.utf8.count), as: UTF8.self), maxBytes: Self.maxTextBytes)
        guard let decoded = MinisignFormat.base64(lines[1], count: Self.encodedBytes) else {
            throw Self.invalid("line 2 is not the Base64 of a \(Self.encodedBytes)-byte minisign signature")
        }
        let algorithm = Array(decoded[0..<2])
        guard algorithm == MinisignFormat.edPrehashed || algorithm == MinisignFormat.ed else {
            throw Self.invalid("its algorithm is neither 'ED' (prehashed Ed25519) nor 'Ed' (Ed25519)")
        }
        guard MinisignFormat.hasPrefix(lines[2], MinisignFormat.trustedPrefix) else {
            throw Self.invalid("line 3 does not start with '\(MinisignFormat.trustedPrefix)'")
        }
        guard let trusted = MinisignFormat.printable(lines[2].dropFirst(MinisignFormat.trustedPrefix.utf8.count)) else {
            throw Self.invalid("the trusted comment is not valid UTF-8 or holds control characters")
        }
        guard let global = MinisignFormat.base64(lines[3], count: Sodium.signatureBytes) else {
            throw Self.invalid("line 4 is not the Base64 of a 64-byte global signature")
        }
        isPrehashed = algorithm == MinisignFormat.edPrehashed
        keyID = Array(decoded[2..<10])
        signature = Array(decoded[10..<74])
        trustedComment = trusted
        untrustedComment = untrusted
        globalSignature = global
    }

    /// The key id of the signing key, as minisign prints it.
    package var keyIDString: String { MinisignFormat.keyIDString(keyID) }

    /// A prehashed ("ED") signature file of `message`, like `minisign -S -t TRUSTED -c UNTRUSTED`.
    /// Control characters (but tab) in the comments become spaces; the untrusted comment is cut
    /// to 1 KiB and the trusted comment to 4 KiB.
    package static func sign(_ message: [UInt8], with key: MinisignSecretKey, trustedComment: String, untrustedComment: String) -> String {
        let trusted = MinisignFormat.oneLine(trustedComment, maxBytes: MinisignFormat.maxTrustedCommentBytes)
        let untrusted = MinisignFormat.oneLine(untrustedComment, maxBytes: MinisignFormat.maxCommentBytes)
        let hash = Sodium.blake2b(message, length: 64)
        let signature = Sodium.sign(hash, secretKey: key.secretBytes)
        let global = Sodium.sign(signature + Array(trusted.utf8), secretKey: key.secretBytes)
        let line = Base64.encode(MinisignFormat.edPrehashed + key.publicKey.keyID + signature)
        return "\(MinisignFormat.untrustedPrefix)\(untrusted)\n\(line)\n\(MinisignFormat.trustedPrefix)\(trusted)\n\(Base64.encode(global))\n"
    }

    /// Verifies the signature of `message` and the global signature over the trusted comment with
    /// `key`. signatureMismatch when the signature names another key (saying which key signed),
    /// when the message was changed, or when the trusted comment was.
    package func verify(_ message: [UInt8], with key: MinisignPublicKey) throws(PackageError) {
        guard keyID == key.keyID else {
            throw PackageError(
                .signatureMismatch, "The signature was made by key \(keyIDString), not by key \(key.keyIDString).",
                fix: "Verify with the public key \(keyIDString), or ask the author which key signs their bundles.")
        }
        let signed = isPrehashed ? Sodium.blake2b(message, length: 64) : message
        guard Sodium.verify(signature, of: signed, publicKey: key.bytes) else {
            throw PackageError(
                .signatureMismatch,
                "The signature by key \(key.keyIDString) does not match: the signed file was changed after signing, or the signature is damaged.",
                fix: "Get the bundle again from its author; do not install it as it is.")
        }
        guard Sodium.verify(globalSignature, of: signature + Array(trustedComment.utf8), publicKey: key.bytes) else {
            throw PackageError(
                .signatureMismatch,
                "The trusted comment of the signature by key \(key.keyIDString) was changed after signing (its global signature does not match).",
                fix: "Get the bundle again from its author; do not install it as it is.")
        }
    }

    /// signatureInvalid, saying what is wrong.
    static func invalid(_ what: String) -> PackageError {
        PackageError(
            .signatureInvalid, "The signature is not in the minisign format: \(what).",
            fix: "Sign again with `minisign -S` or `context-host package --sign KEY`.")
    }
}
