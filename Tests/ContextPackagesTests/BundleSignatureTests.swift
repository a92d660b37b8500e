import ContextHost
import ContextHostTestSupport
import ContextPackages
import Foundation
import Synchronization
import Testing

/// No byte of a bundle is decompressed or parsed before a signature over it, by a key the user
/// trusts, has been checked (issue 39): hostile files (a bomb under the caps, a malformed tar)
/// through `BundleVerifier.open` with a recording archive reader, which shows whether the parse
/// ever happens; controls show that a correctly signed file, and an unsigned one the user
/// accepts with --allow-unsigned, are read (once, and exactly the signed bytes).
@Suite("Bundle file signature before parsing")
struct BundleSignatureTests {
    /// Every byte string handed to the archive reader.
    final class Reads: Sendable {
        let calls = Mutex<[[UInt8]]>([])
        var count: Int { calls.withLock { $0.count } }
        var last: [UInt8]? { calls.withLock { $0.last } }
    }

    let author = MinisignSecretKey.generate()
    let stranger = MinisignSecretKey.generate()
    let folder: TemporaryDirectory

    init() throws {
        folder = try TemporaryDirectory()
    }

    /// A verifier that trusts `author` for every id, with small caps, recording what it reads.
    func verifier(_ reads: Reads, allowUnsigned: Bool = false) throws -> BundleVerifier {
        var keys = TrustedKeys()
        try keys.trust(author.publicKey, scopes: ["*"], comment: "the author")
        var verifier = BundleVerifier(trustedKeys: keys)
        verifier.allowUnsigned = allowUnsigned
        verifier.limits.fileBytes = 1 << 20
        verifier.limits.expandedBytes = 2 << 20
        verifier.readArchive = { (bytes, limits) throws(PackageError) in
            reads.calls.withLock { $0.append(bytes) }
            return try BundleArchive.read(bytes, limits: limits)
        }
        return verifier
    }

    /// A bomb for these caps: one 16 MiB file of zeros, about 16 KB compressed (a gzip member
    /// with no header flags, as `package` writes).
    static let bomb: [UInt8] = (try? BundleArchive.write([ArchiveEntry(path: "zeros", bytes: [UInt8](repeating: 0, count: 16 << 20))])) ?? []

    /// A malformed tar: 4 KiB of junk, properly gzip'd (by Python, no header flags).
    static let junk: [UInt8] = gzipOfJunk()

