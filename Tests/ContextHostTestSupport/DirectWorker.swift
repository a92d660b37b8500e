import Foundation

/// `context-host worker ARGUMENTS` started directly on pipes, for tests of the worker itself. It
/// speaks the worker's framing: a 4-byte little-endian length (of tag and payload), an 8-byte
/// little-endian tag (0 for the init frame, else the request's id), the payload. Its standard
/// error is discarded.
public final class DirectWorker {
    public let process = Process()
    private let input = Pipe()
    private let output = Pipe()

    /// Starts the worker.
    public init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: BuildProducts.hostExecutable)
        process.arguments = ["worker"] + arguments
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// Writes one frame to the worker's input.
    public func send(tag: Int64, _ payload: String) {
        var data = Data()
        withUnsafeBytes(of: UInt32(payload.utf8.count + 8).littleEndian) { data.append(contentsOf: $0) }
        withUnsafeBytes(of: tag.littleEndian) { data.append(contentsOf: $0) }
        data.append(contentsOf: Array(payload.utf8))
        input.fileHandleForWriting.write(data)
    }

    /// The next frame the worker wrote, or `nil` when its output ended before a whole frame.
    public func receive() -> (tag: Int64, payload: String)? {
        let header = output.fileHandleForReading.readData(ofLength: 12)
        guard header.count == 12 else { return nil }
        let length = UInt32(littleEndian: header.prefix(4).withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) })
        let tag = Int64(littleEndian: header.suffix(8).withUnsafeBytes { $0.loadUnaligned(as: Int64.self) })
        guard length >= 8 else { return nil }
        let body = output.fileHandleForReading.readData(ofLength: Int(length) - 8)
        guard body.count == Int(length) - 8 else { return nil }
        return (tag, String(decoding: body, as: UTF8.self))
    }

    /// Closes the worker's input: end of file, after which it exits.
    public func closeInput() throws { try input.fileHandleForWriting.close() }

    /// Stops and reaps the worker (`ChildProcess`: unreaped, its pipes stay open).
    deinit { ChildProcess.stop(process) }
}
