// `arl run` end to end on real TextWorld (docs/env-host.md, "TextWorld"): the example spec's
// w2-o3-q4 games generated from its seeds, builtin:tiny cold-started on their walkthroughs and
// trained for 2 iterations on the CPU; a run killed mid-way resumes, reusing the cached games after
// checking their sha256 (nothing generated again). Needs TextWorld in .venv (npm run setup:envs; CI installs it).
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { skipTitle } from "../helpers/skip-reporter.js";
import { envLibraryPythonCandidates } from "../../src/contracts/python.js";

const arl = fileURLToPath(new URL("../../bin/arl.js", import.meta.url));
const spec = fileURLToPath(new URL("../../experiments/textworld/w2-o3-q4.arl", import.meta.url));
const python = envLibraryPythonCandidates()[0] ?? "python3";
const skip = spawnSync(python, ["-c", "import textworld"], { stdio: "ignore" }).status !== 0 && !process.env.CI;
const TEXTWORLD_NEED = "needs textworld in .venv: npm run setup:envs, which builds its jericho with gcc";

/** Every cached game file with its modification time. */
function cachedGames(cache: string): Map<string, number> {
  const found = new Map<string, number>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name === "game.z8") found.set(full, statSync(full).mtimeMs);
    }
  };
  walk(cache);
  return found;
}

describe.skipIf(skip)(skipTitle("arl run on real TextWorld", skip, TEXTWORLD_NEED), () => {
  it("trains builtin:tiny on generated w2-o3-q4 games; a killed run resumes on the cached games, their sha256 checked", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "arl-tw-e2e-"));
    const cache = path.join(dir, "cache");
    const env = { ...process.env, ARL_ENV_CACHE: cache, ARL_ENVS_PYTHON: python };
    // The first run is killed (SIGKILL: no handler runs) once its first iteration is committed.
    const first = spawn(process.execPath, [arl, "run", spec, "--out", path.join(dir, "runs")], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    await new Promise<void>((resolve) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (/iteration 1\/2/.test(output)) first.kill("SIGKILL");
      };
      first.stdout.on("data", onData);
      first.stderr.on("data", onData);
      first.once("exit", () => resolve());
    });
    expect(output).toMatch(/env 'games': textworld 1\.7\.0 prepared 8 tasks/);
    expect(output).toMatch(/sft: trained on 6 walkthroughs/);
    const runDir = output.match(/run textworld_w2_o3_q4\/default \(\w+\) in (\S+)/)![1]!;
    const absolute = path.resolve(runDir);
    const recorded = JSON.parse(readFileSync(path.join(absolute, "env-games-files.json"), "utf8")) as {
      files: { seed: number; sha256: string }[];
    };
    expect(recorded.files.map((f) => f.seed)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const before = cachedGames(cache);
    expect(before.size).toBe(8);

    const resumed = spawnSync(process.execPath, [arl, "run", "--resume", absolute], {
      env,
      encoding: "utf8",
      timeout: 300_000,
    });
    expect(resumed.status, resumed.stdout + resumed.stderr).toBe(0);
    expect(resumed.stdout + resumed.stderr).toMatch(/prepared 8 tasks \(the recorded files' sha256 checked\)/);
    expect(resumed.stdout + resumed.stderr).toMatch(/finished after 2 iterations/);
    expect(cachedGames(cache)).toEqual(before);
    const metrics = readFileSync(path.join(absolute, "metrics.jsonl"), "utf8").trim().split("\n");
    expect(metrics.length).toBe(2);
  }, 400_000);
});
