// JSON-lines files of objects (an agent env's task file): one JSON object per non-blank line,
// task N being the N-th such line. Lowering counts them and the runtime reads them by this one rule.

/** The objects, with the file line (1-based) of each; or the first line that is not one. */
type JsonObjectLines =
  | { readonly objects: Readonly<Record<string, unknown>>[]; readonly lines: number[] }
  | { readonly problem: "not JSON" | "not a JSON object"; readonly line: number };

/** The objects of `text`, or the first line (1-based) that is not one. */
export function jsonObjectLines(text: string): JsonObjectLines {
  const objects: Readonly<Record<string, unknown>>[] = [];
  const lines: number[] = [];
  for (const [i, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return { problem: "not JSON", line: i + 1 };
    }
    if (typeof value !== "object" || value === null || Array.isArray(value))
      return { problem: "not a JSON object", line: i + 1 };
    objects.push(value as Record<string, unknown>);
    lines.push(i + 1);
  }
  return { objects, lines };
}
