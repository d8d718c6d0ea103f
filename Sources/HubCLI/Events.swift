import ArgumentParser
import FoundationEssentials
import HubCore
import HubHost
import HubRender

#if canImport(Glibc)
    import Glibc
#endif

/// `hubhost events VIEW.json SCRIPT.jsonl`: replay an event script against a view and trace what happens.
struct Events: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract:
            "Replay an event script (taps, highlights, scrolls, resizes, time, actions, images) against a view and trace every call into a plugin.",
        discussion: """
            The script has one JSON object a line (blank lines and lines starting with # or // are skipped):
              {"event": "tap"|"highlight"|"unhighlight", "indexPath": [i, child…]}  or  "point": {"x": X, "y": Y}
              {"event": "scroll", "y": OFFSET}
              {"event": "resize", "width": W, "height": H}
              {"event": "advance", "seconds": S}
              {"event": "action", "indexPath": [i…], "action": "namespace:name", "custom": {…}}
              {"event": "image", "uri": URI, "ok": true|false}
              {"event": "snapshot", "name": NAME}   (a picture for hubhost snapshot; a no-op here)
            An optional "section": "header"|"overlays" ("overlay" is read the same) aims an index path at the \
            header or an overlay; the header itself is {"section": "header"} with no index path (or []), and [i] is \
            its child i. Points are in viewport coordinates, inside the viewport (overlays above the header above \
            the body; children inside their parents). A key \
            an event does not take is an error of that line, so a misspelt one cannot change what the line does.

            Images are read as render reads them (see hubhost help render): data: URIs, and local files inside \
            the view's folder or an --assets folder; other schemes go to a plugin's image-loader service.

            Time only passes with "advance" (Hub's 0.2 s highlight and deselect delays, plugin timers). Images \
            load at the end of the event that needs them, or after --image-latency seconds, or, with \
            --manual-images, only when an "image" event says how the load ended.

            The trace (stdout) has one line per event, then indented lines for every call into a component \
            (plugin or fallback), selection state, appearance, action with its outcome, opened URI and image. \
            --json prints JSON lines instead (appearance and selection records name the instance, "ns:name#n", as \
            call records do; null with --no-calls). --format renders the final state (to -o FILE, else after the trace): svg, png and html draw \
            the screen (the viewport at the scroll offset, as snapshot does), json and text every body component's \
            frame; images whose load is pending or failed are drawn as their placeholders. A replay that stopped at a bad line writes none, so an existing -o FILE is kept.

            \(ExitStatus.help([
                (.ok, "replayed"),
                (.problems, "replayed, but some events could not apply (a target off screen, …), bad lines were "
                    + "skipped (--keep-going), the view had problems or a plugin could not be loaded"),
                (.failed, "stopped at a bad script line, or the view or script cannot be read, or the output "
                    + "cannot be written"),
                (.notFound, "a --plugins folder does not exist (nothing replayed)"),
                (.pluginFault, "a plugin crashed, hung or exited in a step: it was quarantined; the replay stopped "
                    + "there, or with --keep-going ran that step again without it and went on"),
            ]))
            """
    )

    @Argument(help: ArgumentHelp("The view model (Hub JSON).", valueName: "view.json"))
    var view: String

    @Argument(help: ArgumentHelp("The event script (JSON lines).", valueName: "script.jsonl"))
    var script: String

    @OptionGroup var plugins: PluginOptions

    @OptionGroup var viewport: ViewportOptions

    @OptionGroup var images: ImageOptions

    @OptionGroup var isolation: IsolationOptions

    @Flag(help: "Print the trace as JSON lines.")
    var json = false

    @Option(help: "Also render the final state: json, svg, html, text or png (png needs -o).")
    var format: DrawingFormat?

    @Option(
        name: .shortAndLong, help: ArgumentHelp("Write the final rendering (--format) to this file.", valueName: "file")
    )
    var output: String?

    @Flag(
        name: .customLong("keep-going"),
        help:
            "Skip bad script lines (reported) instead of stopping at the first; after a plugin fault, go on with the next step in a fresh worker without that plugin."
    )
    var keepGoing = false

    @Flag(name: .customLong("manual-images"), help: "Image loads finish only when an \"image\" event says so.")
    var manualImages = false

    @Option(
        name: .customLong("image-latency"), parsing: .unconditional,
        help: ArgumentHelp(
            "Seconds (on the event clock) an image load takes; 0: at the end of the event.", valueName: "seconds"))
    var imageLatency: Double = 0

    @Flag(name: .customLong("no-calls"), help: "Leave calls into components out of the trace.")
    var noCalls = false

    @Option(parsing: .unconditional, help: "The margin of the host's default layout manager.")
    var margin: Double = 15

    func validate() throws {
        if let problem = InputLimits.problem(imageLatency, in: 0...InputLimits.seconds) {
            throw ValidationError("--image-latency: \(problem)")
        }
        if let problem = InputLimits.problem(margin, in: 0...InputLimits.margin) {
            throw ValidationError("--margin: \(problem)")
        }
        if output != nil && format == nil { throw ValidationError("-o needs --format") }
        // After the trace on stdout, a PNG's bytes would be unreadable text (or garble a terminal).
        if format == .png && (output == nil || output == "-") { throw ValidationError("--format png needs -o FILE") }
        if manualImages && imageLatency > 0 {
            throw ValidationError("--image-latency has no effect with --manual-images (image events end the loads)")
        }
        // The trace in JSON lines is one record a line: a drawing after it would break the stream.
        if json && format != nil && (output == nil || output == "-") {
            throw ValidationError("--json with --format needs -o FILE (the drawing would break the JSON-lines trace)")
        }
    }

    func run() throws {
        // A --plugins folder that does not exist stops the command before the view is read or anything written.
        try plugins.requireNamedFolders()
        // Plugin code runs in a worker (this command again); this process only supervises it.
        if isolation.supervises {
            OneShotSupervisor(
                isolation: isolation, plugins: plugins, viewFile: view, keepGoing: keepGoing, isEventScript: true
            ).run()
        }
        let loaded = try LoadedView.load(view, images: images)
        let viewURL = loaded.url
        let decoded = loaded.decoded
        let scriptBytes: [UInt8]
        do { scriptBytes = try readWholeFile(script, limit: EventScript.maxBytes) } catch {
            Diagnostics.print("\(script): cannot read: \(ErrorText.describe(error))")
            throw ExitCode(.failed)
        }

        let host = try plugins.makeHost()
        let pluginStatus = plugins.reportProblems(of: host)
        loaded.reportUnresolvedComponents(in: host)

        // A worker taking over after a plugin fault replays the steps before it silently: they were printed.
        let resumeAfter = WorkerEnvironment.resumeAfterStep
        var replaying = resumeAfter > 0
        // Lines are buffered and written when a step begins (and at the end), not one write per line: a step's
        // output is out before the next step's plugin calls, which is what a fault report needs.
        let out = TraceOutput()
        defer { out.flush() }
        let trace = EventTrace { [json, noCalls] record in
            if replaying || (noCalls && record.kind == .call) { return }
            if record.kind == .event { out.flush() }
            if json { out.append(record.jsonLine) } else { out.append(record) }
        }
        trace.keepRecords = false
        trace.buildsFields = json
        if !json {
            trace.callLineSink = { step, message in
                if replaying { return }
                out.appendCall(step: step, message: message)
            }
        }
        if !noCalls { host.registry.componentDecorator = ComponentTracer(trace: trace).decorate }

        let delivery: ComponentImageLoader.Delivery =
            manualImages ? .manual : imageLatency > 0 ? .after(seconds: imageLatency) : .endOfEvent
        let engine = host.makeEventEngine(
            viewModel: decoded.viewModel, viewport: viewport.size,
            viewFile: viewURL, layoutManager: DefaultLayoutManager(margin: margin),
            imageDelivery: delivery, imageAccess: loaded.access)
        engine.trace = trace
        trace.add(.note, "load \(view) (\(decoded.viewModel.body.count) body components) at \(viewport.size)")
        engine.load()
        // A fault while the view loaded (before any step): said in the trace too, not only on stderr.
        if WorkerEnvironment.isRestart && resumeAfter == 0 {
            noteFault(in: trace, "while the view loaded; it loaded again without that plugin")
        }

        var skipped = 0
        var stoppedAt: EventScriptError?
        for (number, line, invalidUTF8At) in EventScript.lines(of: scriptBytes) {
            let event: ViewEvent
            do {
                if let byte = invalidUTF8At {
                    throw EventScriptError(
                        file: script, line: number, reason: "invalid UTF-8 at byte \(byte) of the line")
                }
                event = try EventScript.parse(line, file: script, number: number)
            } catch let error as EventScriptError {
                Diagnostics.print("hubhost: \(ErrorText.describe(error))")
                trace.step = number
                trace.add(.error, "bad script line: \(error.reason)", [("line", .number(Double(number)))])
                if keepGoing {
                    skipped += 1
                    continue
                }
                stoppedAt = error
                break
            }
            // The step whose plugin faulted runs again, printed, now without that plugin (its components fall
            // back): its event still happens (a resize still resizes), and the trace has a line for it.
            let rerunsFaultedStep = replaying && number == resumeAfter
            if replaying && number >= resumeAfter { replaying = false }
            CallRecorder.noteStep(number)
            engine.apply(event, step: number)
            if rerunsFaultedStep { noteFault(in: trace, "in this step; it ran again without that plugin") }
        }
        CallRecorder.noteStep(0)

        let pool = engine.pipeline.pool
        trace.step = 0  // the summary is of no step
        // A replay stopped at a bad line did not get done: its summary says where it stopped.
        let ending = stoppedAt.map { "stopped at line \($0.line)" } ?? "done"
        trace.add(
            .note,
            "\(ending): \(pool.wrapperCount) component instance(s), \(engine.pipeline.bodyWrappers.count) live in the body "
                + "(at most \(engine.peakLiveBodyCount)), \(engine.images.pendingURIs.count) image load(s) pending, "
                + "\(engine.actions.pendingCount) asynchronous action(s) running; URIs opened: "
                + (host.services.openedURIs.isEmpty ? "none" : host.services.openedURIs.joined(separator: ", ")))
        // Rendering the final state draws every live component again; those calls are not part of the replay.
        trace.sink = nil
        trace.callLineSink = nil
        out.flush()

        // A replay that stopped at a bad line is not done (exit 2): the output file the user had is kept. So is one whose
        // trace could not be written (standard output closed or full: exit 2 as well; it was replaced).
        if let format, stoppedAt == nil, StandardOutput.writeFailure == nil {
            // A drawing shows the screen, as a snapshot of a step does (the whole content of a scrolled view drew
            // blank frames but for the few live ones); JSON and text keep every body component's frame.
            try format.write(
                format.needsDisplayLists ? engine.screenTree() : engine.renderTree(), naming: host.sourceNaming,
                access: loaded.access,
                unshownImages: engine.images.unshownURIs, suppliedImages: engine.images.suppliedImage, to: output)
        }
        host.registry.componentDecorator = nil
        engine.pipeline.tearDown()
        ProcessLifetime.keepUntilExit(loaded)

        if let stoppedAt {
            Diagnostics.print(
                "hubhost: replay stopped at \(stoppedAt.file):\(stoppedAt.line) (use --keep-going to skip bad lines)")
            throw ExitCode(.failed)
        }
        if skipped > 0 || !engine.problems.isEmpty || !loaded.problems.isEmpty {
            // As a script's parse errors are said: file:line: what.
            for problem in engine.problems {
                Diagnostics.print("hubhost: \(script)\(problem.step > 0 ? ":\(problem.step)" : ""): \(problem.message)")
            }
            if skipped > 0 { Diagnostics.print("hubhost: \(script): skipped \(skipped) bad line(s)") }
            throw ExitCode(pluginStatus ?? .problems)
        }
        if let pluginStatus { throw ExitCode(pluginStatus) }
    }
}

