// A small YAML writer for the exported files: nested mappings as blocks, every scalar and every
// list as JSON (JSON is YAML 1.2 flow syntax, so PyYAML and OmegaConf read it back exactly).
// No general YAML library is a dependency, and these files hold only JSON values.
import type { JsonValue } from "../../plan/schema.js";

export type YamlMapping = { readonly [key: string]: JsonValue | YamlMapping };

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

function key(name: string): string {
  return PLAIN_KEY.test(name) ? name : JSON.stringify(name);
}

function isMapping(value: unknown): value is YamlMapping {
  return value !== null && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length > 0;
}

/** JSON text, with exponent numbers given a fraction (5e-7 -> 5.0e-7): YAML 1.1 readers take 5e-7 for a string. */
function scalar(value: JsonValue | YamlMapping): string {
  if (typeof value === "number") return JSON.stringify(value).replace(/^(-?\d+)e/, "$1.0e");
  if (Array.isArray(value)) return `[${value.map(scalar).join(",")}]`;
  if (value !== null && typeof value === "object")
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${scalar(v)}`)
      .join(",")}}`;
  return JSON.stringify(value);
}

/** The mapping as block YAML, `indent` spaces deep. */
export function toYaml(mapping: YamlMapping, indent = 0): string {
  const pad = " ".repeat(indent);
  return Object.entries(mapping)
    .map(([name, value]) =>
      isMapping(value) ? `${pad}${key(name)}:\n${toYaml(value, indent + 2)}` : `${pad}${key(name)}: ${scalar(value)}\n`,
    )
    .join("");
}
