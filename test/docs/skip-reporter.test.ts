// The vitest run's closing lines about skipped tests (test/helpers/skip-reporter.ts): grouped by the
// need a test's or its suite's name states, and the files of skips that state none.
import { describe, expect, it } from "vitest";
import { skipSummary } from "../helpers/skip-reporter.js";

describe("the skip summary", () => {
  it("gives one line per stated need and lists the files of skips that state none", () => {
    expect(
      skipSummary([
        { fullName: "Neovim as the LSP client (skipped: nvim is not installed; apt-get install neovim) > hover", file: "test/lsp/neovim.test.ts" },
        { fullName: "Neovim as the LSP client (skipped: nvim is not installed; apt-get install neovim) > rename", file: "test/lsp/neovim.test.ts" },
        { fullName: "TextArena through the env host > plays", file: "test/envs/textarena.test.ts" },
      ]),
    ).toEqual(["skipped 2 tests: nvim is not installed; apt-get install neovim", "skipped without a stated reason: test/envs/textarena.test.ts (1)"]);
    expect(skipSummary([])).toEqual([]);
  });
});
