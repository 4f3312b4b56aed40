import CoreTree

extension JSONReader {
    /// Reads a number that must be an integer the receiver can echo back exactly (a request
    /// number, a query tag, an exactly-once sequence): written as plain digits with an optional
    /// minus sign, and within `Int64`.
    ///
    /// A number with a fraction or an exponent, or past `Int64`, gives `nil` rather than the
    /// nearest double's integer: `9007199254740993` would otherwise come back as
    /// `9007199254740992`, and a reply would answer a request that was never sent.
    /// - Returns: the integer, or `nil` when the number is not one.
    /// - Throws: ``CoreTreeError`` when the next value is not a number or is malformed.
    mutating func readWireInteger() throws(CoreTreeError) -> Int64? {
        guard try peek() == .number else { throw CoreTreeError(.malformedJSON, "expected a number") }
        return Int64(try readRawValue())
    }
}
