// The Responses API through llmguard serve with the official openai client
// (default retry settings): text and function calls, streaming and not, to
// an OpenAI and an Anthropic target.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { GATEWAY } from './helpers.mjs';

const client = new OpenAI({ baseURL: `${GATEWAY}/v1`, apiKey: 'gw-test-key' });
const tools = [{
  type: 'function', name: 'get_weather', description: 'weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
}];

for (const model of ['oai', 'ant']) {
  test(`${model}: text, with instructions`, async () => {
    const { data, response } = await client.responses.create({
      model, instructions: 'Answer briefly.', input: 'Say hello to the gateway please',
    }).withResponse();
    assert.equal(data.object, 'response');
    assert.equal(data.status, 'completed');
    assert.match(data.output_text, /^Mock answer from \S+: Say hello to the gateway please/);
    assert.ok(data.usage.total_tokens > 0);
    assert.ok(response.headers.get('x-llmguard-target'));
  });

  test(`${model}: text, streaming`, async () => {
    let text = '';
    let done = null;
    for await (const ev of await client.responses.create({ model, input: 'Say hello to the gateway please', stream: true })) {
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      if (ev.type === 'response.completed') done = ev.response;
    }
    assert.match(text, /^Mock answer from \S+: Say hello to the gateway please/);
    assert.equal(done?.status, 'completed');
    assert.equal(done.output_text ?? done.output[0].content[0].text, text);
  });

  test(`${model}: a function call and its output`, async () => {
    const first = await client.responses.create({ model, tools, input: 'use get_weather for Paris' });
    const call = first.output.find((o) => o.type === 'function_call');
    assert.ok(call, JSON.stringify(first.output));
    assert.equal(call.name, 'get_weather');
    assert.ok('city' in JSON.parse(call.arguments));
    const next = await client.responses.create({
      model, tools, input: [
        { role: 'user', content: 'use get_weather for Paris' },
        call,
        { type: 'function_call_output', call_id: call.call_id, output: 'sunny 21C' },
      ],
    });
    assert.match(next.output_text, /sunny 21C/);
  });

  test(`${model}: a function call, streaming`, async () => {
    let args = '';
    let item = null;
    for await (const ev of await client.responses.create({ model, tools, input: 'use get_weather for Paris', stream: true })) {
      if (ev.type === 'response.function_call_arguments.delta') args += ev.delta;
      if (ev.type === 'response.output_item.done' && ev.item.type === 'function_call') item = ev.item;
    }
    assert.ok(item, 'no function_call item');
    assert.equal(item.name, 'get_weather');
    assert.equal(item.arguments, args || item.arguments);
    assert.ok('city' in JSON.parse(item.arguments));
  });
}
