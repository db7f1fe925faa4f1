// The error decoder: llmguard's Go classifier, compiled to WebAssembly and
// inlined in this page, decodes a pasted failure. Nothing is sent anywhere.
"use strict";
(async function () {
  const button = document.getElementById("decode");
  const src = document.getElementById("decoder-wasm");
  const bytes = Uint8Array.from(atob(src.textContent.trim()), (c) => c.charCodeAt(0));
  const go = new Go();
  const { instance } = await WebAssembly.instantiate(bytes, go.importObject);
  go.run(instance);
  button.disabled = false;
  document.body.dataset.ready = "true";
  document.getElementById("form").addEventListener("submit", (e) => {
    e.preventDefault();
    const v = id => document.getElementById(id).value;
    const out = JSON.parse(globalThis.llmguardDecode(v("status"), v("headers"), v("body"), v("provider")));
    if (out.error) { document.getElementById("line").textContent = out.error; return; }
    const d = out.verdict;
    document.getElementById("line").textContent = d.message;
    const rows = [["class", d.class], ["retryable", String(d.retryable)], ["wait", d.wait_seconds == null ? "none" : d.wait_seconds + " s"],
      ["until", d.until || "–"], ["scope", d.scope], ["another model could serve it", String(d.fallback)],
      ["provider type", d.provider_type || "–"], ["request id", d.request_id || "–"]];
    const body = document.querySelector("#verdict tbody");
    body.replaceChildren(...rows.map(([k, val]) => {
      const tr = document.createElement("tr"); tr.dataset.field = k;
      const a = document.createElement("th"); a.textContent = k;
      const b = document.createElement("td"); b.textContent = val;
      tr.append(a, b); return tr;
    }));
    document.getElementById("advice").textContent = out.advice;
    document.body.dataset.decoded = d.class;
  });
})().catch((e) => { document.getElementById("line").textContent = "the decoder failed to start: " + e.message; console.error(e); });
