// The semantic stage's parse memo (docs/architecture.md, "Memoisation"): one schema parse per
// distinct content, and a short id per content that the lint and plan memos key by.
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { ParseMemo, validate } from "../../src/semantics/validate.js";
import { emptyRecord, RecordBuilder, type Origin, type Value } from "../../src/semantics/values.js";

const at = (offset: number): Origin => ({
  file: "x.arl",
  range: { start: { offset, line: 1, column: offset + 1 }, end: { offset: offset + 1, line: 1, column: offset + 2 } },
});
const record = (n: number | string, offset: number) =>
  new RecordBuilder(emptyRecord(at(offset)))
    .set({
      path: ["n"],
      value: { kind: "scalar", value: n, origin: at(offset + 1) } satisfies Value,
      keyOrigins: [at(offset)],
    })
    .build();
const subject = { label: "the value", origin: at(0) };

describe("ParseMemo", () => {
  it("parses each content once and gives values of equal content one id, written anywhere, and other contents other ids", () => {
    let parses = 0;
    const schema = z.object({ n: z.number() }).transform((v) => {
      parses += 1;
      return v;
    });
    const memo = new ParseMemo();
    const first = validate(record(1, 0), schema, subject, memo);
    const again = validate(record(1, 50), schema, subject, memo);
    const other = validate(record(2, 100), schema, subject, memo);
    expect(parses).toBe(2);
    expect(again.data).toBe(first.data);
    expect(first.contentKey).toBeDefined();
    expect(again.contentKey).toBe(first.contentKey);
    expect(other.contentKey).not.toBe(first.contentKey);
    // Each kind is spelled apart: the string "1" is not the number 1.
    const loose = new ParseMemo();
    const either = z.object({ n: z.union([z.number(), z.string()]) });
    expect(validate(record("1", 0), either, subject, loose).contentKey).not.toBe(
      validate(record(1, 0), either, subject, loose).contentKey,
    );
    // Without a memo nothing is keyed.
    expect(validate(record(1, 0), schema, subject).contentKey).toBeUndefined();
  });
});
