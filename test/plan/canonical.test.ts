import { describe, expect, it } from "vitest";
import { canonicalize, canonicalNumber, CanonicalizationError, prettyJson } from "../../src/plan/canonical.js";

/** A double from its IEEE 754 bit pattern, as RFC 8785 Appendix B lists them. */
function fromBits(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

describe("RFC 8785 canonical JSON", () => {
  it("serialises numbers in the ECMAScript form (RFC 8785 Appendix B)", () => {
    const cases: [string, string][] = [
      ["0000000000000000", "0"],
      ["8000000000000000", "0"], // -0
      ["0000000000000001", "5e-324"],
      ["8000000000000001", "-5e-324"],
      ["7fefffffffffffff", "1.7976931348623157e+308"],
      ["ffefffffffffffff", "-1.7976931348623157e+308"],
      ["4340000000000000", "9007199254740992"],
      ["c340000000000000", "-9007199254740992"],
      ["4430000000000000", "295147905179352830000"],
      ["44b52d02c7e14af5", "9.999999999999997e+22"],
      ["44b52d02c7e14af6", "1e+23"],
      ["44b52d02c7e14af7", "1.0000000000000001e+23"],
      ["444b1ae4d6e2ef4e", "999999999999999700000"],
      ["444b1ae4d6e2ef4f", "999999999999999900000"],
      ["444b1ae4d6e2ef50", "1e+21"],
      ["3eb0c6f7a0b5ed8c", "9.999999999999997e-7"],
      ["3eb0c6f7a0b5ed8d", "0.000001"],
      ["41b3de4355555553", "333333333.3333332"],
      ["41b3de4355555554", "333333333.33333325"],
      ["41b3de4355555555", "333333333.3333333"],
      ["41b3de4355555556", "333333333.3333334"],
      ["41b3de4355555557", "333333333.33333343"],
      ["becbf647612f3696", "-0.0000033333333333333333"],
      ["43143ff3c1cb0959", "1424953923781206.2"],
    ];
    for (const [bits, expected] of cases) expect(canonicalNumber(fromBits(bits)), bits).toBe(expected);
  });

  it("reproduces the RFC's worked example (§3.2.2 and §3.2.3)", () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}',
    );
    expect(canonicalize(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
    expect(canonicalize([1e21, 1e-7, 0.000001, 4.5, 2e-3, -0])).toBe("[1e+21,1e-7,0.000001,4.5,0.002,0]");
  });

  it("sorts keys by UTF-16 code units, not by code points or locale (§3.2.3)", () => {
    const input = {
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis",
    };
    // (Object.keys would list "1" first: JS orders integer-like keys, so read the text instead.)
    const text = canonicalize(input);
    const order = ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\ud83d\ude00", "\ufb33"].map((k) =>
      text.indexOf(JSON.stringify(k)),
    );
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(canonicalize(input)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign",' +
        '"\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  it("writes nested values without whitespace and in key order at every depth", () => {
    expect(canonicalize({ b: [{ z: 1, a: { y: true, x: null } }], a: "" })).toBe(
      '{"a":"","b":[{"a":{"x":null,"y":true},"z":1}]}',
    );
    expect(canonicalize({ a: undefined, b: 1 })).toBe('{"b":1}');
  });

  it("rejects what has no exact JSON form", () => {
    for (const bad of [
      Number.NaN,
      Infinity,
      -Infinity,
      { a: Number.NaN },
      [1, undefined],
      10n,
      () => 1,
      new Map(),
      new Date(0),
      "\ud800",
      { "\udc00": 1 },
    ]) {
      expect(() => canonicalize(bad), String(bad)).toThrow(CanonicalizationError);
    }
  });

  it("pretty JSON keeps the values and numbers of the canonical form", () => {
    const v = { b: 1e21, a: [-0, 0.1] };
    expect(JSON.parse(prettyJson(v))).toEqual({ b: 1e21, a: [0, 0.1] });
    expect(prettyJson(v)).toBe('{\n  "b": 1e+21,\n  "a": [\n    0,\n    0.1\n  ]\n}\n');
  });
});
