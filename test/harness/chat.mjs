// readChat, the one way the harnesses read an OpenAI Chat Completions stream
// (the openai client's chunks): the text of its content deltas, the last
// finish_reason and the usage chunk. It reads into acc as it goes, so that
// what came before a mid-stream error stays in acc when the stream throws.
export async function readChat(stream, acc = { text: '', finish: null, usage: null }) {
  for await (const chunk of stream) {
    acc.text += chunk.choices[0]?.delta?.content ?? '';
    acc.finish = chunk.choices[0]?.finish_reason ?? acc.finish;
    acc.usage = chunk.usage ?? acc.usage;
  }
  return acc;
}
