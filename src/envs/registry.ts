// Every environment kind this runtime can run, by the `kind` a plan names.
import type { EnvKind } from "../contracts/env.js";
import { agentEnv, createAgentEnv } from "./adapters/agent.js";
import { agentrlEnv } from "./adapters/agentrl.js";
import { createDatasetEnv, datasetEnv } from "./adapters/dataset/index.js";
import { findmaxEnv } from "./worlds/findmax/index.js";
import { createHostEnvKinds } from "./adapters/env-host/libraries.js";
import { hostLibraries } from "../contracts/libraries/index.js";
import { httpEnv } from "./adapters/http.js";
import { openenvEnv } from "./adapters/openenv.js";
import { roomsEnv } from "./worlds/rooms/index.js";
import { createSqlEnv, sqlEnv } from "./worlds/sql/index.js";
import { subprocessEnv } from "./adapters/subprocess.js";
import { createSweEnv, sweEnv } from "./worlds/swe/index.js";

export const envKinds: ReadonlyMap<string, EnvKind> = new Map<string, EnvKind>([
  ["agent", agentEnv],
  ["agentrl", agentrlEnv],
  ["dataset", datasetEnv],
  ["findmax", findmaxEnv],
  ["http", httpEnv],
  ["openenv", openenvEnv],
  ["rooms", roomsEnv],
  ["sql", sqlEnv],
  ["subprocess", subprocessEnv],
  ["swe", sweEnv],
  ...(createHostEnvKinds(hostLibraries) as Map<string, EnvKind>),
]);

/** The env kinds of one run: those that read data files find them below `dataRoot` and only there (each call makes fresh ones: a dataset's env host is the run's own). */
export function envKindsWithDataRoot(dataRoot: string): ReadonlyMap<string, EnvKind> {
  return new Map<string, EnvKind>([
    ...envKinds,
    ["sql", createSqlEnv({ root: dataRoot })],
    ["agent", createAgentEnv({ root: dataRoot })],
    ["dataset", createDatasetEnv({ root: dataRoot })],
    ["swe", createSweEnv({ root: dataRoot })],
    ...(createHostEnvKinds(hostLibraries, { root: dataRoot }) as Map<string, EnvKind>),
  ]);
}
