import CHostSupport
import Dispatch
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Watches manifest folders and calls `onChange` (on its own thread, never twice at once) after
/// `*.yaml` / `*.yml` files were added, changed, renamed or deleted.
///
/// Linux uses inotify; changes are debounced (`debounceMilliseconds` of quiet, at most one second
/// after the first event), so an editor's write-temp-then-rename is one change. Elsewhere, or when
/// inotify is unavailable, the folders are polled every `pollMilliseconds`.
///
/// `onChange` runs once right after the watch is set up too, so a change made between discovery and
/// the start of the watch is not missed (the caller's diff makes it a no-op when nothing changed).
package final class ManifestWatcher: Sendable {
    package let directories: [String]
    private let debounceMilliseconds: Int
    private let pollMilliseconds: Int
    private let logger: Logger
    private let onChange: @Sendable () -> Void
    private let stopped = Atomic<Bool>(false)
    /// Write end of the pipe that wakes the inotify loop to stop.
    private let wakeFD = Atomic<Int32>(-1)
    private let queue = DispatchQueue(label: "context-host.manifest-watcher")

    /// - Parameters:
    ///   - directories: absolute folders; missing ones are skipped (and logged).
    ///   - onChange: called on the watcher's thread.
    package init(
        directories: [String], debounceMilliseconds: Int = 100, pollMilliseconds: Int = 2000, logger: Logger,
        onChange: @escaping @Sendable () -> Void
    ) {
        self.directories = directories
        self.debounceMilliseconds = debounceMilliseconds
        self.pollMilliseconds = pollMilliseconds
        self.logger = logger
        self.onChange = onChange
    }

    /// Starts watching on a background thread.
    package func start() {
        queue.async { [self] in
            #if os(Linux)
            if runInotify() { return }
            #endif
            runPolling()
        }
    }

    /// Stops watching; `onChange` is not called after the current call (if any) returns.
    package func stop() {
        stopped.store(true, ordering: .sequentiallyConsistent)
        let fd = wakeFD.load(ordering: .sequentiallyConsistent)
        if fd >= 0 {
            var byte: UInt8 = 1
            _ = write(fd, &byte, 1)
        }
    }

    private var isStopped: Bool { stopped.load(ordering: .sequentiallyConsistent) }

    /// Whether an event for this file name concerns a manifest (or the lock file of installed providers).
    static func isManifestName(_ name: String) -> Bool {
        ManifestCatalog.isManifestFileName(name) || name == PackageLocations.lockFileName
    }

    // MARK: inotify

    #if os(Linux)
    private static let inModify: UInt32 = 0x0000_0002
    private static let inAttrib: UInt32 = 0x0000_0004
    private static let inCloseWrite: UInt32 = 0x0000_0008
    private static let inMovedFrom: UInt32 = 0x0000_0040
    private static let inMovedTo: UInt32 = 0x0000_0080
    private static let inCreate: UInt32 = 0x0000_0100
    private static let inDelete: UInt32 = 0x0000_0200
    private static let inDeleteSelf: UInt32 = 0x0000_0400
    private static let inMoveSelf: UInt32 = 0x0000_0800
    private static let inQueueOverflow: UInt32 = 0x0000_4000
    private static let inOnlyDir: UInt32 = 0x0100_0000

    /// Returns false if inotify cannot be used (then the caller polls).
    private func runInotify() -> Bool {
        let fd = inotify_init1(Int32(O_CLOEXEC | O_NONBLOCK))
        guard fd >= 0 else {
            logger.notice("inotify is unavailable (\(String(cString: strerror(errno)))); polling manifest folders every \(pollMilliseconds) ms instead.")
            return false
        }
        defer { close(fd) }
        // Close-on-exec from the start: a worker spawned meanwhile must not inherit it.
        var pipeFDs: [Int32] = [-1, -1]
        guard ctxh_pipe_cloexec(&pipeFDs) == 0 else {
            logger.notice("Cannot create a pipe for the manifest watcher (\(String(cString: strerror(errno)))); polling instead.")
            return false
        }
        wakeFD.store(pipeFDs[1], ordering: .sequentiallyConsistent)
        defer {
            wakeFD.store(-1, ordering: .sequentiallyConsistent)
            close(pipeFDs[0])
            close(pipeFDs[1])
        }
        let mask = Self.inModify | Self.inAttrib | Self.inCloseWrite | Self.inMovedFrom | Self.inMovedTo | Self.inCreate
            | Self.inDelete | Self.inDeleteSelf | Self.inMoveSelf | Self.inOnlyDir
        var watched = 0
        for directory in directories {
            if inotify_add_watch(fd, directory, mask) >= 0 {
                watched += 1
            } else {
                logger.info("Not watching manifest folder \(directory): \(String(cString: strerror(errno)))")
            }
        }
        logger.debug("Watching \(watched) manifest folder(s) with inotify.")
        if isStopped { return true }
        onChange()

        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var pendingSince: UInt64?  // when the first unhandled event arrived (ms)
        var lastEvent: UInt64 = 0
        while !isStopped {
            var timeout: Int32 = -1
            if let first = pendingSince {
                let now = Self.nowMilliseconds()
                let quietUntil = lastEvent + UInt64(debounceMilliseconds)
                let latest = first + 1000
                let due = min(quietUntil, latest)
                timeout = due > now ? Int32(due - now) : 0
            }
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: pipeFDs[0], events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                logger.warning("The manifest watcher stopped: poll failed: \(String(cString: strerror(errno)))")
                return true
            }
            if isStopped || fds[1].revents != 0 { return true }
            if fds[0].revents != 0 {
                if drainEvents(fd, &buffer) {
                    let now = Self.nowMilliseconds()
                    if pendingSince == nil { pendingSince = now }
                    lastEvent = now
                }
                continue
            }
            if ready == 0, pendingSince != nil {
                pendingSince = nil
                onChange()
            }
        }
        return true
    }

    /// Reads every queued event; true if any concerns a manifest (or the queue overflowed).
    private func drainEvents(_ fd: Int32, _ buffer: inout [UInt8]) -> Bool {
        var relevant = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            var offset = 0
            while offset + 16 <= count {
                let (mask, length) = buffer.withUnsafeBytes { bytes in
                    (bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                        Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)))
                }
                let nameBytes = buffer[(offset + 16)..<min(offset + 16 + length, count)].prefix { $0 != 0 }
                let name = String(decoding: nameBytes, as: UTF8.self)
                if mask & (Self.inQueueOverflow | Self.inDeleteSelf | Self.inMoveSelf) != 0 || Self.isManifestName(name) {
                    relevant = true
                }
                offset += 16 + length
            }
        }
        return relevant
    }

    private static func nowMilliseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1000 + UInt64(time.tv_nsec) / 1_000_000
    }
    #endif

    // MARK: Polling

    /// What identifies a manifest file's version for polling.
    struct Stamp: Equatable {
        var size: Int64
        var seconds: Int
        var nanoseconds: Int
        var inode: UInt64
    }

    private func runPolling() {
        #if !os(Linux)
        logger.notice("Watching manifest folders by polling every \(pollMilliseconds) ms.")
        #endif
        var previous = snapshot()
        if isStopped { return }
        onChange()
        while !isStopped {
            usleep(UInt32(pollMilliseconds) * 1000)
            if isStopped { return }
            let current = snapshot()
            if current != previous {
                previous = current
                onChange()
            }
        }
    }

    /// Every manifest file in the watched folders with its stamp.
    func snapshot() -> [String: Stamp] {
        var result: [String: Stamp] = [:]
        for directory in directories {
            guard let names = ManifestFileSystem.directoryEntries(directory) else { continue }
            for name in names where Self.isManifestName(name) {
                let path = directory + "/" + name
                var info = stat()
                guard stat(path, &info) == 0 else { continue }
                #if canImport(Darwin)
                let modified = info.st_mtimespec
                #else
                let modified = info.st_mtim
                #endif
                result[path] = Stamp(
                    size: Int64(info.st_size), seconds: Int(modified.tv_sec), nanoseconds: Int(modified.tv_nsec),
                    inode: UInt64(info.st_ino))
            }
        }
        return result
    }
}
