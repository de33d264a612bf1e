// Valid tool-call arguments built from a tool's JSON Schema (the plan's `parameters`), for the
// env check's probe actions. Variant `i` picks the i-th choice wherever the schema offers several
// (an enum's values, a range's points, the env's words), so successive probe steps differ while
// the same `i` always gives the same call. The result is checked against the schema by the
// caller (ToolCallValidator); a schema this cannot satisfy gives a call that fails that check.

type Schema = Readonly<Record<string, unknown>>;

const isSchema = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);

/** The i-th of `choices`, cycling. */
function pick<T>(choices: readonly T[], i: number): T | undefined {
  return choices.length === 0 ? undefined : choices[i % choices.length];
}

function numberValue(schema: Schema, i: number, integer: boolean): number {
  const min =
    typeof schema.minimum === "number"
      ? schema.minimum
      : typeof schema.exclusiveMinimum === "number"
        ? schema.exclusiveMinimum + (integer ? 1 : 0.5)
        : undefined;
  const max =
    typeof schema.maximum === "number"
      ? schema.maximum
      : typeof schema.exclusiveMaximum === "number"
        ? schema.exclusiveMaximum - (integer ? 1 : 0.5)
        : undefined;
  const low = min ?? (max !== undefined ? Math.min(0, max) : 0);
  const high = max ?? low + 8;
  // Points spread over the range: its low end, its high end, then between them.
  const span = Math.max(0, high - low);
  const steps = [0, 1, 0.5, 0.25, 0.75];
  let value = low + span * (pick(steps, i) ?? 0);
  if (integer) value = Math.min(Math.ceil(value), Math.floor(high));
  return value;
}

function stringValue(schema: Schema, i: number, words: readonly string[]): string {
  const min = typeof schema.minLength === "number" ? schema.minLength : 0;
  const max = typeof schema.maxLength === "number" ? schema.maxLength : Infinity;
  let text = pick(words, i * 7) ?? "probe";
  if (text.length > max) text = text.slice(0, max);
  while (text.length < min) text += "x";
  return text;
}

/** A value `schema` accepts, the i-th of its choices; `words` are candidate strings (the env's own). */
function valueFor(schema: unknown, i: number, words: readonly string[]): unknown {
  if (!isSchema(schema)) return null;
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return pick(schema.enum as unknown[], i);
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return pick(schema.examples as unknown[], i);
  if ("default" in schema) return schema.default;
  const branches = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(branches) && branches.length > 0) return valueFor(branches[0], i, words);
  const type = Array.isArray(schema.type) ? (schema.type as unknown[]).find((t) => t !== "null") : schema.type;
  switch (type) {
    case "string":
      return stringValue(schema, i, words);
    case "integer":
      return numberValue(schema, i, true);
    case "number":
      return numberValue(schema, i, false);
    case "boolean":
      return i % 2 === 0;
    case "null":
      return null;
    case "array": {
      const count = typeof schema.minItems === "number" ? Math.max(1, schema.minItems) : 1;
      return Array.from({ length: count }, (_, k) => valueFor(schema.items, i + k, words));
    }
    case "object":
      return objectFor(schema, i, words);
    default:
      return isSchema(schema.properties) ? objectFor(schema, i, words) : "probe";
  }
}

/** An object with every declared property (required or not): a probe call that exercises them all. */
export function objectFor(schema: Schema, i: number, words: readonly string[]): Record<string, unknown> {
  const properties = isSchema(schema.properties) ? schema.properties : {};
  return Object.fromEntries(Object.entries(properties).map(([name, p]) => [name, valueFor(p, i, words)]));
}
