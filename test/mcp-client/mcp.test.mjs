// Real-client test: the official MCP TypeScript SDK client spawns
// `llmguard mcp` (stdio) against `llmguard mock`, as an agent would.
//
// Run by mcpclient_test.go, which builds the binary and sets LLMGUARD_BIN;
// by hand: LLMGUARD_BIN=/path/to/llmguard node --test
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const BIN = process.env.LLMGUARD_BIN;
if (!BIN) throw new Error('set LLMGUARD_BIN to the llmguard binary');

// One mock for every case; each case picks its fault through the model name.
const SCENARIO = `name: mcp-client-test
rules:
  - match: {model: "burst-*"}
    sequence: [overloaded, overloaded, ok]
  - match: {model: "badkey-*"}
    sequence: [bad_key]
  - match: {model: "quota-*"}
    sequence: [insufficient_quota]
  - match: {model: "hang-*"}
    sequence: [hang]
`;

let mock, mockURL;
const samplingRequests = [];

// startMock runs `llmguard mock` on a port it picks itself (127.0.0.1:0)
// and resolves with the URL from the line it prints once it listens; it
// gives up after ms.
function startMock(file, ms = 10000) {
  const child = spawn(BIN, ['mock', '--quiet', '--addr', '127.0.0.1:0', '--scenario', file], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    const fail = (why) => { clearTimeout(timer); child.kill(); reject(new Error(why)); };
    const timer = setTimeout(() => fail(`the mock printed no address in ${ms} ms`), ms);
    let out = '';
    child.stdout.on('data', (b) => {
      out += b;
      const m = out.match(/listening on (http:\/\/\S+)/);
      if (m) { clearTimeout(timer); child.removeAllListeners('exit'); resolve({ child, url: m[1] }); }
    });
    child.once('exit', (code) => fail(`the mock exited (${code}) before listening`));
  });
}

// requests returns the mock's request log entries for a model.
async function requests(model) {
  const r = await fetch(mockURL + '/_mock/requests');
  const all = await r.json();
  const list = Array.isArray(all) ? all : all.requests;
  return list.filter((e) => e.model === model);
}

before(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'llmguard-mcp-'));
  const file = join(dir, 'scenario.yaml');
  writeFileSync(file, SCENARIO);
  ({ child: mock, url: mockURL } = await startMock(file));
});

after(() => { mock?.kill(); });

// startProxy forwards to the mock and records, for each request, whether
// the caller (llmguard) hung up before the answer was complete.
function startProxy() {
  const ends = [];
  const srv = http.createServer((req, res) => {
    const up = http.request(mockURL + req.url, { method: req.method, headers: req.headers }, (ur) => {
      res.writeHead(ur.statusCode, ur.headers);
      ur.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
    let finished = false;
    res.on('finish', () => { finished = true; });
    res.on('close', () => {
      ends.push({ path: req.url, aborted: !finished });
      if (!finished) up.destroy();
    });
  });
  return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => {
    resolve({ url: `http://127.0.0.1:${srv.address().port}`, ends, close: () => srv.close() });
  }));
}

// connect spawns `llmguard mcp` with only the given provider variables, the
// way an MCP client's "env" block passes them.
async function connect(env, { args = [], capabilities = {} } = {}) {
  const transport = new StdioClientTransport({
    command: BIN,
    args: ['mcp', '-v', ...args],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => { stderr += d; });
  const client = new Client({ name: 'llmguard-node-test', version: '1.0.0' }, { capabilities });
  if (capabilities.sampling) {
    client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      samplingRequests.push(req.params);
      return { role: 'assistant', model: 'client-model-1', stopReason: 'endTurn',
        content: { type: 'text', text: 'All green.' } };
    });
  }
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

function anthropic(model) {
  return { ANTHROPIC_API_KEY: 'sk-ant-test-key', ANTHROPIC_BASE_URL: mockURL, ANTHROPIC_MODEL: model };
}

function openai(model) {
  return { OPENAI_API_KEY: 'sk-test-key', OPENAI_BASE_URL: mockURL + '/v1', OPENAI_MODEL: model };
}

function oneLine(res) {
  assert.equal(res.isError, true, 'want an isError result: ' + JSON.stringify(res));
  assert.equal(res.content.length, 1);
  const line = res.content[0].text;
  assert.ok(line.length > 0 && !/[\r\n]/.test(line), 'not exactly one line: ' + JSON.stringify(line));
  return line;
}

test('lists the six tools', async () => {
  const { client } = await connect(anthropic('burst-list'));
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['ask', 'batch_summarize', 'chat', 'decode_error', 'llm_status', 'summarize']);
  } finally { await client.close(); }
});

// callWithProgress calls a tool with a 60 s timeout, collecting its
// progress notifications; an isError result fails the test.
async function callWithProgress(client, name, args) {
  const progress = [];
  const res = await client.callTool({ name, arguments: args }, undefined,
    { onprogress: (p) => progress.push(p), timeout: 60000 });
  assert.notEqual(res.isError, true, JSON.stringify(res));
  return { res, progress };
}

test('overload burst then success returns the summary with progress notifications', async () => {
  const model = 'burst-summary';
  const { client } = await connect(anthropic(model));
  try {
    const { res, progress } = await callWithProgress(client, 'summarize',
      { text: 'Summarize this: the deploy failed twice because the provider was overloaded, then it worked.', bullets: 3 });
    assert.ok(res.content[0].text.length > 0);
    assert.equal(res.structuredContent.attempts, 3);
    assert.match(res.structuredContent.model, new RegExp(model));
    assert.equal(progress.length, 2, 'one progress notification per retry: ' + JSON.stringify(progress));
    for (const p of progress) assert.match(p.message, /attempt \d+\/\d+: 529 overloaded_error; retrying in [\d.]+m?s/);
    assert.equal((await requests(model)).length, 3);
  } finally { await client.close(); }
});

