// The trackers a run's metrics are copied to (runtime/run/tracking.ts): TensorBoard event files,
// Weights & Biases and MLflow, each off unless the spec turns it on. They record; they never
// change what a run computes (docs/tracking.md).
import * as z from "zod";
import { doc, enumOf } from "./common.js";

const wandbSchema = z.strictObject({
  project: doc(z.string().min(1).default("arl"), "The W&B project the run is logged to."),
  entity: doc(z.string().min(1).nullable().default(null), "The W&B team or user; none: the API key's default entity."),
  mode: doc(
    enumOf(["offline", "online", "disabled"]).default("offline"),
    "`offline`: run files under RUN/tracking/wandb, no network (`wandb sync` uploads them later); `online`: logged as the run goes, with WANDB_API_KEY from the environment (never written in a spec); `disabled`: W&B's no-op run.",
  ),
});

const mlflowSchema = z.strictObject({
  tracking_uri: doc(
    z.string().min(1).nullable().default(null),
    "Where MLflow records the run: a folder (a file store, relative to the spec's folder) or a URI passed to MLflow as it is (`http://...`, `databricks`); none: the file store RUN/tracking/mlruns.",
  ),
  experiment: doc(
    z.string().min(1).nullable().default(null),
    "The MLflow experiment's name (created when missing); none: the ARL experiment's name.",
  ),
});

export const trackingSchema = z.strictObject({
  tensorboard: doc(
    z.boolean().default(false),
    "Write TensorBoard event files under RUN/tracking/tensorboard (`tensorboard --logdir`).",
  ),
  wandb: doc(
    wandbSchema.nullable().default(null),
    'Log to Weights & Biases (`wandb { project: "arl" }`; every field has a default); none: off.',
  ),
  mlflow: doc(
    mlflowSchema.nullable().default(null),
    "Log to MLflow (`mlflow {}`: a file store in the run directory); none: off.",
  ),
});
