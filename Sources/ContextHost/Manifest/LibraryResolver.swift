/// Finds a manifest's library file, keeping it inside the folders it may come from.
///
/// Order: the manifest's folder, then each of `searchDirectories` (the `--library-path` folders, then
/// the running executable's folder, as the CLI passes them). A candidate must be a regular file
/// (after symlinks). Unless `allowOutsidePaths`, the library path may not be absolute or contain
/// `..`, and its canonical path must stay inside the canonical folder it was found in.
package struct LibraryResolver: Sendable {
    package var searchDirectories: [String]
    package var allowOutsidePaths: Bool

    package init(searchDirectories: [String], allowOutsidePaths: Bool = false) {
        self.searchDirectories = searchDirectories
        self.allowOutsidePaths = allowOutsidePaths
    }

    /// The canonical absolute path of `manifest.library`, or a diagnostic at the `library` value
    /// (`library-path-escape` or `library-not-found`).
    package func resolve(_ manifest: Manifest) throws(ManifestDiagnostic) -> String {
        let library = manifest.library
        let flag = "--allow-outside-library-paths"
        let segments = library.split(separator: "/", omittingEmptySubsequences: true)

        if library.hasPrefix("/") {
            guard allowOutsidePaths else {
                throw manifest.diagnostic(
                    .libraryPathEscape, at: "library",
                    message: "the library path '\(library)' is absolute; it must be relative to the manifest's folder "
                        + "or a library path",
                    hint: "write just the file name and put the library next to the manifest (or in a "
                        + "--library-path folder), or start the host with \(flag) to allow it")
            }
            if ManifestFileSystem.kind(of: library) == .file, let real = ManifestFileSystem.realPath(library) {
                return real
            }
            throw manifest.diagnostic(
                .libraryNotFound, at: "library", message: "the library '\(library)' was not found",
                hint: "build the provider or fix the path")
        }
        if !allowOutsidePaths, segments.contains("..") {
            throw manifest.diagnostic(
                .libraryPathEscape, at: "library",
                message: "the library path '\(library)' contains '..' and would leave the folder it is resolved "
                    + "against ('\(manifest.directory)')",
                hint: "put the library inside the manifest's folder or a --library-path folder, or start the host "
                    + "with \(flag) to allow it")
        }

        var folders: [String] = []
        for folder in [manifest.directory] + searchDirectories where !folders.contains(folder) {
            folders.append(folder)
        }
        var searched: [String] = []
        for folder in folders {
            let candidate = ManifestFileSystem.join(folder, library)
            searched.append(folder)
            guard ManifestFileSystem.kind(of: candidate) == .file,
                let real = ManifestFileSystem.realPath(candidate)
            else { continue }
            if allowOutsidePaths { return real }
            // Compare against the folder's canonical path (the folder may itself be a symlink).
            let root = ManifestFileSystem.realPath(folder) ?? folder
            let prefix = root == "/" ? "/" : root + "/"
            if real.hasPrefix(prefix) { return real }
            throw manifest.diagnostic(
                .libraryPathEscape, at: "library",
                message: "'\(candidate)' is a symbolic link to '\(real)', outside the folder '\(root)' it was found in",
                hint: "copy the library into '\(root)' instead of linking it, or start the host with \(flag) "
                    + "to allow it")
        }
        throw manifest.diagnostic(
            .libraryNotFound, at: "library",
            message: "the library '\(library)' was not found; searched: \(searched.joined(separator: ", "))",
            hint: "build the provider ('swift build' puts lib<Name>.so next to context-host), copy the library "
                + "next to the manifest, or add its folder with --library-path DIR")
    }
}
