// YapDB: the public API (see docs/api.md and the README).
import YapDBEngine
