// The cases every real client passes through llmguard, with the client's
// default retry settings. A harness's Go wrapper starts the mock and the
// gateway with harness.ContractGateway (the routes named below) and passes
// GATEWAY_URL and MOCK_URL; its node test file calls contract() once per
// client inside clients(), so that every case of every client runs at once
// (each has its own routes, upstream models and breakers).
//
// Upstream attempts are counted in the mock's log (/_mock/requests), the
// client's own HTTP requests by the fetch that contract() hands it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

export const GATEWAY = process.env.GATEWAY_URL;
export const MOCK = process.env.MOCK_URL;
if (!GATEWAY || !MOCK) {
  throw new Error('run through the Go wrapper (GATEWAY_URL and MOCK_URL unset)');
}

// BUDGET is what the gateway alone spends on one call over a one-target
// route with the default config: retry.max_attempts, 4.
export const BUDGET = 4;

export const PROMPT = 'Say hello to the gateway please';

// upstream returns the mock's generation requests for one case of one
// client, fallbacks included (the routes' models are MODEL--<id>--<case>).
export async function upstream(id, kase) {
  const res = await fetch(new URL('/_mock/requests', MOCK));
  assert.equal(res.status, 200);
  const { requests } = await res.json();
  return requests.filter((r) => r.endpoint === 'generate' && r.model?.includes(`--${id}--${kase}`));
}

// statusOf digs the HTTP status out of a client's error (the SDKs' status,
// the AI SDK's statusCode or its RetryError's lastError, a cause).
export function statusOf(err) {
  for (let e = err, i = 0; e && i < 6; i++) {
    const s = e.status ?? e.statusCode ?? e.response?.status;
    if (typeof s === 'number') return s;
    e = e.lastError ?? e.cause;
  }
  return undefined;
}

// countingFetch is a fetch that records, per route (the body's "model"),
// the status of every HTTP request the client sends.
export function countingFetch() {
  const seen = new Map();
  const f = async (input, init) => {
    let model = '?';
    try {
      const body = init?.body ?? (input instanceof Request ? await input.clone().text() : undefined);
      if (typeof body === 'string') model = JSON.parse(body).model ?? '?';
    } catch { /* not JSON */ }
    const res = await fetch(input, init);
    if (!seen.has(model)) seen.set(model, []);
    seen.get(model).push(res.status);
    return res;
  };
  f.statuses = (model) => seen.get(model) ?? [];
  return f;
}

async function failure(promise) {
  try {
    const v = await promise;
    return { ok: true, value: v };
  } catch (err) {
    return { ok: false, err };
  }
}

function describeErr(err) {
  return `${err?.name}: ${String(err?.message).slice(0, 300)}`;
}

// CASES are the contract's cases, by the route suffix each one calls.
export const CASES = ['healthy', 'burst', 'invalid', 'badkey', 'overloaded', 'ratelimited'];

// clients registers the contracts that fn declares as one suite whose
// members run concurrently.
export function clients(fn) {
  describe('clients', { concurrency: true }, fn);
}

// contract registers the cases (by default all of CASES) for one client.
// make(fetch) builds the client with that fetch and default everything
// else, and returns call(model), which resolves to the answer's text or
// rejects with the client's own error.
export function contract(id, make, cases = CASES) {
  for (const c of cases) {
    if (!CASES.includes(c)) throw new Error(`no contract case ${c}`);
  }
  const kase = (name, title, fn) => {
    if (cases.includes(name)) test(title, fn);
  };
  const f = countingFetch();
  const call = make(f);
  const report = async (t, kase, route) => {
    const up = await upstream(id, kase);
    const client = f.statuses(route);
    t.diagnostic(`attempts ${id} ${kase}: upstream ${up.length} [${up.map((r) => r.status).join(' ')}], client requests ${client.length} [${client.join(' ')}]`);
    return up;
  };

  describe(id, { concurrency: true, timeout: 150_000 }, () => {
    kase('healthy', 'a healthy call', async (t) => {
      const r = await failure(call(`${id}-healthy`));
      const up = await report(t, 'healthy', `${id}-healthy`);
      assert.ok(r.ok, `client error ${describeErr(r.err)}`);
      assert.match(r.value, /^Mock answer from \S+: Say hello to the gateway/);
      assert.equal(up.length, 1);
    });

    kase('burst', 'a 529 burst is absorbed by the gateway', async (t) => {
      const r = await failure(call(`${id}-burst`));
      const up = await report(t, 'burst', `${id}-burst`);
      assert.ok(r.ok, `client error ${describeErr(r.err)}`);
      assert.match(r.value, /^Mock answer from claude-sonnet-4-5--/);
      assert.deepEqual(up.map((u) => u.status), [529, 529, 200]);
      assert.deepEqual(f.statuses(`${id}-burst`), [200], 'the client saw a failure');
    });

    kase('invalid', 'a 400 on a multi-target route comes back as 400', async (t) => {
      const r = await failure(call(`${id}-invalid`));
      const up = await report(t, 'invalid', `${id}-invalid`);
      assert.ok(!r.ok, 'the call succeeded');
      assert.equal(statusOf(r.err), 400, `client error ${describeErr(r.err)}`);
      assert.deepEqual(up.map((u) => u.status), [400], 'the gateway retried or fell back on an invalid request');
      assert.equal(f.statuses(`${id}-invalid`).length, 1, 'the client retried an invalid request');
    });

    kase('badkey', 'a bad key is 401, on the second call too', async (t) => {
      const first = await failure(call(`${id}-badkey`));
      const second = await failure(call(`${id}-badkey`));
      const up = await report(t, 'badkey', `${id}-badkey`);
      for (const [n, r] of [[1, first], [2, second]]) {
        assert.ok(!r.ok, `call ${n} succeeded`);
        assert.equal(statusOf(r.err), 401, `call ${n}: client error ${describeErr(r.err)}`);
      }
      assert.ok(up.length >= 1 && up.length <= 2, `${up.length} upstream attempts for two calls`);
      assert.deepEqual(f.statuses(`${id}-badkey`), [401, 401], 'the client retried a bad key');
    });

    kase('overloaded', `a persistent 529 costs at most the gateway's budget (${BUDGET} attempts)`, async (t) => {
      const r = await failure(call(`${id}-overloaded`));
      const up = await report(t, 'overloaded', `${id}-overloaded`);
      assert.ok(!r.ok, 'the call succeeded');
      assert.ok(statusOf(r.err) >= 500, `client error ${describeErr(r.err)}`);
      assert.ok(up.length <= BUDGET, `${up.length} upstream attempts under the client's retries, budget ${BUDGET}`);
    });

    kase('ratelimited', `a persistent 429 costs at most the gateway's budget (${BUDGET} attempts)`, async (t) => {
      const r = await failure(call(`${id}-ratelimited`));
      const up = await report(t, 'ratelimited', `${id}-ratelimited`);
      assert.ok(!r.ok, 'the call succeeded');
      assert.equal(statusOf(r.err), 429, `client error ${describeErr(r.err)}`);
      assert.ok(up.length <= BUDGET, `${up.length} upstream attempts under the client's retries, budget ${BUDGET}`);
    });
  });
}
