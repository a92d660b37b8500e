import CSecretService
import ContextProviderKit

/// The Secret Service keyring (org.freedesktop.secrets) through libsecret-1, loaded at run time
/// (Sources/CSecretService): where `EncryptedSecretStore` keeps its key when a session has one.
/// One item per store folder; its secret is the key in Base64.
enum SecretServiceKeyring {
    /// A call's upper bound: a keyring that does not answer (a prompt nobody sees, a stuck
    /// daemon) fails the call after this long instead of hanging the host.
    static let timeoutSeconds: Int32 = 10

    enum Lookup {
        case found([UInt8])
        case notFound
        /// No session bus, no libsecret, or the service did not answer: why, in words.
        case unavailable(String)
        /// The service answered with something that is not a key.
        case damaged(String)
    }

    /// The key kept for the store in `directory`.
    static func lookup(store directory: String, keyBytes: Int) -> Lookup {
        var out = [CChar](repeating: 0, count: 256)
        var message = [CChar](repeating: 0, count: 512)
        defer { wipe(&out) }
        switch ctxss_lookup(directory, &out, out.count, timeoutSeconds, &message, message.count) {
        case Int32(CTXSS_OK):
            let text = out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
            guard let key = Base64.decode(String(decoding: text, as: UTF8.self)), key.count == keyBytes else {
                return .damaged("the Secret Service item of \(directory) is not a \(keyBytes)-byte key in Base64")
            }
            return .found(key)
        case Int32(CTXSS_NOT_FOUND):
            return .notFound
        default:
            return .unavailable(string(message))
        }
    }

    /// Keeps `key` as the store's item (replacing any); throws the reason when it cannot.
    static func store(_ key: [UInt8], store directory: String) throws(KeyringError) {
        var text = Array(Base64.encode(key).utf8CString)
        defer { wipe(&text) }
        var message = [CChar](repeating: 0, count: 512)
        let label = "ContextHost secret store key (\(directory))"
        guard ctxss_store(directory, label, text, timeoutSeconds, &message, message.count) == Int32(CTXSS_OK) else {
            throw KeyringError(reason: string(message))
        }
    }

    struct KeyringError: Error {
        var reason: String
    }

    private static func string(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func wipe<T: FixedWidthInteger>(_ bytes: inout [T]) {
        for index in bytes.indices { bytes[index] = 0 }
    }
}
