// The bench's command line: `--help` prints the usage with every option and section instead of
// running anything, and an unknown option, a bad count or a section name that matches nothing is
// an error with the usage (exit status 2), not a quarter of an hour of every section.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BenchUsageError, parseBenchArgs, pickSections } from "../../src/bench/options.js";

const main = path.join(import.meta.dirname, "../../dist/bench/main.js");
const bench = (...args: string[]) =>
  spawnSync(process.execPath, [main, ...args], { encoding: "utf8", timeout: 60_000 });

describe("bench options", () => {
  it("parses every option, with its value after a space or an equals sign", () => {
    expect(
      parseBenchArgs([
        "--json",
        "--only",
        "peer",
        "--rounds=4",
        "--steps",
        "3",
        "--tokens",
        "8",
        "--runs",
        "2",
        "--warmup=1",
        "--seeds",
        "2",
        "--lines",
        "100",
        "--instructions",
      ]),
    ).toEqual({
      help: false,
      json: true,
      instructions: true,
      only: "peer",
      rounds: 4,
      steps: 3,
      tokens: 8,
      runs: 2,
      warmup: 1,
      seeds: 2,
      lines: 100,
    });
    expect(parseBenchArgs(["-h"]).help).toBe(true);
    expect(parseBenchArgs([])).toEqual({ help: false, json: false, instructions: false });
  });

  it("refuses an unknown option, a stray argument and a count that is not a positive integer", () => {
    expect(() => parseBenchArgs(["--round", "3"])).toThrow(new BenchUsageError("unknown option '--round'"));
    expect(() => parseBenchArgs(["peer"])).toThrow(new BenchUsageError("unknown argument 'peer'"));
    expect(() => parseBenchArgs(["--rounds", "0"])).toThrow(
      new BenchUsageError("--rounds needs a positive integer, got '0'"),
    );
    expect(() => parseBenchArgs(["--steps"])).toThrow(
      new BenchUsageError("--steps needs a positive integer, got nothing"),
    );
    expect(() => parseBenchArgs(["--only"])).toThrow(new BenchUsageError("--only needs the text of a section's name"));
    expect(() => parseBenchArgs(["--json=yes"])).toThrow(new BenchUsageError("--json takes no value"));
  });

  it("picks the sections whose name contains the text, the on-request ones too, and refuses a text that names none", () => {
    const all = [{ name: "front end" }, { name: "peer: ARL against TRL" }];
    const onRequest = [{ name: "mini: experiments/mini/a.arl" }];
    expect(pickSections(all, onRequest, undefined)).toEqual(all);
    expect(pickSections(all, onRequest, "peer")).toEqual([all[1]]);
    expect(pickSections(all, onRequest, "mini")).toEqual(onRequest);
    expect(() => pickSections(all, onRequest, "gpu")).toThrow(new BenchUsageError("no section's name contains 'gpu'"));
  });

  it("--help prints the options and the sections and runs none (dist/bench/main.js)", () => {
    const done = bench("--help");
    expect(done.status).toBe(0);
    expect(done.stdout).toMatch(/^usage: node dist\/bench\/main\.js \[options\]/);
    for (const option of [
      "--only TEXT",
      "--json",
      "--runs N",
      "--warmup N",
      "--lines N",
      "--seeds N",
      "--rounds N",
      "--steps N",
      "--tokens N",
      "--instructions",
      "--help",
    ])
      expect(done.stdout).toContain(option);
    expect(done.stdout).toContain("\n  peer: ARL's run loop against TRL's GRPOTrainer");
    expect(done.stdout).toContain("\n  asynchronous rollout:");
    expect(done.stdout).not.toContain("==");
  });

  it("an unknown option or a section name that matches nothing is an error with the usage", () => {
    for (const [args, message] of [
      [["--rounds", "3", "--bogus"], "arl bench: unknown option '--bogus'"],
      [["--only", "no such section"], "arl bench: no section's name contains 'no such section'"],
    ] as const) {
      const done = bench(...args);
      expect(done.status).toBe(2);
      expect(done.stdout).toBe("");
      expect(done.stderr).toContain(message);
      expect(done.stderr).toContain("usage: node dist/bench/main.js");
    }
  });
});
