import ContextHost

/// The file templates of `context-host new provider`. Placeholders are `{{…}}`, filled by
/// `fill(_:_:)`; templates are plain Swift strings so the binary is self-contained.
enum ScaffoldTemplates {
    /// Replaces `{{Name}}`, `{{Product}}`, `{{slug}}`, `{{snake}}`, `{{Title}}`, `{{id}}`, `{{host}}`.
    static func fill(_ template: String, _ p: ScaffoldParameters) -> String {
        template
            .replacingAll("{{Product}}", with: p.names.product)
            .replacingAll("{{Name}}", with: p.names.pascal)
            .replacingAll("{{slug}}", with: p.names.slug)
            .replacingAll("{{snake}}", with: p.names.snake)
            .replacingAll("{{Title}}", with: p.names.title)
            .replacingAll("{{id}}", with: p.id)
            .replacingAll("{{host}}", with: p.hostExecutable)
            .replacingAll("{{schemaComment}}", with: schemaComment(p))
    }

    /// The editor hint naming the manifest JSON Schema of the checkout in use, or a pointer to
    /// the docs when no checkout is known.
    static func schemaComment(_ p: ScaffoldParameters) -> String {
        if let kit = p.kitPath {
            return "# yaml-language-server: $schema=\(kit)/docs/manifest.schema.json\n"
        }
        return "# Editors validate this file with docs/manifest.schema.json from the ContextHost repository.\n"
    }

    /// The shared-library suffix of this platform (`so` on Linux, `dylib` on macOS).
    static var libraryExtension: String {
        #if os(macOS)
        "dylib"
        #else
        "so"
        #endif
    }

    // MARK: Swift

    /// The Swift scaffold: a SwiftPM package producing `lib<Name>Provider.so`.
    static func swiftPackage(_ p: ScaffoldParameters) -> [ScaffoldFile] {
        // A Swift scaffold always depends on a local ContextHost checkout (`NewProvider` refuses to
        // run without one). SwiftPM names a path dependency after its folder's last component.
        let kit = p.kitPath ?? "/path/to/ContextHost"
        let packageIdentity = String(kit.split(separator: "/").last ?? "ContextHost").lowercased()
        let dependency = """
            // ContextProviderKit from a local ContextHost checkout. To depend on a published
                    // release instead, use `.package(url: <the ContextHost repository URL>, from: "0.1.0")`
                    // and change `package: "\(packageIdentity)"` below to the repository's name.
                    .package(path: "\(kit)"),
            """
        let package = fill(swiftPackageManifest, p)
            .replacingAll("{{dependency}}", with: dependency)
            .replacingAll("{{packageIdentity}}", with: packageIdentity)
        return [
            ScaffoldFile(path: "Package.swift", contents: package),
            ScaffoldFile(path: "Sources/\(p.names.product)/\(p.names.product).swift", contents: fill(swiftSource, p)),
            ScaffoldFile(path: "Tests/\(p.names.product)Tests/\(p.names.product)Tests.swift", contents: fill(swiftTest, p)),
            ScaffoldFile(path: "\(p.names.slug).yaml", contents: fill(manifest(library: ".build/debug/lib\(p.names.product).\(libraryExtension)", collection: "form", swift: true), p)),
            ScaffoldFile(path: "README.md", contents: fill(swiftReadme, p)),
            ScaffoldFile(path: ".gitignore", contents: ".build/\n.swiftpm/\n*.so\n*.dylib\n"),
        ]
    }

