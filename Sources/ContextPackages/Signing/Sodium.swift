import ContextHost
import CSodium

/// The libsodium calls the minisign format needs, each after `sodium_init()` has run once.
///
/// Inputs are Swift arrays whose sizes the callers have checked; every function checks them again
/// and answers `nil`/`false` rather than reading out of bounds.
enum Sodium {
    /// `sodium_init()`, run once (a global's lazy initializer is thread-safe). It fails only when
    /// the system has no source of randomness, which no signing or verification can do without.
    private static let ready: Bool = sodium_init() >= 0

    /// Makes sure libsodium is initialized; traps only when the system offers no randomness.
    static func start() {
        precondition(ready, "libsodium could not be initialized (no source of randomness)")
    }

    /// Ed25519 public key size.
    static let publicKeyBytes = 32
    /// Ed25519 secret key size (seed + public key).
    static let secretKeyBytes = 64
    /// Ed25519 signature size.
    static let signatureBytes = 64

    /// `count` random bytes.
    static func random(_ count: Int) -> [UInt8] {
        start()
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { randombytes_buf(base, buffer.count) }
        }
        return bytes
    }

    /// A new Ed25519 key pair.
    static func keyPair() -> (publicKey: [UInt8], secretKey: [UInt8]) {
        start()
        var publicKey = [UInt8](repeating: 0, count: publicKeyBytes)
        var secretKey = [UInt8](repeating: 0, count: secretKeyBytes)
        _ = crypto_sign_keypair(&publicKey, &secretKey)
        return (publicKey, secretKey)
    }

    /// The public key an Ed25519 secret key's seed (its first 32 bytes) derives; nil if the secret
    /// key has the wrong size.
    static func publicKey(derivedFrom secretKey: [UInt8]) -> [UInt8]? {
        guard secretKey.count == secretKeyBytes else { return nil }
        start()
        var publicKey = [UInt8](repeating: 0, count: publicKeyBytes)
        var derived = [UInt8](repeating: 0, count: secretKeyBytes)
        defer { wipe(&derived) }
        let seed = Array(secretKey.prefix(32))
        guard crypto_sign_seed_keypair(&publicKey, &derived, seed) == 0 else { return nil }
        return publicKey
    }

    /// The detached Ed25519 signature of `message`.
    static func sign(_ message: [UInt8], secretKey: [UInt8]) -> [UInt8] {
        precondition(secretKey.count == secretKeyBytes, "an Ed25519 secret key has 64 bytes")
        start()
        var signature = [UInt8](repeating: 0, count: signatureBytes)
        nonEmpty(message).withUnsafeBufferPointer { input in
            _ = crypto_sign_detached(&signature, nil, input.baseAddress, UInt64(message.count), secretKey)
        }
        return signature
    }

    /// Whether `signature` is `publicKey`'s Ed25519 signature of `message`.
    static func verify(_ signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == signatureBytes, publicKey.count == publicKeyBytes else { return false }
        start()
        return nonEmpty(message).withUnsafeBufferPointer { input in
            crypto_sign_verify_detached(signature, input.baseAddress, UInt64(message.count), publicKey) == 0
        }
    }

    /// Unkeyed BLAKE2b of `bytes`, `length` bytes long (16…64).
    static func blake2b(_ bytes: [UInt8], length: Int) -> [UInt8] {
        precondition(length >= 16 && length <= 64, "BLAKE2b output is 16 to 64 bytes")
        start()
        var digest = [UInt8](repeating: 0, count: length)
        nonEmpty(bytes).withUnsafeBufferPointer { input in
            _ = crypto_generichash(&digest, length, input.baseAddress, UInt64(bytes.count), nil, 0)
        }
        return digest
    }

    /// scrypt (`crypto_pwhash_scryptsalsa208sha256`): `length` bytes derived from `password` and
    /// `salt` (32 bytes); nil if libsodium refuses (e.g. out of memory). Callers bound the limits.
    static func scrypt(length: Int, password: [UInt8], salt: [UInt8], opsLimit: UInt64, memLimit: UInt64) -> [UInt8]? {
        guard salt.count == Int(crypto_pwhash_scryptsalsa208sha256_SALTBYTES), let memory = Int(exactly: memLimit)
        else { return nil }
        start()
        var output = [UInt8](repeating: 0, count: length)
        var backing = password + [0]
        defer { wipe(&backing) }
        let status = backing.withUnsafeBufferPointer { pass in
            pass.withMemoryRebound(to: CChar.self) { chars in
                guard let base = chars.baseAddress else { return Int32(-1) }
                return crypto_pwhash_scryptsalsa208sha256(&output, UInt64(length), base, UInt64(password.count), salt, opsLimit, memory)
            }
        }
        guard status == 0 else { return nil }
        return output
    }

    /// `bytes`, or one zero byte when empty, so C always gets a valid pointer (callers pass the real count).
    private static func nonEmpty(_ bytes: [UInt8]) -> [UInt8] { bytes.isEmpty ? [0] : bytes }

    /// Overwrites `bytes` with zeros in a way the optimizer keeps.
    static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { sodium_memzero(base, buffer.count) }
        }
    }

    /// Compares two byte arrays in constant time (for equal sizes).
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in sodium_memcmp(x.baseAddress, y.baseAddress, x.count) == 0 } }
    }
}
