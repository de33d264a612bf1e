// A real editor as the client: headless Neovim starts `arl lsp --stdio` through its built-in
// LSP client, attaches it to a spec, waits for the published diagnostics and writes what
// `vim.diagnostic.get()` holds as JSON. Needs the `neovim` package (Debian: apt-get install -y
// neovim); skipped with a notice where `nvim` is not installed.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { skipTitle } from "../helpers/skip-reporter.js";
import { BIN, checkAsLsp, tempSpecs } from "./client.js";
import { LIB, MAIN } from "./fixtures.js";

const nvim = spawnSync("nvim", ["--version"], { encoding: "utf8" });
const hasNvim = nvim.status === 0;
if (!hasNvim) console.warn("test/lsp/neovim.test.ts: skipped, 'nvim' is not installed (Debian package: neovim)");

// Works with Neovim 0.7 (vim.lsp.start_client) and later (vim.lsp.start).
const INIT = `
local file = vim.env.ARL_NVIM_FILE
local out = vim.env.ARL_NVIM_OUT
vim.cmd("edit " .. vim.fn.fnameescape(file))
vim.bo.filetype = "arl"
local config = { name = "arl", cmd = { vim.env.ARL_NODE, vim.env.ARL_BIN, "lsp", "--stdio" }, root_dir = vim.fn.fnamemodify(file, ":h") }
local id
if vim.lsp.start then
  id = vim.lsp.start(config)
else
  id = vim.lsp.start_client(config)
  vim.lsp.buf_attach_client(0, id)
end
local want = tonumber(vim.env.ARL_NVIM_WANT)
local ok = vim.wait(30000, function() return #vim.diagnostic.get(0) >= want end, 50)
local diagnostics = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  local lsp = (d.user_data and d.user_data.lsp) or {}
  table.insert(diagnostics, { lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, severity = d.severity, source = d.source, message = d.message, code = d.code or lsp.code })
end
local f = io.open(out, "w")
f:write(vim.fn.json_encode({ ok = ok, diagnostics = diagnostics }))
f:close()
vim.lsp.stop_client(id)
vim.wait(2000, function() return vim.lsp.get_client_by_id(id) == nil end, 50)
vim.cmd("qa!")
`;

describe.skipIf(!hasNvim)(
  skipTitle("Neovim as the LSP client", !hasNvim, "needs neovim: apt-get install neovim"),
  () => {
    it("shows the diagnostics the server publishes", () => {
      // A typo in the second experiment; the first one still gets its lint warning.
      const text = MAIN.replace("env shared extends lib.small {}", "env shared extends lib.small { taks: 3 }");
      const specs = tempSpecs({ "main.arl": text, "lib.arl": LIB, "init.lua": INIT });
      try {
        const expected = checkAsLsp(specs.path("main.arl"));
        expect(expected.map((d) => d.code)).toEqual(
          expect.arrayContaining(["unknown-field", "self-inclusive-baseline"]),
        );
        const run = spawnSync("nvim", ["--headless", "-n", "-i", "NONE", "-u", specs.path("init.lua")], {
          cwd: specs.dir,
          encoding: "utf8",
          timeout: 60_000,
          env: {
            ...process.env,
            ARL_NVIM_FILE: specs.path("main.arl"),
            ARL_NVIM_OUT: specs.path("out.json"),
            ARL_NVIM_WANT: String(expected.length),
            ARL_NODE: process.execPath,
            ARL_BIN: BIN,
            XDG_CONFIG_HOME: specs.path("config"),
            XDG_DATA_HOME: specs.path("data"),
            XDG_STATE_HOME: specs.path("state"),
          },
        });
        const out = JSON.parse(readFileSync(specs.path("out.json"), "utf8")) as {
          ok: boolean;
          diagnostics: { lnum: number; col: number; severity: number; source: string; message: string; code: string }[];
        };
        expect(out.ok, `nvim: ${run.stderr}`).toBe(true);
        const seen = out.diagnostics
          .map((d) => ({ line: d.lnum, character: d.col, code: d.code, severity: d.severity, source: d.source }))
          .sort((a, b) => a.line - b.line || a.character - b.character);
        const want = expected.map((d) => ({
          line: d.range.start.line,
          character: d.range.start.character,
          code: d.code,
          severity: d.severity,
          source: "arl",
        }));
        expect(seen).toEqual(want);
        const unknown = out.diagnostics.find((d) => d.code === "unknown-field")!;
        expect(unknown.lnum).toBe(text.split("\n").findIndex((l) => l.includes("taks: 3")));
        expect(unknown.message).toBe("unknown field 'taks' in 'env.shared'");
      } finally {
        specs.dispose();
      }
    });
  },
);
