// The live dashboard: reads /ui/events (Server-Sent Events, through fetch so
// that a gateway key can be sent) and redraws on each snapshot.
"use strict";
const colors = { ok: "#7fd962", rate_limited: "#ffb454", overloaded: "#f29e4c", server_error: "#f26d78",
  timeout: "#d2a6ff", network: "#a37acc", quota_exhausted: "#ff3333", auth: "#ff6ac1" };
const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; };
const pct = (x) => x == null ? "–" : (100 * x).toFixed(1) + "%";
const ms = (x) => x == null ? "–" : x < 1000 ? x.toFixed(0) + " ms" : (x / 1000).toFixed(2) + " s";
const usd = (x) => "$" + (x || 0).toFixed(4);
const num = (x) => Math.round(x || 0).toLocaleString("en-US");

function render(s) {
  const body = document.querySelector("#targets tbody");
  body.replaceChildren();
  if (!s.targets.length) {
    const tr = el("tr"); const td = el("td", "no target has been called yet", "dim"); td.colSpan = 10; tr.append(td); body.append(tr);
  }
  for (const t of s.targets) {
    const tr = el("tr");
    tr.dataset.target = t.target;
    tr.append(el("td", t.target), el("td", (t.routes || []).join(", "), "dim"));
    const st = el("td"); const b = el("span", t.breaker, "state " + t.breaker); b.dataset.breaker = t.breaker; st.append(b);
    if (t.open_until) st.append(el("div", "until " + new Date(t.open_until).toLocaleTimeString(), "dim"));
    tr.append(st);
    tr.append(el("td", pct(t.success_rate) + " of " + (t.successes + t.failures), "num"));
    tr.append(el("td", ms(t.p50_ms) + " / " + ms(t.p99_ms), "num"));
    tr.append(el("td", t.in_flight + (t.queued ? " (+" + t.queued + " queued)" : ""), "num"));
    tr.append(el("td", num(t.input_tokens) + " / " + num(t.output_tokens), "num"));
    tr.append(el("td", usd(t.cost_usd), "num"), el("td", usd(t.wasted_usd), "num"));
    const last = el("td", t.last_error || "", "err");
    if (t.last_failed) last.title = new Date(t.last_failed).toString();
    tr.append(last);
    body.append(tr);
  }
  drawTimeline(s.timeline);
  document.getElementById("updated").textContent = "updated " + new Date(s.time).toLocaleTimeString();
}

function drawTimeline(tl) {
  const c = document.getElementById("timeline"), g = c.getContext("2d");
  g.clearRect(0, 0, c.width, c.height);
  const classes = Object.keys((tl && tl.classes) || {}).sort((a, b) => (a === "ok" ? -1 : b === "ok" ? 1 : a.localeCompare(b)));
  const n = 60, w = c.width / n;
  let max = 1;
  for (let i = 0; i < n; i++) { let sum = 0; for (const k of classes) sum += tl.classes[k][i]; max = Math.max(max, sum); }
  for (let i = 0; i < n; i++) {
    let y = c.height;
    for (const k of classes) {
      const h = (tl.classes[k][i] / max) * (c.height - 10);
      g.fillStyle = colors[k] || "#8a919a";
      g.fillRect(i * w + 1, y - h, w - 2, h);
      y -= h;
    }
  }
  const legend = document.getElementById("legend");
  legend.replaceChildren(...classes.map((k) => { const s = el("span"); const i = el("i"); i.style.background = colors[k] || "#8a919a"; s.append(i, k); return s; }));
}

async function stream() {
  const conn = document.getElementById("conn");
  const headers = {};
  const key = sessionStorage.getItem("llmguard-key");
  if (key) headers.Authorization = "Bearer " + key;
  try {
    const res = await fetch("events", { headers, cache: "no-store" });
    if (res.status === 401) {
      const box = document.getElementById("keybox"); box.hidden = false;
      conn.textContent = "needs a gateway key"; conn.className = "off";
      document.getElementById("key").onchange = (e) => { sessionStorage.setItem("llmguard-key", e.target.value); stream(); };
      return;
    }
    if (!res.ok || !res.body) throw new Error("status " + res.status);
    conn.textContent = "live"; conn.className = "on";
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const ev = buf.slice(0, i); buf = buf.slice(i + 2);
        const data = ev.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
        if (data) render(JSON.parse(data));
      }
    }
  } catch (e) {
    console.warn("llmguard dashboard: " + e.message);
  }
  conn.textContent = "reconnecting…"; conn.className = "off";
  setTimeout(stream, 2000);
}
stream();
