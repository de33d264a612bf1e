// Building blocks the plan schema's parts share: field docs, number kinds, bounded numbers and
// the data-file reference.
import * as z from "zod";
import { boundOf, type BoundedField } from "./bounds.js";

/** A schema with its field doc (the `description` of the published JSON Schema). */
export const d = <T extends z.ZodType>(schema: T, text: string): T => schema.describe(text);

export const nonNegativeInt = z.number().int().nonnegative();
export const positiveInt = z.number().int().positive();
export const probability = z.number().min(0).max(1);
export const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export const jsonValueSchema: z.ZodType<JsonValue> = z
  .lazy(() =>
    z.union([
      z.null(),
      z.boolean(),
      z.number(),
      z.string(),
      z.array(jsonValueSchema),
      z.record(z.string(), jsonValueSchema),
    ]),
  )
  .meta({ id: "JsonValue", description: "Any JSON value." });

/** A number schema capped by its entry of the bounds table (bounds.ts), refusing with the field's bound. */
export const bounded = (field: BoundedField, schema: z.ZodNumber): z.ZodNumber => {
  const bound = boundOf(field);
  return schema.max(bound.max, { message: `above its bound ${bound.max} (${bound.why}; src/plan/bounds.ts)` });
};

export const dataFileSchema = z
  .strictObject({
    path: d(z.string().min(1), "POSIX path relative to the directory of the entry spec (stdlib files: `std/...`)."),
    sha256: d(sha256Hex, "sha256 of the file's bytes at compile time; the runtime refuses a file that differs."),
  })
  .meta({ id: "DataFile" });
