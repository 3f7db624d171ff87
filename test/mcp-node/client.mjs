// The official MCP TypeScript SDK as a client of agentd's /mcp: lists the
// tools, calls a read (list_agents) and a write (create_agent) with the
// owner's key, the same write with a viewer's key, and prints what it got
// as one JSON line for the Go test (test/mcp_node_test.go) to check.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = new URL(process.env.AGENTD_MCP_URL);

async function connect(key) {
  const client = new Client({ name: "agentd-ci", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  await client.connect(transport);
  return client;
}

const text = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("");
const out = {};

const owner = await connect(process.env.AGENTD_KEY);
out.tools = (await owner.listTools()).tools.map((t) => t.name);
const created = await owner.callTool({ name: "create_agent", arguments: { name: "Node desk", type: "chat", instructions: "Be brief." } });
out.create = { isError: created.isError ?? false, text: text(created) };
const listed = await owner.callTool({ name: "list_agents", arguments: { limit: 10 } });
out.list = { isError: listed.isError ?? false, text: text(listed) };
await owner.close();

const viewer = await connect(process.env.AGENTD_VIEWER_KEY);
const refused = await viewer.callTool({ name: "create_agent", arguments: { name: "Not allowed", type: "chat" } });
out.viewerWrite = { isError: refused.isError ?? false, text: text(refused) };
const read = await viewer.callTool({ name: "list_agents", arguments: {} });
out.viewerRead = { isError: read.isError ?? false, text: text(read) };
await viewer.close();

console.log(JSON.stringify(out));
