import type { Emulator } from "../compose/emulator.js";
import type { ClockMode } from "../domain/clock.js";
import type { EndpointSpec } from "../domain/endpoint.js";
import { describeHandler, isLoadBalancer } from "../domain/endpoint.js";

const CLOCK_NOTES: Record<ClockMode, string> = {
  real: "",
  manual: "   (time moves only on POST /_emulator/clock/advance: a /runsync or a job's run waits for it)",
  auto: "   (follows the wall; skips to the next timer while a client waits and nothing runs on real time)",
};

/** The startup banner: where everything is. */
export function banner(e: Emulator, o: { version: string; db: string; configSource: string; endpoints: EndpointSpec[]; recovered: number }): string {
  const lines = [
    `minipod ${o.version} listening on ${e.url}`,
    "",
    `  queue API   ${e.url}/v2/{endpoint_id}/run   (runpod-sdk: baseUrl "${e.url}/v2")`,
    `  OpenAI API  ${e.url}/v2/{endpoint_id}/openai/v1   (the openai SDK's baseURL)`,
    `  load-balancing endpoints  ${e.url}/lb/{endpoint_id}/{path}   ·   http://{endpoint_id}.localhost:${e.port}/{path}`,
    ...(e.tls ? [`  TLS         https:// on the same port; trust ${e.tls.caFile} (SSL_CERT_FILE, NODE_EXTRA_CA_CERTS)`] : []),
    `  dashboard   ${e.url}/${e.config.controlKey ? "?key=<controlKey>" : ""}`,
    `  docs        ${e.url}/docs   ·   OpenAPI ${e.url}/openapi.json`,
    `  control     ${e.url}/_emulator/clock   ·   POST /_emulator/clock/advance {"ms":N}`,
    `              reset: curl -X POST -H 'content-type: application/json' -d '{}' ${e.url}/_emulator/reset`,
    `  clock       ${e.clock.mode}${e.clock.mode !== "manual" && e.config.clock.speed !== 1 ? ` ×${e.config.clock.speed}` : ""}, now ${new Date(e.clock.now()).toISOString()}${CLOCK_NOTES[e.clock.mode]}`,
    `  database    ${o.db}`,
    `  config      ${o.configSource}`,
    `  auth        ${e.config.auth.keys.length ? `${e.config.auth.keys.length} API key(s) from auth.keys` : "open: any non-empty API key is accepted (no auth.keys configured)"}`,
    `  limits      ${e.config.rateLimits.enabled ? `REST ${e.config.rateLimits.rest.minute}/min ${e.config.rateLimits.rest.hour}/h ${e.config.rateLimits.rest.day}/day per key · queue: the specification's table` : "rate limits off (rateLimits.enabled: false)"}`,
  ];
  for (const w of e.warnings) lines.push(`  ${w}`);
  if (o.recovered > 0) lines.push(`  recovered   ${o.recovered} job(s) that were running when the previous process stopped (re-queued, or failed if already re-queued 3 times)`);
  lines.push("", o.endpoints.length ? "  endpoints" : "  endpoints   none configured (add some to emulator.config.json)");
  const width = Math.max(0, ...o.endpoints.map((s) => s.id.length));
  for (const s of o.endpoints) {
    if (isLoadBalancer(s)) {
      lines.push(
        `    ${s.id.padEnd(width)}  ${e.url}/lb/${s.id}   ·   http://${s.id.toLowerCase()}.localhost:${e.port}   load balancer, handler ${describeHandler(s.handler)}, workers ${s.workersMin}..${s.workersMax}`,
      );
    } else {
      lines.push(`    ${s.id.padEnd(width)}  ${e.url}/v2/${s.id}   handler ${describeHandler(s.handler)}, workers ${s.workersMin}..${s.workersMax}`);
    }
  }
  return lines.join("\n") + "\n";
}