    static let swiftPackageManifest = #"""
// swift-tools-version: 6.0
import PackageDescription

/// {{Title}}: a context provider for ContextHost. `swift build` leaves
/// `.build/debug/lib{{Product}}.so`, which {{slug}}.yaml names.
let package = Package(
    name: "{{Product}}",
    platforms: [.macOS(.v15)],
    products: [
        // A dynamic library: the host loads it with dlopen.
        .library(name: "{{Product}}", type: .dynamic, targets: ["{{Product}}"]),
    ],
    dependencies: [
        {{dependency}}
    ],
    targets: [
        .target(
            name: "{{Product}}",
            dependencies: [.product(name: "ContextProviderKit", package: "{{packageIdentity}}")]
        ),
        .testTarget(name: "{{Product}}Tests", dependencies: ["{{Product}}"]),
    ]
)

"""#

    static let swiftSource = #"""
import ContextProviderKit

/// {{Title}}: the user types a short text in a form; the provider turns it into an item the chat
/// can show (chip and detail) and send (encodings).
///
/// Items have type `{{snake}}` and content `{"text": String, "important": Bool}`. Keep everything
/// needed to draw an item in its content: the host stores items as plain JSON and hands them back,
/// so the provider stays stateless.
public struct {{Product}}: ContextProvider {
    /// Must match the manifest ({{slug}}.yaml): id and version are checked by conformance.
    public static let metadata = ProviderMetadata(
        id: "{{id}}", title: "{{Title}}", version: "0.1.0", iconName: "text.bubble")

    /// The views below are computed from the item alone, so they may run inline on the host's
    /// thread. Never list methods that read files or the network here.
    public static var immediateMethods: ProviderMethods { .itemViews }

    /// Sample input for `context-host conformance`: one it must accept, one it must refuse.
    public static var conformanceSamples: [CollectorSample] {
        [
            CollectorSample(name: "hello", values: ["text": "Hello, world", "important": true]),
            CollectorSample(name: "no text", values: ["important": false], expectsItem: false),
        ]
    }

    let context: ProviderContext

    /// Runs when the host opens the provider. Read settings (`context.settings`) here and throw
    /// `ProviderError(message, hint:)` if they are unusable; load anything big lazily instead.
    public init(context: ProviderContext) throws {
        self.context = context
    }

    // MARK: Collector (the form the host draws)

    static let form = ContextForm(
        stepId: "compose", title: "{{Title}}", submitLabel: "Attach",
        fields: [
            .text(id: "text", label: "Text", required: true, maxLength: 280, placeholder: "What should the chat know?"),
            .toggle(id: "important", label: "Important"),
        ])

    public func startCollection(sessionId: String) async throws -> ContextForm { Self.form }

    public func submit(stepId: String, values: FormValues, sessionId: String) async throws -> SubmitOutcome {
        // The SDK has already checked the values against `form` (required, lengths, types).
        let text = values.string("text") ?? ""
        let important = values.bool("important") ?? false
        return .item(context.makeItem(
            type: "{{snake}}", displayName: String(text.prefix(60)),
            content: ["text": .string(text), "important": .bool(important)]))
    }

    // MARK: Views (chip, detail document, description, encodings)

    public func preview(_ item: ContextItem) async throws -> ContextChip {
        let entry = try Entry(item)
        return ContextChip(
            icon: Self.metadata.iconName, title: item.displayName,
            subtitle: entry.important ? "Important" : "{{Title}}", tone: entry.important ? .warning : .neutral)
    }

    public func detail(_ item: ContextItem) async throws -> ContextDetail {
        let entry = try Entry(item)
        return ContextDetail(title: item.displayName, blocks: [
            .text(entry.text),
            .facts([Fact(label: "Important", value: entry.important ? "yes" : "no")]),
        ])
    }

    public func describe(_ item: ContextItem) async throws -> String {
        let entry = try Entry(item)
        return entry.important ? "Important: \(entry.text)" : entry.text
    }

    public func encode(_ item: ContextItem, representation: String?) async throws -> EncodedItem {
        let entry = try Entry(item)
        switch representation ?? "json" {
        case "json": return .json(item.content)
        case "text": return .text(entry.text)
        default: throw ProviderError.unknownRepresentation(representation ?? "", allowed: ["json", "text"])
        }
    }
}

/// An item's content, read defensively: a malformed item answers -32602 naming the member.
struct Entry {
    var text: String
    var important: Bool

