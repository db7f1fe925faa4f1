// A non-streaming answer that takes 40 s to generate upstream (the mock's
// long:40: a stream's deltas spread over 40 s, a non-streaming answer
// after 40 s) succeeds under the gateway's default config (its header
// timeout is 30 s), with the openai client's defaults.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { GATEWAY } from './helpers.mjs';

const client = new OpenAI({ baseURL: `${GATEWAY}/v1`, apiKey: 'gw-test-key' });

test('a 40 s non-streaming answer arrives', { timeout: 120_000 }, async () => {
  const start = Date.now();
  const data = await client.chat.completions.create({ model: 'slow', messages: [{ role: 'user', content: 'Write a long essay' }] });
  assert.match(data.choices[0].message.content, /^Mock answer from gpt-4o-slow/);
  assert.ok(Date.now() - start >= 39_000, `answered after ${Date.now() - start} ms: the mock's long answer came early`);
});
