// An app that embeds ContextHost, built as its own package by EmbeddingPackageTests: Note end to
// end through the public API only, in this process (`InProcessHost`) and through a spawned
// `context-host` (`ContextHostClient`).
//
//     EmbedNote in-process|client CONTEXT_HOST_EXECUTABLE LIBRARY_FOLDER MANIFEST_FOLDER
//
// Prints one line per step (`step key=value…`) and `done` at the end; exits 1 on the first error.
import ContextHost
import ContextHostClient
import ContextProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct Failure: Error, CustomStringConvertible {
    var description: String
}

/// Note end to end, through any session.
func attachNote(through host: some ContextHostSession) async throws {
    let hello = try await host.initialize(InitializeRequest(clientInfo: .init(name: "embed-note", version: "1.0"), locale: "en-US"))
    print("initialize server=\(hello.serverInfo.name) protocol=\(hello.protocolVersion)")

    let providers = try await host.providers()
    guard let note = providers.first(where: { $0.id == "com.contexthost.note" }), note.available == true else {
        throw Failure(description: "Note is not available: \(providers.map { $0.id ?? "?" })")
    }
    print("providers count=\(providers.count) note=\(note.title ?? "")")

    let composer = try await host.openComposer()
    let started = try await host.startCollection(providerId: "com.contexthost.note", composerId: composer.composerId)
    print("form step=\(started.form.stepId) fields=\(started.form.fields.map(\.id).joined(separator: ","))")

    let first = try await host.submit(sessionId: started.sessionId, values: ["title": "", "body": "Milk"])
    guard case .invalid(let fieldErrors, _) = first.outcome else { throw Failure(description: "expected a field error, got \(first.outcome)") }
    print("invalid title=\(fieldErrors["title"] ?? "-")")

    let second = try await host.submit(sessionId: started.sessionId, values: ["title": "Groceries", "body": "Milk, eggs and **bread**."])
    guard case .item(let item) = second.outcome else { throw Failure(description: "expected an item, got \(second.outcome)") }
    print("item displayName=\(item.displayName) attached=\(second.composer?.itemCount ?? 0)")

    let chip = try await host.preview(item)
    print("preview title=\(chip.title) subtitle=\(chip.subtitle ?? "")")
    let detail = try await host.detail(item)
    print("detail title=\(detail.title) blocks=\(detail.blocks.count)")
    let encoded = try await host.encode(item)
    print("encode representation=\(encoded.representation) bytes=\(encoded.data.count)")

    let sent = try await host.sendMessage(composerId: composer.composerId, text: "What can I cook?")
    print("send items=\(sent.message.contextItems.count) first=\(sent.message.contextItems.first?.displayName ?? "")")
}

let arguments = CommandLine.arguments
guard arguments.count == 5 else {
    print("usage: EmbedNote in-process|client CONTEXT_HOST_EXECUTABLE LIBRARY_FOLDER MANIFEST_FOLDER")
    exit(2)
}
let (mode, executable, libraries, manifests) = (arguments[1], arguments[2], arguments[3], arguments[4])
do {
    if mode == "in-process" {
        var configuration = HostConfiguration(manifestDirectories: [manifests], libraryDirectories: [libraries])
        configuration.isolation.workerExecutable = executable
        configuration.isolation.trustedManifestDirectories = [manifests]
        let host = try InProcessHost(configuration: configuration)
        try await attachNote(through: host)
        await host.close()
    } else {
        let host = try ContextHostClient(
            executable: executable,
            arguments: ["serve", "--manifests", manifests, "--library-path", libraries, "--no-state", "--no-installed"])
        try await attachNote(through: host)
        await host.close()
    }
    print("done")
} catch {
    print("error \(error)")
    exit(1)
}