    init(_ item: ContextItem) throws {
        let reader = try JSONObjectReader(item.content, path: "params.item.content")
        text = try reader.string("text")
        important = try reader.optionalBool("important") ?? false
    }
}

/// The library's entry point: the one symbol the host looks up (context_provider.h).
@_cdecl("context_provider_entry_v1")
public func contextProviderEntry() -> UnsafeRawPointer {
    ContextProviderExport.entry(for: {{Product}}.self)
}

"""#

    static let swiftTest = #"""
import ContextProviderKit
import Testing
@testable import {{Product}}

/// Unit tests call the provider directly. For the full check through the real library, run
/// `context-host conformance {{slug}}.yaml` (see README.md).
@Suite struct {{Product}}Tests {
    let provider = try! {{Product}}(context: ProviderContext(providerId: "{{id}}"))

    @Test func submittingTheFormMakesAnItem() async throws {
        let outcome = try await provider.submit(
            stepId: "compose", values: ["text": "Hello", "important": true], sessionId: "s1")
        guard case .item(let item) = outcome else {
            Issue.record("expected an item, got \(outcome)")
            return
        }
        #expect(item.providerId == "{{id}}")
        #expect(try await provider.describe(item) == "Important: Hello")
        #expect(try await provider.preview(item).title == "Hello")
    }

    @Test func malformedContentIsAnError() async throws {
        let item = ContextItem(providerId: "{{id}}", type: "{{snake}}", displayName: "x", content: ["text": 42])
        await #expect(throws: (any Error).self) { try await provider.preview(item) }
    }
}

"""#

    static let swiftReadme = #"""
# {{Title}} provider

A context provider for ContextHost, written in Swift
with `ContextProviderKit`. It was generated by `context-host new provider`.

## The three commands

```sh
swift build -Xswiftc -static-stdlib               # 1. build .build/debug/lib{{Product}}.so
{{host}} list --manifests .                      # 2. load it in a host (shows it 'loaded')
{{host}} conformance {{slug}}.yaml               # 3. run the conformance checks
```

(`{{host}}` is the `context-host` that generated this package; any `context-host` on your `PATH`
works the same.) To serve chat clients with this provider next to the bundled ones, run
`context-host serve --manifests . --manifests /path/to/ContextHost/manifests`.
`swift test` runs the unit tests in `Tests/`.

## Why `-Xswiftc -static-stdlib`

Swift has no stable ABI on Linux: a provider that links the Swift runtime dynamically
(`libswiftCore.so` …) binds to whatever runtime the host process has, and a provider built with
another Swift version can misbehave in ways nobody can diagnose. Built with `-static-stdlib`, the
library carries its own runtime (symbols hidden, about 9 MB stripped) and runs in any host, next
to providers built with other toolchains; `context-host package` records it as
`runtime: swift-static`. (SwiftPM's `--static-swift-stdlib` does not apply to dynamic library
products; `-Xswiftc -static-stdlib` does.) Without it the bundle says `runtime: swift-dynamic` with
your Swift version, and hosts of any other version refuse it with `swift-version-mismatch`.

## Files

| file | what |
|---|---|
| `Sources/{{Product}}/{{Product}}.swift` | the provider: form, chip, detail, description, encodings |
| `{{slug}}.yaml` | the manifest the host reads; every field is explained in it |
| `Package.swift` | depends on `ContextProviderKit`; builds a dynamic library |
| `Tests/{{Product}}Tests/` | unit tests |

## Next steps

- Change the form, the item content and the views in the source file, then run the three
  commands again. Conformance tells you what a host will refuse, and how to fix it.
- Release build: `swift build -c release -Xswiftc -static-stdlib`, and point `library:` at
  `.build/release/lib{{Product}}.so` (on macOS the library ends in `.dylib`).
- Sharing: make a signing key once (`{{host}} keygen --output mykey`; publish `mykey.pub`), then
  `{{host}} package {{slug}}.yaml --sign mykey.key` writes one signed file, `NAME-VERSION.ctxp`, and its signature `.ctxp.minisig` (publish both).
  Users install it with `context-host install NAME-VERSION.ctxp --trust-key <the RW… line of
  mykey.pub>` the first time, and `context-host upgrade` later. Hosts run third-party providers
  in a sandboxed worker process. See `docs/packages.md` in the ContextHost repository.
- Author guide: `docs/writing-a-provider.md` in the ContextHost repository.

"""#
}
