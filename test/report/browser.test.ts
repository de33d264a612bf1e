// The report page in a real browser: headless Chromium (Debian's `chromium` package) takes a
// screenshot of a sweep's report.html from disk, with networking features off; the PNG must be
// the window's size and carry a real page, not a blank one. With ARL_WRITE_DOCS=1 the
// screenshot becomes the README's picture, docs/images/report-sweep.png.
import { execa } from "execa";
import { copyFileSync, existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runArl } from "../helpers/cli.js";
import { tempDir, writeSweep } from "./fixtures.js";

const docsImage = fileURLToPath(new URL("../../docs/images/report-sweep.png", import.meta.url));

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
    writeSweep(cwd);
    const report = await runArl(["report", "spec.arl", "--smooth", "0.5"], { cwd });
    expect(report.code).toBe(0);
    const page = path.join(cwd, "runs", "counting", "report.html");
    const shot = path.join(cwd, "report.png");
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
      "--hide-scrollbars",
      "--window-size=1200,2400",
      `file://${page}`,
    ];
    const browser = await execa(chromium, args, { reject: false, timeout: 90_000, forceKillAfterDelay: 5_000, stdin: "ignore" });
    expect(existsSync(shot), `no screenshot; chromium exited ${browser.exitCode}:\n${browser.stderr}`).toBe(true);
    const png = readFileSync(shot);
    expect(pngSize(png)).toEqual({ width: 1200, height: 2400 });
    // A blank 1200x2400 page compresses to a few KB; text, tables and charts take far more.
    expect(statSync(shot).size).toBeGreaterThan(60_000);
    if (process.env.ARL_WRITE_DOCS === "1") copyFileSync(shot, docsImage);
  }, 120_000);
});
