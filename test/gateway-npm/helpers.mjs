// Shared helpers for the gateway SDK tests. gateway/npm_test.go starts the
// mock and `llmguard serve` (in process) and passes their URLs.
import assert from 'node:assert/strict';

export const GATEWAY = process.env.GATEWAY_URL;
export const MOCK = process.env.MOCK_URL;
if (!GATEWAY || !MOCK) {
  throw new Error('run through gateway/npm_test.go (GATEWAY_URL and MOCK_URL unset)');
}

// mockLog returns the mock's request log, optionally filtered by model.
export async function mockLog(model) {
  const url = new URL('/_mock/requests', MOCK);
  if (model) url.searchParams.set('model', model);
  const res = await fetch(url);
  assert.equal(res.status, 200);
  return (await res.json()).requests;
}

// assertOneLine checks an SDK error's message: one line with a request id.
export function assertOneLine(message) {
  assert.ok(message && !/[\r\n]/.test(message), `not one line: ${JSON.stringify(message)}`);
}

// assertRetryAfterHonoured checks, on the mock's log, that the attempt after
// a 429 with retry-after came no earlier than the hint.
export async function assertRetryAfterHonoured(model, seconds) {
  const log = (await mockLog(model)).filter((r) => r.endpoint === 'generate');
  const i = log.findIndex((r) => r.status === 429);
  assert.ok(i >= 0 && i + 1 < log.length, `no 429 then retry in ${JSON.stringify(log)}`);
  const gap = Date.parse(log[i + 1].time) - Date.parse(log[i].time);
  assert.ok(gap >= seconds * 1000, `retried after ${gap} ms, before the ${seconds}s retry-after`);
  assert.equal(log[i + 1].status, 200);
}
