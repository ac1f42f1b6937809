// YapDBIndex: in-memory structures with no I/O — the persistent keydir map, the persistent
// order-statistic B-tree used by views, and the LRU cache. Each has `checkInvariants()`.
