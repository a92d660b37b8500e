import ContextHost
import ContextProviderKit

/// A minisign secret key, decrypted: the Ed25519 secret key and its public key (with the key id).
///
/// Never printed: its descriptions and mirror show only the key id.
package struct MinisignSecretKey: Sendable {
    /// The public half, with the key id.
    package var publicKey: MinisignPublicKey
    /// The Ed25519 secret key (64 bytes: seed + public key).
    var secretBytes: [UInt8]
    /// Whether the file it was read from was password-protected (scrypt).
    package private(set) var isEncrypted: Bool

    /// The largest secret key text accepted.
    static let maxTextBytes = 4096
    /// The decoded key line: algorithms (6) + salt (32) + opslimit (8) + memlimit (8) +
    /// key id (8) + secret key (64) + checksum (32).
    static let encodedBytes = 158
    /// Key id + secret key + checksum: the part the password encrypts.
    static let sealedBytes = 104
    /// Key derivation "Sc": scrypt (crypto_pwhash_scryptsalsa208sha256).
    static let kdfScrypt: [UInt8] = [0x53, 0x63]
    /// Key derivation none (`minisign -G -W`).
    static let kdfNone: [UInt8] = [0, 0]
    /// Checksum "B2": BLAKE2b-256.
    static let checksumBLAKE2b: [UInt8] = [0x42, 0x32]
    /// The most scrypt work a key file may ask for: libsodium's "sensitive" limits, which minisign
    /// uses (about 1 GiB of memory and a few seconds). A file asking for more is refused unhashed.
    package static let maxOpsLimit: UInt64 = 33_554_432
    /// The most scrypt memory a key file may ask for (1 GiB).
    package static let maxMemLimit: UInt64 = 1_073_741_824
    /// The longest password accepted (minisign's own limit).
    static let maxPasswordBytes = 1023

    /// A key from its parts.
    init(publicKey: MinisignPublicKey, secretBytes: [UInt8], isEncrypted: Bool) {
        self.publicKey = publicKey
        self.secretBytes = secretBytes
        self.isEncrypted = isEncrypted
    }

    /// A new random key pair with a random key id.
    package static func generate() -> MinisignSecretKey {
        let (publicBytes, secretBytes) = Sodium.keyPair()
        let keyID = Sodium.random(MinisignFormat.keyIDBytes)
        return MinisignSecretKey(
            publicKey: MinisignPublicKey(keyID: keyID, bytes: publicBytes), secretBytes: secretBytes, isEncrypted: false)
    }

    /// Reads a secret key file: unencrypted (`minisign -G -W`) or scrypt-encrypted (`minisign -G`
    /// with a password; `password` must then be given). The checksum is verified (encrypted keys;
    /// unencrypted ones written by minisign carry none) and the key's halves must agree.
    /// Absurd scrypt limits are refused before any hashing, so the work is bounded (≤ 1 GiB, ≤ the
    /// "sensitive" opslimit). The password and the key never appear in errors.
    package init(parsing text: String, password: String?) throws(PackageError) {
        try self.init(parsing: Array(text.utf8), password: password)
    }

    /// The same, from the file's bytes.
    package init(parsing bytes: [UInt8], password: String?) throws(PackageError) {
        guard let lines = MinisignFormat.lines(bytes, maxBytes: Self.maxTextBytes) else {
            throw Self.invalid("it is over \(Self.maxTextBytes) bytes or holds a NUL byte")
        }
        let content = lines.filter { !$0.allSatisfy { $0 == 0x20 || $0 == 0x09 } }
        guard content.count == 2 else {
            throw Self.invalid("expected two lines ('untrusted comment: …' and the key), found \(content.count)")
        }
        guard MinisignFormat.hasPrefix(content[0], MinisignFormat.untrustedPrefix) else {
            throw Self.invalid("its first line does not start with '\(MinisignFormat.untrustedPrefix)'")
        }
        guard var decoded = MinisignFormat.base64(content[1], count: Self.encodedBytes) else {
            throw Self.invalid("the key line is not the Base64 of a \(Self.encodedBytes)-byte minisign secret key")
        }
        defer { Sodium.wipe(&decoded) }
        guard Array(decoded[0..<2]) == MinisignFormat.ed else { throw Self.invalid("its algorithm is not Ed25519 ('Ed')") }
        let kdf = Array(decoded[2..<4])
        guard kdf == Self.kdfScrypt || kdf == Self.kdfNone else {
            throw Self.invalid("its key derivation is neither scrypt ('Sc') nor none")
        }
        guard Array(decoded[4..<6]) == Self.checksumBLAKE2b else { throw Self.invalid("its checksum is not BLAKE2b ('B2')") }
        let salt = Array(decoded[6..<38])
        let opsLimit = Self.littleEndian(decoded[38..<46])
        let memLimit = Self.littleEndian(decoded[46..<54])
        var sealed = Array(decoded[54..<158])
        defer { Sodium.wipe(&sealed) }

        let encrypted = kdf == Self.kdfScrypt
        if encrypted {
            guard let password else {
                throw PackageError(
                    .keyInvalid, "The secret key is password-protected and no password was given.",
                    fix: "Give the key's password.")
            }
            guard opsLimit <= Self.maxOpsLimit, memLimit <= Self.maxMemLimit else {
                throw Self.invalid("it asks for more key-derivation work than minisign ever uses (opslimit \(opsLimit), memlimit \(memLimit))")
            }
            var passwordBytes = Array(password.utf8)
            defer { Sodium.wipe(&passwordBytes) }
            guard passwordBytes.count <= Self.maxPasswordBytes, !passwordBytes.contains(0) else {
                throw PackageError(
                    .keyInvalid, "The password is longer than \(Self.maxPasswordBytes) bytes or holds a NUL character.",
                    fix: "Give the key's password.")
            }
            guard var stream = Sodium.scrypt(
                length: Self.sealedBytes, password: passwordBytes, salt: salt, opsLimit: opsLimit, memLimit: memLimit)
            else {
                throw PackageError(
                    .keyInvalid, "The secret key's password could not be hashed (out of memory?).",
                    fix: "Free memory and try again.")
            }
            defer { Sodium.wipe(&stream) }
            for index in 0..<Self.sealedBytes { sealed[index] ^= stream[index] }
        }
        let keyID = Array(sealed[0..<8])
        var secret = Array(sealed[8..<72])
        let checksum = Array(sealed[72..<104])
        let expected = Sodium.blake2b(MinisignFormat.ed + keyID + secret, length: 32)
        // minisign writes no checksum (zeros) in unencrypted keys; an encrypted key always has one.
        let checksumOK = Sodium.equal(checksum, expected) || (!encrypted && checksum.allSatisfy { $0 == 0 })
        guard checksumOK, let derived = Sodium.publicKey(derivedFrom: secret), Array(secret[32..<64]) == derived else {
            Sodium.wipe(&secret)
            throw PackageError(
                .keyInvalid, encrypted ? "Wrong password or damaged key: the secret key's checksum does not match."
                    : "The secret key is damaged: its checksum or its public half does not match.",
                fix: encrypted ? "Give the key's password again, or use an intact copy of the key file." : "Use an intact copy of the key file.")
        }
        self.init(publicKey: MinisignPublicKey(keyID: keyID, bytes: derived), secretBytes: secret, isEncrypted: encrypted)
    }

    /// The unencrypted key file (like `minisign -G -W`, plus a checksum). The caller writes it 0600.
    package func fileText(comment: String) -> String {
        let zeros = [UInt8](repeating: 0, count: 48)  // salt, opslimit, memlimit
        var decoded = MinisignFormat.ed + Self.kdfNone + Self.checksumBLAKE2b + zeros + sealedPart
        defer { Sodium.wipe(&decoded) }
        return Self.text(comment: comment, decoded)
    }

    /// A password-protected key file (like `minisign -G`): the key id, key and checksum XORed with
    /// scrypt of `password` and a random salt at the given limits (at most `maxOpsLimit` /
    /// `maxMemLimit`, at least libsodium's minimum; defaults: minisign's). Nil if the password is
    /// empty, too long or holds NUL, or hashing fails.
    package func encryptedFileText(
        comment: String, password: String, opsLimit: UInt64 = maxOpsLimit, memLimit: UInt64 = maxMemLimit
    ) -> String? {
        var passwordBytes = Array(password.utf8)
        defer { Sodium.wipe(&passwordBytes) }
        guard !passwordBytes.isEmpty, passwordBytes.count <= Self.maxPasswordBytes, !passwordBytes.contains(0),
            opsLimit <= Self.maxOpsLimit, memLimit <= Self.maxMemLimit
        else { return nil }
        let salt = Sodium.random(32)
        guard var stream = Sodium.scrypt(length: Self.sealedBytes, password: passwordBytes, salt: salt, opsLimit: opsLimit, memLimit: memLimit)
        else { return nil }
        defer { Sodium.wipe(&stream) }
        var sealed = sealedPart
        defer { Sodium.wipe(&sealed) }
        for index in 0..<Self.sealedBytes { sealed[index] ^= stream[index] }
        var decoded = MinisignFormat.ed + Self.kdfScrypt + Self.checksumBLAKE2b + salt
            + Self.littleEndianBytes(opsLimit) + Self.littleEndianBytes(memLimit) + sealed
        defer { Sodium.wipe(&decoded) }
        return Self.text(comment: comment, decoded)
    }

    /// Key id + secret key + checksum, in the clear.
    private var sealedPart: [UInt8] {
        publicKey.keyID + secretBytes + Sodium.blake2b(MinisignFormat.ed + publicKey.keyID + secretBytes, length: 32)
    }

    /// A key file: the comment line and the Base64 of `decoded`.
    private static func text(comment: String, _ decoded: [UInt8]) -> String {
        "\(MinisignFormat.untrustedPrefix)\(MinisignFormat.oneLine(comment, maxBytes: MinisignFormat.maxCommentBytes))\n\(Base64.encode(decoded))\n"
    }

    /// An 8-byte little-endian number.
    private static func littleEndian(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The 8 little-endian bytes of `value`.
    private static func littleEndianBytes(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    /// keyInvalid for a secret key, saying what is wrong (never the key or the password).
    static func invalid(_ what: String) -> PackageError {
        PackageError(
            .keyInvalid, "The secret key is not in the minisign format: \(what).",
            fix: "Use a key file made by `minisign -G` or `context-host keygen`.")
    }
}

/// Descriptions that never show the secret.
extension MinisignSecretKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Names the key id only.
    package var description: String { "MinisignSecretKey(\(publicKey.keyIDString))" }
    /// Names the key id only.
    package var debugDescription: String { description }
    /// Shows the public key only.
    package var customMirror: Mirror { Mirror(self, children: ["publicKey": publicKey]) }
}
