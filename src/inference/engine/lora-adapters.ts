// The names under which the policy's LoRA adapters are loaded into a server, one per policy
// version. A server keeps every adapter it loaded, so a request that names version N's adapter
// is served by version N's weights even while a later one is being loaded (asynchronous
// rollout): the name is the version.

const PREFIX = "arl-policy-v";

/** The adapter name of policy version `version`. */
export function adapterName(version: number): string {
  return `${PREFIX}${version}`;
}

/** The policy version an adapter name stands for; null for a name that is not one of ours (the base model). */
export function adapterVersion(model: string): number | null {
  if (!model.startsWith(PREFIX)) return null;
  const digits = model.slice(PREFIX.length);
  return /^(0|[1-9][0-9]*)$/.test(digits) ? Number(digits) : null;
}

/**
 * The `model` a generation names: version 0 is the base model itself (a fresh adapter is zero
 * and leaves it unchanged, and no sync has loaded one yet), later versions their adapter.
 */
export function servedAdapterModel(base: string, version: number): string {
  return version === 0 ? base : adapterName(version);
}
