import CContextProvider
import CHostSupport
import ContextProviderKit
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The body of `context-host worker`: loads one provider library and relays framed messages
/// between the host (stdin/stdout, `WorkerFrame`) and the provider's `call`.
///
/// The worker exits when its stdin closes (the host closed the pipe or died) and, on Linux, is
/// killed by the kernel when the host dies (PR_SET_PDEATHSIG). A provider's stray output to fd 1
/// lands on stderr, which the host keeps the last lines of.
public enum WorkerMain {
    /// Runs the worker; never returns.
    ///
    /// - Parameters:
    ///   - libraryPath: the provider library.
    ///   - sha256: the manifest's pin, checked on the bytes loaded.
    ///   - parentPID: the host's pid; the worker exits at once if its parent is already another
    ///     process (the host died before the parent-death signal was armed).
    ///   - memoryLimit: a cap on the data segment, in bytes.
    ///   - confined: open the library refusing symbolic links in its (canonical) path, as the host
    ///     does (`ProviderLibrary.load`); false with `--allow-outside-library-paths`.
    ///   - sandbox: confine the worker before the library is loaded (docs/security.md, "Sandbox");
    ///     nil or policy `off`: no sandbox.
    ///   - runtime: the manifest's `runtime` (`native`, `swift-static`, `swift-dynamic VERSION`):
    ///     the library is inspected before the sandbox closes and refused if it cannot run here.
    ///   - hostRequestsFD: where the provider's host requests (`host/fetch`) go, framed as replies
    ///     are, instead of stdout: a pipe the host reads on its HTTP event loop. Ignored when it is
    ///     not an open descriptor.
    public static func run(
        libraryPath: String, sha256: String?, parentPID: Int32?, memoryLimit: Int?, confined: Bool = true,
        sandbox: WorkerSandboxOptions? = nil, runtime: String? = nil, hostRequestsFD: Int32? = nil
    ) -> Never {
        _ = ctxh_set_parent_death_signal(SIGKILL)
        if let parentPID, getppid() != parentPID { _exit(0) }
        let sandbox = sandbox?.policy == .off ? nil : sandbox
        var report = SandboxReport(policy: sandbox?.policy.rawValue ?? "off")
        if let sandbox {
            // While single-threaded: the task cap, then user/PID/mount/network namespaces (forks).
            WorkerSandbox.enterNamespaces(sandbox, report: &report)
        }
        let protocolFD = StdioServer.takeOverStandardOutput()
        if let memoryLimit, memoryLimit > 0 { _ = ctxh_limit_data(UInt64(memoryLimit)) }
        workerOutputFD.store(protocolFD, ordering: .releasing)
        if let hostRequestsFD, hostRequestsFD > 2, fcntl(hostRequestsFD, F_GETFD) >= 0 {
            // (Not passed on to anything the provider runs.)
            _ = fcntl(hostRequestsFD, F_SETFD, FD_CLOEXEC)
            workerHostRequestFD.store(hostRequestsFD, ordering: .releasing)
        }

        var reader = FrameReader(fd: STDIN_FILENO)
        guard case .frame(_, let initJSON) = reader.next(maximumPayload: 64 << 20) else { _exit(0) }
        if let runtime {
            do throws(LoadError) {
                guard let declared = ProviderRuntime(text: runtime) else {
                    throw LoadError(code: "runtime-mismatch", message: "Unknown runtime '\(runtime)'.", hint: "Package the provider again.")
                }
                try ProviderLauncher.checkRuntime(declared, libraryPath: libraryPath)
            } catch {
                refuseStart(error)
            }
        }
        if let sandbox {
            WorkerSandbox.confine(sandbox, libraryPath: libraryPath, pinned: sha256 != nil, report: &report)
            if sandbox.policy == .required, !report.missing.isEmpty {
                refuseStart(
                    LoadError(
                        code: "sandbox-unavailable",
                        message: "The sandbox is required (--sandbox required), but its worker could not enforce: \(report.missing.map { "\($0.layer) (\($0.reason))" }.joined(separator: "; ")).",
                        hint: "Run on a Linux kernel with Landlock (ABI 6 or later), seccomp and user namespaces, or start the host with --sandbox best-effort to run with the layers available."),
                    sandbox: report)
            }
        }
        let instance: UnsafeMutableRawPointer?
        let library: ProviderLibrary
        do throws(LoadError) {
            library = try ProviderLibrary.load(path: libraryPath, sha256: sha256, confined: confined)
            instance = try InProcessConnection.openInstance(library: library, initJSON: initJSON)
        } catch {
            refuseStart(error)
        }
        let ready: JSONValue = sandbox == nil ? ["ok": true] : ["ok": true, "sandbox": report.json]
        sendFrame(tag: 0, ready.jsonBytes)

        let call = library.table.pointee.call!
        while true {
            switch reader.next(maximumPayload: Int(UInt32.max)) {
            case .frame(let tag, let message):
                message.withUnsafeBufferPointer { buffer in
                    if tag > 0 {
                        call(instance, buffer.baseAddress, buffer.count, workerReplyCallback, UnsafeMutableRawPointer(bitPattern: Int(tag)))
                    } else {
                        call(instance, buffer.baseAddress, buffer.count, nil, nil)
                    }
                }
            case .endOfStream, .timedOut:
                // The host is gone or closed the pipe: leave without running any provider code.
                _exit(0)
            case .malformed, .oversized:
                _exit(2)
            }
        }
    }
}

