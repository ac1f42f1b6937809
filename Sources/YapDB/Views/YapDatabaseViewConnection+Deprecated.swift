import Foundation

/// YapDatabase 3.x's pointer form of `getChanges(forNotifications:withMappings:)`, still found in
/// apps: `var rows = NSArray(); viewConnection.getSectionChanges(&sections, rowChanges: &rows,
/// for: notifications, with: mappings)`. Deprecated; the arrays hold `YapDatabaseViewSectionChange`
/// and `YapDatabaseViewRowChange` objects.
extension YapDatabaseViewConnection {
    /// YapDatabase 3.x's form of `getChanges(forNotifications:withMappings:)`, for `NSArray`
    /// variables (either pointer may be nil).
    @available(*, deprecated, renamed: "getChanges(forNotifications:withMappings:)")
    public func getSectionChanges(_ sectionChangesPtr: UnsafeMutablePointer<NSArray>?, rowChanges rowChangesPtr: UnsafeMutablePointer<NSArray>?,
                                  for notifications: [Notification], with mappings: YapDatabaseViewMappings) {
        let (sections, rows) = getChanges(forNotifications: notifications, withMappings: mappings)
        sectionChangesPtr?.pointee = NSArray(array: sections)
        rowChangesPtr?.pointee = NSArray(array: rows)
    }

    /// YapDatabase 3.x's form of `getChanges(forNotifications:withMappings:)`, for `NSArray?`
    /// variables (either pointer may be nil).
    @available(*, deprecated, renamed: "getChanges(forNotifications:withMappings:)")
    public func getSectionChanges(_ sectionChangesPtr: UnsafeMutablePointer<NSArray?>?, rowChanges rowChangesPtr: UnsafeMutablePointer<NSArray?>?,
                                  for notifications: [Notification], with mappings: YapDatabaseViewMappings) {
        let (sections, rows) = getChanges(forNotifications: notifications, withMappings: mappings)
        sectionChangesPtr?.pointee = NSArray(array: sections)
        rowChangesPtr?.pointee = NSArray(array: rows)
    }
}
