// The shared client cases (test/harness/contract.mjs) for LangChain JS chat
// models: ChatOpenAI and ChatAnthropic, invoke and stream, each with
// LangChain's default retry settings (AsyncCaller, maxRetries 6).
import { ChatOpenAI } from '@langchain/openai';
import { ChatAnthropic } from '@langchain/anthropic';
import { clients, contract, GATEWAY, PROMPT } from '../harness/contract.mjs';

const openai = (fetch, model) => new ChatOpenAI({ model, apiKey: 'gw-test-key', configuration: { baseURL: `${GATEWAY}/v1`, fetch } });
const anthropic = (fetch, model) => new ChatAnthropic({ model, apiKey: 'gw-test-key', anthropicApiUrl: GATEWAY, clientOptions: { fetch } });

const invoke = async (chat) => (await chat.invoke(PROMPT)).text;

async function stream(chat) {
  let text = '';
  for await (const chunk of await chat.stream(PROMPT)) text += chunk.text;
  return text;
}

clients(() => {
  contract('lc-openai', (fetch) => (m) => invoke(openai(fetch, m)));
  contract('lc-openai-stream', (fetch) => (m) => stream(openai(fetch, m)));
  contract('lc-anthropic', (fetch) => (m) => invoke(anthropic(fetch, m)));
  contract('lc-anthropic-stream', (fetch) => (m) => stream(anthropic(fetch, m)));
});
