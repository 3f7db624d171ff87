// The Vercel AI SDK (ai 6: @ai-sdk/openai's default Responses model, its
// .chat() model and @ai-sdk/openai-compatible) and LangChain's ChatOpenAI
// against agentd's /api/v1/openai, model = an agent id. Each client asks
// once, streams once and runs a caller tool round trip; the result is one
// JSON line for the Go test (app/api/openai_clients_test.go) to check.
import { generateText, streamText, tool, stepCountIs } from "ai";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { ChatOpenAI } from "@langchain/openai";
import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { z } from "zod";

const baseURL = process.env.AGENTD_BASE_URL;
const apiKey = process.env.AGENTD_KEY;
const agent = process.env.AGENTD_AGENT;
const out = {};

const weather = tool({
  description: "The weather in a city",
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, sky: "sunny" }),
});

async function vercel(model) {
  const r = {};
  const whole = await generateText({ model, prompt: "When does the bakery open?", maxRetries: 0 });
  r.generate = { text: whole.text, usage: whole.usage };
  const s = streamText({ model, prompt: "When does the bakery open?", maxRetries: 0, onError: ({ error }) => { r.streamError = String(error); } });
  let text = "";
  for await (const d of s.textStream) text += d;
  r.stream = { text, usage: await s.usage };
  const t = await generateText({ model, prompt: "What is the weather in Lisbon?", tools: { get_weather: weather }, stopWhen: stepCountIs(3), maxRetries: 0 });
  r.tools = {
    text: t.text,
    steps: t.steps.length,
    calls: t.steps.flatMap((st) => st.toolCalls.map((c) => ({ name: c.toolName, input: c.input }))),
    results: t.steps.flatMap((st) => st.toolResults.map((c) => c.output)),
  };
  // A second turn that repeats the first (the Responses model sends the
  // earlier answer back as an item_reference).
  const again = await generateText({ model, messages: [
    { role: "user", content: "When does the bakery open?" }, ...whole.response.messages, { role: "user", content: "Thanks, and on Sundays?" }], maxRetries: 0 });
  r.followUp = { text: again.text };
  return r;
}

const openai = createOpenAI({ baseURL, apiKey });
const compat = createOpenAICompatible({ name: "agentd", baseURL, apiKey, includeUsage: true });
out.responses = await vercel(openai(agent));
out.chat = await vercel(openai.chat(agent));
out.compatible = await vercel(compat(agent));

// textOf is a message's text: a string, or (Responses API) content blocks.
const textOf = (c) => (typeof c === "string" ? c : c.map((b) => b.text ?? "").join(""));

async function langchain(useResponsesApi) {
  const r = {};
  const lc = new ChatOpenAI({ model: agent, apiKey, configuration: { baseURL }, maxRetries: 0, useResponsesApi });
  const m = await lc.invoke("When does the bakery open?");
  r.invoke = { text: textOf(m.content), usage: m.usage_metadata };
  let acc;
  for await (const chunk of await lc.stream("When does the bakery open?")) acc = acc ? acc.concat(chunk) : chunk;
  r.stream = { text: textOf(acc.content), usage: acc.usage_metadata };
  const bound = lc.bindTools([{ type: "function", function: { name: "get_weather", description: "The weather in a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }]);
  const q = new HumanMessage("What is the weather in Lisbon?");
  const call = await bound.invoke([q]);
  r.bindTools = { calls: call.tool_calls.map((c) => ({ name: c.name, args: c.args })) };
  const tc = call.tool_calls[0];
  const done = await bound.invoke([q, call, new ToolMessage({ tool_call_id: tc.id, content: JSON.stringify({ city: "Lisbon", sky: "sunny" }) })]);
  r.bindTools.text = textOf(done.content);
  return r;
}

out.langchain = await langchain(false);
out.langchainResponses = await langchain(true);
console.log(JSON.stringify(out));
