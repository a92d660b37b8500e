import ContextHost
import ContextHostTestSupport
import Foundation
import Testing

@testable import ContextPackages

/// The minisign format (keys, signatures), checked against the real `minisign` tool, the refusals
/// of damaged or hostile files, and the trusted-key store.
@Suite("Minisign signatures and trusted keys")
struct MinisignTests {
    // MARK: Helpers

    /// The `minisign` executable on PATH, or nil.
    static let minisignPath: String? = {
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let candidate = "\(folder)/minisign"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }()

    /// Runs minisign in `folder` with `input` on stdin; its exit status and output (both streams).
    @discardableResult
    func minisign(_ arguments: [String], in folder: String, input: String = "") throws -> (status: Int32, output: String) {
        let path = try #require(Self.minisignPath, "the minisign tool is not installed (apt install minisign)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stdout
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try? stdin.fileHandleForWriting.close()  // no throw between run() and waitUntilExit()
        let output = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    func read(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    /// The message the tests sign: an index-like JSON file.
    static let message = Array(#"{"format":1,"id":"com.example.weather","files":[]}"#.utf8)

    func code(_ body: () throws(PackageError) -> Void) -> PackageErrorCode? {
        do {
            try body()
            return nil
        } catch {
            return error.code
        }
    }

    func error(_ body: () throws(PackageError) -> Void) -> PackageError? {
        do {
            try body()
            return nil
        } catch {
            return error
        }
    }

    // MARK: Interoperability with minisign

    @Test("keys made by `minisign -G -W` parse; a file it signs verifies; our signature verifies with `minisign -V`")
    func minisignKeys() throws {
        let folder = try TemporaryDirectory()
        let made = try minisign(["-G", "-W", "-p", "x.pub", "-s", "x.key"], in: folder.path)
        #expect(made.status == 0, "\(made.output)")
        let pubText = try read(folder.path + "/x.pub")
        let publicKey = try MinisignPublicKey(parsing: pubText)
        // The id as minisign prints it, in the comment line and in the bare-key form.
        #expect(pubText.hasPrefix("untrusted comment: minisign public key \(publicKey.printedKeyIDString)\n"))
        let keyLine = String(pubText.split(separator: "\n")[1])
        #expect(try MinisignPublicKey(parsing: keyLine) == publicKey)
        #expect(publicKey.base64 == keyLine)
        #expect(publicKey.fileText(comment: publicKey.defaultComment) == pubText)

        let secretKey = try MinisignSecretKey(parsing: try read(folder.path + "/x.key"), password: nil)
        #expect(secretKey.publicKey == publicKey)
        #expect(!secretKey.isEncrypted)
        #expect(!String(describing: secretKey).contains(Data(secretKey.secretBytes).base64EncodedString()))

        // minisign signs (prehashed by default), we verify.
        try Data(Self.message).write(to: URL(fileURLWithPath: folder.path + "/index.json"))
        let signed = try minisign(["-S", "-s", "x.key", "-m", "index.json", "-t", "trusted words", "-c", "untrusted words"], in: folder.path)
        #expect(signed.status == 0, "\(signed.output)")
        let signature = try MinisignSignature(parsing: try read(folder.path + "/index.json.minisig"))
        #expect(signature.isPrehashed)
        #expect(signature.keyID == publicKey.keyID)
        #expect(signature.trustedComment == "trusted words")
        #expect(signature.untrustedComment == "untrusted words")
        try signature.verify(Self.message, with: publicKey)

        // Legacy (not prehashed) "Ed" signatures verify too.
        let legacy = try minisign(["-S", "-l", "-s", "x.key", "-m", "index.json", "-x", "legacy.minisig", "-t", "old"], in: folder.path)
        #expect(legacy.status == 0, "\(legacy.output)")
        let legacySignature = try MinisignSignature(parsing: try read(folder.path + "/legacy.minisig"))
        #expect(!legacySignature.isPrehashed)
        try legacySignature.verify(Self.message, with: publicKey)
        #expect(code { () throws(PackageError) in try legacySignature.verify(Self.message + [0x20], with: publicKey) } == .signatureMismatch)

        // We sign with minisign's key, minisign verifies.
        let ours = MinisignSignature.sign(Self.message, with: secretKey, trustedComment: "ours\tfile:index.json", untrustedComment: "signed by ContextHost")
        try ours.write(toFile: folder.path + "/index.json.minisig", atomically: true, encoding: .utf8)
        let verified = try minisign(["-V", "-p", "x.pub", "-m", "index.json"], in: folder.path)
        #expect(verified.status == 0, "\(verified.output)")
        #expect(verified.output.contains("Trusted comment: ours\tfile:index.json"))
        let bare = try minisign(["-V", "-P", publicKey.base64, "-m", "index.json"], in: folder.path)
        #expect(bare.status == 0, "\(bare.output)")
    }

    @Test("a key we generate and write signs with `minisign -S`, and our public key file verifies with `minisign -V`")
    func ourKeysInMinisign() throws {
        let folder = try TemporaryDirectory()
        let key = MinisignSecretKey.generate()
        #expect(key.publicKey.keyID.count == 8 && key.publicKey.bytes.count == 32)
        try key.fileText(comment: "ContextHost secret key").write(toFile: folder.path + "/ours.key", atomically: true, encoding: .utf8)
        try key.publicKey.fileText(comment: key.publicKey.defaultComment).write(toFile: folder.path + "/ours.pub", atomically: true, encoding: .utf8)
        try Data(Self.message).write(to: URL(fileURLWithPath: folder.path + "/index.json"))

        let signed = try minisign(["-S", "-s", "ours.key", "-m", "index.json", "-t", "by minisign with our key"], in: folder.path)
        #expect(signed.status == 0, "\(signed.output)")
        let verified = try minisign(["-V", "-p", "ours.pub", "-m", "index.json"], in: folder.path)
        #expect(verified.status == 0, "\(verified.output)")
        let signature = try MinisignSignature(parsing: try read(folder.path + "/index.json.minisig"))
        try signature.verify(Self.message, with: key.publicKey)

        // Our files read back to the same key.
        let again = try MinisignSecretKey(parsing: try read(folder.path + "/ours.key"), password: nil)
        #expect(again.publicKey == key.publicKey && again.secretBytes == key.secretBytes)
        #expect(try MinisignPublicKey(parsing: try read(folder.path + "/ours.pub")) == key.publicKey)
    }

    @Test("an encrypted key made by `minisign -G` (password on stdin) decrypts; a wrong or missing password is refused")
    func minisignEncryptedKey() throws {
        let folder = try TemporaryDirectory()
        let made = try minisign(["-G", "-p", "enc.pub", "-s", "enc.key"], in: folder.path, input: "correct horse\ncorrect horse\n")
        #expect(made.status == 0, "\(made.output)")
        let text = try read(folder.path + "/enc.key")
        let publicKey = try MinisignPublicKey(parsing: try read(folder.path + "/enc.pub"))

        #expect(code { () throws(PackageError) in _ = try MinisignSecretKey(parsing: text, password: nil) } == .keyInvalid)
        // minisign's own limits (1 GiB scrypt): one right and one wrong password, one after the other.
        let key = try MinisignSecretKey(parsing: text, password: "correct horse")
        #expect(key.isEncrypted && key.publicKey == publicKey)
        let wrong = error { () throws(PackageError) in _ = try MinisignSecretKey(parsing: text, password: "battery staple") }
        #expect(wrong?.code == .keyInvalid)
        #expect(wrong?.message.contains("Wrong password") == true)
        #expect(wrong.map { !$0.description.contains("battery") } == true, "the password must not appear in errors")

        try Data(Self.message).write(to: URL(fileURLWithPath: folder.path + "/index.json"))
        try MinisignSignature.sign(Self.message, with: key, trustedComment: "t", untrustedComment: "u")
            .write(toFile: folder.path + "/index.json.minisig", atomically: true, encoding: .utf8)
        let verified = try minisign(["-V", "-p", "enc.pub", "-m", "index.json"], in: folder.path)
        #expect(verified.status == 0, "\(verified.output)")
    }

    @Test("a key we encrypt (scrypt, small limits) signs with minisign given the password on stdin")
    func ourEncryptedKeyInMinisign() throws {
        let folder = try TemporaryDirectory()
        let key = MinisignSecretKey.generate()
        let text = try #require(key.encryptedFileText(comment: "encrypted", password: "pw-ü", opsLimit: 524_288, memLimit: 16 << 20))
        try text.write(toFile: folder.path + "/enc.key", atomically: true, encoding: .utf8)
        try key.publicKey.fileText(comment: key.publicKey.defaultComment).write(toFile: folder.path + "/enc.pub", atomically: true, encoding: .utf8)
        try Data(Self.message).write(to: URL(fileURLWithPath: folder.path + "/index.json"))

        let signed = try minisign(["-S", "-s", "enc.key", "-m", "index.json", "-t", "with our encrypted key"], in: folder.path, input: "pw-ü\n")
        #expect(signed.status == 0, "\(signed.output)")
        try MinisignSignature(parsing: try read(folder.path + "/index.json.minisig")).verify(Self.message, with: key.publicKey)
        // minisign refuses a wrong password; so do we.
        let refused = try minisign(["-S", "-s", "enc.key", "-m", "index.json", "-x", "no.minisig"], in: folder.path, input: "nope\n")
        #expect(refused.status != 0)

        let again = try MinisignSecretKey(parsing: text, password: "pw-ü")
        #expect(again.isEncrypted && again.publicKey == key.publicKey && again.secretBytes == key.secretBytes)
        #expect(code { () throws(PackageError) in _ = try MinisignSecretKey(parsing: text, password: "pw-u") } == .keyInvalid)
        #expect(key.encryptedFileText(comment: "", password: "") == nil)
        #expect(key.encryptedFileText(comment: "", password: "x", opsLimit: MinisignSecretKey.maxOpsLimit + 1) == nil)
    }

    // MARK: Refusals

    /// A fresh key and the signature file of `message` by it.
    func signed(trusted: String = "trusted") -> (MinisignSecretKey, String) {
        let key = MinisignSecretKey.generate()
        return (key, MinisignSignature.sign(Self.message, with: key, trustedComment: trusted, untrustedComment: "u"))
    }

    /// `text`'s line `index` with the Base64 decoded, `change`d and encoded again.
    func editLine(_ text: String, _ index: Int, _ change: (inout [UInt8]) -> Void) -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var bytes = [UInt8](Data(base64Encoded: lines[index])!)
        change(&bytes)
        lines[index] = Data(bytes).base64EncodedString()
        return lines.joined(separator: "\n")
    }

    @Test("a key id with leading zeros: 16 digits here, minisign's shorter form in the default comment; both parse")
    func leadingZeroKeyID() throws {
        let generated = MinisignSecretKey.generate().publicKey
        // Little-endian: the last bytes are the leading digits.
        let key = MinisignPublicKey(keyID: [0x88, 0x90, 0x27, 0x64, 0x07, 0x94, 0x1B, 0x00], bytes: generated.bytes)
        #expect(key.keyIDString == "001B940764279088")
        #expect(key.printedKeyIDString == "1B940764279088")
        #expect(key.defaultComment == "minisign public key 1B940764279088")
        #expect(MinisignFormat.keyID(parsing: "1B940764279088") == key.keyID)
        #expect(MinisignFormat.keyID(parsing: "001b940764279088") == key.keyID)
        #expect(MinisignFormat.printedKeyIDString([0, 0, 0, 0, 0, 0, 0, 0]) == "0")
        #expect(MinisignFormat.keyID(parsing: "") == nil)
        #expect(MinisignFormat.keyID(parsing: "11B940764279088AA") == nil)
        #expect(MinisignFormat.keyID(parsing: "1B94076427908G") == nil)
    }

    @Test("a changed message, signature, trusted comment or key is a signature mismatch")
    func mismatches() throws {
        let (key, text) = signed()
        let signature = try MinisignSignature(parsing: text)
        try signature.verify(Self.message, with: key.publicKey)

        var flipped = Self.message
        flipped[5] ^= 0x01
        let changed = error { () throws(PackageError) in try signature.verify(flipped, with: key.publicKey) }
        #expect(changed?.code == .signatureMismatch)
        #expect(changed?.message.contains(key.publicKey.keyIDString) == true)

        // A flipped byte in the signature itself.
        let badSignature = try MinisignSignature(parsing: editLine(text, 1) { $0[40] ^= 0x80 })
        #expect(code { () throws(PackageError) in try badSignature.verify(Self.message, with: key.publicKey) } == .signatureMismatch)

        // The trusted comment changed: the signature of the message still holds, the global one fails.
        let retitled = try MinisignSignature(parsing: text.replacingOccurrences(of: "trusted comment: trusted", with: "trusted comment: trustee"))
        let comment = error { () throws(PackageError) in try retitled.verify(Self.message, with: key.publicKey) }
        #expect(comment?.code == .signatureMismatch)
        #expect(comment?.message.contains("trusted comment") == true)

        // A flipped byte in the global signature.
        let badGlobal = try MinisignSignature(parsing: editLine(text, 3) { $0[0] ^= 0x01 })
        #expect(code { () throws(PackageError) in try badGlobal.verify(Self.message, with: key.publicKey) } == .signatureMismatch)

        // Another key: named in the message.
        let other = MinisignSecretKey.generate().publicKey
        let wrongKey = error { () throws(PackageError) in try signature.verify(Self.message, with: other) }
        #expect(wrongKey?.code == .signatureMismatch)
        #expect(wrongKey?.message.contains("made by key \(key.publicKey.keyIDString), not by key \(other.keyIDString)") == true)
        // Another key that claims the signer's id.
        let impostor = MinisignPublicKey(keyID: key.publicKey.keyID, bytes: other.bytes)
        #expect(code { () throws(PackageError) in try signature.verify(Self.message, with: impostor) } == .signatureMismatch)
    }

    @Test("damaged signature files are refused as signature-invalid, saying what is wrong")
    func invalidSignatures() throws {
        let (_, text) = signed()
        func invalid(_ candidate: String) -> String? {
            do {
                _ = try MinisignSignature(parsing: candidate)
                return nil
            } catch {
                return error.code == .signatureInvalid ? error.message : "wrong code \(error.code)"
            }
        }
        let lines = text.split(separator: "\n").map(String.init)
        #expect(invalid("") != nil)
        #expect(invalid(lines.dropLast().joined(separator: "\n")) != nil)  // truncated
        #expect(invalid(String(text.dropLast(10))) != nil)  // cut inside the Base64
        #expect(invalid(text.replacingOccurrences(of: lines[1], with: String(lines[1].dropLast(4)))) != nil)
        #expect(invalid(text.replacingOccurrences(of: lines[1], with: "!!!!" + lines[1].dropFirst(4))) != nil)
        #expect(invalid(text.replacingOccurrences(of: "untrusted comment:", with: "comment:")) != nil)
        #expect(invalid(text.replacingOccurrences(of: "trusted comment: trusted", with: "trusted: trusted")) != nil)
        #expect(invalid(editLine(text, 1) { $0[0] = 0x58 })?.contains("algorithm") == true)
        #expect(invalid(text.replacingOccurrences(of: "trusted comment: trusted", with: "trusted comment: a\u{1B}[2Jb")) != nil)
        #expect(invalid(text + "extra line\n") != nil)
        #expect(invalid(String(repeating: "A", count: 9000))?.contains("8192") == true)
        #expect(invalid(text.replacingOccurrences(of: "trusted comment: trusted", with: "trusted comment: " + String(repeating: "x", count: 8200))) != nil)
        // Comments with control characters: `sign` writes them as spaces, and a hostile untrusted
        // comment reads back printable.
        let key = MinisignSecretKey.generate()
        let odd = MinisignSignature.sign(Self.message, with: key, trustedComment: "a\nb\u{85}c\td", untrustedComment: "x\u{1B}y\rz")
        let parsed = try MinisignSignature(parsing: odd)
        #expect(parsed.trustedComment == "a b c\td" && parsed.untrustedComment == "x y z")
        try parsed.verify(Self.message, with: key.publicKey)
        #expect(try MinisignSignature(parsing: text.replacingOccurrences(of: "untrusted comment: u", with: "untrusted comment: \u{1B}[31m")).untrustedComment == " [31m")
        // CRLF line ends (a file that went through Windows) still read.
        let crlf = text.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(try MinisignSignature(parsing: crlf) == MinisignSignature(parsing: text))
    }

    @Test("damaged public and secret key files are refused as key-invalid")
    func invalidKeys() throws {
        let key = MinisignSecretKey.generate()
        let pub = key.publicKey.fileText(comment: "c")
        func refused(_ text: String) -> Bool {
            (try? MinisignPublicKey(parsing: text)) == nil
        }
        #expect(!refused(pub))
        #expect(refused(""))
        #expect(refused(String(key.publicKey.base64.dropLast(4))))
        #expect(refused(key.publicKey.base64 + "AAAA"))
        #expect(refused("RW" + key.publicKey.base64))
        #expect(refused(editLine(pub, 1) { $0[1] = 0x44 }))  // "ED" is not a key algorithm
        #expect(refused("comment\n" + key.publicKey.base64))
        #expect(refused(pub + "another line\n"))
        #expect(refused(String(repeating: "\n", count: 5000) + key.publicKey.base64))
        #expect(code { () throws(PackageError) in _ = try MinisignPublicKey(parsing: "garbage") } == .keyInvalid)

        let secret = key.fileText(comment: "c")
        #expect(try MinisignSecretKey(parsing: secret, password: nil).publicKey == key.publicKey)
        func secretCode(_ text: String, _ password: String? = nil) -> PackageErrorCode? {
            code { () throws(PackageError) in _ = try MinisignSecretKey(parsing: text, password: password) }
        }
        #expect(secretCode(String(secret.dropLast(8))) == .keyInvalid)
        #expect(secretCode(editLine(secret, 1) { $0[100] ^= 0x01 }) == .keyInvalid)  // checksum fails
        #expect(secretCode(editLine(secret, 1) { $0[2] = 0x41 }) == .keyInvalid)  // unknown KDF
        // Without a checksum (as `minisign -G -W` writes) the halves must still agree.
        #expect(secretCode(editLine(secret, 1) { for i in 126..<158 { $0[i] = 0 } }) == nil)
        #expect(secretCode(editLine(secret, 1) { for i in 126..<158 { $0[i] = 0 }; $0[100] ^= 0x01 }) == .keyInvalid)
        // Absurd scrypt limits are refused before hashing (this would take hours and terabytes).
        let encrypted = try #require(key.encryptedFileText(comment: "c", password: "pw", opsLimit: 524_288, memLimit: 16 << 20))
        let costly = editLine(encrypted, 1) { bytes in for i in 38..<54 { bytes[i] = 0xFF } }
        let started = Date()
        let refusal = error { () throws(PackageError) in _ = try MinisignSecretKey(parsing: costly, password: "pw") }
        #expect(refusal?.code == .keyInvalid && refusal?.message.contains("opslimit") == true)
        #expect(Date().timeIntervalSince(started) < 1)
        #expect(secretCode(encrypted, String(repeating: "p", count: 2000)) == .keyInvalid)
    }

    // MARK: Trusted keys

    @Test("scopes: prefix, exact id and *", arguments: [
        ("com.example.*", "com.example.weather", true), ("com.example.*", "com.example.weather.radar", true),
        ("com.example.*", "com.examplex.a", false), ("com.example.*", "com.example", false),
        ("com.example.*", "org.example.weather", false), ("com.example.weather", "com.example.weather", true),
        ("com.example.weather", "com.example.weather2", false), ("*", "anything.at.all", true), ("com.*", "com.a", true),
    ])
    func scopes(_ scope: String, _ id: String, _ matches: Bool) {
        #expect(TrustedKeys.scope(scope, matches: id) == matches)
        #expect(TrustedKeys.scopeProblem(scope) == nil)
    }

    @Test("invalid scopes are refused when trusting a key")
    func invalidScopes() throws {
        var store = TrustedKeys()
        let key = MinisignSecretKey.generate().publicKey
        for bad in [[], [""], ["com.example*"], ["*.example.com"], ["Com.Example.*"], ["com..x"], ["com.example.**"], [".*"], ["com"]] {
            #expect(code { () throws(PackageError) in try store.trust(key, scopes: bad, comment: "") } == .keyInvalid, "\(bad)")
        }
        #expect(store.keys.isEmpty)
        try store.trust(key, scopes: ["com.example.*", "com.example.*", "org.other.tool"], comment: "Example\nInc.")
        #expect(store.keys.first?.scopes == ["com.example.*", "org.other.tool"])
        #expect(store.keys.first?.comment == "Example Inc.")
        // Trusting again replaces the scopes.
        try store.trust(key, scopes: ["*"], comment: "all")
        #expect(store.keys.count == 1 && store.keys.first?.scopes == ["*"])
        // Another key with the same id is refused.
        let clash = MinisignPublicKey(keyID: key.keyID, bytes: MinisignSecretKey.generate().publicKey.bytes)
        #expect(code { () throws(PackageError) in try store.trust(clash, scopes: ["*"], comment: "") } == .keyInvalid)
        #expect(store.key(id: key.keyIDString.lowercased())?.publicKey == key)
        let removed = store.remove(id: key.keyIDString)
        let removedAgain = store.remove(id: key.keyIDString)
        let removedNonsense = store.remove(id: "not hex")
        #expect(removed && !removedAgain && !removedNonsense)
    }

    @Test("save and load round trip, atomically, with mode 0600 in a 0700 folder; a missing file is empty")
    func saveAndLoad() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path + "/config/context-host/" + TrustedKeys.fileName
        #expect(try TrustedKeys.load(file: path) == TrustedKeys())
        var store = TrustedKeys()
        let first = MinisignSecretKey.generate().publicKey, second = MinisignSecretKey.generate().publicKey
        try store.trust(first, scopes: ["com.example.*"], comment: "Example \"quoted\" ü")
        try store.trust(second, scopes: ["org.tool.one", "org.tool.two"], comment: "")
        try store.save(file: path)
        #expect(try TrustedKeys.load(file: path) == store)

        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let folderAttributes = try FileManager.default.attributesOfItem(atPath: folder.path + "/config/context-host")
        #expect((folderAttributes[.posixPermissions] as? Int) == 0o700)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path + "/config/context-host") == [TrustedKeys.fileName])

        // Saving again replaces the file (no temporary left over).
        _ = store.remove(id: first.keyIDString)
        try store.save(file: path)
        #expect(try TrustedKeys.load(file: path).keys.map(\.publicKey) == [second])
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path + "/config/context-host") == [TrustedKeys.fileName])

