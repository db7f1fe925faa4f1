// The dashboard and the error decoder in a real browser: Debian's chromium
// driven by playwright-core. Run by web_test.go, which starts llmguard serve
// on the mock and sets LLMGUARD_URL, DECODER_FILE and SHOT_DIR.
import { test, after, before } from "node:test";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { pathToFileURL } from "node:url";
import path from "node:path";

const base = process.env.LLMGUARD_URL;
const flaky = "openai/gpt-4o+fault=500";
let browser;

before(async () => {
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
});
after(async () => { await browser?.close(); });

// page opens a page that records console errors and uncaught exceptions.
async function page() {
  const p = await browser.newPage({ viewport: { width: 1400, height: 800 } });
  p.errors = [];
  p.on("console", (m) => { if (m.type() === "error") p.errors.push(m.text()); });
  p.on("pageerror", (e) => p.errors.push(String(e)));
  return p;
}

async function chat(model) {
  const res = await fetch(base + "/v1/chat/completions", {
    method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hello" }] }),
  });
  await res.text();
  return res.status;
}

test("the dashboard shows a target going from closed to open, live", async () => {
  const p = await page();
  await p.goto(base + "/ui/");
  assert.equal(await chat("default"), 200);
  assert.notEqual(await chat("flaky"), 200);
  const state = p.locator(`tr[data-target="${flaky}"] [data-breaker]`);
  await state.waitFor({ timeout: 15000 });
  assert.equal(await state.getAttribute("data-breaker"), "closed");
  const reloads = [];
  p.on("framenavigated", (f) => reloads.push(f.url()));
  for (let i = 0; i < 3; i++) await chat("flaky");
  await p.locator(`tr[data-target="${flaky}"] [data-breaker="open"]`).waitFor({ timeout: 15000 });
  assert.deepEqual(reloads, [], "the page reloaded");
  const last = await p.locator(`tr[data-target="${flaky}"] td.err`).textContent();
  assert.match(last, /500/);
  assert.equal(await p.locator("#conn").textContent(), "live");
  const shot = path.join(process.env.SHOT_DIR, "dashboard.png");
  await p.screenshot({ path: shot, fullPage: true });
  console.log("screenshot: " + shot);
  assert.deepEqual(p.errors, []);
  await p.close();
});

const quota429 = JSON.stringify({ error: { message: "You exceeded your current quota, please check your plan and billing details.",
  type: "insufficient_quota", param: null, code: "insufficient_quota" } });

for (const [name, url] of [["opened from a file", () => pathToFileURL(process.env.DECODER_FILE).href],
  ["served at /ui/decode.html", () => base + "/ui/decode.html"]]) {
  test("the decoder, " + name + ", classifies an insufficient_quota 429 without a network request", async () => {
    const p = await page();
    await p.goto(url());
    await p.locator("body[data-ready=true]").waitFor({ timeout: 30000 });
    assert.match(await p.locator("#privacy").textContent(), /leaves this machine/);
    const requests = [];
    p.on("request", (r) => requests.push(r.url()));
    await p.fill("#status", "429");
    await p.selectOption("#provider", "openai");
    await p.fill("#headers", "x-request-id: req_abc123\ncontent-type: application/json");
    await p.fill("#body", quota429);
    await p.click("#decode");
    await p.locator("body[data-decoded]").waitFor();
    assert.equal(await p.locator('#verdict tr[data-field="class"] td').textContent(), "quota_exhausted");
    assert.equal(await p.locator('#verdict tr[data-field="retryable"] td').textContent(), "false");
    assert.equal(await p.locator('#verdict tr[data-field="request id"] td').textContent(), "req_abc123");
    assert.match(await p.locator("#line").textContent(), /^429 insufficient_quota/);
    assert.ok((await p.locator("#advice").textContent()).length > 10);
    assert.deepEqual(requests, [], "decoding made network requests");
    assert.deepEqual(p.errors, []);
    const shot = path.join(process.env.SHOT_DIR, "decoder-" + (name.includes("file") ? "file" : "served") + ".png");
    await p.screenshot({ path: shot, fullPage: true });
    console.log("screenshot: " + shot);
    await p.close();
  });
}
