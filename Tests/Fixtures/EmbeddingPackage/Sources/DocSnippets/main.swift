// Runs docs/embedding.md's smaller snippets, built as part of the embedding package by
// EmbeddingPackageTests: §1's events example and §3's `HostCore` example. The test copies each
// block from the page, exactly as shown, into a function of `Snippets.swift` beside this file
// (`eventsExample(host:healthItem:)`, `coreExample(configuration:)`), whose parameters are the
// values the block names but does not make; this file makes those values and calls them.
//
//     DocSnippets CONTEXT_HOST_EXECUTABLE LIBRARY_FOLDER MANIFEST_FOLDER
//
// Prints one line per snippet run and `done` at the end; exits 1 on the first error.
import ContextHost
import ContextProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct Failure: Error, CustomStringConvertible {
    var description: String
}

let arguments = CommandLine.arguments
guard arguments.count == 4 else {
    print("usage: DocSnippets CONTEXT_HOST_EXECUTABLE LIBRARY_FOLDER MANIFEST_FOLDER")
    exit(2)
}
var configuration = HostConfiguration(manifestDirectories: [arguments[3]], libraryDirectories: [arguments[2]], stateDirectory: nil)
configuration.isolation.workerExecutable = arguments[1]
configuration.isolation.trustedManifestDirectories = [arguments[3]]
do {
    // §1: the events of a session, while it answers a request sent with a progress token. Any
    // item will do for the page's `healthItem`: a Note made here.
    let host = try InProcessHost(configuration: configuration)
    _ = try await host.initialize(InitializeRequest(clientInfo: .init(name: "doc-snippets", version: "1.0"), protocolVersions: [2, 1]))
    let composer = try await host.openComposer()
    let started = try await host.startCollection(providerId: "com.contexthost.note", composerId: composer.composerId)
    let submitted = try await host.submit(sessionId: started.sessionId, values: ["title": "Groceries", "body": "Milk"])
    guard case .item(let item) = submitted.outcome else { throw Failure(description: "expected an item, got \(submitted.outcome)") }
    try await eventsExample(host: host, healthItem: item)
    print("events example ran")
    await host.close()

    // §3: two sessions of one HostCore.
    try await coreExample(configuration: configuration)
    print("core example ran")
    print("done")
} catch {
    print("error \(error)")
    exit(1)
}
