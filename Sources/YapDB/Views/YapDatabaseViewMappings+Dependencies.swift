import Foundation

/// Cell-drawing dependencies: a cell drawn with something of its neighbour (a chat bubble that
/// hides the sender's name when the previous message has the same sender, a timestamp shown
/// only when the gap to the previous message is large) must be redrawn when that neighbour
/// changes, even if its own row did not. The change set then holds an update for it with
/// `.changedDependency` in its `changes`.
extension YapDatabaseViewMappings {
    /// Each row of `group` is drawn with the row `offset` away in the table (-1: the row above,
    /// +1: the row below).
    public func setCellDrawingDependencyForNeighboringCell(withOffset offset: Int, forGroup group: String) {
        setCellDrawingDependencyOffsets([NSNumber(value: offset)], forGroup: group)
    }

    /// Each row of `group` is drawn with the rows at these offsets in the table (0 is ignored;
    /// an empty set removes the dependencies).
    public func setCellDrawingDependencyOffsets(_ offsets: Set<NSNumber>, forGroup group: String) {
        guard isGroupNameValid(group, for: "setCellDrawingDependencyOffsets") else { return }
        let sign = isReversed(forGroup: group) ? -1 : 1
        let valid = Set(offsets.map(\.intValue).filter { $0 != 0 }.map { $0 * sign })
        dependencies[group] = valid.isEmpty ? nil : valid
    }

    /// The offsets in the table of the rows each row of `group` is drawn with.
    public func cellDrawingDependencyOffsets(forGroup group: String) -> Set<NSNumber> {
        let sign = isReversed(forGroup: group) ? -1 : 1
        return Set((dependencies[group] ?? []).map { NSNumber(value: $0 * sign) })
    }
}
