// A vitest reporter that ends the run with one line per reason tests were skipped for, so that a
// run outside CI says what it did not test and what to install (a test names its need in its own
// or its suite's name, as skipTitle writes it: "... (skipped: needs chromium: apt-get install chromium)").
// Skips that name no reason are counted per file, so none goes unseen.
import path from "node:path";
import type { Reporter, TestModule } from "vitest/node";

const reasonPattern = /\(skipped: ([^)]*)\)/;

/**
 * The name of a test or suite that skips when `skip` holds: `title`, and when it skips, what it
 * needs in the form the summary reads ("needs neovim: apt-get install neovim"). Every skipIf and
 * runIf under test/ names its test with this (test/docs/skip-reporter.test.ts checks).
 */
export function skipTitle(title: string, skip: boolean, need: string): string {
  if (!/^needs \S[^)]*: \S[^)]*$/.test(need))
    throw new Error(`a skip's need reads "needs <what>: <how to get it>", without ")": ${need}`);
  return skip ? `${title} (skipped: ${need})` : title;
}

/** Skipped tests grouped by the reason their names give; the files of those that give none. */
export function skipSummary(skipped: readonly { readonly fullName: string; readonly file: string }[]): string[] {
  const byReason = new Map<string, number>();
  const unexplained = new Map<string, number>();
  for (const t of skipped) {
    const reason = reasonPattern.exec(t.fullName)?.[1];
    if (reason) byReason.set(reason, (byReason.get(reason) ?? 0) + 1);
    else unexplained.set(t.file, (unexplained.get(t.file) ?? 0) + 1);
  }
  const lines = [...byReason].map(([reason, n]) => `skipped ${n} test${n === 1 ? "" : "s"}: ${reason}`);
  if (unexplained.size > 0)
    lines.push(`skipped without a stated reason: ${[...unexplained].map(([file, n]) => `${file} (${n})`).join(", ")}`);
  return lines;
}

export default class SkipReporter implements Reporter {
  onTestRunEnd(testModules: readonly TestModule[]): void {
    const skipped = testModules.flatMap((m) =>
      [...m.children.allTests()]
        .filter((t) => t.result().state === "skipped" && t.options.mode !== "todo")
        .map((t) => ({ fullName: t.fullName, file: path.relative(process.cwd(), m.moduleId) })),
    );
    const lines = skipSummary(skipped);
    if (lines.length > 0) process.stdout.write(`\n${lines.join("\n")}\n`);
  }
}
