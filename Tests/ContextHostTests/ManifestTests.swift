import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

@testable import ContextHost

/// A diagnostic reduced to what the tests pin down exactly.
struct ManifestSpot: Equatable, CustomStringConvertible {
    var line: Int
    var column: Int
    var code: ManifestErrorCode
    var path: String

    init(_ line: Int, _ column: Int, _ code: ManifestErrorCode, _ path: String) {
        self.line = line
        self.column = column
        self.code = code
        self.path = path
    }

    init(_ diagnostic: ManifestDiagnostic) {
        self.init(diagnostic.line, diagnostic.column, diagnostic.code, diagnostic.fieldPath)
    }

    var description: String { "\(line):\(column) [\(code)] \(path)" }
}

/// Everything after the first line of a valid manifest; tests splice broken lines into it.
fileprivate let validBody = """
    manifestVersion: 1
    id: com.example.note
    title: Note
    iconName: note.text
    version: 1.0.0
    library: libNoteProvider.so
    """

fileprivate func diagnostics(_ yaml: String, file: String = "manifests/test.yaml") -> [ManifestDiagnostic] {
    do {
        _ = try Manifest.parse(yaml, file: file, directory: "/nonexistent")
        return []
    } catch {
        return error.diagnostics
    }
}

fileprivate func spots(_ yaml: String) -> [ManifestSpot] {
    diagnostics(yaml).map(ManifestSpot.init)
}

fileprivate func parsed(_ yaml: String, directory: String = "/srv/manifests") throws -> Manifest {
    do {
        return try Manifest.parse(yaml, file: "manifests/test.yaml", directory: directory)
    } catch {
        Issue.record("unexpected rejection:\n\(error)")
        throw error
    }
}

/// A temporary folder removed at deinit.
final class ManifestTemporaryDirectory {
    let path: String

