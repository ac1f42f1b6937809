import YapDBFuzzEntry

// libFuzzer target "maintenance": FuzzEntry.maintainImage on each input (docs in Sources/YapDBFuzzEntry).

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    FuzzEntry.silenceLogging()
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    FuzzEntry.maintainImage(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}