/// Trace lines on their way to stdout, written in large pieces.
final class TraceOutput {
    /// Main thread only: no dynamic exclusivity checks (they were a sixth of appending a line).
    @exclusivity(unchecked) private var buffer: [UInt8] = []

    func append(_ line: String) {
        var line = line
        line.withUTF8(appendLine)
    }

    /// The record's text line (`TerminalText.line(record.description)`).
    func append(_ record: TraceRecord) {
        var message = record.message
        message.withUTF8 { append(record.kind, step: record.step, message: $0) }
    }

    /// A component call's line from its message bytes (a text trace's `callLineSink`).
    func appendCall(step: Int, message: UnsafeBufferPointer<UInt8>) { append(.call, step: step, message: message) }

    /// A record's line from its parts, written in pieces when the message is printable and short, as nearly every
    /// message is; otherwise escaped and cut as `TerminalText.line` does.
    private func append(_ kind: TraceRecord.Kind, step: Int, message: UnsafeBufferPointer<UInt8>) {
        guard message.count + 32 <= TerminalText.lineLimit, TerminalText.isPrintable(message) else {
            let record = TraceRecord(kind: kind, step: step, message: String(decoding: message, as: UTF8.self))
            return append(TerminalText.line(record.description))
        }
        if kind == .event {
            buffer.append(UInt8(ascii: "#"))
            buffer.append(contentsOf: String(step).utf8)
        } else {
            let padded = kind.padded
            buffer.append(UInt8(ascii: " "))
            buffer.append(UInt8(ascii: " "))
            buffer.append(contentsOf: UnsafeBufferPointer(start: padded.utf8Start, count: padded.utf8CodeUnitCount))
        }
        buffer.append(UInt8(ascii: " "))
        appendLine(message)
    }

    private func appendLine(_ bytes: UnsafeBufferPointer<UInt8>) {
        buffer.append(contentsOf: bytes)
        buffer.append(10)
        if buffer.count > 1 << 16 { flush() }
    }

    func flush() {
        guard !buffer.isEmpty else { return }
        buffer.withUnsafeBytes { StandardOutput.write($0) }
        buffer.removeAll(keepingCapacity: true)
    }
}

extension Events {
    /// A trace record of the plugin fault this worker was started again after: which plugin, and why, as fields a
    /// script reads (`--json`), not only the stderr report.
    fileprivate func noteFault(in trace: EventTrace, _ when: String) {
        guard let fault = WorkerEnvironment.quarantined.last else { return }
        trace.add(
            .note, "\(PathText.fileName(fault.file)) faulted \(when): \(fault.reason)",
            [("fault", .string(fault.reason)), ("plugin", .string(fault.file))])
    }
}
