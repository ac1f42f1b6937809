import Foundation

/// Range options: a table shows a window of a group (a chat screen's last 50 messages, a feed's
/// first page). See `YapDatabaseViewRangeOptions` for how fixed and flexible ranges follow the
/// rows; `getChanges(forNotifications:withMappings:)` reports the rows that enter and leave the
/// window as inserts and deletes, and keeps the range's new length and offset.
extension YapDatabaseViewMappings {
    /// Shows only the rows of `group` in `rangeOpts` (nil removes the range). The options are
    /// copied; a group shown reversed gets them as the table sees it (pinned to the end of the
    /// table is pinned to the beginning of the view's group). Set it before the first update,
    /// or later (it applies from then on: the table must reload the section).
    public func setRangeOptions(_ rangeOpts: YapDatabaseViewRangeOptions?, forGroup group: String) {
        guard let rangeOpts else { return removeRangeOptions(forGroup: group) }
        guard isGroupNameValid(group, for: "setRangeOptions") else { return }
        var stored = isReversed(forGroup: group) ? rangeOpts.reversed() : rangeOpts.with(length: rangeOpts.length, offset: rangeOpts.offset)
        if snapshotOfLastUpdate != .max { stored = Self.clamped(stored, count: count(group)) }
        ranges[group] = stored
    }

    /// A copy of `group`'s range options as of the last update (its current length and
    /// offset), or nil.
    public func rangeOptions(forGroup group: String) -> YapDatabaseViewRangeOptions? {
        guard let range = ranges[group] else { return nil }
        return isReversed(forGroup: group) ? range.reversed() : range.with(length: range.length, offset: range.offset)
    }

    /// Shows every row of `group` again.
    public func removeRangeOptions(forGroup group: String) {
        ranges[group] = nil
    }

    /// Where `group`'s range lies in the group as the table shows it (reversed groups count
    /// from their ends); the whole group when it has no range.
    public func rangePosition(forGroup group: String) -> YapDatabaseViewRangePosition {
        guard group != consolidationName else { return YapDatabaseViewRangePosition(offsetFromBeginning: 0, offsetFromEnd: 0, length: 0) }
        let count = UInt(count(group))
        var position = YapDatabaseViewRangePosition(offsetFromBeginning: 0, offsetFromEnd: 0, length: count)
        if let range = ranges[group] {
            let far = range.offset + range.length
            let fits = far <= count
            switch range.pin {
            case .beginning:
                position = .init(offsetFromBeginning: range.offset, offsetFromEnd: fits ? count - far : 0, length: fits ? range.length : 0)
            case .end:
                position = .init(offsetFromBeginning: fits ? count - far : 0, offsetFromEnd: range.offset, length: fits ? range.length : 0)
            }
        }
        if isReversed(forGroup: group) { swap(&position.offsetFromBeginning, &position.offsetFromEnd) }
        return position
    }

    /// Whether `group` may be configured: a mapped group, or any group for mappings whose groups
    /// come from a filter block. Logs a warning otherwise.
    func isGroupNameValid(_ group: String, for operation: String) -> Bool {
        if groupFilter != nil || allGroups.contains(group) { return true }
        YapDatabaseLogging.log(.warning, "mappings \(operation): the mappings have no group \(group) (only \(allGroups))")
        return false
    }

    // MARK: Windows

    /// The indexes of `group` its range shows (view order), as of the last update.
    func window(_ group: String) -> Range<Int> {
        Self.window(ranges[group], count: count(group))
    }

    static func window(_ range: YapDatabaseViewRangeOptions?, count: Int) -> Range<Int> {
        guard let range else { return 0..<count }
        let offset = Int(clamping: range.offset), length = Int(clamping: range.length)
        switch range.pin {
        case .beginning:
            let low = min(offset, count)
            return low..<min(count, low + min(length, count - low))
        case .end:
            guard offset < count else { return 0..<0 }
            let high = count - offset
            return max(0, high - length)..<high
        }
    }

    /// `range` with its length cut to the rows the group has past its offset.
    static func clamped(_ range: YapDatabaseViewRangeOptions, count: Int) -> YapDatabaseViewRangeOptions {
        let available = UInt(max(0, count - Int(clamping: range.offset)))
        return range.with(length: min(range.length, available), offset: range.offset)
    }

    /// Fits every range to its group's rows (an update without a change set: the first
    /// update, or `update(with:)`).
    func resetRanges() {
        for (group, range) in ranges { ranges[group] = Self.clamped(range, count: count(group)) }
    }