    static func gzipOfJunk() -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import gzip,sys; sys.stdout.buffer.write(gzip.compress(bytes(range(256))*16, mtime=0))"]
        let pipe = Pipe()
        process.standardOutput = pipe
        // Not started: no bytes (the tests that use them then fail), rather than waiting forever
        // on a pipe whose write end is still ours.
        guard (try? process.run()) != nil else { return [] }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return [UInt8](data)
    }

    func write(_ bytes: [UInt8], _ name: String) throws -> String {
        let path = folder.path + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    func signed(_ member: [UInt8], by key: MinisignSecretKey) throws -> [UInt8] {
        let signature = MinisignSignature.sign(member, with: key, trustedComment: "test", untrustedComment: "test")
        return try #require(EmbeddedSignature.embed(signature, in: member))
    }

    /// Opens `file` and answers the refusal (failing the test if it was accepted).
    func refusal(_ verifier: BundleVerifier, _ file: String) -> PackageError? {
        packageRefusal(file) { () throws(PackageError) in
            _ = try verifier.open(file: file) { id, version in self.folder.path + "/\(id)/\(version)" }
            return "opened"
        }
    }

    @Test("a bomb signed by nobody, with no .minisig: signature-missing, never read; with --allow-unsigned (control) it is read and hits the cap")
    func unsignedBomb() throws {
        try #require(Self.bomb.count > 1000 && Self.bomb.count < 200_000, "bomb of \(Self.bomb.count) bytes")
        let file = try write(Self.bomb, "bomb.ctxp")
        let reads = Reads()
        let refused = refusal(try verifier(reads), file)
        #expect(refused?.code == .signatureMissing, "\(String(describing: refused))")
        #expect(refused?.message.contains("nothing in it was read") == true, "\(String(describing: refused))")
        #expect(reads.count == 0, "the archive was read \(reads.count) time(s) before any signature was checked")

        let control = Reads()
        let accepted = refusal(try verifier(control, allowUnsigned: true), file)
        #expect(accepted?.code == .archiveTooLarge, "\(String(describing: accepted))")
        #expect(control.count == 1)
    }

    @Test("a .minisig beside from a key nobody trusts, or from the trusted key over other bytes: refused, never read")
    func detachedSignatures() throws {
        let file = try write(Self.bomb, "bomb.ctxp")
        try MinisignSignature.sign(Self.bomb, with: stranger, trustedComment: "x", untrustedComment: "x")
            .write(toFile: file + ".minisig", atomically: true, encoding: .utf8)
        let reads = Reads()
        #expect(refusal(try verifier(reads), file)?.code == .keyUnknown)
        #expect(refusal(try verifier(reads, allowUnsigned: true), file)?.code == .keyUnknown)
        try MinisignSignature.sign(Self.junk, with: author, trustedComment: "x", untrustedComment: "x")
            .write(toFile: file + ".minisig", atomically: true, encoding: .utf8)
        let mismatch = refusal(try verifier(reads), file)
        #expect(mismatch?.code == .signatureMismatch, "\(String(describing: mismatch))")
        #expect(mismatch?.message.contains("Nothing in it was read") == true, "\(String(describing: mismatch))")
        #expect(reads.count == 0)
    }

    @Test("a signature in the gzip header from an untrusted key, over other bytes, or damaged: refused, never read")
    func embeddedSignatures() throws {
        let reads = Reads()
        let foreign = try write(try signed(Self.bomb, by: stranger), "foreign.ctxp")
        #expect(refusal(try verifier(reads), foreign)?.code == .keyUnknown)

        var flipped = try signed(Self.junk, by: author)
        flipped[flipped.count - 12] ^= 0x01
        let tampered = refusal(try verifier(reads), try write(flipped, "flipped.ctxp"))
        #expect(tampered?.code == .signatureMismatch, "\(String(describing: tampered))")

        // The subfield claims more signature than the extra field holds.
        var damaged = try signed(Self.bomb, by: author)
        damaged[14] = 0xFF
        let invalid = refusal(try verifier(reads), try write(damaged, "damaged.ctxp"))
        #expect(invalid?.code == .signatureInvalid, "\(String(describing: invalid))")

        // A .minisig by the stranger beside a file the author signed inside: both must verify, with one key.
        let both = try write(try signed(Self.bomb, by: author), "both.ctxp")
        var strangerKeys = try verifier(reads)
        try strangerKeys.trustedKeys.trust(stranger.publicKey, scopes: ["*"], comment: "another")
        try MinisignSignature.sign(try signed(Self.bomb, by: author), with: stranger, trustedComment: "x", untrustedComment: "x")
            .write(toFile: both + ".minisig", atomically: true, encoding: .utf8)
        #expect(refusal(strangerKeys, both)?.code == .signatureMismatch)
        #expect(reads.count == 0, "read \(reads.count) time(s)")
    }

    @Test("control: the same hostile bytes correctly signed are read once, exactly the signed member, and refused by the reader")
    func signedHostileIsParsed() throws {
        let reads = Reads()
        let bomb = try write(try signed(Self.bomb, by: author), "signed-bomb.ctxp")
        #expect(refusal(try verifier(reads), bomb)?.code == .archiveTooLarge)
        #expect(reads.count == 1)
        #expect(reads.last == Self.bomb, "the reader got other bytes than the signed gzip member")

        try #require(Self.junk.count > 20)
        let junk = try write(try signed(Self.junk, by: author), "signed-junk.ctxp")
        #expect(refusal(try verifier(reads), junk)?.code == .archiveCorrupt)
        #expect(reads.count == 2)
    }

    @Test("a bundle with its signature in the gzip header is still an ordinary .tar.gz (GNU tar lists it)")
    func embeddedIsOrdinaryGzip() throws {
        let member = try BundleArchive.write([ArchiveEntry(path: "hello.txt", bytes: Array("hi\n".utf8))])
        let bytes = try signed(member, by: author)
        let split = try #require(try EmbeddedSignature.split(bytes))
        #expect(split.member == member)
        #expect(try EmbeddedSignature.split(member) == nil)
        let file = try write(bytes, "plain.ctxp")
        let listing = try Shell.run("tar -tzf '\(file)'", in: folder.path, timeout: 30)
        #expect(listing.status == 0 && listing.output.contains("hello.txt"), "\(listing.output)")
    }
}
