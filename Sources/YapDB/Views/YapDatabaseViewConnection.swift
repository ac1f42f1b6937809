import Foundation

/// A view's per-connection object: `connection.ext(name) as? YapDatabaseViewConnection`.
public class YapDatabaseViewConnection {
    let view: YapDatabaseAutoView
    let name: String
    /// The connection this belongs to.
    public unowned let connection: YapDatabaseConnection

    /// The view this connection reads.
    public var parent: YapDatabaseView { view }

    init(view: YapDatabaseAutoView, name: String, connection: YapDatabaseConnection) {
        self.view = view
        self.name = name
        self.connection = connection
    }

    /// How the mapped sections and rows changed between the mappings' last update and the
    /// connection's current snapshot (call after the connection moved forward, e.g. with
    /// `beginLongLivedReadTransaction()`, passing the notifications it returned). Updates the
    /// mappings to the current snapshot.
    ///
    /// Consolidated, as YapDatabase reports them: a row deleted and inserted is a move (also
    /// between groups); inserted then deleted is nothing; the rows of an inserted (deleted)
    /// section are reported as inserts (deletes) beside the section change; a row updated in
    /// place is an update. A commit that rebuilt the view with a new grouping reports every row
    /// still shown as a move; a new sorting reports each as an update where it kept its place,
    /// else as a move.
    public func getChanges(forNotifications notifications: [Notification], withMappings mappings: YapDatabaseViewMappings)
        -> (sectionChanges: [YapDatabaseViewSectionChange], rowChanges: [YapDatabaseViewRowChange]) {
        let (groups, lists, snapshot) = connection.read { tx in
            let snapshot = tx.connection.snapshot
            let kept = Self.unchangedGroups(of: mappings, upTo: snapshot, in: notifications)
            let contents = mappings.contents(in: tx, keeping: kept)
            return (contents.groups, contents.lists, snapshot)
        }
        let before = mappings.copy() as! YapDatabaseViewMappings
        mappings.allGroups = groups
        mappings.lists = lists
        mappings.setSnapshot(snapshot)
        guard before.snapshotOfLastUpdate != .max else {
            // The first update: nothing to compare with.
            mappings.resetRanges()
            mappings.validateConsolidation()
            return ([], [])
        }
        var changed: [YapCollectionKey: YapDatabaseViewChangesBitMask] = [:]
        var rebuild: ViewRebuild?
        var placed: Set<YapCollectionKey> = []
        for changeset in ChangesetQueries.changesets(in: notifications) {
            for key in changeset.objectChanges { changed[key, default: []].insert(.changedObject) }
            for key in changeset.metadataChanges { changed[key, default: []].insert(.changedMetadata) }
            // A row inserted (or removed and set again) since the last update that the
            // mappings showed before was taken out and placed anew: a move. New rows are not
            // recorded one by one in the view's notes (`ViewEngine.insertRows`).
            placed.formUnion(changeset.insertedKeys)
            placed.formUnion(changeset.removedKeys)
        }
        for notification in notifications {
            if let extensions = notification.userInfo?[YapDatabaseNotificationKey.extensions] as? [String: Any],
               let touched = extensions[mappings.view] as? Set<YapCollectionKey> {
                for key in touched { changed[key, default: []].formUnion([.changedObject, .changedMetadata]) }
            }
            if let note = ViewCommitNote.note(for: mappings.view, in: notification) {
                if let kind = note.rebuild { rebuild = max(rebuild ?? kind, kind) }
                placed.formUnion(note.placed)
            }
        }
        return mappings.changes(from: before, changed: changed, placed: placed, rebuild: rebuild)
    }