    /// Moves every range from `before` (the previous update) to the rows as they are now,
    /// as YapDatabase does: a fixed range keeps its offset and its length (up to the rows
    /// available); a flexible range follows the rows inserted and deleted, as `ops` replays
    /// them, then is held between `minLength` and `maxLength`.
    func followRanges(from before: YapDatabaseViewMappings, placed: Set<YapCollectionKey>, rebuild: ViewRebuild?) {
        for (group, range) in ranges {
            let original = before.ranges[group] ?? range
            let newCount = count(group)
            if original.isFixedRange {
                let available = UInt(max(0, newCount - Int(clamping: original.offset)))
                ranges[group] = original.with(length: min(original.maxLength, available), offset: original.offset)
                continue
            }
            let ops = Self.rangeOps(old: before.lists[group] ?? [], new: lists[group] ?? [], placed: placed, rebuild: rebuild)
            ranges[group] = Self.followFlexible(original, oldCount: before.count(group), newCount: newCount, ops: ops)
        }
    }

    /// The group's changes as single-row operations on its list, in an order that replays
    /// them: deletions (the sources of moves included) from the highest index down, then
    /// insertions (the destinations of moves) from the lowest up.
    static func rangeOps(old: [YapCollectionKey], new: [YapCollectionKey], placed: Set<YapCollectionKey>,
                         rebuild: ViewRebuild?) -> [(isDelete: Bool, index: Int)] {
        var oldIndex: [YapCollectionKey: Int] = [:]
        for (i, key) in old.enumerated() { oldIndex[key] = i }
        var common: [Int] = [], weights: [Int] = [], positions: [Int] = []
        if rebuild != .regrouped {
            for (position, key) in new.enumerated() {
                // A row placed anew left and came back (a move: a delete and an insert).
                guard let i = oldIndex[key], !placed.contains(key) else { continue }
                common.append(i)
                weights.append(1)
                positions.append(position)
            }
        }
        let run = ViewDiff.heaviestIncreasingRun(common, weights: weights, size: old.count)
        let stayOld = Set(run.map { common[$0] }), stayNew = Set(run.map { positions[$0] })
        var ops: [(isDelete: Bool, index: Int)] = []
        for i in stride(from: old.count - 1, through: 0, by: -1) where !stayOld.contains(i) { ops.append((true, i)) }
        for i in 0..<new.count where !stayNew.contains(i) { ops.append((false, i)) }
        return ops
    }

    /// A flexible range after `ops` (YapDatabase's rules, in the view's order).
    static func followFlexible(_ range: YapDatabaseViewRangeOptions, oldCount: Int, newCount: Int,
                               ops: [(isDelete: Bool, index: Int)]) -> YapDatabaseViewRangeOptions {
        let offset = Int(clamping: range.offset), length = Int(clamping: range.length)
        var low: Int, high: Int
        switch range.pin {
        case .beginning: (low, high) = (offset, offset + length)
        case .end: (low, high) = offset < oldCount ? (oldCount - offset - length, oldCount - offset) : (0, 0)
        }
        low = max(0, low)
        high = max(low, high)
        var wasEmpty = high == low
        let growsAtPin = range.growOptions.contains(.pinSide), growsAway = range.growOptions.contains(.nonPinSide)
        for op in ops {
            if op.isDelete {
                if op.index < low { low -= 1 }
                if op.index < high { high -= 1 }
            } else {
                // At the low edge the row joins when the low side grows; at the high edge when
                // the high side grows. Which side is the pin's depends on the pin.
                let lowGrows = wasEmpty || (range.pin == .beginning ? growsAtPin : growsAway)
                let highGrows = wasEmpty || (range.pin == .beginning ? growsAway : growsAtPin)
                if lowGrows ? op.index < low : op.index <= low { low += 1 }
                if highGrows ? op.index <= high : op.index < high { high += 1 }
            }
            if !wasEmpty { wasEmpty = high == low }
        }
        // Held between minLength and maxLength.
        let maxLength = Int(clamping: range.maxLength), minLength = Int(clamping: range.minLength)
        if high - low > maxLength {
            let excess = high - low - maxLength
            if range.pin == .beginning { high -= excess } else { low += excess }
        } else if high - low < minLength && high - low < newCount {
            var missing = minLength - (high - low)
            if range.pin == .beginning {
                let atPin = min(missing, low)
                low -= atPin
                missing -= atPin
                high += min(missing, newCount - high)
            } else {
                let atPin = min(missing, newCount - high)
                high += atPin
                missing -= atPin
                low -= min(missing, low)
            }
        }
        let newOffset = range.pin == .beginning ? low : newCount - high
        return range.with(length: UInt(max(0, high - low)), offset: UInt(max(0, newOffset)))
    }
}
