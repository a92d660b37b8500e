// libFuzzer target for the client-facing decoder: framing (NDJSON and Content-Length), the
// envelope scanner, the full JSON parser, the input-limit walker, request dispatch with parameter
// decoding for every method, and the provider-output validators. See Fuzz/README.md.
//
// Built two ways:
// - `Fuzz/run.sh`: with `-sanitize=fuzzer -DFUZZING`; `FuzzMain.start` runs libFuzzer's driver,
//   which calls `fuzzOne` for each input.
// - a normal `swift build`: a replay driver (`framing-fuzzer FILE|DIR…`) that runs each file once,
//   for reproducing a crash or checking the corpus without the fuzzer runtime.
import ContextHost
import ContextProviderKit
import Logging
import FuzzSupport

/// One host and server for the whole run: no manifests, nothing on disk, output discarded.
private let server: RPCServer = {
    LoggingSystem.bootstrap { _ in SwiftLogNoOpLogHandler() }
    let logger = Logger(label: "fuzz")
    var configuration = HostConfiguration(manifestDirectories: ["/nonexistent/ctxhost-fuzz"], maximumMessageBytes: 4096)
    configuration.inputLimits.maximumStringBytes = 512
    configuration.inputLimits.maximumElements = 64
    let host = Host(configuration: configuration, logger: logger)
    let output = OutputChannel { _ in true }
    return RPCServer(host: host, output: output, logger: logger) { _ in }
}()

/// The server's limits, for the one-pass scan.
private let limits: ParamsLimits = {
    var input = InputLimits()
    input.maximumStringBytes = 512
    input.maximumElements = 64
    return ParamsLimits(input: input, itemBytes: OutputLimits().itemBytes)
}()

private let outputKinds: [ProviderOutput] = [.chip, .detail, .form, .submitOutcome, .madeItem, .encodedItem, .description, .options]

/// Everything one message goes through.
private func message(_ bytes: UnsafeRawBufferPointer, selector: UInt8) {
    let (envelope, error) = Envelope.scan(bytes)
    // The one-pass limits check reads the same text: the same fault, and where nothing broke a
    // limit, the same item found.
    let (limited, limitedError) = Envelope.scan(bytes, limits: limits)
    if limitedError != error { fatalError("Envelope.scan with limits: \(String(describing: limitedError)), without: \(String(describing: error))") }
    if error == nil, limited.paramsProblem == nil, limited.itemLocation != envelope.itemLocation {
        fatalError("Envelope.scan with limits found another item")
    }
    let parsed = try? JSONReader.parse(bytes)
    // What the parser reads, the scanner must accept. (The scanner counts the envelope as a
    // nesting level, as the parser does; it still checks less: unpaired surrogate escapes pass.)
    if error != nil, parsed != nil { fatalError("Envelope.scan refused what JSONReader.parse reads") }
    if let parsed {
        // What the host prints must be JSON it can read back.
        let printed = parsed.jsonBytes
        guard (try? JSONReader.parse(printed)) != nil else { fatalError("JSONWriter printed unreadable JSON") }
        // Provider-output validation (never crashes; errors are fine).
        let kind = outputKinds[Int(selector) % outputKinds.count]
        _ = try? OutputValidation.check(bytes, as: kind, providerID: "fuzz", method: "fuzz", limits: OutputLimits(), messageLimit: 4096)
        // The allocation-free chip scan may only accept what the full decoder accepts.
        if ChipScan.isValid(bytes),
            (try? OutputValidation.check(bytes, as: .chip, providerID: "fuzz", method: "fuzz", limits: OutputLimits(), messageLimit: 4096)) == nil
        {
            fatalError("ChipScan accepted a chip the decoder refuses")
        }
        _ = envelope
    }
    server.receive(Array(bytes))
}

/// Feeds one input: the first byte picks the chunk size and the output kind, the rest is a byte
/// stream through the framer, then the same bytes as one message.
func fuzzOne(_ data: UnsafeRawBufferPointer) {
    guard let first = data.first else { return }
    server.transition(to: .running)
    let stream = UnsafeRawBufferPointer(rebasing: data[1...])
    var framer = MessageFramer(maximumMessageBytes: 4096)
    let chunk = Int(first & 0x3F) + 1
    var start = 0
    let handle: (FramedEvent) -> Void = { event in
        if case .message(let body) = event {
            body.withUnsafeBytes { message($0, selector: first >> 6) }
        } else {
            server.handle(event)
        }
    }
    while start < stream.count {
        let end = min(stream.count, start + chunk)
        framer.consume(UnsafeRawBufferPointer(rebasing: stream[start..<end]), handle)
        start = end
    }
    for event in framer.finish() { handle(event) }
    if stream.count <= 4096 { message(stream, selector: first) }
}

@main
enum Main {
    static func main() { FuzzMain.start(fuzzOne) }
}
