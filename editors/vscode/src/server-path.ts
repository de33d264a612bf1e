// Which `arl` the extension starts: pure, so that it can be tested without VS Code.
import { existsSync } from "node:fs";
import path from "node:path";

/** A JavaScript entry run with the editor's own Node, or a command on the PATH or at a path. */
export type ServerLaunch = { readonly kind: "module"; readonly module: string } | { readonly kind: "command"; readonly command: string };

/**
 * The server, in order of preference: the `arl.server.path` setting (a `.js`/`.mjs` file runs
 * as a module, anything else as a command); the `arl` package installed in a workspace folder's
 * node_modules; the server bundled with the extension; `arl` on the PATH.
 */
export function resolveServer(setting: string | undefined, workspaceFolders: readonly string[], bundled: string | undefined, exists: (file: string) => boolean = existsSync): ServerLaunch {
  const configured = setting?.trim();
  if (configured) {
    const resolved = path.isAbsolute(configured) || workspaceFolders.length === 0 ? configured : path.resolve(workspaceFolders[0]!, configured);
    return /\.(c|m)?js$/.test(resolved) ? { kind: "module", module: resolved } : { kind: "command", command: resolved };
  }
  for (const folder of workspaceFolders) {
    const local = path.join(folder, "node_modules", "arl", "bin", "arl.js");
    if (exists(local)) return { kind: "module", module: local };
    // The arl repository itself.
    const own = path.join(folder, "bin", "arl.js");
    if (exists(own) && exists(path.join(folder, "dist", "cli", "main.js"))) return { kind: "module", module: own };
  }
  if (bundled && exists(bundled)) return { kind: "module", module: bundled };
  return { kind: "command", command: "arl" };
}
