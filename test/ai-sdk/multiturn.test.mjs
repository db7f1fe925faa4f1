// Multi-turn conversations with @ai-sdk/openai's default provider (the
// Responses API with store: true, its default) on routes whose targets are
// translated (Anthropic, Gemini): on the second turn the SDK sends its earlier
// answers as {"type":"item_reference","id":"msg_…"} items, which the gateway
// resolves from the items it kept of its own answers. Default retry settings.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';

const GATEWAY = process.env.GATEWAY_URL;
if (!GATEWAY) throw new Error('run through the Go wrapper (GATEWAY_URL unset)');

// recordingFetch keeps the body of every request the SDK sends and the
// status it got.
function recordingFetch() {
  const sent = [];
  const f = async (input, init) => {
    const res = await fetch(input, init);
    sent.push({ body: JSON.parse(init.body), status: res.status });
    return res;
  };
  f.sent = sent;
  return f;
}

const references = (body) => (body.input ?? []).filter((it) => it.type === 'item_reference');

const weather = tool({
  description: 'The weather in a city now',
  inputSchema: jsonSchema({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
  execute: async ({ city }) => `sunny in ${city}, 21 C`,
});

const routes = [
  { route: 'turns-anthropic', model: 'claude-sonnet-4-5' },
  { route: 'turns-gemini', model: 'gemini-2.5-flash' },
];

describe('multi-turn through translated targets', { concurrency: true }, () => {
  for (const { route, model } of routes) {
    test(`${route}: generateText twice, the second with the first's response messages`, async () => {
      const f = recordingFetch();
      const openai = createOpenAI({ baseURL: `${GATEWAY}/v1`, apiKey: 'gw-test-key', fetch: f });
      const first = await generateText({ model: openai(route), prompt: 'Say hello to the gateway please' });
      assert.match(first.text, new RegExp(`^Mock answer from ${model}: Say hello to the gateway`));
      const messages = [
        { role: 'user', content: 'Say hello to the gateway please' },
        ...first.responseMessages,
        { role: 'user', content: 'Now say goodbye to it' },
      ];
      const second = await generateText({ model: openai(route), messages });
      assert.equal(second.text, `Mock answer from ${model}: Now say goodbye to it`);
      const last = f.sent.at(-1);
      assert.equal(references(last.body).length, 1, `the second turn sent no item_reference: ${JSON.stringify(last.body.input)}`);
      assert.deepEqual(f.sent.map((s) => s.status), [200, 200]);
      // A third turn references both earlier answers.
      const third = await generateText({ model: openai(route), messages: [...messages, ...second.responseMessages, { role: 'user', content: 'Once more' }] });
      assert.equal(third.text, `Mock answer from ${model}: Once more`);
      assert.equal(references(f.sent.at(-1).body).length, 2);
    });

    test(`${route}: streamText, then generateText with its response messages`, async () => {
      const f = recordingFetch();
      const openai = createOpenAI({ baseURL: `${GATEWAY}/v1`, apiKey: 'gw-test-key', fetch: f });
      const first = streamText({ model: openai(route), prompt: 'Say hello to the streaming gateway', onError: () => {} });
      assert.match(await first.text, new RegExp(`^Mock answer from ${model}: Say hello`));
      const messages = [{ role: 'user', content: 'Say hello to the streaming gateway' }, ...(await first.responseMessages),
        { role: 'user', content: 'Now say goodbye to it' }];
      const second = await generateText({ model: openai(route), messages });
      assert.equal(second.text, `Mock answer from ${model}: Now say goodbye to it`);
      assert.equal(references(f.sent.at(-1).body).length, 1);
    });

    test(`${route}: a tool loop (stopWhen), then a follow-up turn`, async () => {
      const f = recordingFetch();
      const openai = createOpenAI({ baseURL: `${GATEWAY}/v1`, apiKey: 'gw-test-key', fetch: f });
      const prompt = 'What does get_weather say for Paris?';
      const loop = await generateText({ model: openai(route), tools: { get_weather: weather }, stopWhen: stepCountIs(4), prompt });
      assert.equal(loop.steps.length, 2, `steps: ${loop.steps.map((s) => s.finishReason).join(' ')}`);
      assert.equal(loop.steps[0].toolCalls[0]?.toolName, 'get_weather');
      assert.match(loop.text, new RegExp(`^Mock answer from ${model}: the tool returned: sunny in`));
      const messages = [{ role: 'user', content: prompt }, ...loop.responseMessages, { role: 'user', content: 'Thanks, and goodbye' }];
      const next = await generateText({ model: openai(route), tools: { get_weather: weather }, stopWhen: stepCountIs(4), messages });
      assert.equal(next.text, `Mock answer from ${model}: Thanks, and goodbye`);
      const body = f.sent.at(-1).body;
      assert.ok(body.input.some((it) => it.type === 'function_call'), JSON.stringify(body.input));
      assert.ok(body.input.some((it) => it.type === 'function_call_output'), JSON.stringify(body.input));
      assert.equal(references(body).length, 1, JSON.stringify(body.input));
      assert.deepEqual(f.sent.map((s) => s.status), [200, 200, 200]);
    });
  }
});
