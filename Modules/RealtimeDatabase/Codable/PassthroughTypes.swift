/// Decides which values ``Database/Encoder`` puts in its tree as they are, and which tree values
/// ``Database/Decoder`` returns as they are, instead of coding them (Firebase's hook for types
/// the tree holds natively).
///
/// ```swift
/// enum KeepPlaceholders: StructureCodingPassthroughTypeResolver {
///     static func isPassthroughType<T>(_ value: T) -> Bool { value is [String: String] }
/// }
/// encoder.passthroughTypeResolver = KeepPlaceholders.self   // ServerValue dictionaries stay as they are
/// ```
public protocol StructureCodingPassthroughTypeResolver {
    /// Whether `value` passes through uncoded. The decoder asks about the tree's value, and
    /// passes it through only when it already has the type being decoded.
    static func isPassthroughType<T>(_ value: T) -> Bool
}

/// Passes nothing through (the coders' default).
public struct NoPassthroughTypes: StructureCodingPassthroughTypeResolver {
    /// Always false.
    public static func isPassthroughType<T>(_ value: T) -> Bool { false }
}
