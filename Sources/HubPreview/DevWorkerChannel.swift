import Foundation
import HubCore
import HubHost
import HubRender
import Logging

/// The messages between `hubhost dev` (the supervisor: preview server, UI-state copy, quarantines) and its
/// worker (the dev loop: plugins, watchers, renders, taps). One JSON object a line: the supervisor writes to the
/// worker's stdin, the worker to its fd 4.
public enum DevWorkerChannel {
    /// Supervisor → worker.
    public struct ToWorker: Codable, Sendable {
        /// The first line: the UI states to restore (those the previous worker last reported).
        public var uiStates: [String: String]?
        /// The first line: frame sequence numbers continue after this one.
        public var lastSequence: Int?
        /// The first line: the page's workbench as the previous worker left it (widths, the view edited in memory).
        public var workbench: Workbench?
        public var tap: Tap?
    }

    /// What the page set up that a worker started after a crash must not lose.
    public struct Workbench: Codable, Sendable, Equatable {
        public var widths: [Double] = []
        /// The interactive view's width (the command line's, or the one the page chose).
        public var width: Double?
        /// The view as the page's edits left it; nil when it is the file's.
        public var editedView: String?
        /// Edits the previous worker ended before answering, to carry out after `editedView`.
        public var pendingEdits: [PreviewRequest]?
        /// Gallery mode: the story open on its canvas.
        public var story: StoryKey?
        /// Gallery mode: the open story's view (Hub JSON text), which has no file: a fault in it is named from this.
        public var storyView: String?
        /// The view file's text when it last decoded (see `DevLoop.Options.lastGoodViewText`); sent only with
        /// renders that read the file, and kept by the supervisor until a newer one comes.
        public var fileView: String?
    }

    /// A page's request (tap, inspect, edit, widths) with the id its reply carries.
    public struct Tap: Codable, Sendable {
        public var id: Int
        public var request: PreviewRequest
    }

    /// Worker → supervisor. With `frameFollows`, the next line is the frame, as `PreviewFrame` JSON (sent as is,
    /// so that the supervisor publishes it without decoding it).
    public struct FromWorker: Codable, Sendable {
        public var frameFollows: Bool?
        public var sequence: Int?
        /// What the terminal shows for it (the reload line and any warnings).
        public var lines: [String]?
        /// Every UI state after this render, by model id.
        public var uiStates: [String: String]?
        public var tapped: TapReply?
        /// A plugin's log line (every level; the page filters).
        public var log: LogEntry?
        /// What the loop started doing ("" when it is done).
        public var activity: String?
        /// With a frame that changed it: the workbench now.
        public var workbench: Workbench?
        /// The view file's text, sent as soon as the worker read it (before drawing it): a crash while drawing it
        /// names its models from this text, not from the view drawn before ("" when too large to send).
        public var viewRead: String?
    }

    /// A log line as the page's log panel shows it.
    public struct LogEntry: Codable, Sendable {
        public var time: String
        public var level: String
        /// The plugin ("com.example.rows 1.2.0 (librows.so)").
        public var source: String
        public var message: String

        public init(time: Date = Date(), level: String, source: String, message: String) {
            self.time = ISO8601DateFormatter.withFractions.string(from: time)
            self.level = level
            self.source = source
            self.message = message
        }
    }

    public struct TapReply: Codable, Sendable {
        public var id: Int
        public var result: String
    }

    /// The worker's file descriptor for messages to the supervisor.
    public static let outputDescriptor: Int32 = 4

    /// Writes one message as a line.
    static func send<T: Encodable>(_ message: T, to pipe: PipeEnd, lock: NSLock) {
        guard var data = try? JSONEncoder().encode(message) else { return }
        data.append(10)
        lock.lock()
        defer { lock.unlock() }
        data.withUnsafeBytes { _ = pipe.write($0) }
    }

    /// Reads lines from `fd` until end of file, calling `body` with each (on the calling thread).
    static func readLines(_ fd: Int32, _ body: (Data) -> Void) { LineReader.read(fd, body) }
}

/// The worker side of `hubhost dev`: runs the dev loop and reports every render to the supervisor, and applies
/// the taps it forwards. It exits when the supervisor goes away (its stdin closes).
public final class DevWorker: @unchecked Sendable {
    private let out = PipeEnd(DevWorkerChannel.outputDescriptor, closesWhenDone: false)
    private let lock = NSLock()
    private var loop: DevLoop?
    /// The view's warnings the terminal shows now (each is said once while it stands).
    private var saidViewWarnings: Set<String> = []
    /// The story open as the supervisor last heard it (a plugin rebuilt can close it).
    private var reportedStory: StoryKey?

    public init() {}

