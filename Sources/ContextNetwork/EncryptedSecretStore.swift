import CSodium
import ContextHost
import ContextProviderKit
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Providers' secret settings, encrypted at rest (docs/security.md §13, "Secrets").
///
/// - `secrets.store`: `{provider: {name: base64(nonce ‖ secretbox(provider NUL name NUL value))}}`;
///   libsodium's `crypto_secretbox` (XSalsa20-Poly1305), a fresh nonce per value. The provider
///   and name are inside the sealed text too, so a value moved to another provider's entry in
///   the file does not open there.
/// - The key (32 random bytes) is kept by one of two backends (`KeyBackend`):
///   - the **Secret Service** keyring (org.freedesktop.secrets over the D-Bus session bus, e.g.
///     GNOME Keyring), through libsecret loaded at run time (`SecretServiceKeyring`); `secrets.keyring` (no
///     secret in it) then records that this store's key is there;
///   - else `secrets.key`, in a file only this user may read (0600, in a 0700 folder). A key
///     file readable by others is refused, as ssh refuses such a private key.
///
///   Automatic choice: an existing `secrets.key` is kept (stores made before the keyring was
///   used keep working, and their key is not moved); a store marked `secrets.keyring` needs the
///   keyring (an error names it when unreachable, never a new key); a new store's key goes to
///   the keyring when one answers, else to the file. The choice and the reason for a fallback
///   are logged once (never the key).
///
/// The folder defaults to `$XDG_DATA_HOME/context-host/secrets`
/// (`~/.local/share/context-host/secrets`), or `$CONTEXT_HOST_SECRETS_DIR`.
public final class EncryptedSecretStore: SecretStore {
    /// The folder of the key and the store.
    public let directory: String
    /// Where the key may be kept.
    public let keyBackend: KeyBackend
    private let logger: Logger?
    private let lock = Mutex(KeyState())

    /// Where the store's key is kept (docs/security.md §13).
    public enum KeyBackend: String, Sendable, CaseIterable {
        /// The Secret Service when a session bus has one and no key file exists, else the key file.
        case automatic = "auto"
        /// Always the 0600 key file (refused for a store whose key is in the keyring).
        case file
        /// Always the Secret Service (an error when it is not reachable).
        case secretService = "secret-service"

        /// The variable that chooses the backend: `auto` (default), `file` or `secret-service`.
        public static let environmentVariable = "CONTEXT_HOST_SECRETS_BACKEND"