    init() throws {
        let base = FileManager.default.temporaryDirectory.path
        path = base + "/manifest-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        let file = path + "/" + name
        try FileManager.default.createDirectory(
            atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    func mkdir(_ name: String) throws -> String {
        let dir = path + "/" + name
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }
}

@Suite("Manifest: broken manifests report exact positions")
struct ManifestTests_Broken {
    struct Case: CustomStringConvertible {
        var name: String
        var yaml: String
        var expected: [ManifestSpot]
        var description: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "YAML syntax error (missing ':')",
            yaml: """
                manifestVersion: 1
                id com.example.note
                title: Note
                """,
            expected: [ManifestSpot(3, 1, .yamlSyntax, "")]),
        Case(
            name: "tab indentation",
            yaml: validBody + "\navailability:\n\tplatforms: [linux]\n",
            expected: [ManifestSpot(8, 1, .yamlSyntax, "")]),
        Case(
            name: "string for priority",
            yaml: validBody + "\npriority: \"high\"\n",
            expected: [ManifestSpot(7, 11, .wrongType, "priority")]),
        Case(
            name: "quoted number for maximumAttachmentCount",
            yaml: validBody + "\nmaximumAttachmentCount: \"3\"\n",
            expected: [ManifestSpot(7, 25, .wrongType, "maximumAttachmentCount")]),
        Case(
            name: "list for title",
            yaml: """
                manifestVersion: 1
                id: com.example.note
                title: [Note, Notes]
                iconName: note.text
                version: 1.0.0
                library: libNoteProvider.so
                """,
            expected: [ManifestSpot(3, 8, .wrongType, "title")]),
        Case(
            name: "missing id and library point at the mapping",
            yaml: """
                # yaml-language-server: $schema=../docs/manifest.schema.json
                manifestVersion: 1
                title: Note
                iconName: note.text
                version: 1.0.0
                """,
            expected: [ManifestSpot(2, 1, .missingField, "id"), ManifestSpot(2, 1, .missingField, "library")]),
        Case(
            name: "unknown top-level field with suggestion",
            yaml: validBody + "\npriorty: 3\n",
            expected: [ManifestSpot(7, 1, .unknownField, "priorty")]),
        Case(
            name: "unknown nested field with suggestion",
            yaml: validBody + "\navailability:\n  platforms: [linux]\n  permission: [network]\n",
            expected: [ManifestSpot(9, 3, .unknownField, "availability.permission")]),
        Case(
            name: "duplicate key",
            yaml: validBody + "\nid: com.example.other\n",
            expected: [ManifestSpot(7, 1, .duplicateKey, "id")]),
        Case(
            name: "bad id",
            yaml: validBody.replacingOccurrences(of: "id: com.example.note", with: "id: Com.Example.Note"),
            expected: [ManifestSpot(2, 5, .invalidId, "id")]),
        Case(
            name: "bad version",
            yaml: validBody.replacingOccurrences(of: "version: 1.0.0", with: "version: 1.0"),
            expected: [ManifestSpot(5, 10, .invalidVersion, "version")]),
        Case(
            name: "bad durations",
            yaml: validBody + "\ntimeouts: { collect: 30, preview: 10m, detail: fast }\n",
            expected: [
                ManifestSpot(7, 22, .invalidDuration, "timeouts.collect"), ManifestSpot(7, 35, .invalidDuration, "timeouts.preview"),
                ManifestSpot(7, 48, .invalidDuration, "timeouts.detail"),
            ]),
        Case(
            name: "bad host range",
            yaml: validBody + "\navailability:\n  host: \">=1.0 <2.0.0\"\n",
            expected: [ManifestSpot(8, 9, .invalidVersionRange, "availability.host")]),
        Case(
            name: "unknown permission",
            yaml: validBody + "\navailability:\n  permissions: [network, camera]\n",
            expected: [ManifestSpot(8, 26, .unknownPermission, "availability.permissions[1]")]),
        Case(
            name: "unsupported manifestVersion",
            yaml: validBody.replacingOccurrences(of: "manifestVersion: 1", with: "manifestVersion: 2")
                + "\nfutureField: yes\n",
            expected: [ManifestSpot(1, 18, .unsupportedVersion, "manifestVersion")]),
        Case(
            name: "sha256 not hex",
            yaml: validBody + "\nsha256: " + String(repeating: "zz", count: 32) + "\n",
            expected: [ManifestSpot(7, 9, .invalidSHA256, "sha256")]),
        Case(
            name: "sha256 too short",
            yaml: validBody + "\nsha256: abc123\n",
            expected: [ManifestSpot(7, 9, .invalidSHA256, "sha256")]),
        Case(
            name: "not a mapping",
            yaml: "- id: com.example.note\n- title: Note\n",
            expected: [ManifestSpot(1, 1, .notAMapping, "")]),
        Case(
            name: "empty file",
            yaml: "# only a comment\n",
            expected: [ManifestSpot(1, 1, .notAMapping, "")]),
        Case(
            name: "two documents",
            yaml: validBody + "\n---\nid: com.example.second\n",
            expected: [ManifestSpot(7, 1, .multipleDocuments, "")]),
        Case(
            name: "maximumAttachmentCount below 1 and unknown enum members",
            yaml: validBody + "\nmaximumAttachmentCount: 0\ncollection: forms\nisolation: sandbox\n",
            expected: [
                ManifestSpot(7, 25, .invalidValue, "maximumAttachmentCount"), ManifestSpot(8, 13, .invalidValue, "collection"),
                ManifestSpot(9, 12, .invalidValue, "isolation"),
            ]),
        Case(
            name: "wrong-typed booleans and platforms",
            yaml: validBody + "\nusesContainerPanel: yes\navailability:\n  platforms: [linux, windows]\n",
            expected: [
                ManifestSpot(7, 21, .wrongType, "usesContainerPanel"),
                ManifestSpot(9, 22, .invalidValue, "availability.platforms[1]"),
            ]),
        Case(
            name: "settings: default of the wrong type, missing type, unknown setting field",
            yaml: validBody + """

                settings:
                  count: { type: integer, default: many }
                  folder: { default: "~/x" }
                  flag: { type: bool, defualt: true }
                """,
            expected: [
                ManifestSpot(8, 36, .invalidSettingDefault, "settings.count.default"),
                ManifestSpot(9, 11, .missingField, "settings.folder.type"),
                ManifestSpot(10, 23, .unknownField, "settings.flag.defualt"),
            ]),
        Case(
            name: "many problems at once are all reported",
            yaml: """
                manifestVersion: 1
                id: example
                title: { en: Note, "not a locale": x }
                iconName: note.text
                version: v1.0.0
                library: notes.txt
                priority: 1.5
                """,
            expected: [
                ManifestSpot(2, 5, .invalidId, "id"), ManifestSpot(3, 20, .invalidValue, "title.not a locale"),
                ManifestSpot(5, 10, .invalidVersion, "version"), ManifestSpot(6, 10, .invalidValue, "library"),
                ManifestSpot(7, 11, .wrongType, "priority"),
            ]),
    ]

    @Test(arguments: cases)
    func reportsExactly(_ testCase: Case) {
        let found = spots(testCase.yaml)
        #expect(found == testCase.expected, "\(testCase.name):\n\(diagnostics(testCase.yaml).map(\.description).joined(separator: "\n"))")
    }

    @Test func atLeastFifteenBrokenManifests() {
        #expect(Self.cases.count >= 15)
    }

    @Test func messagesAndHints() throws {
        let unknown = try #require(diagnostics(validBody + "\navailability:\n  permission: [network]\n").first)
        #expect(
            unknown.description == """
                manifests/test.yaml:8:3: error: [unknown-field] availability.permission: unknown field 'permission'; \
                did you mean 'permissions'?
                  hint: rename it to 'permissions'
                """)
        let tab = try #require(diagnostics(validBody + "\navailability:\n\tplatforms: [linux]\n").first)
        #expect(tab.hint.contains("tabs"))
        let syntax = try #require(diagnostics("manifestVersion: 1\nid com.example.note\ntitle: Note\n").first)
        #expect(
            syntax.message == "could not find expected ':' (while scanning a simple key at line 2, column 1)")
        let duplicate = try #require(diagnostics(validBody + "\nid: com.example.other\n").first)
        #expect(duplicate.message.contains("first defined at line 2, column 1"))
        let quoted = try #require(diagnostics(validBody + "\npriority: \"90\"\n").first)
        #expect(quoted.hint == "remove the quotes: 90")
        let permission = try #require(diagnostics(validBody + "\navailability:\n  permissions: [netwrok]\n").first)
        #expect(permission.message == "unknown permission 'netwrok'; did you mean 'network'?")
        let misplaced = try #require(diagnostics(validBody + "\npermissions: [network]\n").first)
        #expect(misplaced.message == "unknown field 'permissions'; did you mean 'availability.permissions'?")
        let id = try #require(diagnostics(validBody.replacingOccurrences(of: "com.example.note", with: "com.Example.my_note")).first)
        #expect(id.hint == "write 'com.example.my-note'")
        let version = try #require(diagnostics(validBody.replacingOccurrences(of: "1.0.0", with: "1.2")).first)
        #expect(version.hint == "write three numbers, e.g. 1.2.0")
    }

    @Test func duplicateKeysInLargeMappings() {
        var yaml = validBody + "\nsettings:\n"
        for index in 0..<20 { yaml += "  s\(index): { type: string }\n" }
        yaml += "  s3: { type: bool }\n  s19: { type: bool }\n"
        #expect(spots(yaml) == [ManifestSpot(28, 3, .duplicateKey, "settings.s3"), ManifestSpot(29, 3, .duplicateKey, "settings.s19")])
        let nested = validBody + "\navailability:\n  permissions: [network]\n  permissions: [files]\n"
        #expect(spots(nested) == [ManifestSpot(9, 3, .duplicateKey, "availability.permissions")])
    }

    @Test func aliasesResolveAndBombsAreStopped() throws {
        let manifest = try parsed(
            """
            manifestVersion: 1
            id: &id com.example.note
            title: *id
            iconName: note.text
            version: 1.0.0
            library: libNoteProvider.so
            """)
        #expect(manifest.title.resolve(locale: nil) == "com.example.note")
        var bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for level in 1...8 {
            let previous = "*a\(level - 1)"
            bomb += "a\(level): &a\(level) [\(Array(repeating: previous, count: 10).joined(separator: ", "))]\n"
        }
        let problems = diagnostics(bomb)
        #expect(problems.first?.code == .yamlSyntax)
        #expect(problems.first?.message.contains("more than") == true)
    }
}

