// YapDBEngine: the MVCC key-value engine over raw bytes.
import YapDBStorage
import YapDBIndex
