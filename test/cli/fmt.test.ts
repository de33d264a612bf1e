// `arl fmt` driven in-process through runCli, with a fake CliIO, in a temporary directory.
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CliIO } from "../../src/cli/io.js";
import { runCli } from "../../src/cli/main.js";

const messy = 'experiment a{\n    seed:1,policy{model:"builtin:tiny"}}\n';
const tidy = 'experiment a {\n  seed: 1\n  policy { model: "builtin:tiny" }\n}\n';
const alsoTidy = "env e {}\n";
const broken = "experiment a {\n  seed: \n}\n";

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "arl-fmt-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

const read = (name: string) => readFileSync(path.join(dir, name), "utf8");

async function fmt(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const io: CliIO = {
    stdout: (s) => void (stdout += s),
    stderr: (s) => void (stderr += s),
    cwd: dir,
    env: {},
    isTTY: false,
  };
  const code = await runCli(["fmt", ...args], io);
  return { code, stdout, stderr };
}

describe("arl fmt", () => {
  it("prints the formatted text of one file, leaving the file alone", async () => {
    write("a.arl", messy);
    const r = await fmt("a.arl");
    expect(r).toEqual({ code: 0, stdout: tidy, stderr: "" });
    expect(read("a.arl")).toBe(messy);
  });

  it("prefixes each file with its path when there are several", async () => {
    write("a.arl", messy);
    write("b.arl", alsoTidy);
    const r = await fmt("a.arl", "b.arl");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`// ==> a.arl <==\n${tidy}// ==> b.arl <==\n${alsoTidy}`);
  });

  it("--write rewrites files that change and leaves formatted ones untouched", async () => {
    write("a.arl", messy);
    const b = write("b.arl", alsoTidy);
    const before = statSync(b);
    chmodSync(path.join(dir, "a.arl"), 0o640);
    const r = await fmt("--write", "a.arl", "b.arl");
    expect(r).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(read("a.arl")).toBe(tidy);
    expect(statSync(path.join(dir, "a.arl")).mode & 0o777).toBe(0o640);
    expect(read("b.arl")).toBe(alsoTidy);
    const after = statSync(b);
    expect(after.ino).toBe(before.ino);
    expect(after.mtimeMs).toBe(before.mtimeMs);
    // No temporary files are left behind.
    expect(readdirSync(dir).sort()).toEqual(["a.arl", "b.arl"]);
  });

  it("--check lists the files that would change and exits 3", async () => {
    write("a.arl", messy);
    write("b.arl", alsoTidy);
    write("sub/c.arl", messy);
    const r = await fmt("--check", ".");
    expect(r.code).toBe(3);
    expect(r.stdout).toBe(`a.arl\n${path.join("sub", "c.arl")}\n`);
    expect(read("a.arl")).toBe(messy);
  });

  it("--check exits 0 when everything is formatted", async () => {
    write("b.arl", alsoTidy);
    expect(await fmt("--check", "b.arl")).toEqual({ code: 0, stdout: "", stderr: "" });
  });

  it("formats every .arl file below a directory, skipping node_modules and hidden directories", async () => {
    write("specs/x.arl", messy);
    write("specs/deep/y.arl", messy);
    write("specs/notes.txt", "not arl");
    write("specs/node_modules/z.arl", messy);
    write("specs/.hidden/w.arl", messy);
    const r = await fmt("--write", "specs");
    expect(r.code).toBe(0);
    expect(read("specs/x.arl")).toBe(tidy);
    expect(read("specs/deep/y.arl")).toBe(tidy);
    expect(read("specs/node_modules/z.arl")).toBe(messy);
    expect(read("specs/.hidden/w.arl")).toBe(messy);
  });

  it("reports syntax errors as file:line:col, exits 1 and leaves the file untouched", async () => {
    write("bad.arl", broken);
    write("a.arl", messy);
    const r = await fmt("--write", "bad.arl", "a.arl");
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^bad\.arl:3:1: error\[syntax-error\]: /m);
    expect(read("bad.arl")).toBe(broken);
    // The other file is still formatted.
    expect(read("a.arl")).toBe(tidy);
  });

  it("exits 1 on syntax errors in --check and stdout modes too", async () => {
    write("bad.arl", broken);
    expect((await fmt("--check", "bad.arl")).code).toBe(1);
    const r = await fmt("bad.arl");
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
  });

  it("leaves a file that is not UTF-8 untouched and exits 1", async () => {
    const latin1 = Buffer.from("e {} // caf\xe9\n", "latin1");
    writeFileSync(path.join(dir, "l.arl"), latin1);
    const r = await fmt("--write", "l.arl");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("l.arl:1:1: error[invalid-encoding]");
    expect(readFileSync(path.join(dir, "l.arl")).equals(latin1)).toBe(true);
  });

  it("counts a byte-order mark as a change", async () => {
    write("bom.arl", `\ufeff${alsoTidy}`);
    expect((await fmt("--check", "bom.arl")).stdout).toBe("bom.arl\n");
    await fmt("--write", "bom.arl");
    expect(read("bom.arl")).toBe(alsoTidy);
  });

  it("is a usage error (exit 2) for a missing file, changing nothing", async () => {
    write("a.arl", messy);
    const r = await fmt("--write", "a.arl", "missing.arl");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("missing.arl");
    expect(read("a.arl")).toBe(messy);
  });

  it("refuses a FIFO and a link to /dev/zero (exit 2) instead of reading them, in every mode, changing nothing", async () => {
    write("a.arl", messy);
    execFileSync("mkfifo", [path.join(dir, "fifo.arl")]);
    symlinkSync("/dev/zero", path.join(dir, "zero.arl"));
    for (const target of ["fifo.arl", "zero.arl"]) {
      for (const mode of [[], ["--write"], ["--check"]]) {
        const r = await fmt(...mode, target, "a.arl");
        expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: "" });
        expect(r.stderr).toContain(`cannot read '${target}': not a regular file`);
      }
    }
    expect(read("a.arl")).toBe(messy);
  }, 10_000);

  it("formats an empty file to an empty file", async () => {
    write("empty.arl", "");
    expect(await fmt("empty.arl")).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(await fmt("--check", "empty.arl")).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(await fmt("--write", "empty.arl")).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(read("empty.arl")).toBe("");
  });

  it("is a usage error (exit 2) without files, with both --write and --check, or an unknown option", async () => {
    expect((await fmt()).code).toBe(2);
    write("a.arl", messy);
    expect((await fmt("--write", "--check", "a.arl")).code).toBe(2);
    expect((await fmt("--frobnicate", "a.arl")).code).toBe(2);
    mkdirSync(path.join(dir, "empty"));
    const r = await fmt("empty");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("no .arl files");
  });
});
