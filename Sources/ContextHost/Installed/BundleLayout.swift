/// The fixed names inside a `.ctxp` bundle (docs/packages.md §1).
package enum BundleLayout {
    /// The bundle's manifest, at the root.
    package static let manifestFileName = "manifest.yaml"
    /// The file extension of bundles.
    package static let fileExtension = "ctxp"
    /// What follows a bundle's file name for its detached signature (`NAME.ctxp.minisig`), the
    /// minisign signature of the whole file, checked before the file is decompressed.
    package static let signatureSuffix = ".minisig"

    /// Where `package` puts the library of `platform`.
    package static func libraryPath(platform: String, fileName: String) -> String {
        "lib/\(platform)/\(fileName)"
    }

    /// `NAME-VERSION.ctxp`, NAME being the id's last label.
    package static func fileName(id: String, version: String) -> String {
        let name = id.split(separator: ".").last.map(String.init) ?? id
        return "\(name)-\(version).\(fileExtension)"
    }
}
