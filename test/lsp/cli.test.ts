// `arl lsp` on the command line: --stdio is required; --debounce is checked.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { BIN, REPO } from "./client.js";

const arl = (...args: string[]) =>
  spawnSync(process.execPath, [BIN, ...args], { cwd: REPO, encoding: "utf8", input: "" });

describe("arl lsp", () => {
  it("is listed in the help and has its own usage", () => {
    expect(arl("--help").stdout).toMatch(/\n\s+lsp\s+run the language server/);
    const help = arl("lsp", "--help");
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("Usage: arl lsp --stdio [--debounce MS]");
  });

  it("refuses to start without --stdio or with a bad --debounce", () => {
    const bare = arl("lsp");
    expect(bare.status).toBe(2);
    expect(bare.stderr).toContain("needs --stdio");
    const bad = arl("lsp", "--stdio", "--debounce", "soon");
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("--debounce needs a number of milliseconds");
  });

  it("ends when its input closes", () => {
    const run = spawnSync(process.execPath, [BIN, "lsp", "--stdio"], {
      cwd: REPO,
      encoding: "utf8",
      input: "",
      timeout: 20_000,
    });
    expect(run.signal).toBeNull();
    expect(run.stdout).toBe("");
  });
});
