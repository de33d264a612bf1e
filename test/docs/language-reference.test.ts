// docs/language.md cannot drift from the schemas `arl check` uses: every block and field of
// src/semantics/schema/ has its row (type, default, meaning) in the doc, no row names a field
// that no longer exists, and the lexical and expression vocabulary the doc lists is the
// compiler's. ARL_WRITE_DOCS=1 rewrites the generated tables in place (review the diff).
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { reservedWords } from "../../src/language/tokens.js";
import { callSignals, episodeSignals, expressionFunctions } from "../../src/semantics/expressions.js";
import { envKinds } from "../../src/semantics/schema/env.js";
import { declarationKinds, variantBlocks } from "../../src/semantics/schema/experiment.js";
import { beginMarker, blockTables, endMarker, renderTable, withTables } from "./schema-tables.js";

const file = new URL("../../docs/language.md", import.meta.url);
const tables = blockTables();
if (process.env.ARL_WRITE_DOCS === "1") writeFileSync(file, withTables(readFileSync(file, "utf8"), tables));
const doc = readFileSync(file, "utf8");

/** The text between a table's markers, or undefined when the doc has no such table. */
function section(id: string): string | undefined {
  const a = doc.indexOf(beginMarker(id));
  const b = doc.indexOf(endMarker(id));
  return a < 0 || b < a ? undefined : doc.slice(a + beginMarker(id).length, b).trim();
}

/** Field paths of the rows of a markdown field table. */
function documentedPaths(text: string): string[] {
  return [...text.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1] as string);
}

describe("docs/language.md", () => {
  it("has a field table for every block and env kind, and none for a block that no longer exists", () => {
    const ids = tables.map((t) => t.id);
    expect(ids).toEqual(
      expect.arrayContaining([...declarationKinds, "constraints", ...envKinds.map((k) => `env.${k}`)]),
    );
    const missing = ids.filter((id) => section(id) === undefined);
    expect(missing, "blocks without a table in docs/language.md").toEqual([]);
    const documented = [...doc.matchAll(/<!-- fields:([\w.]+) /g)].map((m) => m[1] as string);
    expect(
      documented.filter((id) => !ids.includes(id)),
      "tables of blocks the schemas no longer have",
    ).toEqual([]);
  });

  it("documents every field of every schema, and no field the schemas do not have", () => {
    for (const t of tables) {
      const text = section(t.id) ?? "";
      const inDoc = documentedPaths(text);
      const inSchema = t.rows.map((r) => r.path);
      expect(
        inSchema.filter((p) => !inDoc.includes(p)),
        `${t.id}: fields missing from the doc`,
      ).toEqual([]);
      expect(
        inDoc.filter((p) => !inSchema.includes(p)),
        `${t.id}: documented fields that no longer exist`,
      ).toEqual([]);
    }
  });

  it("states each field's type, default and meaning as the schema does (ARL_WRITE_DOCS=1 refreshes)", () => {
    for (const t of tables) {
      for (const r of t.rows)
        expect(r.meaning, `${t.id}.${r.path} has no meaning: give the schema field a doc(...)`).not.toBe("");
      expect(section(t.id), `the ${t.id} table`).toBe(renderTable(t));
    }
  });

  it("has a heading for every top-level block and both variant blocks", () => {
    for (const kind of declarationKinds) expect(doc, kind).toContain(`### \`${kind}\``);
    for (const block of variantBlocks) expect(doc, block).toContain(`${block} {`);
  });

  it("lists the reserved words, the expression functions and the harness's signals", () => {
    const lexical = /## §1 Lexical structure([\s\S]*?)\n## /.exec(doc)?.[1] ?? "";
    for (const word of reservedWords) expect(lexical, word).toContain(`\`${word}\``);
    const expressions = /## §4 Expressions([\s\S]*?)\n## /.exec(doc)?.[1] ?? "";
    for (const name of Object.keys(expressionFunctions)) expect(expressions, name).toMatch(new RegExp(`\`${name}\\(`));
    for (const name of Object.keys(episodeSignals)) expect(expressions, `episode.${name}`).toContain(`\`${name}\``);
    for (const name of Object.keys(callSignals)) expect(expressions, `call.${name}`).toContain(`\`call.${name}`);
  });
});
