// An MCP server made with the official TypeScript SDK (stateless streamable
// HTTP): lookup_order answers an order's status; requests without the
// token are refused. It prints {"port": N} once listening, for the Go test
// (test/mcp_node_test.go) whose agent calls it in a conversation.
import { createServer } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

function build() {
  const server = new McpServer({ name: "orders", version: "1.0.0" });
  server.registerTool(
    "lookup_order",
    { description: "Look up an order's status", inputSchema: { id: z.string().describe("the order number") } },
    async ({ id }) => ({ content: [{ type: "text", text: `order ${id} shipped on Tuesday` }] }),
  );
  return server;
}

const http = createServer(async (req, res) => {
  if (req.headers.authorization !== "Bearer node-token") {
    res.writeHead(401).end("unauthorized");
    return;
  }
  if (req.method !== "POST") {
    res.writeHead(405).end();
    return;
  }
  let body = "";
  for await (const chunk of req) body += chunk;
  const server = build();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => {
    transport.close();
    server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body ? JSON.parse(body) : undefined);
});
http.listen(0, "127.0.0.1", () => console.log(JSON.stringify({ port: http.address().port })));
