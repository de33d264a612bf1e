// The virtual environments the Python side runs in, each made from a Python 3 ($ARL_PYTHON, else
// /usr/bin/python3, else python3) without the system's site-packages, and filled from hashed
// requirement files in order (some with --no-deps). Each is installed when missing or when any of
// its files changed since the last install (VENV/arl-requirements.sha256 holds their hash); a
// half-made one is replaced, not repaired. A full disk is the usual cause of a failed install on a
// shared machine (the venvs are several GB each), so the free space is said before and after.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

export const here = fileURLToPath(new URL(".", import.meta.url));
export const root = join(here, "..");

/** The interpreter inside a venv folder. */
export const venvPythonOf = (venv) => join(venv, process.platform === "win32" ? "Scripts/python.exe" : "bin/python");

export function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: here, stdio: "inherit", ...options });
  if (result.error) return { status: 1, error: result.error };
  return { status: result.status ?? 1 };
}

function basePython() {
  const candidates = [process.env.ARL_PYTHON, "/usr/bin/python3", "python3"].filter(Boolean);
  return candidates.find((c) => spawnSync(c, ["-c", "import venv"], { stdio: "ignore" }).status === 0);
}

const GB = 1024 ** 3;

/** Free bytes on the disk that holds `folder`, for an unprivileged user; undefined where unknown. */
function freeBytesAt(folder) {
  try {
    const stats = statfsSync(folder);
    return stats.bavail * stats.bsize;
  } catch {
    return undefined;
  }
}

/** The pinned pip every venv is given before its requirements (runtime-gpu/requirements-pip.in says why). */
const PIP_REQUIREMENTS = join(root, "runtime-gpu", "requirements-pip.txt");

const gigabytes = (bytes) => `${(bytes / GB).toFixed(1)} GB`;

/**
 * Makes `venv` hold exactly `files` ([{ file, noDeps }], installed in order). Returns null when it
 * does, or a message saying why not; `noPython` when no Python with venv exists here. `needGB` is
 * the disk it takes while installing (the venv plus pip's downloaded wheels, which pip holds until
 * the install ends), checked against the free space first.
 */
export function ensureVenv({ venv, files: requested, label, size, needGB }) {
  const python = venvPythonOf(venv);
  const stamp = join(venv, "arl-requirements.sha256");
  // pip itself first, pinned: the pip a venv starts with (Debian 12: 23.0.1) refuses an extra of a
  // pinned requirement (redis[hiredis]) as unpinned once its project publishes a newer release.
  const files = [{ file: PIP_REQUIREMENTS, noDeps: true }, ...requested];
  const hash = createHash("sha256");
  for (const { file } of files) hash.update(readFileSync(file));
  const wanted = hash.digest("hex");
  const installed = existsSync(stamp) ? readFileSync(stamp, "utf8").trim() : undefined;
  if (existsSync(python) && installed === wanted) return null;
  if (!existsSync(python)) {
    const base = basePython();
    if (!base) return { noPython: true, message: "no Python 3 with the venv module found (Debian: apt-get install python3 python3-venv)" };
    rmSync(venv, { recursive: true, force: true });
    console.log(`${label}: creating ${venv} from ${base}`);
    if (run(base, ["-m", "venv", venv]).status !== 0) return { message: `could not create ${venv} (Debian: apt-get install python3-venv)` };
  }
  const free = freeBytesAt(dirname(venv));
  if (needGB !== undefined && free !== undefined && free < needGB * GB) {
    console.warn(
      `${label}: warning: installing takes about ${needGB} GB, and ${gigabytes(free)} is free on the disk that holds ${relative(root, venv) || venv}; ` +
        "the install may fail for lack of space (free some, or set TMPDIR to another disk for pip's downloads)",
    );
  }
  for (const [i, { file, noDeps }] of files.entries()) {
    const name = relative(root, file);
    if (i === 1) console.log(`${label}: installing ${name} into ${relative(root, venv)}${size ? ` (${size})` : ""}`);
    const args = ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--require-hashes", ...(noDeps ? ["--no-deps", "--no-warn-conflicts"] : []), "-r", file];
    if (run(python, args).status !== 0) {
      const left = freeBytesAt(dirname(venv));
      const disk = left !== undefined && left < 2 * GB ? ` (the disk is nearly full: ${gigabytes(left)} free; installing takes about ${needGB ?? "several"} GB)` : "";
      return { message: `pip could not install ${name} into ${relative(root, venv)}${disk}` };
    }
  }
  writeFileSync(stamp, `${wanted}\n`);
  return null;
}
