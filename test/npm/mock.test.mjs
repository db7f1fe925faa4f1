// The official openai and @anthropic-ai/sdk clients against `llmguard mock`.
// Run by npm_test.go, which starts the mock and sets MOCK_URL; by hand:
//   llmguard mock --addr 127.0.0.1:8089 & MOCK_URL=http://127.0.0.1:8089 node --test
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { AzureOpenAI } from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { readChat } from '../harness/chat.mjs';

const base = process.env.MOCK_URL;
if (!base) throw new Error('MOCK_URL is not set (the URL of a running llmguard mock)');

const openai = new OpenAI({ apiKey: 'sk-test-openai-1234', baseURL: `${base}/v1`, maxRetries: 0 });
const anthropic = new Anthropic({ apiKey: 'sk-ant-test-1234', baseURL: base, maxRetries: 0 });

const weatherTool = {
  name: 'get_weather',
  description: 'Current weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

async function attempts(path) {
  const res = await fetch(`${base}/_mock/requests?path=${encodeURIComponent(path)}`);
  return (await res.json()).count;
}

test('openai: chat completion', async () => {
  const { data, response, request_id } = await openai.chat.completions
    .create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'Name three primary colors please' }] })
    .withResponse();
  assert.equal(data.model, 'gpt-4.1');
  assert.equal(data.choices[0].message.content, 'Mock answer from gpt-4.1: Name three primary colors please');
  assert.equal(data.choices[0].finish_reason, 'stop');
  assert.ok(data.usage.total_tokens > 0);
  assert.match(request_id, /^req_[0-9a-f]{32}$/);
  assert.equal(response.headers.get('x-request-id'), request_id);
});

test('openai: stream with usage', async () => {
  const stream = await openai.chat.completions.create({
    model: 'gpt-4.1',
    messages: [{ role: 'user', content: 'Summarize: the cat sat on the mat all day long' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  const { text, finish, usage } = await readChat(stream);
  assert.equal(text, 'Summary: the cat sat on the mat all day long.');
  assert.equal(finish, 'stop');
  assert.ok(usage.completion_tokens > 0);
});

test('openai: tool call round trip, streamed and not', async () => {
  const tools = [{ type: 'function', function: weatherTool }];
  const messages = [{ role: 'user', content: 'Call get_weather for Paris' }];
  const first = await openai.chat.completions.create({ model: 'gpt-4.1', messages, tools });
  const call = first.choices[0].message.tool_calls[0];
  assert.equal(first.choices[0].finish_reason, 'tool_calls');
  assert.equal(call.function.name, 'get_weather');
  assert.deepEqual(JSON.parse(call.function.arguments), { city: 'mock' });

  const runner = openai.chat.completions.stream({ model: 'gpt-4.1', messages, tools });
  const streamed = await runner.finalChatCompletion();
  const scall = streamed.choices[0].message.tool_calls[0];
  assert.equal(scall.function.name, 'get_weather');
  assert.deepEqual(JSON.parse(scall.function.arguments), { city: 'mock' });

  const second = await openai.chat.completions.create({
    model: 'gpt-4.1',
    tools,
    messages: [...messages, first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: 'sunny, 21 degrees' }],
  });
  assert.equal(second.choices[0].message.content, 'Mock answer from gpt-4.1: the tool returned: sunny, 21 degrees');
});

test('openai: scripted errors reach the SDK with their code and request id', async () => {
  const opts = { headers: { 'x-mock-fault': 'insufficient_quota' } };
  await assert.rejects(
    openai.chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }] }, opts),
    (err) => {
      assert.ok(err instanceof OpenAI.RateLimitError, `got ${err?.constructor?.name}`);
      assert.equal(err.status, 429);
      assert.equal(err.code, 'insufficient_quota');
      assert.match(err.requestID, /^req_/);
      return true;
    },
  );
  const before = await attempts('/v1/chat/completions');
  const stream = await openai.chat.completions.create(
    { model: 'gpt-4.1', messages: [{ role: 'user', content: 'one two three four five' }], stream: true },
    { headers: { 'x-mock-fault': 'midstream:2' } },
  );
  const got = { text: '' };
  await assert.rejects(readChat(stream, got), OpenAI.APIError);
  assert.equal(got.text, 'Mock answer');
  assert.equal(await attempts('/v1/chat/completions'), before + 1, 'maxRetries: 0 means one attempt');
});

