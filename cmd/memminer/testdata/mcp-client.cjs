// Drives `memminer mcp` with the official MCP TypeScript SDK's client and
// prints what it answered as one JSON object, for TestMCPTypeScriptClient.
// Usage: NODE_PATH=.../node_modules node mcp-client.cjs '["memminer","mcp",...]'
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

async function main() {
  const [command, ...args] = JSON.parse(process.argv[2]);
  const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
  const client = new Client({ name: "memminer-ts-test", version: "1.0.0" });
  await client.connect(transport);
  const out = { server: client.getServerVersion(), calls: {} };
  out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
  const calls = {
    search: { name: "search", arguments: { query: "db-2", wing: "dwight", results: 2 } },
    wake_up: { name: "wake_up", arguments: { tokens: 300 } },
    conflicts: { name: "conflicts", arguments: {} },
    status: { name: "status", arguments: {} },
    unknown_wing: { name: "search", arguments: { query: "x", wing: "zed" } },
    remember_refused: { name: "remember", arguments: { text: "a fact" } },
  };
  for (const [key, params] of Object.entries(calls)) {
    out.calls[key] = await client.callTool(params);
  }
  try {
    await client.callTool({ name: "frobnicate", arguments: {} });
    out.unknownTool = { code: 0, message: "no error" };
  } catch (e) {
    out.unknownTool = { code: e.code, message: String(e.message) };
  }
  out.resources = (await client.listResources()).resources.map((r) => r.uri);
  out.memory = (await client.readResource({ uri: "memminer://wing/dwight/memory.md" })).contents[0].text;
  out.wakeUp = (await client.readResource({ uri: "memminer://wake-up" })).contents[0].text;
  await client.close();
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
