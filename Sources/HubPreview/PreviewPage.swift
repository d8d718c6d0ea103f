import Foundation

/// The preview page. `GET /` serves it with the current frame in it (server-rendered first paint: the drawing is
/// in the HTML, the frame JSON beside it), and it then follows `/events`: `render` replaces the view, `log` adds a
/// plugin log line, `activity` shows what the loop is doing. A click on a component posts its index path to
/// `/tap`; problems show as an overlay that can be dismissed; the side panel lists the plugins and the log.
enum PreviewPage {
    /// The page with `current` (a `PreviewFrame` as JSON) applied: its drawing inlined, its frame data embedded.
    static func html(current: Data?, drawing: String?) -> String {
        // "<" as \u003c (the same JSON string): a view's text holding "<!--" and "<script" would otherwise put the
        // HTML parser in a state where the element's own "</script>" no longer ends it, and the page's script
        // became data. With no "<" in it, the JSON cannot end or change the element it sits in.
        let frameJSON = current.map { String(decoding: $0, as: UTF8.self).replacing("<", with: "\\u003c") } ?? "null"
        return head + "<div id=\"view\" aria-hidden=\"true\">" + (drawing ?? "") + "</div>" + middle
            + "<script id=\"initial-frame\" type=\"application/json\">" + frameJSON + "</script>" + script
    }