@Suite("Manifest: description")
struct ManifestTests_Description {
    static func manifest(_ description: String) -> String {
        "manifestVersion: 1\nid: com.example.x\ntitle: X\n\(description)\niconName: x\nversion: 1.0.0\nlibrary: libX.so\n"
    }

    @Test("optional; a string or a locale map; too long, empty or of another type is refused at its position")
    func description() throws {
        #expect(try parsed(Self.manifest("")).summary == nil)
        #expect(try parsed(Self.manifest("description: A note.")).summary?.resolve(locale: nil) == "A note.")
        let long = diagnostics(Self.manifest("description: " + String(repeating: "x", count: 1001)))
        #expect(long.map(\.fieldPath) == ["description"] && long.first?.message.contains("at most 1000") == true, "\(long)")
        #expect(diagnostics(Self.manifest("description: [a, b]")).first?.fieldPath == "description")
        #expect(diagnostics(Self.manifest("description: {}")).first?.message.contains("description map is empty") == true)
        #expect(diagnostics(Self.manifest("description: { xx-!: a }")).first?.fieldPath == "description.xx-!")
    }
}

@Suite("Manifest: valid manifests")
struct ManifestTests_Valid {
    static let full = """
        # yaml-language-server: $schema=../docs/manifest.schema.json
        manifestVersion: 1
        id: com.contexthost.stock-quote          # reverse-DNS, unique, never changes
        title:
          en: Stock Quote
          de: Aktienkurs
          pt-BR: Cotação
        iconName: chart.line.uptrend.xyaxis
        version: 1.2.3-beta.1+build.5
        library: libStockQuoteProvider.so
        sha256: 3F1A000000000000000000000000000000000000000000000000000000000abc
        priority: 90
        maximumAttachmentCount: 3
        usesContainerPanel: true
        collection: both
        isolation: in-process
        availability:
          platforms: [linux]
          host: ">=0.1.0 <1.0.0"
          permissions: [network, files, network]
        settings:
          quotesDirectory: { type: path, default: "~/.local/share/context-host/quotes", description: Where CSVs live }
          samples: { type: path, default: samples }
          refreshSeconds: { type: integer, default: 60 }
          threshold: { type: number, default: 0.5 }
          showVolume: { type: bool, default: false }
          apiKey: { type: string, required: true }
          nickname: { type: string }
        timeouts: { collect: 45s, preview: 250ms, detail: 1.5s, encode: 2m }
        description:
          en: The latest close of a stock.
          de: Der letzte Schlusskurs einer Aktie.
        """

