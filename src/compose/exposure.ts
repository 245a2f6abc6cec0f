/** Whether `host` (what minipod binds) is reachable from this machine only. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || h.startsWith("127.") || h.startsWith("::ffff:127.");
}

/**
 * What start-up warns about when minipod listens beyond this machine: with no API keys, every key
 * is accepted, so anyone who reaches it can use every service route; with no `controlKey`, anyone
 * can drive and read its control API, dashboard and export (every job's input included).
 */
export function exposureWarnings(host: string, guards: { apiKeys: boolean; controlKey: boolean }): string[] {
  if (isLoopback(host)) return [];
  const where = `minipod is listening on ${host}, beyond this machine,`;
  const warnings: string[] = [];
  if (!guards.apiKeys) {
    warnings.push(`WARNING: ${where} and no API keys are configured: anyone who can reach it can use every service route (/v1, /v2). Set auth.keys in the config, or bind 127.0.0.1.`);
  }
  if (!guards.controlKey) {
    warnings.push(
      `WARNING: ${where} and no controlKey is set: anyone who can reach it can reset it, move its clock, plant faults, take snapshots and download the export with every job's input (/_emulator/*, the dashboard at /). Set controlKey in the config, or bind 127.0.0.1.`,
    );
  }
  return warnings;
}
