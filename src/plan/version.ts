// Versions recorded in plans and lock files. The stdlib ships inside the package, so its
// version is the package's (the plan's provenance also lists each stdlib file's sha256).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

let cached: string | undefined;

/** The package version (src/plan and dist/plan both sit two levels below package.json). */
export function arlVersion(): string {
  cached ??= (
    JSON.parse(readFileSync(fileURLToPath(new URL("../../package.json", import.meta.url)), "utf8")) as {
      version: string;
    }
  ).version;
  return cached;
}

export function stdlibVersion(): string {
  return arlVersion();
}
