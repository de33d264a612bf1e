import { describe, expect, it } from "vitest";
import { InternalError, at, defined, last } from "../../src/contracts/checked.js";

describe("checked accesses", () => {
  it("at returns the element in range and throws an InternalError outside it", () => {
    expect(at([10, 20, 30], 2)).toBe(30);
    expect(at("abc", 1)).toBe("b");
    expect(at(new Float64Array([0.5]), 0)).toBe(0.5);
    expect(at([undefined], 0)).toBeUndefined(); // an undefined element is a value, not a miss
    for (const index of [-1, 3, 1.5, Number.NaN]) {
      expect(() => at([10, 20, 30], index)).toThrow(InternalError);
    }
    expect(() => at([], 0)).toThrow("index 0 is out of range (length 0)");
  });

  it("last returns the final element and refuses an empty list", () => {
    expect(last([1, 2, 3])).toBe(3);
    expect(() => last([])).toThrow(InternalError);
  });

  it("defined passes falsy values through and rejects only undefined and null", () => {
    expect(defined(0, "count")).toBe(0);
    expect(defined("", "name")).toBe("");
    expect(() => defined(undefined, "the entry file")).toThrow("the entry file is missing");
    expect(() => defined(null, "the entry file")).toThrow(InternalError);
  });
});
