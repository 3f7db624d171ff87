// The official openai client against agentd's OpenAI-compatible endpoint:
// lists the models, asks once without streaming and once streaming, asks
// with a tool of its own, retrieves the model, uses the Responses API
// (streamed and not, continued, with a tool), and prints what it got as one JSON line for the
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

const retrieved = await client.models.retrieve(model);
out.retrieved = { id: retrieved.id, object: retrieved.object };

// The Responses API: not streamed, then streamed (the typed events), then
// continued with previous_response_id.
const resp = await client.responses.create({ model, input: "When does the bakery open?", instructions: "Be brief." });
out.response = { id: resp.id, text: resp.output_text, usage: resp.usage };
const rstream = await client.responses.create({ model, input: "When does the bakery open?", stream: true });
const kinds = [];
let rtext = "";
let completed = null;
for await (const ev of rstream) {
  kinds.push(ev.type);
  if (ev.type === "response.output_text.delta") rtext += ev.delta;
  if (ev.type === "response.completed") completed = ev.response;
}
out.responseStream = { events: kinds, text: rtext, usage: completed?.usage, outputText: completed?.output_text ?? null };
const helper = client.responses.stream({ model, input: "And on Sundays?", previous_response_id: resp.id });
const fin = await helper.finalResponse();
// The stream helper leaves output_text out (only create() adds it).
const finText = fin.output.filter((i) => i.type === "message").flatMap((i) => i.content).map((c) => c.text).join("");
out.followUp = { text: finText, previous: fin.previous_response_id };
const called = await client.responses.create({ model, input: "Bye!", tools: [{ type: "function", name: "hang_up", description: "End the call", parameters: { type: "object", properties: {} }, strict: false }] });
out.responseCall = called.output.filter((i) => i.type === "function_call").map((i) => ({ name: i.name, callId: i.call_id }));

try {
  await client.chat.completions.create({ model: "no-such-agent", messages: [{ role: "user", content: "hi" }] });
} catch (err) {
  out.error = { status: err.status, message: err.message };
}
console.log(JSON.stringify(out));
