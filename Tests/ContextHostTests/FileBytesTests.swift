import ContextHostTestSupport
import Foundation
import Testing

@testable import ContextHost

@Suite("File bytes")
struct FileBytesTests {
    /// A file of `count` bytes whose byte i is i % 251, so a lost or repeated chunk shows.
    private func file(_ directory: TemporaryDirectory, _ count: Int) throws -> String {
        let path = directory.path + "/f\(count).bin"
        try Data((0..<count).map { UInt8($0 % 251) }).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test(
        "the whole file comes back, whatever size it was expected to have",
        arguments: [0, 1, 4095, 65_535, 65_536, 65_537, 300_001])
    func wholeFile(count: Int) throws {
        let directory = try TemporaryDirectory()
        let path = try file(directory, count)
        let expected = (0..<count).map { UInt8($0 % 251) }
        let fd = open(path, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        // Right, none (grows from 64 KiB), too small (the file grew since fstat), too large (it shrank).
        for expectedSize in [count, 0, count / 3, count * 2 + 10] {
            let bytes = try FileBytes.read(fd: fd, expectedSize: expectedSize)
            #expect(bytes == expected, "expected size \(expectedSize)")
            // A small file does not keep a large buffer.
            #expect(bytes.capacity < count + 4096 + 64, "capacity \(bytes.capacity) for \(count) bytes")
        }
        #expect(try FileBytes.read(path) == expected)
    }

    /// `writeAll(_:_:_:)` (a worker's frame: header and payload in one `writev`) writes both parts
    /// whole and in order, also when the pipe takes less than all of it at once (a payload larger
    /// than the pipe; a partial write that ends inside the header).
    @Test("two parts written with writev arrive whole and in order", arguments: [(12, 0), (0, 5), (12, 200), (12, 300_001), (70_000, 70_000)])
    func vectoredWrite(sizes: (Int, Int)) throws {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let first = (0..<sizes.0).map { UInt8($0 % 251) }
        let second = (0..<sizes.1).map { UInt8(($0 + 7) % 253) }
        let reader = PipeReader(fd: fds[0], count: sizes.0 + sizes.1)
        let written = first.withUnsafeBytes { a in second.withUnsafeBytes { b in writeAll(fds[1], a, b) } }
        close(fds[1])
        #expect(written)
        #expect(reader.wait() == first + second)
    }
}

/// Reads `count` bytes (or to the end) from a descriptor on a thread of its own.
private final class PipeReader: @unchecked Sendable {
    private var bytes: [UInt8] = []
    private let done = DispatchSemaphore(value: 0)

    init(fd: Int32, count: Int) {
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while bytes.count < count {
                let got = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if got <= 0 { break }
                bytes += buffer[0..<got]
            }
            done.signal()
        }
    }

    /// The bytes read (waits at most 30 s: a reader still waiting then fails the test).
    func wait() -> [UInt8]? {
        done.wait(timeout: .now() + 30) == .success ? bytes : nil
    }
}
