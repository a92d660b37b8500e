// swift-tools-version: 6.1
import PackageDescription

/// Linker settings for the bundled Swift provider libraries (Linux, GNU-style linkers): export only
/// the entry symbol (Providers/provider-exports.map) and drop unreachable sections (docs/sdk.md §1;
/// the Swift metadata of the SDK's types keeps the wire core, ContextWire, whole).
let providerLinkerSettings: [LinkerSetting] = [
    .unsafeFlags(
        ["-Xlinker", "--version-script=\(Context.packageDirectory)/Providers/provider-exports.map", "-Xlinker", "--gc-sections"],
        .when(platforms: [.linux])),
]

/// ContextHost: a host for context providers (modules and their arrows: docs/architecture.md).
///
/// Bundled providers are `.dynamic` library products, so `swift build` leaves
/// `lib<Name>Provider.so` next to the `context-host` executable, where the host
/// finds them with no flags.
let package = Package(
    name: "ContextHost",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "context-host", targets: ["context-host"]),
        .library(name: "ContextHost", targets: ["ContextHost"]),
        .library(name: "ContextProtocol", targets: ["ContextProtocol"]),
        .library(name: "ContextHostClient", targets: ["ContextHostClient"]),
        .library(name: "ContextProviderKit", targets: ["ContextProviderKit"]),
        .library(name: "ContextConformance", targets: ["ContextConformance"]),
        .library(name: "NoteProvider", type: .dynamic, targets: ["NoteProvider"]),
        .library(name: "LocationProvider", type: .dynamic, targets: ["LocationProvider"]),
        .library(name: "CalendarProvider", type: .dynamic, targets: ["CalendarProvider"]),
        .library(name: "StockQuoteProvider", type: .dynamic, targets: ["StockQuoteProvider"]),
        .library(name: "HealthMetricProvider", type: .dynamic, targets: ["HealthMetricProvider"]),
        .library(name: "DeviceInfoProvider", type: .dynamic, targets: ["DeviceInfoProvider"]),
        // Test fixtures: providers that misbehave on purpose.
        .library(name: "FixtureProviders", type: .dynamic, targets: ["FixtureProviders"]),
        .library(name: "FixtureOldABIProvider", type: .dynamic, targets: ["FixtureOldABIProvider"]),
        .library(name: "FixtureMisbehavingProvider", type: .dynamic, targets: ["FixtureMisbehavingProvider"]),
        .library(name: "FixtureConformanceProvider", type: .dynamic, targets: ["FixtureConformanceProvider"]),
        .library(name: "FixtureHostileProvider", type: .dynamic, targets: ["FixtureHostileProvider"]),
        .library(name: "FixtureFetchProvider", type: .dynamic, targets: ["FixtureFetchProvider"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // `serve --listen` only (ContextWeb): HTTP/1 and WebSocket over SwiftNIO. The default
        // traits (swift-configuration, full Foundation) are off: nothing here needs them.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // The host's HTTPS broker (docs/security.md §egress): linked only by ContextNetwork, which
        // only the CLI links; the embeddable ContextHost gets a seam (HostConfiguration.fetcher).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // (AsyncHTTPClient's and Hummingbird's own dependencies, named so ContextNetwork and ContextWeb may import them.)
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.30.0"),
    ],
    targets: [
        // The C ABI between host and provider binaries.
        .target(name: "CContextProvider"),
        // POSIX helpers Swift cannot call directly (spawn, prctl, rlimit) for worker processes, and
        // the worker sandbox (namespaces, Landlock, seccomp; docs/security.md).
        .target(name: "CHostSupport", dependencies: ["CSeccomp"], linkerSettings: [.linkedLibrary("seccomp", .when(platforms: [.linux]))]),
        // System libseccomp (apt: libseccomp-dev), for the worker's seccomp filter.
        .systemLibrary(
            name: "CSeccomp",
            pkgConfig: "libseccomp",
            providers: [.apt(["libseccomp-dev"])]
        ),
        // System libyaml (apt: libyaml-dev).
        .systemLibrary(
            name: "CYAML",
            pkgConfig: "yaml-0.1",
            providers: [.apt(["libyaml-dev"]), .brew(["libyaml"])]
        ),
        // System libsodium (apt: libsodium-dev), for package signatures (minisign format, Ed25519).
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]
        ),
        // System zlib (apt: zlib1g-dev), for the gzip layer of `.ctxp` bundles.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // The wire core a provider links: JSON, the ctxui values, error codes and the host <->
        // provider messages. No dependencies.
        .target(name: "ContextWire"),
        // The client side: one type per client <-> host method, the registry, the session API and
        // OpenRPC, over the wire core it re-exports. No system dependencies, so any Swift app can
        // use it alone; kept out of provider libraries (docs/sdk.md §1: their size).
        .target(name: "ContextProtocol", dependencies: ["ContextWire"]),
        // The typed client of a `context-host` child process (ContextProtocol's session API over pipes).
        .target(name: "ContextHostClient", dependencies: ["ContextProtocol"]),
        // The SDK provider authors write against (re-exports the wire core, not the client side).
        .target(name: "ContextProviderKit", dependencies: ["CContextProvider", "ContextWire"]),
        // The embeddable host. It reads the lock file and checks installed files' hashes at load,
        // but links neither libsodium nor zlib: making, verifying and installing bundles is
        // ContextPackages (EmbeddingPackageTests checks an embedding app's executable).
        .target(
            name: "ContextHost",
            dependencies: [
                "CContextProvider", "CYAML", "ContextProtocol", "ContextProviderKit", "CHostSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Provider bundles (docs/packages.md): the archive (tar, gzip), minisign signing and key
        // generation, trusted keys, the packager, and install/upgrade/rollback in the store, for
        // the CLI. Depends on the host (the install probe loads the provider in a worker); the
        // host never depends on it.
        .target(
            name: "ContextPackages",
            dependencies: [
                "ContextHost", "ContextProviderKit", "CSodium", "CZlib",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The Secret Service keyring (libsecret-1 loaded with dlopen at run time: no link-time
        // dependency), where the secret store keeps its key when a session has one.
        .target(name: "CSecretService"),
        // The CLI's secret store (libsodium secretbox; its key in the Secret Service or a 0600 file) and HTTPS broker
        // (AsyncHTTPClient): the implementations behind HostConfiguration.secrets and .fetcher.
        // The embeddable host never depends on it.
        .target(
            name: "ContextNetwork",
            dependencies: [
                "ContextHost", "ContextProtocol", "CSodium", "CSecretService",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The provider conformance checks, usable from the CLI and from authors' own tests.
        .target(
            name: "ContextConformance",
            dependencies: [
                "ContextHost", "ContextProviderKit", "CHostSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The reference clients (`context-host compose`, `gallery`) over ContextHostClient, and the
        // ctxui text and HTML renderers.
        .target(name: "ContextClient", dependencies: ["ContextProviderKit", "ContextProtocol", "ContextHostClient"]),
        // `context-host mcp`: the providers as an MCP server, over the in-process host.
        .target(name: "ContextMCP", dependencies: ["ContextHost", "ContextProtocol", .product(name: "Logging", package: "swift-log")]),
        // `serve --listen`: the protocol over WebSocket (Hummingbird), each connection its own
        // session (docs/web.md). Only the CLI links it: neither the embeddable host nor the
        // stdio path (`serve`, `worker`) reaches it.
        .target(
            name: "ContextWeb",
            dependencies: [
                "ContextHost",
                "ContextMCP",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "context-host",
            dependencies: [
                "ContextHost",
                "ContextWeb",
                "ContextPackages",
                "ContextNetwork",
                "ContextConformance",
                "ContextClient",
                "ContextMCP",
                "ContextProtocol",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The C scaffold's vendored headers: links to the one copy of each, embedded at build time.
            resources: [.embedInCode("New/Headers/context_provider.h"), .embedInCode("New/Headers/ctxp_json.h")]
        ),
        // Bundled providers.
        .target(name: "NoteProvider", dependencies: ["ContextProviderKit"], path: "Providers/Note", linkerSettings: providerLinkerSettings),
        // What the bundled providers share: whole-file reads, the system's zoneinfo (TZif, POSIX TZ rules).
        .target(name: "ProviderSupport", dependencies: ["ContextProviderKit"], path: "Providers/Support"),
        .target(name: "LocationProvider", dependencies: ["ContextProviderKit", "ProviderSupport"], path: "Providers/Location", linkerSettings: providerLinkerSettings),
        .target(name: "CalendarProvider", dependencies: ["ContextProviderKit", "ProviderSupport"], path: "Providers/Calendar", linkerSettings: providerLinkerSettings),
        .target(name: "StockQuoteProvider", dependencies: ["ContextProviderKit", "ProviderSupport"], path: "Providers/StockQuote", linkerSettings: providerLinkerSettings),
        .target(name: "HealthMetricProvider", dependencies: ["ContextProviderKit", "ProviderSupport"], path: "Providers/HealthMetric", linkerSettings: providerLinkerSettings),
        // Written in plain C against context_provider.h alone (also builds with its own Makefile).
        .target(name: "DeviceInfoProvider", dependencies: ["CContextProvider"], path: "Providers/DeviceInfo", exclude: ["Makefile"]),
        // Benchmarks (run on demand; see Benchmarks/README.md).
        .executableTarget(name: "discovery-bench", dependencies: ["ContextHost"], path: "Benchmarks/DiscoveryBench"),
        .executableTarget(name: "location-bench", dependencies: ["ContextHostTestSupport", "ProviderSupport"], path: "Benchmarks/LocationBench", exclude: ["prepare.sh"]),
        .executableTarget(name: "calendar-bench", dependencies: ["ContextHostTestSupport"], path: "Benchmarks/CalendarBench"),
        .executableTarget(name: "caldav-bench", dependencies: ["CalendarProvider", "ContextHostTestSupport"], path: "Benchmarks/CalDAVBench"),
        .executableTarget(name: "egress-bench", dependencies: ["ContextHost", "ContextNetwork", "ContextHostTestSupport"], path: "Benchmarks/EgressBench"),
        .executableTarget(name: "health-bench", dependencies: ["ContextHostTestSupport"], path: "Benchmarks/HealthBench"),
        .executableTarget(name: "embed-bench", dependencies: ["ContextHost", "ContextHostClient"], path: "Benchmarks/EmbedBench"),
        .executableTarget(name: "composer-bench", dependencies: ["ContextProviderKit"], path: "Benchmarks/ComposerBench"),
        // Fuzz targets (Fuzz/run.sh builds them with -sanitize=fuzzer -DFUZZING; a normal build makes
        // replay drivers that run saved inputs once, without the fuzzer runtime).
        // What the fuzz targets share: libFuzzer's driver entry and the replay of saved inputs.
        .target(name: "FuzzSupport", path: "Fuzz/FuzzSupport"),
        .executableTarget(name: "framing-fuzzer", dependencies: ["FuzzSupport", "ContextHost", "ContextProviderKit", .product(name: "Logging", package: "swift-log")], path: "Fuzz/FramingFuzzer"),
        .executableTarget(name: "manifest-fuzzer", dependencies: ["FuzzSupport", "ContextHost"], path: "Fuzz/ManifestFuzzer"),
        .executableTarget(name: "calendar-fuzzer", dependencies: ["FuzzSupport", "CalendarProvider"], path: "Fuzz/CalendarFuzzer"),
        .executableTarget(name: "caldav-xml-fuzzer", dependencies: ["FuzzSupport", "CalendarProvider"], path: "Fuzz/CalDAVXMLFuzzer"),
        .executableTarget(name: "health-export-fuzzer", dependencies: ["FuzzSupport", "HealthMetricProvider"], path: "Fuzz/HealthExportFuzzer"),
        .executableTarget(name: "health-csv-fuzzer", dependencies: ["FuzzSupport", "HealthMetricProvider"], path: "Fuzz/HealthCSVFuzzer"),
        .executableTarget(name: "price-csv-fuzzer", dependencies: ["FuzzSupport", "StockQuoteProvider"], path: "Fuzz/PriceCSVFuzzer"),
        .executableTarget(name: "gazetteer-fuzzer", dependencies: ["FuzzSupport", "LocationProvider"], path: "Fuzz/GazetteerFuzzer"),
        .executableTarget(name: "coordinate-fuzzer", dependencies: ["FuzzSupport", "LocationProvider", "ContextProviderKit"], path: "Fuzz/CoordinateFuzzer"),
        .executableTarget(name: "sdk-json-fuzzer", dependencies: ["FuzzSupport", "ContextProviderKit"], path: "Fuzz/SDKJSONFuzzer"),
        .executableTarget(name: "ctxui-fuzzer", dependencies: ["FuzzSupport", "ContextProviderKit"], path: "Fuzz/CtxuiFuzzer"),
        .executableTarget(name: "elf-fuzzer", dependencies: ["FuzzSupport", "ContextHost"], path: "Fuzz/ELFFuzzer"),
        .executableTarget(name: "signature-fuzzer", dependencies: ["FuzzSupport", "ContextHost", "ContextPackages"], path: "Fuzz/SignatureFuzzer"),
        .executableTarget(name: "protocol-fuzzer", dependencies: ["FuzzSupport", "ContextProtocol"], path: "Fuzz/ProtocolFuzzer"),
        .executableTarget(name: "bundle-fuzzer", dependencies: ["FuzzSupport", "ContextHost", "ContextPackages"], path: "Fuzz/BundleFuzzer"),
        // Fixture providers used by the tests.
        .target(name: "FixtureProviders", dependencies: ["ContextProviderKit"], path: "Tests/Fixtures/FixtureProviders"),
        .target(name: "FixtureOldABIProvider", path: "Tests/Fixtures/FixtureOldABIProvider"),
        .target(name: "FixtureMisbehavingProvider", dependencies: ["CContextProvider"], path: "Tests/Fixtures/FixtureMisbehavingProvider"),
        .target(name: "FixtureConformanceProvider", dependencies: ["ContextProviderKit"], path: "Tests/Fixtures/FixtureConformanceProvider"),
        // Tries every sandbox escape of issue 25, one per request (Tests/IntegrationTests/SandboxTests.swift).
        .target(name: "FixtureHostileProvider", dependencies: ["CContextProvider"], path: "Tests/Fixtures/FixtureHostileProvider"),
        // Fetches through the host's broker and opens raw sockets (Tests/IntegrationTests/EgressTests.swift).
        .target(name: "FixtureFetchProvider", dependencies: ["ContextProviderKit"], path: "Tests/Fixtures/FixtureFetchProvider"),
        // What the tests share: the live and in-memory test clients (TestClient), spawned hosts, fixtures.
        .target(
            name: "ContextHostTestSupport",
            dependencies: ["ContextHost", "ContextProviderKit", .product(name: "Logging", package: "swift-log")],
            path: "Tests/ContextHostTestSupport"),
        // The Calendar provider's occurrences as JSON, for the oracle comparison of the real-world corpus.
        .executableTarget(name: "calendar-expand", dependencies: ["CalendarProvider"], path: "Tests/Tools/CalendarExpand"),
        .testTarget(name: "ContextProtocolTests", dependencies: ["ContextProtocol", "ContextWire"]),
        .testTarget(name: "ContextProviderKitTests", dependencies: ["ContextProviderKit", "ContextProtocol"]),
        .testTarget(name: "ContextClientTests", dependencies: ["ContextClient", "ContextProviderKit"]),
        .testTarget(name: "ContextHostTests", dependencies: ["ContextHost", "ContextHostTestSupport"]),
        .testTarget(name: "ContextPackagesTests", dependencies: ["ContextPackages", "ContextHost", "ContextHostTestSupport"]),
        .testTarget(
            name: "IntegrationTests", dependencies: ["ContextHostTestSupport", "ContextHost", "ContextPackages", "ContextHostClient", "ContextNetwork", "CHostSupport"],
            exclude: ["Golden"]),
        .testTarget(name: "ContextNetworkTests", dependencies: ["ContextNetwork", "ContextHost", "ContextHostTestSupport"]),
        // The MCP bridge: its names, form mapping and item store (unit tests), and the bridge through
        // the real binary and the official MCP Python SDK.
        .testTarget(
            name: "ContextMCPTests",
            dependencies: [
                "ContextMCP", "ContextHost", "ContextHostTestSupport", "ContextProviderKit",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "ContextWebTests",
            dependencies: [
                "ContextWeb", "ContextHost", "ContextMCP", "ContextProtocol", "ContextHostTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(name: "ContextConformanceTests", dependencies: ["ContextConformance", "ContextHostTestSupport"]),
        // Bundled providers, tested through their real .so files.
        .testTarget(name: "ProviderTests", dependencies: ["ContextHostTestSupport"]),
        .testTarget(name: "ProviderSupportTests", dependencies: ["ProviderSupport"]),
        // The Calendar provider's CalDAV client against a real Radicale server, and its XML reader
        // (the provider module itself: its network transport is injected, a tiny test-only HTTP client here).
        .testTarget(name: "CalDAVTests", dependencies: ["CalendarProvider", "ContextHostTestSupport"]),
    ]
)
