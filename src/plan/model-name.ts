// The embedded model's name says its whole shape: `builtin:tiny` is the default shape, and
// `builtin:tiny?hidden=32&embed=16&heads=2&key=8` another one (the PyTorch trainer's builtin
// models take their shape the same way). The name is in the plan, so the shape is hashed with
// it; nothing outside the plan (no environment variable) changes the model.
import { TINY_SHAPE_BOUNDS } from "./bounds.js";

export const TINY_MODEL = "builtin:tiny";

export interface TinyShape {
  readonly embed: number;
  readonly hidden: number;
  readonly heads: number;
  readonly keyDim: number;
}

/** The shape of plain `builtin:tiny` (about 66k parameters on the rooms vocabulary). */
export const TINY_DEFAULT_SHAPE: TinyShape = { embed: 64, hidden: 64, heads: 4, keyDim: 16 };

type ShapeKey = keyof typeof TINY_SHAPE_BOUNDS;
const FIELD: Record<ShapeKey, keyof TinyShape> = { embed: "embed", hidden: "hidden", heads: "heads", key: "keyDim" };

export type TinyModel = { readonly shape: TinyShape } | { readonly error: string };

/**
 * The shape a model name asks the embedded trainer for, or why it cannot serve it. `defaults`
 * fills what the name leaves out (the default shape unless a caller in-process chooses another).
 */
export function parseTinyModel(model: string, defaults: TinyShape = TINY_DEFAULT_SHAPE): TinyModel {
  const [name, query, ...more] = model.split("?");
  if (name !== TINY_MODEL || more.length > 0)
    return {
      error: `the embedded trainer serves only '${TINY_MODEL}' (optionally '${TINY_MODEL}?hidden=N&embed=N&heads=N&key=N'), not '${model}'`,
    };
  const shape: Record<keyof TinyShape, number> = {
    embed: defaults.embed,
    hidden: defaults.hidden,
    heads: defaults.heads,
    keyDim: defaults.keyDim,
  };
  for (const pair of query ? query.split("&") : []) {
    const [key, value = ""] = pair.split("=", 2) as [string, string?];
    if (!Object.hasOwn(TINY_SHAPE_BOUNDS, key))
      return {
        error: `'${model}': unknown shape parameter '${key}' of ${TINY_MODEL} (known: ${Object.keys(TINY_SHAPE_BOUNDS).join(", ")})`,
      };
    const bound = TINY_SHAPE_BOUNDS[key as ShapeKey];
    const n = /^[0-9]+$/.test(value) ? Number(value) : NaN;
    if (!Number.isInteger(n) || n < 1)
      return { error: `'${model}': ${key} must be a positive integer, not '${value}'` };
    if (n > bound.max) return { error: `'${model}': ${key} is ${n}, above its bound ${bound.max} (${bound.why})` };
    shape[FIELD[key as ShapeKey]] = n;
  }
  return { shape };
}
