/// The parts of a 64-bit little-endian ELF shared object the inspector reads, parsed with every
/// offset and count checked against the input (hostile-safe, bounded work).
struct ELFImage {
    /// A section header.
    struct Section {
        /// The name from the section-name table ("" when there is none).
        var name: String
        /// `sh_type`, `sh_flags`, `sh_offset`, `sh_size`, `sh_link`, `sh_info`, `sh_entsize`.
        var type: UInt32
        var flags: UInt64
        var offset: UInt64
        var size: UInt64
        var link: UInt32
        var info: UInt32
        var entrySize: UInt64
    }

    /// A program header.
    struct Segment {
        /// `p_type`, `p_offset`, `p_vaddr`, `p_filesz`.
        var type: UInt32
        var offset: UInt64
        var virtualAddress: UInt64
        var fileSize: UInt64
    }

    /// The most section or program headers read (a real library has well under a hundred).
    static let maxHeaders = 65_536
    /// The most dynamic entries read.
    static let maxDynamicEntries = 100_000
    /// The most DT_NEEDED names kept.
    static let maxNeeded = 4096
    /// The most version-need records read.
    static let maxVersionRecords = 65_536
    /// The most dynamic symbols read.
    static let maxSymbols = 4_000_000

    /// The input.
    let reader: ByteReader
    /// The file name for messages.
    let name: String
    /// ELF `e_machine`.
    let machine: UInt16
    /// The section headers (empty when the file has none).
    let sections: [Section]
    /// The program headers.
    let segments: [Segment]

    /// Parses the headers; throws `binaryInvalid` naming `name` and the defect.
    init(bytes: [UInt8], name: String) throws(PackageError) {
        let reader = ByteReader(bytes: bytes)
        self.reader = reader
        self.name = name
        func invalid(_ what: String) -> PackageError {
            PackageError(
                .binaryInvalid, "'\(name)' is not a valid shared library: \(what).",
                fix: "Package the provider's shared library as built by its compiler (a 64-bit ELF .so on Linux, a .dylib on macOS).")
        }
        guard bytes.count >= 64 else {
            throw invalid(bytes.count >= 4 && bytes.prefix(4).elementsEqual([0x7F, 0x45, 0x4C, 0x46])
                ? "truncated ELF header (\(bytes.count) bytes, 64 needed)" : "not an ELF file (\(bytes.count) bytes)")
        }
        guard bytes.prefix(4).elementsEqual([0x7F, 0x45, 0x4C, 0x46]) else { throw invalid("not an ELF file (bad magic)") }
        guard bytes[4] == 2 else { throw invalid(bytes[4] == 1 ? "a 32-bit ELF (ELFCLASS32); only 64-bit libraries are supported" : "unknown ELF class \(bytes[4])") }
        guard bytes[5] == 1 else { throw invalid(bytes[5] == 2 ? "a big-endian ELF; only little-endian libraries are supported" : "unknown ELF data encoding \(bytes[5])") }
        guard let type = reader.u16(16), let machine = reader.u16(18), let phoff = reader.u64(32), let shoff = reader.u64(40),
            let phentsize = reader.u16(54), let phnum = reader.u16(56), let shentsize = reader.u16(58),
            let shnum16 = reader.u16(60), let shstrndx16 = reader.u16(62)
        else { throw invalid("truncated ELF header") }
        switch type {
        case 3: break
        case 2: throw invalid("an executable (ET_EXEC), not a shared object (ET_DYN)")
        case 1: throw invalid("a relocatable object file (ET_REL), not a shared object (ET_DYN); link it with -shared")
        case 4: throw invalid("a core dump (ET_CORE), not a shared object (ET_DYN)")
        default: throw invalid("ELF type \(type), not a shared object (ET_DYN)")
        }
        self.machine = machine

        // Section headers (e_shnum 0 with a table: the real count is in section 0's sh_size).
        var sectionCount = UInt64(shnum16)
        var stringIndex = UInt64(shstrndx16)
        var sections: [Section] = []
        if shoff != 0 {
            guard shentsize == 64 else { throw invalid("section header size \(shentsize), 64 expected") }
            guard reader.range(shoff, 64) != nil, let size0 = reader.u64(Int(shoff) + 32), let link0 = reader.u32(Int(shoff) + 40) else {
                throw invalid("section header table at offset \(shoff) is outside the file (\(bytes.count) bytes)")
            }
            if sectionCount == 0 { sectionCount = size0 }
            if stringIndex == 0xFFFF { stringIndex = UInt64(link0) }
            guard sectionCount <= UInt64(Self.maxHeaders), let table = reader.range(shoff, sectionCount * 64) else {
                throw invalid("section header table (\(sectionCount) entries at offset \(shoff)) is outside the file")
            }
            var raw: [Section] = []
            raw.reserveCapacity(Int(sectionCount))
            for index in 0..<Int(sectionCount) {
                let at = table.lowerBound + index * 64
                guard let nameOffset = reader.u32(at), let type = reader.u32(at + 4), let flags = reader.u64(at + 8),
                    let offset = reader.u64(at + 24), let size = reader.u64(at + 32), let link = reader.u32(at + 40),
                    let info = reader.u32(at + 44), let entrySize = reader.u64(at + 56)
                else { throw invalid("truncated section header \(index)") }
                // SHT_NOBITS (8) and SHT_NULL (0) occupy no file bytes.
                if type != 8, type != 0, reader.range(offset, size) == nil {
                    throw invalid("section \(index) (offset \(offset), size \(size)) is outside the file")
                }
                raw.append(Section(name: String(nameOffset), type: type, flags: flags, offset: offset, size: size, link: link, info: info, entrySize: entrySize))
            }
            try Self.name(&raw, stringIndex: stringIndex, reader, invalid: invalid)
            sections = raw
        }
        self.sections = sections

        self.segments = try Self.segments(reader, offset: phoff, entrySize: phentsize, count: phnum, invalid: invalid)
    }

