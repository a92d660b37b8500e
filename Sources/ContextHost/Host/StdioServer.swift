import CHostSupport
import Dispatch
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs the host as a JSON-RPC server on standard input and output.
public enum StdioServer {
    /// Protects the protocol stream from stray output: duplicates fd 1 for protocol use and
    /// points fd 1 at stderr, so a `print` in any provider lands in the log instead of corrupting
    /// the protocol. Call it before loading any provider. Returns the protocol descriptor.
    public static func takeOverStandardOutput() -> Int32 {
        let protocolFD = dup(STDOUT_FILENO)
        precondition(protocolFD >= 0, "dup(1) failed")
        _ = fcntl(protocolFD, F_SETFD, FD_CLOEXEC)
        _ = dup2(STDERR_FILENO, STDOUT_FILENO)
        #if os(Linux)
            // A `composer/list` answer of 100 chips is ~100 KB: with the default 64 KiB pipe, writing
            // it would stop halfway until the client reads. Ask for a larger pipe (best effort: not
            // a pipe, or over the system's limit, leaves it as it is).
            _ = fcntl(protocolFD, 1031 /* F_SETPIPE_SZ */, Int32(1 << 20))
        #endif
        // Non-dumpable: no same-user process (a worker, or anything else the user runs) may open
        // /proc/<pid>/fd/* to reach the protocol pipe, nor read this process's memory or environment.
        _ = ctxh_set_dumpable(0)
        // A dead peer (client or worker) must be an EPIPE error, not a fatal signal.
        signal(SIGPIPE, SIG_IGN)
        // A parent may start us with signals blocked (Foundation's Process passes its own mask on),
        // which would make SIGTERM and SIGINT do nothing; clear the mask before any thread starts.
        var none = sigset_t()
        sigemptyset(&none)
        sigprocmask(SIG_SETMASK, &none, nil)
        return protocolFD
    }

    /// Serves until stdin closes or the client sends `exit`; never returns.
    ///
    /// - Parameters:
    ///   - configuration: where manifests and libraries are.
    ///   - protocolFD: the descriptor from `takeOverStandardOutput()`.
    ///   - logger: where logs go (stderr).
    public static func run(configuration: HostConfiguration, protocolFD: Int32, logger: Logger) -> Never {
        let output = OutputChannel(fileDescriptor: protocolFD)
        let host = Host(configuration: configuration, logger: logger)
        let server = RPCServer(host: host, output: output, logger: logger) { status in
            host.registry.metadata.saveIfPending()
            exitNow(status)
        }
        // In-process providers answer on their call threads; buffer each batch's replies too.
        host.calls.setBatchScope { body in output.batch(body) }
        let relay = host.calls.relay
        var framer = MessageFramer(maximumMessageBytes: configuration.maximumMessageBytes)
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                logger.error("Reading stdin failed: \(String(cString: strerror(errno)))")
                break
            }
            if count == 0 { break }
            buffer.withUnsafeBytes { bytes in
                let chunk = UnsafeRawBufferPointer(rebasing: bytes[0..<count])
                output.batch {
                    relay.readerWakes()
                    // Each message is handled as it is framed (its buffer then serves the next);
                    // provider answers that came in meanwhile are delivered after it. Answers are
                    // framed as the client frames its messages, known before the first.
                    framer.consume(chunk, framingChosen: { output.setFraming($0) }) { event in
                        server.handle(event)
                        relay.deliverQueued()
                    }
                    relay.drain()
                }
            }
        }
        for event in framer.finish() { server.handle(event) }
        // stdin closed: let requests already sent to providers finish (each has a timeout).
        while server.pendingCount > 0 { usleep(1000) }
        output.flush()
        host.registry.metadata.saveIfPending()
        exitNow(0)
    }

    /// Ends the process without running exit-time handlers: a provider may still be loading on
    /// another thread (inside its own code), and tearing down the process state under it could
    /// crash it on the way out. The protocol output is flushed by then; the C streams are flushed
    /// here (a provider's stray `print` went to stderr).
    private static func exitNow(_ status: Int32) -> Never {
        fflush(nil)  // every C stream
        _exit(status)
    }
}
