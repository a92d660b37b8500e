import ProviderSupport
import ContextProviderKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where "current location" comes from, per the provider's settings (first set wins):
/// `currentLocation` (coordinates in any accepted notation), `currentLocationFile` (a file whose
/// first non-comment line holds coordinates) or `currentLocationCommand` (a shell command that
/// prints coordinates on its first line of output).
enum CurrentLocationSource: Sendable, Equatable {
    case fixed(String)
    case file(String)
    case command(String)

    /// The source configured in `settings`, or `nil` when none is.
    init?(settings: ProviderSettings) {
        if let text = settings.string("currentLocation"), !text.trimmingWhitespace().isEmpty {
            self = .fixed(text)
        } else if let path = settings.path("currentLocationFile"), !path.isEmpty {
            self = .file(path)
        } else if let command = settings.string("currentLocationCommand"), !command.trimmingWhitespace().isEmpty {
            self = .command(command)
        } else {
            return nil
        }
    }

    /// The most time a command may take.
    static let commandTimeoutMilliseconds = 5000
    /// How much of `currentLocationFile` is read (the coordinates are on its first lines).
    static let maximumFileBytes = 64 << 10

    /// Reads the coordinate; throws a `ProviderError` naming the setting and the problem.
    func read() throws(ProviderError) -> Coordinate {
        switch self {
        case .fixed(let text):
            do {
                return try CoordinateParser.parse(text)
            } catch {
                throw Self.failure("Setting currentLocation \(Quote.short(text)) is not a coordinate: \(error.message)")
            }
        case .file(let path):
            let bytes: [UInt8]
            do {
                bytes = try FileIO.readChecked(path, limit: Self.maximumFileBytes, truncating: true)
            } catch {
                throw Self.failure("currentLocationFile \(path): \(error.message)")
            }
            return try Self.firstCoordinate(bytes, none: "currentLocationFile \(path) holds no coordinates; write one line such as 47.37, 8.54") {
                "currentLocationFile \(path): \($0) is not a coordinate: \($1)"
            }
        case .command(let command):
            let output: [UInt8]
            do {
                output = try CommandRunner.run(command, timeoutMilliseconds: Self.commandTimeoutMilliseconds)
            } catch {
                throw Self.failure("currentLocationCommand `\(Quote.prefix(command))` \(error.message)")
            }
            let none = "currentLocationCommand `\(Quote.prefix(command))` printed no coordinates; it must print a line such as 47.37, 8.54"
            return try Self.firstCoordinate(output, none: none) {
                "currentLocationCommand `\(Quote.prefix(command))` printed \($0), which is not a coordinate: \($1)"
            }
        }
    }

    /// The coordinate on the first line of `bytes` (the file, the command's output); else a
    /// failure saying `none` when there is no line, `invalid(line, reason)` when it does not parse.
    private static func firstCoordinate(
        _ bytes: [UInt8], none: String, invalid: (String, String) -> String
    ) throws(ProviderError) -> Coordinate {
        guard let line = firstLine(bytes) else { throw failure(none) }
        do {
            return try CoordinateParser.parse(line)
        } catch {
            throw failure(invalid(Quote.short(line), error.message))
        }
    }

    private static func firstLine(_ bytes: [UInt8]) -> String? {
        // (At most 64 KiB: the file is read that far, the command's output kept that far.)
        var text = bytes[...]
        if text.starts(with: [0xEF, 0xBB, 0xBF]) { text = text.dropFirst(3) }
        for line in String(decoding: text, as: UTF8.self).split(whereSeparator: \.isNewline) {
            let trimmed = String(line).trimmingWhitespace()
            if !trimmed.isEmpty, !trimmed.hasPrefix("#") { return trimmed }
        }
        return nil
    }

    private static func failure(_ message: String) -> ProviderError {
        ProviderError(
            code: LocationProvider.unavailableCode, message: "Current location is unavailable: \(message)",
            data: ["reason": ["code": "current-location-failed", "message": .string(message)]])
    }
}

/// Runs a shell command (`/bin/sh -c`) with a time limit and collects its standard output.
enum CommandRunner {
    struct Failure: Error {
        var message: String
    }

    static func run(_ command: String, timeoutMilliseconds: Int) throws(Failure) -> [UInt8] {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw Failure(message: "could not start: pipe failed") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
        posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
        posix_spawn_file_actions_addclose(&actions, pipeEnds[1])
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        // Its own process group, so a timeout kills what the shell started too.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)
        var pid: pid_t = 0
        let arguments = ["/bin/sh", "-c", command]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, &attributes, &argv, environ)
        close(pipeEnds[1])
        guard spawned == 0 else {
            close(pipeEnds[0])
            throw Failure(message: "could not start (\(String(cString: strerror(spawned))))")
        }
        defer { close(pipeEnds[0]) }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var timespec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &timespec)
        let deadline = Int(timespec.tv_sec) * 1000 + Int(timespec.tv_nsec) / 1_000_000 + timeoutMilliseconds
        var timedOut = false
        while true {
            clock_gettime(CLOCK_MONOTONIC, &timespec)
            let now = Int(timespec.tv_sec) * 1000 + Int(timespec.tv_nsec) / 1_000_000
            if now >= deadline {
                timedOut = true
                break
            }
            var descriptor = pollfd(fd: pipeEnds[0], events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(deadline - now))
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            if ready == 0 { continue }
            let count = buffer.withUnsafeMutableBytes { read(pipeEnds[0], $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            if output.count < 65536 { output.append(contentsOf: buffer[0..<count]) }
        }
        // The output may end (the command closed it) long before the command does: wait for
        // it within the same deadline.
        var status: Int32 = 0
        var reaped = false
        while !timedOut {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { reaped = true; break }
            if result < 0, errno != EINTR { reaped = true; break }
            clock_gettime(CLOCK_MONOTONIC, &timespec)
            if Int(timespec.tv_sec) * 1000 + Int(timespec.tv_nsec) / 1_000_000 >= deadline { timedOut = true; break }
            usleep(2000)
        }
        if timedOut {
            kill(-pid, SIGKILL)
            kill(pid, SIGKILL)
        }
        if !reaped { while waitpid(pid, &status, 0) < 0, errno == EINTR {} }
        if timedOut { throw Failure(message: "did not finish within \(timeoutMilliseconds / 1000) s") }
        let exited = (status & 0x7F) == 0
        let exitCode = (status >> 8) & 0xFF
        guard exited, exitCode == 0 else {
            throw Failure(message: exited ? "exited with status \(exitCode)" : "was killed by signal \(status & 0x7F)")
        }
        return output
    }
}
