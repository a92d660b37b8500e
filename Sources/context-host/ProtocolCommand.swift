import ArgumentParser
import ContextProtocol

extension ContextHostCommand {
    /// `protocol --openrpc [--provider]`: prints the machine-readable protocol.
    struct ProtocolDocument: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "protocol",
            abstract: "Print the protocol as an OpenRPC 1.3.2 document.",
            discussion: "Built from the typed messages in ContextProtocol; docs/openrpc.json and docs/openrpc-provider.json are its output: context-host protocol --openrpc > docs/openrpc.json")

        @Flag(help: "Print the OpenRPC document (the only format so far).")
        var openrpc = false

        @Flag(help: "The host → provider protocol instead of the client's.")
        var provider = false

        func validate() throws {
            guard openrpc else { throw ValidationError("Say which format: --openrpc.") }
        }

        func run() throws {
            print(OpenRPCDocument.prettyPrinted(provider ? OpenRPCDocument.provider : OpenRPCDocument.client), terminator: "")
        }
    }
}
