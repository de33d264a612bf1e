// Number and text formatting shared by the HTML and markdown renderers.
import type { Interval } from "../rl/eval.js";

export function fixed(x: number | undefined | null, digits = 3): string {
  if (x === undefined || x === null || !Number.isFinite(x)) return "–";
  const s = x.toFixed(digits);
  return /^-0\.?0*$/.test(s) ? s.slice(1) : s;
}

export function signed(x: number, digits = 3): string {
  const s = fixed(x, digits);
  return x > 0 && s !== fixed(0, digits) ? `+${s}` : s;
}

export function interval(i: Interval | null | undefined, digits = 3): string {
  if (!i) return "–";
  return `${fixed(i.estimate, digits)} [${fixed(i.low, digits)}, ${fixed(i.high, digits)}]`;
}

export function signedInterval(i: Interval, digits = 3): string {
  return `${signed(i.estimate, digits)} [${signed(i.low, digits)}, ${signed(i.high, digits)}]`;
}

/** A number of seconds for people: 0.42 s, 12.3 s, 4 min 05 s, 2 h 03 min. */
export function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "–";
  if (seconds < 10) return `${seconds.toFixed(2)} s`;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${String(Math.round(seconds % 60)).padStart(2, "0")} s`;
  const minutes = Math.round(seconds / 60);
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, "0")} min`;
}

export function percent(part: number, whole: number): string {
  return whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : "–";
}

/** A compact rendering of a JSON value for tables. */
export function jsonValue(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/** Text safe inside a markdown table cell. */
export function escapeMarkdown(text: string): string {
  return text
    .replace(/\\/g, "\\\\")
    .replace(/\|/g, "\\|")
    .replace(/\r?\n/g, " ")
    .replace(/([*`<>])/g, "\\$1");
}

/** A verdict for a paired difference from its 95% interval. */
export function verdict(i: Interval): "better" | "worse" | "no clear difference" {
  if (i.low > 0) return "better";
  if (i.high < 0) return "worse";
  return "no clear difference";
}
