import type { FaultRule, Fetched } from "../data.js";
import { Empty, Unavailable } from "../components.js";

/** The fault rules in force, each with what it matches, what it does and how often it fired. */
export function FaultsBody({ faults }: { faults: Fetched<{ faults: FaultRule[] }> }) {
  if (!faults.ok) return <Unavailable what="Fault injection" reason={faults.reason} />;
  const rules = faults.data.faults;
  if (rules.length === 0) return <Empty>No fault rules. Add one with the form above.</Empty>;
  return (
    <table class="faults-table fit">
      <thead>
        <tr>
          <th>matches</th>
          <th>fault</th>
          <th class="w-when">when</th>
          <th class="num w-fired">fired</th>
          <th class="w-remove"></th>
        </tr>
      </thead>
      <tbody>
        {rules.map((r) => (
          <tr data-fault={r.id} class={r.spent ? "spent" : undefined}>
            <td title={`${r.endpoint ?? "any endpoint"} · ${r.operation ?? "any operation"}`}>
              {r.endpoint ?? <span class="muted">any endpoint</span>} · {r.operation ?? <span class="muted">any operation</span>}
            </td>
            <td title={describeFault(r.fault)}>
              <code>{describeFault(r.fault)}</code>
            </td>
            <td class="muted" title={describeWhen(r)}>
              {describeWhen(r)}
            </td>
            <td class="num" data-fired={String(r.fired ?? 0)}>
              {r.fired ?? 0}
            </td>
            <td class="actions">
              <button type="button" class="link" data-delete-fault={r.id} title={`remove rule ${r.id}`}>
                remove
              </button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** `http status=503`, `latency ms=2000`, `worker-crash`. */
function describeFault(fault: FaultRule["fault"]): string {
  const params = Object.entries(fault)
    .filter(([k]) => k !== "type")
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
  return [fault.type, ...params].join(" ");
}

function describeWhen(r: FaultRule): string {
  const parts: string[] = [];
  if (r.after !== undefined) parts.push(`after ${r.after}`);
  if (r.times !== undefined) parts.push(`${r.times}×`);
  if (r.probability !== undefined) parts.push(`p=${r.probability}`);
  const when = parts.length > 0 ? parts.join(", ") : "always";
  return r.spent ? `${when} · spent` : when;
}