    @Test func everyField() throws {
        let m = try parsed(Self.full)
        #expect(m.manifestVersion == 1)
        #expect(m.id == "com.contexthost.stock-quote")
        #expect(m.title.entries.map(\.locale) == ["en", "de", "pt-BR"])
        #expect(m.iconName == "chart.line.uptrend.xyaxis")
        #expect(m.summary?.resolve(locale: "de-CH") == "Der letzte Schlusskurs einer Aktie.")
        #expect(m.summary?.resolve(locale: "fr") == "The latest close of a stock.")
        #expect(m.version == Version(1, 2, 3, prerelease: ["beta", "1"]))
        #expect(m.version.build == ["build", "5"])
        #expect(m.library == "libStockQuoteProvider.so")
        #expect(m.sha256 == "3f1a000000000000000000000000000000000000000000000000000000000abc")
        #expect(m.priority == 90)
        #expect(m.maximumAttachmentCount == 3)
        #expect(m.usesContainerPanel == true)
        #expect(m.collection == .both)
        #expect(m.isolation == .inProcess)
        #expect(m.availability.platforms == [.linux])
        #expect(m.availability.host?.description == ">=0.1.0 <1.0.0")
        #expect(m.availability.permissions == [.network, .files])
        #expect(m.settings.map(\.name) == [
            "quotesDirectory", "samples", "refreshSeconds", "threshold", "showVolume", "apiKey", "nickname",
        ])
        #expect(m.settings[0].type == .path)
        #expect(m.settings[0].description == "Where CSVs live")
        #expect(m.settings[2].defaultValue == .number(60))
        #expect(m.settings[3].defaultValue == .number(0.5))
        #expect(m.settings[4].defaultValue == .bool(false))
        #expect(m.settings[5].isRequired)
        #expect(m.timeouts.collect == .seconds(45))
        #expect(m.timeouts.preview == .milliseconds(250))
        #expect(m.timeouts.detail == .milliseconds(1500))
        #expect(m.timeouts.encode == .seconds(120))
        #expect(m.timeouts.detail.milliseconds == 1500)
        #expect(m.manifestPath == "manifests/test.yaml")
        #expect(m.directory == "/srv/manifests")
        #expect(m.schemaReference == "../docs/manifest.schema.json")
        #expect(m.sourceLocations["sha256"] == Manifest.SourceLocation(line: 11, column: 9))
        #expect(m.sourceLocations["library"] == Manifest.SourceLocation(line: 10, column: 10))
    }

    @Test func defaults() throws {
        let m = try parsed(validBody)
        #expect(m.sha256 == nil)
        #expect(m.priority == 0)
        #expect(m.maximumAttachmentCount == 1)
        #expect(m.usesContainerPanel == false)
        #expect(m.collection == .form)
        #expect(m.isolation == .process)
        #expect(m.availability.platforms == [.linux, .macos])
        #expect(m.availability.host == nil)
        #expect(m.availability.permissions.isEmpty)
        #expect(m.settings.isEmpty)
        #expect(m.timeouts == Timeouts(collect: .seconds(30), preview: .milliseconds(500), detail: .seconds(2), encode: .seconds(1)))
        #expect(m.schemaReference == nil)
    }

    /// docs/manifest.md's example, verbatim apart from a real hash, read from a file like a user's.
    static let designExample = """
        # yaml-language-server: $schema=../docs/manifest.schema.json
        manifestVersion: 1
        id: com.contexthost.stock-quote          # reverse-DNS, unique, never changes
        title: Stock Quote                        # or a map of locale → string
        iconName: chart.line.uptrend.xyaxis
        version: 1.0.0
        library: libStockQuoteProvider.so         # resolved against the manifest's folder, then library paths
        sha256: 3f1a000000000000000000000000000000000000000000000000000000000000  # optional pin
        priority: 90                              # higher first
        maximumAttachmentCount: 3
        usesContainerPanel: true
        collection: form                          # form | programmatic | both
        isolation: process                        # process | in-process (host policy may override)
        availability:
          platforms: [linux, macos]
          host: ">=0.1.0 <1.0.0"
          permissions: [network]                  # granted (or not) by the client at initialize
        settings:                                 # typed, with defaults; values come from host config
          quotesDirectory: { type: path, default: "~/.local/share/context-host/quotes" }
        timeouts: { collect: 30s, preview: 500ms, detail: 2s, encode: 1s }

        """

    @Test func designExampleWithSchemaHeader() throws {
        let tmp = try ManifestTemporaryDirectory()
        let file = try tmp.write("manifests/stock-quote.yaml", Self.designExample)
        let m: Manifest
        do {
            m = try Manifest.load(file: file)
        } catch {
            Issue.record("\(error)")
            return
        }
        #expect(m.schemaReference == "../docs/manifest.schema.json")
        #expect(m.id == "com.contexthost.stock-quote")
        #expect(m.title.resolve(locale: "en") == "Stock Quote")
        #expect(m.directory == tmp.path + "/manifests")
        #expect(m.availability.host?.contains(Version(0, 5, 0)) == true)
        #expect(m.settings.first?.defaultValue == .string("~/.local/share/context-host/quotes"))
        #expect(m.timeouts == Timeouts())
    }

    @Test func localizedTitle() throws {
        let text = LocalizedText(entries: [
            .init(locale: "de", text: "Notiz"), .init(locale: "en", text: "Note"),
            .init(locale: "pt-BR", text: "Nota (BR)"), .init(locale: "pt", text: "Nota"),
            .init(locale: "zh-Hans", text: "笔记"),
        ])
        #expect(text.resolve(locale: "de") == "Notiz")
        #expect(text.resolve(locale: "pt-BR") == "Nota (BR)")
        #expect(text.resolve(locale: "pt_br") == "Nota (BR)")  // case and separator
        #expect(text.resolve(locale: "pt-PT") == "Nota")  // language
        #expect(text.resolve(locale: "de-AT") == "Notiz")
        #expect(text.resolve(locale: "zh-Hans-CN") == "笔记")  // same language
        #expect(text.resolve(locale: "fr") == "Note")  // en
        #expect(text.resolve(locale: nil) == "Note")
        let noEnglish = LocalizedText(entries: [.init(locale: "fr", text: "Note FR"), .init(locale: "es", text: "Nota")])
        #expect(noEnglish.resolve(locale: "ja") == "Note FR")  // first
        #expect(LocalizedText("Plain").resolve(locale: "de") == "Plain")
        let m = try parsed(Self.full)
        #expect(m.title.resolve(locale: "pt-BR") == "Cotação")
        #expect(m.title.resolve(locale: "it") == "Stock Quote")
    }

    @Test func scalarResolution() {
        #expect(YAMLNode.resolvePlain("0x1F") == .int(31))
        #expect(YAMLNode.resolvePlain("-12") == .int(-12))
        #expect(YAMLNode.resolvePlain("1.5e3") == .float(1500))
        #expect(YAMLNode.resolvePlain("1.0.0") == .string("1.0.0"))
        #expect(YAMLNode.resolvePlain("yes") == .string("yes"))
        #expect(YAMLNode.resolvePlain("~") == .null)
        #expect(YAMLNode.resolvePlain("True") == .bool(true))
    }

    @Test func durations() {
        #expect(Duration(manifestText: "30s") == .seconds(30))
        #expect(Duration(manifestText: "500ms") == .milliseconds(500))
        #expect(Duration(manifestText: "2m") == .seconds(120))
        #expect(Duration(manifestText: "0.25s") == .milliseconds(250))
        #expect(Duration(manifestText: "30") == nil)
        #expect(Duration(manifestText: "s") == nil)
        #expect(Duration(manifestText: "1h") == nil)
        #expect(Duration(manifestText: "-1s") == nil)
        #expect(Duration.milliseconds(500).manifestText == "500ms")
        #expect(Duration.seconds(300).manifestText == "5m")
    }
}

