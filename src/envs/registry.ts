// Every environment kind this runtime can run, by the `kind` a plan names.
import { subprocessEnv } from "./subprocess.js";
import type { EnvKind } from "./types.js";

export const envKinds: ReadonlyMap<string, EnvKind> = new Map<string, EnvKind>([
  ["subprocess", subprocessEnv as EnvKind],
]);
