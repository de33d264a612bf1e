// What the docs say about the CLI holds: the commands they show exist, and nothing describes a
// part that has since been built as still missing.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runArl } from "../helpers/cli.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));

/** Shell lines of a markdown file's ```sh blocks that run `npx arl`, comments stripped. */
function arlCommands(markdown: string): string[][] {
  const blocks = [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks
    .flatMap((b) => b.split("\n"))
    .map((l) => l.replace(/#.*$/, "").trim())
    .flatMap((l) => l.split("&&").map((part) => part.trim()))
    .filter((l) => l.startsWith("npx arl "))
    .map((l) => l.split(/\s+/).slice(2));
}

describe("docs", () => {
  it("the READMEs' and the user guide's arl commands are commands arl has", async () => {
    for (const file of ["README.md", "docs/guide.md", "experiments/README.md"]) {
      const commands = arlCommands(readFileSync(`${repo}/${file}`, "utf8"));
      expect(commands.length, file).toBeGreaterThan(0);
      for (const [name] of commands) {
        const help = await runArl([name!, "--help"], { cwd: tmpdir() });
        expect(help.code, `${file}: arl ${name}`).toBe(0);
      }
    }
  });

  it("no doc or comment describes the runtime or the embedded trainer as not there yet", () => {
    // Tracked text files only (not dist/, node_modules or runs).
    const files = execFileSync("git", ["ls-files", "*.md", "*.arl", "*.ts", "*.py"], { cwd: repo, encoding: "utf8" })
      .split("\n")
      .filter(Boolean);
    const stale = /once the runtime lands|runtime (has not|hasn't) landed|not part of this build yet/i;
    const found = files.filter(
      (f) => f !== "test/cli/docs.test.ts" && stale.test(readFileSync(`${repo}/${f}`, "utf8")),
    );
    expect(found).toEqual([]);
  });
});
