// The official openai client against agentd's OpenAI-compatible endpoint:
// lists the models, asks once without streaming and once streaming, asks
// with a tool of its own, and prints what it got as one JSON line for the
// Go test (app/openai_node_test.go) to check.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: process.env.AGENTD_BASE_URL, apiKey: process.env.AGENTD_KEY, maxRetries: 0 });
const model = process.env.AGENTD_AGENT;
const out = {};

const models = await client.models.list();
out.models = models.data.map((m) => m.id);

const whole = await client.chat.completions.create({
  model,
  messages: [{ role: "user", content: "When does the bakery open?" }],
  temperature: 0.2,
  user: "caller-1",
});
out.whole = { content: whole.choices[0].message.content, finish: whole.choices[0].finish_reason, usage: whole.usage };

const stream = await client.chat.completions.create({
  model,
  messages: [{ role: "user", content: "When does the bakery open?" }],
  stream: true,
  stream_options: { include_usage: true },
});
let text = "";
let chunks = 0;
let usage = null;
for await (const chunk of stream) {
  chunks++;
  if (chunk.usage) usage = chunk.usage;
  text += chunk.choices[0]?.delta?.content ?? "";
}
out.stream = { content: text, chunks, usage };

const tools = [{ type: "function", function: { name: "hang_up", description: "End the call", parameters: { type: "object", properties: {} } } }];
const toolStream = client.chat.completions.stream({ model, messages: [{ role: "user", content: "Bye!" }], tools, parallel_tool_calls: false });
const final = await toolStream.finalChatCompletion();
out.toolCall = { finish: final.choices[0].finish_reason, calls: final.choices[0].message.tool_calls };

try {
  await client.chat.completions.create({ model: "no-such-agent", messages: [{ role: "user", content: "hi" }] });
} catch (err) {
  out.error = { status: err.status, message: err.message };
}
console.log(JSON.stringify(out));