test('batch_summarize answers a list, one progress notification per item, and returns the results file', async () => {
  const model = 'ok-batch';
  const { client } = await connect(anthropic(model));
  try {
    const run = Date.now(); // a fresh results file on every run of the suite
    const items = [1, 2, 3].map((i) => ({ id: `doc-${i}`, text: `Document ${i} of run ${run}: the deploy failed, then it worked.` }));
    const { res, progress } = await callWithProgress(client, 'batch_summarize', { items, bullets: 2 });
    const sc = res.structuredContent;
    assert.equal(sc.total, 3);
    assert.equal(sc.answered, 3);
    assert.equal(sc.left, 0);
    assert.match(sc.out, /\.jsonl$/);
    assert.ok(res.content[0].text.includes(sc.out), res.content[0].text);
    // One notification per item, progress rising to the total. The SDK drops a
    // notification it reads in the same chunk as the response
    // (typescript-sdk#2580); the server waits a moment before its result, so
    // on an idle machine all three arrive, and never fewer than one.
    const perItem = progress.filter((p) => /^doc-\d summarized by anthropic\/ok-batch$/.test(p.message));
    assert.ok(perItem.length >= 1 && perItem.length === progress.length, JSON.stringify(progress));
    perItem.forEach((p, i) => {
      assert.equal(p.total, 3);
      assert.equal(p.progress, i + 1, JSON.stringify(progress));
    });
    assert.equal((await requests(model)).length, 3);
  } finally { await client.close(); }
});

test('a bad key is one isError line with 401, authentication_error and the request id, after one attempt', async () => {
  const model = 'badkey-ask';
  const { client } = await connect(anthropic(model));
  try {
    const res = await client.callTool({ name: 'ask', arguments: { prompt: 'hello' } });
    const line = oneLine(res);
    assert.match(line, /401/);
    assert.match(line, /authentication_error/);
    const reqs = await requests(model);
    assert.equal(reqs.length, 1, 'exactly one upstream attempt');
    const id = reqs[0].request_id;
    assert.ok(id, 'the mock logs its request id: ' + JSON.stringify(reqs[0]));
    assert.ok(line.includes(`request-id ${id}`), `line lacks request-id ${id}: ${line}`);
    assert.match(line, /env block/);
  } finally { await client.close(); }
});

test('insufficient_quota is not retried', async () => {
  const model = 'quota-ask';
  const { client } = await connect(openai(model));
  try {
    const line = oneLine(await client.callTool({ name: 'ask', arguments: { prompt: 'hello' } }));
    assert.match(line, /insufficient_quota/);
    assert.match(line, /add credits/);
    assert.equal((await requests(model)).length, 1);
  } finally { await client.close(); }
});

test('a cancelled call stops the upstream request', async () => {
  const model = 'hang-ask';
  const proxy = await startProxy();
  const { client } = await connect({ ...anthropic(model), ANTHROPIC_BASE_URL: proxy.url });
  try {
    const ac = new AbortController();
    const call = client.callTool({ name: 'ask', arguments: { prompt: 'hello' } }, undefined, { signal: ac.signal });
    // Wait until the upstream request is hanging at the mock, then cancel.
    const end = Date.now() + 10000;
    while ((await requests(model)).length === 0) {
      assert.ok(Date.now() < end, 'upstream request never arrived');
      await new Promise((r) => setTimeout(r, 20));
    }
    ac.abort('user pressed escape'); // the SDK sends notifications/cancelled
    await assert.rejects(call);
    // llmguard hangs up on the upstream request at once.
    const deadline = Date.now() + 5000;
    while (!proxy.ends.some((e) => e.path === '/v1/messages' && e.aborted)) {
      assert.ok(Date.now() < deadline, 'upstream request still open 5s after the cancel: ' + JSON.stringify(proxy.ends));
      await new Promise((r) => setTimeout(r, 20));
    }
    // ... and starts no other attempt.
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await requests(model)).length, 1, 'no retry after cancel');
  } finally {
    await client.close();
    proxy.close();
  }
});

test('when every provider is out of credit, mcp/sampling asks the client\'s own model, labelled', async () => {
  const model = 'quota-sampling';
  const dir = mkdtempSync(join(tmpdir(), 'llmguard-mcp-cfg-'));
  const cfg = join(dir, 'llmguard.yaml');
  writeFileSync(cfg, `providers:
  openai: {api_key: sk-test-key, base_url: ${mockURL}/v1}
routes:
  default:
    targets: [openai/${model}, mcp/sampling]
`);
  const { client } = await connect({}, { args: ['--config', cfg], capabilities: { sampling: {} } });
  try {
    const res = await client.callTool({ name: 'ask', arguments: { prompt: 'Is the build green?' } });
    assert.notEqual(res.isError, true, JSON.stringify(res));
    assert.match(res.content[0].text, /^\[answered by the MCP client's own model \(client-model-1\) through sampling/);
    assert.match(res.content[0].text, /All green\.$/);
    assert.equal(res.structuredContent.client_model, true, JSON.stringify(res.structuredContent));
    assert.equal(samplingRequests.length, 1, 'one sampling/createMessage request');
    assert.match(JSON.stringify(samplingRequests[0].messages), /Is the build green\?/);
    assert.equal((await requests(model)).length, 1, 'the provider was tried once (insufficient_quota is not retried)');
  } finally { await client.close(); }
});
