import Foundation
import HubCore

/// The decode section: the view-model decoder alone over the writers section's 100k view, against a floor
/// that reads every byte once (UTF-8 validation, as the decoder itself starts with). The ratio says how far
/// building models is from just touching the input.
enum DecodeBench {
    static func run() throws {
        let json = Array(WritersBench.makeView(count: 100_000).utf8)
        var decodeTimes: [Double] = []
        var floorTimes: [Double] = []
        var models = 0
        for _ in 0..<15 {
            let start = Measure.threadCPU()
            let decoded = try ViewModelDecoder(file: "bench.json").decode(bytes: json)
            decodeTimes.append(Measure.threadCPU() - start)
            models = decoded.viewModel.body.count
            let floorStart = Measure.threadCPU()
            precondition(UTF8Check.firstInvalidByte(json) == nil)
            floorTimes.append(Measure.threadCPU() - floorStart)
        }
        let decode = Measure.medianOf(decodeTimes)
        let floor = Measure.medianOf(floorTimes)
        print("decode \(models) models (\(json.count / 1024) KiB), CPU, median of 15:")
        print(
            "  decoder: \(Measure.ms(decode)) (\(String(format: "%.0f", decode / Double(models) * 1e9)) ns/model, "
                + "\(String(format: "%.0f", Double(json.count) / decode / 1e6)) MB/s)")
        print("  UTF-8 check of the same bytes: \(Measure.ms(floor))  ratio \(Measure.ratio(decode, floor))")
    }
}
