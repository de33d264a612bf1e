// The package's `prepare` script: builds dist/ for `npm ci` / `npm install` in a checkout, for
// installs from git and before `npm pack`, but not when `npx arl` runs it.
//
// npm 10 and 11 serve a package's own bin (`npx arl` in this checkout) by installing the checkout
// into the npx cache (~/.npm/_npx/<hash>/node_modules/arl, a link back to this folder), and run
// `prepare` as part of that install. Building there made the first `npx arl` take half a minute
// (two at once both rebuilt dist/ under each other), and a build that failed or was interrupted
// left a cache entry without its package.json: every later `npx arl` then failed with
// "enoent ... _npx/.../package.json" (exit 254) until the folder was deleted. The link's dist/ is
// this checkout's own, which `npm ci` has built, so under npx there is nothing to build; if it is
// missing, bin/arl.js says how to build it.
import { spawnSync } from "node:child_process";

if (process.env.npm_command === "exec") process.exit(0);

// The npm that runs this script (npm_execpath), so a second npm on the PATH cannot differ from it.
const npm = process.env.npm_execpath;
const build = npm
  ? spawnSync(process.execPath, [npm, "run", "build"], { stdio: "inherit" })
  : spawnSync("npm", ["run", "build"], { stdio: "inherit", shell: process.platform === "win32" });
if (build.error) {
  process.stderr.write(`prepare: could not start 'npm run build': ${build.error.message}\n`);
  process.exit(1);
}
process.exit(build.status ?? 1);