    private static let head = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <title>hubhost dev</title>
        <link rel="icon" href="data:,">
        <style>
          :root { color-scheme: light dark; --header: 40px; }
          body { margin: 0; font: 13px/1.4 system-ui, sans-serif; background: #f2f2f2; color: #222; }
          aside { background: #f2f2f2; }
          /* The toolbar and the side panels stay in reach however far a long view is scrolled. */
          header { position: sticky; top: 0; z-index: 5; padding: 6px 12px; background: #1e1e1e; color: #eee; display: flex; flex-wrap: wrap; gap: 6px 16px; align-items: center; }
          header .state { color: #8fd18f; }
          header .state.down { color: #f08a8a; }
          header a { color: #9cc9ff; }
          #activity { color: #ffd24c; }
          /* The last result and the activity stay one line (cut, the whole text in their tooltip and the log): a
             long tap result wrapped the toolbar to three lines and moved the drawing down under the pointer. */
          #cause, #activity, #windowed { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 40vw; }
          /* One line in a wide window: the controls keep their size and the texts give way (a long result pushed
             the zoom and export links to a second line). */
          header { flex-wrap: nowrap; } header > * { flex-shrink: 0; }
          header > #cause, header > #activity, header > #windowed { flex-shrink: 1; min-width: 0; }
          @media (max-width: 800px) { header { flex-wrap: wrap; } }
          #plugins { table-layout: fixed; } #plugins td, #plugins th { overflow-wrap: anywhere; }
          #activity:not(:empty)::before { content: "⏳ "; }
          /* The side panel is pinned to the window's right edge, below the toolbar; the drawings take the rest and
             the page scrolls both ways (its scrollbars stay at the window's edges), so wide drawings (more widths,
             the gallery, a zoom) never push the panel out of the window or draw over it. */
          main { padding: 12px; margin-right: 384px; }
          /* The zoom's margins count inside it; its right padding lets the page scroll the drawings' right edge out
             from under the pinned panel. */
          #canvas-area { width: max-content; display: flow-root; padding-right: 372px; }
          #stage { position: relative; background: #fff; box-shadow: 0 1px 4px rgba(0,0,0,.2); }
          #view { position: relative; }
          #boxes { position: absolute; inset: 0; }
          .box { position: absolute; box-sizing: border-box; cursor: pointer; }
          .box:hover { outline: 1px dashed #1e90ff; }
          .box.tapped { outline: 2px solid #ff8c00; background: rgba(255,140,0,.12); }
          .box.inspected { outline: 2px solid #7a3cff; background: rgba(122,60,255,.10); }
          .box.story:hover { outline: 2px solid #1db954; }
          #story-name { display: inline-block; max-width: 36ch; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; vertical-align: bottom; }
          #overlay { display: none; position: fixed; left: 0; right: 0; top: var(--header); z-index: 10; max-height: 45vh; overflow: auto;
                     background: rgba(160,0,0,.92); color: #fff; padding: 8px 10px; white-space: pre-wrap;
                     font-family: ui-monospace, monospace; font-size: 12px; }
          #overlay.shown { display: block; }
          #overlay button { float: right; }
          aside { position: fixed; right: 0; top: var(--header); bottom: 0; width: 360px; box-sizing: border-box;
                  padding: 0 12px 12px; overflow: auto; background: #f2f2f2; z-index: 4; }
          aside input, aside textarea { box-sizing: border-box; max-width: 100%; }
          /* A narrow window: the panel goes below the drawings, which keep the window's width. */
          @media (max-width: 800px) {
            main { margin-right: 0; }
            #canvas-area { padding-right: 0; }
            aside { position: static; width: auto; padding: 12px; overflow: visible; }
          }
          .box:focus-visible { outline: 2px solid #1e90ff; }
          #extras { display: flex; gap: 16px; align-items: flex-start; }
          #extras figure { margin: 0; background: #fff; box-shadow: 0 1px 4px rgba(0,0,0,.2); }
          #extras figcaption { font-size: 11px; color: #555; padding: 2px 6px; }
          #canvas { display: flex; gap: 16px; align-items: flex-start; transform-origin: top left; width: max-content; }
          #inspector { background: #fff; padding: 6px; font-size: 12px; }
          #inspector dl { display: grid; grid-template-columns: auto 1fr; gap: 2px 8px; margin: 0 0 6px; }
          #inspector dt { color: #666; } #inspector dd { margin: 0; font-family: ui-monospace, monospace; word-break: break-all; }
          #inspector textarea { width: 100%; height: 120px; font-family: ui-monospace, monospace; font-size: 11px; }
          #inspector input[type=text] { width: 100%; }
          body.inspecting .box:hover { outline: 2px solid #7a3cff; }
          aside h2 { font-size: 13px; margin: 12px 0 4px; }
          table { border-collapse: collapse; width: 100%; background: #fff; font-size: 12px; }
          td, th { border-bottom: 1px solid #ddd; padding: 3px 6px; text-align: left; vertical-align: top; }
          tr.quarantined td, tr.rejected td { color: #a00; }
          #log { font-family: ui-monospace, monospace; font-size: 12px; white-space: pre-wrap; background: #fff;
                 max-height: 320px; overflow: auto; padding: 4px; }
          #log .trace, #log .debug { color: #888; } #log .warning { color: #a05a00; } #log .error, #log .critical { color: #a00; }
          /* The page's own panels follow the system's dark mode; the drawings keep their own colours. */
          @media (prefers-color-scheme: dark) {
            body, aside { background: #181818; color: #ddd; }
            #inspector, table, #log { background: #232323; color: #ddd; }
            td, th { border-color: #3a3a3a; }
            #inspector dt, #extras figcaption { color: #aaa; }
            #log .warning { color: #e0a040; } #log .error, #log .critical, tr.quarantined td, tr.rejected td { color: #f08a8a; }
          }
        </style>
        </head>
        <body data-sequence="0">
        <header id="header-bar"><h1 style="font-size:inherit;margin:0">hubhost dev</h1><span id="story-bar" hidden><button id="back-to-gallery" title="Back to the sheet of every story">← gallery</button> <strong id="story-name"></strong></span><span id="state" class="state" role="status">connecting…</span><span id="activity" aria-live="polite"></span>
          <span id="cause" aria-live="polite"></span><span id="windowed"></span><span style="flex:1"></span>
          <label><input type="checkbox" id="inspect-mode"> inspect</label>
          <label>width <select id="width" title="The interactive view's width, in points"><option value="320">320</option><option value="375">375</option><option value="390">390</option><option value="414">414</option><option value="768">768</option><option value="1024">1024</option></select></label>
          <select id="device" title="Add a device width"><option value="">+ device</option><option value="320">iPhone SE 320</option><option value="375">iPhone 375</option><option value="414">iPhone Plus 414</option><option value="768">iPad 768</option><option value="1024">Desktop 1024</option></select>
          <input id="widths" size="14" placeholder="more widths: 320,768" title="Widths drawn beside the view (comma-separated)">
          <select id="zoom" title="Zoom"><option value="0.5">50%</option><option value="0.75">75%</option><option value="1" selected>100%</option><option value="1.5">150%</option></select>
          <a id="export-svg" href="/export.svg" download="view.svg">SVG</a><a id="export-png" href="/export.png" download="view.png">PNG</a></header>
        <main>
          <div id="canvas-area"><div id="canvas"><div id="stage">
        """

    private static let middle = """
        <div id="boxes" role="group" aria-label="Components: Enter taps, or inspects in inspect mode"></div></div>
          <div id="extras"></div></div></div>
          <aside>
            <h2>Inspector</h2>
            <div id="inspector"><p id="inspector-hint">Tick "inspect", then click a component.</p>
              <dl id="inspected"></dl>
              <div id="editor" hidden>
                <label>title <input type="text" id="edit-title"></label>
                <label>subtitle <input type="text" id="edit-subtitle"></label>
                <label>custom (JSON) <textarea id="edit-custom"></textarea></label>
                <button id="apply-edit">Apply (in memory)</button> <span id="edit-result"></span>
              </div>
            </div>
            <h2>Plugins</h2>
            <table id="plugins"><thead><tr><th>file</th><th>id</th><th>version</th><th>build</th><th>state</th><th>namespaces</th><th>loaded</th></tr></thead><tbody></tbody></table>
            <h2 id="log-heading">Log</h2>
            <label>show <select id="level" aria-label="Log level"><option value="trace">all</option><option value="info" selected>info and up</option><option value="warning">warnings and errors</option></select></label>
            <div id="log"></div>
          </aside>
        </main>
        <div id="overlay" role="alert"><button id="dismiss" title="Dismiss (Escape)" aria-label="Dismiss the problems">✕</button><span id="problems"></span></div>

        """

    private static let script = """
        <script>
        const $ = (id) => document.getElementById(id);
        const same = (a, b) => Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => x === b[i]);
        const levels = ['trace', 'debug', 'info', 'notice', 'warning', 'error', 'critical'];
        let dismissed = '';
        let shownProblems = '';
        // The toolbar's result line: one line, cut by its style; the whole text is its tooltip.
        function setCause(value) { $('cause').textContent = value; $('cause').title = value; }
        function text(tag, value, className) { const e = document.createElement(tag); e.textContent = value ?? ''; if (className) e.className = className; return e; }
        let current = null;
        const layoutLimit = 33554400;
        // This page's id in its scroll requests: a frame another page's scroll caused is drawn here only when it
        // covers what this page shows (pages share one view, as mirrors of one device; each keeps its own place).
        const pageID = Math.random().toString(36).slice(2);
        function viewed() {
          const zoom = Number($('zoom').value) || 1;
          return { y: Math.max(0, -$('stage').getBoundingClientRect().top / zoom), height: Math.max(1, window.innerHeight / zoom) };
        }
        function covers(w, frame) {
          const v = viewed();
          return (w.top <= 0 || v.y >= w.top) && (w.bottom >= frame.height || v.y + v.height <= w.bottom);
        }
        // `keepAddress`: the frame does not rewrite the page's address (the first frame of a server started again,
        // which knows nothing of the story the address names: the address is then followed instead).
        function apply(frame, initial, keepAddress) {
          if (!frame) return;
          // The event stream opens with the frame the page was served with: drawn and logged once.
          if (!initial && current && frame.sequence === current.sequence) return;
          if (!initial && frame.scrolled && frame.scrolledBy !== pageID && current && current.window && frame.window
              && !covers(frame.window, frame)) {
            current = Object.assign({}, current, { sequence: frame.sequence });
            return;
          }
          current = frame;
          if (!initial) $('view').innerHTML = frame.html;
          $('stage').style.width = frame.width + 'px';
          showWidth(frame.viewWidth ?? frame.width);
          fitHeight(frame);
          fitZoom();
          const boxes = $('boxes');
          // The box that has the keyboard's focus keeps it through the new frame (a tap, a scroll redraws them all).
          const focused = document.activeElement?.closest?.('#boxes .box');
          const refocus = focused ? { path: focused.dataset.indexPath, section: focused.dataset.section } : null;
          boxes.replaceChildren();
          // In the order they are seen: the header on top, then the body, then the overlays (Tab follows it).
          const rank = { header: 0, body: 1, overlay: 2 };
          for (const b of [...frame.boxes].sort((a, b) => (rank[a.section] ?? 1) - (rank[b.section] ?? 1))) {
            const d = document.createElement('div');
            const tapped = same(b.indexPath, frame.tapped) && (frame.tappedSection ?? 'body') === b.section;
            d.className = 'box' + (tapped ? ' tapped' : '');
            d.dataset.indexPath = b.indexPath.join('.');
            d.dataset.section = b.section;
            d.dataset.componentId = b.id;
            d.title = b.component + ' · ' + b.id + ' · ' + b.section + ' [' + b.indexPath.join(', ') + ']';
            // Reachable from the keyboard: Tab to it, Enter or Space taps it (or inspects it in inspect mode).
            d.tabIndex = 0;
            d.setAttribute('role', 'button');
            d.setAttribute('aria-label', d.title);
            Object.assign(d.style, { left: b.x + 'px', top: b.y + 'px', width: b.width + 'px', height: b.height + 'px' });
            boxes.appendChild(d);
            if (refocus && refocus.path === d.dataset.indexPath && refocus.section === d.dataset.section)
              d.focus({ preventScroll: true });
          }
          // The gallery's sheet: a click (or Enter) on a story opens it alone on the canvas, live.
          for (const p of frame.stories ?? []) {
            const d = document.createElement('div');
            d.className = 'box story';
            d.dataset.component = p.component;
            d.dataset.story = p.story;
            d.title = 'Open ' + p.component + ' — ' + p.story + ' at ' + p.width + ' pt on its own canvas';
            d.tabIndex = 0;
            d.setAttribute('role', 'button');
            d.setAttribute('aria-label', d.title);
            Object.assign(d.style, { left: p.x + 'px', top: p.y + 'px', width: p.w + 'px', height: p.h + 'px' });
            boxes.appendChild(d);
          }
          $('story-bar').hidden = !frame.story;
          $('story-name').textContent = frame.story ? frame.story.component + ' — ' + frame.story.story : '';
          $('story-name').title = $('story-name').textContent;
          document.title = (frame.story ? $('story-name').textContent + ' · ' : '') + 'hubhost dev';
          if (!initial && !keepAddress) saveState();
          // Opened or closed from the keyboard: the focus goes to "← gallery", and back to the story's drawing.
          if (pendingFocus === 'back' && frame.story) { $('back-to-gallery').focus(); pendingFocus = null; }
          if (pendingFocus === 'story' && frame.stories) {
            [...boxes.children].find(d => d.dataset.component === lastStory?.component && d.dataset.story === lastStory?.story)?.focus();
            pendingFocus = null;
          }
          // The inspector follows its component by id through every new frame (an edit, a file change): what it
          // shows and what Apply sends is never a stale model at an index that now holds another component.
          if (inspected && !initial) {
            const again = [...boxes.children].find(b => b.dataset.componentId === inspected.id && b.dataset.section === inspected.section);
            // A large view draws only the part near where the page is scrolled: a component scrolled away is not gone.
            if (again) { inspect(again); markInspected(); } else if (!frame.window) { inspected = null; $('editor').hidden = true; $('inspected').replaceChildren(text('dt', 'the component is gone from the view')); }
          }
          const problems = frame.problems.map(p => p.kind + ': ' + p.message).join('\\n');
          // New problems go to the log at their level (the "warnings and errors" filter shows them); a clean
          // frame forgets the dismissed text, so the same error coming back shows again.
          if (problems !== shownProblems) {
            for (const p of frame.problems)
              addLog({ level: p.kind === 'warning' ? 'warning' : 'error', time: new Date().toISOString(),
                       message: p.kind + ': ' + p.message, source: 'problem' });
            shownProblems = problems;
          }
          if (!problems) dismissed = '';
          $('problems').textContent = problems;
          // Warnings alone (a fallback the view names on purpose) stay in the log; an error raises the overlay.
          const errors = frame.problems.some(p => p.kind !== 'warning');
          $('overlay').className = errors && problems !== dismissed ? 'shown' : '';
          setCause('#' + frame.sequence + ' ' + frame.cause);
          document.body.dataset.sequence = String(frame.sequence);
          if (!frame.scrolled) addLog({ level: 'info', time: new Date().toISOString(), message: '#' + frame.sequence + ' ' + frame.cause, source: 'reload' });
          // A large view is drawn near where the page is scrolled: exporting it takes `hubhost render`.
          // So is a PNG taller or wider than a PNG can be (the SVG link draws it).
          $('export-svg').hidden = !!frame.window;
          $('export-png').hidden = !!frame.window || frame.width > 32768 || frame.height > 32768;
          if (scrollAsked && frame.sequence > scrollAsked) scrollAsked = 0;
          // Every frame is checked against this page's place: a first paint, a reload drawn where another page is.
          requestAnimationFrame(checkWindow);
          const extras = $('extras');
          extras.replaceChildren();
          for (const extra of frame.extras ?? []) {
            const figure = document.createElement('figure');
            figure.dataset.width = String(extra.width);
            figure.innerHTML = extra.html;
            figure.appendChild(text('figcaption', extra.width + ' pt'));
            extras.appendChild(figure);
          }
          // The widths asked for (the gallery draws them in its sheet, with no extras of its own).
          if (document.activeElement !== $('widths')) $('widths').value = (frame.extraWidths ?? (frame.extras ?? []).map(e => e.width)).join(',');
          const rows = $('plugins').tBodies[0];
          rows.replaceChildren();
          for (const p of frame.plugins ?? []) {
            const tr = document.createElement('tr');
            tr.className = p.state;
            tr.dataset.file = p.file;
            for (const value of [p.file, p.id, p.version, p.build,
                                 p.state + (p.reason ? ': ' + p.reason : ''), (p.namespaces ?? []).join('; '),
                                 p.loadedAt ? p.loadedAt.replace('T', ' ').replace('Z', '') + ' (' + p.loadMilliseconds + ' ms)' : ''])
              tr.appendChild(text('td', value));
            rows.appendChild(tr);
          }
        }
        // A browser lays out at most 33,554,428 px, the zoom's margin included: a view taller than that (divided by a
        // zoom above 100%) is shown to there, drawn at its scale (squeezed to fit, a click landed on another
        // component), and the header says so.
        function fitHeight(frame) {
          const limit = Math.floor(layoutLimit / Math.max(1, Number($('zoom').value) || 1));
          const tooTall = frame.height > limit;
          $('stage').style.minHeight = Math.min(frame.height, limit) + 'px';
          const svg = $('view').querySelector('svg');
          if (svg && tooTall) {
            // Its own attributes are kept, to put back when a smaller zoom shows it whole again.
            if (svg.dataset.height === undefined) {
              svg.dataset.height = svg.getAttribute('height') ?? '';
              svg.dataset.viewBox = svg.getAttribute('viewBox') ?? '';
            }
            svg.setAttribute('height', String(limit));
            svg.setAttribute('viewBox', '0 0 ' + frame.width + ' ' + limit);
          } else if (svg && svg.dataset.height !== undefined) {
            svg.setAttribute('height', svg.dataset.height);
            svg.setAttribute('viewBox', svg.dataset.viewBox);
            delete svg.dataset.height;
            delete svg.dataset.viewBox;
          }
          $('windowed').textContent = !frame.window ? ''
            : frame.window.components + ' components: drawn near where you scroll'
              + (tooTall ? '; at this zoom a browser page shows only its first ' + limit + ' of ' + Math.round(frame.height)
                 + ' pt (hubhost render draws it whole)' : '');
        }
        function addLog(entry) {
          const line = text('div', entry.time.slice(11, 23) + ' ' + entry.level.padEnd(8) + (entry.source ? entry.source + ': ' : '') + entry.message, entry.level);
          line.dataset.level = entry.level;
          line.hidden = levels.indexOf(entry.level) < levels.indexOf($('level').value);
          $('log').prepend(line);
          while ($('log').childElementCount > 1000) $('log').lastChild.remove();
        }
        $('level').addEventListener('change', () => {
          for (const line of $('log').children) line.hidden = levels.indexOf(line.dataset.level) < levels.indexOf($('level').value);
        });
        $('dismiss').addEventListener('click', () => { dismissed = $('problems').textContent; $('overlay').className = ''; });
        document.addEventListener('keydown', (event) => {
          if (event.key === 'Escape' && $('overlay').className === 'shown') $('dismiss').click();
        });
        let inspected = null;
        // What the page shows of its own (the zoom, the component inspected) is kept in the address's #fragment,
        // so a reload, or the link sent to someone, shows the same: #zoom=1.5&inspect=body:0.2
        let inspectedAt = null;
        // A story in the address: component/story (a component's id has no slash).
        const storyParam = (key) => key ? key.component + '/' + key.story : null;
        function saveState() {
          const state = new URLSearchParams();
          if ($('zoom').value !== '1') state.set('zoom', $('zoom').value);
          if ($('inspect-mode').checked) state.set('inspect', inspectedAt ?? '');
          if (current && current.story) state.set('story', storyParam(current.story));
          const fragment = state.toString();
          history.replaceState(null, '', fragment ? '#' + fragment : location.pathname + location.search);
        }
        // `navigated`: the address changed under the page (Back, forward, an address edited), which it follows;
        // else the page just opened, and its address takes what is shown (a story another tab opened).
        function restoreState(navigated) {
          const state = new URLSearchParams(location.hash.slice(1));
          const zoom = state.get('zoom') ?? '1';
          if ([...$('zoom').options].some(o => o.value === zoom) && zoom !== $('zoom').value) {
            $('zoom').value = zoom;
            $('zoom').dispatchEvent(new Event('change'));
          }
          // A link to a story of the gallery opens it (component/story: the component's id has no slash); an
          // address without one, reached by Back, shows the sheet again.
          const story = state.get('story');
          const shown = storyParam(current && current.story);
          const slash = story ? story.indexOf('/') : -1;
          if (current && (current.stories || current.story) && story !== shown) {
            if (slash > 0) openStory({ component: story.slice(0, slash), story: story.slice(slash + 1) });
            else if (navigated && shown) openStory(null);
            else saveState();
          }
          const at = state.get('inspect');
          if ((at !== null) !== $('inspect-mode').checked) $('inspect-mode').click();
          if (!at || at === inspectedAt) return;
          // section:index.path; the server finds it even where a large view is not drawn now, and the page goes there.
          const [section, path] = at.split(':');
          if (['body', 'header', 'overlay'].includes(section) && /^(\\d{1,9}(\\.\\d{1,9}){0,63})?$/.test(path ?? '')) inspectAt(section, path ?? '', true);
        }
        const inspect = (box) => inspectAt(box.dataset.section, box.dataset.indexPath, false);
        // The component the inspector shows is marked in the drawing (by id: the frame's boxes are new each time).
        function markInspected() {
          for (const b of $('boxes').children)
            b.classList.toggle('inspected', !!inspected && $('inspect-mode').checked
              && b.dataset.componentId === inspected.id && b.dataset.section === inspected.section);
        }
        async function inspectAt(section, path, reveal) {
          inspectedAt = section + ':' + path;
          saveState();
          const reply = await fetch('/inspect?section=' + section + '&path=' + path);
          const list = $('inspected');
          list.replaceChildren();
          // Not JSON when there is nothing to ask (no worker while one restarts): said in the panel.
          if (!reply.ok) { inspected = null; list.appendChild(text('dt', await reply.text())); $('editor').hidden = true; return; }
          inspected = await reply.json();
          if (!inspected) { list.appendChild(text('dt', 'nothing there')); $('editor').hidden = true; return; }
          const frame = inspected.frame ? [inspected.frame.x, inspected.frame.y, inspected.frame.width, inspected.frame.height].join(', ') : '';
          for (const [k, v] of [['id', inspected.id], ['component', inspected.component], ['category', inspected.category],
                                ['plugin', inspected.source], ['section', inspected.section + ' [' + inspected.indexPath.join(', ') + ']'],
                                ['frame', frame], ['traits', inspected.traits.join(', ')], ['selection', inspected.selectionState],
                                ['UI state', inspected.uiState ?? '—'], ['model', inspected.model]]) {
            list.appendChild(text('dt', k)); list.appendChild(text('dd', v));
          }
          const model = JSON.parse(inspected.model);
          $('edit-title').value = model.text?.title ?? '';
          $('edit-subtitle').value = model.text?.subtitle ?? '';
          $('edit-custom').value = JSON.stringify(model.custom ?? {}, null, 1);
          $('editor').hidden = false;
          $('edit-result').textContent = '';
          markInspected();
          $('inspector-hint').hidden = true;
          // Opened from a link: the component is brought into the window if it is not in it.
          const zoom = Number($('zoom').value) || 1;
          const top = inspected.frame && $('stage').getBoundingClientRect().top + window.scrollY + inspected.frame.y * zoom;
          if (reveal && inspected.frame && (top < window.scrollY || top > window.scrollY + window.innerHeight - 40))
            window.scrollTo(0, Math.max(0, top - 80));
        }
        $('apply-edit').addEventListener('click', async () => {
          if (!inspected) return;
          const model = JSON.parse(inspected.model);
          // Only what the fields say: an empty field leaves its key out (an empty subtitle still takes a line).
          const texts = Object.assign({}, model.text ?? {});
          for (const [key, value] of [['title', $('edit-title').value], ['subtitle', $('edit-subtitle').value]]) {
            if (value) texts[key] = value; else delete texts[key];
          }
          if (Object.keys(texts).length) model.text = texts; else delete model.text;
          let custom;
          try { custom = JSON.parse($('edit-custom').value || '{}'); } catch (e) { $('edit-result').textContent = 'custom: ' + e.message; return; }
          if (custom && typeof custom === 'object' && Object.keys(custom).length === 0) delete model.custom; else model.custom = custom;
          const reply = await fetch('/edit', { method: 'POST', headers: { 'Content-Type': 'application/json' },
                                               body: JSON.stringify({ section: inspected.section, indexPath: inspected.indexPath, model }) });
          $('edit-result').textContent = reply.ok ? (await reply.json()).result : await reply.text();
        });
        // The interactive view's width: the choices, and the width the view is drawn at if it is none of them.
        function showWidth(width) {
          const select = $('width'), value = String(width);
          if (![...select.options].some(o => o.value === value)) select.appendChild(Object.assign(document.createElement('option'), { value, textContent: value }));
          if (document.activeElement !== select) select.value = value;
        }
        $('width').addEventListener('change', () => postWidths({ width: Number($('width').value) }));
        async function postWidths(change) {
          const reply = await fetch('/widths', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(change) });
          if (!reply.ok) {
            // Refused (a width out of range, too many): said where the user looks, not dropped.
            const why = 'widths not changed: ' + (await reply.text());
            setCause(why);
            addLog({ level: 'error', time: new Date().toISOString(), message: why, source: 'widths' });
            return;
          }
          // Accepted but not drawn (a large view): the reason, not "widths changed".
          const result = (await reply.json()).result ?? '';
          if (result.startsWith('not drawn')) {
            setTimeout(() => setCause(result), 100);
            addLog({ level: 'warning', time: new Date().toISOString(), message: result, source: 'widths' });
          }
        }
        // Every entry goes to the server, which says which one is not a width (1 to 4096); none is dropped here.
        const typedWidths = () => $('widths').value.split(',').map(s => s.trim()).filter(s => s !== '').map(Number);
        $('widths').addEventListener('change', () => postWidths({ widths: typedWidths() }));
        $('device').addEventListener('change', () => {
          const current = typedWidths();
          const width = Number($('device').value);
          if (width && !current.includes(width) && width !== Number($('width').value)) postWidths({ widths: [...current, width] });
          $('device').value = '';
        });
        // The scale transform leaves the layout as tall as at 100%: the margin takes the difference, so the page
        // scrolls exactly as far as the zoomed drawing goes.
        function fitZoom() {
          const zoom = Number($('zoom').value) || 1;
          $('canvas').style.transform = zoom === 1 ? '' : 'scale(' + zoom + ')';
          $('canvas').style.marginBottom = ((zoom - 1) * $('canvas').offsetHeight) + 'px';
          // And as wide: the drawing's column scrolls sideways exactly as far as the zoomed drawing goes.
          $('canvas').style.marginRight = ((zoom - 1) * $('canvas').offsetWidth) + 'px';
        }
        // The sticky toolbar's height (it wraps in a narrow window): the panels and the problems sit below it.
        // Measured whenever it changes size (a long tap result or note makes it wrap), not only on load.
        function fitHeader() { document.documentElement.style.setProperty('--header', $('header-bar').offsetHeight + 'px'); }
        fitHeader();
        new ResizeObserver(fitHeader).observe($('header-bar'));
        // A new zoom keeps the point of the view at the window's top where it was.
        let zoomShown = Number($('zoom').value) || 1;
        $('zoom').addEventListener('change', () => {
          const top = Math.max(0, -$('stage').getBoundingClientRect().top / zoomShown);
          if (current) fitHeight(current);
          fitZoom();
          zoomShown = Number($('zoom').value) || 1;
          if (top > 0) window.scrollTo(0, $('stage').getBoundingClientRect().top + window.scrollY + top * zoomShown);
        });
        $('inspect-mode').addEventListener('change', () => {
          document.body.classList.toggle('inspecting', $('inspect-mode').checked);
          markInspected();
          saveState();
        });
        $('zoom').addEventListener('change', saveState);
        // A fragment's change fires both popstate and hashchange: followed once (a link to a missing story asked
        // the server twice).
        window.addEventListener('hashchange', () => restoreState(true));
        $('boxes').addEventListener('keydown', (event) => {
          const box = event.target.closest('.box');
          if (!box || (event.key !== 'Enter' && event.key !== ' ')) return;
          event.preventDefault();
          box.click();
        });
        // A result said about the fields before they changed is not about them any more.
        for (const id of ['edit-title', 'edit-subtitle', 'edit-custom'])
          $(id).addEventListener('input', () => { $('edit-result').textContent = ''; });
        // Enter in a field of the inspector applies the edit, as a form would.
        for (const id of ['edit-title', 'edit-subtitle'])
          $(id).addEventListener('keydown', (event) => { if (event.key === 'Enter') $('apply-edit').click(); });
        let pendingFocus = null;
        let lastStory = null;
        async function openStory(key) {
          const reply = await fetch('/story', { method: 'POST', headers: { 'Content-Type': 'application/json' },
                                                body: JSON.stringify(key ?? {}) });
          const result = await reply.json().catch(() => ({ result: reply.statusText }));
          addLog({ level: reply.ok ? 'info' : 'warning', time: new Date().toISOString(), message: result.result, source: 'story' });
          // Not opened (a story no plugin has now): the address says again what is shown, and why shows up.
          if (!reply.ok) {
            saveState();
            $('problems').textContent = result.result;
            $('overlay').className = 'shown';
          }
        }
        // Opening a story or going back to the sheet is a step in the page's history: Back undoes it.
        function goToStory(key) {
          const state = new URLSearchParams(location.hash.slice(1));
          if (key) state.set('story', storyParam(key)); else state.delete('story');
          history.pushState(null, '', '#' + state.toString());
          openStory(key);
        }
        $('back-to-gallery').addEventListener('click', (event) => {
          pendingFocus = event.detail === 0 ? 'story' : null;
          goToStory(null);
        });
        $('boxes').addEventListener('click', async (event) => {
          const box = event.target.closest('.box');
          if (!box) return;
          if (box.classList.contains('story')) {
            lastStory = { component: box.dataset.component, story: box.dataset.story };
            pendingFocus = event.detail === 0 ? 'back' : null;  // a click the keyboard made (Enter) has no detail
            goToStory(lastStory);
            return;
          }
          if ($('inspect-mode').checked) { inspect(box); return; }
          const indexPath = box.dataset.indexPath.split('.').map(Number);
          const reply = await fetch('/tap', { method: 'POST', headers: { 'Content-Type': 'application/json' },
                                              body: JSON.stringify({ indexPath, section: box.dataset.section }) });
          const result = await reply.json();
          addLog({ level: reply.ok ? 'info' : 'warning', time: new Date().toISOString(), message: box.dataset.section + ' [' + indexPath.join(', ') + ']: ' + result.result, source: 'tap' });
        });
        // A large view (frame.window) holds only the part near where the page is scrolled: when the page's view
        // comes within half a screen of its edge, ask for the part around it. One request at a time; the frame it
        // causes (over /events) lets the next one go.
        let scrollAsked = 0;
        function checkWindow() {
          const w = current && current.window;
          if (!w || scrollAsked) return;
          const { y, height } = viewed();
          const margin = height / 2;
          const short = (w.top > 0 && y - margin < w.top) || (w.bottom < current.height && y + height + margin > w.bottom);
          if (!short) return;
          scrollAsked = current.sequence;
          fetch('/scroll', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ y, height, page: pageID }) })
            .then(reply => { if (!reply.ok) scrollAsked = 0; }, () => { scrollAsked = 0; });
          // No frame came (no event stream): ask again later rather than never.
          setTimeout(() => { if (scrollAsked === current.sequence) { scrollAsked = 0; checkWindow(); } }, 2000);
        }
        window.addEventListener('scroll', () => requestAnimationFrame(checkWindow), { passive: true });
        window.addEventListener('resize', () => requestAnimationFrame(checkWindow));
        // A page that another page's scrolling left behind asks again when its user comes back to it.
        window.addEventListener('focus', () => requestAnimationFrame(checkWindow));
        document.addEventListener('visibilitychange', () => { if (!document.hidden) requestAnimationFrame(checkWindow); });
        document.addEventListener('pointermove', () => requestAnimationFrame(checkWindow), { passive: true });
        $('zoom').addEventListener('change', () => requestAnimationFrame(checkWindow));
        apply(JSON.parse($('initial-frame').textContent), true);
        restoreState(false);
        // The browser retries a dropped stream by itself, but gives up for good after an answer that is not a
        // stream (a 503 while the server is at its stream limit): then a new one is opened a little later.
        let streamDropped = false;
        let lastHeard = Date.now();
        function heard() {
          lastHeard = Date.now();
          if ($('state').textContent === 'not responding') { $('state').textContent = 'live'; $('state').className = 'state'; }
        }
        setInterval(() => {
          if ($('state').textContent === 'live' && Date.now() - lastHeard > 12000) {
            $('state').textContent = 'not responding'; $('state').className = 'state down';
          }
        }, 1000);
        let retryDelay = 250;
        function connect() {
          const events = new EventSource('/events');
          events.addEventListener('render', (e) => {
            // After a dropped stream (`hubhost dev` stopped and started again), the page's address is the truth:
            // the story or component it names is opened again rather than forgotten for the new server's sheet.
            if (!streamDropped) return apply(JSON.parse(e.data), false);
            streamDropped = false;
            apply(JSON.parse(e.data), false, true);
            restoreState(true);
          });
          events.addEventListener('log', (e) => addLog(JSON.parse(e.data)));
          events.addEventListener('activity', (e) => {
            $('activity').textContent = $('activity').title = JSON.parse(e.data).activity ?? '';
          });
          events.onopen = () => { $('state').textContent = 'live'; $('state').className = 'state'; retryDelay = 250; heard(); };
          // The server pings every 4 s: nothing for 12 s is a server that does not answer (stopped, or busy).
          for (const kind of ['ping', 'render', 'log', 'activity']) events.addEventListener(kind, heard);
          events.onerror = () => {
            streamDropped = true;
            $('state').textContent = 'reconnecting…'; $('state').className = 'state down';
            // Retried here, waiting longer each time up to 2 s (the browser's own retry every 0.5 s logged an error
            // twice a second for as long as the server was down).
            events.close();
            setTimeout(connect, retryDelay);
            retryDelay = Math.min(retryDelay * 2, 2000);
          };
        }
        connect();
        </script>
        </body>
        </html>
        """
}
