import YapDBIndex

/// The row a write transaction last looked up in its key directory's trees, and the answer
/// (`WriteTransaction.lookup`). A write usually follows a check of the same row — the public
/// layer asks whether a row exists before telling the extensions, then removes or writes it —
/// and the memo spares that write a second walk of the trees.
///
/// Valid only while the trees are unchanged: the transaction forgets it wherever they change
/// (applying the write buffer, removing a collection or every row). Rows written since are in
/// the write buffer, which is searched before the trees, so they never reach the memo.
///
/// **Threading.** Part of one write transaction (one thread).
struct TreeLookupMemo {
    private var key: [UInt8] = []
    private var entry: KeydirEntry?
    private var isSet = false

    /// The remembered answer for `rowKey`: `.some(entry)` (nil entry: absent) on a hit, nil on
    /// a miss.
    func answer(for rowKey: UnsafeRawBufferPointer) -> KeydirEntry?? {
        guard isSet, key.count == rowKey.count else { return nil }
        return key.withUnsafeBytes { $0.elementsEqual(rowKey) } ? .some(entry) : nil
    }

    /// Remembers `entry` as the trees' answer for `rowKey` (its bytes are copied into a buffer
    /// kept from one lookup to the next).
    mutating func remember(_ rowKey: UnsafeRawBufferPointer, _ entry: KeydirEntry?) {
        key.removeAll(keepingCapacity: true)
        key.append(contentsOf: rowKey)
        self.entry = entry
        isSet = true
    }

    /// Forgets the answer (the trees changed).
    mutating func forget() { isSet = false }
}
