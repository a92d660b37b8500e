// libFuzzer target for the minisign format and the trusted-key store: every input goes through
// the signature, public key and secret key parsers and the `trusted-keys.json` decoder. See
// Fuzz/README.md.
//
// Built with `-sanitize=fuzzer -DFUZZING` by `Fuzz/run.sh`; a normal `swift build` makes a replay
// driver (`signature-fuzzer FILE|DIR…`).
import ContextHost
import ContextPackages
import FuzzSupport

/// A fixed key, to verify every signature that parses (it must never verify: nothing signs with it).
let fuzzKey = MinisignSecretKey.generate().publicKey

func fuzzOne(_ data: UnsafeRawBufferPointer) {
    let bytes = Array(data)
    do {
        let signature = try MinisignSignature(parsing: bytes)
        if signature.keyID.count != 8 { fatalError("a signature whose key id is not 8 bytes") }
        _ = signature.keyIDString
        do {
            try signature.verify(bytes, with: fuzzKey)
            fatalError("a fuzzed signature verified")
        } catch {
            if error.code != .signatureMismatch { fatalError("verify failed with \(error.code)") }
        }
        let forged = MinisignPublicKey(keyID: signature.keyID, bytes: fuzzKey.bytes)
        if (try? signature.verify(bytes, with: forged)) != nil { fatalError("a fuzzed signature verified") }
    } catch {
        if error.code != .signatureInvalid { fatalError("a signature refused with \(error.code)") }
    }
    do {
        let key = try MinisignPublicKey(parsing: bytes)
        // What parses writes back to the same key, in both forms.
        guard key.keyID.count == 8, key.bytes.count == 32,
            (try? MinisignPublicKey(parsing: key.fileText(comment: "fuzz"))) == key,
            (try? MinisignPublicKey(parsing: key.base64)) == key
        else { fatalError("a public key that does not round-trip") }
    } catch {
        if error.code != .keyInvalid { fatalError("a public key refused with \(error.code)") }
    }
    do {
        // No password: an encrypted key is refused before any hashing (bounded work).
        let key = try MinisignSecretKey(parsing: bytes, password: nil)
        guard (try? MinisignSecretKey(parsing: key.fileText(comment: "fuzz"), password: nil))?.publicKey == key.publicKey
        else { fatalError("a secret key that does not round-trip") }
    } catch {
        if error.code != .keyInvalid { fatalError("a secret key refused with \(error.code)") }
    }
    do {
        let store = try TrustedKeys(parsing: bytes, file: "fuzz.json")
        // What loads is written back as a file that loads to an equal store.
        guard (try? TrustedKeys(parsing: Array(store.jsonText.utf8), file: "fuzz.json")) == store else {
            fatalError("a trusted keys file that does not round-trip")
        }
        for key in store.keys {
            _ = try? store.authorize(keyID: key.publicKey.keyID, providerID: "com.example.weather")
        }
    } catch {
        if error.code != .keyInvalid { fatalError("a trusted keys file refused with \(error.code)") }
    }
}

@main
enum Main {
    static func main() { FuzzMain.start(fuzzOne) }
}