        /// The backend `$CONTEXT_HOST_SECRETS_BACKEND` names (unset or empty: `automatic`).
        public static func fromEnvironment() throws(StoreError) -> KeyBackend {
            guard let value = getenv(environmentVariable).map({ String(cString: $0) }), !value.isEmpty else { return .automatic }
            guard let backend = KeyBackend(rawValue: value) else {
                throw StoreError(message: "\(environmentVariable)=\(value) is not a key backend; use one of: \(allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return backend
        }
    }

    /// Where the key was found or put, once known (for messages; never the key).
    struct KeyState {
        var location: String?
        /// The keyring's key, kept after the first lookup (a D-Bus round trip each time otherwise).
        /// The file's key is read each time, so a changed mode is noticed.
        var keyringKey: [UInt8]?
    }

    /// What went wrong, in words an operator can act on.
    public struct StoreError: Error, Sendable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// The store in `directory` (made 0700 when first written), its key kept where `keyBackend`
    /// says; `logger` is told once which backend holds the key (and why, after a fallback).
    public init(directory: String, keyBackend: KeyBackend = .file, logger: Logger? = nil) {
        self.directory = directory
        self.keyBackend = keyBackend
        self.logger = logger
    }

    /// Where the key is (for example "the Secret Service keyring"), once a secret was read or
    /// set; nil before.
    public var keyLocation: String? {
        lock.withLock { $0.location }
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
    /// Present when the key is in the Secret Service (holds no secret).
    var keyringMarkerPath: String { directory + "/secrets.keyring" }

    private static let ready: Bool = sodium_init() >= 0

    // MARK: SecretStore

    public func secret(provider: String, name: String) throws -> [UInt8]? {
        try lock.withLock { state in
            guard let sealed = try readStore()[provider]?[name] else { return nil }
            let key = try loadKey(create: false, state: &state)
            return try Self.unseal(sealed, key: key, provider: provider, name: name)
        }
    }

    public func isSet(provider: String, name: String) -> Bool {
        lock.withLock { _ in ((try? readStore())?[provider]?[name]) != nil }
    }

    public func set(provider: String, name: String, value: [UInt8]) throws {
        try lock.withLock { state in
            let key = try loadKey(create: true, state: &state)
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

    // MARK: The key

    /// The key, from the backend `keyBackend` and the folder's files choose; made (32 random
    /// bytes, never replaced) when `create` and there is none.
    private func loadKey(create: Bool, state: inout KeyState) throws -> [UInt8] {
        guard Self.ready else { throw StoreError(message: "libsodium failed to initialise") }
        if let key = state.keyringKey { return key }
        let hasFile = access(keyPath, F_OK) == 0
        let marked = access(keyringMarkerPath, F_OK) == 0
        let variable = KeyBackend.environmentVariable
        switch keyBackend {
        case .file:
            if marked, !hasFile {
                throw StoreError(message: "the key of \(directory) is in the Secret Service keyring (\(keyringMarkerPath)), but \(variable)=file; unset \(variable) and run where the keyring is reachable")
            }
            return try fileKey(create: create, state: &state, why: "the file backend is chosen")
        case .secretService:
            if hasFile {
                throw StoreError(message: "the key of \(directory) is the file \(keyPath), but \(variable)=secret-service; unset \(variable) to keep using the file")
            }
            switch try keyringKey(create: create, state: &state) {
            case .key(let key): return key
            case .unreachable(let reason): throw keyringNeeded(reason)
            }
        case .automatic:
            if hasFile { return try fileKey(create: create, state: &state, why: "an existing key file is kept") }
            switch try keyringKey(create: create, state: &state) {
            case .key(let key): return key
            case .unreachable(let reason):
                if marked { throw keyringNeeded(reason) }
                return try fileKey(create: create, state: &state, why: "the Secret Service is not available: \(reason)")
            }
        }
    }

    private func keyringNeeded(_ reason: String) -> StoreError {
        StoreError(message: "the key of \(directory) is kept in the Secret Service keyring (org.freedesktop.secrets), which cannot be used: \(reason). Unlock the keyring, or run in the desktop session that has it")
    }

    private enum KeyringAnswer {
        case key([UInt8])
        case unreachable(String)
    }

    /// The Secret Service's key (made there when `create` and there is none), or why the keyring
    /// cannot be used.
    private func keyringKey(create: Bool, state: inout KeyState) throws -> KeyringAnswer {
        let keyBytes = Int(crypto_secretbox_KEYBYTES)
        switch SecretServiceKeyring.lookup(store: directory, keyBytes: keyBytes) {
        case .found(let key):
            try markKeyring()
            return .key(remember(key, state: &state))
        case .damaged(let reason):
            throw StoreError(message: reason + "; remove that item (label \"ContextHost secret store key\") and set the secrets again")
        case .unavailable(let reason):
            return .unreachable(reason)
        case .notFound:
            guard create else {
                if access(keyringMarkerPath, F_OK) == 0 {
                    throw StoreError(message: "the Secret Service keyring has no key for \(directory) although \(keyringMarkerPath) says it is there (the item was deleted?); the secrets of this store are lost: remove \(directory) and set them again")
                }
                throw StoreError(message: "there is no key for \(directory) in the Secret Service keyring (no secret was ever set)")
            }
        }
        // A new key, made under the folder's lock so that two processes setting their first
        // secret at once agree on one key.
        try makeDirectory()
        let folder = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { throw StoreError(message: "cannot open \(directory): \(String(cString: strerror(errno)))") }
        defer { close(folder) }
        while flock(folder, LOCK_EX) != 0 {
            guard errno == EINTR else { throw StoreError(message: "cannot lock \(directory): \(String(cString: strerror(errno)))") }
        }
        if case .found(let key) = SecretServiceKeyring.lookup(store: directory, keyBytes: keyBytes) {
            try markKeyring()
            return .key(remember(key, state: &state))
        }
        var key = [UInt8](repeating: 0, count: keyBytes)
        crypto_secretbox_keygen(&key)
        do {
            try SecretServiceKeyring.store(key, store: directory)
        } catch {
            return .unreachable(error.reason)
        }
        // Read back before any value is sealed with it: a keyring that does not keep it must not
        // be trusted with the only copy.
        guard case .found(let stored) = SecretServiceKeyring.lookup(store: directory, keyBytes: keyBytes), stored == key else {
            return .unreachable("the key stored in it did not read back")
        }
        try markKeyring()
        return .key(remember(key, state: &state))
    }

    private func remember(_ key: [UInt8], state: inout KeyState) -> [UInt8] {
        state.keyringKey = key
        noteLocation("the Secret Service keyring (org.freedesktop.secrets)", state: &state)
        return key
    }

    private func noteLocation(_ location: String, state: inout KeyState) {
        guard state.location != location else { return }
        state.location = location
        logger?.info("secrets of \(directory): the key is in \(location)")
    }

    /// Writes `secrets.keyring` (once): this store's key is in the keyring.
    private func markKeyring() throws {
        guard access(keyringMarkerPath, F_OK) != 0 else { return }
        try makeDirectory()
        let text = "The key of this secret store is in the Secret Service keyring (org.freedesktop.secrets):\nschema org.contexthost.SecretStoreKey, attribute store = \(directory).\n"
        if let failure = AtomicFile.write(Array(text.utf8), to: keyringMarkerPath, mode: 0o600) {
            throw StoreError(message: "cannot write \(keyringMarkerPath): \(failure)")
        }
    }

    /// The key file's key; made (0600, never replaced) when `create` and there is none.
    private func fileKey(create: Bool, state: inout KeyState, why: String) throws -> [UInt8] {
        let key = try loadFileKey(create: create)
        noteLocation("the key file \(keyPath) (\(why))", state: &state)
        return key
    }

    private func loadFileKey(create: Bool) throws -> [UInt8] {
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
            if errno == EEXIST { return try loadFileKey(create: false) }
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