    /// Replaces each section's name offset (kept as text while reading) by its name from the
    /// section-name string table at `stringIndex`, when there is a valid one; by "" otherwise.
    private static func name(
        _ sections: inout [Section], stringIndex: UInt64, _ reader: ByteReader, invalid: (String) -> PackageError
    ) throws(PackageError) {
        guard stringIndex != 0, stringIndex < UInt64(sections.count) else {
            for index in sections.indices { sections[index].name = "" }
            return
        }
        let table = sections[Int(stringIndex)]
        guard table.type != 8, let bounds = reader.range(table.offset, table.size) else { throw invalid("section-name table is outside the file") }
        for index in sections.indices {
            let offset = UInt64(sections[index].name) ?? UInt64.max
            sections[index].name = reader.cString(at: offset, in: bounds, limit: 256) ?? ""
        }
    }

    /// The program headers: `count` entries of `entrySize` bytes at `offset`.
    private static func segments(
        _ reader: ByteReader, offset phoff: UInt64, entrySize phentsize: UInt16, count phnum: UInt16,
        invalid: (String) -> PackageError
    ) throws(PackageError) -> [Segment] {
        var segments: [Segment] = []
        guard phnum > 0 else { return segments }
        guard phentsize == 56 else { throw invalid("program header size \(phentsize), 56 expected") }
        guard let table = reader.range(phoff, UInt64(phnum) * 56) else {
            throw invalid("program header table (\(phnum) entries at offset \(phoff)) is outside the file (\(reader.bytes.count) bytes)")
        }
        for index in 0..<Int(phnum) {
            let at = table.lowerBound + index * 56
            guard let type = reader.u32(at), let offset = reader.u64(at + 8), let address = reader.u64(at + 16),
                let fileSize = reader.u64(at + 32)
            else { throw invalid("truncated program header \(index)") }
            segments.append(Segment(type: type, offset: offset, virtualAddress: address, fileSize: fileSize))
        }
        return segments
    }

    /// The file bytes of a section, when it has any inside the file.
    func bounds(of section: Section) -> Range<Int>? {
        section.type == 8 ? nil : reader.range(section.offset, section.size)
    }

    /// The file offset of virtual address `address`, through the PT_LOAD segments.
    func fileOffset(ofAddress address: UInt64) -> UInt64? {
        for segment in segments where segment.type == 1 {
            guard address >= segment.virtualAddress else { continue }
            let delta = address - segment.virtualAddress
            if delta < segment.fileSize {
                let (offset, overflow) = segment.offset.addingReportingOverflow(delta)
                return overflow ? nil : offset
            }
        }
        return nil
    }

    /// What PT_DYNAMIC says: DT_NEEDED names and DT_RUNPATH/DT_RPATH folders.
    struct Dynamic {
        /// DT_NEEDED names.
        var needed: [String] = []
        /// DT_RUNPATH and DT_RPATH folders, split on `:`.
        var runPaths: [String] = []
    }