    /// Reads the supervisor's first line, starts the loop with `options` (plus the states to restore) and serves
    /// taps until stdin closes. Call on the main thread; never returns.
    public func run(
        options: DevLoop.Options, logger: Logger, html: @escaping ViewDrawing,
        gallery: @escaping GallerySheetDrawing, started: (DevLoop) -> Void
    ) throws -> Never {
        var options = options
        options.reportUIStates = true
        var hello: DevWorkerChannel.ToWorker?
        Self.readFirstLine().map { hello = try? JSONDecoder().decode(DevWorkerChannel.ToWorker.self, from: $0) }
        options.initialUIStates = hello?.uiStates ?? [:]
        options.lastGoodViewText = hello?.workbench?.fileView
        options.editedViewText = hello?.workbench?.editedView
        // The page's widths are part of the first render, not a change of their own ("widths changed" at every
        // restart read as if someone had changed them).
        if let widths = hello?.workbench?.widths, !widths.isEmpty { options.extraWidths = widths }
        if let width = hello?.workbench?.width { options.viewport.width = width }
        options.openStory = hello?.workbench?.story
        reportedStory = options.openStory
        let firstSequence = hello?.lastSequence ?? 0

        // What plugin code prints goes to stderr, as in every other command (the worker's stdout is the terminal's).
        StandardOutput.divertPluginOutput()
        let loop = DevLoop(options: options, logger: logger)
        self.loop = loop
        loop.onRender = { [weak self] output in
            guard let self else { return }
            var frame = DevPreview.frame(from: output, html: html, gallery: gallery)
            frame.sequence += firstSequence
            let lines = DevPreview.terminalLines(output, alreadySaid: &self.saidViewWarnings)
            var envelope = DevWorkerChannel.FromWorker(
                frameFollows: true, sequence: frame.sequence, lines: lines, uiStates: output.uiStates)
            // Only renders that change it carry it (an edited view can be large); the file's text only with renders
            // that read the file.
            if [.edited, .widths, .viewUpdated, .initial, .story].contains(output.reload.result)
                || output.openStory != self.reportedStory
            {
                self.reportedStory = output.openStory
                envelope.workbench = .init(
                    widths: loop.options.extraWidths,
                    width: loop.options.viewport.width,
                    editedView: loop.editedViewJSON, story: loop.options.openStory,
                    storyView: loop.options.openStory == nil ? nil : loop.shownViewJSON)
                if [.viewUpdated, .initial].contains(output.reload.result) {
                    envelope.workbench?.fileView = loop.lastGoodViewText
                }
            }
            guard var data = try? JSONEncoder().encode(envelope), let json = try? JSONEncoder().encode(frame) else {
                return
            }
            // Envelope and frame in one write, so a tap reply can never come between them.
            data.append(10)
            data.append(json)
            data.append(10)
            self.lock.lock()
            data.withUnsafeBytes { _ = self.out.write($0) }
            self.lock.unlock()
        }
        loop.onViewRead = { [weak self] text in
            guard let self else { return }
            DevWorkerChannel.send(DevWorkerChannel.FromWorker(viewRead: text ?? ""), to: self.out, lock: self.lock)
        }
        loop.host.onPluginLog = { [weak self] record, level, message in
            guard let self else { return }
            let entry = DevWorkerChannel.LogEntry(level: level.rawValue, source: record.displayName, message: message)
            DevWorkerChannel.send(DevWorkerChannel.FromWorker(log: entry), to: self.out, lock: self.lock)
        }
        loop.onActivity = { [weak self] activity in
            guard let self else { return }
            DevWorkerChannel.send(DevWorkerChannel.FromWorker(activity: activity ?? ""), to: self.out, lock: self.lock)
        }
        // A changed module file: a fresh worker loads the plugins and binds the files again; the supervisor hands
        // it the page's state, as after a fault.
        loop.onModuleFilesChanged = { url in
            FileHandle.standardError.write(
                Data("hubhost dev: \(url.lastPathComponent) changed; a new worker binds the module files again\n".utf8))
            exit(WorkerEnvironment.replaceMeStatus)
        }
        try loop.start()
        // What the page had set up before this worker replaced a crashed one.
        if let workbench = hello?.workbench {
            for edit in workbench.pendingEdits ?? [] { _ = edit.answer(with: loop) }
        }
        started(loop)

        let queue = options.queue
        let reader = Thread { [weak self] in
            let worker = self
            DevWorkerChannel.readLines(0) { line in
                guard let message = try? JSONDecoder().decode(DevWorkerChannel.ToWorker.self, from: line),
                    let tap = message.tap
                else { return }
                queue.async {
                    guard let self = worker, let loop = self.loop else { return }
                    let result = tap.request.answer(with: loop)
                    DevWorkerChannel.send(
                        DevWorkerChannel.FromWorker(tapped: .init(id: tap.id, result: result)), to: self.out,
                        lock: self.lock)
                }
            }
            exit(0)  // the supervisor is gone
        }
        reader.name = "hubhost dev worker input"
        reader.start()
        // Not dispatchMain(): on Linux it ends the main thread and serves the main queue from another one, and
        // plugins (HubPluginKit's MainThreadBound) rightly insist on the thread that initialised them.
        MainThreadRunLoop.run()
    }

    /// The first line of stdin, read a byte at a time so nothing after it is consumed.
    private static func readFirstLine() -> Data? {
        var line = Data()
        var byte: UInt8 = 0
        while read(0, &byte, 1) == 1 {
            if byte == 10 { return line }
            line.append(byte)
        }
        return line.isEmpty ? nil : line
    }
}

extension ISO8601DateFormatter {
    /// "2026-11-24T07:50:12.345Z".
    static let withFractions: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()
}

/// Serves the main dispatch queue on the main thread for ever, without spinning.
public enum MainThreadRunLoop {
    public static func run() -> Never {
        // A run loop with no source returns at once; a far timer keeps it waiting for main-queue work instead.
        let keepAlive = Timer(timeInterval: 86_400, repeats: true) { _ in }
        RunLoop.main.add(keepAlive, forMode: .default)
        while true { _ = RunLoop.main.run(mode: .default, before: .distantFuture) }
    }
}
