// The official openai client, default retry settings, against llmguard serve.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { GATEWAY, assertOneLine, assertRetryAfterHonoured } from './helpers.mjs';
import { readChat } from '../harness/chat.mjs';

const client = new OpenAI({ baseURL: `${GATEWAY}/v1`, apiKey: 'gw-test-key' });
const messages = [{ role: 'user', content: 'Say hello to the gateway please' }];
const weather = [{
  type: 'function',
  function: {
    name: 'get_weather', description: 'weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
}];

test('non-streaming success, answered by an Anthropic target', async () => {
  const { data, response } = await client.chat.completions.create({ model: 'ant', messages }).withResponse();
  assert.equal(data.object, 'chat.completion');
  assert.equal(data.model, 'claude-sonnet-4-5');
  assert.match(data.choices[0].message.content, /^Mock answer from claude-sonnet-4-5/);
  assert.equal(data.choices[0].finish_reason, 'stop');
  assert.ok(data.usage.total_tokens > 0);
  assert.equal(response.headers.get('x-llmguard-target'), 'anthropic/claude-sonnet-4-5');
});

test('streaming success with usage', async () => {
  const stream = await client.chat.completions.create({
    model: 'oai', messages, stream: true, stream_options: { include_usage: true },
  });
  const { text, finish, usage } = await readChat(stream);
  assert.equal(text, 'Mock answer from gpt-4o: Say hello to the gateway please');
  assert.equal(finish, 'stop');
  assert.ok(usage.total_tokens > 0);
});

test('a tool call falls back from the OpenAI dialect to Anthropic', async () => {
  const { data, response } = await client.chat.completions.create({
    model: 'oai-overloaded', messages: [{ role: 'user', content: 'use get_weather for Paris' }], tools: weather,
  }).withResponse();
  assert.equal(response.headers.get('x-llmguard-target'), 'anthropic/claude-sonnet-4-5');
  assert.equal(response.headers.get('x-llmguard-fallbacks'), '1');
  const call = data.choices[0].message.tool_calls[0];
  assert.equal(call.function.name, 'get_weather');
  assert.ok('city' in JSON.parse(call.function.arguments));
  assert.equal(data.choices[0].finish_reason, 'tool_calls');
  // The conversation continues with the tool result.
  const next = await client.chat.completions.create({
    model: 'oai-overloaded', tools: weather, messages: [
      { role: 'user', content: 'use get_weather for Paris' },
      data.choices[0].message,
      { role: 'tool', tool_call_id: call.id, content: 'sunny 21C' },
    ],
  });
  assert.match(next.choices[0].message.content, /sunny 21C/);
});

test('retry-after is honoured', async () => {
  const data = await client.chat.completions.create({ model: 'oai-retry', messages });
  assert.match(data.choices[0].message.content, /^Mock answer from gpt-4o/);
  await assertRetryAfterHonoured('gpt-4o-retry', 1);
});

test('fallback to a second provider when the first is overloaded', async () => {
  const { response } = await client.chat.completions.create({ model: 'oai-overloaded', messages }).withResponse();
  assert.equal(response.headers.get('x-llmguard-target'), 'anthropic/claude-sonnet-4-5');
});

test('a 401 from upstream is a one-line error with its request id', async () => {
  await assert.rejects(client.chat.completions.create({ model: 'oai-bad-key', messages }), (err) => {
    assert.ok(err instanceof OpenAI.AuthenticationError, `got ${err}`);
    assert.equal(err.status, 401);
    assertOneLine(err.error.message);
    assert.match(err.error.message, /request-id req_/);
    assert.equal(err.headers.get('x-should-retry'), 'false');
    return true;
  });
});

test('a mid-stream failure ends the stream cleanly with an error', async () => {
  const stream = await client.chat.completions.create({ model: 'oai-midstream', messages, stream: true });
  const got = { text: '' };
  await assert.rejects(readChat(stream, got), (err) => {
    assert.ok(err instanceof OpenAI.APIError, `got ${err}`);
    assertOneLine(err.message);
    return true;
  });
  assert.ok(got.text.startsWith('Mock answer'), `partial text ${JSON.stringify(got.text)}`);
});

test('an unknown model lists the routes', async () => {
  await assert.rejects(client.chat.completions.create({ model: 'no-such-route', messages }), (err) => {
    assert.equal(err.status, 404);
    assert.match(err.error.message, /ant-overloaded/);
    return true;
  });
});

test('embeddings, the SDK asking for base64 by default, through a 503 the gateway absorbs', async () => {
  const { data, response } = await client.embeddings.create({ model: 'oai-embed', input: ['first text', 'second text'] }).withResponse();
  assert.equal(data.data.length, 2);
  for (const [i, e] of data.data.entries()) {
    assert.equal(e.index, i);
    assert.ok(Array.isArray(e.embedding) && e.embedding.length > 0 && e.embedding.every(Number.isFinite), JSON.stringify(e).slice(0, 200));
  }
  assert.notDeepEqual(data.data[0].embedding, data.data[1].embedding);
  assert.equal(response.headers.get('x-llmguard-attempts'), '2');
});

test('models list', async () => {
  const ids = [];
  for await (const m of client.models.list()) ids.push(m.id);
  assert.ok(ids.includes('oai') && ids.includes('openai/gpt-4o'), ids.join(','));
});
