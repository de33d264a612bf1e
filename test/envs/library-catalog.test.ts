// The names the checker knows of each env library (src/contracts/libraries/catalog.ts) are
// the installed, pinned libraries' own: read off them by runtime-gpu/arl_envhost/catalog.py and
// compared here, so an unknown dataset or env id is refused at check time for exactly the names
// the library refuses at provision. `ARL_WRITE_CATALOG=1` rewrites the checked-in copy from the
// libraries (after a pin moves); review its diff like any other.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { skipTitle } from "../helpers/skip-reporter.js";
import { libraryCatalog, type LibraryCatalog } from "../../src/contracts/libraries/catalog.js";
import { textworldExpressLibrary } from "../../src/contracts/libraries/textworld-express.js";
import { textworldLibrary } from "../../src/contracts/libraries/textworld.js";
import { python, skipWithout } from "./host-library-support.js";

const catalogFile = path.join(import.meta.dirname, "../../src/contracts/libraries/catalog.ts");
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

/** The catalog as the checked-in module writes it: a dataset a line, long lists wrapped. */
function rendered(c: LibraryCatalog): string {
  const list = (names: readonly string[]) => `[\n${wrapped(names, "      ")}\n    ]`;
  const datasets = Object.entries(c.reasoning_gym.datasets).map(
    ([name, fields]) => `      ${JSON.stringify(name)}: ${JSON.stringify(fields)},`,
  );
  return [
    "{",
    `  reasoning_gym: {\n    version: ${JSON.stringify(c.reasoning_gym.version)},\n    datasets: {\n${datasets.join("\n")}\n    },\n  },`,
    `  textarena: {\n    version: ${JSON.stringify(c.textarena.version)},\n    env_ids: ${list(c.textarena.env_ids)},\n  },`,
    `  textworld_express: {\n    version: ${JSON.stringify(c.textworld_express.version)},\n    games: ${JSON.stringify(c.textworld_express.games)},\n  },`,
    `  textworld: {\n    version: ${JSON.stringify(c.textworld.version)},\n    challenges: ${JSON.stringify(c.textworld.challenges)},\n  },`,
    "}",
  ].join("\n");
}

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
      const generated = `${BEGIN}\nexport const libraryCatalog: LibraryCatalog = ${rendered(installed)};\n`;
      const [head, rest] = readFileSync(catalogFile, "utf8").split(BEGIN) as [string, string];
      const tail = rest.slice(rest.indexOf(END));
      if (process.env.ARL_WRITE_CATALOG) writeFileSync(catalogFile, `${head}${generated}${tail}`);
      // The checked-in text is what the libraries write now (after a rewrite, this module's value is the old one until the next run).
      expect(readFileSync(catalogFile, "utf8")).toBe(`${head}${generated}${tail}`);
      if (!process.env.ARL_WRITE_CATALOG) expect(libraryCatalog).toEqual(installed);
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
