import { DATA_CENTER_IDS } from "./catalog.js";

/** Kinds of network volume storage a data center may offer. */
export const VOLUME_TYPES = ["STANDARD", "HIGH_PERFORMANCE"] as const;
export type VolumeType = (typeof VOLUME_TYPES)[number];

/** A data center as the catalog describes it; minipod's own table (every one has every GPU and CPU in stock). */
export interface DataCenterInfo {
  id: string;
  name: string;
  region: "NORTH_AMERICA" | "EUROPE" | "ASIA" | "OCEANIA";
  /** ISO 3166-1 alpha-2. */
  country: string;
  networkVolumeTypes: VolumeType[];
  compliance: string[];
  globalNetwork: boolean;
}

const REGIONS: Record<string, DataCenterInfo["region"]> = { US: "NORTH_AMERICA", CA: "NORTH_AMERICA", EU: "EUROPE", EUR: "EUROPE", AP: "ASIA", OC: "OCEANIA" };
const PLACES: Record<string, string> = {
  "EU-RO": "EU Romania", "CA-MTL": "CA Montreal", "EU-SE": "EU Sweden", "US-IL": "US Illinois", "EUR-IS": "EU Iceland", "EU-CZ": "EU Czechia",
  "US-TX": "US Texas", "US-KS": "US Kansas", "US-GA": "US Georgia", "US-WA": "US Washington", "EU-NL": "EU Netherlands", "US-CA": "US California",
  "US-NC": "US North Carolina", "OC-AU": "OC Australia", "US-DE": "US Delaware", "AP-JP": "AP Japan", "EUR-NO": "EU Norway", "EU-FR": "EU France",
};
/** Data centers that also offer high-performance volumes and the global network. */
const HIGH_PERFORMANCE = new Set(["EU-RO-1", "US-KS-2", "US-TX-3", "CA-MTL-1", "EU-SE-1", "US-GA-2", "EUR-IS-1"]);

export const DATA_CENTERS: readonly DataCenterInfo[] = DATA_CENTER_IDS.map((id) => {
  const place = id.replace(/-\d+$/, "");
  const europe = id.startsWith("EU");
  return {
    id,
    name: `${PLACES[place] ?? place} ${id.slice(place.length + 1)}`,
    region: REGIONS[id.split("-")[0]!] ?? "NORTH_AMERICA",
    country: ["US", "CA"].includes(id.split("-")[0]!) ? id.split("-")[0]! : id.split("-")[1]!,
    networkVolumeTypes: HIGH_PERFORMANCE.has(id) ? ["STANDARD", "HIGH_PERFORMANCE"] : ["STANDARD"],
    compliance: europe ? ["GDPR", "ISO_IEC_27001", "SOC_2_TYPE_2"] : ["ISO_IEC_27001", "SOC_2_TYPE_2"],
    globalNetwork: HIGH_PERFORMANCE.has(id),
  };
});

const BY_ID = new Map(DATA_CENTERS.map((d) => [d.id, d]));
export const dataCenter = (id: string): DataCenterInfo | undefined => BY_ID.get(id);