@Suite("Manifest: versions and ranges")
struct ManifestTests_Versions {
    @Test func parsing() {
        #expect(Version("1.2.3") == Version(1, 2, 3))
        #expect(Version("0.0.0-alpha.1+sha.5114f85")?.prerelease == ["alpha", "1"])
        for bad in ["1.2", "1.2.3.4", "01.2.3", "1.2.3-", "1.2.3-01", "v1.2.3", "1.2.x", "", "1.2.3+"] {
            #expect(Version(bad) == nil, "\(bad)")
        }
    }

    @Test func precedence() throws {
        let ordered = [
            "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
            "1.0.0-rc.1", "1.0.0", "1.0.1", "1.1.0", "2.0.0",
        ].map { Version($0)! }
        for (a, b) in zip(ordered, ordered.dropFirst()) { #expect(a < b, "\(a) < \(b)") }
        #expect(Version("1.0.0+a") == Version("1.0.0+b"))
    }

    @Test func ranges() throws {
        let range = try VersionRange(parsing: ">=0.1.0 <1.0.0")
        #expect(range.contains(Version(0, 1, 0)))
        #expect(range.contains(Version(0, 9, 9)))
        #expect(!range.contains(Version(1, 0, 0)))
        #expect(!range.contains(Version(0, 0, 9)))
        let exact = try VersionRange(parsing: "=1.2.3")
        #expect(exact.contains(Version(1, 2, 3)) && !exact.contains(Version(1, 2, 4)))
        let bare = try VersionRange(parsing: "1.2.3")
        #expect(bare.comparators == [.init(.equal, Version(1, 2, 3))])
        let spaced = try VersionRange(parsing: ">= 1.0.0  <= 2.0.0")
        #expect(spaced.contains(Version(2, 0, 0)) && !spaced.contains(Version(2, 0, 1)))
        let strict = try VersionRange(parsing: ">1.0.0")
        #expect(!strict.contains(Version(1, 0, 0)) && strict.contains(Version(1, 0, 1)))
        #expect(try VersionRange(parsing: "*").contains(Version(9, 9, 9)))
        for bad in ["", ">=1.0", "=>1.0.0", ">=", "^1.0.0", "~1.2.3", ">=1.0.0 || <0.5.0", ">=2.0.0 <1.0.0", ">1.0.0 <1.0.0",
            "=1.0.0 >1.0.0", "v1.0.0"]
        {
            #expect(throws: VersionRange.ParseError.self, "\(bad)") { try VersionRange(parsing: bad) }
        }
    }
}

@Suite("Manifest: settings resolution")
struct ManifestTests_Settings {
    @Test func defaultsOverridesAndPaths() throws {
        let m = try parsed(ManifestTests_Valid.full)
        let settings = try m.resolvedSettings(
            overrides: ["apiKey": "secret", "refreshSeconds": "15", "threshold": .number(0.75)], homeDirectory: "/home/u")
        #expect(settings.keys == ["quotesDirectory", "samples", "refreshSeconds", "threshold", "showVolume", "apiKey"])
        #expect(settings["quotesDirectory"] == .string("/home/u/.local/share/context-host/quotes"))
        #expect(settings["samples"] == .string("/srv/manifests/samples"))
        #expect(settings["refreshSeconds"] == .number(15))
        #expect(settings["threshold"] == .number(0.75))
        #expect(settings["showVolume"] == .bool(false))
        #expect(settings["apiKey"] == .string("secret"))
        #expect(settings["nickname"] == nil)

        let absolute = try m.resolvedSettings(
            overrides: ["apiKey": "k", "samples": "/data/./x/../samples", "quotesDirectory": "~"], homeDirectory: "/home/u")
        #expect(absolute["samples"] == .string("/data/samples"))
        #expect(absolute["quotesDirectory"] == .string("/home/u"))
    }

