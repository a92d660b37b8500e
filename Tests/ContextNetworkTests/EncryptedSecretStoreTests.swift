import ContextHost
import ContextHostTestSupport
import Foundation
import Testing

@testable import ContextNetwork

@Suite struct EncryptedSecretStoreTests {
    static let canary = "CANARY-7d1c0e-do-not-leak"

    /// Every byte of every file under `path`, searched for `needle`.
    static func filesContaining(_ needle: String, under path: String) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: path)
        var found: [String] = []
        while let relative = enumerator?.nextObject() as? String {
            let file = path + "/" + relative
            if let data = FileManager.default.contents(atPath: file), data.range(of: Data(needle.utf8)) != nil { found.append(relative) }
        }
        return found
    }

    @Test func roundTripAndNothingInTheClear() throws {
        let folder = try TemporaryDirectory()
        let store = EncryptedSecretStore(directory: folder.path + "/secrets")
        #expect(!store.isSet(provider: "com.example.a", name: "apiKey"))
        try store.set(provider: "com.example.a", name: "apiKey", value: Array(Self.canary.utf8))
        #expect(store.isSet(provider: "com.example.a", name: "apiKey"))
        #expect(try store.secret(provider: "com.example.a", name: "apiKey") == Array(Self.canary.utf8))
        #expect(try store.secret(provider: "com.example.b", name: "apiKey") == nil)
        #expect(Self.filesContaining(Self.canary, under: folder.path).isEmpty)
        // A second store (another process) reads the same key and file.
        #expect(try EncryptedSecretStore(directory: folder.path + "/secrets").secret(provider: "com.example.a", name: "apiKey") == Array(Self.canary.utf8))
        // The key and the folder are this user's only.
        var info = stat()
        #expect(stat(store.keyPath, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(stat(store.storePath, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(stat(store.directory, &info) == 0 && info.st_mode & 0o777 == 0o700)
        #expect(try store.names() == ["com.example.a": ["apiKey"]])
        #expect(try store.remove(provider: "com.example.a", name: "apiKey"))
        #expect(!store.isSet(provider: "com.example.a", name: "apiKey"))
        #expect(try !store.remove(provider: "com.example.a", name: "apiKey"))
    }

    @Test func aKeyOthersCanReadIsRefused() throws {
        let folder = try TemporaryDirectory()
        let store = EncryptedSecretStore(directory: folder.path + "/secrets")
        try store.set(provider: "com.example.a", name: "apiKey", value: Array("x1234".utf8))
        #expect(chmod(store.keyPath, 0o644) == 0)
        #expect {
            _ = try store.secret(provider: "com.example.a", name: "apiKey")
        } throws: { error in
            "\(error)".contains("chmod 600")
        }
        // Control: back to 0600, it opens.
        #expect(chmod(store.keyPath, 0o600) == 0)
        #expect(try store.secret(provider: "com.example.a", name: "apiKey") == Array("x1234".utf8))
    }

    @Test func aValueMovedToAnotherProviderDoesNotOpen() throws {
        let folder = try TemporaryDirectory()
        let store = EncryptedSecretStore(directory: folder.path + "/secrets")
        try store.set(provider: "com.example.victim", name: "apiKey", value: Array(Self.canary.utf8))
        try store.set(provider: "com.example.thief", name: "apiKey", value: Array("mine".utf8))
        // Someone who can write the file copies the victim's sealed value into the thief's entry.
        var text = try String(contentsOfFile: store.storePath, encoding: .utf8)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: [String: String]])
        let victim = try #require(object["com.example.victim"]?["apiKey"])
        let thief = try #require(object["com.example.thief"]?["apiKey"])
        text = text.replacingOccurrences(of: thief, with: victim)
        try text.write(toFile: store.storePath, atomically: true, encoding: .utf8)
        #expect {
            _ = try store.secret(provider: "com.example.thief", name: "apiKey")
        } throws: { error in
            "\(error)".contains("sealed for another provider")
        }
        #expect(try store.secret(provider: "com.example.victim", name: "apiKey") == Array(Self.canary.utf8))
    }
}
