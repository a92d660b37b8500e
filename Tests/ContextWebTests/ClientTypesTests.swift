import ContextHostTestSupport
import Foundation
import Testing

/// The browser client's types, checked by TypeScript's own compiler (Debian's `node-typescript`;
/// .ci/run installs it): web/context-host-protocol.d.ts (generated from docs/openrpc.json by
/// scripts/gen-client-types.py), the JSDoc of web/context-host-client.js (`checkJs`), and
/// Tests/Fixtures/web/client-usage.ts, a web app's use of both whose `@ts-expect-error` lines are
/// misuses the types must refuse (so types that decayed to `any` fail too). No skip: without
/// `tsc` the test fails and says how to install it.
@Suite("browser client types (tsc --strict)")
struct ClientTypesTests {
    static let root = BuildProducts.packageRoot
    static let flags = "--noEmit --strict --target es2022 --module es2022 --moduleResolution node --allowJs --checkJs --pretty false"

    static func tsc() throws -> String {
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let path = "\(folder)/tsc"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        throw MissingCompiler()
    }

    struct MissingCompiler: Error, CustomStringConvertible {
        var description: String {
            "tsc (TypeScript's compiler) is not on PATH: install it with `apt-get install node-typescript` (.ci/run does)"
        }
    }

    @Test("the .d.ts, the client's JSDoc and a typed use of both compile with tsc --strict")
    func clientTypes() throws {
        let command = "'\(try Self.tsc())' \(Self.flags) web/context-host-protocol.d.ts web/context-host-client.js Tests/Fixtures/web/client-usage.ts"
        let result = try Shell.run(command, in: Self.root, timeout: 120)
        #expect(result.status == 0 && result.output.isEmpty, "tsc found errors:\n\(result.output)")
    }

    /// Control: the same compiler and flags refuse a program with a type error, and a typed use
    /// of the client that calls a method the protocol lacks (the check is real, not a no-op).
    @Test("control: tsc with these flags fails on a type error and on a method the protocol lacks")
    func compilerRefusesErrors() throws {
        let folder = NSTemporaryDirectory() + "client-types-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder + "/web", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for file in ["web/context-host-protocol.d.ts", "web/context-host-client.js"] {
            try FileManager.default.copyItem(atPath: Self.root + "/" + file, toPath: folder + "/" + file)
        }
        try """
            import { ContextHostClient } from "./web/context-host-client.js";
            export async function wrong(host: ContextHostClient): Promise<number> {
              const { providers } = await host.call("providers/lst", {});
              const count: number = "three";
              return providers.length + count;
            }
            """.write(toFile: folder + "/wrong.ts", atomically: true, encoding: .utf8)
        let result = try Shell.run(
            "'\(try Self.tsc())' \(Self.flags) web/context-host-protocol.d.ts web/context-host-client.js wrong.ts", in: folder, timeout: 120)
        #expect(result.status != 0, "\(result.output)")
        #expect(result.output.contains("wrong.ts(3,") && result.output.contains("providers/lst"), "the unknown method: \(result.output)")
        #expect(result.output.contains("wrong.ts(4,") && result.output.contains("TS2322"), "the string in a number: \(result.output)")
    }
}