    @Test func errors() throws {
        let m = try parsed(ManifestTests_Valid.full)
        do {
            _ = try m.resolvedSettings(
                overrides: ["refreshSeconds": .number(1.5), "showVolume": "maybe", "apikey": "x"], homeDirectory: "/h")
            Issue.record("expected an error")
        } catch {
            let codes = error.diagnostics.map { "\($0.code) \($0.fieldPath)" }
            #expect(codes == [
                "unknown-setting settings.apikey", "setting-type-mismatch settings.refreshSeconds",
                "setting-type-mismatch settings.showVolume", "missing-setting settings.apiKey",
            ])
            try #require(error.diagnostics.count == 4)
            #expect(error.diagnostics[0].message == "there is no setting 'apikey'; did you mean 'apiKey'?")
            #expect(error.diagnostics[3].line == 27)
        }
    }
}

@Suite("Manifest: discovery")
struct ManifestTests_Discovery {
    static func manifest(id: String, priority: Int = 0, extra: String = "") -> String {
        """
        manifestVersion: 1
        id: \(id)
        title: T
        iconName: i
        version: 1.0.0
        library: libX.so
        priority: \(priority)
        \(extra)
        """
    }

    @Test func searchPaths() {
        let env = ["CONTEXT_HOST_MANIFESTS": "/etc/ch::rel/dir:/etc/ch"]
        let cli = ManifestSearchPaths.resolve(cliDirectories: ["a", "/b", "a/"], environment: env, currentDirectory: "/w")
        #expect(cli.map(\.path) == ["/w/a", "/b"])
        #expect(cli.map(\.displayPath) == ["a", "/b"])
        #expect(cli.allSatisfy { $0.source == .commandLine && $0.isExplicit })
        let fromEnv = ManifestSearchPaths.resolve(cliDirectories: [], environment: env, currentDirectory: "/w")
        #expect(fromEnv.map(\.path) == ["/etc/ch", "/w/rel/dir"])
        #expect(fromEnv.allSatisfy { $0.source == .environment })
        let fallback = ManifestSearchPaths.resolve(cliDirectories: [], environment: [:], currentDirectory: "/w")
        #expect(fallback == [ManifestSearchPath(path: "/w/manifests", displayPath: "manifests", source: .defaultPath)])
        #expect(!fallback[0].isExplicit)
    }

