// Real-client tests of `llmguard mcp --upstream`: the official MCP
// TypeScript SDK client and the MCP Inspector CLI each spawn llmguard
// guarding the fake upstream MCP server (a real stdio child process of
// llmguard), as a user's MCP client would. Default settings throughout.
//
// Run by mcpproxy_test.go, which builds both binaries and sets LLMGUARD_BIN
// and FAKE_BIN; by hand:
//   LLMGUARD_BIN=/path/to/llmguard FAKE_BIN=/path/to/fake-mcp-server node --test
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const BIN = process.env.LLMGUARD_BIN;
const FAKE = process.env.FAKE_BIN;
if (!BIN || !FAKE) throw new Error('set LLMGUARD_BIN and FAKE_BIN');
const here = dirname(fileURLToPath(import.meta.url));
const INSPECTOR = join(here, 'node_modules', '.bin', 'mcp-inspector');

// guarded starts `llmguard mcp --upstream fake=FAKE` with its own execution log.
async function guarded(extra = []) {
  const log = join(mkdtempSync(join(tmpdir(), 'llmguard-proxy-')), 'executions.log');
  const transport = new StdioClientTransport({
    command: BIN,
    args: ['mcp', ...extra, '--upstream', `fake=${FAKE}`],
    env: { PATH: process.env.PATH, HOME: process.env.HOME, FAKE_UPSTREAM_LOG: log },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'llmguard-proxy-node-test', version: '1.0.0' });
  await client.connect(transport);
  const executions = (tool) => existsSync(log)
    ? readFileSync(log, 'utf8').split('\n').filter((l) => l === tool).length : 0;
  return { client, executions };
}

function text(res) {
  return res.content.filter((c) => c.type === 'text').map((c) => c.text).join('');
}

function oneLine(res) {
  assert.equal(res.isError, true, 'want an isError result: ' + JSON.stringify(res));
  const t = text(res);
  assert.ok(t.length > 0 && !/[\r\n]/.test(t), 'not one line: ' + JSON.stringify(t));
  return t;
}

test('TypeScript SDK: the upstream tools are re-exposed beside llmguard\'s own, with schemas and annotations', async () => {
  const { client } = await guarded();
  try {
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    for (const name of ['ask', 'decode_error', 'echo', 'lookup', 'charge', 'fail']) {
      assert.ok(byName[name], `no tool ${name} in ${Object.keys(byName)}`);
    }
    assert.equal(byName.echo.annotations?.readOnlyHint, true);
    assert.ok(byName.lookup.inputSchema.properties.crash_first, 'lookup lost its schema');
    const res = await client.callTool({ name: 'echo', arguments: { text: 'through llmguard' } });
    assert.equal(text(res), 'through llmguard');
    const { resources } = await client.listResources();
    assert.ok(resources.some((r) => r.uri === 'fake://readme'), 'the resource is not passed through');
    const prompt = await client.getPrompt({ name: 'greet', arguments: { name: 'Ada' } });
    assert.equal(prompt.messages[0].content.text, 'Hello, Ada!');
  } finally {
    await client.close();
  }
});

test('TypeScript SDK: a traceback is one isError line naming server and tool', async () => {
  const { client } = await guarded();
  try {
    const line = oneLine(await client.callTool({ name: 'fail', arguments: {} }));
    assert.equal(line, 'fake/fail: tool error: LookupError: item 42 not found in catalog; not retried by llmguard (the tool is not idempotent)');
  } finally {
    await client.close();
  }
});

test('TypeScript SDK: a payment the agent retries after the tool deadline is charged once', async () => {
  const { client, executions } = await guarded(['--tool-timeout', '1s']);
  try {
    const args = { amount: 5, sleep_ms: 2500 };
    const t0 = Date.now();
    const first = oneLine(await client.callTool({ name: 'charge', arguments: args }));
    const t1 = Date.now();
    assert.match(first, /^fake\/charge: no answer from upstream "fake" within this tool's 1s deadline; .*it will not run twice/);
    // The agent retries; the first call is still running upstream: the
    // retry waits for it (another deadline, then one more retry at most).
    let again;
    for (let i = 0; i < 3; i++) {
      again = await client.callTool({ name: 'charge', arguments: args });
      if (!again.isError) break;
    }
    assert.equal(text(again), 'charged 5 (charge #1)');
    assert.equal(executions('charge'), 1);
    console.log(`attempts charge: first call answered in ${t1 - t0} ms, the agent's retries got the first call's result after ${Date.now() - t1} ms, executions ${executions('charge')}`);
  } finally {
    await client.close();
  }
});

test('TypeScript SDK: a read-only tool is retried through a crash; progress reaches the client', async () => {
  const { client, executions } = await guarded();
  try {
    const res = await client.callTool({ name: 'lookup', arguments: { id: '7', crash_first: 1 } });
    assert.equal(text(res), 'found 7');
    assert.equal(executions('lookup'), 2);
    const progress = [];
    const slow = await client.callTool({ name: 'slow', arguments: { sleep_ms: 800 } }, undefined,
      { onprogress: (p) => progress.push(p.message) });
    assert.equal(text(slow), 'slow done');
    assert.ok(progress.some((m) => m?.startsWith('fake/slow: step (')), 'no upstream progress relayed: ' + JSON.stringify(progress));
  } finally {
    await client.close();
  }
});

// inspector runs the MCP Inspector CLI against llmguard guarding the fake.
function inspector(...args) {
  return new Promise((resolve) => {
    execFile(INSPECTOR, ['--cli', BIN, 'mcp', '--upstream', `fake=${FAKE}`, ...args],
      { env: { ...process.env, NO_COLOR: '1' }, timeout: 60000 },
      (err, stdout, stderr) => resolve({ code: err ? err.code : 0, stdout, stderr }));
  });
}

test('MCP Inspector CLI: tools/list shows the re-exposed tools', async () => {
  const r = await inspector('--method', 'tools/list');
  assert.equal(r.code, 0, r.stderr);
  const { tools } = JSON.parse(r.stdout);
  const echo = tools.find((t) => t.name === 'echo');
  assert.ok(echo && echo.annotations?.readOnlyHint === true, 'echo missing or without readOnlyHint');
  assert.ok(tools.some((t) => t.name === 'llm_status'), 'llmguard\'s own tools are missing');
});

test('MCP Inspector CLI: a failing tool is one line', async () => {
  const r = await inspector('--method', 'tools/call', '--tool-name', 'fail');
  assert.notEqual(r.code, 0, 'the Inspector should report a tool error');
  const res = JSON.parse(r.stdout);
  assert.equal(res.isError, true);
  assert.equal(oneLine(res), 'fake/fail: tool error: LookupError: item 42 not found in catalog; not retried by llmguard (the tool is not idempotent)');
});
