import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** The service's MCP server as its users run it (`npx @runpod/mcp-server`: the package's stdio bin). */
const MCP_BIN = join(dirname(createRequire(import.meta.url).resolve("@runpod/mcp-server/package.json")), "dist", "stdio.mjs");

/**
 * Connects the MCP server over stdio, pointed at the emulator at `url` with the API key `key`;
 * with `graphql`, its GraphQL tools too (the server reads their URL from variables of their own).
 */
export async function connectMcp(url: string, key: string, home: string, o: { graphql?: boolean } = {}): Promise<{ client: Client; stderr: () => string }> {
  const graphql: Record<string, string> = o.graphql ? { RUNPOD_PUBLIC_GRAPHQL_URL: `${url}/graphql`, RUNPOD_AUTHED_GRAPHQL_URL: `${url}/graphql` } : {};
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MCP_BIN],
    env: { PATH: process.env.PATH ?? "", HOME: home, RUNPOD_API_BASE_URL: url, RUNPOD_SERVERLESS_API_URL: `${url}/v2`, RUNPOD_API_KEY: key, ...graphql },
    stderr: "pipe",
  });
  let err = "";
  transport.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: "minipod-e2e", version: "1.0.0" });
  await client.connect(transport);
  return { client, stderr: () => err };
}

/** A tool's answer: its JSON payload (or text), and whether the server flagged it as an error. */
export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<{ isError: boolean; payload: any }> {
  const result = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: Array<{ type: string; text?: string }> };
  const text = result.content.find((c) => c.type === "text")?.text ?? "";
  let payload: unknown = text;
  try {
    payload = JSON.parse(text);
  } catch {
    /* plain text */
  }
  return { isError: result.isError === true, payload };
}
