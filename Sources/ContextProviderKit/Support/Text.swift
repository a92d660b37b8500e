extension String {
    /// The string without leading and trailing white space (`Character.isWhitespace`: spaces,
    /// tabs, line breaks and the other Unicode spaces); shared by the bundled providers.
    package func trimmingWhitespace() -> String {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return String(slice)
    }
}