extension WorkerMain {
    /// Answers the start frame with `error` (and the sandbox's report, when it is the reason) and
    /// leaves: the host reads it as the provider's load error.
    fileprivate static func refuseStart(_ error: LoadError, sandbox: SandboxReport? = nil) -> Never {
        var answer: JSONObject = ["error": ["code": .string(error.code), "message": .string(error.message), "hint": .string(error.hint)]]
        if let sandbox { answer["sandbox"] = sandbox.json }
        sendFrame(tag: 0, JSONValue.object(answer).jsonBytes)
        _exit(0)
    }
}

/// Where replies go (the protocol descriptor), and a lock so frames never interleave.
private let workerOutputFD = Atomic<Int32>(-1)
private let workerOutputLock = Mutex(())
/// Where host requests go when the host gave a descriptor for them (-1: stdout), and its lock.
private let workerHostRequestFD = Atomic<Int32>(-1)
private let workerHostRequestLock = Mutex(())

private func sendFrame(tag: Int64, _ payload: [UInt8]) {
    payload.withUnsafeBytes { sendFrame(tag: tag, $0) }
}

private func sendFrame(tag: Int64, _ payload: UnsafeRawBufferPointer, hostRequest: Bool = false) {
    var header: [UInt8] = []
    WorkerFrame.appendHeader(tag: tag, payloadCount: payload.count, to: &header)
    let requestFD = hostRequest ? workerHostRequestFD.load(ordering: .acquiring) : -1
    let fd = requestFD >= 0 ? requestFD : workerOutputFD.load(ordering: .acquiring)
    // (One `writev`: the host's reader wakes once for the whole frame.)
    let ok = requestFD >= 0
        ? workerHostRequestLock.withLock { _ in header.withUnsafeBytes { writeAll(fd, $0, payload) } }
        : workerOutputLock.withLock { _ in header.withUnsafeBytes { writeAll(fd, $0, payload) } }
    if !ok { _exit(0) }  // the host is gone
}

/// The reply callback the worker gives the provider: the context is the request's tag. A host
/// request goes on the host-request descriptor when there is one (one over the host's limit goes
/// on stdout, where the host drops it as before, instead of breaking the channel).
private let workerReplyCallback: ctxp_reply_fn = { context, bytes, length in
    let tag = Int64(Int(bitPattern: context))
    guard tag > 0 else { return }
    let payload = UnsafeRawBufferPointer(start: bytes, count: length)
    let hostRequest = workerHostRequestFD.load(ordering: .relaxed) >= 0 && length > 0 && length <= RequestEvents.maximumHostRequestBytes
        && RequestEvents.isHostRequest(payload)
    sendFrame(tag: tag, payload, hostRequest: hostRequest)
}
