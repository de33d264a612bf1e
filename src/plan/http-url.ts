// What makes an http env's `url` one the runtime can call (src/envs/adapters/http.ts), written once: the
// check refuses it at the spec's field (runnable.ts) and the adapter refuses it before its first
// request, never retrying a request that cannot succeed.
//
// The adapter calls with Node's fetch, which refuses the WHATWG Fetch standard's "bad ports"
// (https://fetch.spec.whatwg.org/#port-blocking) before connecting ("bad port"). The list is
// Node 20's; test/envs/http-failures.test.ts checks it against the running Node's fetch.
export const FETCH_BLOCKED_PORTS: ReadonlySet<number> = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110,
  111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532,
  540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061,
  6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/** Why `url` cannot be an http env's server URL, with what to write instead; null when it can. */
export function httpEnvUrlProblem(url: string): { message: string; hint: string } | null {
  if (!URL.canParse(url))
    return {
      message: `'${url}' is not a URL`,
      hint: 'write the task server\'s base URL, such as "http://127.0.0.1:8000"',
    };
  const u = new URL(url);
  if (u.protocol !== "http:" && u.protocol !== "https:")
    return {
      message: `'${url}' is not an http or https URL`,
      hint: 'write the task server\'s base URL, such as "http://127.0.0.1:8000"',
    };
  if (u.username || u.password)
    return {
      message: `the URL of '${u.host}' holds credentials, which are never sent`,
      hint: "remove the user and password from the URL",
    };
  const port = Number(u.port || (u.protocol === "https:" ? 443 : 80));
  if (FETCH_BLOCKED_PORTS.has(port)) {
    return {
      message: `port ${port} of '${url}' is one that fetch refuses to call (the Fetch standard's blocked ports: ${port} belongs to another protocol), so every request would fail`,
      hint: `serve the task server on another port, e.g. ${port === 6000 ? 6001 : 8000}`,
    };
  }
  return null;
}
