import ContextHost
import Testing

@Suite("Manifest source locations")
struct SourceLocationsTests {
    @Test("lookups by field path find exactly the recorded positions; unsorted cache input is refused")
    func lookups() {
        let table = Manifest.SourceLocations([
            "id": .init(line: 3, column: 5), "library": .init(line: 10, column: 10),
            "settings.path": .init(line: 20, column: 7), "sha256": .init(line: 11, column: 9),
        ])
        #expect(table.count == 4)
        #expect(table.fields == ["id", "library", "settings.path", "sha256"])
        #expect(table["library"] == .init(line: 10, column: 10))
        #expect(table["settings.path"] == .init(line: 20, column: 7))
        #expect(table["id"] == .init(line: 3, column: 5))
        #expect(table["sha256"] == .init(line: 11, column: 9))
        #expect(table["settings"] == nil)
        #expect(table["zzz"] == nil)
        #expect(table[""] == nil)
        #expect(Manifest.SourceLocations()["id"] == nil)
        #expect(Manifest.SourceLocations(sortedFields: ["b", "a"], locations: [.init(line: 1, column: 1), .init(line: 2, column: 1)]) == nil)
        #expect(Manifest.SourceLocations(sortedFields: ["a"], locations: []) == nil)
        #expect(Manifest.SourceLocations(sortedFields: table.fields, locations: table.locations) == table)
    }
}
