/**
 * The reference's own stylesheet and its one script. Phone first: the navigation is a row of tags above the
 * content; from 960 px a sticky column beside it with every operation; from 1,200 px each operation sets its samples
 * beside its description. Code wraps rather than scrolls (no scroller a keyboard would have to reach). On screen,
 * an operation or object out of view is neither laid out nor painted until it comes near (`content-visibility:
 * auto`), so the first screen shows while the rest of a long page waits; the browser still finds its text (search
 * in page, anchors) and screen readers still read it. In print every section is laid out (the page tests check
 * contrast that way: axe cannot tell the colours of a section the browser has not laid out).
 */
export const REFERENCE_CSS = `
.reference{background:#fff}
.ref,.ref *,.ref *::before,.ref *::after{box-sizing:border-box}
.ref-nav{background:#f6f8fa;border-bottom:1px solid #d8dee4;padding:10px 16px;font-size:15px}
.ref-nav ul{list-style:none;margin:0;padding:0}
.ref-nav .toc{display:flex;flex-wrap:wrap;gap:0 14px}
.ref-nav .toc ul{display:none}
.ref-nav a{color:#0b5cad;text-decoration:none;display:inline-block;padding:4px 0}
.ref-nav a:hover,.ref-nav a:focus-visible{text-decoration:underline}
.ref-nav [hidden]{display:none!important}
.ref-nav.searching .toc{display:block}.ref-nav.searching .toc ul{display:block;margin:0 0 6px 8px}
.ref-search{margin:0 0 8px}.ref-search label{display:block;font-weight:600;font-size:14px;color:#3c4257}
.ref-search input{width:100%;font:inherit;padding:6px 8px;border:1px solid #8792a2;border-radius:4px;background:#fff;color:#1a1f36}
.ref-search input:focus-visible{outline:3px solid #f5a623;outline-offset:1px}
.ref-search .count{margin:4px 0 0;font-size:13px;color:#3c4257;min-height:1em}
.ref-main{display:block;padding:16px;min-width:0;line-height:1.55;overflow-wrap:break-word}
.ref-main h1{font-size:26px;line-height:1.25;margin:8px 0 12px}
.ref-main h2{font-size:22px;margin:40px 0 12px;padding-bottom:4px;border-bottom:1px solid #d8dee4}
.ref-main h3{font-size:19px;line-height:1.3;margin:0 0 8px}
.ref-main .lead h3,.ref-main>h3{margin-top:28px}
.ref-main h4{font-size:16px;margin:22px 0 6px}
.ref-main h5{font-size:15px;margin:14px 0 4px}
.ref-main a{color:#0b5cad}.ref-main a:hover{color:#073f78}
.ref-main p,.ref-main li{overflow-wrap:anywhere}.ref-main td{overflow-wrap:break-word}.ref-main td:last-child{overflow-wrap:anywhere}
.ref-main code,.ref-main a.code{font:14px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#eef1f4;padding:1px 4px;border-radius:3px}
.ref-main pre{background:#0a2540;color:#f0f4f8;padding:12px 14px;border-radius:6px;margin:0 0 12px;font-size:13px;line-height:1.45;white-space:pre-wrap;overflow-wrap:anywhere}
.ref-main pre code{background:none;color:inherit;padding:0;font-size:inherit;white-space:inherit}
.ref-main .lead{font-size:17px;color:#3c4257}
.op,.object{border-top:1px solid #e3e8ee;padding:22px 0}
@media screen{.op,.object{content-visibility:auto;contain-intrinsic-size:auto 1400px}}
.op-code{display:grid;gap:10px;margin-top:14px;min-width:0}
.sample{margin:0;min-width:0}.sample pre{margin:0}
.sample figcaption{font-size:13px;font-weight:600;color:#3c4257;margin:0 0 3px}
.endpoint{margin:0 0 6px}
.method{display:inline-block;min-width:3.7em;text-align:center;font:700 12px/1.8 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;color:#fff;border-radius:3px;padding:0 4px}
.method.get{background:#0b5cad}.method.post{background:#17692a}.method.patch{background:#8a4b00}.method.put{background:#6a3fb5}.method.delete{background:#b3261e}
.meta{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:2px 12px;margin:6px 0 10px;font-size:15px}
.meta dt{font-weight:600;color:#3c4257}.meta dd{margin:0;min-width:0}
.op-index{margin:8px 0 16px;padding-left:20px}.op-index li{margin:2px 0}.op-index a{text-decoration:none}.op-index a:hover{text-decoration:underline}
.ref-main table{border-collapse:collapse;width:100%;font-size:14.5px;margin:6px 0 12px}
.ref-main caption{text-align:left;font-weight:600;color:#3c4257;padding:2px 0 4px;font-size:14px}
.ref-main table.fields caption{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.ref-main td,.ref-main th{border:1px solid #e3e8ee;padding:5px 8px;text-align:left;vertical-align:top}
.ref-main th{background:#f0f3f6}
.ref-main td:first-child code{background:none;padding:0;font-weight:600}
.ref-main tr.d1 td:first-child{padding-left:24px}.ref-main tr.d2 td:first-child{padding-left:40px}
.ref-main tr.d3 td:first-child{padding-left:56px}.ref-main tr.d4 td:first-child{padding-left:72px}
.req{color:#b3261e;font-size:12px;font-weight:600;white-space:nowrap}
@media (max-width:640px){
.ref-main table.stack thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.ref-main table.stack,.ref-main table.stack tbody,.ref-main table.stack tr,.ref-main table.stack td{display:block;width:100%}
.ref-main table.stack tr{border:1px solid #e3e8ee;border-radius:6px;margin:0 0 8px}
.ref-main table.stack td{border:0;padding:2px 10px}.ref-main table.stack td:first-child{padding-top:6px}.ref-main table.stack td:last-child{padding-bottom:6px}
.ref-main table.stack tr.d1{margin-left:12px;width:calc(100% - 12px)}.ref-main table.stack tr.d2{margin-left:24px;width:calc(100% - 24px)}
.ref-main table.stack tr.d3,.ref-main table.stack tr.d4{margin-left:36px;width:calc(100% - 36px)}
.ref-main table.stack tr[class] td:first-child{padding-left:10px}
.ref-main table.stack td[data-label]::before{content:attr(data-label) ": ";font-weight:600;color:#3c4257}}
@media (min-width:960px){
.ref{display:grid;grid-template-columns:280px minmax(0,1fr)}
.ref-nav{position:sticky;top:0;height:100vh;overflow-y:auto;border-bottom:0;border-right:1px solid #d8dee4;padding:14px 16px}
.ref-nav .toc{display:block}.ref-nav .toc>li{margin:0 0 2px}
.ref-nav .toc ul{display:block;margin:0 0 10px}.ref-nav .toc ul a{font-size:14px;padding:2px 0}
.ref-nav .tag>a{font-weight:600}
.ref-nav .method{min-width:3.9em;font-size:11px;margin-right:4px}
.ref-main{padding:20px 32px}}
@media (min-width:1200px){
.op,.object{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,.85fr);gap:0 28px;align-items:start}
.op-code{margin-top:0}}
`

