// npm 11 reads which dependencies may run install scripts from package.json's allowScripts (true
// allows, false denies; `npm help install-scripts`) and warns about the rest; a stricter npm
// (--strict-allow-scripts, and the blocking default npm announces) skips or refuses them. Every
// dependency the lock marks as having an install script has an entry, so none is left to the
// default: better-sqlite3's install fetches or builds its native binary, core-js's postinstall
// only prints a banner.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const repo = path.join(import.meta.dirname, "../..");
const read = (file: string): unknown => JSON.parse(readFileSync(path.join(repo, file), "utf8"));

describe("allowScripts in package.json", () => {
  it("decides for exactly the dependencies in package-lock.json that have install scripts", () => {
    const lock = read("package-lock.json") as { packages: Record<string, { hasInstallScript?: boolean }> };
    const withScripts = Object.entries(lock.packages)
      .filter(([key, p]) => key !== "" && p.hasInstallScript)
      .map(([key]) => key.slice(key.lastIndexOf("node_modules/") + "node_modules/".length));
    const { allowScripts } = read("package.json") as { allowScripts?: Record<string, boolean> };
    // Name-only entries: a version-pinned one would stop matching when the dependency is bumped.
    expect(Object.keys(allowScripts ?? {}).sort()).toEqual([...new Set(withScripts)].sort());
    expect(allowScripts).toEqual({ "better-sqlite3": true, "core-js": false });
  });
});
