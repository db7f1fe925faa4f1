// The shared client cases (test/harness/contract.mjs) for the official
// openai client (Chat Completions and Responses, streaming and not) and
// @anthropic-ai/sdk (Messages, streaming and not), each with its default
// retry settings and timeout.
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { clients, contract, GATEWAY, PROMPT } from '../harness/contract.mjs';
import { readChat } from '../harness/chat.mjs';

const openai = (fetch) => new OpenAI({ baseURL: `${GATEWAY}/v1`, apiKey: 'gw-test-key', fetch });
const anthropic = (fetch) => new Anthropic({ baseURL: GATEWAY, apiKey: 'gw-test-key', fetch });
const messages = [{ role: 'user', content: PROMPT }];

clients(() => {
  contract('openai-chat', (fetch) => {
    const c = openai(fetch);
    return async (model) => (await c.chat.completions.create({ model, messages })).choices[0].message.content;
  });

  contract('openai-chat-stream', (fetch) => {
    const c = openai(fetch);
    return async (model) => (await readChat(await c.chat.completions.create({ model, messages, stream: true }))).text;
  });

  contract('openai-responses', (fetch) => {
    const c = openai(fetch);
    return async (model) => (await c.responses.create({ model, input: PROMPT })).output_text;
  });

  contract('openai-responses-stream', (fetch) => {
    const c = openai(fetch);
    return async (model) => {
      let text = '';
      for await (const ev of await c.responses.create({ model, input: PROMPT, stream: true })) {
        if (ev.type === 'response.output_text.delta') text += ev.delta;
        if (ev.type === 'error' || ev.type === 'response.failed') throw Object.assign(new Error(JSON.stringify(ev)), { event: ev });
      }
      return text;
    };
  });

  contract('anthropic', (fetch) => {
    const c = anthropic(fetch);
    return async (model) => (await c.messages.create({ model, max_tokens: 100, messages })).content[0].text;
  });

  contract('anthropic-stream', (fetch) => {
    const c = anthropic(fetch);
    return async (model) => {
      const msg = await c.messages.stream({ model, max_tokens: 100, messages }).finalMessage();
      return msg.content[0].text;
    };
  });
});
