// The CLI fuzzer: mutated shipped specs (operator chains, deep nesting, member chains, bad
// escapes, lone surrogates, empty files; test/helpers/mutations.ts) and files that are not
// regular files, through the real `node bin/arl.js check` and `fmt` (needs `npm run build`).
// Whatever the input: an exit status the usage text documents, no stack trace or internal error,
// no hang, and `fmt --write` leaves every file it refuses byte for byte as it was.
// Also literals megabytes long where diagnostics quote them and suggest names (bounded work).
// ARL_FUZZ_CLI_FILES=2000 writes that many mutated files instead of the CI's few dozen.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mutate, mutationOf } from "../helpers/mutations.js";
import { counterSpec } from "../helpers/plans.js";
import { shippedSpecs } from "../helpers/specs.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const arl = path.join(repo, "bin", "arl.js");
const fileCount = Number(process.env.ARL_FUZZ_CLI_FILES ?? "40") || 40;

/** Signs of a crash rather than a diagnostic. */
const crashPattern =
  /RangeError|TypeError|Maximum call stack|internal error|format-internal-error|\n\s+at .+\(.+:\d+:\d+\)/;

let dir: string;
let originals: Map<string, Buffer>;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "arl-cli-fuzz-"));
  const specs = shippedSpecs();
  const inputs = fc.sample(
    fc.tuple(fc.constantFrom(...specs), fc.array(mutationOf(3000), { minLength: 1, maxLength: 3 })),
    { numRuns: fileCount, seed: 20261201 },
  );
  inputs.forEach(([spec, mutations], i) => {
    // A lone surrogate cannot be written as UTF-8: the file gets U+FFFD, as an editor would save it.
    writeFileSync(path.join(dir, `m${i}.arl`), mutate(spec.text, mutations));
  });
  writeFileSync(path.join(dir, "empty.arl"), "");
  writeFileSync(
    path.join(dir, "chain.arl"),
    `experiment e { reward { r: ${Array(5000).fill("outcome.success").join(" and ")} } }\n`,
  );
  writeFileSync(path.join(dir, "escapes.arl"), `experiment e { description: "${"\\q".repeat(150_000)}" }\n`);
  // Megabyte literals where a diagnostic quotes them and looks for the closest name (once 17 s each).
  writeFileSync(
    path.join(dir, "huge-tool.arl"),
    counterSpec(`constraints { c: block(call.tool == "${"x".repeat(2_000_000)}") }`),
  );
  writeFileSync(
    path.join(dir, "huge-arg.arl"),
    counterSpec(`constraints { c: block(call.args.value == "${"ab".repeat(1_000_000)}") }`),
  );
  originals = new Map(readdirSync(dir).map((f) => [f, readFileSync(path.join(dir, f))]));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function run(args: string[]) {
  const r = await execa("node", [arl, ...args], { cwd: dir, reject: false, timeout: 60_000 });
  expect(r.timedOut, `arl ${args.join(" ")} hung`).toBe(false);
  expect(`${r.stdout}\n${r.stderr}`).not.toMatch(crashPattern);
  return r;
}

describe("CLI fuzzing", () => {
  it("arl check on every mutated file: diagnostics (exit 0 or 1), no crash", async () => {
    const r = await run(["check", "."]);
    expect([0, 1]).toContain(r.exitCode);
    // A diagnostic quoting a huge literal is elided, its code frame windowed.
    expect(Math.max(...r.stdout.split("\n").map((l) => l.length)), "the longest printed line").toBeLessThan(1500);
    expect(r.stdout).toContain("huge-tool.arl:");
  }, 120_000);

  it("arl fmt --check, then --write: exit 0, 1 or 3; refused files unchanged; written ones are fixed points", async () => {
    const checked = await run(["fmt", "--check", "."]);
    expect([0, 1, 3]).toContain(checked.exitCode);
    const written = await run(["fmt", "--write", "."]);
    expect([0, 1]).toContain(written.exitCode);
    // Each file fmt refused is named in its errors and left as it was.
    const refused = new Set([...written.stderr.matchAll(/^(\S+\.arl):\d+:\d+: error/gm)].map((m) => m[1]!));
    for (const name of refused)
      expect(readFileSync(path.join(dir, name)).equals(originals.get(name)!), name).toBe(true);
    expect(readFileSync(path.join(dir, "empty.arl"), "utf8")).toBe("");
    const again = await run(["fmt", "--check", "."]);
    expect(again.stdout, "files that still change after --write").toBe("");
  }, 180_000);

  it("a FIFO or a link to /dev/zero is refused by check and fmt (exit 2), not read", async () => {
    const special = mkdtempSync(path.join(tmpdir(), "arl-cli-special-"));
    try {
      execFileSync("mkfifo", [path.join(special, "fifo.arl")]);
      symlinkSync("/dev/zero", path.join(special, "zero.arl"));
      // (test/cli/fmt.test.ts runs every fmt mode in-process; here, the real binary once each.)
      for (const args of [
        ["check", "fifo.arl", "zero.arl"],
        ["fmt", "fifo.arl"],
        ["fmt", "--write", "zero.arl"],
      ]) {
        const r = await execa("node", [arl, ...args], { cwd: special, reject: false, timeout: 20_000 });
        expect(r.timedOut, `arl ${args.join(" ")} hung`).toBe(false);
        expect(r.exitCode).toBe(2);
        expect(r.stderr).toContain("cannot read");
      }
    } finally {
      rmSync(special, { recursive: true, force: true });
    }
  }, 120_000);
});
