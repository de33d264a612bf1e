// The report page in a real browser: headless Chromium (Debian's `chromium` package) takes a
// screenshot of a sweep's report.html from disk, with networking features off; the PNG must be
// the window's size and carry a real page, not a blank one. With ARL_WRITE_DOCS=1 the
// screenshot becomes the README's picture, docs/images/report-sweep.png.
// On the quick start's own run directory (test/fixtures/report/quickstart-run) at a laptop's
// 1366x768, a copy of the page with one script added records where the result and the settings
// are drawn (--dump-dom), and they must be above the fold; ARL_WRITE_DOCS=1 writes that first
// screen to docs/images/report-quickstart.png.
import { execa } from "execa";
import { copyFileSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { skipTitle } from "../helpers/skip-reporter.js";
import { runArl } from "../helpers/cli.js";
import { tempDir, writeSweep } from "./fixtures.js";

const docsImage = fileURLToPath(new URL("../../docs/images/report-sweep.png", import.meta.url));
const quickstartImage = fileURLToPath(new URL("../../docs/images/report-quickstart.png", import.meta.url));
const quickstartRun = fileURLToPath(new URL("../fixtures/report/quickstart-run", import.meta.url));

const chromium = "/usr/bin/chromium";
const hasChromium = existsSync(chromium);
const CHROMIUM_NEED = "needs /usr/bin/chromium: apt-get install chromium";

/** Width and height from a PNG's IHDR chunk. */
function pngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
  expect(png.subarray(12, 16).toString("latin1")).toBe("IHDR");
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/** Headless Chromium with networking features off and a fresh profile, on one page from disk. */
async function chromiumOn(page: string, ...extra: string[]) {
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
    "--hide-scrollbars",
    ...extra,
    `file://${page}`,
  ];
  return execa(chromium, args, { reject: false, timeout: 90_000, forceKillAfterDelay: 5_000, stdin: "ignore" });
}

/** What must be on the first screen: the result's steps and the settings that produced it. */
const aboveTheFold = ["result-before", "result-after", "result-gain", "fig-headline", "settings"];
const foldSettings = ["algorithm", "group size", "batch", "learning rate", "cold start", "KL"];

/** Records each element's box in the page, as the browser laid it out, into <pre id="geometry">. */
const geometryScript = `<script>
const box = (e) => { const r = e.getBoundingClientRect(); return { top: r.top, bottom: r.bottom, left: r.left, right: r.right, text: e.textContent.trim().slice(0, 80) }; };
const out = { width: innerWidth, height: innerHeight, ids: {}, settings: {} };
for (const id of ${JSON.stringify(aboveTheFold)}) { const e = document.getElementById(id); if (e) out.ids[id] = box(e); }
for (const dt of document.querySelectorAll("#settings dt")) out.settings[dt.textContent] = box(dt.nextElementSibling);
const pre = document.createElement("pre"); pre.id = "geometry"; pre.textContent = JSON.stringify(out); document.body.append(pre);
</script>`;

interface Box {
  readonly top: number;
  readonly bottom: number;
  readonly left: number;
  readonly right: number;
  readonly text: string;
}

describe("arl report in a browser", () => {
  it.skipIf(!hasChromium)(
    skipTitle("shows the quick start's result and settings above the fold at 1366x768", !hasChromium, CHROMIUM_NEED),
    async () => {
      const out = tempDir("arl-report-fold-");
      const report = await runArl(["report", quickstartRun, "--out", out], { cwd: out });
      expect(report.code, report.stderr).toBe(0);
      const page = path.join(out, "report.html");
      const probe = path.join(out, "probe.html");
      writeFileSync(probe, readFileSync(page, "utf8").replace("</body>", `${geometryScript}</body>`));
      const dom = await chromiumOn(probe, "--window-size=1366,768", "--dump-dom");
      const json = /<pre id="geometry">([\s\S]*?)<\/pre>/.exec(dom.stdout)?.[1];
      expect(json, `no geometry; chromium exited ${dom.exitCode}:\n${dom.stderr}`).toBeDefined();
      const geometry = JSON.parse(
        json!
          .replace(/&quot;/g, '"')
          .replace(/&lt;/g, "<")
          .replace(/&gt;/g, ">")
          .replace(/&amp;/g, "&"),
      ) as { width: number; height: number; ids: Record<string, Box>; settings: Record<string, Box> };
      expect(geometry.width).toBe(1366);
      // What the page gets of a 768-pixel-high window (Chromium keeps the rest for itself, as a laptop's browser does).
      expect(geometry.height).toBeGreaterThan(550);
      expect(geometry.height).toBeLessThanOrEqual(768);
      const visible = (what: string, b: Box | undefined) => {
        expect(b, what).toBeDefined();
        expect(b!.top, what).toBeGreaterThanOrEqual(0);
        expect(b!.bottom, `${what} ends below the fold`).toBeLessThanOrEqual(geometry.height);
        expect(b!.left, what).toBeGreaterThanOrEqual(0);
        expect(b!.right, `${what} is cut at the right`).toBeLessThanOrEqual(geometry.width);
        expect(b!.bottom - b!.top, what).toBeGreaterThan(0);
      };
      for (const id of ["result-before", "result-after", "result-gain"]) visible(id, geometry.ids[id]);
      // The pass@1 chart starts on the first screen, under the numbers.
      expect(geometry.ids["fig-headline"]!.top).toBeLessThan(geometry.height - 100);
      expect(geometry.ids["result-before"]!.text).toMatch(/0\.125/);
      expect(geometry.ids["result-after"]!.text).toMatch(/0\.385/);
      expect(geometry.ids["result-gain"]!.text).toMatch(/RL's own gain\s*\+0\.260\s*\[\+0\.\d{3}, \+0\.\d{3}\]/);
      for (const name of foldSettings) visible(`setting ${name}`, geometry.settings[name]);
      expect(geometry.settings["group size"]!.text).toBe("8");
      // The result and the settings side by side, not one under the other.
      expect(geometry.ids.settings!.left).toBeGreaterThan(geometry.ids["result-gain"]!.left);

      const shot = path.join(out, "fold.png");
      await chromiumOn(page, "--window-size=1366,768", `--screenshot=${shot}`);
      expect(pngSize(readFileSync(shot))).toEqual({ width: 1366, height: 768 });
      if (process.env.ARL_WRITE_DOCS === "1") copyFileSync(shot, quickstartImage);
    },
    120_000,
  );

  it.skipIf(!hasChromium)(
    skipTitle("renders in headless Chromium", !hasChromium, CHROMIUM_NEED),
    async () => {
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
      const browser = await execa(chromium, args, {
        reject: false,
        timeout: 90_000,
        forceKillAfterDelay: 5_000,
        stdin: "ignore",
      });
      expect(existsSync(shot), `no screenshot; chromium exited ${browser.exitCode}:\n${browser.stderr}`).toBe(true);
      const png = readFileSync(shot);
      expect(pngSize(png)).toEqual({ width: 1200, height: 2400 });
      // A blank 1200x2400 page compresses to a few KB; text, tables and charts take far more.
      expect(statSync(shot).size).toBeGreaterThan(60_000);
      if (process.env.ARL_WRITE_DOCS === "1") copyFileSync(shot, docsImage);
    },
    120_000,
  );
});