test('anthropic: message', async () => {
  const { data, request_id } = await anthropic.messages
    .create({ model: 'claude-haiku-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Hello from the SDK' }] })
    .withResponse();
  assert.equal(data.model, 'claude-haiku-4-5');
  assert.equal(data.content[0].type, 'text');
  assert.equal(data.content[0].text, 'Mock answer from claude-haiku-4-5: Hello from the SDK');
  assert.equal(data.stop_reason, 'end_turn');
  assert.ok(data.usage.input_tokens > 0 && data.usage.output_tokens > 0);
  assert.match(request_id, /^req_011/);
});

test('anthropic: stream', async () => {
  const stream = anthropic.messages.stream({
    model: 'claude-haiku-4-5',
    max_tokens: 100,
    messages: [{ role: 'user', content: 'Tell me about streams' }],
  });
  let text = '';
  stream.on('text', (t) => { text += t; });
  const final = await stream.finalMessage();
  assert.equal(text, 'Mock answer from claude-haiku-4-5: Tell me about streams');
  assert.equal(final.content[0].text, text);
  assert.equal(final.stop_reason, 'end_turn');
  assert.ok(final.usage.output_tokens > 0);
});

test('anthropic: tool use round trip, streamed and not', async () => {
  const tools = [{ name: weatherTool.name, description: weatherTool.description, input_schema: weatherTool.parameters }];
  const messages = [{ role: 'user', content: 'What is the weather in Paris?' }];
  const first = await anthropic.messages.create({
    model: 'claude-haiku-4-5', max_tokens: 100, messages, tools, tool_choice: { type: 'tool', name: 'get_weather' },
  });
  assert.equal(first.stop_reason, 'tool_use');
  const use = first.content.find((b) => b.type === 'tool_use');
  assert.equal(use.name, 'get_weather');
  assert.deepEqual(use.input, { city: 'mock' });

  const streamed = await anthropic.messages
    .stream({ model: 'claude-haiku-4-5', max_tokens: 100, messages, tools, tool_choice: { type: 'any' } })
    .finalMessage();
  const suse = streamed.content.find((b) => b.type === 'tool_use');
  assert.equal(suse.name, 'get_weather');
  assert.deepEqual(suse.input, { city: 'mock' });

  const second = await anthropic.messages.create({
    model: 'claude-haiku-4-5',
    max_tokens: 100,
    tools,
    messages: [
      ...messages,
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny, 21 degrees' }] },
    ],
  });
  assert.equal(second.content[0].text, 'Mock answer from claude-haiku-4-5: the tool returned: sunny, 21 degrees');
});

test('anthropic: 529 overloaded and mid-stream error', async () => {
  await assert.rejects(
    anthropic.messages.create(
      { model: 'claude-haiku-4-5+fault=529', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
    ),
    (err) => {
      assert.ok(err instanceof Anthropic.APIError, `got ${err?.constructor?.name}`);
      assert.equal(err.status, 529);
      assert.equal(err.error.error.type, 'overloaded_error');
      assert.match(err.requestID, /^req_011/);
      return true;
    },
  );
  const stream = anthropic.messages.stream(
    { model: 'claude-haiku-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'a b c d e f' }] },
    { headers: { 'x-mock-fault': 'midstream:3' } },
  );
  let text = '';
  stream.on('text', (t) => { text += t; });
  await assert.rejects(stream.finalMessage(), (err) => {
    assert.ok(err instanceof Anthropic.APIError, `got ${err?.constructor?.name}`);
    assert.equal(err.error.error.type, 'overloaded_error');
    return true;
  });
  assert.equal(text, 'Mock answer from');
});

test('azure: chat completion through AzureOpenAI (deployment path, api-key header)', async () => {
  const azure = new AzureOpenAI({
    endpoint: base, apiKey: 'azure-test-key-1234', apiVersion: '2024-10-21', deployment: 'my-gpt', maxRetries: 0,
  });
  const res = await azure.chat.completions.create({ model: 'my-gpt', messages: [{ role: 'user', content: 'Hi Azure' }] });
  assert.equal(res.choices[0].message.content, 'Mock answer from my-gpt: Hi Azure');
  await assert.rejects(
    azure.chat.completions.create({ model: 'my-gpt', messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-mock-fault': '429:3' } }),
    (err) => {
      assert.equal(err.status, 429);
      assert.equal(err.headers.get('retry-after-ms'), '3000');
      return true;
    },
  );
});

test('models.list for key checks', async () => {
  const oa = [];
  for await (const m of openai.models.list()) oa.push(m.id);
  assert.ok(oa.includes('gpt-4.1'));
  const an = [];
  for await (const m of anthropic.models.list()) an.push(m.id);
  assert.ok(an.length > 0 && an.every((id) => id.startsWith('claude-')));
});
