// `npm run grammar`: rewrites the generated files under grammar/ (see generate.ts). The EBNF is
// maintained by hand; test/grammar/drift.test.ts fails when any of these are out of date.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { GRAMMAR_DIR, grammarArtifacts } from "./generate.js";

let changed = 0;
for (const [file, text] of grammarArtifacts()) {
  const target = path.join(GRAMMAR_DIR, file);
  let old: string | undefined;
  try {
    old = readFileSync(target, "utf8");
  } catch {
    old = undefined;
  }
  if (old === text) continue;
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, text);
  changed++;
  process.stdout.write(`wrote grammar/${file}\n`);
}
process.stdout.write(changed === 0 ? "grammar/ is up to date\n" : `${changed} file(s) updated\n`);
