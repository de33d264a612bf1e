// The report page in a real browser: headless Chromium (Debian's `chromium` package) takes a
// screenshot of report.html from disk, with networking features off; the PNG must be the
// window's size and carry a real page, not a blank one.
import { execa } from "execa";
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runArl } from "../helpers/cli.js";
import { tempDir, writeRun } from "./fixtures.js";

const chromium = "/usr/bin/chromium";
const hasChromium = existsSync(chromium);

/** Width and height from a PNG's IHDR chunk. */
function pngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
  expect(png.subarray(12, 16).toString("latin1")).toBe("IHDR");
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

describe("arl report in a browser", () => {
  it.skipIf(!hasChromium)(hasChromium ? "renders in headless Chromium" : "renders in headless Chromium (skipped: /usr/bin/chromium is absent; install Debian's chromium package)", async () => {
    const cwd = tempDir("arl-report-browser-");
    const g4 = writeRun(path.join(cwd, "runs"), { variant: "g4", gain: 0.1 });
    const g2 = writeRun(path.join(cwd, "runs"), { variant: "g2", gain: 0.06, planned: 8, iterations: 5 });
    const report = await runArl(["report", g4, g2, "--out", "out"], { cwd });
    expect(report.code).toBe(0);
    const page = path.join(cwd, "out", "report.html");
    const shot = path.join(cwd, "out", "report.png");
    const profile = tempDir("arl-report-chromium-");
    const args = [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      `--user-data-dir=${profile}`,
      `--screenshot=${shot}`,
      "--window-size=1200,2000",
      `file://${page}`,
    ];
    const browser = await execa(chromium, args, { reject: false, timeout: 90_000, forceKillAfterDelay: 5_000, stdin: "ignore" });
    expect(existsSync(shot), `no screenshot; chromium exited ${browser.exitCode}:\n${browser.stderr}`).toBe(true);
    const png = readFileSync(shot);
    expect(pngSize(png)).toEqual({ width: 1200, height: 2000 });
    // A blank 1200x2000 page compresses to a few KB; text, tables and charts take far more.
    expect(statSync(shot).size).toBeGreaterThan(60_000);
  }, 120_000);
});
