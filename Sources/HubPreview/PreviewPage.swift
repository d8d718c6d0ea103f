/// The preview page: it opens `/events` and replaces the view with every pushed frame (no reload of the page),
/// puts a clickable box over each component (a click posts its index path to `/tap`), and shows quarantines and
/// JSON errors as an overlay.
enum PreviewPage {
    static let html = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <title>hubhost dev</title>
        <style>
          body { margin: 0; font: 13px/1.4 system-ui, sans-serif; background: #f2f2f2; color: #222; }
          header { padding: 6px 12px; background: #1e1e1e; color: #eee; display: flex; gap: 16px; }
          header .state { color: #8fd18f; }
          header .state.down { color: #f08a8a; }
          main { padding: 12px; display: flex; gap: 16px; align-items: flex-start; }
          #stage { position: relative; background: #fff; box-shadow: 0 1px 4px rgba(0,0,0,.2); }
          #view { position: relative; }
          #boxes { position: absolute; inset: 0; }
          .box { position: absolute; box-sizing: border-box; cursor: pointer; }
          .box:hover { outline: 1px dashed #1e90ff; }
          .box.tapped { outline: 2px solid #ff8c00; background: rgba(255,140,0,.12); }
          #overlay { display: none; position: absolute; left: 0; right: 0; top: 0; z-index: 10;
                     background: rgba(160,0,0,.92); color: #fff; padding: 8px 10px; white-space: pre-wrap;
                     font-family: ui-monospace, monospace; font-size: 12px; }
          #overlay.shown { display: block; }
          #log { font-family: ui-monospace, monospace; font-size: 12px; max-width: 480px; white-space: pre-wrap; }
        </style>
        </head>
        <body data-sequence="0">
        <header><b>hubhost dev</b><span id="state" class="state">connecting…</span><span id="cause"></span></header>
        <main>
          <div id="stage"><div id="view"></div><div id="boxes"></div><div id="overlay"></div></div>
          <div id="log"></div>
        </main>
        <script>
        const $ = (id) => document.getElementById(id);
        const same = (a, b) => Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => x === b[i]);
        function apply(frame) {
          $('view').innerHTML = frame.html;
          $('stage').style.width = frame.width + 'px';
          $('stage').style.minHeight = frame.height + 'px';
          const boxes = $('boxes');
          boxes.replaceChildren();
          for (const b of frame.boxes) {
            const d = document.createElement('div');
            d.className = 'box' + (same(b.indexPath, frame.tapped) ? ' tapped' : '');
            d.dataset.indexPath = b.indexPath.join('.');
            d.dataset.section = b.section;
            d.dataset.componentId = b.id;
            d.title = b.component + ' · ' + b.id + ' · [' + b.indexPath.join(', ') + ']';
            Object.assign(d.style, { left: b.x + 'px', top: b.y + 'px', width: b.width + 'px', height: b.height + 'px' });
            boxes.appendChild(d);
          }
          const overlay = $('overlay');
          overlay.textContent = frame.problems.map(p => p.kind + ': ' + p.message).join('\\n');
          overlay.className = frame.problems.length ? 'shown' : '';
          $('cause').textContent = '#' + frame.sequence + ' ' + frame.cause;
          document.body.dataset.sequence = String(frame.sequence);
          const log = $('log');
          log.textContent = ('#' + frame.sequence + ' ' + frame.cause + '\\n' + log.textContent).slice(0, 4000);
        }
        $('boxes').addEventListener('click', async (event) => {
          const box = event.target.closest('.box');
          if (!box || box.dataset.section !== 'body' && box.dataset.section !== 'header' && box.dataset.section !== 'overlay') return;
          const indexPath = box.dataset.indexPath.split('.').map(Number);
          const reply = await fetch('/tap', { method: 'POST', headers: { 'Content-Type': 'application/json' },
                                              body: JSON.stringify({ indexPath, section: box.dataset.section }) });
          const result = await reply.json();
          $('log').textContent = 'tap [' + indexPath.join(', ') + ']: ' + result.result + '\\n' + $('log').textContent;
        });
        const events = new EventSource('/events');
        events.addEventListener('render', (e) => apply(JSON.parse(e.data)));
        events.onopen = () => { $('state').textContent = 'live'; $('state').className = 'state'; };
        events.onerror = () => { $('state').textContent = 'reconnecting…'; $('state').className = 'state down'; };
        </script>
        </body>
        </html>
        """
}
