import Foundation

/// Auto-consolidated groups: while the groups together show fewer rows than a threshold, the
/// table shows them as one section named after the consolidated group (a short list reads
/// better without headers); past it, each group has its section again. The change set moves
/// the rows between the sections when the mappings switch.
extension YapDatabaseViewMappings {
    /// Shows every group as one section named `consolidatedGroupName` while all groups
    /// together show fewer than `threshold` rows (0 turns it off). A name that is one of the
    /// mapped groups is refused (logged; consolidation turns off).
    public func setAutoConsolidateGroupsThreshold(_ threshold: UInt, withName consolidatedGroupName: String) {
        consolidationThreshold = threshold
        consolidationName = consolidatedGroupName
        validateConsolidation()
    }

    /// The threshold below which the groups are consolidated (0: never).
    public func autoConsolidateGroupsThreshold() -> UInt { consolidationThreshold }

    /// The consolidated section's group name, or nil when consolidation is off.
    public func consolidatedGroupName() -> String? { consolidationName }

    /// Whether the groups show as one section now (as of the last update).
    public func isUsingConsolidatedGroup() -> Bool {
        guard consolidationThreshold > 0, consolidationName != nil, snapshotOfLastUpdate != .max else { return false }
        return UInt(allGroups.reduce(0) { $0 + shownCount($1) }) < consolidationThreshold
    }

    /// Turns consolidation off when its name is a mapped group's, or either setting is unset.
    func validateConsolidation() {
        if let name = consolidationName, allGroups.contains(name) {
            YapDatabaseLogging.log(.warning, "mappings: the consolidated group's name \(name) is a group of the view; consolidation is off")
            consolidationName = nil
        }
        if consolidationName == nil || consolidationThreshold == 0 {
            consolidationName = nil
            consolidationThreshold = 0
        }
    }

    /// The rows shown before `group`'s in the consolidated section.
    func consolidatedOffset(of group: String) -> Int {
        var offset = 0
        for other in sectionGroups() {
            if other == group { return offset }
            offset += shownCount(other)
        }
        return offset
    }
}