/** The search box: added by this script (without it the page has none), it filters the navigation's entries. */
export const REFERENCE_SCRIPT = `(function () {
  var nav = document.querySelector('.ref-nav');
  var slot = document.getElementById('ref-search');
  if (!nav || !slot) return;
  var form = document.createElement('form');
  form.className = 'ref-search';
  form.setAttribute('role', 'search');
  form.setAttribute('aria-label', 'Operations');
  var label = document.createElement('label');
  label.htmlFor = 'ref-q';
  label.textContent = 'Search operations';
  var input = document.createElement('input');
  input.type = 'search';
  input.id = 'ref-q';
  input.autocomplete = 'off';
  input.spellcheck = false;
  var count = document.createElement('p');
  count.className = 'count';
  count.setAttribute('role', 'status');
  form.append(label, input, count);
  slot.append(form);
  var entries = Array.prototype.slice.call(nav.querySelectorAll('.toc li'));
  var text = function (el) { return (el.textContent + ' ' + (el.getAttribute('data-path') || '')).toLowerCase(); };
  function filter() {
    var words = input.value.toLowerCase().split(/\\s+/).filter(Boolean);
    var matches = function (s) { return words.every(function (w) { return s.indexOf(w) >= 0; }); };
    nav.classList.toggle('searching', words.length > 0);
    var shown = 0;
    entries.forEach(function (li) {
      if (li.classList.contains('tag')) return;
      var ok = matches(text(li));
      li.hidden = !ok;
      if (ok && li.hasAttribute('data-path')) shown++;
    });
    entries.forEach(function (li) {
      if (!li.classList.contains('tag')) return;
      var own = matches(li.firstElementChild.textContent.toLowerCase());
      if (own) li.querySelectorAll('li').forEach(function (op) { if (op.hidden) { op.hidden = false; shown++; } });
      li.hidden = !own && !li.querySelector('li:not([hidden])');
    });
    count.textContent = words.length ? shown + (shown === 1 ? ' operation matches' : ' operations match') : '';
  }
  input.addEventListener('input', filter);
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    var first = nav.querySelector('li[data-path]:not([hidden]) a');
    if (first) first.click();
  });
})();
`
