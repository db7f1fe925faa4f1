// The official @anthropic-ai/sdk client, default retry settings, against llmguard serve.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { GATEWAY, assertOneLine, assertRetryAfterHonoured } from './helpers.mjs';

const client = new Anthropic({ baseURL: GATEWAY, apiKey: 'gw-test-key' });
const messages = [{ role: 'user', content: 'Say hello to the gateway please' }];
const weather = [{
  name: 'get_weather', description: 'weather for a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
}];

test('non-streaming success, answered by an OpenAI target', async () => {
  const { data, response } = await client.messages.create({ model: 'oai', max_tokens: 100, messages }).withResponse();
  assert.equal(data.type, 'message');
  assert.equal(data.model, 'gpt-4o');
  assert.equal(data.content[0].type, 'text');
  assert.match(data.content[0].text, /^Mock answer from gpt-4o/);
  assert.equal(data.stop_reason, 'end_turn');
  assert.ok(data.usage.output_tokens > 0);
  assert.equal(response.headers.get('x-llmguard-target'), 'openai/gpt-4o');
});

test('streaming success', async () => {
  const stream = client.messages.stream({ model: 'ant', max_tokens: 100, messages });
  let text = '';
  stream.on('text', (t) => { text += t; });
  const msg = await stream.finalMessage();
  assert.equal(text, 'Mock answer from claude-sonnet-4-5: Say hello to the gateway please');
  assert.equal(msg.stop_reason, 'end_turn');
  assert.ok(msg.usage.output_tokens > 0);
});

test('a tool call falls back from the Anthropic dialect to OpenAI, streaming', async () => {
  const stream = client.messages.stream({
    model: 'ant-overloaded', max_tokens: 100, tools: weather,
    messages: [{ role: 'user', content: 'use get_weather for Paris' }],
  });
  const msg = await stream.finalMessage();
  assert.equal(msg.model, 'gpt-4o');
  const use = msg.content.find((b) => b.type === 'tool_use');
  assert.ok(use, JSON.stringify(msg.content));
  assert.equal(use.name, 'get_weather');
  assert.ok('city' in use.input);
  assert.equal(msg.stop_reason, 'tool_use');
  const next = await client.messages.create({
    model: 'ant-overloaded', max_tokens: 100, tools: weather, messages: [
      { role: 'user', content: 'use get_weather for Paris' },
      { role: 'assistant', content: msg.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny 21C' }] },
    ],
  });
  assert.match(next.content[0].text, /sunny 21C/);
});

test('retry-after is honoured', async () => {
  const data = await client.messages.create({ model: 'ant-retry', max_tokens: 100, messages });
  assert.match(data.content[0].text, /^Mock answer from claude-sonnet-4-5/);
  await assertRetryAfterHonoured('claude-sonnet-4-5-retry', 1);
});

test('fallback to a second provider when the first is overloaded', async () => {
  const { response } = await client.messages.create({ model: 'ant-overloaded', max_tokens: 100, messages }).withResponse();
  assert.equal(response.headers.get('x-llmguard-target'), 'openai/gpt-4o');
  assert.equal(response.headers.get('x-llmguard-fallbacks'), '1');
});

test('a 401 from upstream is a one-line error with its request id', async () => {
  await assert.rejects(client.messages.create({ model: 'ant-bad-key', max_tokens: 100, messages }), (err) => {
    assert.ok(err instanceof Anthropic.AuthenticationError, `got ${err}`);
    assert.equal(err.status, 401);
    assert.equal(err.error.type, 'error');
    assertOneLine(err.error.error.message);
    assert.match(err.error.error.message, /request-id req_/);
    assert.ok(err.requestID, 'no request id on the error');
    assert.equal(err.headers.get('x-should-retry'), 'false');
    return true;
  });
});

test('a mid-stream failure ends the stream cleanly with an error', async () => {
  const stream = client.messages.stream({ model: 'ant-midstream', max_tokens: 100, messages });
  let text = '';
  stream.on('text', (t) => { text += t; });
  await assert.rejects(stream.finalMessage(), (err) => {
    assert.ok(err instanceof Anthropic.APIError, `got ${err}`);
    assertOneLine(err.message);
    return true;
  });
  assert.ok(text.startsWith('Mock answer'), `partial text ${JSON.stringify(text)}`);
});

test('models list', async () => {
  const ids = [];
  for await (const m of client.models.list()) ids.push(m.id);
  assert.ok(ids.includes('ant') && ids.includes('anthropic/claude-sonnet-4-5'), ids.join(','));
});
