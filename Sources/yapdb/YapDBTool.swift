import ArgumentParser

/// The `yapdb` command-line tool.
@main
struct YapDBTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "yapdb",
        abstract: "Inspect, check and demonstrate YapDB databases.",
        subcommands: [Demo.self, MeasureCoders.self]
    )
}
