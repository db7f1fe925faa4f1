// The shared client cases (test/harness/contract.mjs) for the Vercel AI SDK:
// generateText and streamText with @ai-sdk/openai's default provider (the
// Responses API), its Chat Completions model, and @ai-sdk/anthropic, each
// with the SDK's default retry settings (maxRetries 2).
import { generateText, streamText } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { clients, contract, GATEWAY, PROMPT } from '../harness/contract.mjs';

const openai = (fetch) => createOpenAI({ baseURL: `${GATEWAY}/v1`, apiKey: 'gw-test-key', fetch });
const anthropic = (fetch) => createAnthropic({ baseURL: `${GATEWAY}/v1`, apiKey: 'gw-test-key', fetch });

const generate = (model) => generateText({ model, prompt: PROMPT }).then((r) => r.text);

async function stream(model) {
  const r = streamText({ model, prompt: PROMPT, onError: () => {} });
  let text = '';
  for await (const part of r.fullStream) {
    if (part.type === 'text-delta') text += part.text;
    if (part.type === 'error') throw part.error;
  }
  return text;
}

clients(() => {
  contract('ai-openai', (fetch) => { const p = openai(fetch); return (m) => generate(p(m)); });
  contract('ai-openai-stream', (fetch) => { const p = openai(fetch); return (m) => stream(p(m)); });
  contract('ai-openai-chat', (fetch) => { const p = openai(fetch); return (m) => generate(p.chat(m)); });
  contract('ai-openai-chat-stream', (fetch) => { const p = openai(fetch); return (m) => stream(p.chat(m)); });
  contract('ai-anthropic', (fetch) => { const p = anthropic(fetch); return (m) => generate(p(m)); });
  contract('ai-anthropic-stream', (fetch) => { const p = anthropic(fetch); return (m) => stream(p(m)); });
});
