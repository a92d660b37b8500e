import ContextHost
import Testing

/// `WorkerInvocation` writes the worker's arguments and reads them back: one definition, so the
/// host and the worker cannot disagree (issue 36).
@Suite("Worker invocation")
struct WorkerInvocationTests {
    static func full() -> WorkerInvocation {
        var invocation = WorkerInvocation(libraryPath: "/opt/providers/libNote.so")
        invocation.sha256 = String(repeating: "ab", count: 32)
        invocation.parentPID = 4242
        invocation.providerID = "com.example.note"
        invocation.runtime = "swift-dynamic 6.3"
        invocation.allowOutsideLibraryPaths = true
        invocation.memoryLimit = 512 << 20
        invocation.hostRequestsFD = 3
        var sandbox = WorkerSandboxOptions()
        sandbox.policy = .required
        sandbox.readPaths = ["/data/a", "/data/b"]
        sandbox.writePaths = ["/cache"]
        sandbox.dataDirectory = "/state/note"
        sandbox.allowNetwork = true
        sandbox.disabledLayers = "seccomp"
        sandbox.addressSpaceLimit = 1 << 31
        sandbox.taskLimit = 64
        sandbox.fileLimit = 256
        sandbox.fileSizeLimit = 1 << 20
        invocation.sandbox = sandbox
        return invocation
    }

    @Test("what the host writes, the worker reads back, every field")
    func roundTrip() throws {
        let written = Self.full()
        let read = try #require(WorkerInvocation(parsing: written.arguments))
        #expect(read.arguments == written.arguments)
        #expect(read.libraryPath == written.libraryPath)
        #expect(read.parentPID == 4242)
        #expect(read.memoryLimit == 512 << 20)
        #expect(read.hostRequestsFD == 3)
        #expect(read.sandbox?.readPaths == ["/data/a", "/data/b"])
        #expect(read.sandbox?.taskLimit == 64)
        #expect(read.sandbox?.allowNetwork == true)
        #expect(read.sandbox?.allowExec == false)
        // The least: a library alone, no sandbox.
        let bare = try #require(WorkerInvocation(parsing: WorkerInvocation(libraryPath: "/x.so").arguments))
        #expect(bare.sandbox == nil && bare.sha256 == nil && bare.arguments == ["--library", "/x.so"])
    }

    @Test("anything else is refused, for ArgumentParser to explain", arguments: [
        ["--sha256", "ab"],  // no library
        ["--library"],  // no value
        ["--library", "/x.so", "--parent-pid", "nope"],
        ["--library", "/x.so", "--memory-limit", "--sandbox"],
        ["--library", "/x.so", "--sandbox", "loose"],
        ["--library", "/x.so", "--sandbox-limits", "1,2,3"],
        ["--library", "/x.so", "--help"],
        ["--library", "/x.so", "--host-requests-fd", "1"],  // not one of the standard descriptors
        ["--library", "/x.so", "--host-requests-fd", "three"],
    ])
    func refused(_ arguments: [String]) {
        #expect(WorkerInvocation(parsing: arguments) == nil)
    }
}