        // A file others may write is not trusted.
        chmod(path, 0o666)
        #expect(code { () throws(PackageError) in _ = try TrustedKeys.load(file: path) } == .keyInvalid)
        // A folder that cannot be made: store-io.
        try "x".write(toFile: folder.path + "/plain", atomically: true, encoding: .utf8)
        #expect(code { () throws(PackageError) in try store.save(file: folder.path + "/plain/sub/" + TrustedKeys.fileName) } == .storeIO)
    }

    @Test("an invalid trusted keys file is reported naming the file and what is wrong")
    func invalidStore() throws {
        let folder = try TemporaryDirectory()
        let key = MinisignSecretKey.generate().publicKey
        let good = #"{"id": "\#(key.keyIDString)", "publicKey": "\#(key.base64)", "scopes": ["com.example.*"], "comment": "c"}"#
        let cases: [(String, String)] = [
            ("not json", "not valid JSON"),
            ("[]", "not a JSON object"),
            (#"{"keys": []}"#, "'format'"),
            (#"{"format": 2, "keys": []}"#, "format 2"),
            (#"{"format": 1}"#, "'keys'"),
            (#"{"format": 1, "keys": [1]}"#, "keys[0] is not an object"),
            (#"{"format": 1, "keys": [{"id": "\#(key.keyIDString)", "publicKey": "RWQ", "scopes": ["*"]}]}"#, "keys[0].publicKey"),
            (#"{"format": 1, "keys": [{"id": "0000000000000000", "publicKey": "\#(key.base64)", "scopes": ["*"]}]}"#, "keys[0].id"),
            (#"{"format": 1, "keys": [{"id": "\#(key.keyIDString)", "publicKey": "\#(key.base64)", "scopes": []}]}"#, "keys[0].scopes"),
            (#"{"format": 1, "keys": [{"id": "\#(key.keyIDString)", "publicKey": "\#(key.base64)", "scopes": ["com.*x"]}]}"#, "keys[0].scopes"),
            (#"{"format": 1, "keys": [\#(good), \#(good)]}"#, "listed twice"),
        ]
        for (index, (text, what)) in cases.enumerated() {
            let path = try folder.write("case\(index).json", text)
            chmod(path, 0o600)
            let failure = error { () throws(PackageError) in _ = try TrustedKeys.load(file: path) }
            #expect(failure?.code == .keyInvalid, "\(text)")
            #expect(failure?.message.contains(path) == true && failure?.message.contains(what) == true, "\(String(describing: failure?.message))")
        }
        let path = try folder.write("good.json", #"{"format": 1, "keys": [\#(good)]}"#)
        chmod(path, 0o600)
        #expect(try TrustedKeys.load(file: path).keys == [TrustedKeys.Key(publicKey: key, scopes: ["com.example.*"], comment: "c")])
    }

    @Test("authorize: the signer must be trusted, and for this provider id")
    func authorize() throws {
        var store = TrustedKeys()
        let key = MinisignSecretKey.generate().publicKey
        try store.trust(key, scopes: ["com.example.*", "org.tool.one"], comment: "Example Inc.")
        #expect(try store.authorize(keyID: key.keyID, providerID: "com.example.weather").publicKey == key)
        #expect(try store.authorize(keyID: key.keyID, providerID: "org.tool.one").publicKey == key)

        let outside = error { () throws(PackageError) in _ = try store.authorize(keyID: key.keyID, providerID: "com.other.weather") }
        #expect(outside?.code == .keyOutOfScope)
        #expect(outside?.message.contains("com.example.*, org.tool.one") == true)

        let stranger = MinisignSecretKey.generate().publicKey
        let unknown = error { () throws(PackageError) in _ = try store.authorize(keyID: stranger.keyID, providerID: "com.example.weather") }
        #expect(unknown?.code == .keyUnknown)
        #expect(unknown?.message.contains(stranger.keyIDString) == true)
        #expect(unknown?.fix.contains("trust-key") == true)
    }

    @Test("key expiry: the last day is accepted, the next refused with key-expired; dates are validated and survive the file")
    func expiry() throws {
        let key = MinisignSecretKey.generate().publicKey
        var store = TrustedKeys()
        try store.trust(key, scopes: ["com.example.weather"], comment: "", expires: "2027-06-30", today: "2027-01-01")
        #expect(try store.authorize(keyID: key.keyID, providerID: "com.example.weather", today: "2027-06-30").publicKey == key)
        let expired = error { () throws(PackageError) in _ = try store.authorize(keyID: key.keyID, providerID: "com.example.weather", today: "2027-07-01") }
        #expect(expired?.code == .keyExpired)
        #expect(expired?.message.contains("2027-06-30") == true && expired?.message.contains(key.keyIDString) == true)
        // Out of scope is still reported as such after the date.
        #expect(code { () throws(PackageError) in _ = try store.authorize(keyID: key.keyID, providerID: "org.other", today: "2028-01-01") } == .keyOutOfScope)

        // Past or impossible dates are refused when trusting.
        for bad in ["2026-12-31", "2027-02-29", "2027-13-01", "2027-1-01", "27-01-01", "2027-01-01T00", "１９７０-01-01", ""] {
            #expect(code { () throws(PackageError) in try store.trust(key, scopes: ["*"], comment: "", expires: bad, today: "2027-01-01") } == .keyInvalid, "\(bad)")
        }
        #expect(TrustedKeys.isDate("2028-02-29") && !TrustedKeys.isDate("2100-02-29") && TrustedKeys.isDate("2000-02-29"))

        // Round trip through the file, and a damaged date in the file.
        let file = try TrustedKeys(parsing: Array(store.jsonText.utf8), file: "k.json")
        #expect(file.keys.first?.expires == "2027-06-30")
        let damaged = store.jsonText.replacingOccurrences(of: "2027-06-30", with: "tomorrow")
        #expect(code { () throws(PackageError) in _ = try TrustedKeys(parsing: Array(damaged.utf8), file: "k.json") } == .keyInvalid)
        // No date: no "expires" field, and never expired.
        var plain = TrustedKeys()
        try plain.trust(key, scopes: ["*"], comment: "")
        #expect(!plain.jsonText.contains("expires"))
        #expect(try plain.authorize(keyID: key.keyID, providerID: "a.b", today: "9999-12-31").expires == nil)
        #expect(TrustedKeys.isDate(TrustedKeys.today()))
    }
}