    @Test func orderDuplicatesAndBadOnes() throws {
        let tmp = try ManifestTemporaryDirectory()
        let first = try tmp.mkdir("first")
        let second = try tmp.mkdir("second")
        try tmp.write("first/b.yaml", Self.manifest(id: "com.example.b"))
        try tmp.write("first/a.yml", Self.manifest(id: "com.example.a"))
        try tmp.write("first/c-broken.yaml", "manifestVersion: 1\nid: [\n")
        try tmp.write("first/d-invalid.yaml", Self.manifest(id: "com.example.d", extra: "priorty: 1"))
        try tmp.write("first/notes.txt", "not a manifest")
        try tmp.write("first/.hidden.yaml", "garbage: [")
        try tmp.write("first/nested/e.yaml", Self.manifest(id: "com.example.nested"))
        try tmp.write("second/a.yaml", Self.manifest(id: "com.example.a"))
        try tmp.write("second/z.yaml", Self.manifest(id: "com.example.z"))

        let paths = [
            ManifestSearchPath(path: first, displayPath: "first", source: .commandLine),
            ManifestSearchPath(path: tmp.path + "/missing", displayPath: "missing", source: .commandLine),
            ManifestSearchPath(path: second, displayPath: "second", source: .commandLine),
        ]
        let catalog = ManifestCatalog.discover(paths)
        #expect(catalog.entries.map(\.path) == [
            "first/a.yml", "first/b.yaml", "first/c-broken.yaml", "first/d-invalid.yaml", "second/a.yaml",
            "second/z.yaml",
        ])
        #expect(catalog.manifests.map(\.id) == ["com.example.a", "com.example.b", "com.example.z"])
        #expect(catalog.rejections.map(\.path) == ["first/c-broken.yaml", "first/d-invalid.yaml", "second/a.yaml"])
        #expect(catalog.rejections[1].id == "com.example.d")

        let duplicate = try #require(catalog.rejections.last?.diagnostics.first)
        #expect(ManifestSpot(duplicate) == ManifestSpot(2, 5, .duplicateId, "id"))
        #expect(duplicate.file == "second/a.yaml")
        #expect(duplicate.message == "the id 'com.example.a' is already used by first/a.yml")

        #expect(catalog.diagnostics.map(\.code) == [.directoryNotFound])
        #expect(catalog.diagnostics[0].description.hasPrefix("missing: error: [directory-not-found] "))
        #expect(catalog.manifests[0].directory == first)

        // The default folder may be missing silently.
        let silent = ManifestCatalog.discover([
            ManifestSearchPath(path: tmp.path + "/manifests", displayPath: "manifests", source: .defaultPath)
        ])
        #expect(silent.entries.isEmpty && silent.diagnostics.isEmpty)
    }

    @Test func duplicateOfARejectedManifestIsAccepted() throws {
        let tmp = try ManifestTemporaryDirectory()
        try tmp.write("a.yaml", Self.manifest(id: "com.example.a", extra: "priority: high"))
        try tmp.write("b.yaml", Self.manifest(id: "com.example.a"))
        let catalog = ManifestCatalog.discover(directories: [tmp.path])
        #expect(catalog.manifests.map(\.manifestPath) == [tmp.path + "/b.yaml"])
        #expect(catalog.rejections.first?.diagnostics.map(\.code) == [.duplicateKey])
    }

    @Test func thousandManifestsAllAcceptedInOrder() throws {
        let tmp = try ManifestTemporaryDirectory()
        for index in 0..<1000 {
            try tmp.write(String(format: "m%04d.yaml", index), ManifestTests_Valid.full.replacingOccurrences(
                of: "com.contexthost.stock-quote", with: "com.example.p\(index)"))
        }
        let catalog = ManifestCatalog.discover(directories: [tmp.path])
        #expect(catalog.manifests.count == 1000)
        #expect(catalog.rejections.isEmpty)
        #expect(catalog.manifests.map(\.id) == (0..<1000).map { "com.example.p\($0)" })
        // Its speed is measured by Benchmarks/, not here.
    }
}

@Suite("Manifest: library resolution")
struct ManifestTests_Library {
    static func manifest(in directory: String, library: String) throws -> Manifest {
        try parsed(
            validBody.replacingOccurrences(of: "library: libNoteProvider.so", with: "library: \(library)"),
            directory: directory)
    }

    @Test func resolutionOrder() throws {
        let tmp = try ManifestTemporaryDirectory()
        let manifests = try tmp.mkdir("manifests")
        let libs = try tmp.mkdir("libs")
        let exe = try tmp.mkdir("bin")
        try tmp.write("libs/libA.so", "A")
        try tmp.write("bin/libA.so", "A2")
        try tmp.write("bin/libB.so", "B")
        try tmp.write("manifests/sub/libC.so", "C")
        let resolver = LibraryResolver(searchDirectories: [libs, exe])
        #expect(try resolver.resolve(Self.manifest(in: manifests, library: "libA.so")) == libs + "/libA.so")
        #expect(try resolver.resolve(Self.manifest(in: manifests, library: "libB.so")) == exe + "/libB.so")
        #expect(try resolver.resolve(Self.manifest(in: manifests, library: "sub/libC.so")) == manifests + "/sub/libC.so")
        try tmp.write("manifests/libA.so", "A0")
        #expect(try resolver.resolve(Self.manifest(in: manifests, library: "libA.so")) == manifests + "/libA.so")
        // A symlink that stays inside its folder is fine.
        try FileManager.default.createSymbolicLink(atPath: manifests + "/libLink.so", withDestinationPath: "sub/libC.so")
        #expect(try resolver.resolve(Self.manifest(in: manifests, library: "libLink.so")) == manifests + "/sub/libC.so")
    }

    @Test func missingLibrary() throws {
        let tmp = try ManifestTemporaryDirectory()
        let manifests = try tmp.mkdir("manifests")
        let libs = try tmp.mkdir("libs")
        let m = try Self.manifest(in: manifests, library: "libMissing.so")
        #expect(throws: ManifestDiagnostic.self) { try LibraryResolver(searchDirectories: [libs]).resolve(m) }
        do {
            _ = try LibraryResolver(searchDirectories: [libs]).resolve(m)
        } catch {
            #expect(ManifestSpot(error) == ManifestSpot(6, 10, .libraryNotFound, "library"))
            #expect(error.message.contains(manifests) && error.message.contains(libs))
            #expect(error.hint.contains("--library-path"))
        }
    }

