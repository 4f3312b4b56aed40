import CoreTree

/// Where a filter finds children it does not hold itself: the server cache layered with writes.
protocol CompleteChildSource {
    /// The complete data of `name`, if known.
    func completeChild(_ name: ChildKey) -> Node?
    /// The next child after `child` in `index` order (before it when `reverse`), if known.
    func child(after child: NamedNode, index: QueryIndex, reverse: Bool) -> NamedNode?
}

/// A source that knows nothing.
struct NoCompleteChildSource: CompleteChildSource {
    func completeChild(_ name: ChildKey) -> Node? { nil }
    func child(after child: NamedNode, index: QueryIndex, reverse: Bool) -> NamedNode? { nil }
}
