import ContextHostTestSupport
import Foundation
import Testing

/// The committed fuzz seeds (Fuzz/corpus/), replayed once through the fuzz targets' replay drivers
/// (built by a normal `swift build`, without the fuzzer runtime), so a regression input that once
/// crashed keeps being run by the normal suite.
@Suite("Fuzz corpus replay")
struct FuzzCorpusTests {
    @Test("every seed runs through its target without a crash", arguments: [
        ("framing-fuzzer", "framing"), ("manifest-fuzzer", "manifest"), ("health-export-fuzzer", "health-export"),
        ("health-csv-fuzzer", "health-csv"), ("price-csv-fuzzer", "price-csv"), ("calendar-fuzzer", "calendar"),
        ("gazetteer-fuzzer", "gazetteer"), ("coordinate-fuzzer", "coordinate"), ("sdk-json-fuzzer", "sdk-json"), ("ctxui-fuzzer", "ctxui"),
        ("elf-fuzzer", "elf"),
        ("signature-fuzzer", "signature"),
        ("bundle-fuzzer", "bundle"),
        ("protocol-fuzzer", "protocol"),
    ])
    func replay(_ target: String, _ corpus: String) throws {
        let executable = BuildProducts.directory + "/" + target
        try #require(FileManager.default.fileExists(atPath: executable), "\(executable) is missing: run 'swift build' first")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [BuildProducts.packageRoot + "/Fuzz/corpus/" + corpus]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("\(target): replayed"), "\(text)")
    }
}