    /// The groups of `mappings` whose rows are known not to have changed between their last
    /// update and `snapshot`, so their keys need not be read again: every commit in between is
    /// among `notifications` (their snapshots run without a gap), none rebuilt the view, and each
    /// that changed the view recorded which groups it changed. Empty (read every group) when
    /// any of that is not so: the result is then the same, only slower.
    static func unchangedGroups(of mappings: YapDatabaseViewMappings, upTo snapshot: UInt64,
                                in notifications: [Notification]) -> Set<String> {
        let last = mappings.snapshotOfLastUpdate
        guard last != .max, snapshot > last, !mappings.lists.isEmpty, !mappings.readsEveryGroup else { return [] }
        var changed: Set<String> = []
        var commits: [UInt64] = []
        for notification in notifications {
            guard let changeset = YapDatabaseChangeset(notification: notification) else { continue }
            commits.append(changeset.snapshot)
            if let note = ViewCommitNote.note(for: mappings.view, in: notification), note.rebuild != nil { return [] }
            let extensions = notification.userInfo?[YapDatabaseNotificationKey.extensions] as? [String: Any]
            guard extensions?[mappings.view] != nil else { continue }   // the view did not change
            guard let groups = (notification.userInfo?[ViewGroupChanges.userInfoKey] as? [String: Set<String>])?[mappings.view] else {
                return []
            }
            changed.formUnion(groups)
        }
        commits.sort()
        guard UInt64(commits.count) == snapshot - last,
              commits.enumerated().allSatisfy({ $0.element == last + 1 + UInt64($0.offset) }) else { return [] }
        return Set(mappings.lists.keys).subtracting(changed)
    }

    /// A rough size of the change set `notifications` make for this view: how many rows the
    /// view inserted, deleted or updated in those commits (a row changed twice counts twice).
    /// A screen can decide from it to reload instead of animating a large change; `getChanges`
    /// must still be called to move the mappings forward.
    public func numberOfRawChanges(forNotifications notifications: [Notification]) -> UInt {
        UInt(notifications.reduce(0) { $0 + (ViewCommitNote.note(for: name, in: $1)?.rawChanges ?? 0) })
    }

    /// `numberOfRawChanges(forNotifications:)` as Swift imports YapDatabase's
    /// `numberOfRawChangesForNotifications:`.
    public func numberOfRawChanges(for notifications: [Notification]) -> UInt {
        numberOfRawChanges(forNotifications: notifications)
    }

    /// Whether any of `notifications` changed this view: a row entered, left, moved within or
    /// changed inside it, or a row in it was touched. False for commits that touched only rows
    /// the view does not hold (another collection, or rows its grouping leaves out).
    public func hasChanges(forNotifications notifications: [Notification]) -> Bool {
        notifications.contains { notification in
            (notification.userInfo?[YapDatabaseNotificationKey.extensions] as? [String: Any])?[name] != nil
        }
    }

    /// Whether any of `notifications` changed this view (YapDatabase's spelling of
    /// `hasChanges(forNotifications:)`, which says what counts).
    public func hasChanges(for notifications: [Notification]) -> Bool {
        hasChanges(forNotifications: notifications)
    }

    /// Whether any of `notifications` changed `group` of this view: a row entered, left, moved
    /// within or changed inside it, or a row in it was touched. For a commit that rebuilt the
    /// view (a new grouping or sorting) and for filtered views, whose changed groups are not
    /// recorded, it answers as `hasChanges(for:)` does.
    public func hasChanges(forGroup group: String, in notifications: [Notification]) -> Bool {
        hasChanges(forAnyGroups: [group], in: notifications)
    }

    /// Whether any of `notifications` changed any of `groups` of this view (see
    /// `hasChanges(forGroup:in:)`).
    public func hasChanges(forAnyGroups groups: Set<String>, in notifications: [Notification]) -> Bool {
        notifications.contains { notification in
            guard (notification.userInfo?[YapDatabaseNotificationKey.extensions] as? [String: Any])?[name] != nil else { return false }
            guard let changed = (notification.userInfo?[ViewGroupChanges.userInfoKey] as? [String: Set<String>])?[name] else { return true }
            return !changed.isDisjoint(with: groups)
        }
    }
}

/// The connection object of an automatic view (`YapDatabaseSearchResultsViewConnection`
/// subclasses it).
public class YapDatabaseAutoViewConnection: YapDatabaseViewConnection {
    /// The view this connection reads.
    public var autoView: YapDatabaseAutoView { view }
}
