/** The hosted page's whole stylesheet: mobile first, system fonts, no external resources (CSP allows none). */
export const H5_CSS = `
:root{--ink:#14213d;--muted:#5c677d;--line:#e3e7ef;--bg:#f4f6fb;--card:#fff;--accent:#2251ff;--accent-ink:#fff;--ok:#0f7b4f;--warn:#9a6400;--err:#b42318;--radius:16px}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--ink);font:16px/1.45 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
.wrap{max-width:560px;margin:0 auto;padding:20px 16px 40px}
.center{min-height:100vh;display:flex;align-items:center}
.top{padding:8px 2px 16px}
.eyebrow{margin:0 0 4px;font-size:13px;font-weight:600;letter-spacing:.06em;text-transform:uppercase;color:var(--accent)}
h1{margin:0;font-size:26px;line-height:1.2}
h2{margin:28px 2px 12px;font-size:19px}
h3{margin:0;font-size:17px}
h4{margin:18px 0 8px;font-size:15px}
p{margin:6px 0}
.muted{color:var(--muted);font-size:14px}
.card{background:var(--card);border:1px solid var(--line);border-radius:var(--radius);padding:18px;margin:0 0 14px;box-shadow:0 1px 2px rgba(20,33,61,.04)}
.card-head{display:flex;justify-content:space-between;align-items:flex-start;gap:12px}
.pill{flex:none;border-radius:999px;padding:3px 10px;font-size:12px;font-weight:600;background:#eef2ff;color:var(--accent)}
.pill.enabled{background:#e7f6ee;color:var(--ok)}
.pill.depleted,.pill.expired{background:#fdecea;color:var(--err)}
.pkg{margin-top:14px;padding-top:14px;border-top:1px solid var(--line)}
.usage-row{display:flex;justify-content:space-between;font-size:14px;margin-bottom:6px}
progress{width:100%;height:10px;border:0;border-radius:999px;background:#e9edf5;overflow:hidden;appearance:none;-webkit-appearance:none}
progress::-webkit-progress-bar{background:#e9edf5;border-radius:999px}
progress::-webkit-progress-value{background:var(--accent);border-radius:999px}
progress::-moz-progress-bar{background:var(--accent);border-radius:999px}
progress.low::-webkit-progress-value{background:var(--warn)}
progress.low::-moz-progress-bar{background:var(--warn)}
.install{display:grid;grid-template-columns:1fr 1fr;gap:10px;margin-top:16px}
.btn{display:inline-flex;align-items:center;justify-content:center;min-height:46px;padding:0 10px;white-space:nowrap;border-radius:12px;border:1px solid var(--line);background:#fff;color:var(--ink);font:inherit;font-size:15px;font-weight:600;text-decoration:none;cursor:pointer}
.btn.primary{background:var(--accent);border-color:var(--accent);color:var(--accent-ink)}
.btn.small{min-height:38px;padding:0 12px;font-size:14px}
.btn:focus-visible{outline:3px solid #9fb4ff;outline-offset:2px}
.qr{margin:18px 0 0;text-align:center}
.qr-code{width:200px;height:200px;margin:0 auto;padding:8px;background:#fff;border:1px solid var(--line);border-radius:12px}
.qr-code svg{display:block;width:100%;height:100%}
figcaption{margin-top:8px;font-size:13px;color:var(--muted)}
details{margin-top:12px;font-size:14px}
summary{cursor:pointer;color:var(--accent);font-weight:600}
dl{margin:8px 0 0}
dt{color:var(--muted);font-size:13px}
dd{margin:0 0 8px;word-break:break-all}
code{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;background:#f1f3f8;padding:2px 5px;border-radius:6px}
.offer{display:flex;justify-content:space-between;align-items:center;gap:12px;padding:10px 0;border-top:1px dashed var(--line)}
.offer:first-of-type{border-top:0}
.notice{border-radius:12px;padding:12px 14px;margin:0 0 14px;font-size:15px;font-weight:500}
.notice.ok{background:#e7f6ee;color:var(--ok)}
.notice.warn{background:#fff4e0;color:var(--warn)}
.notice.err{background:#fdecea;color:var(--err)}
.picker label{display:block;font-weight:600;margin-bottom:6px}
.picker .row{display:flex;gap:8px}
.picker .row .btn{flex:none}
select{flex:1;min-width:0;min-height:44px;border:1px solid var(--line);border-radius:12px;padding:0 10px;font:inherit;background:#fff;color:var(--ink)}
.plans{margin-top:14px}
.plan{display:flex;justify-content:space-between;align-items:center;gap:12px}
.plan form,.offer .btn{flex:none}
.plan .facts{font-size:14px;color:var(--muted)}
.empty{text-align:center;padding:28px 18px}
.icon{color:var(--accent);line-height:0;margin-bottom:12px}
footer{margin-top:28px;font-size:13px;color:var(--muted);text-align:center}
`