    /// Reads PT_DYNAMIC; throws `binaryInvalid` when it is missing or out of range.
    func dynamic() throws(PackageError) -> Dynamic {
        func invalid(_ what: String) -> PackageError {
            PackageError(.binaryInvalid, "'\(name)' is not a valid shared library: \(what).",
                fix: "Package the provider's shared library as built by its linker (`-shared`).")
        }
        guard let segment = segments.first(where: { $0.type == 2 }) else {
            throw invalid("it has no dynamic segment (PT_DYNAMIC)")
        }
        guard let table = reader.range(segment.offset, segment.fileSize) else {
            throw invalid("the dynamic segment (offset \(segment.offset), size \(segment.fileSize)) is outside the file")
        }
        var neededOffsets: [UInt64] = []
        var pathOffsets: [UInt64] = []
        var stringTable: UInt64?
        var stringSize: UInt64?
        let count = min(table.count / 16, Self.maxDynamicEntries)
        for index in 0..<count {
            let at = table.lowerBound + index * 16
            guard let tag = reader.u64(at), let value = reader.u64(at + 8) else { break }
            if tag == 0 { break }
            switch tag {
            case 1: if neededOffsets.count < Self.maxNeeded { neededOffsets.append(value) }
            case 15, 29: if pathOffsets.count < 64 { pathOffsets.append(value) }
            case 5: stringTable = value
            case 10: stringSize = value
            default: break
            }
        }
        var result = Dynamic()
        guard !neededOffsets.isEmpty || !pathOffsets.isEmpty else { return result }
        guard let stringTable, let start = fileOffset(ofAddress: stringTable) else {
            throw invalid("the dynamic string table (DT_STRTAB) is missing or outside the file")
        }
        let available = UInt64(reader.count) - min(start, UInt64(reader.count))
        guard let bounds = reader.range(start, min(stringSize ?? available, available)) else {
            throw invalid("the dynamic string table is outside the file")
        }
        for offset in neededOffsets {
            guard let name = reader.cString(at: offset, in: bounds), !name.isEmpty else {
                throw invalid("a DT_NEEDED name is outside the dynamic string table")
            }
            result.needed.append(name)
        }
        for offset in pathOffsets {
            guard let path = reader.cString(at: offset, in: bounds) else {
                throw invalid("a DT_RUNPATH/DT_RPATH is outside the dynamic string table")
            }
            result.runPaths += path.split(separator: ":", omittingEmptySubsequences: true).map(String.init)
        }
        return result
    }

    /// Every `vna_name` in the GNU version-needs section (`.gnu.version_r`), bounded.
    func versionNeeds() -> [String] {
        guard let section = sections.first(where: { $0.type == 0x6FFF_FFFE }), let bounds = bounds(of: section),
            Int(section.link) < sections.count, let strings = self.bounds(of: sections[Int(section.link)])
        else { return [] }
        var names: [String] = []
        var records = 0
        var offset: UInt64 = 0
        for _ in 0..<min(Int(section.info), Self.maxVersionRecords) {
            guard offset <= UInt64(bounds.count), UInt64(bounds.count) - offset >= 16 else { break }
            let at = bounds.lowerBound + Int(offset)
            guard let auxCount = reader.u16(at + 2), let auxOffset = reader.u32(at + 8), let next = reader.u32(at + 12) else { break }
            var aux = offset + UInt64(auxOffset)
            for _ in 0..<Int(auxCount) {
                records += 1
                guard records <= Self.maxVersionRecords, aux <= UInt64(bounds.count), UInt64(bounds.count) - aux >= 16 else { break }
                let auxAt = bounds.lowerBound + Int(aux)
                guard let nameOffset = reader.u32(auxAt + 8), let auxNext = reader.u32(auxAt + 12) else { break }
                if let name = reader.cString(at: UInt64(nameOffset), in: strings, limit: 256) { names.append(name) }
                if auxNext == 0 { break }
                aux += UInt64(auxNext)
            }
            if next == 0 { break }
            offset += UInt64(next)
        }
        return names
    }

    /// Walks the dynamic symbol table (`.dynsym`), bounded; `body` gets each symbol's name bounds
    /// (offset into `strings`), whether it is defined, and answers `false` to stop.
    func forEachDynamicSymbol(_ body: (_ nameOffset: UInt64, _ strings: Range<Int>, _ defined: Bool) -> Bool) {
        guard let section = sections.first(where: { $0.type == 11 }), let table = bounds(of: section),
            Int(section.link) < sections.count, let strings = bounds(of: sections[Int(section.link)])
        else { return }
        let count = min(table.count / 24, Self.maxSymbols)
        for index in 0..<count {
            let at = table.lowerBound + index * 24
            guard let nameOffset = reader.u32(at), let info = reader.u8(at + 4), let sectionIndex = reader.u16(at + 6) else { return }
            let binding = info >> 4
            // Defined (st_shndx != SHN_UNDEF) and global or weak.
            let defined = sectionIndex != 0 && (binding == 1 || binding == 2)
            if !body(UInt64(nameOffset), strings, defined) { return }
        }
    }
}
