/** The console's whole stylesheet: system fonts, no external resource (the CSP allows none), legible from 320 px wide. */
export const CONSOLE_CSS = `
:root{--ink:#172033;--muted:#4d5a70;--line:#d9dee8;--bg:#f5f7fb;--card:#fff;--accent:#1f4fd8;--accent-ink:#fff;--ok:#0b6b43;--warn:#8a5a00;--err:#a3261b;--focus:#ffbf47}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--ink);font:16px/1.5 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
a{color:var(--accent)}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,[tabindex]:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.skip{position:absolute;left:-9999px;top:0;background:#fff;padding:8px 12px;z-index:10}
.skip:focus{left:8px;top:8px}
.topbar{background:#10213f;color:#fff;padding:10px 16px;display:flex;flex-wrap:wrap;align-items:center;gap:8px 16px}
.topbar a{color:#fff}
.brand{font-weight:700;margin-right:auto;text-decoration:none}
.brand small{display:block;font-weight:400;font-size:13px;color:#c9d3e6}
.topbar form{margin:0}
.env{display:flex;gap:4px}
.env button{background:transparent;color:#fff;border:1px solid #6f82a8;border-radius:6px;padding:4px 10px;font:inherit;font-size:14px;cursor:pointer}
.env button[aria-pressed="true"]{background:#fff;color:#10213f;font-weight:600}
.env button.production[aria-pressed="true"]{background:#ffd9d4;color:#5c130b}
.linklike{background:none;border:0;color:#fff;text-decoration:underline;font:inherit;cursor:pointer;padding:0}
.layout{display:flex;max-width:1200px;margin:0 auto}
nav.side{flex:none;width:220px;padding:16px}
nav.side h2{font-size:12px;text-transform:uppercase;letter-spacing:.06em;color:var(--muted);margin:16px 0 4px}
nav.side ul{list-style:none;margin:0;padding:0}
nav.side a{display:block;padding:6px 8px;border-radius:6px;text-decoration:none;color:var(--ink)}
nav.side a[aria-current="page"]{background:#e4ebfb;font-weight:600}
main{flex:1;min-width:0;padding:16px 20px 48px}
h1{font-size:26px;line-height:1.25;margin:8px 0 16px}
h2{font-size:19px;margin:28px 0 10px}
p{margin:8px 0}
.muted{color:var(--muted)}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:16px 18px;margin:0 0 16px}
.card>h2:first-child{margin-top:4px}
.visually-hidden{position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
.narrow{max-width:460px;margin:40px auto;padding:0 16px}
.flash{border-radius:8px;padding:10px 14px;margin:0 0 16px;border:1px solid}
.flash.ok{background:#e8f5ee;border-color:#9fd3b7;color:var(--ok)}
.flash.info{background:#eaf0fd;border-color:#b3c6f3;color:#1b3d8f}
.flash.error{background:#fdecea;border-color:#f1b0a9;color:var(--err)}
label{display:block;font-weight:600;margin:14px 0 4px}
.hint{display:block;font-weight:400;font-size:14px;color:var(--muted)}
input[type=text],input[type=email],input[type=password],input[type=datetime-local],select,textarea{width:100%;max-width:420px;font:inherit;padding:9px 10px;border:1px solid #8a94a8;border-radius:6px;background:#fff;color:var(--ink)}
textarea{display:block;max-width:640px;resize:vertical}
textarea.mono{font:14px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
textarea:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
fieldset.checks{border:1px solid var(--line);border-radius:8px;margin:14px 0 0;padding:6px 12px 10px;max-width:640px}
fieldset.checks legend{font-weight:600;padding:0 4px}
fieldset.checks p.hint{margin:0 0 4px}
label.check{display:inline-flex;align-items:center;gap:6px;font-weight:400;margin:6px 18px 0 0;min-height:24px}
label.check input{width:18px;height:18px;margin:0}
input[type=checkbox]:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.filters{display:flex;flex-wrap:wrap;align-items:flex-end;gap:0 16px;margin:0 0 16px}
.filters>div{flex:1 1 180px;min-width:0;max-width:320px}
.filters button{margin-top:8px}
.inline{display:flex;flex-wrap:wrap;align-items:center;gap:6px;margin:0}
.inline select{width:auto}
.row-actions{display:flex;flex-wrap:wrap;align-items:center;gap:10px}
.inline button{margin-top:0;padding:6px 12px}
.details{display:grid;grid-template-columns:minmax(0,1fr);gap:6px;margin:0 0 12px}
.details>div{display:flex;flex-wrap:wrap;gap:0 12px}
.details dt{font-weight:600;min-width:10em}
.details dd{margin:0;min-width:0;overflow-wrap:anywhere}
.stat{font-size:28px;font-weight:700;font-variant-numeric:tabular-nums}
.warn{color:var(--warn);font-weight:600}
button.primary,button.secondary,button.danger{font:inherit;font-weight:600;border-radius:6px;padding:9px 16px;cursor:pointer;margin-top:16px;border:1px solid transparent}
button.primary{background:var(--accent);color:var(--accent-ink)}
button.secondary{background:#fff;color:var(--accent);border-color:var(--accent)}
button.danger{background:#fff;color:var(--err);border-color:var(--err)}
.table-wrap{position:relative;overflow-x:auto;background:var(--card);border:1px solid var(--line);border-radius:10px;margin:0 0 12px}
.table-wrap td code{white-space:nowrap;overflow-wrap:normal}
.table-wrap td code.wrap{display:inline-block;min-width:16ch;white-space:normal;overflow-wrap:anywhere}
table{border-collapse:collapse;width:100%;font-size:15px}
caption{text-align:left;font-weight:600;padding:10px 12px}
th,td{padding:8px 12px;border-top:1px solid var(--line);text-align:left;vertical-align:top}
th{background:#f0f3f8;font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
code.id{display:inline-block;max-width:15ch;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;direction:rtl;text-align:left;vertical-align:bottom}
.rel{color:var(--muted);font-size:14px;white-space:nowrap}
.table-wrap th,.table-wrap td{padding:6px 10px}
.table-wrap td .rel{display:block}
@media (max-width:640px){
.table-wrap.list{overflow-x:visible;border:0;background:none}
.table-wrap.list table,.table-wrap.list tbody,.table-wrap.list tr,.table-wrap.list td{display:block;width:100%}
.table-wrap.list thead{display:none}
.table-wrap.list tr{background:var(--card);border:1px solid var(--line);border-radius:10px;margin:0 0 8px;padding:4px 0}
.table-wrap.list td{display:flex;justify-content:space-between;gap:12px;border:0;padding:3px 12px;text-align:right;min-width:0;overflow-wrap:anywhere}
.table-wrap.list td::before{content:attr(data-label);color:var(--muted);font-size:14px;text-align:left;flex:none}
.table-wrap.list td>*{min-width:0}
.table-wrap.list td code:not(.id){white-space:normal;overflow-wrap:anywhere}
.table-wrap.list td:empty{display:none}
}
.charts{display:grid;align-items:start;grid-template-columns:repeat(auto-fit,minmax(min(100%,440px),1fr));gap:0 16px}
.chart svg{display:block;margin:8px 0;overflow:hidden}
.chart svg text{font-size:13px;fill:var(--ink)}
.chart .ok{fill:var(--accent)}
.chart .no{fill:#c2410c}
.chart .axis{stroke:var(--line)}
.chart details{margin-top:6px}
.chart details table{margin-top:6px}
.legend{font-size:14px;color:var(--muted)}
.legend .key{display:inline-block;width:12px;height:12px;border-radius:2px;vertical-align:-1px}
.legend .key.ok{background:var(--accent)}
.legend .key.no{background:#c2410c}
code,.mono{font:14px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
pre{background:#10213f;color:#e6edf7;padding:10px 12px;border-radius:8px;overflow-x:auto;font-size:13px}
.checklist{list-style:none;padding:0;margin:0}
.checklist li{display:flex;gap:12px;padding:12px 0;border-top:1px solid var(--line)}
.checklist li:first-child{border-top:0}
.checklist li>div{flex:1;min-width:0}
.checklist pre{white-space:pre-wrap;overflow-wrap:anywhere}
.mark{flex:none;width:26px;height:26px;border-radius:50%;display:inline-flex;align-items:center;justify-content:center;font-weight:700;border:2px solid #8a94a8;color:var(--muted)}
.done .mark{background:var(--ok);border-color:var(--ok);color:#fff}
.codes{columns:2;font:16px ui-monospace,Menlo,Consolas,monospace;padding-left:20px}
.qr svg{width:200px;height:200px;background:#fff}
.pager{display:flex;gap:16px;margin:12px 0}
.top-search{display:flex;gap:6px;align-items:center}.top-search input{font:inherit;padding:5px 8px;border:1px solid #8a94a8;border-radius:6px;width:15em;max-width:100%;background:#fff;color:var(--ink)}.top-search button{padding:5px 10px;margin:0}
pre.json{white-space:pre-wrap;overflow-wrap:anywhere}
pre.json a{color:#9cc2ff}
fieldset.events{border:0;padding:0;margin:14px 0 0;min-width:0}
fieldset.events>legend{font-weight:600;padding:0}
ol.attempts{margin:0;padding-left:20px}
ol.attempts li{margin:0 0 4px}
details.answer pre{max-height:240px;overflow:auto;white-space:pre-wrap;word-break:break-all;margin:4px 0}
code.secret{display:inline-block;padding:6px 8px;background:#f0f3f8;border-radius:6px;user-select:all}
.badge{display:inline-block;padding:0 8px;border-radius:999px;font-size:14px;font-weight:600;border:1px solid;white-space:nowrap}
.badge.good{background:#e8f5ee;color:var(--ok);border-color:#9fd3b7}
.badge.bad{background:#fdecea;color:var(--err);border-color:#f1b0a9}
.badge.neutral{background:#eef1f6;color:#2c3a55;border-color:#c3cad8}
.badge.wait{background:#fdf3e1;color:var(--warn);border-color:#e6c98f}
.card.sandbox{border:2px dashed #8a94a8}
.actions{display:flex;flex-wrap:wrap;gap:8px;align-items:flex-end;margin:0 0 12px}
.actions form{margin:0}
.actions button{margin-top:0}
.grid2{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,260px),1fr));gap:0 16px}
@media (max-width:760px){
  .layout{display:block}
  nav.side{width:auto;padding:8px 16px 0}
  nav.side ul{display:flex;flex-wrap:wrap;gap:4px}
  nav.side h2{margin:8px 0 2px}
  main{padding:12px 16px 40px}
  h1{font-size:23px}
}
`
