import Foundation

let usage = """
    usage: yapdb-bench [--size quick|full] [--only W1,W4 (W12Q: W12's queries alone)] [--engines sqlite,grdb,lmdb,floor] [--huge] [--w14-documents N] [--w14-build-reps N] [--work DIR] [--lending]
                       [--markdown PATH] [--json PATH] [--profiles PATH] [--perf-control CTL,ACK]
           yapdb-bench --only W14 --merge-into docs/benchmarks.json --json docs/benchmarks.json --markdown docs/benchmarks.md
           yapdb-bench --report-from RESULTS.json --markdown PATH [--profiles PATH]
    """

/// The settings and the profiles file named on the command line; exits with status 2 and the
/// usage on a bad argument.
func parseArguments(_ arguments: [String]) -> (Settings, String?) {
    var settings = Settings()
    var profilesPath: String?
    var index = 0
    func fail(_ message: String) -> Never {
        log("\(message)\n\(usage)")
        exit(2)
    }
    func value() -> String {
        index += 1
        guard index < arguments.count else { fail("\(arguments[index - 1]) needs a value") }
        return arguments[index]
    }
    while index < arguments.count {
        switch arguments[index] {
        case "--size":
            guard let size = Settings.Size(rawValue: value()) else { fail("--size is quick or full") }
            settings.size = size
        case "--only":
            settings.only = Set(value().uppercased().split(separator: ",").map(String.init))
        case "--engines":
            for name in value().lowercased().split(separator: ",") {
                switch name {
                case "sqlite": settings.engines.formUnion([.sqliteNormal, .sqliteFull])
                case "lmdb": settings.engines.insert(.lmdb)
                case "grdb": settings.engines.insert(.grdb)
                case "floor": settings.engines.insert(.floor)
                case "yapdb": settings.engines.insert(.yapdb)
                default: fail("unknown engine \(name)")
                }
            }
        case "--huge": settings.huge = true
        case "--lending": YapReader.lends = true
        case "--huge-rows":
            guard let rows = Int(value()), rows > 1_001 else { fail("--huge-rows needs a number of rows above 1,001") }
            settings.huge = true
            settings.hugeRows = rows
        case "--w14-documents":
            guard let documents = Int(value()), documents >= 1_000 else { fail("--w14-documents needs a number of documents, at least 1,000") }
            settings.w14Documents = documents
        case "--w14-build-reps":
            guard let reps = Int(value()), reps >= 1 else { fail("--w14-build-reps needs a number of runs, at least 1") }
            settings.w14BuildReps = reps
        case "--work": settings.workFolder = URL(fileURLWithPath: value())
        case "--markdown": settings.markdownPath = value()
        case "--json": settings.jsonPath = value()
        case "--profiles": profilesPath = value()
        case "--report-from": settings.reportFrom = value()
        case "--merge-into": settings.mergeInto = value()
        case "--perf-control":
            let paths = value().split(separator: ",").map(String.init)
            guard paths.count == 2, let control = PerfControl(controlPath: paths[0], ackPath: paths[1]) else {
                fail("--perf-control needs CTL_FIFO,ACK_FIFO that can be opened")
            }
            PerfControl.shared = control
        case "-h", "--help":
            print(usage)
            exit(0)
        default:
            fail("unknown argument \(arguments[index])")
        }
        index += 1
    }
    return (settings, profilesPath)
}
