import CSodium
import ContextHost
import ContextProviderKit
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Providers' secret settings, encrypted at rest (docs/security.md, "Secrets").
///
/// - `secrets.key`: 32 random bytes, the key, in a file only this user may read (0600, in a 0700
///   folder). A key file readable by others is refused, as ssh refuses such a private key.
/// - `secrets.store`: `{provider: {name: base64(nonce ‖ secretbox(provider NUL name NUL value))}}`;
///   libsodium's `crypto_secretbox` (XSalsa20-Poly1305), a fresh nonce per value. The provider
///   and name are inside the sealed text too, so a value moved to another provider's entry in
///   the file does not open there.
///
/// The OS keyring is not used on Linux (no Secret Service client here; the key file is what an
/// attacker with this user's file access needs, exactly as the keyring would be to a process of
/// this user); on macOS the key belongs in the Keychain (not done yet). The folder defaults to
/// `$XDG_DATA_HOME/context-host/secrets` (`~/.local/share/context-host/secrets`), or
/// `$CONTEXT_HOST_SECRETS_DIR`.
public final class EncryptedSecretStore: SecretStore {
    /// The folder of the key and the store.
    public let directory: String
    private let lock = Mutex(())

    /// What went wrong, in words an operator can act on.
    public struct StoreError: Error, Sendable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// The store in `directory` (made 0700 when first written).
    public init(directory: String) {
        self.directory = directory
    }

    /// The default folder, or nil when neither `$CONTEXT_HOST_SECRETS_DIR`, `$XDG_DATA_HOME` nor
    /// `$HOME` says where.
    public static func defaultDirectory() -> String? {
        if let explicit = getenv("CONTEXT_HOST_SECRETS_DIR").map({ String(cString: $0) }), explicit.hasPrefix("/") { return explicit }
        if let data = getenv("XDG_DATA_HOME").map({ String(cString: $0) }), data.hasPrefix("/") { return data + "/context-host/secrets" }
        guard let home = getenv("HOME").map({ String(cString: $0) }), !home.isEmpty else { return nil }
        return home + "/.local/share/context-host/secrets"
    }

    var keyPath: String { directory + "/secrets.key" }
    var storePath: String { directory + "/secrets.store" }

    private static let ready: Bool = sodium_init() >= 0

    // MARK: SecretStore

    public func secret(provider: String, name: String) throws -> [UInt8]? {
        try lock.withLock { _ in
            guard let sealed = try readStore()[provider]?[name] else { return nil }
            let key = try loadKey(create: false)
            return try Self.unseal(sealed, key: key, provider: provider, name: name)
        }
    }

    public func isSet(provider: String, name: String) -> Bool {
        lock.withLock { _ in ((try? readStore())?[provider]?[name]) != nil }
    }

    public func set(provider: String, name: String, value: [UInt8]) throws {
        try lock.withLock { _ in
            let key = try loadKey(create: true)
            var store = try readStore()
            store[provider, default: [:]][name] = try Self.seal(value, key: key, provider: provider, name: name)
            try writeStore(store)
        }
    }

    @discardableResult
    public func remove(provider: String, name: String) throws -> Bool {
        try lock.withLock { _ in
            var store = try readStore()
            guard store[provider]?.removeValue(forKey: name) != nil else { return false }
            if store[provider]?.isEmpty == true { store[provider] = nil }
            try writeStore(store)
            return true
        }
    }

    /// Every provider's secret names (never values), for `context-host secrets list`.
    public func names() throws -> [String: [String]] {
        try lock.withLock { _ in try readStore().mapValues { $0.keys.sorted() } }
    }

    // MARK: Files

    private func readStore() throws -> [String: [String: [UInt8]]] {
        let bytes: [UInt8]
        do {
            bytes = try FileBytes.read(storePath)
        } catch {
            if access(storePath, F_OK) != 0 { return [:] }
            throw StoreError(message: "cannot read \(storePath): \(error.reason)")
        }
        guard bytes.count <= 16 << 20, let json = try? JSONReader.parse(bytes), let object = json.objectValue else {
            throw StoreError(message: "\(storePath) is not a secret store (unreadable JSON); move it away to start afresh")
        }
        var result: [String: [String: [UInt8]]] = [:]
        for (provider, entries) in object {
            guard let entries = entries.objectValue else { continue }
            for (name, value) in entries {
                guard let text = value.stringValue, let sealed = Base64.decode(text) else { continue }
                result[provider, default: [:]][name] = sealed
            }
        }
        return result
    }

