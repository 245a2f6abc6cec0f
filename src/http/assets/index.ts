import { createHash } from "node:crypto";
import { DASHBOARD_JS } from "./client.js";
import { FAVICON_SVG } from "./icon.js";
import { DASHBOARD_CSS } from "./styles.js";

// The files the dashboard, /docs and the GraphQL explorer load, served at /_dashboard/assets/.

interface Asset {
  body: string;
  type: string;
  /** Content hash, part of the asset's URL so a browser never keeps a stale copy. */
  hash: string;
}

const asset = (body: string, type: string): Asset => ({ body, type, hash: createHash("sha256").update(body).digest("hex").slice(0, 12) });

export const ASSETS: Record<string, Asset> = {
  "dashboard.js": asset(DASHBOARD_JS, "text/javascript; charset=utf-8"),
  "dashboard.css": asset(DASHBOARD_CSS, "text/css; charset=utf-8"),
  "icon.svg": asset(FAVICON_SVG, "image/svg+xml"),
};

/** The URL of a dashboard asset, with its content hash. */
export const assetUrl = (name: keyof typeof ASSETS & string): string => `/_dashboard/assets/${name}?v=${ASSETS[name]!.hash}`;
