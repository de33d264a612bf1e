// The names the checker knows of each env library (src/contracts/libraries/catalog/, a file per
// library) are the installed, pinned libraries' own: read off them by
// runtime-gpu/arl_envhost/catalog.py and compared here, so an unknown dataset or env id is refused
// at check time for exactly the names the library refuses at provision. `ARL_WRITE_CATALOG=1`
// rewrites the checked-in copies from the libraries (after a pin moves); review their diff like any
// other.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { skipTitle } from "../helpers/skip-reporter.js";
import { reasoningGymCatalog, type ReasoningGymCatalog } from "../../src/contracts/libraries/catalog/reasoning-gym.js";
import { textarenaCatalog, type TextArenaCatalog } from "../../src/contracts/libraries/catalog/textarena.js";
import { textworldCatalog, type TextWorldCatalog } from "../../src/contracts/libraries/catalog/textworld.js";
import {
  textworldExpressCatalog,
  type TextWorldExpressCatalog,
} from "../../src/contracts/libraries/catalog/textworld-express.js";
import { textworldExpressLibrary } from "../../src/contracts/libraries/textworld-express.js";
import { textworldLibrary } from "../../src/contracts/libraries/textworld.js";
import { python, skipWithout } from "./host-library-support.js";

/** What `python -m arl_envhost.catalog` prints: each library's part by its key. */
interface LibraryCatalog {
  readonly reasoning_gym: ReasoningGymCatalog;
  readonly textarena: TextArenaCatalog;
  readonly textworld_express: TextWorldExpressCatalog;
  readonly textworld: TextWorldCatalog;
}

const checkedIn: LibraryCatalog = {
  reasoning_gym: reasoningGymCatalog,
  textarena: textarenaCatalog,
  textworld_express: textworldExpressCatalog,
  textworld: textworldCatalog,
};

const catalogDir = path.join(import.meta.dirname, "../../src/contracts/libraries/catalog");
const BEGIN = "// BEGIN generated";
const END = "// END generated";

/** A list of names, wrapped at 100 columns under `indent`. */
function wrapped(names: readonly string[], indent: string): string {
  const lines: string[] = [];
  let line = "";
  for (const name of names.map((n) => JSON.stringify(n))) {
    if (line && indent.length + line.length + name.length + 2 > 100) {
      lines.push(line);
      line = "";
    }
    line += `${line ? " " : ""}${name},`;
  }
  if (line) lines.push(line);
  return lines.map((l) => `${indent}${l}`).join("\n");
}

/**
 * Each library's file and the declaration its generated part writes: a dataset a line, long lists
 * wrapped, kept so by prettier-ignore (formatted, TextArena's ids would take a line each).
 */
const parts: readonly { file: string; declaration: string; body: (c: LibraryCatalog) => string }[] = [
  {
    file: "reasoning-gym.ts",
    declaration: "export const reasoningGymCatalog: ReasoningGymCatalog",
    body: ({ reasoning_gym: c }) => {
      const datasets = Object.entries(c.datasets).map(
        ([name, fields]) => `    ${JSON.stringify(name)}: ${JSON.stringify(fields)},`,
      );
      return `{\n  version: ${JSON.stringify(c.version)},\n  datasets: {\n${datasets.join("\n")}\n  },\n}`;
    },
  },
  {
    file: "textarena.ts",
    declaration: "export const textarenaCatalog: TextArenaCatalog",
    body: ({ textarena: c }) =>
      `{\n  version: ${JSON.stringify(c.version)},\n  env_ids: [\n${wrapped(c.env_ids, "    ")}\n  ],\n}`,
  },
  {
    file: "textworld-express.ts",
    declaration: "export const textworldExpressCatalog: TextWorldExpressCatalog",
    body: ({ textworld_express: c }) =>
      `{\n  version: ${JSON.stringify(c.version)},\n  games: ${JSON.stringify(c.games)},\n}`,
  },
  {
    file: "textworld.ts",
    declaration: "export const textworldCatalog: TextWorldCatalog",
    body: ({ textworld: c }) =>
      `{\n  version: ${JSON.stringify(c.version)},\n  challenges: ${JSON.stringify(c.challenges)},\n}`,
  },
];

function installedCatalog(): LibraryCatalog {
  const run = spawnSync(python, ["-m", "arl_envhost.catalog"], {
    cwd: path.join(import.meta.dirname, "../../runtime-gpu"),
    encoding: "utf8",
    timeout: 120_000,
  });
  if (run.status !== 0) throw new Error(`arl_envhost.catalog failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as LibraryCatalog;
}

const skip =
  skipWithout("reasoning_gym") ||
  skipWithout("textarena") ||
  skipWithout("textworld_express") ||
  skipWithout("textworld");

describe.skipIf(skip)(
  skipTitle(
    "the checker's catalog of the env libraries' names",
    skip,
    "needs reasoning-gym, textarena, textworld-express and textworld in .venv: npm run setup:envs",
  ),
  () => {
    // Read before the tests, not while vitest collects them: a suite that skips collects too.
    let installed: LibraryCatalog;
    beforeAll(() => {
      installed = installedCatalog();
    });

    it("equals the names the installed libraries define (reasoning-gym's datasets and their config fields, TextArena's env ids)", () => {
      for (const { file, declaration, body } of parts) {
        const catalogFile = path.join(catalogDir, file);
        const generated = `${BEGIN}\n// prettier-ignore\n${declaration} = ${body(installed)};\n`;
        const [head, rest] = readFileSync(catalogFile, "utf8").split(BEGIN) as [string, string];
        const tail = rest.slice(rest.indexOf(END));
        if (process.env.ARL_WRITE_CATALOG) writeFileSync(catalogFile, `${head}${generated}${tail}`);
        // The checked-in text is what the libraries write now (after a rewrite, the modules' values are the old ones until the next run).
        expect(readFileSync(catalogFile, "utf8")).toBe(`${head}${generated}${tail}`);
      }
      if (!process.env.ARL_WRITE_CATALOG) expect(checkedIn).toEqual(installed);
    });

    it("every TextWorldExpress game and TextWorld challenge the library defines is one the knobs' enums take", () => {
      for (const game of installed.textworld_express.games)
        expect(textworldExpressLibrary.knobs.game.safeParse(game).success).toBe(true);
      expect(textworldExpressLibrary.knobs.game.safeParse("zork").success).toBe(false);
      for (const challenge of installed.textworld.challenges)
        expect(textworldLibrary.knobs.challenge.safeParse(challenge).success).toBe(true);
      expect(textworldLibrary.knobs.challenge.safeParse("tw-zork").success).toBe(false);
    });
  },
);
