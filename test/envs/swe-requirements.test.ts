// The requirements file of a swe env (docs/envs.md#coding-tasks): the stdlib presets' files pin
// and hash every package (pip installs them with --require-hashes), the plan records the file by
// its sha256 (a stdlib file as std/..., the user's relative to the spec), a missing file is a
// diagnostic at the field, one outside the spec's folder is refused there, and a file changed after compiling is refused before anything reads
// it. Fast: nothing is installed or generated here (test/envs/swe-presets.test.ts does, opt-in).
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Compiler } from "../../src/compiler.js";
import { EnvError } from "../../src/contracts/env.js";
import { createSweEnv, sweTaskSet, type SweEnv } from "../../src/envs/worlds/swe/index.js";
import { lowerModel } from "../../src/plan/lower.js";
import { sweSpec } from "../helpers/swe-spec.js";

const presetsDir = fileURLToPath(new URL("../../stdlib/std/envs/swe/", import.meta.url));

function compile(dir: string, text: string) {
  const file = path.join(dir, "spec.arl");
  writeFileSync(file, text);
  const result = new Compiler().check(file);
  const errors = result.diagnostics.filter((d) => d.severity === "error");
  return {
    errors,
    plans: errors.length === 0 && result.model ? lowerModel(result.model).plans.map((p) => p.plan) : [],
  };
}

const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

describe("swe requirements files", () => {
  it("every stdlib preset's file pins each package with == and hashes it", () => {
    const files = readdirSync(presetsDir).filter((f) => f.endsWith(".txt"));
    expect(files.sort()).toEqual(["dvc.txt", "moto.txt", "mypy.txt", "pydantic.txt"]);
    for (const f of files) {
      // A requirement and its continuation lines (" \\" at the end) are one entry; comments aside.
      const entries = readFileSync(path.join(presetsDir, f), "utf8")
        .replace(/\\\n\s*/g, " ")
        .split("\n")
        .map((l) => l.replace(/#.*$/, "").replace(/\s+/g, " ").trim())
        .filter((l) => l !== "");
      expect(entries.length, f).toBeGreaterThan(5);
      for (const entry of entries) {
        expect(entry, `${f}: ${entry.slice(0, 60)}`).toMatch(
          /^[A-Za-z0-9._-]+==[^\s;]+( ; [^-]+)? (--hash=sha256:[0-9a-f]{64} ?)+$/,
        );
      }
    }
  });

  it("the plan records a preset's file as std/... by its sha256, and the user's own relative to the spec", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "arl-swe-reqs-"));
    const [preset] = compile(dir, sweSpec("env repo extends swe.pydantic { }")).plans;
    expect((preset!.envs.repo as SweEnv).requirements).toEqual({
      path: "std/envs/swe/pydantic.txt",
      sha256: sha256(path.join(presetsDir, "pydantic.txt")),
    });
    writeFileSync(path.join(dir, "reqs.txt"), "pytest==9.2.0 --hash=sha256:" + "0".repeat(64) + "\n");
    const [own] = compile(dir, sweSpec('env repo extends swe.inflection { requirements: "./reqs.txt" }')).plans;
    expect((own!.envs.repo as SweEnv).requirements).toEqual({
      path: "reqs.txt",
      sha256: sha256(path.join(dir, "reqs.txt")),
    });
    const [none] = compile(dir, sweSpec("env repo extends swe.inflection { }")).plans;
    expect((none!.envs.repo as SweEnv).requirements).toBeNull();
  });

  it("a missing file is a diagnostic at the field", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "arl-swe-reqs-"));
    const { errors } = compile(dir, sweSpec('env repo extends swe.inflection { requirements: "./nowhere.txt" }'));
    expect(errors.map((e) => e.code)).toEqual(["data-file-not-found"]);
    expect(errors[0]!.message).toContain("'env.repo.requirements'");
  });

  it("a file outside the spec's folder is refused at the field (data-file-outside-root), never read", () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "arl-swe-reqs-"));
    const dir = path.join(root, "project");
    mkdirSync(dir);
    writeFileSync(path.join(root, "secret.txt"), "not for the plan\n");
    const file = path.join(dir, "spec.arl");
    writeFileSync(file, sweSpec('env repo extends swe.inflection { requirements: "../secret.txt" }'));
    const result = new Compiler().check(file);
    const lowered = lowerModel(result.model!);
    const codes = [...result.diagnostics, ...lowered.diagnostics].map((d) => d.code);
    expect(codes).toContain("data-file-outside-root");
    expect(lowered.plans).toEqual([]);
    expect(JSON.stringify([...result.diagnostics, ...lowered.diagnostics])).not.toContain("not for the plan");
  });

  it("a file changed after compiling is refused before the generator runs", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "arl-swe-reqs-"));
    writeFileSync(path.join(dir, "reqs.txt"), "pytest==9.2.0 --hash=sha256:" + "0".repeat(64) + "\n");
    const [plan] = compile(dir, sweSpec('env repo extends swe.inflection { requirements: "./reqs.txt" }')).plans;
    writeFileSync(path.join(dir, "reqs.txt"), "pytest==9.1.0 --hash=sha256:" + "1".repeat(64) + "\n");
    const env = plan!.envs.repo as SweEnv;
    const error = await sweTaskSet(env, undefined, dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EnvError);
    expect((error as EnvError).message).toMatch(
      /swe env: the requirements file '.*reqs.txt' has sha256 [0-9a-f]{64}, but the plan was compiled against/,
    );
    // Without a data root the user's file cannot be found: the kind says so.
    const rootless = await createSweEnv()
      .create(env, 0, 0)
      .catch((e: unknown) => e);
    expect((rootless as EnvError).message).toMatch(/without a data root/);
  });
});