    private func writeStore(_ store: [String: [String: [UInt8]]]) throws {
        var object = JSONObject()
        for provider in store.keys.sorted() {
            var entries = JSONObject()
            for (name, sealed) in store[provider]!.sorted(by: { $0.key < $1.key }) { entries[name] = .string(Base64.encode(sealed)) }
            object[provider] = .object(entries)
        }
        try makeDirectory()
        if let failure = AtomicFile.write(JSONValue.object(object).jsonBytes, to: storePath, mode: 0o600) {
            throw StoreError(message: "cannot write \(storePath): \(failure)")
        }
    }

    private func makeDirectory() throws {
        guard Directories.makePrivate(directory) else {
            throw StoreError(message: "cannot create \(directory): \(String(cString: strerror(errno)))")
        }
    }

    /// The key; made (32 random bytes, 0600, never replaced) when `create` and there is none.
    private func loadKey(create: Bool) throws -> [UInt8] {
        guard Self.ready else { throw StoreError(message: "libsodium failed to initialise") }
        var info = stat()
        if stat(keyPath, &info) == 0 {
            guard info.st_uid == geteuid() else {
                throw StoreError(message: "\(keyPath) belongs to another user; refusing to use it")
            }
            guard info.st_mode & 0o077 == 0 else {
                throw StoreError(message: "\(keyPath) may be read by other users (mode \(String(info.st_mode & 0o777, radix: 8))); run: chmod 600 \(keyPath)")
            }
            let key: [UInt8]
            do { key = try FileBytes.read(keyPath) } catch { throw StoreError(message: "cannot read \(keyPath): \(error.reason)") }
            guard key.count == Int(crypto_secretbox_KEYBYTES) else {
                throw StoreError(message: "\(keyPath) is not a \(crypto_secretbox_KEYBYTES)-byte key")
            }
            return key
        }
        guard create else { throw StoreError(message: "there is no key at \(keyPath) (no secret was ever set)") }
        try makeDirectory()
        var key = [UInt8](repeating: 0, count: Int(crypto_secretbox_KEYBYTES))
        crypto_secretbox_keygen(&key)
        let fd = open(keyPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            if errno == EEXIST { return try loadKey(create: false) }
            throw StoreError(message: "cannot create \(keyPath): \(String(cString: strerror(errno)))")
        }
        let written = key.withUnsafeBytes { writeAll(fd, $0) }
        let synced = written && fsync(fd) == 0
        close(fd)
        guard synced else {
            unlink(keyPath)
            throw StoreError(message: "cannot write \(keyPath)")
        }
        return key
    }

    // MARK: Sealing

    static func bound(_ value: [UInt8], provider: String, name: String) -> [UInt8] {
        Array(provider.utf8) + [0] + Array(name.utf8) + [0] + value
    }

    static func seal(_ value: [UInt8], key: [UInt8], provider: String, name: String) throws -> [UInt8] {
        var message = bound(value, provider: provider, name: name)
        defer { sodium_memzero(&message, message.count) }
        var nonce = [UInt8](repeating: 0, count: Int(crypto_secretbox_NONCEBYTES))
        randombytes_buf(&nonce, nonce.count)
        var cipher = [UInt8](repeating: 0, count: message.count + Int(crypto_secretbox_MACBYTES))
        guard crypto_secretbox_easy(&cipher, message, UInt64(message.count), nonce, key) == 0 else {
            throw StoreError(message: "encryption failed")
        }
        return nonce + cipher
    }

    static func unseal(_ sealed: [UInt8], key: [UInt8], provider: String, name: String) throws -> [UInt8] {
        let nonceBytes = Int(crypto_secretbox_NONCEBYTES), macBytes = Int(crypto_secretbox_MACBYTES)
        guard sealed.count >= nonceBytes + macBytes else { throw StoreError(message: "the secret '\(name)' of \(provider) is damaged; set it again") }
        let nonce = Array(sealed[..<nonceBytes])
        let cipher = Array(sealed[nonceBytes...])
        var message = [UInt8](repeating: 0, count: cipher.count - macBytes)
        guard crypto_secretbox_open_easy(&message, cipher, UInt64(cipher.count), nonce, key) == 0 else {
            throw StoreError(message: "the secret '\(name)' of \(provider) does not open with this key (damaged, or moved from elsewhere); set it again")
        }
        let prefix = bound([], provider: provider, name: name)
        guard message.count >= prefix.count, Array(message[..<prefix.count]) == prefix else {
            sodium_memzero(&message, message.count)
            throw StoreError(message: "the secret '\(name)' of \(provider) was sealed for another provider or name; set it again")
        }
        return Array(message[prefix.count...])
    }
}