    @Test func escapeWithDotDot() throws {
        let tmp = try ManifestTemporaryDirectory()
        let manifests = try tmp.mkdir("manifests")
        try tmp.write("libOut.so", "X")
        let m = try Self.manifest(in: manifests, library: "../libOut.so")
        do {
            _ = try LibraryResolver(searchDirectories: []).resolve(m)
            Issue.record("expected library-path-escape")
        } catch {
            #expect(ManifestSpot(error) == ManifestSpot(6, 10, .libraryPathEscape, "library"))
            #expect(error.message.contains(manifests))
            #expect(error.hint.contains("--allow-outside-library-paths"))
        }
        let allowed = LibraryResolver(searchDirectories: [], allowOutsidePaths: true)
        #expect(try allowed.resolve(m) == tmp.path + "/libOut.so")
    }

    @Test func escapeWithAbsolutePath() throws {
        let tmp = try ManifestTemporaryDirectory()
        let manifests = try tmp.mkdir("manifests")
        let file = try tmp.write("libAbs.so", "X")
        let m = try Self.manifest(in: manifests, library: file)
        do {
            _ = try LibraryResolver(searchDirectories: []).resolve(m)
            Issue.record("expected library-path-escape")
        } catch {
            #expect(ManifestSpot(error) == ManifestSpot(6, 10, .libraryPathEscape, "library"))
        }
        #expect(try LibraryResolver(searchDirectories: [], allowOutsidePaths: true).resolve(m) == file)
    }

    @Test func escapeWithSymlink() throws {
        let tmp = try ManifestTemporaryDirectory()
        let manifests = try tmp.mkdir("manifests")
        let outside = try tmp.write("elsewhere/libEvil.so", "X")
        try FileManager.default.createSymbolicLink(atPath: manifests + "/libEvil.so", withDestinationPath: outside)
        let m = try Self.manifest(in: manifests, library: "libEvil.so")
        do {
            _ = try LibraryResolver(searchDirectories: []).resolve(m)
            Issue.record("expected library-path-escape")
        } catch {
            #expect(ManifestSpot(error) == ManifestSpot(6, 10, .libraryPathEscape, "library"))
            #expect(error.message.contains(outside))
            #expect(error.hint.contains("--allow-outside-library-paths"))
        }
        #expect(try LibraryResolver(searchDirectories: [], allowOutsidePaths: true).resolve(m) == outside)
    }

    @Test func manifestFolderBehindASymlinkIsInside() throws {
        let tmp = try ManifestTemporaryDirectory()
        let real = try tmp.mkdir("real")
        try tmp.write("real/libR.so", "R")
        try FileManager.default.createSymbolicLink(atPath: tmp.path + "/link", withDestinationPath: real)
        let m = try Self.manifest(in: tmp.path + "/link", library: "libR.so")
        #expect(try LibraryResolver(searchDirectories: []).resolve(m) == real + "/libR.so")
    }
}

@Suite("SHA-256")
struct ManifestTests_SHA256Digest {
    @Test func fipsVectors() {
        #expect(SHA256.hex(of: "") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(of: "abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hex(of: "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(SHA256.hex(of: million) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        #expect(million.withUnsafeBytes { SHA256.hex(of: $0) } == SHA256.hex(of: million))
    }

    @Test func incrementalMatchesOneShot() {
        let data = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        for split in [0, 1, 55, 56, 63, 64, 65, 127, 128, 9_999] {
            var hasher = SHA256()
            hasher.update(Array(data[..<split]))
            hasher.update(Array(data[split...]))
            #expect(SHA256.hexString(hasher.finalize()) == SHA256.hex(of: data), "split \(split)")
        }
        var oneByOne = SHA256()
        for byte in data.prefix(200) { oneByOne.update([byte]) }
        #expect(SHA256.hexString(oneByOne.finalize()) == SHA256.hex(of: Array(data.prefix(200))))
    }

    @Test func file() throws {
        let tmp = try ManifestTemporaryDirectory()
        let path = try tmp.write("f.bin", "abc")
        #expect(SHA256.hex(ofFile: path) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex(ofFile: tmp.path + "/missing") == nil)
    }
}

@Suite("Manifest: error codes")
struct ManifestTests_ErrorCodes {
    @Test func documented() throws {
        let missing = try BuildProducts.undocumented(ManifestErrorCode.all.map(\.rawValue), in: "docs/manifest.md") { "`\($0)`" }
        #expect(missing.isEmpty, "docs/manifest.md lacks \(missing)")
    }

    @Test func schemaListsEveryField() throws {
        let data = Data(try BuildProducts.packageText("docs/manifest.schema.json").utf8)
        let schema = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let properties = try #require(schema["properties"] as? [String: Any])
        #expect(Set(properties.keys) == Set(Manifest.topLevelFields))
        #expect(schema["additionalProperties"] as? Bool == false)
        #expect(Set(schema["required"] as? [String] ?? []) == Set(Manifest.requiredFields))
    }
}
