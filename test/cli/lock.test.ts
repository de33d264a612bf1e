import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runArl } from "../helpers/cli.js";
import { examplesDir, workspace } from "../plan/support.js";

function findmax(): { cwd: string; spec: string; read: () => string; write: (text: string) => void } {
  const cwd = workspace({}, "arl-cli-lock-");
  const spec = path.join(cwd, "findmax.arl");
  copyFileSync(path.join(examplesDir, "findmax.arl"), spec);
  return { cwd, spec, read: () => readFileSync(spec, "utf8"), write: (text) => writeFileSync(spec, text) };
}

interface JsonDiagnostic {
  code: string;
  message: string;
  hint?: string;
  range: { start: { line: number; column: number } };
}

async function lockDiagnostics(cwd: string): Promise<{ code: number; diagnostics: JsonDiagnostic[] }> {
  const run = await runArl(["check", "findmax.arl", "--format", "json"], { cwd });
  const diagnostics = (JSON.parse(run.stdout) as { diagnostics: JsonDiagnostic[] }).diagnostics.filter((d) =>
    d.code.includes("lock"),
  );
  return { code: run.code, diagnostics };
}

describe("arl lock", () => {
  it("writes FILE.lock with every variant's hash, in a stable order, matching the plans", async () => {
    const { cwd } = findmax();
    const run = await runArl(["lock", "findmax.arl"], { cwd });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain("wrote findmax.arl.lock (5 variants)");
    const text = readFileSync(path.join(cwd, "findmax.arl.lock"), "utf8");
    const lock = JSON.parse(text);
    expect(Object.keys(lock)).toEqual(["lock_version", "spec", "stdlib_version", "experiments"]);
    expect(lock.spec).toBe("findmax.arl");
    expect(lock.stdlib_version).toMatch(/^\d+\.\d+\.\d+/);
    expect(Object.keys(lock.experiments)).toEqual(["findmax_grpo", "findmax_loo", "findmax_reductions"]);
    expect(Object.keys(lock.experiments.findmax_reductions)).toEqual(["dr_grpo", "seq_mean", "token_mean"]);
    const plans = JSON.parse((await runArl(["plan", "findmax.arl", "--json"], { cwd })).stdout) as {
      experiment: string;
      variant: string;
      hash: string;
    }[];
    for (const p of plans) expect(lock.experiments[p.experiment][p.variant]).toBe(p.hash);
    expect((await runArl(["lock", "findmax.arl"], { cwd })).code).toBe(0);
    expect(readFileSync(path.join(cwd, "findmax.arl.lock"), "utf8")).toBe(text);
  });

  it("round trip: arl check passes with the lock, also after comment and layout edits", async () => {
    const { cwd, read, write } = findmax();
    expect((await runArl(["lock", "findmax.arl"], { cwd })).code).toBe(0);
    expect(await lockDiagnostics(cwd)).toEqual({ code: 0, diagnostics: [] });
    write(`// a new comment\n${read().replace("seed: 7", "seed:    7   // the seed")}`);
    expect(await lockDiagnostics(cwd)).toEqual({ code: 0, diagnostics: [] });
  });

  it("arl check reports lock-mismatch naming the changed variant, at the experiment's name", async () => {
    const { cwd, read, write } = findmax();
    expect((await runArl(["lock", "findmax.arl"], { cwd })).code).toBe(0);
    write(read().replace("constant(1024)", "constant(2048)"));
    const { code, diagnostics } = await lockDiagnostics(cwd);
    expect(code).toBe(1);
    expect(diagnostics).toHaveLength(1);
    const d = diagnostics[0]!;
    expect(d.code).toBe("lock-mismatch");
    expect(d.message).toBe(
      "experiment 'findmax_reductions' does not match the lock file 'findmax.arl.lock': changed 'dr_grpo'",
    );
    const line =
      read()
        .split("\n")
        .findIndex((l) => l.startsWith("experiment findmax_reductions")) + 1;
    expect(d.range.start).toEqual({ line, column: "experiment ".length + 1 });
    // The text form names it too, with the hint.
    const text = await runArl(["check", "findmax.arl"], { cwd });
    expect(text.stdout).toContain(`findmax.arl:${line}:12: error[lock-mismatch]`);
    expect(text.stdout).toContain("= hint: run 'arl lock findmax.arl' if the change is intended");
    // Re-locking accepts the change.
    expect((await runArl(["lock", "findmax.arl"], { cwd })).code).toBe(0);
    expect(await lockDiagnostics(cwd)).toEqual({ code: 0, diagnostics: [] });
  });

  it("names variants added and removed, and experiments the spec no longer declares", async () => {
    const { cwd, read, write } = findmax();
    expect((await runArl(["lock", "findmax.arl"], { cwd })).code).toBe(0);
    const original = read();
    write(
      original.replace(
        "seq_mean { algorithm.reduction: seq_mean_token_mean }",
        "seq_sum { algorithm.reduction: seq_mean_token_sum }",
      ),
    );
    const renamed = await lockDiagnostics(cwd);
    expect(renamed.diagnostics.map((d) => d.message)).toEqual([
      "experiment 'findmax_reductions' does not match the lock file 'findmax.arl.lock': added 'seq_sum'; removed 'seq_mean'",
    ]);

    const withoutLoo = original.replace(/\/\/\/[^\n]*\nexperiment findmax_loo extends findmax_grpo \{\n[^}]*\}\n/, "");
    expect(withoutLoo).not.toContain("findmax_loo");
    write(withoutLoo);
    const removed = await lockDiagnostics(cwd);
    expect(removed.code).toBe(1);
    expect(removed.diagnostics.map((d) => [d.message, d.range.start])).toEqual([
      [
        "the lock file 'findmax.arl.lock' has experiment 'findmax_loo', which the spec no longer declares: removed 'default'",
        { line: 1, column: 1 },
      ],
    ]);

    write(original.replace("experiment findmax_loo", "experiment findmax_rloo"));
    const added = await lockDiagnostics(cwd);
    expect(added.diagnostics.map((d) => d.message).sort()).toEqual([
      "experiment 'findmax_rloo' is not in the lock file 'findmax.arl.lock': added 'default'",
      "the lock file 'findmax.arl.lock' has experiment 'findmax_loo', which the spec no longer declares: removed 'default'",
    ]);
  });

  it("an unreadable lock file is reported, not ignored", async () => {
    const { cwd } = findmax();
    writeFileSync(path.join(cwd, "findmax.arl.lock"), "{ not json");
    const { code, diagnostics } = await lockDiagnostics(cwd);
    expect(code).toBe(1);
    expect(diagnostics.map((d) => d.code)).toEqual(["invalid-lock-file"]);
    writeFileSync(path.join(cwd, "findmax.arl.lock"), '{"lock_version": 9}');
    expect((await lockDiagnostics(cwd)).diagnostics.map((d) => d.code)).toEqual(["invalid-lock-file"]);
    // arl lock replaces it.
    expect((await runArl(["lock", "findmax.arl"], { cwd })).code).toBe(0);
    expect((await lockDiagnostics(cwd)).code).toBe(0);
  });

  it("refuses (exit 1) when the spec has errors, leaving any old lock as it was", async () => {
    const { cwd, read, write } = findmax();
    const fresh = await runArl(["lock", "findmax.arl"], { cwd });
    expect(fresh.code).toBe(0);
    const before = readFileSync(path.join(cwd, "findmax.arl.lock"), "utf8");
    write(read().replace("group_size: 4", "group_size: 0"));
    const run = await runArl(["lock", "findmax.arl"], { cwd });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("error[invalid-value]");
    expect(run.stderr).toContain("nothing written");
    expect(readFileSync(path.join(cwd, "findmax.arl.lock"), "utf8")).toBe(before);

    const other = workspace({ "bad.arl": "experiment e { policy { model: 1 } }\n" });
    expect((await runArl(["lock", "bad.arl"], { cwd: other })).code).toBe(1);
    expect(existsSync(path.join(other, "bad.arl.lock"))).toBe(false);
  });

  it("exits 2 on usage errors", async () => {
    const { cwd } = findmax();
    expect((await runArl(["lock"], { cwd })).code).toBe(2);
    expect((await runArl(["lock", "a.arl", "b.arl"], { cwd })).code).toBe(2);
    expect((await runArl(["lock", "missing.arl"], { cwd })).code).toBe(2);
  });
});
